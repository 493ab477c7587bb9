// SPDX-License-Identifier: MIT
/*
 * tracebuf snapshot SESSION -o FILE.dat
 * tracebuf recover SHMFILE -o FILE.dat
 *
 * Both write what a shared-memory ring (tracebuf/shm.h) holds as a
 * trace.dat, with the event descriptions its processes left beside it
 * (shm_capture.h), and neither consumes anything.
 *
 * snapshot maps the live region as a reader (header private and checked)
 * and copies the window of pages while the writers go on (a page a writer
 * claims during its copy is dropped and counted): a flight recorder's
 * last seconds, on demand.
 *
 * recover is for after the writers died (SIGKILL, SIGSEGV, abort - at any
 * instruction of a write): the file is first copied into private memory,
 * so nothing can change under the checks, and the window of that copy is
 * written.  A record is in it exactly when its section's final store (the
 * tail word) happened: every committed event, never an uncommitted or
 * torn one.  The writes begun and never committed are counted exactly
 * from the region's table of writes begun per thread (shm_window.c) and
 * reported as in flight.
 *
 * Exit status: cli_opts.h's table; 1 is written but damage was skipped.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_progress.h"
#include "cmds.h"
#include "shm_capture.h"
#include "tracebuf/shm.h"
#include "lib_internal.h"

struct request {
	const char *cmd;
	const char *session;
	const char *out;
	const char *desc; /* --formats: where the descriptions are */
	bool progress;	  /* the progress line (cli_progress.h) */
};

enum { O_OUTPUT, O_FORMATS, O_N };
static const struct cli_opt opts[] = {
    [O_OUTPUT] = {"output", 'o', CLI_STRING, "FILE", "the trace.dat to write (required)", "-o"},
    [O_FORMATS] = {"formats", 0, CLI_STRING, "DIR",
		   "where the processes described their events (default: SESSION.formats, or record's for a memfd)"},
};

static int run_snapshot(int argc, char **argv);
static int run_recover(int argc, char **argv);

const struct cli_command cli_snapshot = {
    "snapshot", "copy what a flight-recorder session holds now into a trace.dat", "SESSION -o FILE.dat [OPTIONS]",
    "Copy what the session's ring holds now (SESSION: the path `tracebuf record` printed) into a trace.dat, "
    "without stopping its writers.",
    opts, O_N, .run = run_snapshot, .long_work = true,
    .exit_notes = "written, but damage in the region was skipped (said on stderr)",
};

const struct cli_command cli_recover = {
    "recover", "the committed events of a session whose writers died, as a trace.dat",
    "SHMFILE -o FILE.dat [OPTIONS]",
    "Write every committed event of a ring whose writers died into a trace.dat, and say how many writes were "
    "in flight.",
    opts, O_N, .run = run_recover, .long_work = true,
    .exit_notes = "written, but damage in the region was skipped (said on stderr)",
};

/* CLI_PARSED with rq set, or the exit status. */
static int parse(const struct cli_command *cmd, int argc, char **argv, struct request *rq, struct cli_args *a)
{
	int rc = cli_parse(cmd, argc, argv, a);

	if (rc != CLI_PARSED)
		return rc;
	rq->out = cli_str(a, O_OUTPUT);
	rq->desc = cli_str(a, O_FORMATS);
	rq->progress = cli_show_progress(a);
	if (a->noperands != 1)
		return cli_usage_error(cmd, a->noperands ? "one %s only" : "the %s is missing",
				       cmd == &cli_recover ? "SHMFILE" : "SESSION");
	if (!rq->out)
		return cli_usage_error(cmd, "the output is missing: -o FILE.dat");
	rq->session = a->operands[0];
	return CLI_PARSED;
}

