// SPDX-License-Identifier: MIT
/*
 * fuzz_shm.c - libFuzzer target for a ring region as a consumer of shared
 * memory sees it (src/ring/shm.c, shm_window.c, reader.c): the region
 * header and the control blocks are untrusted input.
 *
 * A valid base region is built once: 2 CPUs, small, wrapped, with events
 * and a consuming reader holding a page.  The input is XOR-ed over the
 * start of the header (bytes 0..) and, past a 0xff marker byte (or from
 * byte 256 on), over CPU 0's control block, slot table and page metadata,
 * and past a second 0xff marker over the thread table (the counts of
 * writes begun that recovery sums: docs/design.md §10), so an all-zero input is the valid region and small inputs are small
 * perturbations of it.  The result is put in a file, then read every way
 * a consumer does: tb_shm_load + tb_shm_window (recovery), tb_shm_attach as
 * a reader + the window, the iterator and consuming page reads.  Every
 * call must end, stay in bounds (ASan) and keep its promises: a refused
 * region says why; a page handed over decodes within its size (or its
 * decoder refuses it), and a window never counts more events than the
 * pages it handed over can hold, and an in-flight count said to be exact
 * is one a table could hold (hostile counts make it a lower bound, said so).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fuzz_check.h"
#include "ring/ring_layout.h"
#include "tracebuf/page.h"
#include "tracebuf/reader.h"
#include "tracebuf/shm.h"

#define BASE_EVENTS 3000u

static uint8_t *base, *mem; /* the valid region, and this run's perturbed copy */
static size_t base_size;
static int fd = -1;
static char path[64];

/*
 * The readers retry a tail that does not resolve, yielding between tries
 * (reader.c: TAIL_TRIES 10000; shm_window.c: 1000), waiting for a writer
 * that is mid-publish.  This process has no writer thread: a scribbled
 * tail never resolves, and every yield only hands the CPU to other
 * processes - a hostile input took 200-650 ms a run, most of it here.
 * The library's sched_yield calls bind to this one (static link), so the
 * tries cost what their loads cost; their count and fallback are unchanged.
 */
int sched_yield(void)
{
	return 0;
}

/*
 * This process's id as the library sees it (reader_lock's lock word):
 * fixed, so that an input whose lock word names "this process" names it in
 * every run - the one fuzz_shm found hanging (regressions/shm/
 * timeout_6b039d...) made the word this pid, 27037.  The file name uses the
 * real one.
 */
#define FUZZ_PID 27037

pid_t getpid(void)
{
	return FUZZ_PID;
}

/*
 * reader_lock asks kill(owner, 0) whether the process holding a CPU's
 * reader lock is alive, and waits a second before taking over from a live
 * one.  A scribbled lock word names some process (pid 1, a kernel thread)
 * that is alive but has never seen this region, which only this process
 * maps: every such input cost a second of spinning.  Here every process
 * but this one is gone, as it is to the region; other signals go through.
 */
int kill(pid_t pid, int sig)
{
	if (sig == 0 && pid != FUZZ_PID) {
		errno = ESRCH;
		return -1;
	}
	return (int)syscall(SYS_kill, pid, sig);
}

static void remove_file(void)
{
	unlink(path);
}

static void build_base(void)
{
	struct tb_ring_opts o;
	struct tb_ring *ring;
	uint8_t page[4096];

	tb_ring_opts_default(&o);
	o.size_kb = 12;
	o.ncpus = 2;
	o.clock = TB_CLOCK_COUNTER;
	base_size = tb_ring_region_size(&o);
	base = aligned_alloc(4096, base_size);
	mem = aligned_alloc(4096, base_size);
	CHECK(base != NULL && mem != NULL);
	o.mem = base;
	o.mem_size = base_size;
	CHECK(tb_ring_new(&ring, &o) == 0);
	/*
	 * Events of 4 to 64 bytes: about 100 to a page, not 510 as with 4-byte
	 * ones, so a run's walks (two opens, each iterated, windowed and
	 * paged) visit a few hundred records, not 4,000 - the same pages and
	 * wrap at a fifth of the cost.
	 */
	for (uint32_t i = 0; i < BASE_EVENTS; i++) {
		uint32_t ev[16] = {i};
		tb_write(ring, ev, 4 * (1 + i % 16));
	}
	tb_read_page(ring, 0, page, sizeof(page)); /* a reader page in hand */
	tb_ring_free(ring);
	/*
	 * A named file: readers accept it unsealed (a memfd would have to be
	 * sealed, and could not be rewritten).  On tmpfs when there is one: on
	 * ext4 every close wrote the file back (ext4_release_file), a fifth of a run.
	 */
	snprintf(path, sizeof(path), "%s/fuzz-shm-%ld", access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
		 (long)syscall(SYS_getpid));
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	atexit(remove_file);
}

