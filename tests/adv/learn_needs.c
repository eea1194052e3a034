/* SPDX-License-Identifier: MIT */
/*
 * learn_needs [kill] - a workload that needs a class and a control the
 * default policy refuses, for tests/learn/run.sh.
 *
 * It needs (exit status 0 only if both work):
 *  profiler    RM_ALLOC of GF100_PROFILER 0x90cc (group debug);
 *  debug_read  RM_CONTROL NV83DE DEBUG_READ_MEMORY 0x83de0315 (debug),
 *              twice: the second must need no second entry.
 * and it also tries what learning must not let through (printed, not part
 * of the exit status; the runner checks them):
 *  unknown     RM_ALLOC of class 0x1234, which gpusandbox does not know
 *              -> INVALID_CLASS;
 *  finn        GF100_PROFILER with FINN-serialized params -> NOT_SUPPORTED;
 *  disable     FIFO_DISABLE_CHANNELS, reserved to the supervisor ->
 *              INSUFFICIENT_PERMISSIONS;
 *  over_quota  2 GiB of video memory under --mem 1g -> NO_MEMORY.
 * With "kill" it then kills itself with SIGKILL, so the learned file must
 * be written for a workload that died of a signal.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define GF100_PROFILER 0x90ccu
#define UNKNOWN_CLASS 0x1234u
#define DEBUG_READ_MEMORY 0x83de0315u
#define DEBUG_PARAMS 24
#define DISABLE_PARAMS 536
#define OVER_QUOTA (2ull << 30)
#define H_OBJ 0x5c00e000u

/* RM_ALLOC with the FINN-serialized flag: rmclient does not set flags. */
static rmc_status_t alloc_finn(const struct rmc_session *s, nv_handle_t h)
{
	static uint8_t params[DEBUG_PARAMS];
	struct nvos64 a = {
		.h_root = s->client, .h_object_parent = s->device, .h_object_new = h,
		.h_class = GF100_PROFILER, .p_alloc_parms = (uintptr_t)params,
		.params_size = sizeof(params), .flags = NVOS64_FLAGS_FINN_SERIALIZED,
	};
	int rc = rmc_escape(s->fd, NULL, NV_ESC_RM_ALLOC, &a, sizeof(a));

	return rc < 0 ? RMC_SYSERR(-rc) : a.status;
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	static uint8_t dbg[DEBUG_PARAMS], disable[DISABLE_PARAMS];
	nv_handle_t h = H_OBJ;
	rmc_status_t prof, read1, read2;

	adv_session_or_die(&s, -1, "learn_needs");
	prof = rmc_alloc(s.fd, NULL, s.client, s.device, &h, GF100_PROFILER, NULL, 0);
	read1 = rmc_control(s.fd, NULL, s.client, s.subdevice, DEBUG_READ_MEMORY, dbg, sizeof(dbg));
	read2 = rmc_control(s.fd, NULL, s.client, s.subdevice, DEBUG_READ_MEMORY, dbg, sizeof(dbg));
	printf("profiler=%s\ndebug_read=%s\ndebug_read_again=%s\n", rmc_status_str(prof),
	       rmc_status_str(read1), rmc_status_str(read2));
	h = H_OBJ + 1;
	printf("unknown=%s\n",
	       rmc_status_str(rmc_alloc(s.fd, NULL, s.client, s.device, &h, UNKNOWN_CLASS, NULL, 0)));
	printf("finn=%s\n", rmc_status_str(alloc_finn(&s, H_OBJ + 2)));
	printf("disable=%s\n",
	       rmc_status_str(rmc_control(s.fd, NULL, s.client, s.subdevice,
	                                  NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, disable,
	                                  sizeof(disable))));
	printf("over_quota=%s\n",
	       rmc_status_str(rmc_alloc_vidmem(s.fd, NULL, s.client, s.device, H_OBJ + 3, OVER_QUOTA)));
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "kill") == 0)
		raise(SIGKILL);
	rmc_session_close(&s);
	return prof == NV_OK && read1 == NV_OK && read2 == NV_OK ? 0 : 1;
}
