/* SPDX-License-Identifier: MIT */
/*
 * demo.h - the events and the traced functions of examples/demo.c.
 *
 * The functions live in examples/demo/app.c, the only file of the demo
 * built with -finstrument-functions: their entries and exits are the
 * function-graph part of the trace, and the call nesting the demo's test
 * looks for is theirs:
 *
 *	handle_request
 *	    parse_path
 *	    lookup
 *	        hash_path
 *	        (on_signal, when a signal arrives in the middle: raise_in_lookup)
 *	send_blob
 *	    (on_signal, between the blob's reservation and its commit)
 *
 * Ownership: nothing here allocates; the blob buffer is the caller's.
 */
#ifndef TB_DEMO_H
#define TB_DEMO_H

#include <stddef.h>
#include <stdint.h>

#include "tracebuf/events.h"
#include "tracebuf/tracepoint.h"

/* One request served: the typed tracepoint every worker fires. */
TB_EVENT(demo, request,
	 TB_PROTO(int worker, int id, const char *path, uint32_t hash),
	 TB_FIELDS(tb_field(int, worker, worker), tb_field(int, id, id), tb_string(path, path),
		   tb_field(uint32_t, hash, hash)),
	 TB_PRINTK("worker=%d id=%d path=%s hash=%08x", REC->worker, REC->id, __get_str(path), REC->hash))

/* Written by the SIGUSR1 handler, in the middle of whatever its thread was writing. */
TB_EVENT(demo, signal,
	 TB_PROTO(int worker, int signo, unsigned nth),
	 TB_FIELDS(tb_field(int, worker, worker), tb_field(int, signo, signo), tb_field(unsigned, nth, nth)),
	 TB_PRINTK("worker=%d signo=%d nth=%u", REC->worker, REC->signo, REC->nth))

/* The worker number the calling thread's events carry (0: the main thread). */
void demo_set_worker(int worker);
/* Signals the calling thread has handled. */
unsigned demo_signals_handled(void);
/* Install on_signal as the SIGUSR1 handler (SA_RESTART).  0 or -1 (errno). */
int demo_install_handler(void);

/* Serve request id: parse_path, lookup (hash_path), the request event; a printf on a cache miss. */
uint32_t handle_request(int id);
/* The next handle_request raises SIGUSR1 inside lookup (a signal at a known depth). */
void demo_raise_in_lookup(void);

/*
 * Write len bytes of bytes as one blob, with SIGUSR1 raised between the
 * reservation and its commit: the handler's event is written while the blob
 * is open.  0 or tb_blob_write's errors.
 */
int send_blob(struct tb_ring *ring, const void *bytes, size_t len);

/* Keep the CPU busy for ms milliseconds of the calling thread's time (the sampler's subject). */
uint64_t crunch(unsigned ms);

/* demo --crash: write into a ring in shared memory at path and die by SIGKILL mid-write (crash.c). */
int demo_crash(const char *path);

#endif
