/*
 * The events the kernel prints with its own code (kernel_events.c:
 * syscalls, trace_marker text and raw data, kernel and user stacks,
 * function tracer lines) against the kernel's own `trace` text.
 *
 * 1. tests/data/kernel/cap-g-kernel-printers (made by
 *    tests/data/kernel/tools/capture_kernel_printers.sh): our report of its
 *    raw pages must equal its trace.txt byte for byte, and the capture must
 *    hold each kind of line the printers write (so the comparison covers
 *    them).
 * 2. Hostile records: every printer, given records cut at every length and
 *    records whose fields lie, returns an error or a line and never reads
 *    outside the record (ASan checks the second half).
 * 3. The running kernel: a private instance (instances/tb-kprint-PID)
 *    records a child's syscalls, markers (one with a NUL byte), raw markers
 *    and stacks, and the function tracer's lines when the instance may use
 *    it; our report of the instance's raw pages must equal its `trace`.
 *    Skipped without root or tracefs; the instance is removed afterwards,
 *    also when a check fails or the test is killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "print/kernel_events.h"
#include "lib/lines.h"
#include "lib/instance.h"
#include "lib/tap.h"
#include "decode/schema_kernel.h"
#include "tracebuf/capture.h"
#include "tracebuf/report.h"

#define CAP "tests/data/kernel/cap-g-kernel-printers"
#define TRACEFS "/sys/kernel/tracing"

/* ------------------------------------------------------------ helpers */

static void print_diag(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	diag("problem: %s: byte %llu: %s", d->file, (unsigned long long)d->offset, d->reason);
}

/* Our report of a capture directory or live instance, as lines. */
static int report_lines(const char *dir, struct lines *out)
{
	struct tb_capture_opts o = {.diag = print_diag};
	struct tb_capture *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = tb_capture_open(dir, &o, &c);

	if (rc == 0) {
		rc = tb_report_write(c, f, NULL, NULL);
		tb_capture_close(c);
	}
	fclose(f);
	split_lines(text, out);
	return rc;
}

/* Lines equal one by one; the first few differences are shown. */
static size_t compare_lines(const struct lines *ours, const struct lines *kernel, const char *what)
{
	size_t same = 0, shown = 0, n = ours->n < kernel->n ? ours->n : kernel->n;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(ours->v[i], kernel->v[i]))
			same++;
		else if (shown++ < 5)
			diag("%s line %zu\n#   ours:   %s\n#   kernel: %s", what, i + 1, ours->v[i],
			     kernel->v[i]);
	}
	is_int(ours->n, kernel->n, "%s: as many lines as the kernel's trace (%zu)", what, kernel->n);
	is_int(same, kernel->n, "%s: every line equals the kernel's byte for byte", what);
	return same;
}

static size_t count_matching(const struct lines *l, bool (*match)(const char *))
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += match(l->v[i]);
	return n;
}

/* The part of a line after the context columns ("...: "), or the line. */
static const char *body_of(const char *line)
{
	const char *p = strstr(line, "]");

	p = p ? strstr(p, ": ") : NULL;
	return p ? p + 2 : line;
}

static bool is_enter_no_args(const char *l) { return strstr(l, ": sys_") && strstr(l, "()"); }
static bool is_enter_decimal(const char *l)
{
	const char *b = body_of(l);
	return !strncmp(b, "sys_write(", 10) && strstr(b, "count: 5)");
}
static bool is_enter_hex(const char *l)
{
	const char *b = body_of(l);
	return !strncmp(b, "sys_write(", 10) && strstr(b, "count: 0x12c)");
}
static bool is_exit_negative(const char *l) { return strstr(l, "sys_openat -> 0xfffffffffffffffe"); }
static bool is_marker(const char *l) { return strstr(l, "tracing_mark_write: tb-kprint marker"); }
static bool is_nul_joined(const char *l)
{
	const char *p = strstr(l, "tracing_mark_write: abc ");
	return p && strstr(p, ": sys_write -> 0x7");
}
static bool is_raw_data(const char *l) { return strstr(l, ": # beef buf: 52 41 57 21"); }
static bool is_kernel_stack(const char *l) { return strstr(l, ": <stack trace>") != NULL; }
static bool is_stack_entry(const char *l) { return !strncmp(l, " => ", 4) && l[4] != ' '; }
static bool is_user_stack(const char *l) { return strstr(l, ": <user stack trace>") != NULL; }
static bool is_user_entry(const char *l) { return !strncmp(l, " =>  <", 6); }
static bool is_function(const char *l) { return strstr(body_of(l), " <-") != NULL; }

