/*
 * Typed tracepoints: the format texts they describe themselves with (the
 * kernel's own files as the oracle, byte for byte, for events declared with
 * the kernel's fields and print fmts; libtraceevent and tracebuf's format
 * parser for every field kind), the records they write (read back from the
 * ring and printed by libtraceevent and by tracebuf's renderer, both
 * compared with the text computed here with the C library), the common
 * fields (the thread id, also after fork and in other threads), refusal of
 * oversize records, and what disabled and enabled cost in instructions.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/evtext.h"
#include "lib/tap.h"
#include "tracebuf/events.h"
#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"
#include "tracebuf/tracepoint.h"

/* ---------------------------------------------- mirrors of kernel events */

typedef int64_t s64;
enum hrtimer_mode { HRTIMER_MODE_ABS = 0, HRTIMER_MODE_REL = 1 };

TB_EVENT(irq, irq_handler_entry,
	 TB_PROTO(int irq, const char *name),
	 TB_FIELDS(tb_field(int, irq, irq), tb_string(name, name)),
	 TB_PRINTK("irq=%d name=%s", REC->irq, __get_str(name)))

TB_EVENT(raw_syscalls, sys_enter,
	 TB_PROTO(long id, const unsigned long *args),
	 TB_FIELDS(tb_field(long, id, id), tb_array(unsigned long, args, 6, args)),
	 TB_PRINTK("NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", REC->id, REC->args[0], REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]))

