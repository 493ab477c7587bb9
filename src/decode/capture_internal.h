/* SPDX-License-Identifier: MIT */
/*
 * capture_internal.h - the inside of a struct tb_capture, shared by the
 * three files that make one: capture.c (what every capture does),
 * capture_dir.c (a capture directory) and capture_live.c (a live tracefs
 * instance).  Nothing outside src/decode/capture*.c includes it.
 *
 * A capture read from files is opened by capture_open_files() with the
 * struct capture_files of its kind: the kind loads the schema, finds each
 * CPU's page file (capture_add_cpu) and reads pages its way; capture.c
 * does the rest (clock, metadata, stats, problems, page buffers, queries).
 *
 * Ownership: the capture owns everything it points to (cpus[], their
 * paths and pages, index[], held[], the strings), freed by
 * tb_capture_close(); but the schema of a capture over a capture_source is
 * the source's.
 */
#ifndef TRACEBUF_CAPTURE_INTERNAL_H
#define TRACEBUF_CAPTURE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "capture_kinds.h"
#include "capture_source.h"
#include "tracebuf/capture.h"

#define MAX_CPUS 4096
#define MAX_TEXT_FILE (256u << 20) /* kallsyms is ~5 MiB; anything near this is not ours */
#define MAX_PAGE_MEMORY (256u << 20) /* one sub-buffer per CPU is held during a report */
#define READ_AHEAD (64u << 10)       /* of a raw file, when MAX_PAGE_MEMORY allows it (read_ahead()) */
#define CPU_TOO_HIGH (-2)

struct cpu_source {
	char *path;      /* cpuN.raw or per_cpu/cpuN/trace_pipe_raw; NULL: no such CPU */
	int fd;          /* -1 until first read, or while closed to free a descriptor */
	bool checked;    /* the file was opened once and its kind (and geometry) checked */
	char *refusal;   /* why its pages are not read (reported at the start of every pass) */
	uint64_t refusal_offset;
	uint64_t offset; /* of the next page */
	uint64_t size;   /* capture file size */
	bool done;
	bool dry;        /* live: done because the buffer was empty (tb_capture_resume reads on) */
	uint8_t *page;   /* one sub-buffer, lent out by next_page; allocated at the first read */
	/* A raw file's page holds read_ahead() bytes: [page_off, +page_len) of the file, lent at +lent. */
	uint64_t page_off;
	size_t page_len, lent;
	bool have_stats;
	struct tb_cpu_stats stats;
};

/* Live (or lazy_formats): where the format of each event ID is, loaded when first needed. */
struct event_file {
	uint32_t id;
	char *system;
	char *path;
	size_t seq; /* the order it was found in: files of one ID load in it */
	bool loaded; /* already handed to the schema (one of several files of its ID) */
	bool clean;  /* lazy_formats: checked when it was read, nothing to say (schema_format_clean) */
};

/* A format file the walk found (lazy_formats), to be read and indexed. */
struct format_found {
	char *path;
	size_t name_at; /* of the file's name in path */
	int dirfd;      /* its system's directory (c->found_dirs), or -1: opened by path */
	char *system;
	uint32_t id; /* from what either of two threads read; 0: the indexing reads it, saying why */
	bool clean;  /* the text they read was checked: nothing to say */
};

/*
 * A capture directory holds the format files of whole systems, and most of
 * their events never occur in the data.  A problem in one of them matters
 * only if a record of that event is printed, so it is held here until the
 * report says which events it met (tb_capture_event_seen), and what is left
 * at the end is only a warning (tb_capture_warn_unused).
 */
struct held_problem {
	uint32_t id; /* the event ID of the file's "ID:" line; 0 if it has none */
	char *file;
	uint64_t offset;
	char reason[TB_PROBLEM_REASON_MAX];
	bool told;
};

struct tb_capture {
	char *dir;
	char *root; /* live: the tracefs root holding saved_cmdlines etc. */
	const struct capture_files *files; /* read from files: their kind's ways; NULL over a source */
	bool live;
	struct tb_schema *schema;
	size_t subbuf;
	int slots;
	int ncpu_files; /* CPUs with a page source */
	struct cpu_source *cpus;
	int online_cpus;
	bool clock_ns;
	uint32_t tsc_mult, tsc_shift; /* a trace.dat's TSC2NSEC (mult 0: none) */
	char clock[64];
	char *clock_given; /* tb_capture_opts.clock */
	char tracer[64];
	unsigned trace_options; /* TB_TOPT_* bits of the saved trace_options file */
	char release[128];      /* the kernel's release (meta.txt, or this machine's when live); "" unknown */
	char *prefix;
	tb_problem_fn *diag;
	void *diag_ctx;
	bool quiet;
	unsigned long problems;
	struct event_file *index;
	size_t nindex, index_cap;
	struct format_found *found; /* lazy_formats: the walk's files, in its order */
	size_t nfound, found_cap;
	int *found_dirs; /* their systems' directories, open for openat() until they are read */
	int walk_dirfd;  /* the directory of the system being walked, or -1 */
	size_t nfound_dirs, found_dirs_cap;
	struct held_problem *held;
	size_t nheld, held_cap;
	bool holding;        /* loading a capture's format file: hold its problems */
	uint32_t holding_id; /* the ID that file declares */
	bool has_src;        /* pages come from src (capture_source.h), not files */
	bool lazy_formats;   /* tb_capture_opts.lazy_formats */
	bool kallsyms_job;   /* kallsyms is being parsed on a thread (capture_load_kallsyms) */
	int kallsyms_rc;     /* -ENOMEM when its settling, before a problem was told, failed */
	bool no_symbols;     /* tb_capture_opts.no_symbols */
	struct capture_source src;
	struct blob_store *blobs; /* saved blobs (blobs.bin, a trace.dat's store), or NULL */
	void (*on_close)(void *ctx); /* capture_on_close(): run last by tb_capture_close */
	void *on_close_ctx;
	/*
	 * A capture over several buffers (a trace.dat's, merged): for each of
	 * nslot_names slots, the CPU its pages were recorded on and its buffer's
	 * name.  NULL (every capture of one buffer): slot N is CPU N of "".
	 */
	int *slot_cpu;
	char **slot_buffer;
	int nslot_names;
};

