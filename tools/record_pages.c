// SPDX-License-Identifier: MIT
/*
 * record_pages.c - drained pages packed into full ones, and the names of
 * the threads that wrote them (see record_pages.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib_internal.h"
#include "record_pages.h"
#include "tracebuf/blob.h"
#include "tracebuf/capture.h"
#include "tracebuf/schema.h"

/* ------------------------------------------------------------- names */

/* Where tid is, or would be inserted, in the sorted table. */
static size_t tid_slot(const struct thread_names *t, int32_t tid)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->tids[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int append_line(struct thread_names *t, int32_t tid, const char *comm)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%d %s\n", (int)tid, comm);
	char *grown = tb__grow(t->text, &t->text_cap, t->len + (size_t)n + 1, 1, 1024);

	if (!grown)
		return -ENOMEM;
	t->text = grown;
	memcpy(t->text + t->len, line, (size_t)n + 1);
	t->len += (size_t)n;
	return 0;
}

/* The kernel's comm of tid ("" when it is gone: it stays unnamed, never misnamed). */
static void read_comm(int32_t tid, char comm[32])
{
	char path[64];
	ssize_t n;
	int fd;

	comm[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, comm, 31);
	close(fd);
	comm[n > 0 ? n : 0] = '\0';
	comm[strcspn(comm, "\n")] = '\0';
}

/* tid's entry, made now (unnamed) if it is new; NULL: out of memory. */
static struct thread_name *entry_of(struct thread_names *t, int32_t tid, bool *is_new)
{
	size_t at = tid_slot(t, tid);

	*is_new = !(at < t->n && t->tids[at].tid == tid);
	if (!*is_new)
		return &t->tids[at];
	struct thread_name *grown = tb__grow(t->tids, &t->cap, t->n + 1, sizeof(*grown), 64);

	if (!grown)
		return NULL;
	t->tids = grown;
	memmove(t->tids + at + 1, t->tids + at, (t->n - at) * sizeof(*t->tids));
	t->tids[at] = (struct thread_name){.tid = tid};
	t->n++;
	return &t->tids[at];
}

/* The thread of a record: named from /proc the first time it is met (a thread gone stays unnamed here). */
static int note_thread(struct thread_names *t, int32_t tid)
{
	bool is_new;
	struct thread_name *e = tid > 0 ? entry_of(t, tid, &is_new) : NULL;
	char comm[32];

	if (tid <= 0 || (e && !is_new))
		return 0;
	if (!e)
		return -ENOMEM;
	read_comm(tid, comm);
	e->named = comm[0] != '\0';
	return e->named ? append_line(t, tid, comm) : 0;
}

int thread_names_give(struct thread_names *t, int32_t tid, const char *name)
{
	bool is_new;
	struct thread_name *e = tid > 0 && *name ? entry_of(t, tid, &is_new) : NULL;

	if (!e || e->named)
		return e || tid <= 0 || !*name ? 0 : -ENOMEM;
	e->named = true;
	return append_line(t, tid, name);
}

/* Whether saved_cmdlines text (NUL-terminated) has a line for tid. */
static bool listed(const char *text, int32_t tid)
{
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char *end;
		long v = strtol(line, &end, 10);
		if (end != line && *end == ' ' && v == tid)
			return true;
	}
	return false;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	n = getdelim(&text, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(text);
		return NULL;
	}
	return text;
}

int thread_names_save(const struct thread_names *names, const char *cap)
{
	char path[4096];
	char *have;
	FILE *f;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/saved_cmdlines", cap);
	have = read_text(path);
	f = fopen(path, "ae");
	if (!f) {
		free(have);
		return -errno;
	}
	for (const char *line = names->text; line && line < names->text + names->len;) {
		const char *end = strchr(line, '\n');
		int32_t tid = (int32_t)strtol(line, NULL, 10);
		if (!have || !listed(have, tid))
			fwrite(line, 1, (size_t)(end - line + 1), f);
		line = end + 1;
	}
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	free(have);
	return rc;
}

void thread_names_free(struct thread_names *names)
{
	free(names->tids);
	free(names->text);
	memset(names, 0, sizeof(*names));
}

/* ------------------------------------------------------------ packing */