static int check_page(void *ctx, unsigned cpu, const void *page, size_t size)
{
	struct tb_page_cursor cur;
	struct tb_record rec;

	(void)ctx;
	CHECK(cpu < 2 && size == 4096);
	if (tb_page_cursor_init(&cur, page, size) < 0)
		return 0; /* a scribbled closed page: its decoder says so, in bounds */
	while (tb_page_next(&cur, &rec) == 1) /* padding and time records have no payload: data NULL */
		CHECK(rec.kind != TB_REC_DATA || ((const uint8_t *)rec.data >= (const uint8_t *)page &&
						  (const uint8_t *)rec.data + rec.len <= (const uint8_t *)page + size));
	return 0;
}

static void read_every_way(struct tb_shm *s)
{
	struct tb_shm_window w;
	struct tb_iter *it;
	struct tb_read_event ev;
	uint8_t page[4096];

	CHECK(tb_shm_window(tb_shm_ring(s), check_page, NULL, &w) == 0);
	CHECK(w.events <= w.pages * (4080 / 8)); /* what the pages handed over can hold */
	CHECK(!(w.in_flight_exact && w.table_bad));
	CHECK(!w.in_flight_exact || w.in_flight <= (uint64_t)(TB_THREAD_SLOTS + 1) << 12);
	if (tb_iter_new(tb_shm_ring(s), &it) == 0) {
		for (int i = 0; i < 100000 && tb_iter_next(it, &ev) == 1; i++)
			;
		tb_iter_free(it);
	}
	for (unsigned cpu = 0; cpu < tb_ring_ncpus(tb_shm_ring(s)); cpu++)
		for (int i = 0; i < 64 && tb_read_page(tb_shm_ring(s), cpu, page, sizeof(page)) > 0; i++)
			;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tb_region *h;
	struct tb_shm *s;
	size_t split = size < 256 ? size : 256, ctl, table = size;

	if (!base)
		build_base();
	for (size_t i = 0; i < split; i++)
		if (data[i] == 0xff) {
			split = i;
			break;
		}
	memcpy(mem, base, base_size);
	for (size_t i = 0; i < split && i < sizeof(struct tb_region); i++)
		mem[i] ^= data[i];
	h = (struct tb_region *)base;
	ctl = h->pages_offset; /* control block, slots, meta of CPU 0 */
	for (size_t i = split + 1; i < size; i++)
		if (data[i] == 0xff) {
			table = i;
			break;
		}
	for (size_t i = split + 1; i < table && i - split - 1 < ctl; i++)
		mem[h->cpu_offset + i - split - 1] ^= data[i];
	/* the thread table: its shared count, then each slot's owner and count */
	for (size_t i = table + 1; i < size && i - table - 1 < sizeof(struct tb_thread_table); i++)
		mem[h->thread_offset + i - table - 1] ^= data[i];
	CHECK(ftruncate(fd, 0) == 0 && pwrite(fd, mem, base_size, 0) == (ssize_t)base_size);
	if (tb_shm_load(path, &s) == 0) {
		read_every_way(s);
		tb_shm_close(s);
	} else {
		CHECK(tb_shm_error()[0] != '\0');
	}
	/* the same bytes mapped shared, as a live consumer sees them: header private and checked */
	if (tb_shm_attach(path, TB_SHM_READER, &s) == 0) {
		read_every_way(s);
		tb_shm_close(s);
	} else {
		CHECK(tb_shm_error()[0] != '\0');
	}
	return 0;
}
