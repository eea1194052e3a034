/* SPDX-License-Identifier: MIT */
/*
 * xfer - the same vidmem allocations as static_raw, but every RM call is
 * wrapped in NV_ESC_IOCTL_XFER_CMD (nr 0xD3, a 16-byte {cmd, size, ptr}
 * header). A supervisor that only decodes the direct RM_ALLOC escape would
 * let these through unchecked.
 */
#include <stdio.h>

#include "adv.h"

int main(void)
{
	struct rmc_session s;
	struct adv_fill f = { 0 };
	const struct rmc_how how = { .xfer = true };

	adv_session_or_die(&s, -1, "xfer");
	adv_fill(&s, &how, adv_alloc_rm, adv_free_rm, ADV_CHUNK, "xfer", &f);
	adv_print_summary(&f.tally);
	return 0;
}
