// SPDX-License-Identifier: MIT
/*
 * hist_region.c - reading attached hists' regions (hist_region.h): in the
 * process (tb_hist_print_attached, through hist_region_merge) and from
 * outside (tb_hist_print_processes: `tracebuf hist --attach`).
 *
 * From outside, nothing of a region is trusted: it is mapped read-only (a
 * memfd sealed against shrinking: the mapping cannot fault), its header is
 * copied into private memory and checked against the file's size, the
 * event's format and spec (texts in the region) are parsed as at attach
 * time, and the geometry must be the one they imply.  Counters are read
 * with the slot seqlock; a damaged value is only a wrong number, never a
 * read outside the mapping.  The reader writes nothing, so the writers
 * never wait for it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hist_region.h"

static __thread char region_error[512];

const char *tb_hist_region_error(void)
{
	return region_error;
}

static int fail(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(region_error, sizeof(region_error), fmt, ap);
	va_end(ap);
	return rc;
}

/* ----------------------------------------------------------- the merge */

/*
 * Slot s copied into out (slot_words words): true when whole, i.e. the
 * state was the same even number before and after (hist_region.h).
 */
static bool copy_slot(const _Atomic uint64_t *s, uint64_t *out, size_t words)
{
	/* acquire: pairs with the writer's release store of an even state (counters whole) */
	uint64_t before = atomic_load_explicit(&s[SLOT_STATE], memory_order_acquire);

	for (size_t w = 1; w < words; w++)
		out[w] = atomic_load_explicit(&s[w], memory_order_relaxed);
	/* acquire fence: a counter read above that a writer changed after making the state odd
	 * (its release fence) makes the load below see that odd state or later */
#ifndef HIST_REGION_TSAN
	atomic_thread_fence(memory_order_acquire);
#endif
	out[SLOT_STATE] = before;
	return !(before & 1) && atomic_load_explicit(&s[SLOT_STATE], memory_order_relaxed) == before;
}

static int merge_slot(struct tb_hist *h, const uint64_t *slot)
{
	uint8_t key[HIST_KEYS_MAX * HIST_STR_MAX + HIST_KEYS_MAX * 8];
	uint64_t *e;

	memcpy(key, slot + SLOT_SUMS + h->nvals, h->key_size);
	for (unsigned i = 0; i < h->nkeys; i++) /* a string key ends inside its room, whatever the region holds */
		if (h->keys[i].str != HIST_STR_NONE)
			key[h->keys[i].key_offset + h->keys[i].key_size - 1] = '\0';
	e = hist_table_get(&h->table, key, slot[SLOT_FIRST_TS]);
	if (!e)
		return -ENOMEM;
	e[HIST_E_HITCOUNT] += slot[SLOT_HITCOUNT];
	for (unsigned v = 0; v < h->nvals; v++)
		e[HIST_E_SUMS + v] += slot[SLOT_SUMS + v];
	return 0;
}

/* Slots [from, to) of a table whose slots start at base. */
static int merge_slots(struct tb_hist *h, const _Atomic uint64_t *slots, size_t from, size_t to, size_t words,
		       unsigned tries, uint64_t *unsettled)
{
	uint64_t copy[SLOT_SUMS + HIST_VALS_MAX + (HIST_KEYS_MAX * HIST_STR_MAX) / 8 + HIST_KEYS_MAX];
	int rc;

	for (size_t j = from; j < to; j++) {
		const _Atomic uint64_t *s = slots + j * words;
		unsigned n = 0;
		bool whole;
		if (!atomic_load_explicit(&s[SLOT_STATE], memory_order_relaxed))
			continue;
		while (!(whole = copy_slot(s, copy, words)) && ++n < tries)
			if (n > 16)
				sched_yield(); /* its writer was preempted inside the update */
		*unsettled += !whole;
		if ((rc = merge_slot(h, copy)) < 0)
			return rc;
	}
	return 0;
}

