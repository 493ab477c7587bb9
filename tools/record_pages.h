/* SPDX-License-Identifier: MIT */
/*
 * record_pages.h - what `tracebuf record` does with each page it drains
 * from the program's ring, before the page reaches the capture directory:
 *
 * PACKING.  A drain takes whatever the ring holds, the tail page included,
 * so a quiet program hands over pages a few records long, one per drain
 * (issue 23: 561 events in 445 pages, 1.8 MB).  The packer copies each
 * page's records into one page per CPU that it writes only when the next
 * record does not fit, or at the end: the file gets full pages, each
 * still one CPU's records in time order (I2 of docs/design.md holds, the
 * copies keep their times).  A page that follows lost events starts a new
 * page carrying the loss (the kernel's flag, and the count when there is
 * room), so every loss stays where it happened and is counted once.  Each
 * record is copied as it is, only its time delta rewritten (a time extend
 * before it when needed), so its form stays: a blob reference is marked by
 * its form.  The
 * last page of each CPU ends at its last record, as a page the kernel
 * swaps out early does (commit below the page size).
 *
 * NAMES.  Every thread id the packer meets in a record is named from
 * /proc/TID/comm at once, when the thread still runs (the drain follows
 * its writes within a millisecond or so); one that ended already is named
 * from the ring's thread table, which keeps the name each writer had at
 * its first write (tb_ring_thread_names).  They become the capture's
 * saved_cmdlines: report, trace-cmd and KernelShark then show the
 * program's thread names instead of <...>-TID.
 */
#ifndef TRACEBUF_TOOLS_RECORD_PAGES_H
#define TRACEBUF_TOOLS_RECORD_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tracebuf/page.h"

/* Thread names met so far: "TID COMM\n" lines. */
struct thread_name {
	int32_t tid;
	bool named; /* a line of text names it */
};
struct thread_names {
	struct thread_name *tids; /* sorted by tid */
	size_t n, cap;
	char *text;
	size_t len, text_cap;
};

/* One CPU's page being filled. */
struct page_packer {
	int fd;		 /* the capture's cpuN.raw */
	size_t size;	 /* the sub-buffer size */
	uint8_t *page;	 /* being filled */
	uint32_t used;	 /* data bytes in it */
	uint64_t page_ts, last_ts; /* its header's time, its last record's */
	bool open;	 /* page holds records */
	int64_t lost;	 /* carried into the page being filled: > 0 a count, -1 unknown, 0 none */
	uint64_t pages;	 /* written so far */
};

/* 0 or -ENOMEM. */
int packer_init(struct page_packer *p, int fd, size_t page_size);
/*
 * The records of one drained page (size bytes; lost: the events lost right
 * before it, as tb_read_page_info says), their thread ids named into names.
 * 0, -EINVAL for a damaged page (its records up to the damage are kept),
 * or a write's -errno.
 */
int packer_add(struct page_packer *p, const uint8_t *page, uint64_t lost, struct thread_names *names);
/* Write the page being filled, if any: 0 or -errno. */
int packer_flush(struct page_packer *p);
void packer_free(struct page_packer *p);

/*
 * tid is called name (the ring's thread table says so, tb_ring_thread_names),
 * unless it is named already: 0 or -ENOMEM.
 */
int thread_names_give(struct thread_names *names, int32_t tid, const char *name);

/*
 * Append names' lines that capture directory cap's saved_cmdlines does not
 * list yet (the program's own, written at its exit, come first): 0 or -errno.
 */
int thread_names_save(const struct thread_names *names, const char *cap);
void thread_names_free(struct thread_names *names);

/*
 * The kernel's capture directory kcap: the tasks its sched_switch and
 * sched_wakeup records name (prev_comm/next_comm, comm) that its
 * saved_cmdlines lacks - the kernel's cache of 128 names, filled only
 * around the switches that follow a recorded event, misses most tasks that
 * are only the other side of a followed program's switches - appended to
 * it, so that every reader names them (trace-cmd learns names from these
 * records as it prints them; tracebuf reads the cmdlines).  0 or -errno.
 */
int kernel_names_complete(const char *kcap);

#endif
