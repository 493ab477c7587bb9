/* SPDX-License-Identifier: MIT */
/*
 * instance.h - a test's own tracefs instance, so a test that records from
 * the live kernel never touches the top-level buffer's settings.
 *
 *   instance_remove_on_exit();                  at the start of main()
 *   if (geteuid() != 0 || !instance_have_tracefs() || instance_create("tb-NAME") < 0)
 *           skip...;
 *   ok(instance_set("tracing_on", "1") == 0, ...);
 *   text = instance_read("trace");              (malloc'd, the caller frees)
 *   ok(instance_close() == 0, "instance removed");
 *
 * The instance is TRACEFS/instances/TAG-PID (the pid keeps parallel runs
 * apart); its path is in `instance`, "" while there is none.  It is removed
 * at exit and on a fatal signal too, so a failing or killed test leaves
 * nothing behind.
 */
#ifndef TB_TEST_INSTANCE_H
#define TB_TEST_INSTANCE_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tap.h"

#ifndef TRACEFS
#define TRACEFS "/sys/kernel/tracing"
#endif

static char instance[256];

/* rmdir only: safe in a signal handler and at exit. */
static inline void instance_remove(void)
{
	if (instance[0])
		rmdir(instance);
}

static inline void instance_on_signal(int sig)
{
	instance_remove();
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void instance_remove_on_exit(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGALRM, SIGABRT, SIGSEGV, SIGBUS};

	atexit(instance_remove);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], instance_on_signal);
}

/* tracefs mounted at TRACEFS, mounting it if needed; false if impossible. */
static inline bool instance_have_tracefs(void)
{
	struct stat st;

	if (stat(TRACEFS "/instances", &st) == 0)
		return true;
	mount("nodev", TRACEFS, "tracefs", 0, NULL);
	return stat(TRACEFS "/instances", &st) == 0;
}

/* TRACEFS/instances/TAG-PID made; 0, or -errno with `instance` left "". */
static inline int instance_create(const char *tag)
{
	int rc;

	snprintf(instance, sizeof(instance), TRACEFS "/instances/%s-%d", tag, (int)getpid());
	if (mkdir(instance, 0755) == 0)
		return 0;
	rc = -errno;
	instance[0] = '\0';
	return rc;
}

/* The instance removed now; 0 when it is gone. */
static inline int instance_close(void)
{
	int rc;

	instance_remove();
	rc = instance[0] && access(instance, F_OK) == 0 ? -EBUSY : 0;
	instance[0] = '\0';
	return rc;
}

/* len bytes written to the instance's file NAME in one write(); 0, or -errno (-EIO if short). */
static inline int instance_write(const char *name, const void *value, size_t len)
{
	char path[512];
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", instance, name);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, value, len);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	close(fd);
	return rc;
}

static inline int instance_set(const char *name, const char *value)
{
	return instance_write(name, value, strlen(value));
}

/* The instance's file NAME, NUL-terminated and malloc'd (the caller frees); NULL if unreadable. */
static inline char *instance_read(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", instance, name);
	return tap_slurp(path, NULL);
}

#endif