/* ------------------------------------------------------ 1. bundled data */

static void bundled_capture(void)
{
	struct lines ours, kernel;
	static const struct {
		bool (*match)(const char *);
		const char *what;
	} kinds[] = {
		{is_enter_no_args, "a syscall without arguments: sys_NAME()"},
		{is_enter_decimal, "an argument below 10 in decimal (write of 5 bytes)"},
		{is_enter_hex, "an argument of 10 or more in hex (write of 300 bytes)"},
		{is_exit_negative, "a negative return value as 64-bit hex (openat -> -ENOENT)"},
		{is_marker, "trace_marker lines"},
		{is_nul_joined, "a marker with a NUL byte: no newline, the next event on its line"},
		{is_raw_data, "trace_marker_raw bytes"},
		{is_kernel_stack, "kernel stacks"},
		{is_stack_entry, "kernel stack entries named by kallsyms"},
		{is_user_stack, "user stacks"},
		{is_user_entry, "user stack entries"},
	};

	ok(report_lines(CAP, &ours) == 0, "cap-g: report without problems");
	split_lines(tap_slurp(CAP "/trace.txt", NULL), &kernel);
	ok(kernel.n > 100, "cap-g: the kernel's trace.txt has %zu lines", kernel.n);
	compare_lines(&ours, &kernel, "cap-g");
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		ok(count_matching(&kernel, kinds[i].match) > 0, "cap-g holds %s", kinds[i].what);
	free_lines(&ours);
	free_lines(&kernel);
}

/* ---------------------------------------------------- 2. hostile records */

/* The capture's schema, for its formats. */
static struct tb_capture *open_cap(void)
{
	struct tb_capture_opts o = {.diag = print_diag};
	struct tb_capture *c = NULL;

	return tb_capture_open(CAP, &o, &c) == 0 ? c : NULL;
}

/* The format of system:name in the schema, by trying every ID (a few hundred). */
static const struct tb_format *format_named(struct tb_schema *s, const char *name,
					    const char **system)
{
	for (uint32_t id = 1; id < 65536; id++) {
		const struct tb_format *f = tb_schema_event(s, id, system);
		if (f && !strcmp(f->name, name))
			return f;
	}
	return NULL;
}

/*
 * Every length from 0 to the format's size + 24, with every byte 0 and
 * then every byte 0xff (a kernel_stack of ULONG_MAX ends at once; of 0
 * prints "0" entries; markers without NUL stop at the record's end): the
 * printer returns 0 or an error, and never reads past the record, which is
 * an exact-size heap copy so ASan sees any overread.
 */
static void every_length(struct tb_schema *s, const char *name)
{
	const char *system;
	const struct tb_format *f = format_named(s, name, &system);
	tb_kernel_printer_fn *printer = f ? tb_kernel_printer_find(system, f) : NULL;
	struct tb_print_env pe;
	struct tb_kernel_env env;
	int bad_rc = 0, errors = 0;

	if (!ok(printer != NULL, "%s: the kernel's own printer is found", name))
		return;
	tb_kernel_env_for_schema(s, &pe, &env);
	for (int fill = 0; fill < 2; fill++) {
		for (uint32_t len = 0; len <= f->min_size + 24; len++) {
			uint8_t *rec = malloc(len ? len : 1);
			struct tb_strbuf out = {0};
			struct tb_problem err = {0};
			struct tb_kernel_record r = {rec, len, 1000000, true, 0};
			int rc;

			memset(rec, fill ? 0xff : 0, len);
			rc = printer(f, &r, &env, &out, &err);
			errors += rc < 0;
			if (rc != 0 && rc != -EINVAL && rc != -ENOTSUP)
				bad_rc = rc;
			if (rc == -EINVAL && !err.reason[0])
				bad_rc = -1000; /* an error must say why */
			sb_free(&out);
			free(rec);
		}
	}
	is_int(bad_rc, 0, "%s: records of 0..%u bytes: a line, -EINVAL with a reason, or -ENOTSUP "
	       "(%d refused)", name, f->min_size + 24, errors);
}

