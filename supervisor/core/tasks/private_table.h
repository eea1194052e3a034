/* SPDX-License-Identifier: MIT */
/*
 * private_table.h - device allocations made in a private fd table.
 *
 * The driver grants an NV01_DEVICE_0 allocation only to a caller holding an
 * open node of that GPU (deviceConstruct, src/nvidia/src/kernel/gpu/device.c
 * -> osIsGpuAccessible -> nv_is_gpu_accessible, kernel-open/nvidia/nv.c:
 * iterate_fd over current->files, the CALLING THREAD's fd table; the same in
 * 535.43.02 through 595.44.02, and its only other caller is UVM's
 * nv_gpu_ops.c, in the workload's own context). The supervisor performs
 * device allocations for the workload with the workload's own GPU nodes
 * borrowed for the call. One process serves several sandboxes (the agent:
 * one worker per container), so in the process's shared fd table a GPU
 * node any thread holds would vouch for another sandbox's device.
 *
 * So every device allocation the supervisor performs for a workload is made
 * by a short-lived helper thread whose fd table is its own
 * (unshare(CLONE_FILES)) and holds nothing but what the call needs: our dup
 * of the fd the call is made on, the seccomp listener (to check the
 * notification after the borrow), a pidfd of the trapped task and that
 * task's GPU nodes, taken into it with pidfd_getfd. The driver then meets
 * only the trapped task's nodes, whatever any other thread holds meanwhile,
 * and no lock is needed: the table goes when the helper closes it.
 *
 * The helpers are created by one spawner thread whose own table was emptied
 * when it started (gs_private_table_start): unshare copies the creator's
 * table, and a copy of the shared one could hold another worker's transient
 * dup of a workload file that is a FUSE file (the workload picks the fd a
 * trapped call names); closing it in the copy would send its server a
 * FLUSH that a hostile server never answers (the kernel waits for a forced
 * request uninterruptibly), stalling another sandbox's allocation. A helper
 * made from the spawner copies an empty table; what it needs from the
 * shared table it takes by number with pidfd_getfd on our own process.
 *
 * Start it after the supervisor dropped its privileges: the driver judges
 * privilege from the calling thread, and a thread inherits its creator's
 * capabilities.
 */
#ifndef GS_PRIVATE_TABLE_H
#define GS_PRIVATE_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct gs_error;

/* One driver call for the trapped task tid. The fd numbers are the shared
 * table's; the caller keeps them open until gs_private_table_call returns. */
struct gs_private_call {
	pid_t         tid;        /* the trapped task: its GPU nodes are borrowed */
	int           listener;   /* our seccomp listener and the notification: */
	uint64_t      notif_id;   /*   checked after the borrow (the tid may be reused) */
	int           dup;        /* our dup of the workload's fd the call is made on */
	unsigned long request;    /* the ioctl and its argument, our copy */
	void         *arg;
	bool          only_with_nodes; /* no call when the task holds no GPU node */
	/* out */
	int           rc;         /* the ioctl's: 0 or -errno */
	unsigned      nodes;      /* GPU nodes borrowed */
	int           err;        /* GS_PRIVATE_FAILED: why */
};

enum gs_private_outcome {
	GS_PRIVATE_PERFORMED, /* the ioctl ran: rc */
	GS_PRIVATE_NO_NODES,  /* only_with_nodes, and the task holds none */
	GS_PRIVATE_TASK_GONE, /* the notification is no longer valid */
	GS_PRIVATE_FAILED,    /* no private table: nothing was performed (err) */
};

/* Starts the spawner (once per process; again in a forked child). Reads
 * GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC once: the agent tier's baseline
 * then makes each call in the calling thread's shared table with the
 * borrow, as before any defence. 0, or -1 with err. */
int gs_private_table_start(struct gs_error *err);

/* Makes the call in a private table and waits for it. Never falls back to
 * the shared table: GS_PRIVATE_FAILED when no helper could be made. */
enum gs_private_outcome gs_private_table_call(struct gs_private_call *pc);

#endif
