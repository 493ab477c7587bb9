/*
 * Turning events on and off by name: globs in the kernel's set_event
 * forms, unknown names reported (returned, and printed for the
 * environment), TRACEBUF_EVENTS at start and for libraries loaded later,
 * and TRACEBUF_FORMATS, which makes a program write its formats and exit
 * before main().  The environment cases run this program again with the
 * variables set (TPE_CHILD says which case).
 */
#include <dlfcn.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/tracepoint.h"

TB_EVENT(tpe, send, TB_PROTO(int n), TB_FIELDS(tb_field(int, n, n)), TB_PRINTK("n=%d", REC->n))
TB_EVENT(tpe, recv, TB_PROTO(int n), TB_FIELDS(tb_field(int, n, n)), TB_PRINTK("n=%d", REC->n))
TB_EVENT(tpe, accept, TB_PROTO(int n), TB_FIELDS(tb_field(int, n, n)), TB_PRINTK("n=%d", REC->n))
TB_EVENT(tpf, send, TB_PROTO(int n), TB_FIELDS(tb_field(int, n, n)), TB_PRINTK("n=%d", REC->n))

struct state {
	char on[512];
};

static int state_cb(void *ctx, const struct tb_events_info *ev)
{
	struct state *s = ctx;

	if (ev->enabled)
		snprintf(s->on + strlen(s->on), sizeof(s->on) - strlen(s->on), "%s%s:%s", s->on[0] ? "," : "",
			 ev->system, ev->name);
	return 0;
}

/* The enabled events, "sys:name,..." in ID order. */
static const char *enabled(void)
{
	static struct state s;

	s.on[0] = '\0';
	tb_events_foreach(state_cb, &s);
	return s.on;
}

static void api(void)
{
	char unknown[64];

	is_str(enabled(), "", "every event starts disabled");
	is_int(tb_events_enable("tpe:*", unknown, sizeof(unknown)), 3, "tpe:* matches the three tpe events");
	is_str(enabled(), "tpe:send,tpe:recv,tpe:accept", "... and enables them");
	is_int(tb_events_disable("tpe:", NULL, 0), 3, "\"tpe:\" means tpe:*, as in set_event");
	is_int(tb_events_enable("*:send", NULL, 0), 2, "*:send matches send in every system");
	is_str(enabled(), "tpe:send,tpf:send", "... tpe:send and tpf:send");
	is_int(tb_events_disable("send", NULL, 0), 2, "a bare name matches it in every system");
	is_int(tb_events_enable("tpe:[ar]*", NULL, 0), 2, "bracket globs work (tpe:[ar]*)");
	is_str(enabled(), "tpe:recv,tpe:accept", "... recv and accept");
	tb_events_disable("tpe:*", NULL, 0);
	is_int(tb_events_enable("tpe:send, nope:none ,tpe:sendx", unknown, sizeof(unknown)), -ENOENT,
	       "patterns that match nothing make it return -ENOENT");
	is_str(unknown, "nope:none,tpe:sendx", "... and are named, blanks trimmed");
	is_str(enabled(), "tpe:send", "... while the others took effect");
	is_int(tb_events_disable("tpe:send,,tpe:recv", NULL, 0), -EINVAL, "an empty pattern is -EINVAL");
	is_str(enabled(), "", "... the others still took effect");
	is_int(tb_events_enable("", NULL, 0), -EINVAL, "an empty list is -EINVAL");
}

/* Run this program again with env set; its stderr into err, its exit status returned. */
static int rerun(const char *self, const char *child_case, const char *var, const char *value, char *err, size_t size)
{
	int pipefd[2], status = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(pipefd) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 2);
		close(pipefd[0]);
		setenv("TPE_CHILD", child_case, 1);
		setenv(var, value, 1);
		execl(self, self, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	while ((n = read(pipefd[0], err + got, size - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The child under TRACEBUF_EVENTS: what it finds enabled, as its exit status. */
static int child_events(void)
{
	const char *build = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char path[512];
	void *h;

	if (strcmp(enabled(), "tpe:send,tpe:recv,tpf:send"))
		return 1;
	if (!tb_events_ring())
		return 2; /* a default ring was created for them */
	snprintf(path, sizeof(path), "%s/tests/tp_plugin.so", build);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return 3;
	if (!strstr(enabled(), "tpd:plugin_only"))
		return 4; /* the rule enabled the library's event when it registered */
	dlclose(h);
	return 0;
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	int c;

	if (!f || !out) {
		if (f)
			fclose(f);
		if (out)
			fclose(out);
		free(buf);
		return NULL;
	}
	while ((c = fgetc(f)) != EOF)
		fputc(c, out);
	fclose(f);
	fclose(out);
	return buf;
}

static int format_of(void *ctx, const struct tb_events_info *ev)
{
	if (!strcmp(ev->system, "tpe") && !strcmp(ev->name, "recv"))
		*(char **)ctx = strndup(ev->format, ev->format_len);
	return 0;
}

static void environment(const char *self)
{
	char err[4096], dir[] = "/tmp/tb-formats-XXXXXX", path[600], *got, *want = NULL;
	int rc;

	rc = rerun(self, "events", "TRACEBUF_EVENTS", "tpe:recv, *:send ,nope:*,tpd:plugin_only", err,
		   sizeof(err));
	is_int(rc, 0, "TRACEBUF_EVENTS enables its events before main, and a library's when it loads");
	ok(strstr(err, "tracebuf: TRACEBUF_EVENTS: no event matches 'nope:*'\n") != NULL,
	   "an unknown pattern is reported on stderr");
	ok(strstr(err, "no event matches 'tpd:plugin_only'") != NULL,
	   "a pattern for a library not loaded yet is reported too (at start it matches nothing)");
	ok(!strstr(err, "'tpe:recv'") && !strstr(err, "'*:send'"), "patterns that matched are not");
	for (char *line = strtok(err, "\n"); line; line = strtok(NULL, "\n"))
		diag("child's stderr: %s", line);

	if (!mkdtemp(dir)) {
		skip(3, "no temporary directory");
		return;
	}
	rc = rerun(self, "formats", "TRACEBUF_FORMATS", dir, err, sizeof(err));
	is_int(rc, 0, "TRACEBUF_FORMATS: the program writes its formats and exits before main");
	snprintf(path, sizeof(path), "%s/formats/tpe/recv.format", dir);
	got = read_all(path);
	tb_events_foreach(format_of, &want);
	ok(got && want && !strcmp(got, want), "formats/tpe/recv.format is the registry's text");
	free(got);
	free(want);
	{
		static const char *files[] = {"header_page", "header_event", "printk_formats", "kallsyms",
					      "formats/ftrace/bprint.format", "formats/tpf/send.format"};
		int present = 0;
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			struct stat st;
			snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
			present += stat(path, &st) == 0;
		}
		is_int(present, 6, "... with header_page, header_event, printk_formats, kallsyms and every event");
	}
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path) != 0)
		diag("could not remove %s", dir);
}

int main(int argc, char **argv)
{
	const char *child = getenv("TPE_CHILD");

	(void)argc;
	if (child && !strcmp(child, "events"))
		return child_events();
	if (child && !strcmp(child, "formats"))
		return 99; /* TRACEBUF_FORMATS should have ended us before main */
	api();
	environment(argv[0]);
	is_int(tb_events_problems(), 0, "no registration problems");
	return done_testing();
}
