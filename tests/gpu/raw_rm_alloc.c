/* SPDX-License-Identifier: MIT */
/*
 * GPU tier: a static program that speaks raw RM ioctls to the real driver,
 * with no CUDA library in the process. It attaches the first GPU the way
 * CUDA does (probed ids, attach, id info, an open GPU node), allocates
 * 256 MiB of video memory at a time until refused, holds it for a moment
 * so an outside monitor can read the driver's usage, frees one chunk and
 * allocates again. Prints key=value lines.
 *
 * Build: cc -static -O2 -Iinclude -o raw_rm_alloc tests/gpu/raw_rm_alloc.c
 */
#define _GNU_SOURCE
#include <stdlib.h>

#include "raw_rm.h"

#define CHUNK (256ull << 20)
#define MAX_CHUNKS 64

static nv_status_t alloc_vidmem(uint32_t client, uint32_t h)
{
	return alloc_vidmem_of(client, h, CHUNK);
}

int main(void)
{
	uint32_t client, held = 0;
	nv_status_t st;

	if (attach_first_gpu(&client))
		return 2;
	st = NV_OK;
	while (held < MAX_CHUNKS && (st = alloc_vidmem(client, H_MEM0 + held)) == NV_OK)
		held++;
	printf("chunk_bytes=%llu\nheld=%u\nstop_status=0x%x\n", CHUNK, held, st);
	fflush(stdout);
	sleep(2); /* the monitor reads the driver's usage now */
	if (held) {
		nv_status_t f = rm_free(client, H_DEVICE, H_MEM0 + held - 1);
		nv_status_t again = alloc_vidmem(client, H_MEM0 + MAX_CHUNKS);
		printf("free_status=0x%x\nrealloc_status=0x%x\n", f, again);
	}
	rm_free(client, client, client);
	return 0;
}
