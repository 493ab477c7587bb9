/*
 * A program may dlopen libtracebuf, trace, and dlclose it.  The kernel keeps
 * a pointer to the library's last rseq descriptor in the thread's rseq area
 * and reads it at the next preemption or signal: the library must stay
 * mapped (it is linked -z nodelete), or that read kills the process.
 */
#include <dlfcn.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#include "lib/tap.h"
#include "tracebuf/ring.h"

static volatile sig_atomic_t got;
static void on_alarm(int sig) { (void)sig; got++; }

int main(void)
{
	const char *build = getenv("TB_BUILD") ? getenv("TB_BUILD") : "build";
	char path[512];
	void *h;
	int (*create)(struct tb_ring **, const struct tb_ring_opts *);
	int (*write)(struct tb_ring *, const void *, uint32_t);
	void (*destroy)(struct tb_ring *);
	struct tb_ring *ring = NULL;
	struct timespec nap = {0, 2000000};

	snprintf(path, sizeof(path), "%s/libtracebuf.so", build);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		skip_all("libtracebuf.so not built");
	create = (int (*)(struct tb_ring **, const struct tb_ring_opts *))dlsym(h, "tb_ring_new");
	write = (int (*)(struct tb_ring *, const void *, uint32_t))dlsym(h, "tb_write");
	destroy = (void (*)(struct tb_ring *))dlsym(h, "tb_ring_free");
	ok(create && write && destroy, "the API resolves through dlsym");
	ok(create && create(&ring, NULL) == 0 && write(ring, "x", 1) == 0, "a write through the loaded library");
	destroy(ring);
	dlclose(h);
	signal(SIGALRM, on_alarm);
	for (int i = 0; i < 50; i++) { /* get preempted and signalled a few times */
		raise(SIGALRM);
		sched_yield();
		nanosleep(&nap, NULL);
	}
	ok(got == 50, "after dlclose the process survives preemption and signals");
	return done_testing();
}
