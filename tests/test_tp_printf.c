/*
 * printf events (ftrace:bprint) and markers (ftrace:print, ftrace:raw_data)
 * written from user space.
 *
 * bprint: the arguments must be packed as the kernel's vbin_printf()
 * packs them (checked byte by byte for the cases where the packing is
 * subtle: one-byte %c, two-byte %hd, an int after a string, width and
 * precision from arguments), and the record must print as the C library
 * prints the same format and arguments (for conversions where the C
 * library and the kernel agree) - through libtraceevent on its own and
 * through tb_render_event, the format coming from the registry's
 * printk_formats and the function name from its kallsyms.
 *
 * Markers: the kernel's own text is the oracle: the same text and bytes are
 * written to the trace_marker and trace_marker_raw files of a private
 * tracefs instance and the lines of its trace file compared with ours
 * (skipped without tracefs or root).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/evtext.h"
#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracepoint.h"

static struct tb_ring *ring;
static struct tb_schema *schema;
static struct tep_handle *tep;

static bool next_record(struct tb_read_event *ev)
{
	while (tb_consume_merged(ring, ev) == 1)
		if (ev->kind == TB_READ_RECORD)
			return true;
	return false;
}

/* Check the next record against the text the C library makes of the same call (TODO: a known gap). */
static void expect_text(const char *func, const char *want_text, const char *what, const char *todo)
{
	struct tb_read_event ev;
	char want[1024], *tep_text, *line, *body;
	size_t n;

	if (!next_record(&ev)) {
		ok(0, "%s: a record was written", what);
		return;
	}
	n = (size_t)snprintf(want, sizeof(want), "%s: %s", func, want_text);
	if (n && want[n - 1] == '\n')
		want[n - 1] = '\0'; /* the trace's line ends there */
	tep_text = evtext_tep_body(tep, ev.data, ev.len);
	line = evtext_render_line(schema, &ev);
	body = evtext_body(line, "bprint");
	/* The known gaps are libtraceevent's; our printer prints the kernel's text. */
	if (todo)
		todo_is_str(tep_text, want, todo, "%s: libtraceevent prints it", what);
	else
		is_str(tep_text, want, "%s: libtraceevent prints it", what);
	is_str(body, want, "%s: tb_render_event prints it", what);
	free(tep_text);
	free(line);
}

/* The argument words of the next record (after ip and fmt) must be want[0..n). */
static void expect_words(const void *want, size_t n, const char *what)
{
	struct tb_read_event ev;
	const unsigned char *d;

	if (!next_record(&ev)) {
		ok(0, "%s: a record was written", what);
		return;
	}
	d = ev.data;
	ok(ev.len == ((24 + n + 3) & ~3u) && !memcmp(d + 24, want, n),
	   "%s: packed as vbin_printf packs it (%zu bytes)", what, n);
	if (ev.len >= 24) {
		uint16_t type;
		uint64_t ip, fmt;
		memcpy(&type, d, 2);
		memcpy(&ip, d + 8, 8);
		memcpy(&fmt, d + 16, 8);
		ok(type == TB_BPRINT_ID && ip == fmt && fmt != 0, "%s: an ftrace:bprint record keyed by its site", what);
	}
}

/* ---------------------------------------------------------- the calls */

