// SPDX-License-Identifier: MIT
/*
 * tep_trial.c - libtraceevent's parse of a format, tried in a helper
 * process first (see tep_trial.h for why).
 *
 * The helper is forked on the first trial and answers trial after trial
 * over a socket, until it crashes on a format (the trial's point: that
 * format is then left out, and the next trial forks a new helper) or has
 * been idle TRIAL_IDLE_SECONDS.  It was a fork per format: for a process of
 * a few hundred MB (a sanitized fuzzer, or a report deep into a big file)
 * the copy of its page tables and the copy-on-write faults after every fork
 * were most of the cost of opening a small file.  What the helper answers is
 * what the child per format answered: it runs the same parse and print on a
 * fresh tep_handle each time, with the same crash handlers and time bound.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <traceevent/event-parse.h>

#include "tep_trial.h"

#define TRIAL_PARSED 42  /* answer, or child exit: libtraceevent parsed and printed it */
#define TRIAL_REFUSED 43 /* libtraceevent refused it cleanly */
#define TRIAL_CRASHED 44 /* child exit: it crashed */
#define TRIAL_IDLE 45    /* answer: the helper leaves, idle; ask a new one */
#define TRIAL_SECONDS 5  /* a parser that hangs counts as a crash */
#define TRIAL_IDLE_SECONDS 2 /* a helper keeps a copy of its parent's pages: not for ever */
#define TRIAL_MAX_TEXT (64u << 20) /* a request longer than any format: a broken socket */
#define HELPER_SOCKET 3  /* the helper's end of the socket, its only descriptor but 0-2 */

/* One question: the format's text and system follow, text_len and system_len bytes (its NUL included; 0: no system). */
struct trial_request {
	uint32_t text_len, system_len, id, min_size;
};

/*
 * The process's helper.  owner: the process that forked it - a child of a
 * user's process forked after (without exec) inherits these and must not
 * share the socket with its parent, so it makes its own.  Guarded by lock:
 * several threads may load formats at once, each question and answer is one
 * exchange.
 */
static struct {
	pthread_mutex_t lock;
	pid_t pid, owner;
	int fd;
} helper = {PTHREAD_MUTEX_INITIALIZER, 0, 0, -1};

static void trial_crashed(int sig)
{
	(void)sig;
	_exit(TRIAL_CRASHED);
}

/*
 * In the helper, a crash ends the helper and nothing else: whatever crash
 * handlers the process had (a sanitizer's, a fuzzer's that saves the input)
 * belong to the parent.
 */
static void trial_signals(void)
{
	static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};
	struct sigaction sa;
	sigset_t all;

	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL); /* the forking thread's mask must not hold off SIGALRM */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = trial_crashed;
	for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
		sigaction(fatal[i], &sa, NULL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL); /* its parent gone mid-answer: nothing left to do */
}

static int trial_parse(const char *text, size_t len, const char *system, uint32_t id, uint32_t min_size)
{
	struct tep_handle *tep = tep_alloc();
	struct tep_record rec = {.size = (int)min_size};
	struct trace_seq seq;
	int rc = TRIAL_REFUSED;

	if (tep && tep_parse_event(tep, text, len, system) == 0 && tep_find_event(tep, (int)id) &&
	    (rec.data = calloc(1, (size_t)min_size + 64))) {
		memcpy(rec.data, &(uint16_t){(uint16_t)id}, 2);
		trace_seq_init(&seq);
		tep_print_event(tep, &seq, &rec, "%s", TEP_PRINT_INFO);
		trace_seq_destroy(&seq);
		free(rec.data);
		rc = TRIAL_PARSED;
	}
	if (tep)
		tep_free(tep); /* the helper lives on: each trial's handle starts empty, as a child's did */
	return rc;
}

/* n bytes from fd; false at its end or on an error. */
static bool read_all(int fd, void *buf, size_t n)
{
	for (size_t got = 0; got < n;) {
		ssize_t r = read(fd, (char *)buf + got, n - got);
		if (r <= 0 && !(r < 0 && errno == EINTR))
			return false;
		got += r > 0 ? (size_t)r : 0;
	}
	return true;
}

/* n bytes to the socket fd (no SIGPIPE: a dead peer is an answer, not a signal); false on an error. */
static bool send_all(int fd, const void *buf, size_t n)
{
	for (size_t put = 0; put < n;) {
		ssize_t w = send(fd, (const char *)buf + put, n - put, MSG_NOSIGNAL);
		if (w < 0 && errno != EINTR)
			return false;
		put += w > 0 ? (size_t)w : 0;
	}
	return true;
}

/* One question read and answered; false when the helper should leave. */
static bool helper_answer(int fd)
{
	struct trial_request q;
	char *text, *system;
	uint8_t answer;

	if (!read_all(fd, &q, sizeof(q)) || q.text_len > TRIAL_MAX_TEXT || q.system_len > TRIAL_MAX_TEXT)
		return false;
	text = malloc((size_t)q.text_len + 1);
	system = malloc((size_t)q.system_len + 1);
	if (!text || !system || !read_all(fd, text, q.text_len) || !read_all(fd, system, q.system_len))
		_exit(TRIAL_CRASHED); /* no answer: the parent counts the format as one we could not try */
	text[q.text_len] = system[q.system_len] = '\0'; /* system's own NUL came with it */
	alarm(TRIAL_SECONDS); /* SIGALRM's default action ends the helper: the parent sees it killed */
	answer = (uint8_t)trial_parse(text, q.text_len, q.system_len ? system : NULL, q.id, q.min_size);
	alarm(0);
	free(text);
	free(system);
	return send_all(fd, &answer, 1);
}

