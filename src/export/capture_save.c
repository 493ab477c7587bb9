// SPDX-License-Identifier: MIT
/*
 * capture_save.c - a tracefs instance, written out as a capture directory.
 *
 * The order matters because reading trace_pipe_raw consumes the buffer:
 * first what describes the data (headers, clock, options, formats), then
 * the kernel's own `trace` text and the comms it was printed with, then the
 * per-CPU stats, and only then the raw pages, drained one whole sub-buffer
 * per read() with O_NONBLOCK until EAGAIN.  The pages are scanned
 * afterwards for the event IDs they hold (formats of events outside the
 * enabled systems are added) and the kernel addresses they mention (for
 * `--kallsyms used`).  meta.txt is written last, with what was read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "capture_save.h"
#include "kallsyms_cut.h"
#include "decode/kvars.h"
#include "decode/usermaps.h"
#include "raw_scan.h"
#include "decode/schema_kernel.h"
#include "tracebuf/capture.h"
#include "tracebuf/schema.h"
#include "tracebuf/stats.h"
#include "tracefs.h"

#define MAX_CPUS 4096

/* The ftrace events a capture always carries: what trace_marker, trace_marker_raw and trace_printk write. */
static const char *const ftrace_events[] = {"print", "bprint", "bputs", "raw_data", "function"};

struct saver {
	const struct save_request *rq;
	struct save_result *res;
	char *events;		      /* rq->inst/events */
	uint8_t saved_ids[65536 / 8]; /* IDs whose format file was saved */
	size_t subbuf;
	uint64_t subbufs_read[MAX_CPUS];
	int max_cpu; /* highest CPU with a per_cpu directory, -1 none */
	struct raw_refs refs;
	size_t kallsyms_lines;
	const char *constants_note; /* for meta.txt */
	/* jiffies before and after trace.txt was copied (kvars.h); have_jiffies: both read */
	struct tb_jiffies_sample jiffies_before, jiffies_after;
	bool have_jiffies;
};

