/* SPDX-License-Identifier: MIT */
/*
 * pid_list - another tenant's processes in the GPU's process lists
 * (issue #29 item 3: nvidia-smi --query-compute-apps, NVML's
 * nvmlDeviceGetComputeRunningProcesses).
 *
 *   pid_list hold FILE
 *       allocates 256 MiB, creates FILE, and holds until FILE.done
 *       exists (bounded).
 *   pid_list look OTHER
 *       allocates 128 MiB, asks GET_PIDS (processes with a subdevice on
 *       GPU 0) and GET_PID_INFO (video memory) for every pid listed and
 *       for OTHER (the holder's host pid, which the runner found).
 *       Prints pids= (how many listed), self_listed= (1 when its own pid,
 *       as it sees it, is one of them), others= (listed pids not its own),
 *       own_mib= and others_mib= (memory reported for its own pid, and for
 *       every other pid answered NV_OK).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define HOLD_BYTES (256ull * RMC_MIB)
#define LOOK_BYTES (128ull * RMC_MIB)

static int hold(const char *file)
{
	struct rmc_session s;

	adv_session_or_die(&s, -1, "pid_list hold");
	if (adv_alloc_rm(&s, NULL, rmc_next_handle(&s), HOLD_BYTES) != NV_OK)
		return 1;
	return adv_ready_then_wait(file) == 0 ? 0 : 1;
}

static uint64_t pid_memory(struct rmc_session *s, uint32_t pid, rmc_status_t *result)
{
	static struct nv2080_gpu_get_pid_info p;
	rmc_status_t st;

	memset(&p, 0, sizeof(p));
	p.count = 1;
	p.list[0].pid = pid;
	p.list[0].index = NV2080_CTRL_GPU_PID_INFO_INDEX_VIDEO_MEMORY_USAGE;
	st = rmc_control(s->fd, NULL, s->client, s->subdevice, NV2080_CTRL_CMD_GPU_GET_PID_INFO, &p, sizeof(p));
	*result = st != NV_OK ? st : (rmc_status_t)p.list[0].result;
	return *result == NV_OK ? p.list[0].mem_private + p.list[0].mem_shared_owned : 0;
}

static int look(uint32_t other)
{
	static struct nv2080_gpu_get_pids p;
	struct rmc_session s;
	uint32_t self = (uint32_t)getpid(), others = 0;
	uint64_t own = 0, theirs = 0;
	rmc_status_t st, r = NV_OK;
	bool self_listed = false;

	adv_session_or_die(&s, -1, "pid_list look");
	if (adv_alloc_rm(&s, NULL, rmc_next_handle(&s), LOOK_BYTES) != NV_OK)
		return 1;
	p.id_type = NV2080_CTRL_GPU_GET_PIDS_ID_TYPE_CLASS;
	p.id = NV20_SUBDEVICE_0;
	st = rmc_control(s.fd, NULL, s.client, s.subdevice, NV2080_CTRL_CMD_GPU_GET_PIDS, &p, sizeof(p));
	for (uint32_t i = 0; st == NV_OK && i < p.count && i < NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT; i++) {
		uint64_t m = pid_memory(&s, p.pids[i], &r);
		if (p.pids[i] == self) {
			self_listed = true;
			own = m;
		} else {
			others++;
			theirs += m;
		}
	}
	/* The holder by the pid the runner found, listed or not. */
	if (other && other != self)
		theirs += pid_memory(&s, other, &r);
	/* One status a printf: rmc_status_str's buffer is shared. */
	printf("pids_status=%s ", rmc_status_str(st));
	printf("pids=%u self_listed=%d others=%u own_mib=%llu others_mib=%llu ", st == NV_OK ? p.count : 0,
	       self_listed, others, (unsigned long long)(own / RMC_MIB), (unsigned long long)(theirs / RMC_MIB));
	printf("other_result=%s\n", rmc_status_str(r));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "look"))
		return look((uint32_t)strtoul(argv[2], NULL, 10));
	fprintf(stderr, "usage: pid_list hold FILE | look OTHER_PID\n");
	return 2;
}
