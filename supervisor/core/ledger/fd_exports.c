/* SPDX-License-Identifier: MIT */
/*
 * fd_exports.c - the sandbox's export files and their pins (fd_exports.h).
 * Uses the ledger's pins and release watches; nothing of the executor.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <linux/kcmp.h>
#include <unistd.h>

#include "fd_exports.h"
#include "ledger_watch.h"

#define INITIAL_EXPORT_FILES 8u

static void drop_file(struct gs_fd_exports *x, struct ledger *l, uint32_t i, uint64_t released[GS_MAX_GPUS])
{
	struct gs_export_file *f = &x->files[i];

	for (uint32_t s = 0; s < f->max; s++)
		if (f->slots[s].pin != LEDGER_NO_PIN)
			ledger_unpin(l, f->slots[s].pin, released);
	if (f->epfd >= 0)
		close(f->epfd);
	free(f->slots);
	x->slots -= f->max;
	x->files[i] = x->files[--x->n];
}

void gs_fd_exports_drop(struct gs_fd_exports *x, struct ledger *l, uint32_t i)
{
	if (i < x->n)
		drop_file(x, l, i, NULL);
}

void gs_fd_exports_fini(struct gs_fd_exports *x, struct ledger *l)
{
	while (x->n)
		drop_file(x, l, x->n - 1, NULL);
	free(x->files);
	memset(x, 0, sizeof(*x));
}

/* kcmp(KCMP_EPOLL_TFD) compares fd's file with the one f's epoll set
 * holds: 0 is the same file. */
int gs_fd_exports_find(const struct gs_fd_exports *x, pid_t self, int fd)
{
	for (uint32_t i = 0; i < x->n; i++) {
		struct kcmp_epoll_slot slot = { .efd = (uint32_t)x->files[i].epfd,
		                                .tfd = (uint32_t)x->files[i].tfd, .toff = 0 };
		if (syscall(SYS_kcmp, self, self, KCMP_EPOLL_TFD, fd, (unsigned long)&slot) == 0)
			return (int)i;
	}
	return -1;
}

int gs_fd_exports_add(struct gs_fd_exports *x, struct ledger *l, int fd, uint32_t max)
{
	if (max > GS_FD_EXPORT_SLOTS_MAX - x->slots)
		return -1;
	if (x->n == x->cap) {
		uint32_t cap = x->cap ? 2 * x->cap : INITIAL_EXPORT_FILES;
		struct gs_export_file *n = realloc(x->files, cap * sizeof(*n));
		if (!n)
			return -1;
		x->files = n;
		x->cap = cap;
	}
	struct gs_export_file *f = &x->files[x->n];
	f->slots = calloc(max ? max : 1, sizeof(*f->slots));
	if (!f->slots)
		return -1;
	/* Without a watch the pins could never go: refuse instead. */
	f->epfd = ledger_watch_file(l, fd);
	if (f->epfd < 0) {
		free(f->slots);
		return -1;
	}
	f->tfd = fd;
	f->max = max;
	x->slots += max;
	for (uint32_t s = 0; s < max; s++)
		f->slots[s].pin = LEDGER_NO_PIN;
	return (int)x->n++;
}

void gs_fd_exports_set(struct gs_fd_exports *x, struct ledger *l, uint32_t i, uint32_t s,
                       struct gs_export_slot slot, uint64_t released[GS_MAX_GPUS])
{
	struct gs_export_slot *old = &x->files[i].slots[s];

	/* The driver frees the slot's old export handle (os.c). */
	if (old->pin != LEDGER_NO_PIN)
		ledger_unpin(l, old->pin, released);
	*old = slot;
}

/* Was pin met before slot (i, s), in the order gs_fd_exports_held walks? */
static bool pin_seen_before(const struct gs_fd_exports *x, uint32_t pin, uint32_t i, uint32_t s)
{
	for (uint32_t fi = 0; fi <= i; fi++)
		for (uint32_t si = 0; si < (fi == i ? s : x->files[fi].max); si++)
			if (x->files[fi].slots[si].pin == pin)
				return true;
	return false;
}

void gs_fd_exports_held(const struct gs_fd_exports *x, const struct ledger *l, uint64_t held[GS_MAX_GPUS])
{
	for (uint32_t i = 0; i < x->n; i++)
		for (uint32_t s = 0; s < x->files[i].max; s++) {
			uint32_t pin = x->files[i].slots[s].pin;
			uint64_t bytes;
			int gpu;
			if (!ledger_pin_facts(l, pin, &gpu, &bytes) || pin_seen_before(x, pin, i, s))
				continue;
			if (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS)
				held[gpu] += bytes;
		}
}

unsigned gs_fd_exports_sweep(struct gs_fd_exports *x, struct ledger *l, uint64_t released[GS_MAX_GPUS])
{
	unsigned n = 0;

	for (uint32_t i = x->n; i-- > 0;)
		if (!ledger_watch_alive_at(l->self, x->files[i].epfd, x->files[i].tfd)) {
			drop_file(x, l, i, released);
			n++;
		}
	return n;
}
