// SPDX-License-Identifier: MIT
/*
 * shm_capture.c - the CLI's messages around a shared-memory session's
 * library side (shm_capture.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "shm_capture.h"
#include "tracebuf/tracedat.h"

int shmcap_say(const char *cmd, int rc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "tracebuf %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return rc;
}

/* The merge's warning, as the command says it. */
static void say_merge(void *cmd, const struct tb_problem *d)
{
	shmcap_say(cmd, 0, "%s", d->reason);
}

int shmcap_merge_desc(const char *cmd, const char *desc_dir, const char *cap, const struct tb_ring *ring)
{
	return shm_session_merge_desc(desc_dir, cap, ring, say_merge, (void *)cmd);
}

bool shmcap_say_damage(const char *cmd, const char *region, const struct tb_shm_window *w)
{
	if (!w->damaged)
		return false;
	fprintf(stderr, "tracebuf %s: %s: byte %llu: %s; rest of the sub-buffer skipped\n", cmd, region,
		(unsigned long long)w->damage_at, w->damage);
	if (w->damaged > 1)
		fprintf(stderr, "tracebuf %s: %s: %llu more sub-buffers cut short the same way\n", cmd, region,
			(unsigned long long)(w->damaged - 1));
	return true;
}

void shmcap_say_blobs(const char *cmd, const struct tb_blob_save_counts *blobs)
{
	if (blobs->saved || blobs->lost)
		shmcap_say(cmd, 0, "blobs: %llu saved (%llu bytes), %llu overwritten before they were saved",
			   (unsigned long long)blobs->saved, (unsigned long long)blobs->bytes,
			   (unsigned long long)blobs->lost);
}

int shmcap_window(const char *cmd, const char *cap, struct tb_ring *ring, struct tb_shm_window *w,
		  struct tb_blob_save_counts *blobs, struct shm_origins *origins)
{
	int rc = shm_session_window(cap, ring, w, blobs, origins);

	if (rc == -EFAULT && *tb_shm_error())
		shmcap_say(cmd, rc, "%s", tb_shm_error()); /* a --shm file shrunk under us */
	else if (rc < 0)
		shmcap_say(cmd, rc, "cannot write the pages to %s: %s", cap, strerror(-rc));
	return rc;
}

void shmcap_write_opts(const struct tb_ring *ring, struct tb_tracedat_write_opts *o)
{
	*o = (struct tb_tracedat_write_opts){.version = 6};
	shm_session_tsc2nsec(ring, &o->tsc2nsec_mult, &o->tsc2nsec_shift);
}

int shmcap_tracedat(const char *cmd, const char *cap, const char *out, const struct tb_ring *ring)
{
	struct tb_tracedat_write_opts o;
	int rc;

	shmcap_write_opts(ring, &o);
	rc = tb_tracedat_write_capture(cap, NULL, out, &o);
	if (rc < 0)
		shmcap_say(cmd, rc, "cannot write %s: %s", out, strerror(-rc));
	return rc;
}
