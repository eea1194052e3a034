/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest_uvmmap.c - UVM's external mappings as the fake models them
 * (fake_uvm.c), moved from fake_selftest.c, whose main runs uvm_checks: a
 * mapping holds its memory past RM_FREE of the memory's only handle, until
 * UVM_FREE of the range or the UVM file's last close; another process's
 * client is refused and a dup it shared maps; unmaps split a mapping; a map
 * over a mapping replaces it; and the argument checks of each command.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fake_selftest.h"
#include "nvuvm_abi.h"

static nv_status_t uvm_validate(int ufd, uint64_t base, uint64_t len)
{
	struct uvm_validate_va_range_params p = { .base = base, .length = len };
	return uvm_call(ufd, UVM_VALIDATE_VA_RANGE, &p, offsetof(typeof(p), rm_status));
}

static nv_status_t uvm_unmap(int ufd, uint64_t base, uint64_t len, int gpu)
{
	struct uvm_unmap_external_params p = { .base = base, .length = len };
	memset(p.gpu_uuid, gpu, sizeof(p.gpu_uuid));
	return uvm_call(ufd, UVM_UNMAP_EXTERNAL, &p, offsetof(typeof(p), rm_status));
}

static int64_t used(void)
{
	return stat_get("gpu0.vidmem_used");
}

/* (1) and (2): the mapping holds the memory after RM_FREE of its only
 * handle, until UVM_FREE of the range or the UVM file's last close. */
