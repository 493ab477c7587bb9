/*
 * quickstart - a program with one tracepoint: the README's tour.
 *
 * Two threads.  "producer" computes a checksum per job, fires the
 * tracepoint quickstart:job and sends the checksum down a pipe, resting
 * 5 ms after every tenth job; "consumer" blocks reading the pipe.  Nothing
 * here sets up tracing: run under `tracebuf record`, libtracebuf joins the
 * session's ring before main (the record command puts its name in the
 * environment), and the kernel recorded beside it sees the producer sleep
 * in nanosleep and the consumer block in the pipe's read.  Run alone, the
 * tracepoint is off: one load and a branch.
 *
 *   cc -o quickstart examples/quickstart.c $(pkg-config --cflags --libs tracebuf)
 *   tracebuf record -o quickstart.dat -- ./quickstart
 *   tracebuf report quickstart.dat
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pthread_setname_np: the names the trace shows */
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <tracebuf/tracepoint.h>

/* The event, declared once: its record, its format file and tb_trace_quickstart_job(). */
TB_EVENT(quickstart, job, TB_PROTO(int id, uint64_t checksum),
	 TB_FIELDS(tb_field(int, id, id), tb_field(uint64_t, checksum, checksum)),
	 TB_PRINTK("id=%d checksum=%llx", REC->id, (unsigned long long)REC->checksum))

enum { JOBS = 200, REST_EVERY = 10, REST_NS = 5000000 };

static int job_pipe[2];

/* Some work to show on the CPU between the waits: FNV-1a over the job's numbers. */
static uint64_t job_checksum(int id)
{
	uint64_t hash = 1469598103934665603u;

	for (int i = 0; i < 20000; i++)
		hash = (hash ^ (uint64_t)(id + i)) * 1099511628211u;
	return hash;
}

static void *producer(void *unused)
{
	(void)unused;
	pthread_setname_np(pthread_self(), "producer");
	for (int id = 0; id < JOBS; id++) {
		uint64_t checksum = job_checksum(id);

		tb_trace(quickstart, job, id, checksum);
		if (write(job_pipe[1], &checksum, sizeof(checksum)) != sizeof(checksum))
			break;
		if (id % REST_EVERY == REST_EVERY - 1)
			nanosleep(&(struct timespec){.tv_nsec = REST_NS}, NULL);
	}
	close(job_pipe[1]); /* the consumer's read then returns 0 */
	return NULL;
}

static void *consumer(void *jobs_received)
{
	unsigned *received = jobs_received;
	uint64_t checksum;

	pthread_setname_np(pthread_self(), "consumer");
	/* 8 bytes are below PIPE_BUF: each write arrives whole in one read. */
	while (read(job_pipe[0], &checksum, sizeof(checksum)) == sizeof(checksum))
		(*received)++;
	return NULL;
}

int main(void)
{
	pthread_t threads[2];
	unsigned received = 0;

	if (pipe(job_pipe) < 0) {
		perror("quickstart: pipe");
		return 1;
	}
	pthread_create(&threads[0], NULL, consumer, &received);
	pthread_create(&threads[1], NULL, producer, NULL);
	pthread_join(threads[1], NULL);
	pthread_join(threads[0], NULL);
	printf("quickstart: %u of %d jobs done, each fired quickstart:job\n", received, JOBS);
	return received == JOBS ? 0 : 1;
}
