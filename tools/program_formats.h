/* SPDX-License-Identifier: MIT */
/*
 * program_formats.h - a program linked with libtracebuf describes its own
 * events: run with TRACEBUF_FORMATS=DIR in its environment, it writes them
 * into DIR in the layout of a capture directory (header_page,
 * header_event, formats/SYSTEM/NAME.format, printk_formats, kallsyms) as
 * soon as its own events are registered, and exits before main()
 * (tracebuf/events.h).  What `tracebuf formats` and `tracebuf list -- PROGRAM`
 * share.  Messages go to stderr, prefixed with who.
 */
#ifndef TRACEBUF_TOOLS_PROGRAM_FORMATS_H
#define TRACEBUF_TOOLS_PROGRAM_FORMATS_H

/*
 * Run argv with TRACEBUF_FORMATS=dir and wait for it: 0 when it wrote its
 * description there; else said on stderr (it is not linked with
 * libtracebuf, could not run, failed) and -1.
 */
int program_formats(const char *who, char **argv, const char *dir);

/* rm -rf dir (a directory this process made). */
void program_formats_remove(const char *who, const char *dir);

#endif
