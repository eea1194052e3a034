/* SPDX-License-Identifier: MIT */
/*
 * dmabuf - a dma-buf export keeps memory after its handle is freed
 * (issue #17, items 3 and 9; measured on an H100: 4.5 GiB held under
 * --mem 2g, docs/gpu-results/2026-11-23-h100-held-after-free).
 *
 * DMABUF_ROUNDS times: allocate 768 MiB, export it to a dma-buf through
 * the GPU node (NV_ESC_EXPORT_TO_DMABUF_FD), free the handle. The driver
 * dups the memory into its own client for the dma-buf, so the memory
 * stays; a supervisor that credits the charge back on RM_FREE lets the
 * driver reach 3 × 768 MiB. Under gpusandbox the export must be refused
 * (NV_ERR_NOT_SUPPORTED in the struct, ioctl() == 0), and the driver's
 * peak stays within the quota. The export on the control device must
 * fail with EINVAL, as the driver says (NV_ACTUAL_DEVICE_ONLY).
 *
 * Prints alloc= export= (statuses per round), ctl_export= (errno name or
 * OK) and SUMMARY.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "adv.h"

#define DMABUF_ROUNDS 3
#define DMABUF_SIZE   (768ull * RMC_MIB)
#define GPU_NODE      "/dev/nvidia0"

static rmc_status_t export_one(int fd, nv_handle_t h_client, nv_handle_t h_mem, int *err)
{
	static struct nv_ioctl_export_to_dma_buf_fd p;

	memset(&p, 0, sizeof(p));
	p.fd = -1;
	p.h_client = h_client;
	p.total_objects = 1;
	p.num_objects = 1;
	p.total_size = DMABUF_SIZE;
	p.handles[0] = h_mem;
	p.sizes[0] = DMABUF_SIZE;
	p.status = NV_ERR_GENERIC;
	*err = rmc_escape(fd, NULL, NV_ESC_EXPORT_TO_DMABUF_FD, &p, sizeof(p));
	return p.status;
}

int main(void)
{
	struct rmc_session s;
	struct adv_tally t = { 0 };
	char allocs[128] = "", exports[128] = "";
	int gpu_fd, err;

	adv_session_or_die(&s, -1, "dmabuf");
	gpu_fd = open(GPU_NODE, O_RDWR | O_CLOEXEC);
	if (gpu_fd < 0) {
		printf("dmabuf: setup failed: open %s: %s\n", GPU_NODE, strerror(errno));
		return ADV_EXIT_SETUP;
	}
	for (int i = 0; i < DMABUF_ROUNDS; i++) {
		nv_handle_t h = rmc_next_handle(&s);
		rmc_status_t a = adv_alloc_rm(&s, NULL, h, DMABUF_SIZE), e = NV_ERR_GENERIC;

		adv_count(&t, a);
		if (a == NV_OK) {
			e = export_one(gpu_fd, s.client, h, &err);
			if (err)
				e = RMC_SYSERR(-err);
			(void)adv_free_rm(&s, NULL, h);
		}
		snprintf(allocs + strlen(allocs), sizeof(allocs) - strlen(allocs), "%s%s", i ? "," : "",
		         rmc_status_str(a));
		snprintf(exports + strlen(exports), sizeof(exports) - strlen(exports), "%s%s",
		         i ? "," : "", rmc_status_str(e));
	}
	/* The control device is not a GPU node: the driver answers EINVAL. */
	nv_handle_t h = rmc_next_handle(&s);
	if (adv_alloc_rm(&s, NULL, h, RMC_MIB) == NV_OK) {
		(void)export_one(s.fd, s.client, h, &err);
		(void)adv_free_rm(&s, NULL, h);
		printf("ctl_export=%s\n", err ? strerrorname_np(-err) : "OK");
	}
	printf("alloc=%s\nexport=%s\n", allocs, exports);
	adv_print_summary(&t);
	return 0;
}