/* The descriptions into a capture directory, then they and the window of ring out. */
static int write_window(const struct request *rq, struct tb_shm *shm, struct tb_shm_window *w)
{
	struct tb_ring *ring = tb_shm_ring(shm);
	char tmp[PATH_MAX], cap[PATH_MAX + 16], desc[PATH_MAX];
	int rc, found;

	if (rq->desc)
		snprintf(desc, sizeof(desc), "%s", rq->desc);
	else
		shmcap_desc_dir(rq->session, desc, sizeof(desc));
	if ((rc = shmcap_tmpdir(rq->cmd, 1, tmp, sizeof(tmp))) < 0)
		return shmcap_say(rq->cmd, rc, "cannot create a temporary directory: %s", strerror(-rc));
	snprintf(cap, sizeof(cap), "%s/capture", tmp);
	rc = make_dirs(cap);
	found = rc == 0 ? shmcap_merge_desc(rq->cmd, desc, cap, ring) : 0;
	if (found == 0 && rc == 0)
		shmcap_say(rq->cmd, 0, "no event descriptions in %s: events print without names", desc);
	if (rc == 0 && found >= 0)
		rc = shmcap_stream(rq->cmd, cap, rq->out, shm, w);
	shmcap_rmtree(tmp);
	return rc < 0 ? rc : found < 0 ? found : 0;
}

static void say_window(const struct request *rq, const struct tb_shm_window *w)
{
	fprintf(stderr, "tracebuf %s: %s: %llu events in %llu pages; %llu lost before the window", rq->cmd, rq->out,
		(unsigned long long)w->events, (unsigned long long)w->pages, (unsigned long long)w->lost_before);
	if (w->lost_inside)
		fprintf(stderr, ", %llu overwritten while copied", (unsigned long long)w->lost_inside);
	fprintf(stderr, "\n");
	if (w->bad)
		fprintf(stderr, "tracebuf %s: %s: %llu control words out of range: their data was skipped\n",
			rq->cmd, rq->session, (unsigned long long)w->bad);
	shmcap_say_damage(rq->cmd, rq->session, w);
}

/* Open the region (attach or load), write its window, say what it held: the exit status. */
static int window_command(const struct cli_command *cmd, struct request *rq, int argc, char **argv,
			  int (*open_region)(const char *path, struct tb_shm **out), const char *open_what)
{
	struct tb_shm_window w;
	struct tb_shm *shm;
	struct cli_args a;
	int rc = parse(cmd, argc, argv, rq, &a);

	cli_free(&a);
	if (rc != CLI_PARSED)
		return rc;
	rc = open_region(rq->session, &shm);
	if (rc < 0)
		return shmcap_say(rq->cmd, CLI_EXIT_INPUT, "cannot read the %s: %s", open_what, tb_shm_error());
	struct cli_progress *pg = cli_progress_start_writing(cmd, rq->progress, rq->out);
	rc = write_window(rq, shm, &w);
	cli_progress_stop(pg);
	tb_shm_close(shm);
	if (rc < 0)
		return CLI_EXIT_OUTPUT; /* said by write_window */
	say_window(rq, &w);
	/*
	 * Exact from the region's table of writes begun per thread; a table
	 * that does not balance (scribbled) leaves the count of what dead
	 * sections left, one per CPU at most: a lower bound, said so
	 * (docs/design.md §10).
	 */
	if (!strcmp(rq->cmd, "recover")) {
		if (w.table_bad)
			fprintf(stderr, "tracebuf recover: the table of writes begun does not balance with the events "
					"committed (scribbled): the count below is a lower bound\n");
		fprintf(stderr, "tracebuf recover: %s%llu write%s in flight (begun, never committed: not recovered)\n",
			w.in_flight_exact ? "" : "at least ", (unsigned long long)w.in_flight,
			w.in_flight == 1 ? "" : "s");
	}
	return w.bad || w.damaged ? 1 : 0;
}

/* snapshot: the live region, mapped as a reader (header private and checked). */
static int attach_reader(const char *path, struct tb_shm **out)
{
	return tb_shm_attach(path, TB_SHM_READER, out);
}

static int run_snapshot(int argc, char **argv)
{
	struct request rq = {.cmd = "snapshot"};

	return window_command(&cli_snapshot, &rq, argc, argv, attach_reader, "session");
}

/* recover: the file copied into private memory first. */
static int run_recover(int argc, char **argv)
{
	struct request rq = {.cmd = "recover"};

	return window_command(&cli_recover, &rq, argc, argv, tb_shm_load, "region");
}
