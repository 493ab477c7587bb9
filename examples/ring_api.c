/*
 * ring_api - the ring without tracepoints: write from two threads with
 * tb_write and tb_reserve/tb_commit, then read it back (docs/library.md).
 *
 *   cc -Iinclude examples/ring_api.c build/libtracebuf.a -lpthread
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "tracebuf/reader.h"
#include "tracebuf/ring.h"
#include "tracebuf/stats.h"

struct sample {
	int thread;
	int n;
};

static struct tb_ring *ring;

static void *worker(void *arg)
{
	int id = *(int *)arg;

	for (int n = 0; n < 1000; n++) {
		struct sample s = {id, n};
		tb_write(ring, &s, sizeof(s)); /* never blocks; refusals are counted */
	}
	/* Or build the event in place: */
	struct sample *s = tb_reserve(ring, sizeof(*s));
	if (s) {
		s->thread = id;
		s->n = -1;
		tb_commit(ring, s);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];
	int ids[2] = {1, 2};
	struct tb_read_event ev;
	unsigned long events = 0, lost = 0;

	if (tb_ring_new(&ring, NULL) < 0) /* defaults: 1408 KiB per CPU, overwrite */
		return 1;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &ids[i]);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);

	while (tb_consume_merged(ring, &ev) == 1) {
		if (ev.kind == TB_READ_LOST) {
			printf("CPU:%u [LOST %llu EVENTS]\n", ev.cpu, (unsigned long long)ev.lost);
			lost += ev.lost;
			continue;
		}
		const struct sample *s = ev.data;
		if (events++ < 3)
			printf("cpu %u  %llu ns  thread %d  n %d\n", ev.cpu, (unsigned long long)ev.ns, s->thread,
			       s->n);
	}
	printf("%lu events read, %lu lost\n", events, lost);
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(ring); cpu++) {
		struct tb_cpu_stats st;
		tb_stats_read(ring, cpu, &st);
		printf("cpu%u: written %llu, read %llu\n", cpu, (unsigned long long)st.written,
		       (unsigned long long)st.read);
	}
	tb_ring_free(ring);
	return events + lost == 2002 ? 0 : 1;
}
