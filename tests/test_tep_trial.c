// SPDX-License-Identifier: MIT
/*
 * test_tep_trial.c - libtraceevent's trial parse (src/decode/tep_trial.c):
 * a helper process answers format after format, a format libtraceevent
 * crashes on kills the helper and nothing else (it is reported, the next
 * trial gets a new helper), a helper that left idle is replaced without a
 * format being blamed, a forked child of the process asks a helper of its
 * own, and the helper keeps none of the process's descriptors open.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/tap.h"
#include "decode/tep_trial.h"
#include "tracebuf/schema.h"

#define DATA "tests/data/"
/* Print fmts libtraceevent 1.7.1 crashes on (found by fuzz_format), and a kernel's own. */
#define CRASHES_A DATA "bad/tep-trial/garbage-after-unknown-name.format"
#define CRASHES_B DATA "bad/tep-trial/9-byte-field-as-number.format"
#define GOOD DATA "kernel/formats/kmem/kmalloc.format"

struct text {
	char *p;
	size_t len;
	struct tb_format f;
};

static struct text load(const char *path)
{
	struct text t = {0};
	struct tb_problem err = {0};

	t.p = tap_slurp(path, &t.len);
	if (!t.p || tb_format_parse(t.p, t.len, &t.f, &err) != 0) {
		printf("Bail out! %s: cannot read or parse (%s)\n", path, err.reason);
		exit(1);
	}
	return t;
}

static int trial(const struct text *t, int *how)
{
	*how = 0;
	return tep_trial(t->p, t->len, "kmem", &t->f, how);
}

/* Whether pid is gone or a zombie (a helper that left, not yet reaped), waiting up to bound_s for it. */
static bool ended_within(pid_t pid, int bound_s)
{
	char path[64], buf[256];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < bound_s * 100; i++) {
		FILE *f = fopen(path, "r");
		char *close_paren;
		bool ended = !f || !fgets(buf, sizeof(buf), f) || !(close_paren = strrchr(buf, ')')) ||
			     close_paren[2] == 'Z';
		if (f)
			fclose(f);
		if (ended)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

static void check_one_helper(const struct text *good)
{
	int how, answered = 0;
	pid_t first;

	is_int(trial(good, &how), 0, "a kernel's format survives the trial");
	first = tep_trial_helper();
	ok(first > 0 && first != getpid(), "a helper process answered it (%d)", (int)first);
	for (int i = 0; i < 200; i++)
		answered += trial(good, &how) == 0 && tep_trial_helper() == first;
	is_int(answered, 200, "200 more trials, every one answered by the same helper: no fork per format");
}

static void check_crash(const struct text *good, const struct text *crash, const char *what)
{
	int how, rc;
	pid_t before = tep_trial_helper(), after;

	rc = trial(crash, &how);
	is_int(rc, -EFAULT, "%s: libtraceevent crashes in the trial, the process lives on", what);
	ok(how != 0, "%s: and how is said (%d: a signal, or minus the helper's exit status)", what, how);
	is_int(tep_trial_helper(), 0, "%s: the helper it killed is forgotten (and reaped)", what);
	ok(before <= 0 || waitpid(before, NULL, WNOHANG) < 0, "%s: no zombie left of it", what);
	is_int(trial(good, &how), 0, "%s: the next format is tried by a new helper", what);
	after = tep_trial_helper();
	ok(after > 0 && after != before, "%s: a new helper (%d, was %d)", what, (int)after, (int)before);
}

/*
 * A helper idle for its time leaves; the next trial, whichever moment it
 * comes (here: once the helper is seen gone), is answered by a new one and
 * blames nothing on the format.
 */
static void check_idle(const struct text *good)
{
	int how;
	pid_t old;

	trial(good, &how);
	old = tep_trial_helper();
	ok(old > 0 && ended_within(old, 60), "an idle helper leaves by itself (waited up to 60 s)");
	is_int(trial(good, &how), 0, "after it left, the format is still answered as surviving");
	ok(tep_trial_helper() > 0 && tep_trial_helper() != old, "by a new helper");
}

/* A child forked by the process (no exec) must not talk to its parent's helper over the same socket. */
static void check_forked_child(const struct text *good, const struct text *crash)
{
	pid_t parent_helper, child;
	int status = 0, how;

	trial(good, &how);
	parent_helper = tep_trial_helper();
	child = fork();
	if (child == 0) {
		/* exit status: 0 all right; 1 shared the parent's helper; 2 wrong answers */
		if (tep_trial_helper() != 0)
			_exit(1);
		if (trial(good, &how) != 0 || trial(crash, &how) != -EFAULT || trial(good, &how) != 0)
			_exit(2);
		_exit(tep_trial_helper() == parent_helper ? 1 : 0);
	}
	ok(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "a forked child gets helpers of its own and right answers (status %d)", status);
	is_int(tep_trial_helper(), parent_helper, "the parent keeps its helper");
	is_int(trial(good, &how), 0, "and it still answers");
}

/* The helper holds none of the process's descriptors: a pipe the process closes ends for its reader. */
static void check_descriptors(const struct text *good, const struct text *crash)
{
	int fds[2], how;
	struct pollfd p;
	char c;

	if (pipe(fds) < 0) {
		printf("Bail out! pipe: %s\n", strerror(errno));
		exit(1);
	}
	trial(crash, &how); /* the next trial forks a helper while the pipe is open */
	is_int(trial(good, &how), 0, "a helper forked while a pipe was open");
	close(fds[1]);
	p = (struct pollfd){.fd = fds[0], .events = POLLIN};
	ok(poll(&p, 1, 30 * 1000) == 1 && read(fds[0], &c, 1) == 0,
	   "closing the pipe's only writer ends it for the reader: the helper kept no copy");
	close(fds[0]);
}

int main(void)
{
	struct text good = load(GOOD), crash_a = load(CRASHES_A), crash_b = load(CRASHES_B);

	signal(SIGPIPE, SIG_DFL); /* a write to a gone helper must not end the process */
	check_one_helper(&good);
	check_crash(&good, &crash_a, "garbage after an unknown name");
	check_crash(&good, &crash_b, "a 9-byte field printed as a number");
	check_forked_child(&good, &crash_a);
	check_descriptors(&good, &crash_a);
	check_idle(&good);
	tb_format_free(&good.f);
	tb_format_free(&crash_a.f);
	tb_format_free(&crash_b.f);
	free(good.p);
	free(crash_a.p);
	free(crash_b.p);
	return done_testing();
}
