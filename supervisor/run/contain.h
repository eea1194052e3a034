/* SPDX-License-Identifier: MIT */
/*
 * contain.h - what keeps the workload inside its sandbox beyond the filter:
 * its own PID and mount namespaces (no task outlives the supervisor, none
 * can name it), brokers masked in its view of the file system, and the
 * identity it runs as (--user, --group, --groups).
 */
#ifndef GPUSANDBOX_CONTAIN_H
#define GPUSANDBOX_CONTAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "gs_error.h"

/* Supplementary groups --groups may give; NGROUPS_MAX is far larger, but a
 * workload that needs more than this is not what the option is for. */
#define GS_MAX_SUPP_GROUPS 32
/* Paths masked in the workload's view: the defaults, the --hide paths
 * (GS_MAX_HIDE at most), and the device node of each GPU --gpus hides
 * (one per bit of hidden_gpu_nodes). */
#define GS_MAX_HIDE   16
#define GS_MAX_MASKED (GS_MAX_HIDE + 64)
#define GS_GPU_NODE_FMT "/dev/nvidia%u"

/* The pipe directory of the NVIDIA MPS control daemon and server when
 * CUDA_MPS_PIPE_DIRECTORY does not name another (CUDA MPS documentation,
 * "Environment variables"). */
#define GS_MPS_DEFAULT_PIPE_DIR "/tmp/nvidia-mps"
#define GS_MPS_PIPE_DIR_ENV     "CUDA_MPS_PIPE_DIRECTORY"

struct gs_contain {
	/* As given on the command line (NULL: not given); resolved by
	 * gs_contain_prepare. */
	const char *user_arg, *group_arg, *groups_arg;
	const char *hide_arg[GS_MAX_HIDE];
	unsigned    n_hide_arg;
	bool        allow_mps;          /* --allow-mps: leave MPS reachable */
	/* Bit N: --gpus hides GPU N, whose node /dev/nvidiaN is masked. */
	uint64_t    hidden_gpu_nodes;

	/* Resolved. */
	bool   change_identity;         /* --user given: set uid, gid, groups */
	uid_t  uid;
	gid_t  gid;
	size_t n_groups;
	gid_t  groups[GS_MAX_SUPP_GROUPS];
	bool   user_ns;                 /* no CAP_SYS_ADMIN: a user namespace too */
	uid_t  outer_uid;               /* the caller's ids, mapped 1:1 in it */
	gid_t  outer_gid;
	unsigned n_masked;
	char  *masked[GS_MAX_MASKED];   /* absolute, existing at start; kept until exit */
};

/* Option values; each returns 0 or -1 with *why set (a usage error). */
int gs_contain_add_hide(struct gs_contain *c, const char *path, const char **why);
/* Masks path in the workload's mount namespace as the brokers are (a
 * directory: an empty tmpfs nobody may enter; a file: /dev/null over it):
 * the audit log (audit_guard.h). Before the launch; 0 or -1. */
int gs_contain_mask(struct gs_contain *c, const char *path, struct gs_error *err);

/* Resolves names to ids, decides whether a user namespace is needed, lists
 * what to mask, and warns when the workload would run as root by accident.
 * In the supervisor, before anything runs. */
int gs_contain_prepare(struct gs_contain *c, struct gs_error *err);
/* The identity part of gs_contain_prepare alone (--check): the users and
 * groups named exist, and we may switch to them. Prints nothing. */
int gs_contain_check_identity(struct gs_contain *c, struct gs_error *err);

/* clone(2) flags for the sandbox's init: new PID and mount namespaces, and
 * a user namespace when gpusandbox has no CAP_SYS_ADMIN. */
unsigned long gs_contain_clone_flags(const struct gs_contain *c);

/* Steps the init runs in the new namespaces, in this order. Each returns 0
 * or -1 with err set. */
int gs_contain_map_ids(const struct gs_contain *c, struct gs_error *err);
int gs_contain_mounts(const struct gs_contain *c, struct gs_error *err);
int gs_contain_drop_identity(const struct gs_contain *c, struct gs_error *err);

#endif
