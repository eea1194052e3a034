/* SPDX-License-Identifier: MIT */
/*
 * policy_verdicts - what the default policy refuses, and how.
 *
 * Run under the default policy. Each step prints key=STATUS:
 *  unknown_class   RM_ALLOC of class 0x1234 (no params): gpusandbox does
 *                  not know it -> INVALID_CLASS;
 *  debug_class     RM_ALLOC of GF100_PROFILER 0x90cc (group debug, not
 *                  allowed by default) -> INVALID_CLASS;
 *  allowed_class   RM_ALLOC of HOPPER_COMPUTE_A 0xcbc0 under a channel
 *                  (group compute) -> NV_OK;
 *  unknown_control RM_CONTROL 0x20804321 on the subdevice -> NOT_SUPPORTED;
 *  debug_control   RM_CONTROL NV83DE DEBUG_READ_MEMORY 0x83de0315 ->
 *                  NOT_SUPPORTED;
 *  allowed_control RM_CONTROL GPU_GET_NAME_STRING 0x20800110 -> NV_OK;
 *  service_interrupts RM_CONTROL MC_SERVICE_INTERRUPTS 0x20801702 (what
 *                  CUDA sends while a wait runs long, as under --sm) ->
 *                  NV_OK;
 *  xfer_class      the unknown class through NV_ESC_IOCTL_XFER_CMD ->
 *                  INVALID_CLASS;
 *  unknown_escape  escape number 0x50 (none in 580) on /dev/nvidiactl ->
 *                  errno EINVAL.
 * Without gpusandbox the fake driver accepts all of them (it knows no
 * policy), which is what makes the sandboxed run meaningful.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>

#include "adv.h"

#define UNKNOWN_CLASS 0x1234u
#define GF100_PROFILER 0x90ccu
#define HOPPER_COMPUTE_A 0xcbc0u
#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define UNKNOWN_CONTROL 0x20804321u
#define DEBUG_READ_MEMORY 0x83de0315u
#define GPU_GET_NAME_STRING 0x20800110u
#define MC_SERVICE_INTERRUPTS 0x20801702u
#define MC_ENGINE_ID_ALL 0xffffffffu
#define UNKNOWN_ESCAPE 0x50u
#define CHANNEL_PARAMS 368
#define TSG_PARAMS 20
#define NAME_PARAMS 132
#define DEBUG_PARAMS 24
#define H_OBJ 0x5c00d000u

int main(void)
{
	struct rmc_session s;
	static uint8_t chan[CHANNEL_PARAMS], tsg[TSG_PARAMS], name[NAME_PARAMS], dbg[DEBUG_PARAMS];
	struct rmc_how xfer = { .xfer = true };
	nv_handle_t h = H_OBJ, group = H_OBJ + 1, channel = H_OBJ + 2;
	uint64_t junk = 0;

	adv_session_or_die(&s, -1, "policy_verdicts");
	printf("unknown_class=%s\n",
	       rmc_status_str(rmc_alloc(s.fd, NULL, s.client, s.device, &h, UNKNOWN_CLASS, NULL, 0)));
	h = H_OBJ + 3;
	printf("debug_class=%s\n",
	       rmc_status_str(rmc_alloc(s.fd, NULL, s.client, s.device, &h, GF100_PROFILER, NULL, 0)));
	rmc_alloc(s.fd, NULL, s.client, s.device, &group, KEPLER_CHANNEL_GROUP_A, tsg, 0);
	rmc_alloc(s.fd, NULL, s.client, group, &channel, HOPPER_CHANNEL_GPFIFO_A, chan, 0);
	h = H_OBJ + 4;
	printf("allowed_class=%s\n",
	       rmc_status_str(rmc_alloc(s.fd, NULL, s.client, channel, &h, HOPPER_COMPUTE_A, NULL, 0)));
	printf("unknown_control=%s\n",
	       rmc_status_str(rmc_control(s.fd, NULL, s.client, s.subdevice, UNKNOWN_CONTROL, &junk,
	                                  sizeof(junk))));
	printf("debug_control=%s\n",
	       rmc_status_str(rmc_control(s.fd, NULL, s.client, s.subdevice, DEBUG_READ_MEMORY, dbg,
	                                  sizeof(dbg))));
	printf("allowed_control=%s\n",
	       rmc_status_str(rmc_control(s.fd, NULL, s.client, s.subdevice, GPU_GET_NAME_STRING, name,
	                                  sizeof(name))));
	uint32_t engines = MC_ENGINE_ID_ALL;
	printf("service_interrupts=%s\n",
	       rmc_status_str(rmc_control(s.fd, NULL, s.client, s.subdevice, MC_SERVICE_INTERRUPTS,
	                                  &engines, sizeof(engines))));
	h = H_OBJ + 5;
	printf("xfer_class=%s\n",
	       rmc_status_str(rmc_alloc(s.fd, &xfer, s.client, s.device, &h, UNKNOWN_CLASS, NULL, 0)));
	errno = 0;
	int rc = rmc_escape(s.fd, NULL, UNKNOWN_ESCAPE, &junk, sizeof(junk));
	printf("unknown_escape=%s\n", rc == 0 ? "0" : strerrorname_np(rc < -1 ? -rc : errno));
	rmc_session_close(&s);
	printf("SUMMARY ok=0 nomem=0 other=0\n");
	return 0;
}
