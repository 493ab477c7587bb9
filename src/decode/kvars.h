/* SPDX-License-Identifier: MIT */
/*
 * kvars.h - values of kernel variables that print fmts use, found on the
 * running kernel.
 *
 * The clock tick: writeback:writeback_single_inode prints age=(jiffies -
 * dirtied_when) / HZ, and jbd2's events jiffies_to_msecs(), which needs HZ.
 *
 *  - jiffies is read when the kernel prints the line, that is when its
 *    `trace` file is read, not when the event happened; so the value that
 *    reproduces the kernel's text is the one of the moment the text was
 *    made.  /proc/timer_list (root) prints it ("jiffies: N") next to the
 *    monotonic time it was read at ("now at N nsecs").  A live report asks
 *    once, when the first print fmt needing it is compiled; a capture reads
 *    it right after copying the kernel's trace.txt and saves that value in
 *    its constants file (tb_kvars_set pins it).
 *  - HZ is CONFIG_HZ, a macro: no symbol, BTF or file of /proc or /sys has
 *    it.  /boot/config-RELEASE does on most distributions (exact);
 *    /proc/config.gz would too but is gzip, which the reading side does not
 *    link.  Otherwise it is measured: jiffies counts HZ ticks a second, so
 *    two readings of /proc/timer_list TB_HZ_PROBE_MS apart give the rate,
 *    rounded to the nearest value kernel/Kconfig.hz offers (100, 250, 300,
 *    1000: neighbours differ by 20 % or more, and the count is off by less
 *    than one tick, under 10 % of the 10 ticks of HZ=100).  The few
 *    architectures with other choices (alpha's 1024, mips' 1024 or 128)
 *    need the config file.
 *
 * Some x86-64 print fmts compute with variables of the memory layout, which
 * KASLR may randomise at boot: kmem:mm_page_alloc prints
 * (struct page *)vmemmap_base + pfn, and __va()/__pa() expand to
 * page_offset_base and phys_base.  They are data, not text, so kallsyms
 * without CONFIG_KALLSYMS_ALL does not list them, and /proc/kcore and
 * /dev/mem may be absent (they are on the kernels these tests run on).
 * What root can still read:
 *
 *  - phys_base: __pa(_text) = _text - __START_KERNEL_map + phys_base, and
 *    /proc/iomem names the physical start of "Kernel code" (= __pa(_text)),
 *    kallsyms the virtual _text; __START_KERNEL_map is the fixed
 *    0xffffffff80000000 of x86-64.
 *  - vmemmap_base: the kernel's own text of kmem:mm_page_alloc, printed in
 *    a private tracefs instance with hash-ptr off, holds page = vmemmap_base
 *    + pfn * sizeof(struct page) for every page it allocates, so
 *    vmemmap_base = page - pfn * sizeof(struct page) (two events must
 *    agree).
 *  - page_offset_base: no event or file readable here prints a direct-map
 *    address next to the physical address it maps, so it is not known;
 *    print fmts that need it cannot be printed exactly (none of the 6.18
 *    kernel's do).
 *
 * Ownership: a tb_kvars is a plain value the caller owns.
 */
#ifndef TRACEBUF_KVARS_H
#define TRACEBUF_KVARS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "btf.h"
#include "ksyms.h"
#include "tracebuf/schema.h"

#define TB_KVARS_MAX 8
#define TB_HZ_PROBE_MS 100 /* between the two readings that measure HZ */

struct tb_kvar {
	const char *name; /* a static string */
	uint64_t value;
};

struct tb_kvars {
	struct tb_kvar v[TB_KVARS_MAX];
	size_t n;
	unsigned tried; /* bit i: the probe looked for the i-th known name (or it was pinned) */
};

/* Whether name is a variable the probe knows how to look for. */
bool tb_kvars_known(const char *name);
/* The value of name if vars holds it. */
bool tb_kvars_get(const struct tb_kvars *vars, const char *name, uint64_t *value);
/*
 * Pin a known variable to a value found by the caller (a capture's jiffies
 * at its trace.txt); the probe will not look for it again.  0, or -EINVAL
 * if name is not known.
 */
int tb_kvars_set(struct tb_kvars *vars, const char *name, uint64_t value);

/*
 * phys_base from /proc/iomem (iomem: its text) and kallsyms' _text.  0 and
 * stored in *vars, or -ENOENT when either is missing or hidden (zeros).
 */
int tb_kvars_phys_base(const char *iomem, size_t len, const struct tb_ksyms *ksyms,
		       struct tb_kvars *vars);

/*
 * vmemmap_base from the kernel's text of kmem:mm_page_alloc events (trace:
 * the text of a `trace` file with hash-ptr off) and sizeof(struct page).
 * 0 and stored, -ENOENT if the text has no such event, -EINVAL if its
 * events disagree.
 */
int tb_kvars_vmemmap_base(const char *trace, size_t len, uint64_t page_size,
			  struct tb_kvars *vars);

/* One reading of the clock tick: jiffies, and the monotonic time (ns) it was read at. */
struct tb_jiffies_sample {
	uint64_t now_ns;
	uint64_t jiffies;
};

/*
 * The sample in /proc/timer_list's text: its "now at N nsecs" line and
 * its first "jiffies: N" line.  0, or -ENOENT if either is missing or not
 * a number.
 */
int tb_kvars_timer_list(const char *text, size_t len, struct tb_jiffies_sample *out);

/* Read /proc/timer_list now.  0, or -errno (-EACCES when not root), -ENOENT. */
int tb_kvars_jiffies_now(struct tb_jiffies_sample *out);

/*
 * HZ from a kernel config's text: its "CONFIG_HZ=N" line.  0 and stored,
 * -ENOENT if there is none or N is not a positive number.
 */
int tb_kvars_hz_config(const char *config, size_t len, struct tb_kvars *vars);

/*
 * HZ from two samples at least TB_HZ_PROBE_MS / 2 apart (b after a): the
 * ticks per second between them, rounded to the nearest of 100, 250, 300
 * and 1000.  0 and stored; -EINVAL if the samples are too close or out of
 * order, -ERANGE if the rate is not within 12 % of one of those values.
 */
int tb_kvars_hz_measured(const struct tb_jiffies_sample *a, const struct tb_jiffies_sample *b,
			 struct tb_kvars *vars);

/*
 * Probe the running kernel for the variable name (one tb_kvars_known()
 * accepts), once: a second call answers from vars.  tracefs is its mount
 * point, e.g. "/sys/kernel/tracing"; btf gives sizeof(struct page), ksyms
 * _text; either may be NULL, and then what needs it is not found.  The
 * vmemmap_base probe creates and removes the instance
 * tracefs/instances/tb-kvars-PID; nothing else of tracefs is touched.  The
 * HZ probe may wait TB_HZ_PROBE_MS.  0 and stored in vars, -ENOENT if not
 * found (why goes to diag, which may be NULL), -EINVAL if name is unknown.
 */
int tb_kvars_probe(const char *name, const char *tracefs, const struct tb_btf *btf,
		   const struct tb_ksyms *ksyms, struct tb_kvars *vars, tb_problem_fn *diag,
		   void *diag_ctx);

#endif
