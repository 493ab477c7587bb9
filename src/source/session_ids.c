// SPDX-License-Identifier: MIT
/*
 * session_ids.c - event IDs that every process of a `tracebuf record`
 * session agrees on, unrelated programs included.
 *
 * A record holds only its event's ID, and a session's processes write into
 * one ring, so one ID must mean one event in all of them.  Processes of one
 * program agree by construction; two different programs would each hand
 * out IDs from 1000 up, and their records would be read as each other's.
 * So in a session (TRACEBUF_SHM_FORMATS=DIR) a dynamic ID comes from the
 * file DIR/event_ids, shared by the session's processes:
 *
 *     ID SYSTEM:NAME SHAPE
 *
 * one line an event, SHAPE a hash of its format text without the ID line.
 * The same event (name and shape) gets the ID it already has there; a new
 * one gets one above every ID in the file.  The file is read and extended
 * under flock(), at registration only, never on the write path.  Lines
 * that do not parse are skipped: the file is the session's, mode 0600 in a
 * 0700 directory, but a broken line must not make a process fail.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "util/pread_full.h"
#include "registry.h"

#define IDS_MAX_BYTES (4u << 20) /* 65535 lines of at most 64 bytes fit */

/* The file's whole text, NUL-terminated; NULL on failure or when too big. */
static char *read_all(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *text;
	int error; /* a failed read is a short one: either way the ids are not read */

	if (size < 0 || size > (off_t)IDS_MAX_BYTES || !(text = malloc((size_t)size + 1)))
		return NULL;
	if (tb__pread_full(fd, text, (size_t)size, 0, &error) != (size_t)size) {
		free(text);
		return NULL;
	}
	text[size] = '\0';
	return text;
}

/* The ID the file gives name with shape, or a free one above all of its IDs (0: none left). */
static unsigned find_or_next(const char *text, const char *name, uint64_t shape, unsigned floor,
			     bool (*taken)(unsigned), bool *found)
{
	unsigned next = floor;

	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		char lname[TB__SESSION_NAME_MAX + 1];
		unsigned id;
		uint64_t lshape;

		if (sscanf(line, "%u %" TB__SESSION_NAME_SCAN "s %" SCNx64, &id, lname, &lshape) != 3 || id > 65535)
			continue;
		if (!strcmp(lname, name) && lshape == shape && !taken(id)) {
			*found = true;
			return id;
		}
		if (id >= next)
			next = id + 1;
	}
	while (next <= 65535 && taken(next))
		next++;
	return next <= 65535 ? next : 0;
}

unsigned tb__session_event_id(const char *system, const char *name, uint64_t shape, unsigned floor,
			      bool (*taken)(unsigned))
{
	const char *dir = getenv("TRACEBUF_SHM_FORMATS");
	char path[PATH_MAX], full[TB__SESSION_NAME_MAX + 1], line[TB__SESSION_NAME_MAX + 48];
	unsigned id = 0;
	bool found = false;
	char *text;
	int fd, n;

	if (!dir || !*dir || snprintf(path, sizeof(path), "%s/event_ids", dir) >= (int)sizeof(path) ||
	    snprintf(full, sizeof(full), "%s:%s", system, name) >= (int)sizeof(full) || strpbrk(full, " \n"))
		return 0;
	fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX) == 0 && (text = read_all(fd))) {
		id = find_or_next(text, full, shape, floor, taken, &found);
		free(text);
		n = snprintf(line, sizeof(line), "%u %s %016" PRIx64 "\n", id, full, shape);
		/* O_APPEND and the lock: the line lands whole after every other process's */
		if (id && !found && write(fd, line, (size_t)n) != n)
			id = 0;
	}
	close(fd); /* drops the lock */
	return id;
}

uint64_t tb__session_shape(const char *text, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)text[i]) * 0x100000001b3ull;
	return h;
}