/* What a kind of capture read from files does its own way (capture_dir.c, capture_live.c). */
struct capture_files {
	bool live; /* consumed as read: no rewind, no read-ahead, formats loaded when first met */
	/* header_page and formats into c->schema: 0 or a negative errno (reported). */
	int (*load_schema)(struct tb_capture *c);
	/* capture_add_cpu() for each CPU's page file, its stats read: 0 or a negative errno. */
	int (*find_cpus)(struct tb_capture *c);
	/* After the clock and metadata (may be NULL): 0 or a negative errno. */
	int (*finish_open)(struct tb_capture *c);
	/* Bytes of a CPU's page buffer (NULL: one sub-buffer). */
	size_t (*page_room)(const struct tb_capture *c);
	/*
	 * A CPU's file (a regular file of st) opened the first time: capture_refuse() what is
	 * wrong.  NULL: nothing to check.
	 */
	void (*first_open)(struct tb_capture *c, struct cpu_source *s, const struct stat *st);
	/* s's next sub-buffer into s->page at s->lent: 1, 0 at its end, or a negative errno (reported). */
	int (*next_page)(struct tb_capture *c, struct cpu_source *s);
	/* As capture_read_pages() for s, straight into buf (NULL: pages copied one at a time). */
	int (*read_run)(struct tb_capture *c, struct cpu_source *s, uint8_t *buf, size_t room,
			size_t max_pages, capture_page_fn *got, void *got_ctx);
};

/* dir opened as files says: 0 with *out set, or a negative errno (reported) with *out NULL. */
int capture_open_files(const char *dir, const struct capture_files *files, const struct tb_capture_opts *opts,
		       struct tb_capture **out);

/* a/b, malloc'ed; NULL when out of memory. */
char *capture_path_join(const char *a, const char *b);
bool capture_is_dir(const char *path);
/* The file is not there (or a part of its path is not a directory). */
bool capture_is_missing(int e);
/* Read path and hand it to load(); a missing optional file is no problem.  0 or a negative errno. */
int capture_load_file(struct tb_capture *c, const char *path, bool required,
		      int (*load)(struct tb_schema *, const char *, const char *, size_t));
typedef int entry_fn(struct tb_capture *c, const char *dir, const char *name, const char *arg);
/*
 * Call fn on each entry of dir but "." and "..", in name order, until one
 * returns an error.  That error, 0, or -errno when dir cannot be listed.
 */
int capture_each_entry(struct tb_capture *c, const char *dir, entry_fn *fn, const char *arg);
/* kallsyms's text in a capture directory, for its job's thread. */
struct capture_kallsyms {
	char *buf;
	size_t len;
};

/*
 * path's kallsyms, parsed on a thread of its own until
 * capture_settle_kallsyms(), which must run before the capture is handed
 * on (a problem told meanwhile settles it first).  Both: 0 or -ENOMEM.
 */
int capture_load_kallsyms(struct tb_capture *c, const char *path);
int capture_settle_kallsyms(struct tb_capture *c);

/* Every SYSTEM/EVENT/format under dir: loaded, or indexed by ID to load when met (live, lazy_formats). */
int capture_load_formats(struct tb_capture *c, const char *dir);
/* A kernel per_cpu/cpuN/stats file, or its copy in a capture directory, into cpu's stats. */
void capture_read_stats(struct tb_capture *c, struct cpu_source *cpu, const char *path);
/* CPU cpu's page file is path (taken, freed on failure): 0 or -ENOMEM. */
int capture_add_cpu(struct tb_capture *c, int cpu, char *path);
/* "cpuN" + suffix exactly, N a plain decimal: N, CPU_TOO_HIGH when N is MAX_CPUS or more, else -1. */
int capture_cpu_number(const char *name, const char *suffix);
/* Keep why the CPU's pages are not read; tb_capture_next_page reports it. */
void capture_refuse(struct cpu_source *s, uint64_t offset, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
