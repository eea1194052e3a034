/* SPDX-License-Identifier: MIT */
/*
 * exec_pids.c - the GPU's process lists as a sandbox sees them (issue #29
 * item 3: nvidia-smi --query-compute-apps and NVML's process queries).
 *
 * NV2080_CTRL_CMD_GPU_GET_PIDS answers the host pids (each client's
 * ProcID) of every process with objects of a class on the GPU, and
 * GET_PID_INFO the video memory of any pid asked about
 * (subdevice_ctrl_gpu_kernel.c, 580.95.05): another tenant's pids and
 * memory. The supervisor performs both from its copy of the params:
 *  - GET_PIDS: the answer keeps only the sandbox's own processes
 *    (gs_taskset_contains), each rewritten to the pid the caller sees
 *    (its PID namespace's number, /proc/PID/status NSpid), so a sandbox
 *    learns neither another tenant's pids nor how many there are;
 *  - GET_PID_INFO: each pid asked for, a number of the caller's
 *    namespace, is turned into the host pid of one of the sandbox's
 *    processes that made an RM client (gs_session_is_creator's list);
 *    an entry naming anything else is never sent to the driver (its index
 *    made one the driver answers NV_ERR_INVALID_ARGUMENT for, touching no
 *    process), and answered so. The caller's pids are put back before the
 *    answer.
 * The process named must still be the sandbox's after the driver answered
 * (a pid reused by another tenant in between would be answered for it).
 * What stays: the device totals are the quota's already (FB_GET_INFO,
 * exec_control.c). The NVENC and NvFBC session statistics, at the end:
 * zeroed for a sandbox that cannot make such sessions.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_int.h"
#include "groups.h"
#include "nvrm_monitoring.h"

/* PID namespaces nest 32 deep at most (the kernel's MAX_PID_NS_LEVEL). */
#define NSPID_MAX 33
#define NSPID_LINE 512
/* An index GET_PID_INFO does not know: answered NV_ERR_INVALID_ARGUMENT
 * for that entry alone, no process looked at. */
#define PID_INFO_INDEX_NONE 0xffffffffu

/* The NSpid numbers of process pid, outermost first: how many, 0 when
 * they cannot be read (the process is gone). */
static int nspids(pid_t pid, pid_t out[NSPID_MAX])
{
	char line[NSPID_LINE], *p, *end;
	int n = 0;

	if (!gs_proc_status_field(pid, "NSpid:", line, sizeof(line)))
		return 0;
	for (p = line; n < NSPID_MAX; p = end) {
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0)
			break;
		out[n++] = (pid_t)v;
	}
	return n;
}

/* How deep the caller's PID namespace is (1: the host's), 0 unknown. */
static int caller_depth(const struct call *c)
{
	pid_t ns[NSPID_MAX];

	return nspids(c->tid, ns);
}

/* The number the caller sees for host pid hp: 0 when hp is not the
 * sandbox's or not in the caller's namespace. */
static pid_t seen_as(const struct call *c, int depth, pid_t hp)
{
	pid_t ns[NSPID_MAX];
	int n;

	if (depth <= 0 || hp <= 0 || !gs_taskset_contains(&c->sb->tasks, hp))
		return 0;
	n = nspids(hp, ns);
	return n >= depth ? ns[depth - 1] : 0;
}

/* The host pid of the sandbox's client creator the caller calls seen, or 0. */
static pid_t host_pid_of(const struct call *c, int depth, pid_t seen)
{
	const struct gs_session *sb = c->sb;

	for (unsigned i = 0; seen > 0 && i < sb->n_creators; i++)
		if (seen_as(c, depth, sb->creators[i]) == seen)
			return sb->creators[i];
	return 0;
}

static void filter_pids(const struct call *c, struct nv2080_gpu_get_pids *p)
{
	int depth = caller_depth(c);
	uint32_t n = p->count < NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT ? p->count : NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT;
	uint32_t kept = 0;

	for (uint32_t i = 0; i < n; i++) {
		pid_t s = seen_as(c, depth, (pid_t)p->pids[i]);
		if (s > 0)
			p->pids[kept++] = (uint32_t)s;
	}
	memset(&p->pids[kept], 0, (NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT - kept) * sizeof(p->pids[0]));
	p->count = kept;
}

