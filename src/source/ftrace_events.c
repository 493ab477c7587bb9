// SPDX-License-Identifier: MIT
/*
 * ftrace_events.c - the kernel's own ftrace events, written from user
 * space: print (what trace_marker writes), bprint (trace_printk's binary
 * form, for tb_printf) and raw_data (trace_marker_raw).  Their descriptors
 * reproduce the kernel's format files, IDs included, so that tools that
 * know those events print ours natively.
 *
 * Records (kernel/trace/trace_entries.h):
 *   print     common, unsigned long ip, char buf[] (text, '\n', NUL)
 *   bprint    common, unsigned long ip, const char *fmt, u32 buf[] (vbin_printf words)
 *   raw_data  common, unsigned int id, char buf[]
 * A marker's ip is TB_MARKER_IP_KEY: the kernel stores the address of its
 * own write function there, which readers name tracing_mark_write, and the
 * registry's kallsyms names that key so; no user-space function is behind it.  A bprint record's ip and fmt both hold the call
 * site's key: printk_formats maps it to the format, kallsyms to the
 * function that called tb_printf().
 */
#include <errno.h>
#include <string.h>

#include "registry.h"
#include "tracebuf/events.h"

#define PRINT_HEAD 16u
#define RAW_HEAD 12u

static const struct tb_event_field print_fields[] = {
	{"unsigned long", "ip", 8, 8, 0, 0, TB_EVF_SCALAR},
	{"char", "buf", 16, 0, 0, 0, TB_EVF_FLEX},
	{0, 0, 0, 0, 0, 0, 0},
};

static const struct tb_event_field bprint_fields[] = {
	{"unsigned long", "ip", 8, 8, 0, 0, TB_EVF_SCALAR},
	{"const char *", "fmt", 16, 8, 0, 0, TB_EVF_SCALAR},
	{"u32", "buf", 24, 0, 0, 0, TB_EVF_FLEX},
	{0, 0, 0, 0, 0, 0, 0},
};

static const struct tb_event_field raw_data_fields[] = {
	{"unsigned int", "id", 8, 4, 0, 0, TB_EVF_SCALAR},
	{"char", "buf", 12, 0, 0, 0, TB_EVF_FLEX},
	{0, 0, 0, 0, 0, 0, 0},
};

__attribute__((aligned(32))) TB__HIDDEN TB__PROBES_SECTION struct tb_event_desc tb__print_event = {
	NULL, TB_PRINT_ID, TB_EVENT_ABI, PRINT_HEAD, {0}, "ftrace", "print", print_fields,
	"\"%ps: %s\", (void *)REC->ip, REC->buf", __FILE__, __LINE__, NULL,
};

__attribute__((aligned(32))) TB__HIDDEN TB__PROBES_SECTION struct tb_event_desc tb__bprint_event = {
	NULL, TB_BPRINT_ID, TB_EVENT_ABI, TB__BPRINT_HEAD, {0}, "ftrace", "bprint", bprint_fields,
	"\"%ps: %s\", (void *)REC->ip, REC->fmt", __FILE__, __LINE__, NULL,
};

__attribute__((aligned(32))) TB__HIDDEN TB__PROBES_SECTION struct tb_event_desc tb__raw_data_event = {
	NULL, TB_RAW_DATA_ID, TB_EVENT_ABI, RAW_HEAD, {0}, "ftrace", "raw_data", raw_data_fields,
	"\"id:%04x %08x\", REC->id, (int)REC->buf[0]", __FILE__, __LINE__, NULL,
};

__attribute__((section("tb_events"), used)) static struct tb_event_desc *const builtin_entries[] = {
	&tb__print_event,
	&tb__bprint_event,
	&tb__raw_data_event,
};

static struct tb_ring *ring_of(struct tb_event_desc *ev)
{
	/* acquire: pairs with the registry's release store of the pointer */
	return __atomic_load_n(&ev->ring, __ATOMIC_ACQUIRE);
}

static void put_common(unsigned char *rec, uint16_t id)
{
	uint64_t word = tb__common_word(id);

	memcpy(rec, &word, sizeof(word));
}

/* relaxed: the kernel's count of attached USDT consumers publishes nothing */
static bool usdt_attached(struct tb_event_desc *ev)
{
	return TB__UNLIKELY(__atomic_load_n(&ev->gate.part.usdt, __ATOMIC_RELAXED) != 0);
}

