/* SPDX-License-Identifier: MIT */
/*
 * rm_own.h - RM calls the supervisor makes on its own account, or through
 * its own dup of a workload file: plain ioctls on an fd the supervisor
 * holds, with parameters in the supervisor's memory.
 */
#ifndef GPUSANDBOX_RM_OWN_H
#define GPUSANDBOX_RM_OWN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvrm_abi.h"

/* ---- time in the driver, for GPUSANDBOX_PROFILE ----
 * Every ioctl a worker makes on a driver file for a call goes through
 * gs_driver_ioctl: own = false for the workload's own call that we
 * perform (its RM_ALLOC, the UVM map), true for a call made on our own
 * account (our dup of the memory and its free, a take-back unmap, a
 * share). Not counted: the start's own calls (driver.c, gpu_uuid.c) and a
 * device allocation made by the private table's helper thread
 * (private_table.c), whose time is the calling worker's "rest". While
 * gs_driver_timing is set (the session sets it for GPUSANDBOX_PROFILE),
 * the calling thread's gs_driver_ns[own] adds each call's time, so a
 * call's handling can be split into the driver's time and ours
 * (session.c prints it). Unset it costs one load of a flag. */
extern bool gs_driver_timing;
extern __thread uint64_t gs_driver_ns[2];
int gs_driver_ioctl(int fd, unsigned long request, void *arg, bool own);

/* ---- a call made as another user (--uvm-map as-user, exec_uvm.c) ----
 * gs_driver_ioctl (own = false) from the calling thread with its
 * effective uid set to euid for the length of the ioctl alone: the raw
 * setresuid system call changes the calling thread's credentials only
 * (glibc's wrapper would change every thread's), and only the effective
 * (and so the filesystem) uid; the real and saved uids stay 0, so the
 * thread can take its own back, and no process of that uid may signal
 * or ptrace it meanwhile (both ask for a real or saved uid match). The
 * kernel drops the thread's effective capabilities while its euid is not
 * 0 and restores them from the permitted set when it is 0 again. -1 with
 * errno when the uid could not be taken (nothing was called); a thread
 * that cannot take root back aborts the supervisor, since it would go on
 * serving calls as the workload's user (fail closed: the workload dies
 * with it). */
int gs_driver_ioctl_as(int fd, unsigned long request, void *arg, uid_t euid);
/* Can this process make calls as euid (above)? Its real, effective and
 * saved uids are 0, and one switch to euid and back succeeds on the
 * calling thread. */
bool gs_can_call_as(uid_t euid);

/* RM_CONTROL on (client, object). NV_ERR_GENERIC if the ioctl itself failed. */
nv_status_t rm_own_control(int fd, nv_handle_t client, nv_handle_t object, uint32_t cmd,
                           void *params, uint32_t size);
/* RM_ALLOC of cls under parent; *handle in: wanted handle (0: the driver
 * picks, for a client), out: the new handle. */
nv_status_t rm_own_alloc(int fd, nv_handle_t client, nv_handle_t parent, nv_handle_t *handle,
                         uint32_t cls, void *params, uint32_t size);
/* RM_FREE of object (the whole client when object == client). */
nv_status_t rm_own_free(int fd, nv_handle_t client, nv_handle_t parent, nv_handle_t object);

/* The driver lets a device be made only by a thread holding the GPU's
 * node: opens /dev/nvidia0 .. /dev/nvidia(max-1), those that exist, into
 * nodes (max entries); returns how many. rm_own_close_fds closes them. */
unsigned rm_own_open_gpu_nodes(int *nodes, unsigned max);
void rm_own_close_fds(const int *fds, unsigned n);
/* RM_SHARE and RM_DUP_OBJECT as given. */
nv_status_t rm_own_share(int fd, struct nvos57 *s);
nv_status_t rm_own_dup(int fd, struct nvos55 *d);

#endif
