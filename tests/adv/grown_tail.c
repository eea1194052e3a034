/* SPDX-License-Identifier: MIT */
/*
 * grown_tail - the driver reads more alloc params than gpusandbox copied.
 *
 * NV50_P2P's params are 72 bytes on 580 and 88 on 590+ (the rows in
 * include/nvrm/v580 and v590). Run on a 590 driver with the 580 tables
 * (--driver-abi 580), gpusandbox copies 72 bytes into its params buffer and
 * the driver reads 88 from there. The workload first fills that buffer with
 * its own bytes through an allowed control (FB_GET_INFO_V2, 1028 bytes of
 * 0x5a: the supervisor copies them whatever the driver then answers), then
 * allocates NV50_P2P with the same bytes in its own tail. The fake counts
 * tails with a non-zero byte (grown_tail_nonzero): bare, the driver reads
 * the workload's tail; under gpusandbox it must read zeros, never an
 * earlier call's bytes.
 */
#include <stdio.h>
#include <string.h>

#include "adv.h"

#define PLANT_BYTE      0x5a
#define P2P_580_SIZE    72u
#define P2P_590_SIZE    88u

int main(void)
{
	struct rmc_session s;
	struct nv2080_fb_get_info_v2_params plant;
	uint8_t p2p[P2P_590_SIZE];
	nv_handle_t h = 0;
	rmc_status_t st;

	adv_session_or_die(&s, -1, "grown_tail");
	memset(&plant, PLANT_BYTE, sizeof(plant));
	st = rmc_control(s.fd, NULL, s.client, s.subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &plant,
	                 sizeof(plant));
	printf("plant=%s\n", rmc_status_str(st));
	memset(p2p, 0, sizeof(p2p));
	memset(p2p + P2P_580_SIZE, PLANT_BYTE, sizeof(p2p) - P2P_580_SIZE);
	h = rmc_next_handle(&s);
	st = rmc_alloc(s.fd, NULL, s.client, s.subdevice, &h, NV50_P2P, p2p, sizeof(p2p));
	printf("p2p=%s\n", rmc_status_str(st));
	adv_print_summary(&(struct adv_tally){ 0 });
	return 0;
}