/* A syscall record whose user-data field points outside the record is refused. */
static void lying_lengths(struct tb_schema *s)
{
	const char *system;
	const struct tb_format *f = format_named(s, "sys_exit_write", &system);
	tb_kernel_printer_fn *printer = f ? tb_kernel_printer_find(system, f) : NULL;
	struct tb_kernel_record r;
	struct tb_strbuf out = {0};
	struct tb_problem err = {0};
	uint8_t rec[24] = {0};

	if (!ok(printer != NULL, "sys_exit_write: printer found"))
		return;
	r = (struct tb_kernel_record){rec, 20, 0, true, 0};
	is_int(printer(f, &r, NULL, &out, &err), -EINVAL,
	       "sys_exit_write cut inside ret (20 of 24 bytes): refused");
	ok(strstr(err.reason, "ret") != NULL, "  and the reason names the field: %s", err.reason);
	sb_free(&out);
}

/* Print one record of event name (a payload built by the caller) with env. */
static int print_one(struct tb_schema *s, const char *name, const uint8_t *rec, uint32_t len,
		     const struct tb_kernel_env *env, struct tb_strbuf *out)
{
	const char *system;
	const struct tb_format *f = format_named(s, name, &system);
	tb_kernel_printer_fn *printer = f ? tb_kernel_printer_find(system, f) : NULL;
	struct tb_kernel_record r = {rec, len, 0, true, 0};
	struct tb_problem err = {0};

	return printer ? printer(f, &r, env, out, &err) : -ENOENT;
}

static int fake_bprint(void *ctx, const char *fmt, const uint8_t *args, size_t len,
		       struct tb_strbuf *out)
{
	(void)ctx, (void)args;
	sb_puts(out, "[");
	sb_puts(out, fmt);
	sb_puts(out, len == 8 ? "|8 bytes]" : "|?]");
	return 0;
}

/*
 * bputs and bprint take their text from printk_formats (kernel_string):
 * "SYMBOL: text" with the string's own end, an ip of 0 printed as "0" (as
 * seq_print_ip_sym does); bprint's text is the hook's.
 */
static void kernel_strings(struct tb_schema *s)
{
	static const char formats[] = "0xffffffff82000010 : \"hello\\n\"\n"
				      "0xffffffff82000020 : \"fmt %d\\n\"\n";
	uint8_t rec[32] = {0};
	uint64_t addr = 0xffffffff82000010ull;
	struct tb_print_env pe;
	struct tb_kernel_env env;
	struct tb_strbuf out = {0};

	ok(tb_schema_load_printk_formats(s, "printk_formats", formats, sizeof(formats) - 1) == 0,
	   "printk_formats of two strings loads");
	tb_kernel_env_for_schema(s, &pe, &env);
	memcpy(rec + 16, &addr, 8);
	ok(print_one(s, "bputs", rec, 24, &env, &out) == 0 && out.len == 9 &&
		   !memcmp(out.buf, "0: hello\n", 9),
	   "bputs: '0: hello\\n' (the string from printk_formats, unescaped)");
	sb_reset(&out);
	addr = 0xffffffff82000020ull;
	memcpy(rec + 16, &addr, 8);
	is_int(print_one(s, "bprint", rec, 32, &env, &out), -ENOTSUP,
	       "bprint without a formatter: -ENOTSUP (the fallback prints it)");
	sb_reset(&out);
	env.bprint = fake_bprint;
	ok(print_one(s, "bprint", rec, 32, &env, &out) == 0 && out.len == 20 &&
		   !memcmp(out.buf, "0: [fmt %d\n|8 bytes]", 20),
	   "bprint: 'SYMBOL: ' then the formatter's text for the format and the 8 argument bytes");
	addr = 0xffffffff82000030ull;
	memcpy(rec + 16, &addr, 8);
	sb_reset(&out);
	is_int(print_one(s, "bprint", rec, 32, &env, &out), -ENOTSUP,
	       "bprint whose format is not in printk_formats: -ENOTSUP");
	sb_free(&out);
}