/* The slot range [*from, *to) of [lo, hi) that holds data (fd's holes: never written, all zero). */
static bool next_data(int fd, size_t base_off, size_t slot_bytes, size_t lo, size_t hi, size_t *from, size_t *to)
{
	off_t d, e;

	if (fd < 0) {
		*from = lo;
		*to = hi;
		return lo < hi;
	}
	if (lo >= hi || (d = lseek(fd, (off_t)(base_off + lo * slot_bytes), SEEK_DATA)) < 0)
		return false;
	e = lseek(fd, d, SEEK_HOLE);
	if (e < 0)
		e = (off_t)(base_off + hi * slot_bytes);
	*from = ((size_t)d - base_off) / slot_bytes;
	*to = ((size_t)e - base_off + slot_bytes - 1) / slot_bytes;
	if (*from < lo)
		*from = lo;
	if (*to > hi)
		*to = hi;
	return *from < *to;
}

int hist_region_merge(struct tb_hist *h, const struct hist_region_header *geo, const void *base, int fd,
		      unsigned tries, uint64_t *unsettled)
{
	const struct hist_region_header *live = base;
	const struct hist_region_table *tables = (const void *)((const uint8_t *)base + geo->tables_off);
	size_t words = geo->slot_words, table_bytes = (size_t)geo->nslots * words * 8;

	h->dropped += atomic_load_explicit(&live->no_table, memory_order_relaxed);
	for (size_t i = 0; i < geo->ntables; i++) {
		size_t off = geo->slots_off + i * table_bytes, from, to, lo = 0;
		const _Atomic uint64_t *slots = (const void *)((const uint8_t *)base + off);
		int rc;
		h->dropped += atomic_load_explicit(&tables[i].dropped, memory_order_relaxed);
		if (!atomic_load_explicit(&tables[i].used, memory_order_relaxed))
			continue; /* never claimed (or nothing yet): its pages are holes */
		while (next_data(fd, off, words * 8, lo, geo->nslots, &from, &to)) {
			if ((rc = merge_slots(h, slots, from, to, words, tries, unsettled)) < 0)
				return rc;
			lo = to;
		}
	}
	return 0;
}

/* ---------------------------------------------------- reading a region */

/* One hist read from outside: the hists of one event and spec, merged over the regions found. */
struct outside {
	struct tb_hist *h;
	char *event, *spec; /* the region's texts (NUL-terminated copies) */
	uint32_t ordinal, pid;
};

struct reading {
	const char *event; /* only this one (NULL: all) */
	struct outside *hists;
	size_t n, cap;
	struct tb_schema *schema; /* comms of the processes read */
	uint64_t unsettled;
	int regions;
};