static void formats_that_print(void)
{
	const char *s = "a string";
	char buf[64];
	long l = -1234567890123L;
	unsigned long ul = 0xdeadbeefcafeUL;

	tb_printf("no arguments\n");
	expect_text(__func__, "no arguments\n", "a format without arguments", NULL);
	tb_printf("%d %u %x %X %o %%\n", -42, 42u, 0xabcu, 0xabcu, 8u);
	snprintf(buf, sizeof(buf), "%d %u %x %X %o %%\n", -42, 42u, 0xabcu, 0xabcu, 8u);
	expect_text(__func__, buf, "ints (inline packing)", NULL);
	tb_printf("l=%ld ul=%lx ll=%lld z=%zu\n", l, ul, (long long)l, (size_t)77);
	snprintf(buf, sizeof(buf), "l=%ld ul=%lx ll=%lld z=%zu\n", l, ul, (long long)l, (size_t)77);
	expect_text(__func__, buf, "8-byte integers (inline packing)", NULL);
	tb_printf("s=%s n=%d t=%s\n", s, 5, "tail");
	snprintf(buf, sizeof(buf), "s=%s n=%d t=%s\n", s, 5, "tail");
	expect_text(__func__, buf, "strings between numbers (inline packing)", NULL);
	tb_printf("null=%s\n", (const char *)NULL);
	expect_text(__func__, "null=(null)\n", "a NULL string is recorded as (null), like the kernel's", NULL);
}

/*
 * Conversions libtraceevent 1.7.1 does not read from bprint records (%c,
 * the h and hh qualifiers, '*'; after the first it marks the event failed
 * for good): the C library's text is expected, TODO for libtraceevent;
 * tracebuf's printer must print it (it
 * does).  Run last.
 */
static void formats_libtraceevent_misses(void)
{
	const char *why = "libtraceevent 1.7.1 cannot read %c, %h, %hh or * from bprint records";
	char buf[128];

	tb_printf("c=%c h=%hd hh=%hhu w=%*d p=%.*s\n", 'Z', (short)-7, (unsigned char)200, 6, 42, 3, "abcdef");
	snprintf(buf, sizeof(buf), "c=%c h=%hd hh=%hhu w=%*d p=%.*s\n", 'Z', (short)-7, (unsigned char)200, 6, 42, 3,
		 "abcdef");
	expect_text(__func__, buf, "%c %hd %hhu and * (packed by the format)", why);
}

static void formats_packed(void)
{
	int x = 0x11223344;

	tb_printf("%c%d", 'A', x);
	expect_words((const unsigned char[]){'A', 0, 0, 0, 0x44, 0x33, 0x22, 0x11}, 8,
		     "%c then %d: one byte, the int at the next multiple of 4");
	tb_printf("%hd%hhd%d", (short)0x0102, (signed char)3, x);
	expect_words((const unsigned char[]){0x02, 0x01, 3, 0, 0x44, 0x33, 0x22, 0x11}, 8,
		     "%hd %hhd %d: two bytes, one byte, four at 4");
	tb_printf("%s%d", "ab", x);
	expect_words((const unsigned char[]){'a', 'b', 0, 0, 0x44, 0x33, 0x22, 0x11}, 8,
		     "%s then %d: the string and its NUL, the int aligned");
	tb_printf("%d", x);
	expect_words((const unsigned char[]){0x44, 0x33, 0x22, 0x11}, 4, "%d alone (its last 8 bytes shared with the key)");
	tb_printf("%d%u%x", 1, 2u, 3u);
	expect_words((const unsigned char[]){1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}, 12, "three ints, back to back");
	tb_printf("%p%d", (void *)0x1122334455667788, 9);
	expect_words((const unsigned char[]){0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, 9, 0, 0, 0}, 12,
		     "%p then %d: eight bytes, then four");
	tb_printf("%lld", 0x0807060504030201LL);
	expect_words((const unsigned char[]){1, 2, 3, 4, 5, 6, 7, 8}, 8, "%lld: eight bytes");
	tb_printf("%c%lld", 'q', 0x0807060504030201LL);
	expect_words((const unsigned char[]){'q', 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8}, 12,
		     "%c then %lld: 8-byte values align to 4, not 8");
}

