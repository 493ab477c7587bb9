// SPDX-License-Identifier: MIT
/*
 * tep_trial.c - libtraceevent's parse of a format, tried in a child
 * process first (see tep_trial.h for why).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "tep_trial.h"

#define TRIAL_PARSED 42  /* child exit: libtraceevent parsed and printed it */
#define TRIAL_REFUSED 43 /* child exit: libtraceevent refused it cleanly */
#define TRIAL_CRASHED 44 /* child exit: it crashed */
#define TRIAL_SECONDS 5  /* a parser that hangs counts as a crash */

static void trial_crashed(int sig)
{
	(void)sig;
	_exit(TRIAL_CRASHED);
}

/*
 * In the child, a crash ends the child and nothing else: whatever crash
 * handlers the process had (a sanitizer's, a fuzzer's that saves the input)
 * belong to the parent.
 */
static void trial_signals(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = trial_crashed;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	signal(SIGALRM, SIG_DFL);
}

static int trial_parse(const char *text, size_t len, const char *system, const struct tb_format *f)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_record rec = {.size = (int)f->min_size};
	struct trace_seq seq;

	if (!tep || tep_parse_event(tep, text, len, system) != 0 || !tep_find_event(tep, (int)f->id))
		return TRIAL_REFUSED;
	rec.data = calloc(1, (size_t)f->min_size + 64);
	if (!rec.data)
		return TRIAL_REFUSED;
	memcpy(rec.data, &(uint16_t){(uint16_t)f->id}, 2);
	trace_seq_init(&seq);
	tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
	return TRIAL_PARSED; /* _exit() follows: nothing to free */
}

/* 0 if libtraceevent survives the format, -EFAULT if it crashed or hung. */
int tep_trial(const char *text, size_t len, const char *system,
			  const struct tb_format *f, int *how)
{
	int status = 0, null;
	pid_t pid = fork();

	if (pid < 0)
		return 0; /* cannot isolate: take the risk rather than lose the event */
	if (pid == 0) {
		null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO); /* a sanitizer's crash report is noise here */
		trial_signals();
		alarm(TRIAL_SECONDS);
		_exit(trial_parse(text, len, system, f));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 0;
	if (WIFEXITED(status) &&
	    (WEXITSTATUS(status) == TRIAL_PARSED || WEXITSTATUS(status) == TRIAL_REFUSED))
		return 0;
	*how = WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
	return -EFAULT;
}
