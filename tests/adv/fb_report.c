/* SPDX-License-Identifier: MIT */
/*
 * fb_report - the memory report the workload sees.
 *
 * Reads FB_GET_INFO_V2 (flat list) and FB_GET_INFO V1 (list behind a
 * pointer) on the subdevice, before and after allocating 256 MiB. Under
 * --mem 1g, total, heap and usable sizes must read 1048576 KiB and free must
 * be at most what is left of the quota.
 * Prints v2_total= v2_heap= v2_free= v1_total= v1_free= after_free= (KiB).
 */
#include <stdio.h>
#include <string.h>

#include "adv.h"

static rmc_status_t read_v2(struct rmc_session *s, uint32_t *total, uint32_t *heap, uint32_t *freek)
{
	struct nv2080_fb_get_info_v2_params p;
	rmc_status_t st;

	memset(&p, 0, sizeof(p));
	p.list_size = 3;
	p.list[0].index = NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE;
	p.list[1].index = NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE;
	p.list[2].index = NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
	st = rmc_control(s->fd, NULL, s->client, s->subdevice, NV2080_CTRL_CMD_FB_GET_INFO_V2, &p,
	                 rmc_ctrl_size(NV2080_CTRL_CMD_FB_GET_INFO_V2, sizeof(p)));
	*total = p.list[0].data;
	*heap = p.list[1].data;
	*freek = p.list[2].data;
	return st;
}

int main(void)
{
	struct rmc_session s;
	struct nv2080_fb_info_entry l1[2] = { { NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE, 0 },
	                                      { NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE, 0 } };
	struct nv2080_fb_get_info_v1_params v1 = { .list_size = 2, .list = (uintptr_t)l1 };
	uint32_t total, heap, freek, t2, h2, f2;
	rmc_status_t st;

	adv_session_or_die(&s, -1, "fb_report");
	st = read_v2(&s, &total, &heap, &freek);
	printf("v2_status=%s\nv2_total=%u\nv2_heap=%u\nv2_free=%u\n", rmc_status_str(st), total, heap, freek);
	st = rmc_control(s.fd, NULL, s.client, s.subdevice, NV2080_CTRL_CMD_FB_GET_INFO, &v1, sizeof(v1));
	printf("v1_status=%s\nv1_total=%u\nv1_free=%u\n", rmc_status_str(st), l1[0].data, l1[1].data);
	st = adv_alloc_rm(&s, NULL, rmc_next_handle(&s), ADV_CHUNK);
	read_v2(&s, &t2, &h2, &f2);
	printf("alloc=%s\nafter_total=%u\nafter_free=%u\n", rmc_status_str(st), t2, f2);
	adv_print_summary(&(struct adv_tally){ 0 });
	return 0;
}
