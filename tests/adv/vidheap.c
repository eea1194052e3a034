/* SPDX-License-Identifier: MIT */
/*
 * vidheap - the second vidmem path: NV_ESC_RM_VID_HEAP_CONTROL (0x4A) with
 * function ALLOC_SIZE and attr location VIDMEM, which RM turns into a
 * class-0x40 allocation without any RM_ALLOC on the wire. Chunks are freed
 * with function FREE. Run both direct and XFER-wrapped.
 *
 * `vidheap egm` sets attr2's EGM bit (24) on every request. Run against a
 * driver without the bit (with-fake-nvidia --no-egm: 535, 595), the memory
 * is ordinary video memory, so the bit must not let it past the quota.
 */
#include <stdio.h>
#include <string.h>

#include "adv.h"

static uint32_t attr2;

static rmc_status_t vh_alloc(struct rmc_session *s, const struct rmc_how *how,
			     nv_handle_t h, uint64_t size)
{
	return rmc_vidheap_alloc_attr2(s->fd, how, s->client, s->device, h, size, attr2);
}

static rmc_status_t vh_free(struct rmc_session *s, const struct rmc_how *how, nv_handle_t h)
{
	return rmc_vidheap_free(s->fd, how, s->client, s->device, h);
}

int main(int argc, char **argv)
{
	struct rmc_session s;
	struct adv_fill direct = { 0 }, wrapped = { 0 };
	struct adv_tally total = { 0 };
	const struct rmc_how how_xfer = { .xfer = true };

	if (argc > 1 && strcmp(argv[1], "egm") == 0)
		attr2 = NVOS32_ATTR2_USE_EGM;
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
