/* SPDX-License-Identifier: MIT */
/*
 * own_rm.h - the sandbox's own RM client, with a device on each GPU it
 * needs, through which the supervisor makes a workload's UVM external
 * mappings (exec_uvm.c).
 *
 * Why one of our own: UVM dups the memory it maps as the calling process
 * (nvGpuOpsDupMemory passes NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_
 * PRIVILEGE; cliresShareCallback then wants, for the default
 * RS_SHARE_TYPE_PID policy, the source client's ProcID to be the current
 * process: nv_gpu_ops.c, client_resource.c, 580.95.05). Naming the
 * workload's client from the supervisor was refused with
 * NV_ERR_INSUFFICIENT_PERMISSIONS on an H200 (580.159.04, 2026-11-29), even
 * as root; naming a dup in a client of our own, after the workload's
 * memory was shared with that client alone (RS_SHARE_TYPE_CLIENT), was
 * mapped, and the workload used it (docs/gpu-results/
 * 2026-11-29-h200-write-back, tests/gpu/uvm_perform_probe.c).
 */
#ifndef GPUSANDBOX_OWN_RM_H
#define GPUSANDBOX_OWN_RM_H

#include <stdbool.h>
#include <stdint.h>

#include "nvrm_abi.h"

struct gs_own_rm {
	int         ctl_fd;   /* our control file; -1: no client yet */
	nv_handle_t client;
	uint64_t    devices;  /* bit g: our device on device instance g exists */
	/* The parent of the dup at GS_OWN_TEMP_DUP while one lives (0:
	 * none): freed after the workload's answer is sent
	 * (gs_own_rm_drop_temp), not before it. */
	nv_handle_t temp_parent;
};

/* Our device handle on device instance gpu (a fixed handle per GPU). */
#define GS_OWN_DEVICE_BASE 0x0a0de000u
#define GS_OWN_DEVICE(gpu) (GS_OWN_DEVICE_BASE + (nv_handle_t)(gpu))
/* The handle a dup is made at for the length of one call. */
#define GS_OWN_TEMP_DUP    0x0a0df000u
#define GS_OWN_MAX_GPUS    64u

/* Makes sure our client and our device on device instance gpu exist.
 * The driver lets a device be made only by a thread that holds the GPU's
 * node: ours are opened around the allocation, as the sampler's are
 * (sampler.c), in the shared table, where no workload's device
 * allocation is made (private_table.h). NV_OK or the driver's status
 * (NV_ERR_OPERATING_SYSTEM when our files cannot be opened). */
nv_status_t gs_own_rm_device(struct gs_own_rm *o, int gpu);

/* Dups the workload's memory (h_client_src, h_object_src), shared with
 * our client, at GS_OWN_TEMP_DUP under our device on gpu, after freeing
 * a temporary dup still held. NV_OK or the driver's status. */
nv_status_t gs_own_rm_dup_temp(struct gs_own_rm *o, int gpu, nv_handle_t h_client_src,
                               nv_handle_t h_object_src);
/* Frees the temporary dup, if one is held. UVM holds its own reference
 * to what it mapped, so ours is needed only until the map returns; the
 * executor calls this after the answer is sent (issue #16: the free is
 * off the workload's path), still under the session lock, so no other
 * call of the sandbox runs between the map and the free. */
void gs_own_rm_drop_temp(struct gs_own_rm *o);
void gs_own_rm_close(struct gs_own_rm *o);

#endif