static void uvm_check_hold(int fd, nv_handle_t hc, nv_handle_t hdev, bool by_close)
{
	const char *how = by_close ? "closing the UVM fd" : "UVM_FREE of the range";
	int64_t base0 = used();
	int ufd = open_uvm();
	nv_handle_t hm = 0;

	check(uvm_create(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK &&
	      alloc_vidmem(fd, hc, hdev, &hm, UVM_MAP_BYTES) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, UVM_MAP_BYTES, hc, hm) == NV_OK &&
	      stat_get("uvm_mappings") == 1, "uvm (%s): 64 MiB of our own vidmem mapped", how);
	check(rm_free(fd, hc, hdev, hm) == NV_OK &&
	      used() == base0 + (int64_t)UVM_MAP_BYTES,
	      "uvm (%s): RM_FREE of the only handle leaves the 64 MiB used", how);
	if (by_close) {
		close(ufd);
		check(stat_wait("gpu0.vidmem_used", base0) == base0 && stat_wait("uvm_mappings", 0) == 0,
		      "uvm: closing the UVM fd releases the memory");
		return;
	}
	check(uvm_free(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK && used() == base0 &&
	      stat_get("uvm_mappings") == 0, "uvm: UVM_FREE of the range releases the memory");
	close(ufd);
}

/* (3): another process's client is refused; a dup of it the owner shared
 * with a client of ours maps, and holds the memory past its owner. */
static void uvm_check_other(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	int64_t base0 = used();
	int ufd = open_uvm();
	struct other o;

	other_start(&o, 0, false);
	check(o.hc && o.hm && uvm_create(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, UVM_MAP_BYTES, o.hc, o.hm) == NV_ERR_INSUFFICIENT_PERMISSIONS &&
	      stat_get("uvm_mappings") == 0, "uvm: mapping another process's client -> INSUFFICIENT_PERMISSIONS (0x1b)");
	check(other_stop(&o) && stat_wait("gpu0.vidmem_used", base0) == base0,
	      "uvm: the refused map holds nothing once its owner is gone");

	other_start(&o, hc, false);
	nv_handle_t hd = 0;
	check(o.hc && dup_obj(fd, hc, hdev, &hd, o.hc, o.hm) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, UVM_MAP_BYTES, hc, hd) == NV_OK &&
	      rm_free(fd, hc, hdev, hd) == NV_OK,
	      "uvm: our own dup of memory shared to our client (RS_SHARE_TYPE_CLIENT) maps");
	check(other_stop(&o) && stat_wait("clients_live", 1) == 1 &&
	      used() == base0 + (int64_t)UVM_MAP_BYTES,
	      "uvm: it stays allocated after the owner exits and every handle is freed");
	check(uvm_free(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK && used() == base0,
	      "uvm: UVM_FREE releases it");
	close(ufd);
}

/* (4): unmaps split a mapping; the memory goes with the last piece. */
static void uvm_check_unmap(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	int64_t base0 = used(), held = base0 + (int64_t)UVM_MAP_BYTES;
	const uint64_t R = UVM_RANGE_BASE, half = UVM_MAP_BYTES / 2, quarter = UVM_MAP_BYTES / 4;
	int ufd = open_uvm();
	nv_handle_t hm = 0;

	check(uvm_create(ufd, R, UVM_RANGE_BYTES) == NV_OK &&
	      alloc_vidmem(fd, hc, hdev, &hm, UVM_MAP_BYTES) == NV_OK &&
	      uvm_map(ufd, R, UVM_MAP_BYTES, hc, hm) == NV_OK && rm_free(fd, hc, hdev, hm) == NV_OK,
	      "uvm: 64 MiB mapped, handle freed");
	check(uvm_unmap(ufd, R + 64 * 1024, 64 * 1024, UVM_GPU_A) == NV_ERR_INVALID_ADDRESS &&
	      stat_get("uvm_mappings") == 1 && used() == held,
	      "uvm: an unmap cutting the mapping off its 2 MiB pages -> INVALID_ADDRESS");
	check(uvm_unmap(ufd, R, UVM_MAP_BYTES, UVM_GPU_B) == NV_OK && stat_get("uvm_mappings") == 1 &&
	      used() == held, "uvm: unmapping on another GPU's UUID leaves it");
	check(uvm_unmap(ufd, R + quarter, quarter, UVM_GPU_A) == NV_OK && stat_get("uvm_mappings") == 2 &&
	      used() == held, "uvm: unmapping the middle splits it in two, memory kept");
	check(uvm_unmap(ufd, R, half, UVM_GPU_A) == NV_OK && stat_get("uvm_mappings") == 1 && used() == held,
	      "uvm: unmapping the first half keeps the memory");
	check(uvm_unmap(ufd, R + half, half, UVM_GPU_A) == NV_OK && stat_get("uvm_mappings") == 0 &&
	      used() == base0, "uvm: unmapping the other half releases it");
	check(uvm_unmap(ufd, R + UVM_RANGE_BYTES - half, UVM_MAP_BYTES, UVM_GPU_A) == NV_ERR_INVALID_ADDRESS,
	      "uvm: an unmap past the range -> INVALID_ADDRESS");
	check(uvm_free(ufd, R, UVM_RANGE_BYTES) == NV_OK, "uvm: free the empty range");
	close(ufd);
}

/* (5): a map over a mapping replaces it. */
static void uvm_check_replace(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	int64_t base0 = used();
	int ufd = open_uvm();
	nv_handle_t ha = 0, hb = 0;

	check(uvm_create(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK &&
	      alloc_vidmem(fd, hc, hdev, &ha, UVM_MAP_BYTES) == NV_OK &&
	      alloc_vidmem(fd, hc, hdev, &hb, UVM_MAP_BYTES) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, UVM_MAP_BYTES, hc, ha) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, UVM_MAP_BYTES, hc, hb) == NV_OK &&
	      stat_get("uvm_mappings") == 1, "uvm: a second map over the first replaces it");
	check(rm_free(fd, hc, hdev, ha) == NV_OK && used() == base0 + (int64_t)UVM_MAP_BYTES,
	      "uvm: the replaced memory goes with its handle");
	check(rm_free(fd, hc, hdev, hb) == NV_OK && used() == base0 + (int64_t)UVM_MAP_BYTES &&
	      uvm_free(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK && used() == base0,
	      "uvm: the mapped one stays until UVM_FREE");
	close(ufd);
}

/* (6) and the argument checks. */
static void uvm_check_args(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	const uint64_t R = UVM_RANGE_BASE;
	int ufd = open_uvm(), ufd2 = open_uvm();
	nv_handle_t hm = 0;

	check(uvm_create(ufd, R + 1, UVM_RANGE_BYTES) == NV_ERR_INVALID_ADDRESS &&
	      uvm_create(ufd, R, 0) == NV_ERR_INVALID_ADDRESS, "uvm: CREATE unaligned or empty -> INVALID_ADDRESS");
	check(uvm_create(ufd, R, UVM_RANGE_BYTES) == NV_OK &&
	      uvm_create(ufd, R + UVM_RANGE_BYTES - 4096, 8192) == NV_ERR_UVM_ADDRESS_IN_USE,
	      "uvm: CREATE overlapping a range -> UVM_ADDRESS_IN_USE (0x68)");
	check(uvm_create(ufd2, R, UVM_RANGE_BYTES) == NV_OK && uvm_free(ufd2, R, UVM_RANGE_BYTES) == NV_OK,
	      "uvm: another open file is another VA space");
	check(uvm_validate(ufd, R, UVM_RANGE_BYTES) == NV_OK, "uvm: VALIDATE of the exact range -> NV_OK");
	check(uvm_validate(ufd, R, UVM_RANGE_BYTES / 2) == NV_ERR_INVALID_ADDRESS &&
	      uvm_validate(ufd, R + 4096, UVM_RANGE_BYTES - 4096) == NV_ERR_INVALID_ADDRESS &&
	      uvm_validate(ufd2, R, UVM_RANGE_BYTES) == NV_ERR_INVALID_ADDRESS,
	      "uvm: VALIDATE of another extent, or in another VA space -> INVALID_ADDRESS");
	check(alloc_vidmem(fd, hc, hdev, &hm, UVM_MAP_BYTES) == NV_OK &&
	      uvm_map_n(ufd, R, UVM_MAP_BYTES, 0, hc, hm, UVM_GPU_A, 0) == NV_ERR_INVALID_ARGUMENT &&
	      uvm_map_n(ufd, R, UVM_MAP_BYTES, 0, hc, hm, UVM_GPU_A, uvm_max_gpus() + 1) ==
	      NV_ERR_INVALID_ARGUMENT, "uvm: MAP on 0 GPUs or more than UVM_MAX_GPUS -> INVALID_ARGUMENT");
	check(uvm_map(ufd, R + UVM_RANGE_BYTES - 4096, 8192, hc, hm) == NV_ERR_INVALID_ADDRESS &&
	      uvm_map(ufd2, R, UVM_MAP_BYTES, hc, hm) == NV_ERR_INVALID_ADDRESS,
	      "uvm: MAP outside a range -> INVALID_ADDRESS");
	check(uvm_map(ufd, R, UVM_MAP_BYTES, 0xc1d0ffffu, hm) == NV_ERR_INVALID_CLIENT &&
	      uvm_map(ufd, R, UVM_MAP_BYTES, hc, hdev) == NV_ERR_INVALID_OBJECT_HANDLE,
	      "uvm: MAP of an unknown client / a non-memory handle -> INVALID_CLIENT / INVALID_OBJECT_HANDLE");
	check(uvm_map_n(ufd, R, UVM_MAP_BYTES, 2 * MIB, hc, hm, UVM_GPU_A, 1) == NV_ERR_INVALID_OFFSET &&
	      stat_get("uvm_mappings") == 0, "uvm: MAP past the memory's end -> INVALID_OFFSET");
	check(uvm_map_n(ufd, R, UVM_MAP_BYTES, 0, hc, hm, UVM_GPU_A, 2) == NV_OK &&
	      stat_get("uvm_mappings") == 2, "uvm: MAP on two GPUs: one mapping each");
	check(ioctl(ufd, UVM_VALIDATE_VA_RANGE, (void *)16) == -1 && errno == EFAULT,
	      "uvm: params at a bad address -> -EFAULT");
	if (driver_branch() < UVM_FREE_BASE_ONLY_BRANCH)
		check(uvm_free(ufd, R, UVM_RANGE_BYTES / 2) == NV_ERR_INVALID_ADDRESS &&
		      stat_get("uvm_mappings") == 2, "uvm: UVM_FREE of part of a range -> INVALID_ADDRESS");
	check(uvm_free(ufd, R + 4096, UVM_RANGE_BYTES - 4096) == NV_ERR_INVALID_ADDRESS,
	      "uvm: UVM_FREE not at the range's start -> INVALID_ADDRESS");
	check(rm_free(fd, hc, hdev, hm) == NV_OK && uvm_free(ufd, R, UVM_RANGE_BYTES) == NV_OK &&
	      stat_get("uvm_mappings") == 0 && uvm_validate(ufd, R, UVM_RANGE_BYTES) == NV_ERR_INVALID_ADDRESS,
	      "uvm: after UVM_FREE no mapping is left and VALIDATE -> INVALID_ADDRESS");
	close(ufd2);
	close(ufd);
}

void uvm_checks(void)
{
	int fd = open_ctl();
	nv_handle_t hdev, hc = make_client(fd, &hdev);
	int64_t maps0 = stat_get("uvm_maps");

	uvm_check_hold(fd, hc, hdev, false);
	uvm_check_hold(fd, hc, hdev, true);
	uvm_check_other(fd, hc, hdev);
	uvm_check_unmap(fd, hc, hdev);
	uvm_check_replace(fd, hc, hdev);
	uvm_check_args(fd, hc, hdev);
	check(stat_get("uvm_maps") == maps0 + 7, "stats: uvm_maps counts the 7 successful maps");
	close(fd);
	check(stat_wait("clients_live", 0) == 0 && stat_wait("gpu0.vidmem_used", 0) == 0,
	      "uvm: all closed, nothing held");
}
