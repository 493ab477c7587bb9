/* SPDX-License-Identifier: MIT */
/*
 * kvars.h - values of kernel variables that print fmts use, found on the
 * running kernel.
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

#define TB_KVARS_MAX 4

struct tb_kvar {
	const char *name; /* a static string */
	uint64_t value;
};

struct tb_kvars {
	struct tb_kvar v[TB_KVARS_MAX];
	size_t n;
};

/* Whether name is a variable the probe knows how to look for. */
bool tb_kvars_known(const char *name);
/* The value of name if vars holds it. */
bool tb_kvars_get(const struct tb_kvars *vars, const char *name, uint64_t *value);

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

/*
 * Probe the running kernel for every variable above (tracefs: its mount
 * point, e.g. "/sys/kernel/tracing"; btf for sizeof(struct page); ksyms
 * for _text; either may be NULL, and then what needs it is not found).
 * The vmemmap_base probe creates and removes the instance
 * tracefs/instances/tb-kvars-PID; nothing else of tracefs is touched.
 * Returns the number of variables found; problems go to diag (may be NULL).
 */
int tb_kvars_probe(const char *tracefs, const struct tb_btf *btf, const struct tb_ksyms *ksyms,
		   struct tb_kvars *vars, tb_diag_fn *diag, void *diag_ctx);

#endif