/* One function tracer record of cap-g's kallsyms under trace options topts: its line or "" */
static const char *function_line(struct tb_schema *s, const struct tb_kernel_env *env, unsigned topts,
				 struct tb_strbuf *out)
{
	const char *system;
	const struct tb_format *f = format_named(s, "function", &system);
	tb_kernel_printer_fn *printer = f ? tb_kernel_printer_find(system, f) : NULL;
	/* tracing_mark_write+0x10 called from do_syscall_64+0x5 */
	uint64_t ip = 0xffffffff81498aa0ull, parent = 0xffffffff821ed4a5ull;
	uint8_t rec[24] = {0};
	struct tb_kernel_record r = {rec, sizeof(rec), 0, true, topts};
	struct tb_problem err = {0};

	memcpy(rec + 8, &ip, 8);
	memcpy(rec + 16, &parent, 8);
	sb_reset(out);
	if (!printer || printer(f, &r, env, out, &err) != 0 || !sb_room(out, 1))
		return "";
	out->buf[out->len] = '\0';
	return out->buf;
}

/*
 * sym-offset, sym-addr and print-parent on a function tracer line
 * (seq_print_ip_sym, print_fn_trace): the function tracer cannot run in an
 * instance on the test machine, so the line is held to what the kernel's
 * code writes for these addresses of cap-g's kallsyms.
 */
static void symbol_options(struct tb_schema *s)
{
	struct tb_print_env pe;
	struct tb_kernel_env env;
	struct tb_strbuf out = {0};

	tb_kernel_env_for_schema(s, &pe, &env);
	is_str(function_line(s, &env, 0, &out), "tracing_mark_write <-do_syscall_64\n",
	       "function: name <-parent by default");
	is_str(function_line(s, &env, TB_TOPT_NO_PRINT_PARENT, &out), "tracing_mark_write\n",
	       "function under noprint-parent: no parent");
	is_str(function_line(s, &env, TB_TOPT_SYM_OFFSET, &out),
	       "tracing_mark_write+0x10/0x170 <-do_syscall_64+0x5/0x280\n", "function under sym-offset");
	is_str(function_line(s, &env, TB_TOPT_SYM_ADDR, &out),
	       "tracing_mark_write <ffffffff81498aa0> <-do_syscall_64 <ffffffff821ed4a5>\n",
	       "function under sym-addr");
	is_str(function_line(s, &env, TB_TOPT_SYM_OFFSET | TB_TOPT_SYM_ADDR | TB_TOPT_NO_PRINT_PARENT, &out),
	       "tracing_mark_write+0x10/0x170 <ffffffff81498aa0>\n", "function under sym-offset,sym-addr,noprint-parent");
	sb_free(&out);
}

/* One user_stack record of process tgid with the callers given (up to 8, the rest 0), under topts. */
static const char *user_stack_text(struct tb_schema *s, const struct tb_kernel_env *env, uint32_t tgid,
				   const uint64_t *callers, int n, unsigned topts, struct tb_strbuf *out)
{
	const char *system;
	const struct tb_format *f = format_named(s, "user_stack", &system);
	tb_kernel_printer_fn *printer = f ? tb_kernel_printer_find(system, f) : NULL;
	uint8_t rec[80] = {0};
	struct tb_kernel_record r = {rec, sizeof(rec), 0, true, topts};
	struct tb_problem err = {0};

	memcpy(rec + 8, &tgid, 4);
	memcpy(rec + 16, callers, (size_t)n * 8);
	sb_reset(out);
	if (!printer || printer(f, &r, env, out, &err) != 0 || !sb_room(out, 1))
		return "";
	out->buf[out->len] = '\0';
	return out->buf;
}