static void too_big(void)
{
	char *s = malloc(5000);
	uint64_t before = 0, after = 0;
	struct tb_cpu_stats st;
	struct tb_read_event ev;

	memset(s, 'y', 4999);
	s[4999] = '\0';
	for (unsigned c = 0; c < tb_ring_ncpus(ring); c++)
		if (tb_stats_read(ring, c, &st) == 0)
			before += st.too_big;
	tb_printf("%s", s);
	for (unsigned c = 0; c < tb_ring_ncpus(ring); c++)
		if (tb_stats_read(ring, c, &st) == 0)
			after += st.too_big;
	is_int(after - before, 1, "a printf record over TB_EVENT_MAX is refused and counted in too_big");
	ok(!next_record(&ev), "... and nothing was written");
	free(s);
}

/* ------------------------------------------------------------- sites */

struct site_find {
	const char *fmt;
	struct tb_events_printf_info info;
	int found;
};

static int site_cb(void *ctx, const struct tb_events_printf_info *si)
{
	struct site_find *f = ctx;

	if (strcmp(si->fmt, f->fmt))
		return 0;
	f->info = *si;
	f->found++;
	return 0;
}

static void sites(void)
{
	struct site_find f = {"c=%c h=%hd hh=%hhu w=%*d p=%.*s\n", {0}, 0};
	size_t len;
	char *text, line[128];

	tb_events_foreach_printf(site_cb, &f);
	ok(f.found == 1 && f.info.recordable && f.info.loaded && !strcmp(f.info.func, "formats_libtraceevent_misses"),
	   "a tb_printf call site is registered with its function");
	text = tb_events_printk_formats(&len);
	snprintf(line, sizeof(line), "0x%llx : \"c=%%c h=%%hd hh=%%hhu w=%%*d p=%%.*s\\n\"\n",
		 (unsigned long long)f.info.key);
	ok(text && strstr(text, line), "printk_formats has its line, escaped like the kernel's");
	free(text);
	text = tb_events_kallsyms(&len);
	snprintf(line, sizeof(line), "%016llx t formats_libtraceevent_misses\n", (unsigned long long)f.info.key);
	ok(text && strstr(text, line), "kallsyms names its function");
	free(text);
}

/* ----------------------------------------------------------- markers */

static void markers_in_ring(char **print_body, char **raw_body, const char *text, uint32_t id,
			    const unsigned char *bytes, size_t n)
{
	struct tb_read_event ev;
	char *line;

	*print_body = *raw_body = NULL;
	ok(tb_marker_puts(text) == (int)strlen(text), "tb_marker_puts writes the text");
	if (next_record(&ev) && (line = evtext_render_line(schema, &ev))) {
		*print_body = strdup(evtext_body(line, "print"));
		free(line);
	}
	ok(tb_marker_raw_write(id, bytes, n) == 0, "tb_marker_raw_write writes the bytes");
	if (next_record(&ev) && (line = evtext_render_line(schema, &ev))) {
		*raw_body = strdup(evtext_body(line, "raw_data"));
		free(line);
	}
}

static int write_file(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t w;

	if (fd < 0)
		return -errno;
	w = write(fd, data, n);
	close(fd);
	return w == (ssize_t)n ? 0 : -EIO;
}

/* The bodies of the kernel's first two lines of its trace file for the same markers. */
static int markers_in_kernel(char **print_body, char **raw_body, const char *text, uint32_t id,
			     const unsigned char *bytes, size_t n)
{
	char inst[128], path[192], buf[8192], *line, *save = NULL;
	unsigned char raw[4 + 256];
	FILE *f;
	size_t got;
	int rc = 0;

	*print_body = *raw_body = NULL;
	snprintf(inst, sizeof(inst), "/sys/kernel/tracing/instances/tb-sources-%d", (int)getpid());
	if (mkdir(inst, 0755) < 0)
		return -errno;
	memcpy(raw, &id, 4);
	memcpy(raw + 4, bytes, n);
	snprintf(path, sizeof(path), "%s/trace_marker", inst);
	if (write_file(path, text, strlen(text)) < 0)
		rc = -EIO;
	snprintf(path, sizeof(path), "%s/trace_marker_raw", inst);
	if (rc == 0 && write_file(path, raw, 4 + n) < 0)
		rc = -EIO;
	snprintf(path, sizeof(path), "%s/trace", inst);
	f = rc == 0 ? fopen(path, "re") : NULL;
	got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[got] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *body;
		if (line[0] == '#' || !(body = strstr(line, "]")) || !(body = strstr(body, ": ")))
			continue;
		body += 2;
		if (!*print_body)
			*print_body = strdup(body);
		else if (!*raw_body)
			*raw_body = strdup(body);
	}
	rmdir(inst);
	return rc;
}

