/* SPDX-License-Identifier: MIT */
/*
 * workload.h - reaching into the workload: its memory (process_vm_readv,
 * /proc/TID/mem for writes), its
 * fds (pidfd_getfd through a per-sandbox pidfd cache), what a dup of one of
 * its fds is (fd identity), and which of its fds are GPU nodes (borrowed for
 * a device allocation by private_table.c).
 *
 * This is the bottom of the supervisor: it knows tasks and files, nothing
 * of the sandbox, the ledger or the policy. The executor and the compute
 * share both use it; neither reaches into the other for it.
 */
#ifndef GPUSANDBOX_WORKLOAD_H
#define GPUSANDBOX_WORKLOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "driver.h"

#define GS_PIDFD_CACHE 64u
#define MAX_BORROWED_GPU_FDS 64 /* a task's GPU nodes borrowed for one call, at most */

struct gs_pidfd_slot {
	pid_t tid;
	int   pidfd;
};

/* Dups of workload files kept unclosed, at most (beyond: each closed by
 * a thread of its own). */
#define GS_PARKED_MAX 256u

/* pidfds of recently trapped tasks, indexed by tid; and the dups parked.
 * A dup of a workload fd that turns out not to be the driver's (another
 * thread swapped the number between our look at it and our dup) may be a
 * FUSE file the workload serves: closing it asks the server (FLUSH), and
 * the closer waits for the answer uninterruptibly, so a worker that
 * closed it could be held for as long as the server liked (issue #17).
 * Such a dup is parked instead: never closed while the sandbox lives, and
 * at its end closed by a thread of its own that nothing waits for (a
 * server inside the sandbox has died with it by then, and a close of its
 * file no longer waits). */
struct gs_pidfd_cache {
	struct gs_pidfd_slot slot[GS_PIDFD_CACHE];
	pthread_mutex_t      parked_lock;  /* workers off the session lock park too */
	int                  parked[GS_PARKED_MAX];
	unsigned             n_parked;
	/* GPUSANDBOX_TEST_NO_PARK in the supervisor's own environment
	 * (gs_session_init): such a dup is closed at once, as before, so
	 * that tests/adv uvm_ctlfd:race's baseline shows what parking
	 * prevents. Never for use. */
	bool                 test_no_park;
};

void gs_pidfd_cache_init(struct gs_pidfd_cache *pc);
void gs_pidfd_cache_fini(struct gs_pidfd_cache *pc);

/* How many reads and writes of workload memory (below) this process has
 * in flight now: the test build's clock of the compute share lets time
 * pass while one holds the sandbox lock (compute_share.c), as it would
 * on a GPU while the workload keeps that access waiting. */
unsigned gs_workload_mem_in_flight(void);
/* Starts that count: the test clock's start (sm_clock.c). Always 0 in
 * flight otherwise. */
void gs_workload_count_mem_accesses(void);
/* Reads by tid: a read decides nothing until an ID_VALID made after it
 * proves the tid still named the trapped task (notif_still_valid). */
int mem_read(pid_t tid, uint64_t addr, void *buf, size_t len);
/* Parts of one struct at addr, each read into buf at its own offset, in
 * one process_vm_readv; 0 when every part was read whole, else -1. At
 * most GS_MEM_PARTS_MAX parts. */
#define GS_MEM_PARTS_MAX 4u
struct gs_mem_part {
	size_t off, len;
};
int mem_read_parts(pid_t tid, uint64_t addr, void *buf, const struct gs_mem_part *parts,
                   unsigned n);
/* need bytes at addr and the rest of their last page (at most cap in all,
 * page the page size to assume); the bytes read, or -1. */
ssize_t mem_read_window(pid_t tid, uint64_t addr, size_t need, void *buf, size_t cap,
                        size_t page);

/* The trapped task's address space, for writing back (issue #17 item 13).
 * A write by tid after the last ID_VALID would reach whatever process has
 * the tid by then: the task can be killed while the driver runs our call,
 * and its tid given to another process, a host process under the agent.
 * /proc/TID/mem, opened while the tid names the task (an ID_VALID made
 * after the open proves it), holds that task's mm from then on: writes
 * through it reach that address space or fail, whatever becomes of the
 * tid. fd is -1 when not open. pidfd: the task's own pidfd (PIDFD_THREAD),
 * opened just before the file so that the same ID_VALID proves both, for
 * a worker to keep the file between the task's calls (mm_keep.h); -1
 * where the kernel gives none. kept: fd is the worker's, lent to this
 * call (not closed with it). */