/*
 * sym-userobj (seq_print_user_ip): a user address is named by the file
 * mapped there in the record's process and the offset into that mapping,
 * the kernel's find_vma() choosing the first mapping that ends above it
 * (so an address in a gap takes the next mapping, the offset wrapping);
 * " <%016lx>" follows under sym-addr, or alone where no file is mapped
 * ([heap], anonymous memory, no mapping above, a process not known).
 */
static void user_objects(void)
{
	static const char maps[] = "4242 55f45f883000-55f45f8b2000 /usr/bin/bash\n"
				   "4242 55f470a4a000-55f470acb000 [heap]\n"
				   "4242 7f88bee43000-7f88bee9a000 /usr/lib/libc.so.6\n"
				   "4242 7f88bee9a000-7f88bee9b000\n";
	const uint64_t callers[] = {0x55f45f8831c0, 0x55f470a4a010, 0x7f88bee43020, 0x7f88bee9a008, 0x7f0000000000,
				    0x7f88beea0000};
	struct tb_capture *c = open_cap();
	struct tb_schema *s = c ? tb_capture_schema(c) : NULL;
	struct tb_print_env pe;
	struct tb_kernel_env env;
	struct tb_strbuf out = {0};

	if (!ok(s && tb_schema_load_proc_maps(s, "proc_maps", maps, strlen(maps)) == 0, "proc_maps of one process loads"))
		goto out;
	tb_kernel_env_for_schema(s, &pe, &env);
	is_str(user_stack_text(s, &env, 4242, callers, 6, 0, &out),
	       "<user stack trace>\n =>  <000055f45f8831c0>\n =>  <000055f470a4a010>\n =>  <00007f88bee43020>\n"
	       " =>  <00007f88bee9a008>\n =>  <00007f0000000000>\n =>  <00007f88beea0000>\n",
	       "user_stack without sym-userobj: the addresses alone");
	is_str(user_stack_text(s, &env, 4242, callers, 6, TB_TOPT_SYM_USEROBJ, &out),
	       "<user stack trace>\n => /usr/bin/bash[+0x1c0]\n =>  <000055f470a4a010>\n => /usr/lib/libc.so.6[+0x20]\n"
	       " =>  <00007f88bee9a008>\n => /usr/lib/libc.so.6[+0xffffff77411bd000]\n =>  <00007f88beea0000>\n",
	       "sym-userobj: file[+0xoffset]; [heap], anonymous and past the last mapping: the address; in a gap: the next mapping");
	is_str(user_stack_text(s, &env, 4242, callers, 1, TB_TOPT_SYM_USEROBJ | TB_TOPT_SYM_ADDR, &out),
	       "<user stack trace>\n => /usr/bin/bash[+0x1c0] <000055f45f8831c0>\n", "sym-userobj,sym-addr: then the address");
	is_str(user_stack_text(s, &env, 4243, callers, 1, TB_TOPT_SYM_USEROBJ, &out),
	       "<user stack trace>\n =>  <000055f45f8831c0>\n", "sym-userobj, a process not known: the address");
	is_int(tb_schema_load_proc_maps(s, "proc_maps", "4242 zz-1 /x\n", 12), -EINVAL, "a malformed proc_maps line is refused");
out:
	sb_free(&out);
	tb_capture_close(c);
}

