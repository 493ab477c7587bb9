/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a tiny Test Anything Protocol emitter for tests run by prove.
 *
 *   ok(cond, "name %d", x);   is_int(got, want, "name");   is_str(got, want, "name");
 *   diag("...");  skip(n, "reason");  skip_all("reason");  return done_testing();
 */
#ifndef TB_TAP_H
#define TB_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int tap_run, tap_failed;

static inline void tap_vline(int pass, const char *fmt, va_list ap)
{
	printf("%sok %d - ", pass ? "" : "not ", ++tap_run);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	if (!pass)
		tap_failed++;
}

static inline int ok_at(const char *file, int line, int pass, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vline(pass, fmt, ap);
	va_end(ap);
	if (!pass)
		printf("#   failed at %s:%d\n", file, line);
	return pass;
}
#define ok(cond, ...) ok_at(__FILE__, __LINE__, !!(cond), __VA_ARGS__)

#define is_int(got, want, ...)                                                          \
	do {                                                                            \
		long long g_ = (long long)(got), w_ = (long long)(want);                \
		if (!ok(g_ == w_, __VA_ARGS__))                                          \
			printf("#   got %lld, want %lld\n", g_, w_);                   \
	} while (0)

#define is_str(got, want, ...)                                                          \
	do {                                                                            \
		const char *g_ = (got), *w_ = (want);                                   \
		if (!ok(g_ && w_ && strcmp(g_, w_) == 0, __VA_ARGS__))                   \
			printf("#   got  '%s'\n#   want '%s'\n", g_ ? g_ : "(null)",        \
			       w_ ? w_ : "(null)");                                     \
	} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
	va_end(ap);
}

/* A line that explains a failure, on stderr: prove shows a test's stderr, and hides its stdout. */
static inline void fail_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "# ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* n tests that cannot run here, each reported as passed with the reason. */
static inline void skip(int n, const char *reason)
{
	while (n-- > 0)
		printf("ok %d # skip %s\n", ++tap_run, reason);
	fflush(stdout);
}

static inline void skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	exit(0);
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_run);
	return tap_failed ? 1 : 0;
}

/* Read a whole file; caller frees.  NULL if it cannot be read. */
/*
 * The CPU time this process (all its threads) has used, in seconds: a bound
 * on work for a test that must stay cheap.  The wall clock of a shared
 * machine counts the other programs' turns too, so a test never bounds it.
 */
static inline double tap_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline char *tap_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t r = fread(buf + n, 1, cap - n - 1, f);
		if (r == 0)
			break;
		n += r;
	}
	fclose(f);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* What the shell command cmd writes to stdout (malloc'd, the caller frees), and its wait status. */
static inline char *tap_command_output(const char *cmd, int *status)
{
	FILE *p = popen(cmd, "r"), *m;
	char *out = NULL, buf[65536];
	size_t len = 0, n;

	if (!p)
		return NULL;
	m = open_memstream(&out, &len);
	if (!m) {
		*status = pclose(p);
		return NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		fwrite(buf, 1, n, m);
	fclose(m);
	*status = pclose(p);
	return out;
}

#endif
