/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest_semsurf.c - the self-test of the semaphore surface model
 * (fake_semsurf.c, after semsurfConstruct_IMPL in sem_surf.c at 580.95.05),
 * on the faithful fake (a GPU with 64-bit semaphores, surfaces in sysmem
 * only): the driver's refusals in its order, and a made surface that keeps
 * its memory past the workload's free of it, until the surface's last copy
 * goes, by its own free or its parent's.
 */
#include <string.h>
#include <unistd.h>

#include "fake_selftest.h"

#define H_SUB        0x5d000002u
#define H_SYSMEM     0x5d000003u
#define H_VIDMEM     0x5d000004u
#define H_SURF       0x5d000005u
#define H_SURF_DUP   0x5d000006u
#define H_NOTHING    0x5d0000ffu
#define SYSMEM_BYTES (2u << 20)
#define ATTR_PCI     (1u << NVOS32_ATTR_LOCATION_SHIFT)

static nv_status_t surface(int fd, nv_handle_t hc, nv_handle_t parent, nv_handle_t h, nv_handle_t sem,
                           nv_handle_t max, uint64_t flags)
{
	struct nv00da_alloc_params p = { .h_semaphore_mem = sem, .h_max_submitted_mem = max, .flags = flags };
	nv_handle_t out = h;

	return alloc64(fd, hc, parent, &out, NV_SEMAPHORE_SURFACE, &p);
}

static nv_status_t memory(int fd, nv_handle_t hc, nv_handle_t parent, nv_handle_t h, uint32_t cls)
{
	struct nv_memory_allocation_params p;
	nv_handle_t out = h;

	memset(&p, 0, sizeof(p));
	p.size = SYSMEM_BYTES;
	p.attr = cls == NV01_MEMORY_SYSTEM ? ATTR_PCI : 0;
	return alloc64(fd, hc, parent, &out, cls, &p);
}

/* The refusals, none of which keeps anything. */
static void semsurf_refusals(int fd, nv_handle_t hc, nv_handle_t hdev)
{
	check(surface(fd, hc, hdev, H_SURF, H_SYSMEM, 0, 0) == NV_ERR_INVALID_OBJECT_PARENT,
	      "semsurf: under a device, not a subdevice -> INVALID_OBJECT_PARENT");
	check(surface(fd, hc, H_SUB, H_SURF, H_SYSMEM, 0, 1) == NV_ERR_INVALID_ARGUMENT,
	      "semsurf: flags 1 -> INVALID_ARGUMENT");
	check(surface(fd, hc, H_SUB, H_SURF, H_NOTHING, 0, 0) == NV_ERR_OBJECT_NOT_FOUND,
	      "semsurf: a handle naming nothing fails the dup -> OBJECT_NOT_FOUND");
	check(surface(fd, hc, H_SUB, H_SURF, H_SYSMEM, H_SYSMEM, 0) == NV_ERR_INVALID_PARAMETER,
	      "semsurf: hMaxSubmittedMem on a GPU with 64-bit semaphores -> INVALID_PARAMETER");
	check(surface(fd, hc, H_SUB, H_SURF, H_VIDMEM, 0, 0) == NV_ERR_INVALID_PARAMETER,
	      "semsurf: video memory (not sysmem) -> INVALID_PARAMETER");
	check(stat_get("semsurf_kept") == 0, "semsurf: a refused surface keeps nothing");
}

void semsurf_checks(void)
{
	int fd = open_ctl();
	nv_handle_t hdev, hc = make_client(fd, &hdev), hdup = H_SURF_DUP;
	struct nv2080_alloc_params sp = { 0 };
	nv_handle_t hsub = H_SUB;

	check(alloc64(fd, hc, hdev, &hsub, NV20_SUBDEVICE_0, &sp) == NV_OK &&
	      memory(fd, hc, hdev, H_SYSMEM, NV01_MEMORY_SYSTEM) == NV_OK &&
	      memory(fd, hc, hdev, H_VIDMEM, NV01_MEMORY_LOCAL_USER) == NV_OK,
	      "semsurf: subdevice, sysmem and vidmem made");
	semsurf_refusals(fd, hc, hdev);

	check(surface(fd, hc, H_SUB, H_SURF, H_SYSMEM, 0, 0) == NV_OK && stat_get("semsurf_kept") == 1,
	      "semsurf: over sysmem -> NV_OK, the driver keeps the memory");
	check(rm_free(fd, hc, hdev, H_SYSMEM) == NV_OK && stat_get("semsurf_kept") == 1,
	      "semsurf: freeing the memory's handle frees nothing of the driver's dup");
	struct nvos55 d = { .h_client = hc, .h_parent = H_SUB, .h_object = hdup, .h_client_src = hc,
	                    .h_object_src = H_SURF };
	check(nv_ioctl(fd, NV_ESC_RM_DUP_OBJECT, &d, sizeof(d)) == 0 && d.status == NV_OK,
	      "semsurf: a dup of the surface (semsurfCopyConstruct)");
	check(rm_free(fd, hc, H_SUB, H_SURF) == NV_OK && stat_get("semsurf_kept") == 1,
	      "semsurf: the surface freed, its dup still keeps the memory");
	check(rm_free(fd, hc, H_SUB, hdup) == NV_OK && stat_get("semsurf_kept") == 0,
	      "semsurf: the last copy freed, the memory goes");

	check(memory(fd, hc, hdev, H_SYSMEM, NV01_MEMORY_SYSTEM) == NV_OK &&
	      surface(fd, hc, H_SUB, H_SURF, H_SYSMEM, 0, 0) == NV_OK && rm_free(fd, hc, hdev, H_SYSMEM) == NV_OK &&
	      stat_get("semsurf_kept") == 1, "semsurf: a second surface keeps its memory");
	check(rm_free(fd, hc, hdev, H_SUB) == NV_OK && stat_get("semsurf_kept") == 0,
	      "semsurf: freeing its parent (the subdevice) frees the surface and the memory");
	close(fd);
}