/*
 * The helper's life: answers until its parent closes the socket or it has
 * been idle a while.  Leaving idle, it says so first (TRIAL_IDLE), so that a
 * question already on its way is asked again of a new helper rather than
 * taken for one it crashed on.
 */
static void helper_main(void)
{
	struct pollfd p = {.fd = HELPER_SOCKET, .events = POLLIN};
	uint8_t idle = TRIAL_IDLE;

	for (;;) {
		int n = poll(&p, 1, TRIAL_IDLE_SECONDS * 1000);
		if (n == 0) {
			send_all(HELPER_SOCKET, &idle, 1);
			break;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || !helper_answer(HELPER_SOCKET))
			break;
	}
	_exit(0);
}

/*
 * In the new helper: its end of the socket as HELPER_SOCKET, 0-2 on
 * /dev/null (a sanitizer's crash report is noise here), every other
 * descriptor closed - it must not keep a user's pipe or file open after
 * the user closed it.
 */
static void helper_descriptors(int sock)
{
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || dup2(sock, HELPER_SOCKET) < 0)
		_exit(TRIAL_CRASHED);
	for (int fd = 0; fd <= 2; fd++)
		dup2(null, fd);
	close_range(HELPER_SOCKET + 1, ~0u, 0);
}

/* A new helper, or false when none can be had. */
static bool helper_start(void)
{
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return false;
	}
	if (pid == 0) {
		helper_descriptors(sv[1]); /* the copy at HELPER_SOCKET has no close-on-exec, and no exec follows */
		trial_signals();
		helper_main();
	}
	close(sv[1]);
	helper.pid = pid;
	helper.owner = getpid();
	helper.fd = sv[0];
	return true;
}

/*
 * Forget the helper (it has left or died): reaped, how it ended in *status
 * - or as a crash when that cannot be known (a SIGCHLD set to SIG_IGN, or
 * the user's own wait() took it).
 */
static void helper_drop(int *status)
{
	close(helper.fd);
	*status = W_EXITCODE(TRIAL_CRASHED, 0);
	while (waitpid(helper.pid, status, 0) < 0 && errno == EINTR)
		;
	helper.fd = -1;
	helper.pid = 0;
}

enum exchange { ANSWERED, HELPER_GONE, HELPER_DIED };

/* One question to the helper: ANSWERED with *answer; HELPER_GONE if it had left (ask again); HELPER_DIED on it. */
static enum exchange ask(const struct trial_request *q, const char *text, const char *system, uint8_t *answer)
{
	if (!send_all(helper.fd, q, sizeof(*q)) || !send_all(helper.fd, text, q->text_len) ||
	    !send_all(helper.fd, system, q->system_len))
		return HELPER_GONE; /* it had left (idle) before this question */
	if (!read_all(helper.fd, answer, 1))
		return HELPER_DIED;
	return *answer == TRIAL_IDLE ? HELPER_GONE : ANSWERED;
}

void tep_trial_stop(void)
{
	int status;

	pthread_mutex_lock(&helper.lock);
	if (helper.pid && helper.owner == getpid())
		helper_drop(&status); /* our end closed: it reads the end of its questions and leaves */
	pthread_mutex_unlock(&helper.lock);
}

/* 0 if libtraceevent survives the format, -EFAULT if it crashed or hung. */
int tep_trial(const char *text, size_t len, const char *system,
			  const struct tb_format *f, int *how)
{
	struct trial_request q = {(uint32_t)len, system ? (uint32_t)strlen(system) + 1 : 0, f->id, f->min_size};
	enum exchange e = HELPER_GONE;
	uint8_t answer = 0;
	int status = 0;

	if (len > TRIAL_MAX_TEXT)
		return -EFAULT; /* no format is this long: not one to hand libtraceevent */
	pthread_mutex_lock(&helper.lock);
	if (helper.pid && helper.owner != getpid()) { /* our parent's (we were forked): leave it to it */
		close(helper.fd);
		helper.fd = -1;
		helper.pid = 0;
	}
	/* A helper that left idle is asked once more, of a new one; the second answer stands. */
	for (int tries = 0; tries < 2 && e == HELPER_GONE; tries++) {
		if (!helper.pid && !helper_start())
			break;
		e = ask(&q, text, system, &answer);
		if (e != ANSWERED)
			helper_drop(&status);
	}
	pthread_mutex_unlock(&helper.lock);
	if (e == ANSWERED || e == HELPER_GONE)
		return 0; /* parsed or refused; or cannot isolate: take the risk rather than lose the event */
	*how = WIFSIGNALED(status) ? WTERMSIG(status) : -WEXITSTATUS(status);
	return -EFAULT;
}

pid_t tep_trial_helper(void)
{
	pid_t pid;

	pthread_mutex_lock(&helper.lock);
	pid = helper.owner == getpid() ? helper.pid : 0;
	pthread_mutex_unlock(&helper.lock);
	return pid;
}
