// SPDX-License-Identifier: MIT
/*
 * event_select.c - enable the events `-e` names, by walking the instance's
 * events/ directory and writing each match's enable file.
 */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event_select.h"
#include "suggest.h"
#include "lib_internal.h"

/* The subdirectories of dir (each a system, or an event of one), sorted. */
static int list_dirs(const char *dir, char ***out)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), kept = 0;
	char **v;

	if (n < 0)
		return -errno;
	v = calloc((size_t)n + 1, sizeof(*v));
	for (int i = 0; i < n; i++) {
		char *path = v ? path_of(dir, names[i]->d_name) : NULL;
		if (names[i]->d_name[0] != '.' && path && is_directory(path))
			v[kept++] = strdup(names[i]->d_name);
		free(path);
		free(names[i]);
	}
	free(names);
	if (!v)
		return -ENOMEM;
	*out = v;
	return kept;
}

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* The number of events of a system: its subdirectories. */
static int count_events(const char *events, const char *system)
{
	char *dir = path_of(events, system), **evs = NULL;
	int n = dir ? list_dirs(dir, &evs) : -ENOMEM;

	free(dir);
	if (n > 0)
		free_list(evs, n);
	return n;
}

/*
 * Enable events/SYS/EVENT (event NULL: the whole system): the number of
 * events enabled (0 when there is no enable file: ftrace's own events have
 * none), or -errno.
 */
static int enable_one(const char *events, const char *system, const char *event, char *err, size_t err_size)
{
	char rel[512], *path;
	bool writable;
	int rc;

	snprintf(rel, sizeof(rel), "%s%s%s/enable", system, event ? "/" : "", event ? event : "");
	path = path_of(events, rel);
	writable = path && access(path, W_OK) == 0;
	free(path);
	if (!writable)
		return 0;
	rc = tracefs_write(events, rel, "1");
	if (rc < 0) {
		snprintf(err, err_size, "cannot enable %s%s%s: %s", system, event ? ":" : "",
			 event ? event : "", strerror(-rc));
		return rc;
	}
	if (event)
		return 1;
	rc = count_events(events, system);
	return rc > 0 ? rc : 1;
}

/* SYSTEM_GLOB:EVENT_GLOB over every system; event_glob NULL means the whole system. */
static int enable_matching(const char *events, char **systems, int nsys, const char *sys_glob,
			   const char *event_glob, char *err, size_t err_size)
{
	int total = 0;

	for (int i = 0; i < nsys; i++) {
		char *dir, **evs = NULL;
		int n, rc;

		if (fnmatch(sys_glob, systems[i], 0) != 0)
			continue;
		if (!event_glob || !strcmp(event_glob, "*")) {
			rc = enable_one(events, systems[i], NULL, err, err_size);
			if (rc < 0)
				return rc;
			total += rc;
			continue;
		}
		dir = path_of(events, systems[i]);
		n = dir ? list_dirs(dir, &evs) : -ENOMEM;
		free(dir);
		for (int k = 0; k < n; k++) {
			rc = fnmatch(event_glob, evs[k], 0) == 0
				 ? enable_one(events, systems[i], evs[k], err, err_size)
				 : 0;
			if (rc < 0) {
				free_list(evs, n);
				return rc;
			}
			total += rc;
		}
		if (n > 0)
			free_list(evs, n);
	}
	return total;
}

/* "; the closest: ..." - the kernel's event names nearest to item, which matched none. */
static const char *closest_events(const char *events, char **systems, int nsys, const char *item, char *buf,
				  size_t size)
{
	struct suggest s;

	suggest_init(&s, item);
	for (int i = 0; i < nsys; i++) {
		char *dir = path_of(events, systems[i]), **evs = NULL;
		int n = dir ? list_dirs(dir, &evs) : -ENOMEM;

		free(dir);
		suggest_offer(&s, systems[i]);
		for (int k = 0; k < n; k++)
			suggest_offer2(&s, systems[i], evs[k]);
		if (n > 0)
			free_list(evs, n);
	}
	return suggest_text(&s, buf, size);
}

static int enable_item(const char *events, char **systems, int nsys, char *item, char *err, size_t err_size)
{
	char *colon = strchr(item, ':');
	int rc;

	if (!item[0] || (colon && (colon == item || !colon[1]))) {
		snprintf(err, err_size, "empty event name in '%s'", item);
		return -EINVAL;
	}
	if (colon) {
		*colon = '\0';
		rc = enable_matching(events, systems, nsys, item, colon + 1, err, err_size);
		*colon = ':';
	} else {
		/* A system of that name first; else an event of that name anywhere. */
		rc = enable_matching(events, systems, nsys, item, NULL, err, err_size);
		if (rc == 0)
			rc = enable_matching(events, systems, nsys, "*", item, err, err_size);
	}
	if (rc == 0) {
		char near[1024];
		/* never the instance's path: the instance is gone by the time this is read */
		snprintf(err, err_size, "'%s' matches no event of this kernel%s", item,
			 closest_events(events, systems, nsys, item, near, sizeof(near)));
		return -ENOENT;
	}
	return rc;
}

int enable_events(const char *inst, const char *spec, char *err, size_t err_size)
{
	char *events = path_of(inst, "events"), *copy = strdup(spec), *save = NULL, **systems = NULL;
	int nsys = events ? list_dirs(events, &systems) : -ENOMEM, total = 0, rc = 0;

	if (nsys < 0 || !copy) {
		snprintf(err, err_size, "cannot list %s: %s", events ? events : "events",
			 strerror(nsys < 0 ? -nsys : ENOMEM));
		rc = nsys < 0 ? nsys : -ENOMEM;
	}
	for (char *item = rc ? NULL : strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		rc = enable_item(events, systems, nsys, item, err, err_size);
		if (rc < 0)
			break;
		total += rc;
		rc = 0;
	}
	if (nsys > 0)
		free_list(systems, nsys);
	free(events);
	free(copy);
	return rc < 0 ? rc : total;
}

int join_events(char **joined, const char *spec)
{
	size_t old = *joined ? strlen(*joined) : 0;
	char *grown = realloc(*joined, old + strlen(spec) + 2);

	if (!grown)
		return -ENOMEM;
	if (old)
		grown[old++] = ',';
	strcpy(grown + old, spec);
	*joined = grown;
	return 0;
}
