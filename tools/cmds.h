/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the tracebuf CLI: each is a table (cli_opts.h) whose run
 * function returns the process exit status.  Adding one: cli_opts.h's top.
 */
#ifndef TRACEBUF_CMDS_H
#define TRACEBUF_CMDS_H

#include "cli_opts.h"

extern const struct cli_command cli_capture; /* tools/cmd_capture.c */
extern const struct cli_command cli_report;  /* tools/cmd_report.c */
extern const struct cli_command cli_hist;    /* tools/cmd_hist.c */
extern const struct cli_command cli_convert; /* tools/cmd_convert.c */
extern const struct cli_command cli_record;  /* tools/cmd_record.c */
extern const struct cli_command cli_snapshot; /* tools/cmd_snapshot.c */
extern const struct cli_command cli_recover; /* tools/cmd_snapshot.c */
extern const struct cli_command cli_dump;    /* tools/cmd_dump.c */
extern const struct cli_command cli_size;    /* tools/cmd_size.c */
extern const struct cli_command cli_stats;   /* tools/cmd_stats.c */
extern const struct cli_command cli_demo;    /* tools/cmd_demo.c */
extern const struct cli_command cli_list;    /* tools/cmd_list.c */
extern const struct cli_command cli_offcpu;  /* tools/cmd_offcpu.c */
extern const struct cli_command cli_formats; /* tools/cmd_formats.c */
extern const struct cli_command cli_sql;     /* tools/cmd_sql.c */

#endif
