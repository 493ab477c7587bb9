/*
 * The live "identical to the kernel" harness: many trace systems at once on
 * this machine's kernel, `tracebuf report` against the kernel's own `trace`.
 *
 * `tracebuf capture --with-trace --no-hash-ptr` traces this program's own
 * workload (run again as `--workload`) in a private instance with syscalls,
 * sched, irq, timer, workqueue, block, writeback, kmem, net, sock, skb, tcp,
 * signal, the events of the file system the work goes to (ext4 here) and
 * markers (trace_marker and trace_marker_raw) enabled; the workload makes
 * each fire: file writes with fsync and a read back, a loopback TCP
 * connection, a few processes (one killed by a signal), timers.  Then the
 * report of the capture is compared with the kernel's trace.txt line by
 * line (tests/lib/identical.h: pairing, masking rules, tables), and at
 * least 99.5 % of the lines must be identical.
 *
 * Needs root and tracefs; skips otherwise.  The instance is tracebuf
 * capture's own and is removed by it (checked here).  TB_KEEP=DIR keeps the
 * capture in DIR (which must not exist); TB_DIFF_LIMIT=N shows only the
 * first N differing pairs; scripts/live-compare.sh runs this verbosely.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/identical.h"
#include "lib/tap.h"

#define TRACEFS	    "/sys/kernel/tracing"
#define MIN_PERCENT 99.5
#define BUFFER_KB   "16384" /* per CPU: the whole machine's syscalls and kmem land in it too */
#define SYSTEMS	    "syscalls,sched,irq,timer,workqueue,block,writeback,kmem,net,sock,skb,tcp,signal"

/* ------------------------------------------------------------ workload */

static void marker(const char *inst, const char *file, const void *data, size_t len)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", inst, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, data, len);
		close(fd);
	}
}

/* Writes with fsync and a read back: block, the file system, writeback, kmem. */
static void file_io(const char *dir)
{
	char path[PATH_MAX], buf[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/workload-file", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	memset(buf, 'x', sizeof(buf));
	for (int i = 0; i < 32; i++)
		(void)!write(fd, buf, sizeof(buf));
	fsync(fd);
	lseek(fd, 0, SEEK_SET);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	unlink(path);
}

/* A loopback TCP connection with data both ways: net, sock, skb, tcp. */
static void tcp_loopback(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c = -1, s = -1;
	char buf[16384];

	memset(buf, 'n', sizeof(buf));
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &alen) < 0)
		goto out;
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 || (s = accept(l, NULL, NULL)) < 0)
		goto out;
	for (int i = 0; i < 4; i++) {
		(void)!write(c, buf, sizeof(buf));
		(void)!read(s, buf, sizeof(buf));
		(void)!write(s, buf, 100);
		(void)!read(c, buf, 100);
	}
	shutdown(c, SHUT_WR);
out:
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	if (l >= 0)
		close(l);
}

/* A few processes: fork, exec, exit, wait; one killed by a signal. */
static void processes(void)
{
	pid_t kids[3];

	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			if (i == 2) {
				pause();
				_exit(0);
			}
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
	}
	usleep(2000);
	if (kids[2] > 0)
		kill(kids[2], SIGUSR1);
	for (int i = 0; i < 3; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
}

/* Sleeps and a timerfd: hrtimers, timer wheel, wakeups. */
static void timers(void)
{
	struct itimerspec its = {.it_value = {0, 2000000}};
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	uint64_t ticks;

	for (int i = 0; i < 3; i++)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	if (tfd >= 0 && timerfd_settime(tfd, 0, &its, NULL) == 0)
		(void)!read(tfd, &ticks, sizeof(ticks));
	if (tfd >= 0)
		close(tfd);
}

static int workload(void)
{
	const char *inst = getenv("TRACEBUF_INSTANCE"), *dir = getenv("TB_WORKDIR");
	static const uint8_t raw[] = {0xcd, 0xab, 0, 0, 'R', 'A', 'W', '1', 0, 1, 2, 3, 0xfe, 0xff};

	if (!inst || !dir)
		return 2;
	marker(inst, "trace_marker", "tb-live start", 13);
	marker(inst, "trace_marker_raw", raw, sizeof(raw));
	file_io(dir);
	tcp_loopback();
	processes();
	timers();
	marker(inst, "trace_marker", "tb-live with newline\n", 21);
	marker(inst, "trace_marker", "tb-live end", 11);
	return 0;
}

