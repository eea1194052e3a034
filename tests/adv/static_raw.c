/* SPDX-License-Identifier: MIT */
/*
 * static_raw - a statically linked program (no CUDA, no dynamic loader, so
 * no LD_PRELOAD shim can see it) that speaks raw RM ioctls: NVOS64
 * class-0x40 allocations of 256 MiB until one is refused. It then frees one
 * chunk and allocates again, which must succeed: a quota refusal has to look
 * like the driver's own NV_ERR_NO_MEMORY and leave the client usable.
 */
#include <stdio.h>

#include "adv.h"

int main(void)
{
	struct rmc_session s;
	struct adv_fill f = { 0 };

	adv_session_or_die(&s, -1, "static_raw");
	adv_fill(&s, NULL, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "static_raw", &f);
	printf("allocated=%d\n", f.held);
	adv_print_summary(&f.tally);
	return 0;
}
