// SPDX-License-Identifier: MIT
/* sql_record.c - the checks of a record every SQL writer makes (sql_record.h). */
#include "sql_record.h"

#include <string.h>

#include "tracebuf/problem.h"

int64_t sql_record_pid(const struct merged_record *r)
{
	int32_t p;

	if (r->len < 8)
		return -1;
	memcpy(&p, r->data + 4, 4);
	return p;
}

void sql_record_first_of_id(struct tb_capture *c, uint8_t *id_seen, const struct merged_record *r,
			    const struct tb_format *f)
{
	if (id_seen[r->id / 8] & (1u << (r->id % 8)))
		return;
	id_seen[r->id / 8] |= (uint8_t)(1u << (r->id % 8));
	tb_capture_event_seen(c, r->id);
	if (!f)
		tb_capture_problem(c, r->file, r->file_offset,
				   "event id %u has no format (first record of it; all load as events with no name)",
				   r->id);
}

bool sql_record_intact(struct tb_capture *c, const struct merged_record *r, const struct tb_format *f,
		       const char *sys)
{
	struct tb_problem err = {0};

	if ((sys && !strcmp(sys, "ftrace")) || tb_schema_check_record(f, r->data, r->len, &err) == 0)
		return true;
	tb_capture_problem(c, r->file, r->file_offset + err.offset, "%s; record skipped", err.reason);
	return false;
}

const char *sql_default_host(const char *path)
{
	size_t n = strlen(path);

	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *slash = memrchr(path, '/', n ? n - 1 : 0);
	return slash ? slash + 1 : path;
}