/* fields of a whole sys_enter_write: write's buf, a char *, as "(0x%lx)" (the kernel cannot read user memory). */
static void fields_whole(struct tb_schema *s, const struct tb_format *f)
{
	struct tb_render_opts o = {.ns_clock = true, .trace_options = TB_TOPT_FIELDS | TB_TOPT_NO_CONTEXT_INFO};
	uint8_t rec[40] = {0};
	uint64_t buf = 0x560d586da210ull, count = 784;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!mem)
		return;
	memcpy(rec, &(uint16_t){(uint16_t)f->id}, 2);
	rec[8] = 1;
	rec[16] = 3;
	memcpy(rec + 24, &buf, 8);
	memcpy(rec + 32, &count, 8);
	tb_render_event(s, &(struct tb_render_record){0, 1000, rec, sizeof(rec)}, &o, mem, NULL);
	fclose(mem);
	is_str(text, "sys_enter_write: __syscall_nr=0x1 (1) fd=0x3 (3) buf=(0x560d586da210) count=0x310 (784)\n",
	       "fields: a whole sys_enter_write as 6.18 prints it (read from the live trace)");
	free(text);
}

/* fields of a record cut short: the fields it holds, "<OVERFLOW>" for the others (print_fields). */
static void fields_cut_short(struct tb_schema *s)
{
	const char *system;
	const struct tb_format *f = format_named(s, "sys_enter_write", &system);
	struct tb_render_opts o = {.ns_clock = true, .trace_options = TB_TOPT_FIELDS | TB_TOPT_NO_CONTEXT_INFO};
	uint8_t rec[28] = {0};
	int32_t nr = 1;
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);

	if (!ok(f && mem, "sys_enter_write's format and a memory stream"))
		return;
	memcpy(rec, &(uint16_t){(uint16_t)f->id}, 2);
	memcpy(rec + 8, &nr, 4);
	rec[16] = 2;
	ok(tb_render_event(s, &(struct tb_render_record){0, 1000, rec, sizeof(rec)}, &o, mem, NULL) == 0,
	   "fields: a sys_enter_write record of 28 of its 40 bytes renders");
	fclose(mem);
	is_str(text, "sys_enter_write: __syscall_nr=0x1 (1) fd=0x2 (2) buf=<OVERFLOW> count=<OVERFLOW>\n",
	       "fields: the fields past the record's end are <OVERFLOW>");
	free(text);
	fields_whole(s, f);
}

/*
 * Kernels after 6.18 may copy the user memory a syscall argument points to
 * into the record (__ARG_val after the arguments; trace_syscalls.c
 * print_syscall_enter): printed after the argument's value as "string", or
 * for write's buffer as hex bytes with ", ..." when fewer were copied than
 * count asked for.  6.18 records none, so the formats here are 6.19's
 * layout written by hand; what is checked is that layout's line and that
 * a copy pointing outside the record is refused.
 */