int capture_say(int rc, const char *fmt, ...)
{
	va_list ap;

	fputs("tracebuf capture: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

/* out/name, or NULL when out of memory. */
static char *out_path(struct saver *s, const char *name)
{
	return path_of(s->rq->out, name);
}

/* ------------------------------------------------------------ directory */

/* The capture directory exists afterwards and holds nothing of an older capture. */
static int prepare_out(const char *out, bool raw_started)
{
	DIR *d;
	struct dirent *e;
	int rc = make_dirs(out), found = 0;
	unsigned cpu;
	char end;

	if (rc < 0)
		return capture_say(rc, "%s: cannot create: %s", out, strerror(-rc));
	d = opendir(out);
	if (!d)
		return capture_say(-errno, "%s: cannot open: %s", out, strerror(errno));
	while ((e = readdir(d)))
		found += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
			 !(raw_started && sscanf(e->d_name, "cpu%u.ra%c", &cpu, &end) == 2 && end == 'w');
	closedir(d);
	if (found)
		return capture_say(-EEXIST,
				   "%s is not empty: a capture directory must be new or empty, so that "
				   "no file of another capture is mixed into this one",
				   out);
	return 0;
}

/* Copy dir/name to out/as; a missing optional file is skipped. */
static int save_copy(struct saver *s, const char *dir, const char *name, const char *as, bool required)
{
	char *to = out_path(s, as);
	int rc = to ? copy_file(dir, name, to) : -ENOMEM;

	free(to);
	if (rc == -ENOENT && !required)
		return 0;
	if (rc < 0)
		return capture_say(rc, "%s/%s: cannot save as %s: %s", dir, name, as, strerror(-rc));
	return 0;
}

/* ------------------------------------------------------------- formats */

/* The number on the "ID:" line of a format file, 0 if none. */
static unsigned format_id(const char *text)
{
	const char *p = strstr(text, "\nID:");

	if (!strncmp(text, "ID:", 3))
		p = text - 1;
	return p ? (unsigned)strtoul(p + 4, NULL, 10) : 0;
}

/* events/SYS/EVENT/format → out/formats/SYS/EVENT.format; 1 saved, 0 none, or -errno. */
static int save_format(struct saver *s, const char *system, const char *event)
{
	char rel[600], dest[600], *text, *to;
	size_t len;
	unsigned id;
	int rc;

	snprintf(rel, sizeof(rel), "%s/%s/format", system, event);
	text = tracefs_read(s->events, rel, &len);
	if (!text)
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : capture_say(-errno, "%s/%s: %s", s->events, rel, strerror(errno));
	snprintf(dest, sizeof(dest), "formats/%s", system);
	to = out_path(s, dest);
	rc = to ? make_dirs(to) : -ENOMEM;
	free(to);
	snprintf(dest, sizeof(dest), "formats/%s/%s.format", system, event);
	to = rc == 0 ? out_path(s, dest) : NULL;
	rc = to ? write_file(to, text, len) : rc < 0 ? rc : -ENOMEM;
	id = format_id(text);
	free(to);
	free(text);
	if (rc < 0)
		return capture_say(rc, "%s/%s: cannot save: %s", s->rq->out, dest, strerror(-rc));
	if (id > 0 && id < 65536)
		s->saved_ids[id / 8] |= (uint8_t)(1u << (id % 8));
	s->res->formats++;
	return 1;
}

/* The event directories of a system, sorted; their count or -errno. */
static int list_events(struct saver *s, const char *system, struct dirent ***names)
{
	char *dir = path_of(s->events, system);
	int n = dir ? scandir(dir, names, NULL, alphasort) : -1;

	free(dir);
	return n < 0 ? -errno : n;
}

static int save_system(struct saver *s, const char *system)
{
	struct dirent **names;
	int n = list_events(s, system, &names), rc = 0;

	if (n < 0)
		return capture_say(n, "%s/%s: cannot list: %s", s->events, system, strerror(-n));
	for (int i = 0; i < n; i++) {
		if (rc >= 0 && names[i]->d_name[0] != '.')
			rc = save_format(s, system, names[i]->d_name);
		free(names[i]);
	}
	free(names);
	return rc < 0 ? rc : 0;
}

/* Whether system (of length n) is already among the first k items of set_event's lines. */
static bool seen_before(const char *set_event, const char *line, size_t n)
{
	for (const char *p = set_event; p < line; p = strchr(p, '\n') + 1)
		if (!strncmp(p, line, n) && p[n] == ':')
			return true;
	return false;
}

/* The formats of every system with an enabled event (set_event: "SYS:EVENT" lines), and ftrace's own. */
static int save_formats(struct saver *s)
{
	char *set_event = tracefs_read(s->rq->inst, "set_event", NULL), system[256];
	int rc = 0;

	if (!set_event)
		return capture_say(-errno, "%s/set_event: %s", s->rq->inst, strerror(errno));
	for (const char *line = set_event; rc == 0 && *line;) {
		const char *nl = strchr(line, '\n'), *colon = strchr(line, ':');
		size_t n = colon && (!nl || colon < nl) ? (size_t)(colon - line) : 0;
		if (n > 0 && n < sizeof(system) && !seen_before(set_event, line, n)) {
			memcpy(system, line, n);
			system[n] = '\0';
			if (strcmp(system, "ftrace"))
				rc = save_system(s, system);
		}
		line = nl ? nl + 1 : line + strlen(line);
	}
	free(set_event);
	for (size_t i = 0; rc == 0 && i < sizeof(ftrace_events) / sizeof(ftrace_events[0]); i++)
		rc = save_format(s, "ftrace", ftrace_events[i]) < 0 ? -EIO : 0;
	return rc;
}

/* The ID of events/SYS/EVENT: its id file, else its format's ID line (bprint, raw_data...). */
static unsigned event_id(struct saver *s, const char *system, const char *event)
{
	char rel[600], *text;
	unsigned id = 0;

	snprintf(rel, sizeof(rel), "%s/%s/id", system, event);
	text = tracefs_read(s->events, rel, NULL);
	if (text)
		id = (unsigned)strtoul(text, NULL, 10);
	else if (snprintf(rel, sizeof(rel), "%s/%s/format", system, event) > 0 &&
		 (text = tracefs_read(s->events, rel, NULL)))
		id = format_id(text);
	free(text);
	return id;
}

/*
 * Records of events outside the systems enabled at the end (an instance
 * whose events were switched off before the save): find their formats by ID.
 */
static int save_missing_formats(struct saver *s)
{
	struct dirent **systems;
	int nsys = scandir(s->events, &systems, NULL, alphasort), rc = 0;
	bool missing = false;

	for (unsigned id = 1; id < 65536 && !missing; id++)
		missing = raw_refs_has_id(&s->refs, id) && !(s->saved_ids[id / 8] >> (id % 8) & 1);
	if (nsys < 0 || !missing) {
		for (int i = 0; i < nsys; i++)
			free(systems[i]);
		free(nsys > 0 ? systems : NULL);
		return 0;
	}
	for (int i = 0; i < nsys; i++) {
		struct dirent **evs;
		const char *sys = systems[i]->d_name;
		int n = sys[0] == '.' ? -1 : list_events(s, sys, &evs);
		for (int k = 0; k < n; k++) {
			unsigned id =
			    rc < 0 || evs[k]->d_name[0] == '.' ? 0 : event_id(s, sys, evs[k]->d_name);
			if (id && raw_refs_has_id(&s->refs, id) && !(s->saved_ids[id / 8] >> (id % 8) & 1))
				rc = save_format(s, sys, evs[k]->d_name);
			free(evs[k]);
		}
		if (n >= 0)
			free(evs);
		free(systems[i]);
	}
	free(systems);
	return rc < 0 ? rc : 0;
}

/* ---------------------------------------------------------------- CPUs */

static int cpu_of(const char *name)
{
	char *end;
	long n;

	if (strncmp(name, "cpu", 3) || name[3] < '0' || name[3] > '9')
		return -1;
	n = strtol(name + 3, &end, 10);
	return *end || n >= MAX_CPUS ? -1 : (int)n;
}

static int find_cpus(struct saver *s)
{
	char *dir = path_of(s->rq->inst, "per_cpu");
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;

	s->max_cpu = -1;
	if (!d) {
		int rc = capture_say(-errno, "%s: %s", dir ? dir : "per_cpu", strerror(errno));
		free(dir);
		return rc;
	}
	while ((e = readdir(d))) {
		int cpu = cpu_of(e->d_name);
		if (cpu > s->max_cpu)
			s->max_cpu = cpu;
	}
	closedir(d);
	free(dir);
	return s->max_cpu < 0 ? capture_say(-ENOENT, "%s/per_cpu: no CPUs", s->rq->inst) : 0;
}

/* per_cpu/cpuN/stats → cpuN.stats, before anything is consumed; adds to the totals. */
static int save_stats(struct saver *s, int cpu)
{
	char rel[64], name[64], *text, *to;
	struct tb_cpu_stats st;
	struct tb_problem d = {.file = ""};
	size_t len;
	int rc;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/stats", cpu);
	text = tracefs_read(s->rq->inst, rel, &len);
	if (!text)
		return errno == ENOENT ? 0
				       : capture_say(-errno, "%s/%s: %s", s->rq->inst, rel, strerror(errno));
	snprintf(name, sizeof(name), "cpu%d.stats", cpu);
	to = out_path(s, name);
	rc = to ? write_file(to, text, len) : -ENOMEM;
	free(to);
	if (rc == 0 && tb_stats_parse_kernel(text, &st, &d) == 0) {
		s->res->entries += st.entries;
		s->res->overrun += st.overrun;
		s->res->dropped += st.dropped;
	}
	free(text);
	return rc < 0 ? capture_say(rc, "%s/%s: %s", s->rq->out, name, strerror(-rc)) : 0;
}

int capture_read_subbuf(int fd, uint8_t *page, size_t size)
{
	size_t got = 0;

	while (got < size) {
		ssize_t r = read(fd, page + got, size - got);
		if (r > 0) {
			got += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 || errno == EAGAIN)
			return got ? -EIO : 0;
		return -errno;
	}
	return 1;
}

/* The sub-buffers drained while tracing ran (rq->raw_started), counted as read. */
static void count_drained(struct saver *s, int cpu, int out)
{
	struct stat st;

	if (!s->rq->raw_started || fstat(out, &st) < 0)
		return;
	s->subbufs_read[cpu] += (uint64_t)st.st_size / s->subbuf;
	s->res->subbufs += (uint64_t)st.st_size / s->subbuf;
	s->res->bytes += (uint64_t)st.st_size / s->subbuf * s->subbuf;
}

/* per_cpu/cpuN/trace_pipe_raw → cpuN.raw: every sub-buffer, oldest first. */
static int drain_cpu(struct saver *s, int cpu, uint8_t *page)
{
	char rel[64], name[64], *from, *to;
	int in, out, rc = 0;

	snprintf(rel, sizeof(rel), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	snprintf(name, sizeof(name), "cpu%d.raw", cpu);
	from = path_of(s->rq->inst, rel);
	to = out_path(s, name);
	in = from ? open(from, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
	if (in < 0) {
		rc = errno == ENODEV || errno == ENOENT
			 ? 0
			 : capture_say(-errno, "%s: %s", from, strerror(errno));
		goto done; /* a possible but offline CPU has no buffer */
	}
	out = to ? open(to, O_WRONLY | O_CREAT | (s->rq->raw_started ? O_APPEND : O_TRUNC) | O_CLOEXEC, 0644)
		 : -1;
	if (out < 0) {
		rc = capture_say(-errno, "%s: %s", to ? to : name, strerror(errno));
		close(in);
		goto done;
	}
	count_drained(s, cpu, out);
	while ((rc = capture_read_subbuf(in, page, s->subbuf)) == 1) {
		rc = write_all(out, page, s->subbuf);
		if (rc < 0) {
			capture_say(rc, "%s: %s", to, strerror(-rc));
			break;
		}
		s->subbufs_read[cpu]++;
		s->res->subbufs++;
		s->res->bytes += s->subbuf;
	}
	if (rc < 0 && !s->subbufs_read[cpu] && rc == -EIO)
		capture_say(rc, "%s: a sub-buffer came back cut short", from);
	else if (rc == -EIO)
		capture_say(rc, "%s: sub-buffer %llu came back cut short", from,
			    (unsigned long long)s->subbufs_read[cpu]);
	else if (rc < 0)
		capture_say(rc, "%s: %s", from, strerror(-rc));
	close(in);
	if (close(out) < 0 && rc >= 0)
		rc = capture_say(-errno, "%s: %s", to, strerror(errno));
	s->res->cpus++;
	if (rc >= 0)
		rc = raw_scan_file(&s->refs, to, s->subbuf);
done:
	free(from);
	free(to);
	return rc < 0 ? rc : 0;
}

/* ------------------------------------------------------------ symbols */

/*
 * /proc/kallsyms as it reads for us: whole, or cut to what the pages refer
 * to.  With kptr_restrict every address reads 0 and the file would only
 * make symbols look resolvable, so it is not saved and meta.txt says why.
 */
static int save_kallsyms(struct saver *s)
{
	size_t len, cut_len;
	char *text, *cut = NULL, *to;
	uint64_t lo, hi;
	int rc;

	if (s->rq->kallsyms == KALLSYMS_NONE) {
		s->res->kallsyms_note = "not saved (--kallsyms none)";
		return 0;
	}
	text = tracefs_read("/proc", "kallsyms", &len);
	if (!text) {
		s->res->kallsyms_note = "not saved: /proc/kallsyms cannot be read";
		return 0;
	}
	if (!kallsyms_range(text, len, &lo, &hi)) {
		s->res->kallsyms_note = "not saved: kptr_restrict hides the addresses (all read 0)";
		free(text);
		return 0;
	}
	if (s->rq->kallsyms == KALLSYMS_USED) {
		rc = kallsyms_cut(text, len, s->refs.addrs, s->refs.naddrs, &cut, &cut_len);
		if (rc < 0) {
			free(text);
			return capture_say(rc, "kallsyms: %s", strerror(-rc));
		}
		for (size_t i = 0; i < cut_len; i++)
			s->kallsyms_lines += cut[i] == '\n';
	}
	to = out_path(s, "kallsyms");
	rc = to ? write_file(to, cut ? cut : text, cut ? cut_len : len) : -ENOMEM;
	s->res->kallsyms_note =
	    cut ? "the symbols the raw pages refer to, each with the next one" : "a copy of /proc/kallsyms";
	free(to);
	free(cut);
	free(text);
	return rc < 0 ? capture_say(rc, "%s/kallsyms: %s", s->rq->out, strerror(-rc)) : 0;
}

/* The value the kallsyms scan needs to know before the pages are read. */
static void kallsyms_bounds(struct saver *s)
{
	size_t len;
	char *text = s->rq->kallsyms == KALLSYMS_USED ? tracefs_read("/proc", "kallsyms", &len) : NULL;

	s->refs.lo = 1;
	s->refs.hi = 0; /* no range: collect no addresses */
	if (text && !kallsyms_range(text, len, &s->refs.lo, &s->refs.hi)) {
		s->refs.lo = 1;
		s->refs.hi = 0;
	}
	free(text);
}

/* --------------------------------------------------------------- meta */

static void put_time(FILE *f, const char *key, const struct timespec *t)
{
	struct tm tm;
	char buf[64];

	if (!t->tv_sec || !gmtime_r(&t->tv_sec, &tm))
		return;
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, "%s: %s.%03ldZ\n", key, buf, t->tv_nsec / 1000000);
}

/* One "key: value" line from the first line of an instance file, if it has one. */
static void put_file(FILE *f, const char *key, const char *dir, const char *name)
{
	char *v = tracefs_read_line(dir, name);

	if (v)
		fprintf(f, "%s: %s\n", key, v);
	free(v);
}

/* A file's lines joined by spaces (set_event_pid holds one pid a line). */
static void put_joined(FILE *f, const char *key, const char *dir, const char *name)
{
	char *v = tracefs_read(dir, name, NULL);

	if (!v)
		return;
	for (char *p = v; *p; p++)
		if (*p == '\n')
			*p = ' ';
	fprintf(f, "%s: %s\n", key, v);
	free(v);
}

static void put_meta(struct saver *s, FILE *f)
{
	const struct save_request *rq = s->rq;
	const char *name = strrchr(rq->inst, '/');
	struct utsname u;

	if (uname(&u) == 0)
		fprintf(f, "kernel: %s\nmachine: %s\nhost: %s\n", u.release, u.machine, u.nodename);
	fprintf(f, "ncpus: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	put_time(f, "date_utc", &rq->stopped);
	put_file(f, "trace_clock", rq->inst, "trace_clock");
	put_file(f, "timestamp_mode", rq->inst, "timestamp_mode");
	put_file(f, "buffer_size_kb", rq->inst, "buffer_size_kb");
	put_file(f, "buffer_total_size_kb", rq->inst, "buffer_total_size_kb");
	put_file(f, "buffer_subbuf_size_kb", rq->inst, "buffer_subbuf_size_kb");
	fprintf(f, "subbuf_bytes: %zu\n", s->subbuf);
	put_file(f, "buffer_percent", rq->inst, "buffer_percent");
	put_file(f, "overwrite", rq->inst, "options/overwrite");
	put_file(f, "hash-ptr", rq->inst, "options/hash-ptr");
	put_joined(f, "set_event_pid", rq->inst, "set_event_pid");
	put_file(f, "event-fork", rq->inst, "options/event-fork");
	for (int cpu = 0; cpu <= s->max_cpu; cpu++) {
		char rel[64], key[64];
		snprintf(rel, sizeof(rel), "per_cpu/cpu%d/buffer_size_kb", cpu);
		snprintf(key, sizeof(key), "cpu%d_buffer_size_kb", cpu);
		put_file(f, key, rq->inst, rel);
	}
	fprintf(f, "instance: %s\n", name ? name + 1 : rq->inst);
	fprintf(f, "made_by: tracebuf capture (%s)\n",
		rq->events ? "its own instance, removed afterwards" : "an instance it did not create");
	fprintf(f, "events: %s\n", rq->events ? rq->events : "as the instance had them (set_event)");
	if (rq->command) {
		fputs("command:", f);
		for (char *const *a = rq->command; *a; a++)
			fprintf(f, " %s", *a);
		fprintf(f, "\ncommand_result: %s\n", rq->command_result ? rq->command_result : "unknown");
	}
	fprintf(f, "interrupted: %s\n", rq->interrupted ? "yes (a signal stopped the capture)" : "no");
	put_time(f, "tracing_started_utc", &rq->started);
	put_time(f, "tracing_stopped_utc", &rq->stopped);
	fprintf(f, "trace_txt: %s\n", rq->with_trace ? "yes (read before the raw pages)" : "no");
	if (s->have_jiffies && rq->with_trace)
		fprintf(f, "jiffies: %llu (right after trace.txt was read; %llu before)\n",
			(unsigned long long)s->jiffies_after.jiffies,
			(unsigned long long)s->jiffies_before.jiffies);
	else if (s->have_jiffies)
		fprintf(f, "jiffies: %llu (when the capture was saved)\n",
			(unsigned long long)s->jiffies_after.jiffies);
	fprintf(f, "kallsyms: %s", s->res->kallsyms_note ? s->res->kallsyms_note : "not saved");
	if (s->kallsyms_lines)
		fprintf(f, " (%zu lines)", s->kallsyms_lines);
	fputc('\n', f);
	fprintf(f, "constants: %s\n", s->constants_note ? s->constants_note : "not saved");
	fprintf(f, "formats_saved: %u\n", s->res->formats);
	for (int cpu = 0; cpu <= s->max_cpu; cpu++)
		fprintf(f, "cpu%d_subbufs_read: %llu\n", cpu, (unsigned long long)s->subbufs_read[cpu]);
}

static int save_meta(struct saver *s)
{
	char *path = out_path(s, "meta.txt");
	FILE *f = path ? fopen(path, "w") : NULL;
	int rc = 0;

	if (!f)
		rc = capture_say(path ? -errno : -ENOMEM, "%s: cannot write", path ? path : "meta.txt");
	else {
		put_meta(s, f);
		if (fclose(f) != 0)
			rc = capture_say(-errno, "%s: %s", path, strerror(errno));
	}
	free(path);
	return rc;
}

/* ----------------------------------------------------------- constants */

/*
 * What the saved print fmts need that the records cannot give: enum
 * constants and type sizes from this kernel's BTF, and layout variables of
 * this boot (vmemmap_base moves with every boot).  The saved formats are
 * read back as a capture (its clock does not matter here) whose schema
 * asks the running kernel.  A capture without them still reads; such
 * values then print as numbers, so a failure here is said, not fatal.
 */
static void save_constants(struct saver *s)
{
	struct tb_capture_opts o = {.clock = "local", .diag = tb_problem_print};
	struct tb_capture *c = NULL;
	char *path = out_path(s, "constants");
	FILE *f = path ? fopen(path, "w") : NULL;
	int rc = f ? tb_capture_open(s->rq->out, &o, &c) : -ENOMEM;

	if (rc == 0) {
		tb_schema_use_running_kernel(tb_capture_schema(c), s->rq->root);
		if (s->have_jiffies)
			tb_schema_set_kernel_var(tb_capture_schema(c), "jiffies", s->jiffies_after.jiffies);
		rc = tb_schema_write_constants(tb_capture_schema(c), NULL, 0, f);
	}
	if (f && fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		capture_say(0, "warning: constants not saved (%s): enum names in print fmts will print "
			       "as numbers",
			    strerror(-rc));
		if (path)
			unlink(path);
	} else {
		s->constants_note = "saved (enum constants and type sizes from this kernel's BTF, layout "
				    "variables of this boot, HZ, and jiffies as read right after trace.txt)";
	}
	tb_capture_close(c);
	free(path);
}

/* ----------------------------------------------------------------- all */

/* Headers, clock, options and formats: what describes the data. */
static int save_descriptions(struct saver *s)
{
	const struct save_request *rq = s->rq;
	const struct {
		const char *dir, *name;
		bool required;
	} files[] = {
	    {s->events, "header_page", true},	 {s->events, "header_event", true},
	    {rq->inst, "trace_clock", true},	 {rq->inst, "trace_options", false},
	    {rq->inst, "current_tracer", false}, {rq->inst, "set_event", false},
	    {rq->root, "printk_formats", false},
	};
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof(files) / sizeof(files[0]); i++)
		rc = save_copy(s, files[i].dir, files[i].name, files[i].name, files[i].required);
	return rc < 0 ? rc : save_formats(s);
}

/* The instance's options/NAME file reads "1". */
static bool option_on(const char *inst, const char *name)
{
	char file[256], *line;
	bool on;

	snprintf(file, sizeof(file), "options/%s", name);
	line = tracefs_read_line(inst, file);
	on = line && !strcmp(line, "1");
	free(line);
	return on;
}

/*
 * With userstacktrace on, the records hold user stacks, and the sym-userobj
 * option prints each address as the file mapped there in its process, as
 * the process is when `trace` is read: the maps of every process are kept
 * (proc_maps, usermaps.h), read beside the kernel's text.  Not fatal: user
 * addresses then print as the kernel prints those of a process gone.
 */
static void save_proc_maps(struct saver *s)
{
	char *path = out_path(s, "proc_maps");
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
	int rc = fd < 0 ? -errno : tb_usermaps_save_proc(fd);

	if (fd >= 0 && close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc < 0) {
		capture_say(0, "warning: proc_maps not saved (%s): with sym-userobj, user stack addresses "
			       "print without their files",
			    strerror(-rc));
		if (path)
			unlink(path);
	}
	free(path);
}

/*
 * The kernel's own text and the comms it was printed with, back to back;
 * then the stats.  jiffies is read just before and after the text: the
 * kernel computed the writeback events' age= with the jiffies of the
 * moment it printed them, in between, and the constants file keeps the
 * value after (without trace.txt, the moment the capture was saved).
 */
/* The comm cache as it is now, or NULL; *len set. */
static char *read_cmdlines(struct saver *s, size_t *len)
{
	*len = 0;
	return tracefs_read(s->rq->root, "saved_cmdlines", len);
}

static bool same_text(const char *a, size_t a_len, const char *b, size_t b_len)
{
	return a && b && a_len == b_len && !memcmp(a, b, a_len);
}

/*
 * trace.txt and the comm cache it was printed with.  The comm cache
 * (saved_cmdlines) is the kernel's, one for every instance: a tracer
 * elsewhere replaces its entries as new tasks run, and a text printed
 * while that happened names tasks as no copy of the cache taken before or
 * after does.  The text is not consumed by reading, so it is read again
 * until the cache is the same before and after it (TEXT_TRIES at most;
 * on a machine that never lets it settle, the last try is kept).
 */
#define TEXT_TRIES 20

static int save_text_with_comms(struct saver *s)
{
	size_t before_len, after_len = 0;
	char *before = read_cmdlines(s, &before_len), *after = NULL;
	int rc = 0;

	for (int try = 0; rc == 0 && try < TEXT_TRIES; try++) {
		if (try) {
			free(before);
			before = after, before_len = after_len;
		}
		s->have_jiffies = tb_kvars_jiffies_now(&s->jiffies_before) == 0;
		rc = save_copy(s, s->rq->inst, "trace", "trace.txt", true);
		s->have_jiffies = s->have_jiffies && tb_kvars_jiffies_now(&s->jiffies_after) == 0;
		after = read_cmdlines(s, &after_len);
		if (!after || same_text(before, before_len, after, after_len))
			break;
	}
	free(before);
	if (rc == 0 && after) {
		char *to = out_path(s, "saved_cmdlines");
		FILE *f = to ? fopen(to, "w") : NULL;
		if (!f || fwrite(after, 1, after_len, f) != after_len || fclose(f) != 0)
			rc = capture_say(-EIO, "%s: cannot write", to ? to : "saved_cmdlines");
		free(to);
	} else if (rc == 0) {
		rc = save_copy(s, s->rq->root, "saved_cmdlines", "saved_cmdlines", false);
	}
	free(after);
	return rc;
}

static int save_text_and_stats(struct saver *s)
{
	int rc = 0;

	if (s->rq->with_trace) {
		rc = save_text_with_comms(s);
	} else {
		s->have_jiffies = tb_kvars_jiffies_now(&s->jiffies_before) == 0;
		s->have_jiffies = s->have_jiffies && tb_kvars_jiffies_now(&s->jiffies_after) == 0;
		rc = save_copy(s, s->rq->root, "saved_cmdlines", "saved_cmdlines", false);
	}
	if (rc == 0 && option_on(s->rq->inst, "userstacktrace"))
		save_proc_maps(s);
	if (rc == 0)
		rc = save_copy(s, s->rq->root, "saved_tgids", "saved_tgids", false);
	for (int cpu = 0; rc == 0 && cpu <= s->max_cpu; cpu++)
		rc = save_stats(s, cpu);
	return rc;
}

/* The raw pages (this consumes them), then what they showed: formats by ID, symbols. */
static int save_pages(struct saver *s)
{
	uint8_t *page = malloc(s->subbuf);
	int rc = page ? 0 : capture_say(-ENOMEM, "out of memory");

	if (rc == 0)
		kallsyms_bounds(s);
	for (int cpu = 0; rc == 0 && cpu <= s->max_cpu; cpu++)
		rc = drain_cpu(s, cpu, page);
	free(page);
	if (rc == 0) {
		raw_refs_finish(&s->refs);
		rc = save_missing_formats(s);
	}
	if (rc == 0)
		rc = save_kallsyms(s);
	return rc;
}

int capture_save(const struct save_request *rq, struct save_result *res)
{
	struct saver *s = calloc(1, sizeof(*s));
	int rc;

	memset(res, 0, sizeof(*res));
	if (!s)
		return capture_say(-ENOMEM, "out of memory");
	s->rq = rq;
	s->res = res;
	s->events = path_of(rq->inst, "events");
	s->subbuf = tracefs_subbuf_size(rq->inst);
	if (!s->events)
		rc = capture_say(-ENOMEM, "out of memory");
	else if (s->subbuf < 4096 || s->subbuf > (512u << 10))
		rc = capture_say(-EINVAL, "%s: sub-buffer size %zu is not one the kernel uses", rq->inst,
				 s->subbuf);
	else
		rc = prepare_out(rq->out, rq->raw_started);
	if (rc == 0)
		rc = find_cpus(s);
	if (rc == 0)
		rc = save_descriptions(s);
	if (rc == 0)
		rc = save_text_and_stats(s);
	if (rc == 0)
		rc = save_pages(s);
	if (rc == 0)
		save_constants(s);
	if (rc == 0)
		rc = save_meta(s);
	raw_refs_free(&s->refs);
	free(s->events);
	free(s);
	return rc;
}