static void markers(void)
{
	unsigned char bytes[40];
	char *ours_print, *ours_raw, *kern_print, *kern_raw;

	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 7);
	markers_in_ring(&ours_print, &ours_raw, "hello from user space", 0xabcd, bytes, 37);
	is_str(ours_print, "tracing_mark_write: hello from user space",
	       "a marker renders as the kernel prints trace_marker text");
	if (getuid() != 0 || access("/sys/kernel/tracing/instances", W_OK) != 0 ||
	    markers_in_kernel(&kern_print, &kern_raw, "hello from user space", 0xabcd, bytes, 37) < 0) {
		skip(2, "no writable tracefs: the kernel's own marker text is not available");
	} else {
		is_str(ours_print, kern_print, "ftrace:print: our line's text is the kernel's for the same marker");
		is_str(ours_raw, kern_raw, "ftrace:raw_data: our line's text is the kernel's for the same bytes");
		free(kern_print);
		free(kern_raw);
	}
	free(ours_print);
	free(ours_raw);
	{
		/* tests/data/kernel/cap-c-subbuf8k/write_results.txt: what the kernel did with the same sizes */
		char *big = malloc(6000);
		struct tb_read_event ev;
		memset(big, 'm', 6000);
		is_int(tb_marker_write(big, 4096), 4054, "a 4096-byte marker keeps 4054 bytes, as the kernel's trace_marker");
		ok(next_record(&ev) && ev.len <= TB_EVENT_MAX, "... in one record");
		is_int(tb_marker_write(big, 5000), 4054, "a 5000-byte marker keeps 4054 bytes, as the kernel's");
		ok(next_record(&ev), "... in one record");
		is_int(tb_marker_raw_write(1, big, 4092), -E2BIG,
		       "a raw marker of 4096 bytes with its id is refused, as the kernel's (EINVAL there)");
		is_int(tb_marker_raw_write(1, big, 4060), 0, "... and the largest that fits, 4060 bytes after the id, is written");
		ok(next_record(&ev) && ev.len == TB_EVENT_MAX, "... filling an event exactly");
		free(big);
	}
}

int main(void)
{
	struct tb_ring_opts o;
	struct tb_read_event ev;

	tb_ring_opts_default(&o);
	o.clock = TB_CLOCK_MONO;
	if (tb_ring_new(&ring, &o) < 0)
		skip_all("cannot create a ring");
	tb_events_attach(ring);
	tb_printf("disabled %d\n", 1);
	ok(!next_record(&ev), "tb_printf writes nothing while ftrace:bprint is disabled");
	ok(tb_marker_puts("x") == -EAGAIN && tb_marker_raw_write(1, "x", 1) == -EAGAIN,
	   "markers say -EAGAIN while their events are disabled");
	is_int(tb_events_enable("ftrace:*", NULL, 0), 3, "ftrace:* enables print, bprint and raw_data");
	schema = tb_schema_new();
	ok(schema && tb_schema_load_events(schema, tb_ring_subbuf_size(ring)) == 0, "schema from the registry");
	tep = evtext_tep();
	formats_that_print();
	formats_packed();
	too_big();
	sites();
	markers();
	formats_libtraceevent_misses();
	is_int(tb_events_problems(), 0, "no registration problems");
	is_int(tb_schema_problems(schema), 0, "the schema reported no problems");
	tb_events_attach(NULL);
	tep_free(tep);
	tb_schema_free(schema);
	tb_ring_free(ring);
	return done_testing();
}
