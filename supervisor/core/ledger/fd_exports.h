/* SPDX-License-Identifier: MIT */
/*
 * fd_exports.h - the sandbox's export files: control files into which its
 * memory was exported (NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD), with a
 * ledger pin for each filled slot.
 *
 * The driver dups each exported object into its own client and frees
 * those dups only when the export file is released (os.c and osapi.c,
 * src/nvidia/arch/nvalloc/unix/src, 580.95.05; docs/security/fd-export.md):
 * the memory outlives every client handle on it while any process holds
 * the fd. So each slot pins its allocation (ledger.h): the bytes stay
 * charged, once, until both the last handle and the last pin are gone.
 * The file is known by a release watch (an epoll set holding no
 * reference, as the ledger's clients: ledger_watch_file), so that its
 * release drops the pins (gs_fd_exports_sweep) and a file is found again
 * by identity, whatever fd number names it (gs_fd_exports_find).
 */
#ifndef GPUSANDBOX_FD_EXPORTS_H
#define GPUSANDBOX_FD_EXPORTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ledger.h"

/* One slot of an export file: what was exported there through us. */
struct gs_export_slot {
	uint32_t pin;   /* LEDGER_NO_PIN: empty */
	uint32_t cls;   /* the exported object's class */
};

struct gs_export_file {
	int                    epfd;   /* release watch (no reference) */
	int                    tfd;    /* the fd number it was added with */
	uint32_t               max;    /* the driver's maxHandles */
	struct gs_export_slot *slots;
};

/* The slots of all of a sandbox's export files, at most: the driver takes
 * a file's maxObjects (up to 65535) from the workload, and the supervisor
 * keeps 8 bytes a slot, so a sandbox could otherwise make it hold
 * gigabytes. 8 MiB; CUDA's export files have one slot each. */
#define GS_FD_EXPORT_SLOTS_MAX (1u << 20)

struct gs_fd_exports {
	struct gs_export_file *files;
	uint32_t               n, cap;
	uint32_t               slots;  /* of all files */
};

void gs_fd_exports_fini(struct gs_fd_exports *x, struct ledger *l);
/* The export file fd (ours) names: its index, or -1 when the sandbox made
 * none on that file. */
int  gs_fd_exports_find(const struct gs_fd_exports *x, pid_t self, int fd);
/* A new export file of max slots on fd's file: its index, or -1 (no
 * memory, the file cannot be watched, or GS_FD_EXPORT_SLOTS_MAX would be
 * passed: fail closed, nothing exported). */
int  gs_fd_exports_add(struct gs_fd_exports *x, struct ledger *l, int fd, uint32_t max);
/* Forgets file i, dropping its pins (a record made for a call the driver
 * then refused). */
void gs_fd_exports_drop(struct gs_fd_exports *x, struct ledger *l, uint32_t i);
/* Slot s of file i now holds pin (LEDGER_NO_PIN: emptied); the pin it
 * held is dropped, adding what that released to released. */
void gs_fd_exports_set(struct gs_fd_exports *x, struct ledger *l, uint32_t i, uint32_t s,
                       struct gs_export_slot slot, uint64_t released[GS_MAX_GPUS]);
/* The memory the live export files pin, per GPU, each allocation once. */
void gs_fd_exports_held(const struct gs_fd_exports *x, const struct ledger *l, uint64_t held[GS_MAX_GPUS]);
/* Drops the files released since, with their pins. Returns how many. */
unsigned gs_fd_exports_sweep(struct gs_fd_exports *x, struct ledger *l, uint64_t released[GS_MAX_GPUS]);

#endif