static void syscall_user_data(void)
{
	static const char openat[] =
		"name: sys_enter_openat\nID: 900\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:__data_loc char[] __filename_val;\toffset:32;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"dfd: 0x%08lx, filename: 0x%08lx \\\"%s\\\"\", ((unsigned long)(REC->dfd)), "
		"((unsigned long)(REC->filename)), __get_str(__filename_val)\n";
	static const char write[] =
		"name: sys_enter_write\nID: 901\nformat:\n"
		"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
		"\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
		"\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n"
		"\tfield:__data_loc char[] __buf_val;\toffset:40;\tsize:4;\tsigned:0;\n\n"
		"print fmt: \"fd: 0x%08lx, buf: 0x%08lx (%s), count: 0x%08lx\", ((unsigned long)(REC->fd)), "
		"((unsigned long)(REC->buf)), __print_dynamic_array(__buf_val, 1), "
		"((unsigned long)(REC->count))\n";
	struct tb_schema *s = tb_schema_new();
	uint8_t rec[64] = {0};
	uint64_t v;
	uint32_t loc;
	struct tb_strbuf out = {0};

	tb_schema_set_problem_fn(s, print_diag, NULL);
	ok(tb_schema_load_format(s, "openat", "syscalls", openat, sizeof(openat) - 1) == 0 &&
		   tb_schema_load_format(s, "write", "syscalls", write, sizeof(write) - 1) == 0,
	   "6.19-style syscall formats with user data load");
	v = (uint64_t)-100, memcpy(rec + 16, &v, 8);
	v = 0x7ffd1000, memcpy(rec + 24, &v, 8);
	loc = 36 | 7u << 16, memcpy(rec + 32, &loc, 4);
	memcpy(rec + 36, "/etc/x", 7);
	ok(print_one(s, "sys_enter_openat", rec, 44, NULL, &out) == 0 && out.buf &&
		   out.len == strlen("sys_openat(dfd: 0xffffffffffffff9c, filename: 0x7ffd1000 \"/etc/x\")\n") &&
		   !memcmp(out.buf, "sys_openat(dfd: 0xffffffffffffff9c, filename: 0x7ffd1000 \"/etc/x\")\n",
			   out.len),
	   "a user string after its argument");
	sb_reset(&out);
	loc = 60 | 7u << 16, memcpy(rec + 32, &loc, 4);
	is_int(print_one(s, "sys_enter_openat", rec, 44, NULL, &out), -EINVAL,
	       "a user string outside the record is refused");
	memset(rec, 0, sizeof(rec));
	v = 1, memcpy(rec + 16, &v, 8);
	v = 0x5000, memcpy(rec + 24, &v, 8);
	v = 300, memcpy(rec + 32, &v, 8);
	loc = 44 | 3u << 16, memcpy(rec + 40, &loc, 4);
	memcpy(rec + 44, "\x01\xab\xff", 3);
	sb_reset(&out);
	ok(print_one(s, "sys_enter_write", rec, 48, NULL, &out) == 0 && out.buf &&
		   out.len == strlen("sys_write(fd: 1, buf: 0x5000 (01:ab:ff, ...), count: 0x12c)\n") &&
		   !memcmp(out.buf, "sys_write(fd: 1, buf: 0x5000 (01:ab:ff, ...), count: 0x12c)\n", out.len),
	   "user bytes in hex, ', ...' when count asked for more");
	sb_free(&out);
	tb_schema_free(s);
}

static void hostile_records(void)
{
	static const char *const names[] = {
		"sys_enter_write", "sys_exit_write", "sys_enter_getppid", "print", "raw_data",
		"kernel_stack", "user_stack", "function", "func_repeats", "bputs", "bprint",
	};
	struct tb_capture *c = open_cap();

	if (!ok(c != NULL, "cap-g opens"))
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		every_length(tb_capture_schema(c), names[i]);
	lying_lengths(tb_capture_schema(c));
	kernel_strings(tb_capture_schema(c));
	symbol_options(tb_capture_schema(c));
	fields_cut_short(tb_capture_schema(c));
	tb_capture_close(c);
	syscall_user_data();
	user_objects();
}

/* ------------------------------------------------------ 3. live kernel */

