/* SPDX-License-Identifier: MIT */
/* Subcommands of the tracebuf CLI: each returns the process exit status. */
#ifndef TRACEBUF_CMDS_H
#define TRACEBUF_CMDS_H

int cmd_report(int argc, char **argv); /* tools/cmd_report.c */
int cmd_size(int argc, char **argv);   /* tools/cmd_size.c */
int cmd_demo(int argc, char **argv);   /* tools/cmd_demo.c */
int cmd_stats(int argc, char **argv);  /* tools/cmd_stats.c */
int cmd_capture(int argc, char **argv); /* tools/cmd_capture.c */
int cmd_formats(int argc, char **argv); /* tools/cmd_formats.c */
int cmd_convert(int argc, char **argv); /* tools/cmd_convert.c */
int cmd_dump(int argc, char **argv);    /* tools/cmd_dump.c */
int cmd_list(int argc, char **argv);    /* tools/cmd_list.c */
int cmd_record(int argc, char **argv);  /* tools/cmd_record.c */
int cmd_snapshot(int argc, char **argv); /* tools/cmd_snapshot.c */
int cmd_recover(int argc, char **argv);  /* tools/cmd_snapshot.c */
int cmd_offcpu(int argc, char **argv);  /* tools/cmd_offcpu.c */
int cmd_hist(int argc, char **argv);    /* tools/cmd_hist.c */
int cmd_sql(int argc, char **argv);     /* tools/cmd_sql.c */

#endif