struct gs_task_mem {
	int  fd, pidfd;
	bool kept;
};
#define GS_TASK_MEM_CLOSED ((struct gs_task_mem){ .fd = -1, .pidfd = -1 })
/* 0, or -1 with errno (ESRCH/ENOENT: the task is gone; EACCES: no right
 * to it). */
int task_mem_open(pid_t tid, struct gs_task_mem *m);
/* Closes what the call opened; a kept file is only let go. */
void task_mem_close(struct gs_task_mem *m);
/* Writes are made with the kernel's FOLL_FORCE (as ptrace's are): a
 * private read-only page is written through copy-on-write, where the
 * driver's copy-out would have failed; a shared read-only one fails. */
int mem_write(const struct gs_task_mem *m, uint64_t addr, const void *buf, size_t len);

/* One region of the workload to write back: our bytes now, and the bytes
 * as we read them (NULL: unknown, written whole). */
struct gs_mem_out {
	uint64_t    addr;
	const void *now;
	const void *before;
	size_t      len;
};
/* Writes back only what differs from what we read (issue #16: most calls
 * change nothing but a status the caller zeroed), one write per region
 * that changed, none when nothing changed. The workload then holds the
 * bytes the driver's full copy-out would have left, except where another
 * of its threads rewrote them during the call: the driver would have
 * overwritten those, we leave them; no decision of ours ever reads them
 * back. b may be NULL. */
int mem_write_changed2(const struct gs_task_mem *m, const struct gs_mem_out *a,
                       const struct gs_mem_out *b);
/* Would mem_write_changed2 write anything (b may be NULL)? Asked first by
 * a caller that opens the task's memory only for a write (issue #31). */
bool mem_out_changed(const struct gs_mem_out *a, const struct gs_mem_out *b);

/* Our dup of fd wfd of task tid, or -1 with errno set. Only a file of the
 * driver's is returned: a dup of another is parked (above), with -1 and
 * errno ENODEV. _kind: only when a look through /proc
 * (task_fd_node_kind_cached) finds the file of a kind in kinds
 * (GS_NODE_BIT), else -1 with errno ENODEV and no dup; *kind is what the
 * dup (or the look) is to the driver. */
int dup_workload_fd(struct gs_pidfd_cache *pc, pid_t tid, int wfd);
int dup_workload_fd_kind(struct gs_pidfd_cache *pc, pid_t tid, int wfd, unsigned kinds,
                         enum gs_node_kind *kind);
/* Any file, not parked: for the tests' baselines of uvm_ctlfd alone
 * (GPUSANDBOX_TEST_UVM_CTLFD), which show what the checks after a dup
 * prevent. */
int dup_workload_fd_any(struct gs_pidfd_cache *pc, pid_t tid, int wfd);

/* Does our fd lead to the driver's UVM device, to its control node?
 * uvm_major (fd_is_uvm) is the nvidia-uvm major, 0 if unknown. */
bool fd_is_uvm(unsigned uvm_major, int fd);
bool fd_is_control_file(int fd);
/* What our fd is to the driver, from one fstat (GS_NODE_NONE when fstat
 * fails, or when it is not the driver's). */
enum gs_node_kind fd_node_kind(int fd);
/* The same from the kernel's cached attributes, without a file system
 * round trip (what dup_workload_fd_kind asks of a file the workload picked). */
enum gs_node_kind fd_node_kind_cached(int fd);
/* The same of the file behind fd number wfd of task tid, through
 * /proc/TID/fd without a dup (the magic link is followed to the file,
 * whose cached attributes are read: no FUSE server is asked). A dup of a
 * FUSE file the workload serves would be flushed at our close, and the
 * close waits for the server, uninterruptibly (issue #17: a workload
 * could hold the supervisor that way). By tid, so a look, not a proof:
 * whatever it decides must be checked again once the number cannot
 * change (hold_other_file). GS_NODE_NONE when it cannot be read: the
 * driver's own nodes always can. */
enum gs_node_kind task_fd_node_kind_cached(pid_t tid, int wfd);

/* A fresh pidfd of task tid (any thread where the kernel allows, else a
 * thread-group leader), or -1. */
int pidfd_of_task(pid_t tid);
/* Is task tid's fd wfd open on a /dev/nvidia<N> node, as /proc shows it? */
bool task_fd_is_gpu_node(pid_t tid, int wfd);

#endif
