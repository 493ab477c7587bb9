// SPDX-License-Identifier: MIT
/*
 * marker_app - writes trace_marker lines from two threads pinned to CPU 0
 * and 1, as an application that logs through ftrace would: "request N from
 * worker W took U us", N lines each.  bench_report_kinds.sh runs it to make
 * its marker recording (not a bench itself).
 *
 *     marker_app TRACE_MARKER_PATH N
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char *marker;
static long lines;

static void *worker(void *arg)
{
	long cpu = (long)arg;
	cpu_set_t set;
	char buf[96];
	int fd;

	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set); /* a hint: one CPU still works */
	fd = open(marker, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		perror(marker);
		exit(1);
	}
	for (long i = 0; i < lines; i++) {
		int n = snprintf(buf, sizeof(buf), "request %ld from worker %ld took %ld us", i, cpu, i % 977);
		ssize_t w = write(fd, buf, (size_t)n);
		if (w < 0 && errno == EBADF) {
			/* the kernel's answer when the buffer is full (no overwrite): this thread is done */
			fprintf(stderr, "marker_app: worker %ld: the buffer is full after %ld lines\n", cpu, i);
			break;
		}
		if (w < 0) {
			perror("trace_marker");
			exit(1);
		}
	}
	close(fd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc != 3 || (lines = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: marker_app TRACE_MARKER_PATH N\n");
		return 2;
	}
	marker = argv[1];
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 1;
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