/* The header of a region of size bytes, copied into *r and checked. */
static int check_header(const char *name, const void *mem, size_t size, struct hist_region_header *r)
{
	uint64_t texts, table_bytes;

	if (size < sizeof(*r))
		return fail(-EINVAL, "%s: %zu bytes, shorter than a hist region's header (%zu)", name, size, sizeof(*r));
	memcpy(r, mem, sizeof(*r));
	if (memcmp(r->magic, HIST_REGION_MAGIC, sizeof(r->magic)))
		return fail(-EINVAL, "%s: byte 0: not a tracebuf hist region (magic)", name);
	if (r->version != HIST_REGION_VERSION || r->header_size != sizeof(*r))
		return fail(-EINVAL, "%s: byte 8: version %u, header %u bytes: this reader knows version %d (%zu)",
			    name, r->version, r->header_size, HIST_REGION_VERSION, sizeof(*r));
	if (r->region_size != size)
		return fail(-EINVAL, "%s: byte 16: says %llu bytes, the file has %zu", name,
			    (unsigned long long)r->region_size, size);
	texts = (uint64_t)r->event_len + r->spec_len + r->format_len;
	if (texts > HIST_REGION_TEXT_MAX || sizeof(*r) + texts > r->tables_off)
		return fail(-EINVAL, "%s: byte %zu: texts of %llu bytes overlap the tables at %llu", name,
			    offsetof(struct hist_region_header, event_len), (unsigned long long)texts,
			    (unsigned long long)r->tables_off);
	if (!r->ntables || r->ntables > HIST_REGION_TABLES_MAX || r->tables_off % 8 ||
	    r->tables_off + (uint64_t)r->ntables * sizeof(struct hist_region_table) > r->slots_off ||
	    r->slots_off % 8)
		return fail(-EINVAL, "%s: byte %zu: %u tables at %llu, slots at %llu: out of range", name,
			    offsetof(struct hist_region_header, ntables), r->ntables,
			    (unsigned long long)r->tables_off, (unsigned long long)r->slots_off);
	table_bytes = (uint64_t)r->nslots * r->slot_words * 8;
	if (r->slots_off + table_bytes * r->ntables != size)
		return fail(-EINVAL, "%s: byte %zu: %u tables of %u slots of %u words do not fill the region", name,
			    offsetof(struct hist_region_header, nslots), r->ntables, r->nslots, r->slot_words);
	return 0;
}

/* The hist the region's format and spec make; its geometry must be r's. */
static int region_hist(const char *name, const uint8_t *mem, const struct hist_region_header *r,
		       struct tb_schema *schema, struct outside *o)
{
	const char *text = (const char *)mem + sizeof(*r), *nul;
	char *format, *colon, system[TB_NAME_MAX];
	struct tb_format fmt;
	struct tb_problem perr;
	struct tb_hist_error err;
	int rc;

	/* the texts hold no NUL: a copy (strndup) is each text whole */
	if ((nul = memchr(text, '\0', (size_t)r->event_len + r->spec_len + r->format_len)))
		return fail(-EINVAL, "%s: byte %zu: a NUL inside the event, spec and format texts", name,
			    sizeof(*r) + (size_t)(nul - text));
	o->event = strndup(text, r->event_len);
	o->spec = strndup(text + r->event_len, r->spec_len);
	format = strndup(text + r->event_len + r->spec_len, r->format_len);
	if (!format || !o->event || !o->spec) {
		free(format);
		return -ENOMEM;
	}
	colon = strchr(o->event, ':');
	if (!colon || (size_t)(colon - o->event) >= sizeof(system)) {
		free(format);
		return fail(-EINVAL, "%s: byte %zu: the event name is not SYSTEM:EVENT", name, sizeof(*r));
	}
	snprintf(system, sizeof(system), "%.*s", (int)(colon - o->event), o->event);
	rc = tb_format_parse(format, r->format_len, &fmt, &perr);
	free(format);
	if (rc < 0)
		return fail(-EINVAL, "%s: byte %llu: the event's format does not parse: %s", name,
			    (unsigned long long)(sizeof(*r) + r->event_len + r->spec_len + perr.offset), perr.reason);
	rc = tb_hist_new(o->spec, &fmt, system, schema, &o->h, &err);
	tb_format_free(&fmt);
	if (rc < 0)
		return rc == -EINVAL ? fail(rc, "%s: byte %llu: the spec does not parse: %s", name,
					    (unsigned long long)(sizeof(*r) + r->event_len + err.pos), err.reason)
				     : rc;
	if (r->max_entries != 1u << o->h->map_bits || r->nslots != 2u << o->h->map_bits ||
	    r->slot_words != SLOT_SUMS + o->h->nvals + o->h->key_size / 8)
		return fail(-EINVAL, "%s: byte %zu: %u slots of %u words, %u entries: the spec makes %u, %u, %u", name,
			    offsetof(struct hist_region_header, nslots), r->nslots, r->slot_words, r->max_entries,
			    2u << o->h->map_bits, SLOT_SUMS + o->h->nvals + o->h->key_size / 8,
			    1u << o->h->map_bits);
	return 0;
}