/* ftrace:print's record of text into ring (not NULL). */
static int print_record(struct tb_ring *ring, const char *text, size_t len)
{
	size_t room = TB_EVENT_MAX - PRINT_HEAD - 2; /* the newline and the NUL */
	size_t n = len < room ? len : room;
	unsigned char rec[PRINT_HEAD + n + 2];
	uint64_t ip = TB_MARKER_IP_KEY;
	int rc;

	put_common(rec, TB_PRINT_ID);
	memcpy(rec + 8, &ip, sizeof(ip));
	memcpy(rec + PRINT_HEAD, text, n);
	if (n == 0 || text[n - 1] != '\n') {
		rec[PRINT_HEAD + n] = '\n';
		rec[PRINT_HEAD + n + 1] = '\0';
	} else {
		rec[PRINT_HEAD + n] = '\0';
		rec[PRINT_HEAD + n + 1] = '\0';
	}
	rc = tb_write(ring, rec, (uint32_t)sizeof(rec));
	return rc < 0 ? rc : (int)n;
}

/* The USDT probe ftrace:print (text, len) fires for attached consumers whether or not tracebuf records. */
int tb_marker_write(const char *text, size_t len)
{
	struct tb_ring *ring;

	if (usdt_attached(&tb__print_event))
		TB__USDT(ftrace, print, tb__print_event, offsetof(struct tb_event_desc, gate), text,
			 (uint64_t)len);
	ring = ring_of(&tb__print_event);
	return ring ? print_record(ring, text, len) : -EAGAIN;
}

int tb_marker_puts(const char *text)
{
	return tb_marker_write(text, strlen(text));
}

int tb_marker_raw_write(uint32_t id, const void *data, size_t len)
{
	struct tb_ring *ring;

	if (usdt_attached(&tb__raw_data_event))
		TB__USDT(ftrace, raw_data, tb__raw_data_event, offsetof(struct tb_event_desc, gate), id,
			 (const unsigned char *)data, (uint64_t)len);
	ring = ring_of(&tb__raw_data_event);

	if (!ring)
		return -EAGAIN;
	if (len > TB_EVENT_MAX - RAW_HEAD) {
		tb_event_refuse_too_big(ring);
		return -E2BIG;
	}
	{
		unsigned char rec[RAW_HEAD + len];

		put_common(rec, TB_RAW_DATA_ID);
		memcpy(rec + 8, &id, sizeof(id));
		memcpy(rec + RAW_HEAD, data, len);
		return tb_write(ring, rec, (uint32_t)sizeof(rec));
	}
}

/* ------------------------------------------------------------ bprint */

/* A string argument: a pointer to its characters, as the kernel records bad ones. */
static const char *arg_string(char cls, uint64_t value)
{
	const char *s = (const char *)(uintptr_t)value;

	if (cls != 's' && cls != 'p')
		return "(efault)"; /* an integer: never dereferenced */
	return tb__pf_string('s', &s);
}

/* Bytes the plan's arguments take from off on, or stores them when rec is not NULL. */
static size_t pack(unsigned char *rec, size_t off, const struct tb_printf_site *site, int n,
		   const uint64_t *values)
{
	for (int i = 0; i < n; i++) {
		char want = site->plan[i];
		size_t size = want == 'c' ? 1 : want == 'h' ? 2 : want == 'i' ? 4 : 8;

		if (want == 's') {
			const char *s = arg_string(site->cls[i], values[i]);
			size_t len = strlen(s) + 1;
			if (rec)
				memcpy(rec + off, s, len);
			off += len < TB_EVENT_MAX ? len : TB_EVENT_MAX;
			continue;
		}
		while (off % (size < 4 ? size : 4)) {
			if (rec)
				rec[off] = 0;
			off++;
		}
		if (rec)
			memcpy(rec + off, &values[i], size); /* little endian: the low bytes */
		off += size;
	}
	return off;
}

void tb_printf_slow(struct tb_ring *ring, const struct tb_printf_site *site, const uint64_t *values)
{
	int n = 0;
	size_t size;

	while (n < site->nargs && site->plan[n])
		n++;
	size = (pack(NULL, TB__BPRINT_HEAD, site, n, values) + 3) & ~(size_t)3;
	if (size > TB_EVENT_MAX) {
		tb_event_refuse_too_big(ring);
		return;
	}
	{
		unsigned char rec[size];
		uint64_t head[3] = {tb__common_word(TB_BPRINT_ID), site->key, site->key};
		size_t end;

		memcpy(rec, head, sizeof(head));
		end = pack(rec, TB__BPRINT_HEAD, site, n, values);
		memset(rec + end, 0, size - end);
		tb_write(ring, rec, (uint32_t)size);
	}
}

void tb_copy(void *dst, const void *src, size_t n)
{
	memcpy(dst, src, n);
}

void tb_event_refuse_too_big(struct tb_ring *ring)
{
	/* a length no ring accepts: tb_write counts it in too_big (or ignores it while not recording) */
	tb_write(ring, NULL, UINT32_MAX);
}