bool gs_pids_rewrites(uint32_t cmd)
{
	return cmd == NV2080_CTRL_CMD_GPU_GET_PIDS || cmd == NV2080_CTRL_CMD_GPU_GET_PID_INFO;
}

void gs_pids_before(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize,
                    struct gs_pid_rewrite *rw)
{
	struct nv2080_gpu_get_pid_info *p = (void *)params;

	rw->n = 0;
	if (cmd != NV2080_CTRL_CMD_GPU_GET_PID_INFO || psize != sizeof(*p))
		return;
	rw->depth = caller_depth(c);
	rw->n = p->count < NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT ? p->count : NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT;
	for (uint32_t i = 0; i < rw->n; i++) {
		struct nv2080_gpu_pid_info *e = &p->list[i];
		rw->seen[i] = e->pid;
		rw->index[i] = e->index;
		rw->host[i] = host_pid_of(c, rw->depth, (pid_t)e->pid);
		e->pid = (uint32_t)rw->host[i];
		if (!rw->host[i])
			e->index = PID_INFO_INDEX_NONE;
	}
}

void gs_pids_after(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize,
                   const struct gs_pid_rewrite *rw)
{
	if (cmd == NV2080_CTRL_CMD_GPU_GET_PIDS && psize == sizeof(struct nv2080_gpu_get_pids)) {
		filter_pids(c, (void *)params);
		return;
	}
	if (cmd != NV2080_CTRL_CMD_GPU_GET_PID_INFO || psize != sizeof(struct nv2080_gpu_get_pid_info))
		return;
	struct nv2080_gpu_get_pid_info *p = (void *)params;
	for (uint32_t i = 0; i < rw->n; i++) {
		struct nv2080_gpu_pid_info *e = &p->list[i];
		bool ours = rw->host[i] && seen_as(c, rw->depth, rw->host[i]) == (pid_t)rw->seen[i];
		e->pid = rw->seen[i];
		e->index = rw->index[i];
		if (ours)
			continue;
		/* Answered as the driver answers an entry it cannot serve. */
		memset(&e->mem_private, 0, sizeof(*e) - offsetof(struct nv2080_gpu_pid_info, mem_private));
		e->result = NV_ERR_INVALID_ARGUMENT;
	}
}

/*
 * GPU_GET_NVENC_SW_SESSION_STATS and GPU_GET_NVFBC_SW_SESSION_STATS count
 * the GPU's software sessions of every client and average what those
 * reported (subdeviceCtrlCmdGpuGetNvencSwSessionStats_IMPL and its NvFBC
 * twin, subdevice_ctrl_gpu_kernel.c, 580.95.05): another tenant's encoding
 * or screen capture, in aggregate. A sandbox whose policy does not allow
 * the session's class (NVENC_SW_SESSION: video, NVFBC_SW_SESSION:
 * graphics) can hold none, so its own view is what the driver answers for
 * a GPU without sessions: count and averages 0 (the same handler's empty
 * list). One that may make sessions is shown the driver's GPU-wide figures:
 * the driver keeps no per-client ones (docs/security/monitoring.md).
 * Only a performed, successful answer is rewritten, in our copy, at the
 * driver's size (decode.c refuses another).
 */
static uint32_t session_class_of(uint32_t cmd)
{
	switch (cmd) {
	case NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_STATS:
		return NVENC_SW_SESSION;
	case NV2080_CTRL_GPU_GET_NVFBC_SW_SESSION_STATS:
		return NVFBC_SW_SESSION;
	default:
		return 0;
	}
}

void gs_session_stats_after(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize)
{
	uint32_t cls = session_class_of(cmd);

	if (!cls || psize != sizeof(struct nv2080_sw_session_stats))
		return;
	if (gs_rules_class(c->sb->rm_abi, c->sb->rules, cls).allowed)
		return;
	memset(params, 0, sizeof(struct nv2080_sw_session_stats));
}
