// SPDX-License-Identifier: MIT
/*
 * func_exclude.c - the function tracer's run-time exclusion list.
 *
 * Patterns are names; the hooks see addresses.  A pattern is turned into
 * addresses once, here, by reading the symbol tables of the executable and
 * of every shared library mapped now (the load bias from dl_iterate_phdr
 * plus each matching symbol's value), so the hooks only look an address up
 * in a hash set.  Every change builds a new set and publishes it whole; the
 * sets it replaces stay allocated (reachable from a list) because a hook on
 * another thread may still be reading one.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/elfsyms.h"
#include "func_internal.h"
#include "tracebuf/func.h"
#include "util/grow.h"

struct excl_entry {
	uint64_t fn;
	uint32_t flags;
};

/* Replaced tables, kept for hooks that may still hold them. */
struct retired {
	struct retired *next;
	struct excl_table *table;
};

static struct {
	pthread_mutex_t lock; /* writers of the list; hooks never take it */
	struct excl_entry *entries;
	size_t n, cap;
	struct retired *retired;
} ex = {.lock = PTHREAD_MUTEX_INITIALIZER};

_Atomic(struct excl_table *) excl_published;

/* Build the table for the current entries and publish it (lock held). */
static TB_NOTRACE int publish(void)
{
	struct excl_table *t = NULL, *old;
	struct retired *r = NULL;
	uint64_t slots = 16;

	if (ex.n) {
		while (slots < 2 * ex.n)
			slots *= 2;
		t = calloc(1, sizeof(*t) + slots * sizeof(t->slot[0]));
		r = malloc(sizeof(*r));
		if (!t || !r) {
			free(t);
			free(r);
			return -ENOMEM;
		}
		t->mask = slots - 1;
		for (size_t i = 0; i < ex.n; i++) {
			uint64_t k = excl_hash(ex.entries[i].fn) & t->mask;
			while (t->slot[k].fn && t->slot[k].fn != ex.entries[i].fn)
				k = (k + 1) & t->mask;
			t->slot[k].fn = ex.entries[i].fn;
			t->slot[k].flags |= ex.entries[i].flags;
		}
	}
	old = atomic_exchange_explicit(&excl_published, t, memory_order_acq_rel);
	if (old) {
		if (!r && !(r = malloc(sizeof(*r)))) {
			/* Cannot retire it: put it back rather than free what a hook may read. */
			atomic_store_explicit(&excl_published, old, memory_order_release);
			free(t);
			return -ENOMEM;
		}
		r->table = old;
		r->next = ex.retired;
		ex.retired = r;
	} else {
		free(r);
	}
	return 0;
}

static TB_NOTRACE int add_entry(uint64_t fn, uint32_t flags)
{
	struct excl_entry *grown = tb__grow(ex.entries, &ex.cap, ex.n + 1, sizeof(*grown), 64);
	if (!grown)
		return -ENOMEM;
	ex.entries = grown;
	ex.entries[ex.n++] = (struct excl_entry){fn, flags};
	return 0;
}

static TB_NOTRACE uint32_t flags_of(unsigned api_flags)
{
	return EXCL_SELF | (api_flags & TB_FUNC_EXCLUDE_CHILDREN ? EXCL_CHILDREN : 0);
}

TB_NOTRACE int tb_func_exclude_addr(const void *fn, unsigned flags)
{
	int rc;

	if (!fn)
		return -EINVAL;
	pthread_mutex_lock(&ex.lock);
	rc = add_entry((uint64_t)(uintptr_t)fn, flags_of(flags));
	if (rc == 0)
		rc = publish();
	pthread_mutex_unlock(&ex.lock);
	return rc;
}

TB_NOTRACE void tb_func_exclude_clear(void)
{
	pthread_mutex_lock(&ex.lock);
	ex.n = 0;
	publish(); /* publishing "nothing" allocates nothing that can fail but the retire node */
	pthread_mutex_unlock(&ex.lock);
}

/* ------------------------------------------------------ name patterns */

struct object {
	char path[PATH_MAX];
	uint64_t bias;
};

struct objects {
	struct object *list;
	size_t n, cap;
	int oom;
	int index;
};

static TB_NOTRACE int collect_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	struct objects *o = ctx;
	struct object *ob;

	(void)size;
	struct object *grown = tb__grow(o->list, &o->cap, o->n + 1, sizeof(*grown), 16);
	if (!grown) {
		o->oom = 1;
		return 1;
	}
	o->list = grown;
	ob = &o->list[o->n];
	if (o->index++ == 0 && !info->dlpi_name[0]) {
		ssize_t k = readlink("/proc/self/exe", ob->path, sizeof(ob->path) - 1);
		if (k <= 0)
			return 0;
		ob->path[k] = '\0';
	} else if (info->dlpi_name[0] == '/' && strlen(info->dlpi_name) < sizeof(ob->path)) {
		strcpy(ob->path, info->dlpi_name);
	} else {
		return 0;
	}
	ob->bias = info->dlpi_addr;
	o->n++;
	return 0;
}

/* Add every function of one object whose name matches; the count added. */
static TB_NOTRACE int match_object(const struct object *ob, const char *pattern, uint32_t flags)
{
	struct elf_syms syms;
	struct tb_problem err;
	int added = 0, rc;

	/* An object whose symbols cannot be read has nothing to match. */
	if (elf_syms_load(ob->path, &syms, &err) < 0)
		return 0;
	for (size_t i = 0; i < syms.n; i++) {
		if (fnmatch(pattern, elf_sym_name(&syms, &syms.syms[i]), 0) != 0)
			continue;
		rc = add_entry(ob->bias + syms.syms[i].addr, flags);
		if (rc < 0) {
			elf_syms_free(&syms);
			return rc;
		}
		added++;
	}
	elf_syms_free(&syms);
	return added;
}

TB_NOTRACE int tb_func_exclude(const char *pattern, unsigned flags)
{
	struct objects objs = {0};
	int total = 0, rc = 0;

	if (!pattern || !pattern[0])
		return -EINVAL;
	/* Collected first: the loader's lock is held during the callback. */
	dl_iterate_phdr(collect_object, &objs);
	if (objs.oom) {
		free(objs.list);
		return -ENOMEM;
	}
	pthread_mutex_lock(&ex.lock);
	for (size_t i = 0; i < objs.n && rc >= 0; i++) {
		rc = match_object(&objs.list[i], pattern, flags_of(flags));
		if (rc > 0)
			total += rc;
	}
	if (rc >= 0 && total)
		rc = publish();
	pthread_mutex_unlock(&ex.lock);
	free(objs.list);
	return rc < 0 ? rc : total;
}

/*
 * "pattern,pattern:children,...": each pattern excluded, with
 * TB_FUNC_EXCLUDE_CHILDREN when it ends in ":children".
 */
TB_NOTRACE int excl_from_env(const char *value)
{
	static const char children[] = ":children";
	char *copy = strdup(value), *save = NULL;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (char *p = strtok_r(copy, ",", &save); p && rc >= 0; p = strtok_r(NULL, ",", &save)) {
		size_t n = strlen(p), k = sizeof(children) - 1;
		unsigned flags = 0;

		if (n > k && !strcmp(p + n - k, children)) {
			p[n - k] = '\0';
			flags = TB_FUNC_EXCLUDE_CHILDREN;
		}
		if (*p)
			rc = tb_func_exclude(p, flags);
	}
	free(copy);
	return rc < 0 ? rc : 0;
}