static void outside_free(struct outside *o)
{
	tb_hist_free(o->h);
	free(o->event);
	free(o->spec);
}

/* The hist of r's event and spec among those read (made if new); NULL with *rc set. */
static struct outside *hist_for(struct reading *rd, const char *name, const uint8_t *mem,
				const struct hist_region_header *r, int *rc)
{
	struct outside o = {.ordinal = r->ordinal, .pid = r->pid};

	if ((*rc = region_hist(name, mem, r, rd->schema, &o)) < 0) {
		outside_free(&o);
		return NULL;
	}
	for (size_t i = 0; i < rd->n; i++)
		if (!strcmp(rd->hists[i].event, o.event) && !strcmp(rd->hists[i].spec, o.spec)) {
			outside_free(&o); /* the same hist in another process: merged into the first */
			return &rd->hists[i];
		}
	if (rd->n == rd->cap) {
		size_t cap = rd->cap ? rd->cap * 2 : 8;
		struct outside *grown = realloc(rd->hists, cap * sizeof(*grown));
		if (!grown) {
			outside_free(&o);
			*rc = -ENOMEM;
			return NULL;
		}
		rd->hists = grown;
		rd->cap = cap;
	}
	rd->hists[rd->n] = o; /* its table made empty by tb_hist_new */
	return &rd->hists[rd->n++];
}

/* Region mem (size bytes, fd its file or -1) merged into the reading.  0, 1 (not wanted) or -errno. */
static int read_region(struct reading *rd, const char *name, const void *mem, size_t size, int fd, unsigned tries)
{
	struct hist_region_header r;
	struct outside *o;
	int rc = check_header(name, mem, size, &r);

	if (rc < 0)
		return rc;
	if (r.state != HIST_REGION_LIVE)
		return 1; /* removed (tb_hist_remove) */
	if (rd->event) {
		const char *text = (const char *)mem + sizeof(r), *colon = memchr(text, ':', r.event_len);
		size_t want = strlen(rd->event);
		bool match = (want == r.event_len && !memcmp(text, rd->event, want)) ||
			     (!strchr(rd->event, ':') && colon && want == r.event_len - (size_t)(colon + 1 - text) &&
			      !memcmp(colon + 1, rd->event, want));
		if (!match)
			return 1;
	}
	if (!(o = hist_for(rd, name, mem, &r, &rc)))
		return rc;
	rd->regions++;
	return hist_region_merge(o->h, &r, mem, fd, tries, &rd->unsettled);
}

/* ------------------------------------------------ regions of a process */

/* "TID comm" of every thread of pid into the schema's saved cmdlines (for .execname). */
static void load_comms(struct tb_schema *s, pid_t pid)
{
	char path[64], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!out || !(dir = opendir(path))) {
		if (out)
			fclose(out);
		free(text);
		return;
	}
	while ((d = readdir(dir))) {
		char file[600], comm[64] = "";
		FILE *f;
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(file, sizeof(file), "%s/%s/comm", path, d->d_name);
		if ((f = fopen(file, "r"))) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = '\0';
			fclose(f);
			fprintf(out, "%s %s\n", d->d_name, comm);
		}
	}
	closedir(dir);
	fclose(out);
	tb_schema_load_cmdlines(s, path, text, len);
	free(text);
}

/* The region open as fd: sealed so that it cannot shrink under the mapping, mapped and read. */
static int read_fd(struct reading *rd, const char *name, int fd)
{
	struct stat st;
	void *mem;
	int seals = fcntl(fd, F_GET_SEALS), rc;

	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return fail(-EINVAL, "%s: not sealed against shrinking: not a tracebuf hist region", name);
	if (fstat(fd, &st) < 0)
		return fail(-errno, "%s: %s", name, strerror(errno));
	if (st.st_size < (off_t)sizeof(struct hist_region_header))
		return fail(-EINVAL, "%s: %lld bytes, shorter than a hist region's header", name, (long long)st.st_size);
	mem = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (mem == MAP_FAILED)
		return fail(-errno, "%s: cannot map: %s", name, strerror(errno));
	rc = read_region(rd, name, mem, (size_t)st.st_size, fd, HIST_REGION_TRIES);
	munmap(mem, (size_t)st.st_size);
	return rc;
}

