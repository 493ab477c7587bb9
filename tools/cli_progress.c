// SPDX-License-Identifier: MIT
/* A progress line sampled from the bytes read (cli_progress.h). */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_progress.h"
#include "lib_internal.h"

struct cli_progress {
	struct progress_line line;
	const char *counter;		/* "rchar: " or "wchar: " of /proc/self/io */
	unsigned long long start;
	pthread_t thread;
	/* stop: set by cli_progress_stop under lock, waited for by the sampler with a timeout */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stop;
	char tool[64];
};

/* The bytes this process read (rchar) or wrote (wchar) so far, or 0 when /proc says nothing. */
static unsigned long long bytes_moved(const char *counter)
{
	unsigned long long n = 0;
	char line[128];
	FILE *f = fopen("/proc/self/io", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, counter, strlen(counter))) {
			n = strtoull(line + strlen(counter), NULL, 10);
			break;
		}
	fclose(f);
	return n;
}

/* A file's size, or a directory's regular files' (a capture: cpuN.raw and its metadata); 0: unknown. */
static unsigned long long input_size(const char *path)
{
	unsigned long long total = 0;
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (stat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return S_ISREG(st.st_mode) ? (unsigned long long)st.st_size : 0;
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		char file[4096];
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		if (stat(file, &st) == 0 && S_ISREG(st.st_mode))
			total += (unsigned long long)st.st_size;
	}
	closedir(d);
	return total;
}

static void *sample(void *arg)
{
	struct cli_progress *p = arg;
	struct timespec until;

	pthread_mutex_lock(&p->lock);
	progress_line_draw(&p->line, 0, NULL, true); /* at once, as the exporters' first call draws it */
	while (!p->stop) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 100000000L;
		if (until.tv_nsec >= 1000000000L)
			until.tv_sec++, until.tv_nsec -= 1000000000L;
		pthread_cond_timedwait(&p->wake, &p->lock, &until);
		if (!p->stop)
			progress_line_draw(&p->line, bytes_moved(p->counter) - p->start, NULL, false);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static struct cli_progress *start(const struct cli_command *cmd, const char *what, unsigned long long total,
				  const char *counter)
{
	struct cli_progress *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	snprintf(p->tool, sizeof(p->tool), "tracebuf %s", cmd->name);
	progress_line_init(&p->line, true, PROGRESS_BYTES, p->tool, what, total);
	p->counter = counter;
	p->start = bytes_moved(counter);
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	if (pthread_create(&p->thread, NULL, sample, p) != 0) {
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->wake);
		free(p);
		return NULL;
	}
	return p;
}

struct cli_progress *cli_progress_start(const struct cli_command *cmd, bool on, const char *input)
{
	return on ? start(cmd, input, input_size(input), "rchar: ") : NULL;
}

struct cli_progress *cli_progress_start_writing(const struct cli_command *cmd, bool on, const char *output)
{
	return on ? start(cmd, output, 0, "wchar: ") : NULL;
}

void cli_progress_stop(struct cli_progress *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	progress_line_clear(&p->line);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
	free(p);
}