/* ------------------------------------------------------------- harness */

/* The events/ system named after the file system dir is on ("ext4"), or NULL. */
static char *fs_system(const char *dir)
{
	char *mounts = tap_slurp("/proc/self/mounts", NULL), *best = NULL, *save = NULL;
	size_t best_len = 0;

	for (char *line = mounts ? strtok_r(mounts, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char dev[256], where[1024], type[64], path[PATH_MAX];
		size_t n;
		if (sscanf(line, "%255s %1023s %63s", dev, where, type) != 3)
			continue;
		n = strlen(where);
		snprintf(path, sizeof(path), TRACEFS "/events/%s", type);
		if (!strncmp(dir, where, n) && (dir[n] == '/' || dir[n] == '\0' || n == 1) && n >= best_len &&
		    access(path, F_OK) == 0) {
			free(best);
			best = strdup(type);
			best_len = n;
		}
	}
	free(mounts);
	return best;
}

static char *meta_value(const char *dir, const char *key)
{
	char path[PATH_MAX + 64], *text, *p, *v = NULL;

	snprintf(path, sizeof(path), "%s/meta.txt", dir);
	text = tap_slurp(path, NULL);
	for (p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, strlen(key)) && p[strlen(key)] == ':') {
			p += strlen(key) + 2;
			v = strndup(p, strcspn(p, "\n"));
			break;
		}
	free(text);
	return v;
}

static void remove_tree(const char *dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

static const char *const fired[] = {"syscalls",	 "sched", "irq", "timer", "workqueue", "kmem",	 "block",
				    "writeback", "net",	  "skb", "sock",  "tcp",       "signal", "ftrace"};

int main(int argc, char **argv)
{
	const char *b = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build", *keep = getenv("TB_KEEP");
	char work[64] = "/tmp/tb-live-identical-XXXXXX", cap[PATH_MAX + 8], self[PATH_MAX];
	char cmd[4 * PATH_MAX], inst[PATH_MAX + 64], *fs, *name, *options;
	struct identical id;
	int status;

	if (argc > 1 && !strcmp(argv[1], "--workload"))
		return workload();
	if (geteuid() != 0)
		skip_all("needs root to create a tracefs instance");
	if (access(TRACEFS "/instances", F_OK) != 0)
		skip_all("tracefs is not available at " TRACEFS);
	if (!realpath("/proc/self/exe", self) || !mkdtemp(work))
		skip_all("no temporary directory");
	snprintf(cap, sizeof(cap), "%s%s", keep ? keep : work, keep ? "" : "/cap");
	fs = fs_system(work);
	alarm(300);

	snprintf(cmd, sizeof(cmd),
		 "TB_WORKDIR='%s' %s/tracebuf capture -e " SYSTEMS "%s%s --no-hash-ptr --with-trace "
		 "-b " BUFFER_KB " -o '%s' -- '%s' --workload",
		 work, b, fs ? "," : "", fs ? fs : "", cap, self);
	diag("%s", cmd);
	status = system(cmd);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "tracebuf capture of the workload: exit status 0");
	name = meta_value(cap, "instance");
	snprintf(inst, sizeof(inst), TRACEFS "/instances/%s", name ? name : "?");
	ok(name && access(inst, F_OK) != 0, "its instance %s was removed", name ? name : "(unknown)");
	snprintf(cmd, sizeof(cmd), "%s/trace_options", cap);
	options = tap_slurp(cmd, NULL);
	ok(options && strstr(options, "nohash-ptr"), "the capture was made with hash-ptr off");

	identical_check_capture(cap, MIN_PERCENT, &id);
	for (size_t i = 0; i < sizeof(fired) / sizeof(fired[0]); i++)
		ok(identical_system_lines(&id, fired[i]) > 0, "the workload made %s fire (%zu lines)",
		   fired[i], identical_system_lines(&id, fired[i]));
	if (fs)
		ok(identical_system_lines(&id, fs) > 0, "the workload made %s fire (%zu lines)", fs,
		   identical_system_lines(&id, fs));
	identical_check_writeback(&id, true);
	identical_free(&id);

	if (keep)
		diag("capture kept in %s", cap);
	remove_tree(work);
	free(fs), free(name), free(options);
	return done_testing();
}
