/* SPDX-License-Identifier: MIT */
/*
 * tracebuf/export.h - one way to write a trace out: a table of exporters
 * (trace.dat, capture directory, Chrome JSON, folded stacks, flame graph
 * and ring SVGs), chosen by name or by the output's suffix, all run by
 * tb_export_run() with the same behaviour:
 *
 *  - the input is opened as every command opens it (tb_capture_open: a
 *    capture directory or a trace.dat; a kind that reads capture
 *    directories itself says so in its help line);
 *  - damaged parts of the input are reported (file and byte offset) and
 *    left out: only intact data is written, and the result counts the
 *    problems so a caller can exit 1 ("found damage");
 *  - with progress set, a line on stderr is redrawn while a streaming
 *    kind runs (the caller decides: `tracebuf convert` sets it when stderr
 *    is a terminal);
 *  - messages name the user's files, prefixed with opts->tool.
 *
 * Ownership: the kinds are static (never freed); the options' strings and
 * usyms stay the caller's; the result holds no pointers.
 */
#ifndef TRACEBUF_EXPORT_H
#define TRACEBUF_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/tracedat.h"
#include "tracebuf/usyms.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tb_exporter_kind;

/* The number of kinds, and kind i (0 .. count-1), in the order `convert --help` lists them. */
size_t tb_export_kind_count(void);
const struct tb_exporter_kind *tb_export_kind(size_t i);
/* Its name ("tracedat"), its suffixes (".dat", space separated; "" none) and one line of help. */
const char *tb_export_kind_name(const struct tb_exporter_kind *k);
const char *tb_export_kind_suffixes(const struct tb_exporter_kind *k);
const char *tb_export_kind_help(const struct tb_exporter_kind *k);
/* The kind called name, or NULL. */
const struct tb_exporter_kind *tb_export_find(const char *name);
/* The kind whose suffix ends path (an output name ending in '/' is a directory); NULL: none. */
const struct tb_exporter_kind *tb_export_for_path(const char *path);

struct tb_export_opts {
	const char *tool; /* message prefix ("tracebuf convert"); NULL: "tracebuf" */
	const char *in;	  /* the input: capture directory, trace.dat */
	const char *out;  /* the file (or directory) to write */
	const char *prefix; /* capture directories' raw and stats files are PREFIXcpuN.raw (NULL: "") */
	bool progress;	    /* redraw a progress line on stderr */
	/* trace.dat: version 6 (default when 0) or 7, v7 compression, more buffers to join */
	int tracedat_version;
	const char *compression;
	const struct tb_tracedat_input *buffers; /* instances besides the input (name = DIR) */
	size_t nbuffers;
	/* A trace.dat input: the one buffer to read ("" the top one); NULL: every buffer, merged by time. */
	const char *buffer;
	const char *title;	/* SVGs: NULL, the kind's own */
	struct tb_usyms *usyms; /* names for user-space addresses (JSON); NULL: none */
	/* SQL (docs/sql.md): the host column's value (NULL: the input's base name); events.text too */
	const char *host;
	bool sql_text;
	/* ClickHouse: HOST:PORT to load into (the clickhouse-rowbinary kind; NULL: write out), its database */
	const char *clickhouse;
	const char *database;
	/* ClickHouse: a cluster of the server's remote_servers (NULL: none): Distributed tables over it in D_all */
	const char *cluster;
	/* ClickHouse: ns added to every time stamp (ts, start_ts, end_ts): another machine's clock on one time line */
	int64_t clock_offset;
};

struct tb_export_result {
	uint64_t records;	/* data records written or analysed (0 when the kind copies pages) */
	uint64_t pages;		/* sub-buffers read */
	uint64_t lost_pages;	/* of them, flagged as following lost events */
	uint64_t lost_events;	/* the counts those flags stored (a lower bound) */
	unsigned long problems; /* damage reported (file and offset said on stderr); nothing damaged written */
};

/*
 * Write opts->in as opts->out in kind's format.  0 when written (result
 * says whether damage was left out), or a negative errno when nothing
 * usable was written (said on stderr, naming the file): -ENOENT / -EINVAL
 * for an input that cannot be read as this kind needs, -EIO when writing
 * failed, -ENOMEM.  result may be NULL.
 */
int tb_export_run(const struct tb_exporter_kind *kind, const struct tb_export_opts *opts,
		  struct tb_export_result *result);

#ifdef __cplusplus
}
#endif
#endif