/* ls -la / /proc/self in a grandchild (event-fork traces it): many kinds of syscalls. */
static void run_ls(void)
{
	pid_t pid = fork();
	int null;

	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		if (null >= 0) {
			dup2(null, STDOUT_FILENO);
			dup2(null, STDERR_FILENO);
		}
		execl("/bin/ls", "ls", "-la", "/", "/proc/self/", (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/*
 * The traced child: waits for "go" on fd, then makes the syscalls, markers
 * and stacks the comparison needs, and stops tracing before it exits (an
 * exiting pid leaves set_event_pid, and an empty filter traces everyone).
 */
static void child_workload(int go)
{
	static const char raw[] = {0xef, 0xbe, 0, 0, 'R', 'A', 'W', '!'};
	char c, big[300];
	int fd;
	cpu_set_t one;

	if (read(go, &c, 1) != 1)
		_exit(1);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	sched_setaffinity(0, sizeof(one), &one); /* best effort: one CPU keeps lines in order */
	open("/nonexistent/tb-kprint", O_RDONLY);
	fd = open("/dev/null", O_WRONLY);
	memset(big, 'x', sizeof(big));
	if (write(fd, "hello", 5) != 5 || write(fd, big, sizeof(big)) != (ssize_t)sizeof(big))
		_exit(2);
	close(fd);
	instance_set("options/userstacktrace", "1");
	getppid();
	getppid();
	instance_set("options/userstacktrace", "0");
	run_ls();
	instance_write("trace_marker", "tb-kprint live marker\n", 22);
	instance_write("trace_marker", "tb-kprint live marker without newline", 37);
	instance_write("trace_marker", "abc\0def", 7);
	instance_write("trace_marker", "tb-kprint live marker after the NUL one", 39);
	instance_write("trace_marker_raw", raw, sizeof(raw));
	instance_set("tracing_on", "0");
	_exit(0);
}

/* The function tracer with a filter of two functions, if the instance may use it. */
static bool try_function_tracer(void)
{
	if (instance_set("set_ftrace_filter", "__x64_sys_getppid __x64_sys_getpid") < 0)
		return false;
	return instance_set("current_tracer", "function") == 0;
}

static void live_kernel(void)
{
	int go[2], status;
	char pid[32];
	bool functions;
	pid_t child;
	char *kernel_text;
	struct lines ours, kernel;

	if (geteuid() != 0 || !instance_have_tracefs()) {
		skip(1, "live kernel: needs root and tracefs");
		return;
	}
	if (instance_create("tb-kprint") < 0) {
		skip(1, "live kernel: cannot create a tracefs instance");
		return;
	}
	ok(instance_set("tracing_on", "0") == 0 && instance_set("buffer_size_kb", "1024") == 0 &&
		   instance_set("options/hash-ptr", "0") == 0 && instance_set("events/syscalls/enable", "1") == 0 &&
		   instance_set("options/event-fork", "1") == 0 &&
		   instance_set("events/syscalls/sys_enter_getppid/trigger", "stacktrace") == 0,
	   "instance %s: syscalls, a stack trigger on getppid", instance);
	functions = try_function_tracer();
	if (!functions)
		diag("the function tracer is not available in an instance here (%s): no function lines",
		     strerror(errno));
	if (pipe(go) < 0 || (child = fork()) < 0) {
		ok(0, "fork");
		return;
	}
	if (child == 0) {
		close(go[1]);
		child_workload(go[0]);
	}
	close(go[0]);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	ok(instance_set("set_event_pid", pid) == 0 && (!functions || instance_set("set_ftrace_pid", pid) == 0) &&
		   instance_set("tracing_on", "1") == 0,
	   "tracing the child %s", pid);
	if (write(go[1], "g", 1) != 1)
		diag("cannot start the child");
	close(go[1]);
	ok(waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the child ran its workload");
	instance_set("tracing_on", "0");
	if (functions)
		instance_set("current_tracer", "nop");

	kernel_text = instance_read("trace"); /* before the report consumes the raw pages */
	ok(report_lines(instance, &ours) == 0, "live: report of the instance without problems");
	split_lines(kernel_text, &kernel);
	compare_lines(&ours, &kernel, "live");
	ok(count_matching(&kernel, is_nul_joined) == 1,
	   "live: the NUL marker's line goes on with the next event, in the kernel's text");
	ok(count_matching(&kernel, is_kernel_stack) > 0 && count_matching(&kernel, is_user_stack) > 0 &&
		   count_matching(&kernel, is_raw_data) > 0 && count_matching(&kernel, is_enter_hex) > 0,
	   "live: stacks, raw data and syscalls were recorded");
	if (functions)
		ok(count_matching(&kernel, is_function) > 0, "live: function tracer lines recorded");
	else
		skip(1, "the function tracer cannot run in an instance on this kernel");
	free_lines(&ours);
	free_lines(&kernel);
	ok(instance_close() == 0, "instance removed");
}

int main(void)
{

	instance_remove_on_exit();
	alarm(120);
	bundled_capture();
	hostile_records();
	live_kernel();
	return done_testing();
}