TB_EVENT(sched, sched_switch,
	 TB_PROTO(const char *prev, pid_t prev_pid, int prev_prio, long prev_state, const char *next, pid_t next_pid, int next_prio),
	 TB_FIELDS(tb_chars(prev_comm, 16, prev), tb_field(pid_t, prev_pid, prev_pid), tb_field(int, prev_prio, prev_prio),
		   tb_field(long, prev_state, prev_state), tb_chars(next_comm, 16, next), tb_field(pid_t, next_pid, next_pid),
		   tb_field(int, next_prio, next_prio)),
	 TB_PRINTK("prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), "|", { 0x00000001, "S" }, { 0x00000002, "D" }, { 0x00000004, "T" }, { 0x00000008, "t" }, { 0x00000010, "X" }, { 0x00000020, "Z" }, { 0x00000040, "P" }, { 0x00000080, "I" }) : "R", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio))

TB_EVENT(timer, hrtimer_start,
	 TB_PROTO(void *hrtimer, void *function, s64 expires, s64 softexpires, enum hrtimer_mode mode, bool was_armed),
	 TB_FIELDS(tb_field(void *, hrtimer, hrtimer), tb_field(void *, function, function), tb_field(s64, expires, expires),
		   tb_field(s64, softexpires, softexpires), tb_field(enum hrtimer_mode, mode, mode), tb_field(bool, was_armed, was_armed)),
	 TB_PRINTK("hrtimer=%p function=%ps expires=%llu softexpires=%llu mode=%s was_armed=%d", REC->hrtimer, REC->function, (unsigned long long) REC->expires, (unsigned long long) REC->softexpires, __print_symbolic(REC->mode, { HRTIMER_MODE_ABS, "ABS" }, { HRTIMER_MODE_REL, "REL" }, { HRTIMER_MODE_ABS_PINNED, "ABS|PINNED" }, { HRTIMER_MODE_REL_PINNED, "REL|PINNED" }, { HRTIMER_MODE_ABS_SOFT, "ABS|SOFT" }, { HRTIMER_MODE_REL_SOFT, "REL|SOFT" }, { HRTIMER_MODE_ABS_PINNED_SOFT, "ABS|PINNED|SOFT" }, { HRTIMER_MODE_REL_PINNED_SOFT, "REL|PINNED|SOFT" }, { HRTIMER_MODE_ABS_HARD, "ABS|HARD" }, { HRTIMER_MODE_REL_HARD, "REL|HARD" }, { HRTIMER_MODE_ABS_PINNED_HARD, "ABS|PINNED|HARD" }, { HRTIMER_MODE_REL_PINNED_HARD, "REL|PINNED|HARD" }), REC->was_armed))

/* ---------------------------------------------------- every field kind */

enum color { COLOR_RED = 1, COLOR_GREEN = 2, COLOR_BLUE = 3 };
TB_DEFINE_ENUM(COLOR_RED)
TB_DEFINE_ENUM(COLOR_GREEN)
TB_DEFINE_ENUM(COLOR_BLUE)

#define FLAG_A 0x1
#define FLAG_B 0x2
#define FLAG_C 0x4

TB_EVENT(tpt, kinds,
	 TB_PROTO(int8_t s8, uint8_t u8, int16_t s16, uint16_t u16, int32_t s32, uint32_t u32, int64_t s64v,
		  uint64_t u64, bool b, enum color color, unsigned flags, const uint32_t *arr, const char *comm,
		  const char *name, const int32_t *dyn, int ndyn),
	 TB_FIELDS(tb_field(int8_t, s8, s8), tb_field(uint8_t, u8, u8), tb_field(int16_t, s16, s16),
		   tb_field(uint16_t, u16, u16), tb_field(int32_t, s32, s32), tb_field(uint32_t, u32, u32),
		   tb_field(int64_t, s64, s64v), tb_field(uint64_t, u64, u64), tb_field(bool, b, b),
		   tb_field(enum color, color, color), tb_field(unsigned int, flags, flags),
		   tb_array(uint32_t, arr, 3, arr), tb_chars(comm, 8, comm), tb_string(name, name),
		   tb_dyn_array(int32_t, dyn, dyn, ndyn)),
	 TB_PRINTK("s8=%d u8=%u s16=%d u16=%u s32=%d u32=%u s64=%lld u64=%llu b=%d color=%s flags=%s arr=%u,%u,%u comm=%s name=%s dyn=%s",
		   REC->s8, REC->u8, REC->s16, REC->u16, REC->s32, REC->u32, REC->s64, REC->u64, REC->b,
		   __print_symbolic(REC->color, { COLOR_RED, "red" }, { COLOR_GREEN, "green" }, { COLOR_BLUE, "blue" }),
		   __print_flags(REC->flags, "|", { FLAG_A, "A" }, { FLAG_B, "B" }, { FLAG_C, "C" }),
		   REC->arr[0], REC->arr[1], REC->arr[2], REC->comm, __get_str(name),
		   __print_hex(__get_dynamic_array(dyn), __get_dynamic_array_len(dyn))))

/*
 * Where libtraceevent 1.7.1 and the kernel print differently: it does not
 * sign-extend 1- and 2-byte fields, and prints __print_array as decimals
 * separated by spaces where the kernel prints {0x1,0x2}.  The kernel's
 * text is expected; libtraceevent's checks are TODO, tracebuf's printer must print it.
 */
TB_EVENT(tpt, gaps,
	 TB_PROTO(int8_t s8, int16_t s16, const uint32_t *arr, const int32_t *dyn, int ndyn),
	 TB_FIELDS(tb_field(int8_t, s8, s8), tb_field(int16_t, s16, s16), tb_array(uint32_t, arr, 3, arr),
		   tb_dyn_array(int32_t, dyn, dyn, ndyn)),
	 TB_PRINTK("s8=%d s16=%d arr=%s dyn=%s", REC->s8, REC->s16, __print_array(REC->arr, 3, 4),
		   __print_array(__get_dynamic_array(dyn), __get_dynamic_array_len(dyn) / 4, 4)))

TB_EVENT(tpt, ptr, TB_PROTO(const void *p), TB_FIELDS(tb_field(const void *, p, p)),
	 TB_PRINTK("p=0x%lx", (unsigned long)REC->p))

TB_EVENT(tpt, u64, TB_PROTO(uint64_t v), TB_FIELDS(tb_field(uint64_t, v, v)),
	 TB_PRINTK("v=%llu", (unsigned long long)REC->v))

TB_EVENT(tpt, nofields, TB_PROTO(void), TB_FIELDS(), TB_PRINTK("nothing to say"))

TB_EVENT(tpt, big, TB_PROTO(const char *s), TB_FIELDS(tb_string(s, s)), TB_PRINTK("%s", __get_str(s)))

/* --------------------------------------------------------------- helpers */

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

struct find {
	const char *system, *name;
	char *format;
	unsigned id;
	bool enabled, loaded;
};

static int find_cb(void *ctx, const struct tb_events_info *ev)
{
	struct find *f = ctx;

	if (strcmp(ev->system, f->system) || strcmp(ev->name, f->name))
		return 0;
	f->format = strndup(ev->format, ev->format_len);
	f->id = ev->id;
	f->enabled = ev->enabled;
	f->loaded = ev->loaded;
	return 1;
}

static struct find find_event(const char *system, const char *name)
{
	struct find f = {system, name, NULL, 0, false, false};

	tb_events_foreach(find_cb, &f);
	return f;
}

/* The kernel's file with its ID line replaced by ours. */
static char *kernel_format(const char *rel, unsigned id)
{
	char path[256], *text, *idl, *nl, *out;
	size_t len;

	snprintf(path, sizeof(path), "tests/data/kernel/formats/%s", rel);
	text = read_file(path, &len);
	if (!text)
		return NULL;
	idl = strstr(text, "\nID: ");
	nl = idl ? strchr(idl + 1, '\n') : NULL;
	if (!nl || asprintf(&out, "%.*sID: %u%s", (int)(idl + 1 - text), text, id, nl) < 0)
		out = NULL;
	free(text);
	return out;
}

/* The first line where two texts differ, for the diagnostics. */
static void show_difference(const char *got, const char *want)
{
	int line = 1;

	while (*got && *got == *want) {
		if (*got == '\n')
			line++;
		got++;
		want++;
	}
	diag("first difference on line %d: got '%.40s' want '%.40s'", line, got, want);
}

static void check_mirror(const char *system, const char *name, const char *rel)
{
	struct find f = find_event(system, name);
	char *want = f.format ? kernel_format(rel, f.id) : NULL;

	ok(f.format && want && !strcmp(f.format, want), "%s:%s format is the kernel's file byte for byte (ID aside)",
	   system, name);
	if (f.format && want && strcmp(f.format, want))
		show_difference(f.format, want);
	free(f.format);
	free(want);
}

static void check_builtin(const char *name, unsigned id)
{
	struct find f = find_event("ftrace", name);
	char path[128], *want;
	size_t len;

	snprintf(path, sizeof(path), "tests/data/kernel/formats/ftrace/%s.format", name);
	want = read_file(path, &len);
	ok(f.format && want && f.id == id && !strcmp(f.format, want),
	   "ftrace:%s (ID %u) is the kernel's format file byte for byte, ID included", name, id);
	if (f.format && want && strcmp(f.format, want))
		show_difference(f.format, want);
	free(f.format);
	free(want);
}

/* Every registered format: libtraceevent and tracebuf's own parser accept it. */
static int parse_cb(void *ctx, const struct tb_events_info *ev)
{
	int *bad = ctx;
	struct tep_handle *tep = tep_alloc();
	struct tb_format f;
	struct tb_problem err = {0};
	struct tep_event *tev = NULL;

	if (!tep || tep_parse_event(tep, ev->format, ev->format_len, ev->system) != 0 ||
	    !(tev = tep_find_event(tep, ev->id)) || (tev->flags & TEP_EVENT_FL_FAILED)) {
		diag("libtraceevent refuses %s:%s", ev->system, ev->name);
		(*bad)++;
	}
	if (tb_format_parse(ev->format, ev->format_len, &f, &err) != 0) {
		diag("tb_format_parse refuses %s:%s at byte %llu: %s", ev->system, ev->name,
		     (unsigned long long)err.offset, err.reason);
		(*bad)++;
	} else {
		tb_format_free(&f);
	}
	if (tep)
		tep_free(tep);
	return 0;
}

static int count_cb(void *ctx, const struct tb_events_info *ev)
{
	(void)ev;
	(*(int *)ctx)++;
	return 0;
}

/* ------------------------------------------------------------ records */

static struct tb_ring *ring;
static struct tb_schema *schema;
static struct tep_handle *tep;

/* Read the next record and check both texts against want (libtraceevent's known gaps are TODO). */
static void expect_record(const char *name, const char *want, const char *what, const char *todo)
{
	struct tb_read_event ev;
	char *line = NULL, *tep_text = NULL, *body;

	while (tb_consume_merged(ring, &ev) == 1 && ev.kind != TB_READ_RECORD)
		;
	if (ev.kind != TB_READ_RECORD) {
		ok(0, "%s: a record was written", what);
		return;
	}
	tep_text = evtext_tep_body(tep, ev.data, ev.len);
	line = evtext_render_line(schema, &ev);
	body = evtext_body(line, name);
	/* The known gaps are libtraceevent's; our printer prints the kernel's text. */
	if (todo)
		todo_is_str(tep_text, want, todo, "%s: libtraceevent prints it", what);
	else
		is_str(tep_text, want, "%s: libtraceevent prints it", what);
	is_str(body, want, "%s: tb_render_event prints it", what);
	free(tep_text);
	free(line);
}

static bool ring_empty(void)
{
	struct tb_read_event ev;

	return tb_consume_merged(ring, &ev) == 0;
}

static uint64_t too_big_count(void)
{
	uint64_t n = 0;

	for (unsigned cpu = 0; cpu < tb_ring_ncpus(ring); cpu++) {
		struct tb_cpu_stats st;
		if (tb_stats_read(ring, cpu, &st) == 0)
			n += st.too_big;
	}
	return n;
}

/* The kernel's __print_array text: {0x1,0x2}. */
static void print_array(char *out, size_t size, const int32_t *v, int n)
{
	size_t used = (size_t)snprintf(out, size, "{");

	for (int i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, size - used, "%s0x%x", i ? "," : "", (unsigned)v[i]);
	snprintf(out + used, size - used, "}");
}

/* The kernel's __print_hex text: each byte as two hex digits, separated by spaces. */
static void print_hex(char *out, size_t size, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t used = 0;

	out[0] = '\0';
	for (size_t i = 0; i < n && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%02x", i ? " " : "", b[i]);
}

static void test_kinds(void)
{
	const uint32_t arr[3] = {7, 0xffffffff, 0};
	const int32_t dyn[3] = {1, -1, 65536};
	char want[1024], h[64];

	print_hex(h, sizeof(h), dyn, sizeof(dyn));
	tb_trace(tpt, kinds, 5, 250, 30000, 65000, -2000000000, 4000000000u, INT64_MIN, UINT64_MAX, true,
		 COLOR_GREEN, FLAG_A | FLAG_C, arr, "commander", "request/one", dyn, 3);
	snprintf(want, sizeof(want),
		 "s8=%d u8=%u s16=%d u16=%u s32=%d u32=%u s64=%lld u64=%llu b=%d color=%s flags=%s arr=%u,%u,%u "
		 "comm=%s name=%s dyn=%s",
		 5, 250, 30000, 65000, -2000000000, 4000000000u, (long long)INT64_MIN,
		 (unsigned long long)UINT64_MAX, 1, "green", "A|C", arr[0], arr[1], arr[2], "command", "request/one", h);
	expect_record("kinds", want, "every field kind (chars cut to 7, enum by TB_DEFINE_ENUM)", NULL);

	tb_trace(tpt, kinds, 0, 0, 0, 0, 0, 0, 0, 0, false, COLOR_BLUE, 0, arr, NULL, NULL, dyn, 0);
	snprintf(want, sizeof(want),
		 "s8=0 u8=0 s16=0 u16=0 s32=0 u32=0 s64=0 u64=0 b=0 color=blue flags= arr=%u,%u,%u comm=(null) "
		 "name=(null) dyn=", arr[0], arr[1], arr[2]);
	expect_record("kinds", want, "NULL strings as (null), an empty dynamic array", NULL);

	{
		char a[64], d[64];
		print_array(a, sizeof(a), (const int32_t *)arr, 3);
		print_array(d, sizeof(d), dyn, 3);
		tb_trace(tpt, gaps, -5, -30000, arr, dyn, 3);
		snprintf(want, sizeof(want), "s8=-5 s16=-30000 arr=%s dyn=%s", a, d);
		expect_record("gaps", want, "negative 1- and 2-byte fields, __print_array",
			      "libtraceevent 1.7.1 neither sign-extends small fields nor prints __print_array the kernel's way");
	}
}

static void test_mirrors_records(void)
{
	const unsigned long args[6] = {3, 0x7ffd1234, 0x100, 0, 1, 0xffffffffffffffff};
	char want[512];
	int v = 42;

	tb_trace(irq, irq_handler_entry, 24, "virtio0-input.0");
	expect_record("irq_handler_entry", "irq=24 name=virtio0-input.0", "irq_handler_entry", NULL);
	tb_trace(raw_syscalls, sys_enter, 257, args);
	snprintf(want, sizeof(want), "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", 257L, args[0], args[1], args[2],
		 args[3], args[4], args[5]);
	expect_record("sys_enter", want, "sys_enter (an array of unsigned long)", NULL);
	tb_trace(sched, sched_switch, "bash", 4321, 120, 1, "swapper/0", 0, 120);
	expect_record("sched_switch",
		      "prev_comm=bash prev_pid=4321 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120",
		      "sched_switch (char arrays, __print_flags)", NULL);
	tb_trace(tpt, ptr, &v);
	snprintf(want, sizeof(want), "p=0x%lx", (unsigned long)&v);
	expect_record("ptr", want, "a pointer field", NULL);
	tb_trace(tpt, nofields);
	expect_record("nofields", "nothing to say", "an event without fields", NULL);
}

static void test_too_big(void)
{
	size_t n = TB_EVENT_MAX;
	char *s = malloc(n + 1);
	uint64_t before = too_big_count();

	memset(s, 'x', n);
	s[n] = '\0';
	tb_trace(tpt, big, s);
	is_int(too_big_count() - before, 1, "a record over TB_EVENT_MAX is refused and counted in too_big");
	ok(ring_empty(), "... and nothing was written");
	s[TB_EVENT_MAX - 8 - 4 - 1] = '\0'; /* common fields, __data_loc word, NUL: exactly the limit */
	tb_trace(tpt, big, s);
	{
		struct tb_read_event ev;
		int got = 0;
		while (tb_consume_merged(ring, &ev) == 1)
			got += ev.kind == TB_READ_RECORD && ev.len == TB_EVENT_MAX;
		is_int(got, 1, "a record of exactly TB_EVENT_MAX bytes is written");
	}
	free(s);
}

/* ---------------------------------------------------------- thread ids */

static int32_t record_pid(void)
{
	struct tb_read_event ev;
	int32_t pid = -1;

	while (tb_consume_merged(ring, &ev) == 1)
		if (ev.kind == TB_READ_RECORD && ev.len >= 8)
			memcpy(&pid, (const char *)ev.data + 4, 4);
	return pid;
}

static void *thread_main(void *arg)
{
	*(int32_t *)arg = (int32_t)syscall(SYS_gettid);
	tb_trace(tpt, u64, 1);
	return NULL;
}

static void test_thread_ids(void)
{
	pthread_t t;
	int32_t tid = 0;
	pid_t child;
	int status = 0;

	tb_trace(tpt, u64, 1);
	is_int(record_pid(), syscall(SYS_gettid), "common_pid is the thread id");
	pthread_create(&t, NULL, thread_main, &tid);
	pthread_join(t, NULL);
	is_int(record_pid(), tid, "another thread's records carry its own id");
	child = fork();
	if (child == 0) {
		tb_trace(tpt, u64, 2);
		_exit(record_pid() == (int32_t)getpid() ? 0 : 1);
	}
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "after fork the child's records carry the child's id");
	tb_trace(tpt, u64, 3);
	is_int(record_pid(), syscall(SYS_gettid), "... and the parent's still its own");
}

/* ------------------------------------------------------------------ main */

int main(void)
{
	struct tb_ring_opts o;
	size_t len;
	char *text, *want;
	int bad = 0, count = 0;
	char unknown[64];

	check_mirror("irq", "irq_handler_entry", "irq/irq_handler_entry.format");
	check_mirror("raw_syscalls", "sys_enter", "raw_syscalls/sys_enter.format");
	check_mirror("sched", "sched_switch", "sched/sched_switch.format");
	check_mirror("timer", "hrtimer_start", "timer/hrtimer_start.format");
	check_builtin("print", TB_PRINT_ID);
	check_builtin("bprint", TB_BPRINT_ID);
	check_builtin("raw_data", TB_RAW_DATA_ID);

	text = tb_events_header_page(4096);
	want = read_file("tests/data/kernel/header_page", &len);
	ok(text && want && !strcmp(text, want), "header_page is the kernel's (4 KiB sub-buffers)");
	free(text);
	free(want);
	text = tb_events_header_page(8192);
	want = read_file("tests/data/kernel/cap-c-subbuf8k/header_page", &len);
	ok(text && want && !strcmp(text, want), "header_page is the kernel's (8 KiB sub-buffers)");
	free(text);
	free(want);
	text = tb_events_header_event();
	want = read_file("tests/data/kernel/header_event", &len);
	ok(text && want && !strcmp(text, want), "header_event is the kernel's");
	free(text);
	free(want);

	tb_events_foreach(count_cb, &count);
	tb_events_foreach(parse_cb, &bad);
	ok(count >= 12 && bad == 0, "libtraceevent and tb_format_parse accept all %d formats", count);
	{
		struct find k = find_event("tpt", "kinds");
		ok(k.format && strstr(k.format, "{ 2, \"green\" }") && !strstr(k.format, "COLOR_"),
		   "TB_DEFINE_ENUM constants are replaced by their values in the print fmt");
		ok(k.format && strstr(k.format, "{ 0x1, \"A\" }"), "macros in TB_PRINTK are expanded, as the kernel's are");
		ok(k.format && strstr(k.format, "\tfield:__data_loc int32_t[] dyn;") &&
			   strstr(k.format, "\tfield:char comm[8];\toffset:") &&
			   strstr(k.format, "\tfield:bool b;\toffset:") && strstr(k.format, "size:1;\tsigned:0;"),
		   "types are spelled as declared (bool, not _Bool), arrays and __data_loc the kernel's way");
		ok(k.id >= 1000 && !k.enabled && k.loaded, "a declared event has an ID of its own, starts disabled");
		free(k.format);
	}
	is_int(tb_events_problems(), 0, "no registration problems");

	tb_ring_opts_default(&o);
	o.clock = TB_CLOCK_MONO;
	o.size_kb = 256;
	if (tb_ring_new(&ring, &o) < 0)
		skip_all("cannot create a ring");
	tb_events_attach(ring);
	tb_trace(tpt, u64, 5);
	ok(ring_empty() && !tb_trace_tpt_u64_enabled(), "a disabled event writes nothing");
	ok(tb_events_enable("tpt:*,irq:*,raw_syscalls:*,sched:sched_switch", unknown, sizeof(unknown)) >= 8,
	   "enable by globs");
	ok(tb_trace_tpt_u64_enabled(), "... and the event says it is enabled");
	schema = tb_schema_new();
	ok(schema && tb_schema_load_events(schema, tb_ring_subbuf_size(ring)) == 0,
	   "tb_schema_load_events loads the registry");
	tep = evtext_tep();
	test_kinds();
	test_mirrors_records();
	test_too_big();
	test_thread_ids();
	ok(tb_events_disable("tpt:*", NULL, 0) >= 5 && !tb_trace_tpt_u64_enabled(), "disable by glob");
	tb_trace(tpt, u64, 9);
	ok(ring_empty(), "disabled again: nothing written");
	is_int(tb_schema_problems(schema), 0, "the schema reported no problems");

	tb_events_attach(NULL);
	tep_free(tep);
	tb_schema_free(schema);
	tb_ring_free(ring);
	return done_testing();
}
