/* SPDX-License-Identifier: MIT */
/*
 * fake_semsurf.c - the semaphore surface (NV_SEMAPHORE_SURFACE, class 0xda)
 * as the driver builds it: semsurfConstruct_IMPL and _semsurfDupMemory in
 * src/nvidia/src/kernel/gpu/mem_mgr/sem_surf.c, open-gpu-kernel-modules
 * 580.95.05 (the same checks on every branch from 535.54.03 to 595.45.04).
 *
 * What a test can observe of it, in the driver's order:
 *  - the parent is a subdevice (resource_list.h: RS_LIST(classId(Subdevice)));
 *  - flags must be 0, else NV_ERR_INVALID_ARGUMENT;
 *  - hSemaphoreMem is dup'ed into the driver's internal client
 *    (pRmApi->DupObject from the surface's own client): a handle that is
 *    not an object of that client fails the dup (NV_ERR_OBJECT_NOT_FOUND);
 *  - a non-zero hMaxSubmittedMem is refused on a GPU with 64-bit
 *    semaphores (NV_ERR_INVALID_PARAMETER), which is every chip from GA102
 *    on (b64BitSemaphoresSupported, g_mem_mgr_nvoc.c); TU10x, TU11x and
 *    GA100 take it and dup it too, unless it equals hSemaphoreMem;
 *  - the memory must be memory (memGetByHandle) and in system memory:
 *    "XXX Limit semaphore surfaces to sysmem for the time being" refuses
 *    any other location with NV_ERR_INVALID_PARAMETER, for both objects;
 *  - on any failure the dups are freed again (ctorFailed ->
 *    _semsurfDestroyShared -> _semsurfFreeMemory).
 * A surface that was made holds its dups until its last copy goes (a dup
 * of the surface shares them: semsurfCopyConstruct, refCount): freeing
 * the workload's own handles on the memory frees nothing. The fake keeps
 * a reference on each kept memory object's res, so its account of live
 * video memory (gpuN.vidmem_used) is the driver's.
 *
 * Two knobs (gs-fakedrv --help): --semaphores-32bit plays a TU10x/GA100
 * (hMaxSubmittedMem accepted), --semsurf-any-memory a driver without the
 * "XXX" sysmem limit. No released driver lacks that limit; the knob shows
 * that the supervisor's charge does not rest on it (tests/adv sem_surf,
 * docs/security/driver-refs.md).
 */
#include <stddef.h>
#include <string.h>

#include "fake_rm_int.h"

static bool is_memory(const struct obj *o)
{
	return o->res->kind == K_VIDMEM || o->res->kind == K_SYSMEM;
}

/* The location check both objects pass (NVOS32_ATTR_LOCATION_PCI). */
static bool location_ok(const struct obj *o)
{
	return o->res->kind == K_SYSMEM || fake_st.cfg.semsurf_any_memory;
}

/* The dup of one handle: the object it names in the surface's client. */
static nv_status_t find_memory(struct client *c, nv_handle_t h, struct obj **out)
{
	struct obj *o = fake_find_obj(c, h);

	if (!o)
		return NV_ERR_OBJECT_NOT_FOUND;
	if (!is_memory(o))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	*out = o;
	return NV_OK;
}

nv_status_t fake_semsurf_construct(struct client *c, enum obj_kind parent_kind, const void *params,
                                   struct res *kept[FAKE_SEMSURF_KEPT])
{
	struct nv00da_alloc_params p;
	struct obj *sem = NULL, *max = NULL;
	nv_status_t st;

	if (parent_kind != K_SUBDEVICE)
		return NV_ERR_INVALID_OBJECT_PARENT;
	memcpy(&p, params, sizeof(p));
	if (p.flags != 0)
		return NV_ERR_INVALID_ARGUMENT;
	if ((st = find_memory(c, p.h_semaphore_mem, &sem)) != NV_OK)
		return st;
	if (p.h_max_submitted_mem != 0) {
		if (!fake_st.cfg.semaphores_32bit)
			return NV_ERR_INVALID_PARAMETER;
		if (p.h_max_submitted_mem != p.h_semaphore_mem &&
		    (st = find_memory(c, p.h_max_submitted_mem, &max)) != NV_OK)
			return st;
	}
	if (!location_ok(sem) || (max && !location_ok(max)))
		return NV_ERR_INVALID_PARAMETER;
	/* The driver checks the max-submitted memory is no smaller than the
	 * semaphore memory; the fake knows sizes of video memory only. */
	if (max && max->res->kind == K_VIDMEM && sem->res->kind == K_VIDMEM && max->res->bytes < sem->res->bytes)
		return NV_ERR_BUFFER_TOO_SMALL;
	kept[0] = sem->res;
	kept[0]->refs++;
	if (max) {
		kept[1] = max->res;
		kept[1]->refs++;
	}
	fake_st.semsurf_kept += max ? 2 : 1;
	return NV_OK;
}

void fake_semsurf_release(struct res *r)
{
	for (unsigned i = 0; i < FAKE_SEMSURF_KEPT; i++) {
		struct res *k = r->kept[i];
		if (!k)
			continue;
		r->kept[i] = NULL;
		fake_st.semsurf_kept--;
		fake_res_put(k);
	}
}
