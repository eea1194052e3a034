/* SPDX-License-Identifier: MIT */
/*
 * vidheap - the second vidmem path: NV_ESC_RM_VID_HEAP_CONTROL (0x4A) with
 * function ALLOC_SIZE and attr location VIDMEM, which RM turns into a
 * class-0x40 allocation without any RM_ALLOC on the wire. Chunks are freed
 * with function FREE. Run both direct and XFER-wrapped.
 */
#include <stdio.h>

#include "adv.h"

static rmc_status_t vh_alloc(struct rmc_session *s, const struct rmc_how *how,
			     nv_handle_t h, uint64_t size)
{
	return rmc_vidheap_alloc(s->fd, how, s->client, s->device, h, size);
}

static rmc_status_t vh_free(struct rmc_session *s, const struct rmc_how *how, nv_handle_t h)
{
	return rmc_vidheap_free(s->fd, how, s->client, s->device, h);
}

int main(void)
{
	struct rmc_session s;
	struct adv_fill direct = { 0 }, wrapped = { 0 };
	struct adv_tally total = { 0 };
	const struct rmc_how how_xfer = { .xfer = true };

	adv_session_or_die(&s, -1, "vidheap");
	adv_fill(&s, NULL, vh_alloc, vh_free, ADV_CHUNK, "vidheap", &direct);
	adv_fill_release(&s, NULL, vh_free, &direct);
	adv_fill(&s, &how_xfer, vh_alloc, vh_free, ADV_CHUNK, "vidheap_xfer", &wrapped);
	printf("direct_ok=%d direct_nomem=%d xfer_ok=%d xfer_nomem=%d realloc=0x%x\n",
	       direct.tally.ok, direct.tally.nomem, wrapped.tally.ok, wrapped.tally.nomem,
	       direct.realloc);
	adv_add(&total, &direct.tally);
	adv_add(&total, &wrapped.tally);
	adv_print_summary(&total);
	return 0;
}
