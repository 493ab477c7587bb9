// SPDX-License-Identifier: MIT
/*
 * events_schema.c - a schema of this process's own events, from the
 * registry (tracebuf/events.h), so that an in-process ring is read with
 * names and fields like a kernel capture: the registry writes the very
 * texts tracefs would show, and the usual loaders read them.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracebuf/events.h"
#include "tracebuf/schema.h"

static int load_owned(struct tb_schema *s, const char *file, char *text, size_t len,
		      int (*load)(struct tb_schema *, const char *, const char *, size_t))
{
	int rc;

	if (!text)
		return -ENOMEM;
	rc = load(s, file, text, len);
	free(text);
	return rc;
}

struct format_load {
	struct tb_schema *s;
	int rc;
};

static int load_format(void *ctx, const struct tb_events_info *ev)
{
	struct format_load *l = ctx;
	char file[3 * TB_NAME_MAX];
	int rc;

	snprintf(file, sizeof(file), "tracebuf:events/%s/%s/format", ev->system, ev->name);
	rc = tb_schema_load_format(l->s, file, ev->system, ev->format, ev->format_len);
	if (rc < 0 && l->rc == 0)
		l->rc = rc;
	return rc == -ENOMEM;
}

/* "TID COMM" lines, saved_cmdlines style, for the threads alive now. */
static char *thread_comms(size_t *len)
{
	DIR *dir = opendir("/proc/self/task");
	struct dirent *de;
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out) {
		if (dir)
			closedir(dir);
		return NULL;
	}
	while (dir && (de = readdir(dir)) != NULL) {
		char path[300], comm[64];
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f)) {
			comm[strcspn(comm, "\n")] = '\0';
			fprintf(out, "%s %s\n", de->d_name, comm);
		}
		fclose(f);
	}
	if (dir)
		closedir(dir);
	if (fclose(out) != 0) {
		free(text);
		return NULL;
	}
	*len = size;
	return text;
}

int tb_schema_load_events(struct tb_schema *s, size_t subbuf_size)
{
	struct format_load l = {s, 0};
	char *text;
	size_t len = 0;
	int rc;

	text = tb_events_header_page(subbuf_size);
	if (!text)
		return -EINVAL;
	rc = load_owned(s, "tracebuf:events/header_page", text, strlen(text), tb_schema_load_header_page);
	text = tb_events_header_event();
	if (rc == 0)
		rc = load_owned(s, "tracebuf:events/header_event", text, text ? strlen(text) : 0,
				tb_schema_load_header_event);
	else
		free(text);
	if (rc < 0)
		return rc;
	tb_events_foreach(load_format, &l);
	if (l.rc == -ENOMEM)
		return l.rc;
	text = tb_events_printk_formats(&len);
	if (text && len == 0) /* no tb_printf call sites */
		free(text);
	else if ((rc = load_owned(s, "tracebuf:printk_formats", text, len, tb_schema_load_printk_formats)) < 0)
		return rc;
	text = tb_events_kallsyms(&len);
	if (text && len == 0)
		free(text);
	else if ((rc = load_owned(s, "tracebuf:kallsyms", text, len, tb_schema_load_kallsyms)) < 0)
		return rc;
	text = thread_comms(&len);
	if (text && (rc = load_owned(s, "tracebuf:/proc/self/task", text, len, tb_schema_load_cmdlines)) < 0)
		return rc;
	return l.rc;
}
