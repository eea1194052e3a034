/* SPDX-License-Identifier: MIT */
/*
 * filter.h - the seccomp user-notify filter installed in the workload.
 */
#ifndef GPUSANDBOX_FILTER_H
#define GPUSANDBOX_FILTER_H

#include <sched.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "gs_error.h"
#include "nvrm/rm_abi.h"

/* The filter's rule shapes, shared with the OCI profile (profile.c) so
 * that both trap the same calls. An ioctl is trapped by its escape number,
 * the request word's low byte (_IOC_NR): */
#define GS_FILTER_IOCTL_NR_MASK 0xffu
/* UVM's calls the supervisor handles (exec_uvm.c: the map, performed;
 * ALLOC_DEVICE_P2P, refused; REGISTER_CHANNEL, followed), trapped by their
 * low byte where no RM escape traps it already. */
#define GS_FILTER_UVM_N 3
extern const uint32_t gs_filter_uvm_cmds[GS_FILTER_UVM_N];
/* Is nr the low byte of an RM escape the filter traps (rm_trapped_escapes)? */
bool gs_filter_is_rm_byte(const struct gs_rm_abi *abi, unsigned nr);
/* Is nr the low byte of one of them, not trapped as an RM escape? */
bool gs_filter_is_uvm_byte(const struct gs_rm_abi *abi, unsigned nr);
/* managed = deny: an mmap is trapped when it is shaped like a UVM mapping
 * (filter.c says why): PROT_WRITE in prot, a shared type and no
 * MAP_ANONYMOUS in flags (masked with GS_FILTER_MMAP_TYPE_MASK), and a
 * non-zero offset. */
#define GS_FILTER_MMAP_TYPE_MASK (MAP_TYPE | MAP_ANONYMOUS)
/* seccomp(2)'s op, which the kernel reads as 32 bits: */
#define GS_FILTER_SECCOMP_OP_MASK 0xffffffffu
/* io_uring's system calls are refused whole, with ENOSYS, the answer of
 * a kernel without io_uring that programs fall back from (filter.c says
 * why). By name, for libseccomp and the OCI profile alike. */
#define GS_FILTER_IOURING_ERRNO ENOSYS
#define GS_FILTER_IOURING_N 3
extern const char *const gs_filter_iouring_names[GS_FILTER_IOURING_N];

/* What the filter traps beyond the RM escapes. */
struct gs_filter_opts {
	/* managed = deny: the mmap calls that could map /dev/nvidia-uvm
	 * (see uvm_mmap_shape_rules in filter.c). */
	bool trap_uvm_mmap;
	/* The running driver's RM tables: which escapes are trapped. */
	const struct gs_rm_abi *rm_abi;
	/* The command line's sandbox: a clone that makes a process sharing
	 * its creator's fd table is trapped (and continued), clone3, whose
	 * flags a filter cannot read, refused with ENOSYS (C libraries fall
	 * back to clone), so that the supervisor knows whether any fd table
	 * may be shared beyond a thread group (quiesce.h). */
	bool follow_shared_tables;
	/* GPUSANDBOX_TEST_FREE_UNTRAPPED (read by the command line's main):
	 * RM_FREE not trapped, as issue #31's study proposed, with nothing
	 * else changed: the baseline of tests/adv client_refree, which shows
	 * what a free the supervisor does not see lets a workload escape
	 * (docs/security/per-call-cost.md, section 5). Never for use. */
	bool test_free_untrapped;
};
/* The clone flags of a process that shares its creator's fd table: the
 * filter's rule (filter.c) and the supervisor's check of what it trapped
 * (executor.c) read them alike. */
#define GS_FILTER_CLONE_MASK    (CLONE_FILES | CLONE_THREAD)
#define GS_FILTER_CLONE_SHARING CLONE_FILES
#define GS_FILTER_CLONE_SHARES_FILES(flags) (((flags) & GS_FILTER_CLONE_MASK) == GS_FILTER_CLONE_SHARING)

/* 1 when the kernel takes SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (Linux
 * 5.19), 0 when it does not, -1 when the probe was refused. */
int gs_probe_wait_killable_recv(void);

/* Builds the filter and loads it in the calling process with a new listener.
 * The caller must have set NO_NEW_PRIVS. Returns the listener fd or -1. */
int gs_filter_install(const struct gs_filter_opts *opts, struct gs_error *err);

/* Writes the filter's BPF in libseccomp's pseudo-filter form to fd
 * (for --dump-filter and tests). */
int gs_filter_dump(int fd, const struct gs_filter_opts *opts, struct gs_error *err);

#endif
