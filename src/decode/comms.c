// SPDX-License-Identifier: MIT
/*
 * comms.c - pid -> comm, for the first column of every `trace` line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comms.h"

/* Longer names are cut here: a kernel comm is 16 bytes; the column's length must fit 16 bits. */
#define COMM_MAX 4096
#define IDLE_COLUMN "          <idle>-0      "

static size_t slot_of(int32_t pid, size_t mask)
{
	/* Fibonacci hashing: pids are dense and sequential, the multiply spreads them. */
	return (size_t)(((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) >> 32) & mask;
}

static struct comm_entry *find_slot(struct comm_entry *slots, size_t mask, int32_t pid)
{
	size_t i = slot_of(pid, mask);

	while (slots[i].pid != 0 && slots[i].pid != pid)
		i = (i + 1) & mask;
	return &slots[i];
}

/* Slots for at least n entries at most half full, every entry moved. */
static int resize(struct comms *t, size_t n)
{
	size_t size = t->mask ? t->mask + 1 : 256;
	struct comm_entry *slots;

	while (size < 2 * n)
		size *= 2;
	if (size == t->mask + 1 && t->mask)
		return 0;
	if (!(slots = calloc(size, sizeof(*slots))))
		return -ENOMEM;
	for (size_t i = 0; t->mask && i <= t->mask; i++)
		if (t->slots[i].pid != 0)
			*find_slot(slots, size - 1, t->slots[i].pid) = t->slots[i];
	free(t->slots);
	t->slots = slots;
	t->mask = size - 1;
	return 0;
}

int comms_reserve(struct comms *t, size_t n)
{
	return resize(t, t->used + n);
}

/* The kernel's "%16s-%-7d" column at p, NUL-terminated; its length. */
static size_t put_column(char *p, const char *name, size_t len, int32_t pid)
{
	char digits[11], *q;
	size_t pad = len < 16 ? 16 - len : 0, n = 0;
	uint32_t v = pid < 0 ? 0u - (uint32_t)pid : (uint32_t)pid;

	memset(p, ' ', pad);
	memcpy(p + pad, name, len);
	q = p + pad + len;
	*q++ = '-';
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	if (pid < 0)
		*q++ = '-';
	for (size_t i = 0; i < n; i++)
		*q++ = digits[n - 1 - i];
	for (size_t w = n + (pid < 0); w < 7; w++)
		*q++ = ' ';
	*q = '\0';
	return (size_t)(q - p);
}

int comms_add(struct comms *t, int32_t pid, const char *name, size_t len)
{
	struct comm_entry *e;

	if (pid == 0)
		return 0; /* always "<idle>" */
	if ((t->used + 1) * 2 > t->mask + 1 && resize(t, t->used + 1) < 0)
		return -ENOMEM;
	e = find_slot(t->slots, t->mask, pid);
	if (e->pid == pid)
		return 0;
	len = strnlen(name, len < COMM_MAX ? len : COMM_MAX);
	/* The name, its NUL, then "%16s-%-7d": at most 16 spaces' padding or the name, '-', 11 for the pid, NUL. */
	e->name = arena_take(&t->names, len + 1 + (len > 16 ? len : 16) + 1 + 11 + 1);
	if (!e->name)
		return -ENOMEM;
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->column_len = (uint16_t)put_column(e->name + len + 1, name, len, pid);
	e->pid = pid;
	e->len = (uint16_t)len;
	t->used++;
	return 0;
}

const char *comms_lookup(const struct comms *t, int32_t pid, size_t *len)
{
	const struct comm_entry *e;

	if (pid == 0) {
		*len = 6;
		return "<idle>";
	}
	if (t->mask) {
		e = find_slot(t->slots, t->mask, pid);
		if (e->pid == pid) {
			*len = e->len;
			return e->name;
		}
	}
	*len = 5;
	return "<...>";
}

const char *comms_column(const struct comms *t, int32_t pid, size_t *len)
{
	const struct comm_entry *e;

	if (pid == 0) {
		*len = sizeof(IDLE_COLUMN) - 1;
		return IDLE_COLUMN;
	}
	if (!t->mask)
		return NULL;
	e = find_slot(t->slots, t->mask, pid);
	if (e->pid != pid)
		return NULL;
	*len = e->column_len;
	return e->name + e->len + 1;
}

void comms_free(struct comms *t)
{
	arena_free(&t->names);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}