int packer_init(struct page_packer *p, int fd, size_t page_size)
{
	memset(p, 0, sizeof(*p));
	p->fd = fd;
	p->size = page_size;
	p->page = malloc(page_size);
	return p->page ? 0 : -ENOMEM;
}

void packer_free(struct page_packer *p)
{
	free(p->page);
	p->page = NULL;
}

static void put_le32(uint8_t *at, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		at[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *at, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		at[i] = (uint8_t)(v >> (8 * i));
}

/*
 * The page header: its time, and the commit word - the data's length, and
 * as the kernel marks a page after lost events, bit 31, with bit 30 and
 * the count stored after the data when 8 bytes are left.
 */
static void close_page(struct page_packer *p)
{
	uint64_t commit = p->used;

	if (p->lost) {
		commit |= TB_PAGE_COMMIT_LOST;
		if (p->lost > 0 && p->used + 8 <= tb_page_data_size(p->size)) {
			put_le64(p->page + TB_PAGE_HDR_SIZE + p->used, (uint64_t)p->lost);
			commit |= TB_PAGE_COMMIT_LOST_STORED;
		}
	}
	put_le64(p->page, p->page_ts);
	put_le64(p->page + 8, commit);
}

int packer_flush(struct page_packer *p)
{
	int rc;

	if (!p->open)
		return 0;
	close_page(p); /* commit ends at the last record, the rest of the page zeros */
	rc = write_all(p->fd, p->page, p->size);
	p->open = false;
	p->lost = 0;
	if (rc == 0)
		p->pages++;
	return rc;
}

static void start_page(struct page_packer *p, uint64_t ts)
{
	memset(p->page, 0, p->size);
	p->page_ts = p->last_ts = ts;
	p->used = 0;
	p->open = true;
}

/*
 * A record copied byte for byte - its form is kept, which marks a blob
 * reference (tracebuf/blob.h) - with only its time delta made relative
 * to the record before it here, preceded by a time extend when the delta
 * needs more than 27 bits.  0, or -ENOSPC when the page has no room (or
 * the record is older than the page's last).
 */
static int copy_record(struct page_packer *p, const uint8_t *page, const struct tb_record *rec)
{
	uint64_t delta = rec->ts - p->last_ts;
	uint32_t extend = delta > TB_DELTA_MAX ? 8 : 0;
	uint8_t *at = p->page + TB_PAGE_HDR_SIZE + p->used;

	/* time never goes back in a CPU's pages (I2); should it, the record starts a page of its own */
	if (rec->ts < p->last_ts || p->used + extend + rec->size > tb_page_data_size(p->size))
		return -ENOSPC;
	if (extend) {
		put_le32(at, tb_rec_header(TB_TYPE_TIME_EXTEND, (uint32_t)(delta & TB_DELTA_MAX)));
		put_le32(at + 4, (uint32_t)(delta >> TB_DELTA_BITS));
		at += 8;
		delta = 0;
	}
	memcpy(at, page + rec->offset, rec->size);
	put_le32(at, tb_rec_header(rec->type_len, (uint32_t)delta));
	p->used += extend + rec->size;
	p->last_ts = rec->ts;
	return 0;
}

/* A record into the page being filled; a full page is written and a new one started. */
static int pack_record(struct page_packer *p, const uint8_t *page, const struct tb_record *rec)
{
	int rc;

	if (p->open && copy_record(p, page, rec) == 0)
		return 0;
	if ((rc = packer_flush(p)) < 0)
		return rc;
	start_page(p, rec->ts);
	/* a record an empty page of the same size refuses was not in a page */
	return copy_record(p, page, rec) == 0 ? 0 : -EINVAL;
}

/* The thread that wrote rec: common_pid (a blob reference keeps its length there). */
static int name_writer(struct thread_names *names, const struct tb_record *rec)
{
	struct tb_blob_ref ref;
	int32_t tid;

	if (rec->len < 8 || tb_blob_ref_decode(rec, &ref) == 1)
		return 0;
	memcpy(&tid, (const uint8_t *)rec->data + 4, sizeof(tid));
	return note_thread(names, tid);
}

int packer_add(struct page_packer *p, const uint8_t *page, uint64_t lost, struct thread_names *names)
{
	struct tb_page_cursor c;
	struct tb_record rec;
	int rc, more;

	if (tb_page_cursor_init(&c, page, p->size) < 0)
		return -EINVAL;
	/* Events were lost right before this page: its records start a page that says so. */
	if (lost || c.hdr.lost) {
		if ((rc = packer_flush(p)) < 0)
			return rc;
		p->lost = lost ? (int64_t)lost : -1;
	}
	while ((more = tb_page_next_data(&c, &rec)) == 1) {
		if ((rc = pack_record(p, page, &rec)) < 0 || (rc = name_writer(names, &rec)) < 0)
			return rc;
	}
	/* a loss with no record after it yet stays carried into the next page */
	return more < 0 ? -EINVAL : 0;
}

/* ------------------------------------------------------ kernel names */

struct name_field {
	const struct tb_schema_field *comm, *pid;
};

/* A record's (pid, comm) pair f names, into names when the capture's cmdlines lack the pid. */
static int learn_pair(struct thread_names *names, struct tb_schema *schema, const struct name_field *f,
		      const uint8_t *data, uint32_t len)
{
	char comm[17];
	int32_t pid;
	size_t n, known_len;

	if (!f->comm || !f->pid || f->pid->size != 4 || f->pid->offset + 4 > len || f->comm->offset >= len)
		return 0;
	memcpy(&pid, data + f->pid->offset, 4);
	n = f->comm->size < 16 ? f->comm->size : 16;
	if (f->comm->offset + n > len)
		return 0;
	memcpy(comm, data + f->comm->offset, n);
	comm[n] = '\0';
	if (pid <= 0 || !comm[0] || strcmp(tb_schema_comm(schema, pid, &known_len), "<...>") != 0)
		return 0;
	return thread_names_give(names, pid, comm);
}

/* The pairs one data record names (sched_switch: prev, next; sched_wakeup: the woken task). */
static int learn_record(struct thread_names *names, struct tb_schema *schema, const struct tb_record *rec)
{
	const char *system = NULL;
	uint16_t id;
	const struct tb_format *f;
	int rc = 0;

	if (rec->len < 8)
		return 0;
	memcpy(&id, rec->data, 2);
	f = tb_schema_find_event(schema, id, &system);
	if (!f || !system || strcmp(system, "sched"))
		return 0;
	if (!strcmp(f->name, "sched_switch")) {
		struct name_field prev = {tb_format_field(f, "prev_comm"), tb_format_field(f, "prev_pid")};
		struct name_field next = {tb_format_field(f, "next_comm"), tb_format_field(f, "next_pid")};
		rc = learn_pair(names, schema, &prev, rec->data, rec->len);
		if (rc == 0)
			rc = learn_pair(names, schema, &next, rec->data, rec->len);
	} else if (!strcmp(f->name, "sched_wakeup") || !strcmp(f->name, "sched_waking")) {
		struct name_field woken = {tb_format_field(f, "comm"), tb_format_field(f, "pid")};
		rc = learn_pair(names, schema, &woken, rec->data, rec->len);
	}
	return rc;
}

/* Problems in the kernel's capture are the report's to say, when the file is read. */
static void ignore_diag(void *ctx, const struct tb_problem *d)
{
	(void)ctx;
	(void)d;
}

int kernel_names_complete(const char *kcap)
{
	/* only the sched formats met are parsed, and no kallsyms read: the end of a recording stays quick */
	struct tb_capture_opts opts = {.diag = ignore_diag, .lazy_formats = true, .no_symbols = true};
	struct thread_names names = {0};
	struct tb_capture *c;
	int rc = tb_capture_open(kcap, &opts, &c);

	if (rc < 0)
		return rc;
	for (int cpu = 0; rc >= 0 && cpu < tb_capture_cpu_slots(c); cpu++) {
		struct tb_capture_page page;
		while (rc >= 0 && tb_capture_has_cpu(c, cpu) && (rc = tb_capture_next_page(c, cpu, &page)) == 1) {
			struct tb_page_cursor cur;
			struct tb_record rec;
			if (tb_page_cursor_init(&cur, page.data, page.size) < 0)
				continue; /* a damaged page is the report's to say */
			while (rc >= 0 && tb_page_next_data(&cur, &rec) == 1)
				rc = learn_record(&names, tb_capture_schema(c), &rec);
		}
	}
	tb_capture_close(c);
	if (rc >= 0)
		rc = thread_names_save(&names, kcap);
	thread_names_free(&names);
	return rc < 0 ? rc : 0;
}
