// SPDX-License-Identifier: MIT
/*
 * record_check.c - `record -e` items against the program's own events (see
 * record_check.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "record_check.h"
#include "suggest.h"
#include "lib_internal.h"

/* The "SYSTEM:NAME" of every event described. */
struct names {
	char **v;
	size_t n, cap;
};

static int add_name(struct names *ns, const char *system, const char *file)
{
	size_t len = strlen(file);
	char *name, **grown;

	if (len < 8 || strcmp(file + len - 7, ".format"))
		return 0;
	grown = tb__grow(ns->v, &ns->cap, ns->n + 1, sizeof(*grown), 32);
	if (!grown)
		return -ENOMEM;
	ns->v = grown;
	if (asprintf(&name, "%s:%.*s", system, (int)(len - 7), file) < 0)
		return -ENOMEM;
	ns->v[ns->n++] = name;
	return 0;
}

/* Process directory pdir's events, if its description is complete: 1 read, 0 not complete, or -errno. */
static int read_process(struct names *ns, const char *pdir)
{
	char path[4096];
	DIR *systems;
	struct dirent *s;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/trace_clock", pdir);
	if (access(path, F_OK) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/formats", pdir);
	if (!(systems = opendir(path)))
		return 0;
	while (rc == 0 && (s = readdir(systems))) {
		char sdir[4096 + 260];
		DIR *events;
		struct dirent *e;

		if (s->d_name[0] == '.')
			continue;
		snprintf(sdir, sizeof(sdir), "%s/%s", path, s->d_name);
		if (!(events = opendir(sdir)))
			continue;
		while (rc == 0 && (e = readdir(events)))
			rc = add_name(ns, s->d_name, e->d_name);
		closedir(events);
	}
	closedir(systems);
	return rc < 0 ? rc : 1;
}

/* Every complete description in desc_dir (pid > 0: that process's alone): how many, or -errno. */
static int read_descriptions(struct names *ns, const char *desc_dir, int pid)
{
	char pdir[4096];
	DIR *d;
	struct dirent *e;
	int found = 0, rc = 0;

	if (pid > 0) {
		snprintf(pdir, sizeof(pdir), "%s/%d", desc_dir, pid);
		return read_process(ns, pdir);
	}
	if (!(d = opendir(desc_dir)))
		return 0;
	while (rc >= 0 && (e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(pdir, sizeof(pdir), "%s/%s", desc_dir, e->d_name);
		rc = read_process(ns, pdir);
		found += rc > 0;
	}
	closedir(d);
	return rc < 0 ? rc : found;
}

/* Whether item names "SYSTEM:NAME" under the registry's rules (tracebuf/events.h). */
static bool item_matches(const char *item, const char *full)
{
	const char *colon = strchr(item, ':'), *fcolon = strchr(full, ':');
	char sys[256], fsys[256];

	if (!colon)
		return fnmatch(item, fcolon + 1, 0) == 0;
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - item), item);
	snprintf(fsys, sizeof(fsys), "%.*s", (int)(fcolon - full), full);
	return fnmatch(sys, fsys, 0) == 0 && (!colon[1] || fnmatch(colon + 1, fcolon + 1, 0) == 0);
}

static bool any_matches(const struct names *ns, const char *item)
{
	for (size_t i = 0; i < ns->n; i++)
		if (item_matches(item, ns->v[i]))
			return true;
	return false;
}

static void say_unknown(const char *cmd, const struct names *ns, const char *item)
{
	struct suggest s;
	char near[1024];

	suggest_init(&s, item);
	for (size_t i = 0; i < ns->n; i++)
		suggest_offer(&s, ns->v[i]);
	fprintf(stderr, "tracebuf %s: -e '%s' matches no event of the program%s\n", cmd, item,
		suggest_text(&s, near, sizeof(near)));
}

int record_check_events(const char *cmd, const char *desc_dir, const char *spec, int pid)
{
	struct names ns = {0};
	char *copy = strdup(spec), *save = NULL;
	int rc = copy ? read_descriptions(&ns, desc_dir, pid) : -ENOMEM;

	if (rc == 0)
		rc = 1; /* nothing to check against yet */
	else if (rc > 0)
		rc = 0;
	for (char *item = rc ? NULL : strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save))
		if (!any_matches(&ns, item)) {
			say_unknown(cmd, &ns, item);
			rc = -ENOENT;
		}
	for (size_t i = 0; i < ns.n; i++)
		free(ns.v[i]);
	free(ns.v);
	free(copy);
	return rc;
}