/* Every hist region among pid's open files (memfds named HIST_REGION_NAME...). */
static int read_process(struct reading *rd, pid_t pid)
{
	char dirname[64];
	struct dirent *d;
	DIR *dir;
	int rc = 0;

	snprintf(dirname, sizeof(dirname), "/proc/%d/fd", (int)pid);
	if (!(dir = opendir(dirname)))
		return fail(errno == ENOENT ? -ESRCH : -errno, "process %d: %s", (int)pid,
			    errno == ENOENT ? "no such process" : strerror(errno));
	while (rc >= 0 && (d = readdir(dir))) {
		char path[320], link[512], name[900];
		ssize_t n;
		int fd;
		if (d->d_name[0] < '0' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dirname, d->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:" HIST_REGION_NAME, strlen("/memfd:" HIST_REGION_NAME)))
			continue;
		snprintf(name, sizeof(name), "%s (%s)", path, link + 1);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			continue; /* closed meanwhile (tb_hist_remove) */
		rc = read_fd(rd, name, fd);
		close(fd);
	}
	closedir(dir);
	if (rc >= 0)
		load_comms(rd->schema, pid);
	return rc < 0 ? rc : 0;
}

static int by_place(const void *pa, const void *pb)
{
	const struct outside *a = pa, *b = pb;

	if (a->ordinal != b->ordinal)
		return a->ordinal < b->ordinal ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

static int print_reading(struct reading *rd, FILE *out)
{
	int rc = 0;

	qsort(rd->hists, rd->n, sizeof(*rd->hists), by_place);
	for (size_t i = 0; i < rd->n && rc == 0; i++)
		rc = tb_hist_print(rd->hists[i].h, out);
	return rc;
}

static void reading_free(struct reading *rd)
{
	for (size_t i = 0; i < rd->n; i++)
		outside_free(&rd->hists[i]);
	free(rd->hists);
	tb_schema_free(rd->schema);
}

int tb_hist_print_processes(const pid_t *pids, size_t n, const char *event, FILE *out, uint64_t *unsettled)
{
	struct reading rd = {.event = event};
	int rc = 0;

	if ((!pids && n) || !out)
		return -EINVAL;
	region_error[0] = '\0';
	if (!(rd.schema = tb_schema_new()))
		return -ENOMEM;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = read_process(&rd, pids[i]);
	if (rc == 0 && !rd.regions && n == 1)
		rc = fail(-ENOENT, "process %d has no hist attached%s%s (no %s* memfd among its files)",
			  (int)pids[0], event ? " to " : "", event ? event : "", HIST_REGION_NAME);
	else if (rc == 0 && !rd.regions)
		rc = fail(-ENOENT, "none of the %zu processes has a hist attached%s%s", n, event ? " to " : "",
			  event ? event : "");
	if (rc == 0)
		rc = print_reading(&rd, out);
	if (unsettled)
		*unsettled = rd.unsettled;
	reading_free(&rd);
	return rc;
}

int tb_hist_print_region(const void *mem, size_t size, FILE *out)
{
	struct reading rd = {0};
	int rc;

	if (!mem || !out)
		return -EINVAL;
	region_error[0] = '\0';
	if (!(rd.schema = tb_schema_new()))
		return -ENOMEM;
	rc = read_region(&rd, "region", mem, size, -1, 1);
	if (rc == 0)
		rc = print_reading(&rd, out);
	reading_free(&rd);
	return rc < 0 ? rc : 0;
}
