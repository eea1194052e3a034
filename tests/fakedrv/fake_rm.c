/* SPDX-License-Identifier: MIT */
/*
 * fake_rm.c - the Resource Manager model behind gs-fakedrv.
 *
 * It behaves like the real driver where a sandbox test can observe it:
 * statuses come back in the struct with ioctl() == 0, nested parameters are
 * read from (and written back to) the memory of whichever process made the
 * call, clients belong to the open file and not to a pid, RM_FREE takes a
 * whole subtree, and memory shared by RM_DUP_OBJECT is released only with
 * its last handle. Everything else is kept as small as the tests allow.
 *
 * One global mutex guards the whole model: calls are short and the stats
 * snapshot must be consistent.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>

#include "fake_rm_int.h"

/* Largest nested params block we ever read for a class (channels). */
#define FAKE_MAX_ALLOC_PARAMS     NV_CHANNEL_ALLOC_PARAMS_SIZE

struct fake_state fake_st = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- class table -------------------------------------------------------- */

struct fake_class {
	uint32_t      cls;
	enum obj_kind kind;
	uint32_t      params_size;     /* what the driver's class table copies */
	bool          params_required;
};

static const struct fake_class class_table[] = {
	{ NV01_MEMORY_LOCAL_USER,  K_VIDMEM,  NV_MEMORY_ALLOCATION_PARAMS_SIZE, true },
	{ NV01_MEMORY_SYSTEM,      K_SYSMEM,  NV_MEMORY_ALLOCATION_PARAMS_SIZE, true },
	/* EGM lives outside the framebuffer: no vidmem. */
	{ NV_MEMORY_EXTENDED_USER, K_SYSMEM,  NV_MEMORY_ALLOCATION_PARAMS_SIZE, true },
	{ NV50_MEMORY_VIRTUAL,     K_VIRTUAL, NV_MEMORY_ALLOCATION_PARAMS_SIZE, true },
	{ NV01_DEVICE_0,           K_DEVICE,  NV0080_ALLOC_PARAMS_SIZE, false },
	{ NV20_SUBDEVICE_0,        K_SUBDEVICE, NV2080_ALLOC_PARAMS_SIZE, false },
	{ KEPLER_CHANNEL_GROUP_A,  K_CHANNEL_GROUP, NV_CHANNEL_GROUP_ALLOC_PARAMS_SIZE, true },
	{ VOLTA_CHANNEL_GPFIFO_A,  K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	{ TURING_CHANNEL_GPFIFO_A, K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	{ AMPERE_CHANNEL_GPFIFO_A, K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	{ HOPPER_CHANNEL_GPFIFO_A, K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	{ BLACKWELL_CHANNEL_GPFIFO_A, K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	{ BLACKWELL_CHANNEL_GPFIFO_B, K_CHANNEL, NV_CHANNEL_ALLOC_PARAMS_SIZE, true },
	/* RS_REQUIRED(NV_SEMAPHORE_SURFACE_ALLOC_PARAMETERS), resource_list.h */
	{ NV_SEMAPHORE_SURFACE,    K_SEMSURF, sizeof(struct nv00da_alloc_params), true },
};

/* Video engine classes, by chip (rm-abi.md 4). The fake needs no params
 * from them (they are optional) and only counts them. */
static const struct {
	uint32_t cls;
	int      engine;
} engine_classes[] = {
	{ 0xc4b0, FE_NVDEC }, { 0xc6b0, FE_NVDEC }, { 0xc7b0, FE_NVDEC }, { 0xc9b0, FE_NVDEC },
	{ 0xb8b0, FE_NVDEC }, { 0xcdb0, FE_NVDEC }, { 0xceb0, FE_NVDEC }, { 0xcfb0, FE_NVDEC },
	{ 0xd1b0, FE_NVDEC }, { 0xb4b7, FE_NVENC }, { 0xc4b7, FE_NVENC }, { 0xc7b7, FE_NVENC },
	{ 0xc9b7, FE_NVENC }, { 0xceb7, FE_NVENC }, { 0xcfb7, FE_NVENC }, { 0xd1b7, FE_NVENC },
	{ 0xc4d1, FE_NVJPG }, { 0xc9d1, FE_NVJPG }, { 0xb8d1, FE_NVJPG }, { 0xcdd1, FE_NVJPG },
	{ 0xced0, FE_NVJPG }, { 0xcfd1, FE_NVJPG }, { 0xc6fa, FE_OFA }, { 0xc7fa, FE_OFA },
	{ 0xc9fa, FE_OFA }, { 0xb8fa, FE_OFA }, { 0xcdfa, FE_OFA }, { 0xcefa, FE_OFA },
	{ 0xcffa, FE_OFA }, { 0xd1fa, FE_OFA },
};

static int engine_of(uint32_t cls)
{
	for (size_t i = 0; i < sizeof(engine_classes) / sizeof(engine_classes[0]); i++)
		if (engine_classes[i].cls == cls)
			return engine_classes[i].engine;
	return -1;
}

static const struct fake_class *class_lookup(uint32_t cls)
{
	for (size_t i = 0; i < sizeof(class_table) / sizeof(class_table[0]); i++)
		if (class_table[i].cls == cls)
			return &class_table[i];
	return NULL;
}

static bool is_client_class(uint32_t cls)
{
	return cls == NV01_ROOT || cls == NV01_ROOT_NON_PRIV || cls == NV01_ROOT_CLIENT;
}

/* The driver accepts these on a device fd too (rm-abi.md 1.2). */
static bool is_event_class(uint32_t cls)
{
	return cls == NV01_EVENT || cls == NV01_EVENT_KERNEL_CALLBACK ||
	       cls == NV01_EVENT_OS_EVENT || cls == NV01_EVENT_KERNEL_CALLBACK_EX;
}

/* ---- allocation --------------------------------------------------------- */

struct alloc_out {
	nv_handle_t h;
	uint32_t    cid;  /* channel id for channel params */
};

static nv_status_t alloc_client(const struct fake_caller *who, nv_handle_t want, nv_handle_t *out)
{
	if (!who->ctl)
		return NV_ERR_INVALID_ARGUMENT;
	if (want == 0) {
		do
			want = FAKE_CLIENT_HANDLE_BASE + fake_st.next_client++;
		while (fake_find_client(want));
	} else if (fake_find_client(want)) {
		/* The handle already exists (_serverCreateEntryAndLockForNewClient,
		 * rs_server.c, 580.95.05). */
		return NV_ERR_INSERT_DUPLICATE_NAME;
	}
	if (fake_st.nclients == fake_st.cap) {
		size_t cap = fake_st.cap ? fake_st.cap * 2 : 16;
		struct client **cl = realloc(fake_st.clients, cap * sizeof(*cl));
		if (!cl)
			return NV_ERR_NO_MEMORY;
		fake_st.clients = cl;
		fake_st.cap = cap;
	}
	struct client *c = calloc(1, sizeof(*c));
	if (!c)
		return NV_ERR_NO_MEMORY;
	c->h = want;
	c->file = who->file;
	c->tgid = fake_tgid_of(who->pid);
	c->euid = fake_req_euid();
	fake_st.clients[fake_st.nclients++] = c;
	if (fake_st.nclients > fake_st.clients_peak)
		fake_st.clients_peak = fake_st.nclients;
	*out = want;
	return NV_OK;
}

/* Check a memory request the way the driver's class constructors do, and
 * fill in the rounded size. */
static nv_status_t check_memory(const struct fake_class *k, uint32_t cls,
				struct nv_memory_allocation_params *p)
{
	bool vidmem_loc = NVOS32_ATTR_LOCATION(p->attr) == NVOS32_ATTR_LOCATION_VIDMEM;
	bool virt = (p->flags & NVOS32_ALLOC_FLAGS_VIRTUAL) != 0;

	if (k->kind == K_VIDMEM && (!vidmem_loc || virt))
		return NV_ERR_INVALID_ARGUMENT;
	if (cls == NV01_MEMORY_SYSTEM && (vidmem_loc || virt))
		return NV_ERR_INVALID_ARGUMENT;
	/* A VA reservation may leave the size to RM; physical memory may not. */
	if (p->size == 0 && k->kind != K_VIRTUAL)
		return NV_ERR_INVALID_ARGUMENT;
	if (p->size > UINT64_MAX - FAKE_VIDMEM_ALIGN)
		return NV_ERR_NO_MEMORY;
	p->size = fake_round_up(p->size, FAKE_VIDMEM_ALIGN);
	p->limit = p->size ? p->size - 1 : 0;
	return NV_OK;
}

/* The common part of RM_ALLOC, RM_ALLOC_OBJECT and VID_HEAP_CONTROL. params
 * is the caller's nested struct already copied in (or NULL); on success it
 * holds the OUT fields to copy back. */
static nv_status_t alloc_object(const struct fake_caller *who, nv_handle_t h_client,
				nv_handle_t h_parent, nv_handle_t h_new, uint32_t cls,
				void *params, struct alloc_out *out)
{
	struct client *c;
	nv_status_t st = fake_get_client(who, h_client, &c);
	if (st != NV_OK)
		return st;

	struct res *pres = NULL;  /* NULL: the parent is the client itself */
	if (h_parent != c->h) {
		struct obj *p = fake_find_obj(c, h_parent);
		if (!p)
			return NV_ERR_INVALID_OBJECT_PARENT;
		pres = p->res;
	}
	if (h_new == 0)
		h_new = fake_pick_handle(c);
	else if (fake_handle_in_use(c, h_new))
		return NV_ERR_INSUFFICIENT_RESOURCES;

	const struct fake_class *k = class_lookup(cls);
	int engine = engine_of(cls);
	enum obj_kind kind = k ? k->kind : engine >= 0 ? K_ENGINE : K_OTHER;
	int gpu = pres ? pres->gpu : -1;
	uint64_t bytes = 0;
	struct res *kept[FAKE_SEMSURF_KEPT] = { NULL, NULL };
	enum obj_kind pk = pres ? pres->kind : K_OTHER;

	/* Everything below a device must know its GPU. */
	if (kind != K_DEVICE && kind != K_OTHER && gpu < 0)
		return NV_ERR_INVALID_OBJECT_PARENT;

	switch (kind) {
	case K_DEVICE: {
		uint32_t dev = params ? ((struct nv0080_alloc_params *)params)->device_id : 0;
		if (pres)
			return NV_ERR_INVALID_OBJECT_PARENT;
		gpu = fake_gpu_of_instance(dev);
		if (gpu < 0)
			return NV_ERR_INVALID_ARGUMENT;
		st = fake_check_gpu_node(who, c->tgid, gpu);
		if (st != NV_OK)
			return st;
		break;
	}
	case K_SUBDEVICE:
		if (pk != K_DEVICE)
			return NV_ERR_INVALID_OBJECT_PARENT;
		if (params && ((struct nv2080_alloc_params *)params)->sub_device_id != 0)
			return NV_ERR_INVALID_ARGUMENT;
		break;
	case K_VIDMEM:
	case K_SYSMEM:
	case K_VIRTUAL: {
		if (pk != K_DEVICE && pk != K_SUBDEVICE)
			return NV_ERR_INVALID_OBJECT_PARENT;
		struct nv_memory_allocation_params *mp = params;
		st = check_memory(k, cls, mp);
		if (st != NV_OK)
			return st;
		struct gpu_acct *g = &fake_st.gpu[gpu];
		if (kind == K_VIDMEM) {
			if (mp->size > g->total - g->used)
				return NV_ERR_NO_MEMORY;
			bytes = mp->size;
			mp->offset = g->next_offset;
			g->next_offset += bytes;
		}
		break;
	}
	case K_CHANNEL_GROUP:
		if (pk != K_DEVICE)
			return NV_ERR_INVALID_OBJECT_PARENT;
		if (fake_st.gpu[gpu].grp_live >= fake_st.cfg.channels)
			return NV_ERR_INSUFFICIENT_RESOURCES;
		break;
	case K_CHANNEL:
		if (pk != K_DEVICE && pk != K_CHANNEL_GROUP)
			return NV_ERR_INVALID_OBJECT_PARENT;
		if (fake_st.gpu[gpu].ch_live >= fake_st.cfg.channels)
			return NV_ERR_INSUFFICIENT_RESOURCES;
		/* Outside a channel group RM makes one for the channel
		 * (kchannelConstruct_IMPL, src/nvidia/src/kernel/gpu/fifo/
		 * kernel_channel.c at 580.142), freed with it. */
		if (pk == K_DEVICE && fake_st.gpu[gpu].grp_live >= fake_st.cfg.channels)
			return NV_ERR_INSUFFICIENT_RESOURCES;
		out->cid = fake_st.next_cid++;
		break;
	case K_ENGINE:
		/* The driver hangs engine objects under a channel. */
		if (pk != K_CHANNEL)
			return NV_ERR_INVALID_OBJECT_PARENT;
		break;
	case K_SEMSURF:
		if (!params)
			return NV_ERR_INVALID_ARGUMENT;
		st = fake_semsurf_construct(c, pk, params, kept);
		if (st != NV_OK)
			return st;
		break;
	case K_OTHER:
		/* nvidia-smi's display and diagnostics objects (fake_smi.c). */
		st = fake_smi_alloc_check(c, h_parent, pk, cls);
		if (st != NV_OK)
			return st;
		break;
	}

	struct res *r = calloc(1, sizeof(*r));
	struct obj *o = r ? fake_add_obj(c) : NULL;
	if (!o) {
		free(r);
		struct res tmp = { .kept = { kept[0], kept[1] } };
		fake_semsurf_release(&tmp);
		return NV_ERR_NO_MEMORY;
	}
	r->refs = 1;
	memcpy(r->kept, kept, sizeof(r->kept));
	r->kind = kind;
	r->gpu = gpu;
	r->bytes = bytes;
	o->h = h_new;
	o->parent = h_parent;
	o->cls = cls;
	o->res = r;

	if (gpu >= 0) {
		struct gpu_acct *g = &fake_st.gpu[gpu];
		if (kind == K_VIDMEM) {
			/* The driver frees a released export file's exports in
			 * the file's release (rm_cleanup_file_private), before
			 * anyone can see the file gone; the fake sweeps them
			 * lazily, so here too, before new memory is counted:
			 * else a sandbox that saw the release and let this
			 * allocation through would show a peak the driver
			 * never had (fd_export:one, once, on a loaded run). */
			fake_export_sweep();
			g->used += bytes;
			if (g->used > g->peak)
				g->peak = g->used;
		} else if (kind == K_CHANNEL) {
			if (++g->ch_live > g->ch_peak)
				g->ch_peak = g->ch_live;
			r->own_group = pk == K_DEVICE;
			if (r->own_group && ++g->grp_live > g->grp_peak)
				g->grp_peak = g->grp_live;
			if (pk == K_CHANNEL_GROUP) {
				r->group = pres;
				pres->refs++;
			}
		} else if (kind == K_CHANNEL_GROUP) {
			if (++g->grp_live > g->grp_peak)
				g->grp_peak = g->grp_live;
		} else if (kind == K_ENGINE) {
			r->engine = engine;
			if (++g->eng_live[engine] > g->eng_peak[engine])
				g->eng_peak[engine] = g->eng_live[engine];
		}
	}
	out->h = h_new;
	if (cls == NV50_THIRD_PARTY_P2P)
		fake_st.p2p_objects_made++;
	/* Outside a channel group RM makes one for the channel, a handle of
	 * the client's (fake_chgrp.c). */
	if (kind == K_CHANNEL && r->own_group) {
		st = fake_chgrp_make_internal(c, r, h_parent);
		if (st != NV_OK) {
			struct obj *made = fake_find_obj(c, h_new);
			if (made)
				fake_free_subtree(c, made);
			return st;
		}
	}
	return NV_OK;
}

/* Undo a fresh allocation whose OUT params could not be copied back. */
static void undo_alloc(nv_handle_t h_client, nv_handle_t h)
{
	struct client *c = fake_find_client(h_client);
	if (!c)
		return;
	if (c->h == h) {
		fake_free_client(c);
		return;
	}
	struct obj *o = fake_find_obj(c, h);
	if (o)
		fake_free_subtree(c, o);
}

static void count_alloc(nv_status_t st)
{
	if (st == NV_OK)
		fake_st.allocs_ok++;
	else
		fake_st.allocs_failed++;
}

/* A class the fake does not model still has its params copied by the
 * driver, with the played branch's size (rmapiParamsAcquire). Where that
 * is more than 580's size for the class, the bytes past it are counted:
 * the tests judge a supervisor's copy by them. Non-zero: the read faulted. */
static int note_grown_tail(const struct fake_caller *who, const struct nvos64 *a,
                           const struct rm_class_info *ci)
{
	const struct rm_class_info *base = rm_class_lookup(gs_rm_abi_by_branch("580"), a->h_class);
	uint8_t params[FAKE_MAX_ALLOC_PARAMS];

	if (!base || ci->params_size <= base->params_size || ci->params_size > sizeof(params))
		return 0;
	if (fake_mem_read(who->pid, a->p_alloc_parms, params, ci->params_size))
		return -1;
	fake_st.grown_tail_reads++;
	for (uint32_t i = base->params_size; i < ci->params_size; i++)
		if (params[i]) {
			fake_st.grown_tail_nonzero++;
			break;
		}
	return 0;
}

/* NV_ESC_RM_ALLOC: NVOS21 or NVOS64, told apart only by size. */
static int esc_alloc(const struct fake_caller *who, void *buf, size_t size)
{
	struct nvos64 a;  /* the first five fields match NVOS21 */
	bool os64 = size == NV_ESC_SIZE_NVOS64;
	if (size != NV_ESC_SIZE_NVOS21 && !os64)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	memcpy(&a, buf, os64 ? sizeof(a) : offsetof(struct nvos21, params_size));
	if (!who->ctl && !is_event_class(a.h_class))
		return -EINVAL;
	/* Fault injection (--alloc-errno): a driver that fails the call with
	 * an errno, possibly one the C library has no name for (the
	 * supervisor once crashed on those, issue #17 item 12). */
	if (fake_st.cfg.alloc_errno && class_lookup(a.h_class) &&
	    class_lookup(a.h_class)->kind == K_VIDMEM)
		return -(int)fake_st.cfg.alloc_errno;
	if (fake_st.cfg.alloc_sleep_ms && class_lookup(a.h_class) &&
	    class_lookup(a.h_class)->kind == K_VIDMEM) {
		struct timespec ts = { fake_st.cfg.alloc_sleep_ms / 1000u,
		                       (long)(fake_st.cfg.alloc_sleep_ms % 1000u) * 1000000L };
		fake_st.cfg.alloc_sleep_ms = 0;  /* the first one only */
		nanosleep(&ts, NULL);
	}

	nv_status_t st = NV_OK;
	uint8_t params[FAKE_MAX_ALLOC_PARAMS];
	void *pp = NULL;
	uint32_t psize = 0;
	struct alloc_out out = { 0 };

	if (os64 && (a.flags & NVOS64_FLAGS_FINN_SERIALIZED)) {
		st = NV_ERR_NOT_SUPPORTED;  /* the fake does not parse FINN */
		goto done;
	}
	if (os64 && a.p_rights_requested) {
		uint8_t rights[NV_RS_ACCESS_MASK_SIZE];
		if (fake_mem_read(who->pid, a.p_rights_requested, rights, sizeof(rights))) {
			st = NV_ERR_INVALID_ADDRESS;
			goto done;
		}
	}

	if (is_client_class(a.h_class)) {
		/* A client asked for by handle names it in hRoot: the escape
		 * passes hRoot as the hClient of the allocation
		 * (_nv04AllocWithSecInfo, entry_points.c) and serverAllocClient
		 * takes pParams->hClient, honoured in the RS_COMPATABILITY_MODE
		 * the driver is built in (src/nvidia/Makefile, rs_server.c,
		 * 580.95.05); hObjectNew is only where the handle comes back. */
		nv_handle_t want = a.h_root;
		st = alloc_client(who, want, &out.h);
		if (st == NV_OK && a.p_alloc_parms &&
		    fake_mem_write(who->pid, a.p_alloc_parms, &out.h, sizeof(out.h))) {
			undo_alloc(out.h, out.h);
			st = NV_ERR_INVALID_ADDRESS;
		}
		/* The driver forces user roots to NV01_ROOT_CLIENT in its copy,
		 * which is copied back. */
		a.h_class = NV01_ROOT_CLIENT;
		goto done;
	}

	/* The size comes from the class table, never from paramsSize, which
	 * real CUDA leaves at 0: the played branch's size (channels are 360
	 * bytes on 535/550, memory 120 on 535). */
	if (fake_class_absent(a.h_class)) {
		st = NV_ERR_INVALID_CLASS;
		goto done;
	}
	const struct fake_class *k = class_lookup(a.h_class);
	const struct rm_class_info *ci = rm_class_lookup(fake_st.abi, a.h_class);
	if (!k && ci && a.p_alloc_parms && note_grown_tail(who, &a, ci)) {
		st = NV_ERR_INVALID_ADDRESS;
		goto done;
	}
	if (k && a.p_alloc_parms) {
		psize = ci ? ci->params_size : k->params_size;
		if (fake_mem_read(who->pid, a.p_alloc_parms, params, psize)) {
			st = NV_ERR_INVALID_ADDRESS;
			goto done;
		}
		pp = params;
	} else if (k && k->params_required) {
		st = NV_ERR_INVALID_ARGUMENT;
		goto done;
	}
	st = alloc_object(who, a.h_root, a.h_object_parent, a.h_object_new, a.h_class, pp, &out);
	if (st == NV_OK && pp) {
		if (k->kind == K_CHANNEL) {
			memcpy(params + NV_CHANNEL_ALLOC_PARAMS_CID_OFF, &out.cid, sizeof(out.cid));
			memset(params + NV_CHANNEL_ALLOC_PARAMS_PHYS_GROUP_OFF, 0,
			       NV_CHANNEL_ALLOC_PARAMS_INTERNAL_LEN);
		}
		if (fake_mem_write(who->pid, a.p_alloc_parms, params, psize)) {
			undo_alloc(a.h_root, out.h);
			st = NV_ERR_INVALID_ADDRESS;
		}
	}
done:
	count_alloc(st);
	if (st == NV_OK)
		a.h_object_new = out.h;
	a.status = st;
	if (os64) {
		memcpy(buf, &a, size);
	} else {
		struct nvos21 *b = buf;
		b->h_object_new = a.h_object_new;
		b->h_class = a.h_class;
		b->status = st;
	}
	return 0;
}

/* NV_ESC_RM_ALLOC_OBJECT: legacy alloc without params. */
static int esc_alloc_object(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != NV_ESC_SIZE_NVOS05)
		return -EINVAL;
	struct nvos05 *a = buf;
	const struct fake_class *k = class_lookup(a->h_class);
	nv_status_t st;
	struct alloc_out out = { 0 };
	if (is_client_class(a->h_class) || fake_class_absent(a->h_class))
		st = NV_ERR_INVALID_CLASS;
	else if (k && k->params_required)
		st = NV_ERR_INVALID_ARGUMENT;  /* memory and channels need params */
	else
		st = alloc_object(who, a->h_root, a->h_object_parent, a->h_object_new,
				  a->h_class, NULL, &out);
	count_alloc(st);
	if (st == NV_OK)
		a->h_object_new = out.h;
	a->status = st;
	return 0;
}

/* ---- free and dup ------------------------------------------------------- */

static nv_status_t free_handle(const struct fake_caller *who, nv_handle_t h_client, nv_handle_t h)
{
	struct client *c;
	nv_status_t st = fake_get_client(who, h_client, &c);
	if (st != NV_OK)
		return st;
	if (h == c->h) {
		fake_free_client(c);
		return NV_OK;
	}
	struct obj *o = fake_find_obj(c, h);
	if (!o)
		return NV_ERR_OBJECT_NOT_FOUND;
	fake_free_subtree(c, o);
	return NV_OK;
}

static int esc_free(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != NV_ESC_SIZE_NVOS00)
		return -EINVAL;
	struct nvos00 *f = buf;
	f->status = free_handle(who, f->h_root, f->h_object_old);
	if (f->status == NV_OK)
		fake_st.frees++;
	return 0;
}

static nv_status_t add_dup(struct client *dst, nv_handle_t h_parent, nv_handle_t *h, struct res *r,
                           uint32_t cls);

static nv_status_t dup_object(const struct fake_caller *who, struct nvos55 *d)
{
	struct client *dst, *src;
	nv_status_t st = fake_get_client(who, d->h_client, &dst);
	if (st != NV_OK)
		return st;
	src = fake_find_client(d->h_client_src);
	if (!src)
		return NV_ERR_INVALID_CLIENT;
	if (d->h_object_src == src->h)
		return NV_ERR_NOT_SUPPORTED;
	struct obj *so = fake_find_obj(src, d->h_object_src);
	if (!so)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	/* A video engine object is a ChannelDescendant, which keeps
	 * RsResource's resCanCopy (false): serverCopyResource refuses it
	 * (rs_server.c, 580.95.05). */
	if (so->res->kind == K_ENGINE)
		return NV_ERR_INVALID_ARGUMENT;
	/* The object's share policies (fake_share.c): by default, clients
	 * of the same process only. */
	if (!fake_share_allows_dup(src, so, dst))
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	/* so may move when dst's array grows: add_dup takes its fields. */
	struct obj *parent = d->h_parent != dst->h ? fake_find_obj(dst, d->h_parent) : NULL;
	if (d->h_parent != dst->h && !parent)
		return NV_ERR_INVALID_OBJECT_PARENT;
	if (parent && so->res->kind == K_VIDMEM && parent->res->gpu != so->res->gpu)
		fake_st.dups_cross_gpu++;
	st = add_dup(dst, d->h_parent, &d->h_object, so->res, so->cls);
	if (st == NV_OK)
		fake_st.dups_made++;
	return st;
}

/* A new handle on r in dst under h_parent (its handle checked by the
 * caller): *h, or one RM picks when *h is 0. */
static nv_status_t add_dup(struct client *dst, nv_handle_t h_parent, nv_handle_t *h, struct res *r,
                           uint32_t cls)
{
	if (*h == 0)
		*h = fake_pick_handle(dst);
	else if (fake_handle_in_use(dst, *h))
		return NV_ERR_INSUFFICIENT_RESOURCES;
	struct obj *o = fake_add_obj(dst);
	if (!o)
		return NV_ERR_NO_MEMORY;
	r->refs++;
	o->h = *h;
	o->parent = h_parent;
	o->cls = cls;
	o->dup = true;
	o->res = r;
	return NV_OK;
}

nv_status_t fake_dup_res(struct client *dst, nv_handle_t h_parent, nv_handle_t *h, struct res *r, uint32_t cls)
{
	if (h_parent != dst->h && !fake_find_obj(dst, h_parent))
		return NV_ERR_INVALID_OBJECT_PARENT;
	return add_dup(dst, h_parent, h, r, cls);
}

void fake_free_handle(struct client *c, nv_handle_t h)
{
	struct obj *o = fake_find_obj(c, h);
	if (o)
		fake_free_subtree(c, o);
}

static int esc_dup(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != NV_ESC_SIZE_NVOS55)
		return -EINVAL;
	struct nvos55 *d = buf;
	d->status = dup_object(who, d);
	count_alloc(d->status);
	return 0;
}

/* ---- VID_HEAP_CONTROL --------------------------------------------------- */

static nv_status_t device_gpu(const struct fake_caller *who, nv_handle_t h_client,
			      nv_handle_t h_obj, int *gpu)
{
	struct client *c;
	nv_status_t st = fake_get_client(who, h_client, &c);
	if (st != NV_OK)
		return st;
	struct obj *o = fake_find_obj(c, h_obj);
	if (!o)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (o->res->kind != K_DEVICE && o->res->kind != K_SUBDEVICE)
		return NV_ERR_INVALID_OBJECT_PARENT;
	*gpu = o->res->gpu;
	return NV_OK;
}

static nv_status_t vidheap_alloc(const struct fake_caller *who, struct nvos32 *v)
{
	/* The driver turns ALLOC_SIZE into a class alloc chosen like this
	 * (rm-abi.md 2, rmapi_deprecated_vidheapctrl.c). */
	uint32_t cls;
	if (v->data.alloc_size.flags & NVOS32_ALLOC_FLAGS_VIRTUAL)
		cls = NV50_MEMORY_VIRTUAL;
	else if ((v->data.alloc_size.attr2 & NVOS32_ATTR2_USE_EGM) && !fake_st.cfg.no_egm &&
	         fake_vidheap_honours_egm())
		cls = NV_MEMORY_EXTENDED_USER;
	else if (NVOS32_ATTR_LOCATION(v->data.alloc_size.attr) == NVOS32_ATTR_LOCATION_VIDMEM)
		cls = NV01_MEMORY_LOCAL_USER;
	else
		cls = NV01_MEMORY_SYSTEM;

	struct nv_memory_allocation_params p;
	memset(&p, 0, sizeof(p));
	p.owner = v->data.alloc_size.owner;
	p.type = v->data.alloc_size.type;
	p.flags = v->data.alloc_size.flags;
	p.attr = v->data.alloc_size.attr;
	p.attr2 = v->data.alloc_size.attr2;
	p.size = v->data.alloc_size.size;
	p.alignment = v->data.alloc_size.alignment;
	p.offset = v->data.alloc_size.offset;
	p.h_va_space = v->h_va_space;

	struct alloc_out out = { 0 };
	nv_status_t st = alloc_object(who, v->h_root, v->h_object_parent,
				      v->data.alloc_size.h_memory, cls, &p, &out);
	if (st != NV_OK)
		return st;
	v->data.alloc_size.h_memory = out.h;
	v->data.alloc_size.size = p.size;
	v->data.alloc_size.offset = p.offset;
	v->data.alloc_size.limit = p.limit;
	return NV_OK;
}

static int esc_vidheap(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != NV_ESC_SIZE_NVOS32)
		return -EINVAL;
	struct nvos32 *v = buf;
	int gpu;
	switch (v->function) {
	case NVOS32_FUNCTION_ALLOC_SIZE:
		v->status = vidheap_alloc(who, v);
		count_alloc(v->status);
		break;
	case NVOS32_FUNCTION_FREE:
		v->status = free_handle(who, v->h_root, v->data.free.h_memory);
		if (v->status == NV_OK)
			fake_st.frees++;
		break;
	case NVOS32_FUNCTION_INFO:
		v->status = device_gpu(who, v->h_root, v->h_object_parent, &gpu);
		if (v->status == NV_OK) {
			v->total = fake_st.gpu[gpu].total;
			v->free = fake_st.gpu[gpu].total - fake_st.gpu[gpu].used;
		}
		break;
	default:
		/* Other allocating functions use different union layouts
		 * that the fake does not model. */
		v->status = NV_ERR_NOT_SUPPORTED;
		break;
	}
	return 0;
}

/* ---- dispatch ----------------------------------------------------------- */

static int dispatch(const struct fake_caller *who, uint32_t nr, void *buf, size_t size, bool inner);

/* NV_ESC_IOCTL_XFER_CMD: the real argument lives behind a pointer. */
static int esc_xfer(const struct fake_caller *who, void *buf, size_t size)
{
	struct nv_ioctl_xfer x;
	if (size != NV_ESC_SIZE_XFER)
		return -EINVAL;
	memcpy(&x, buf, sizeof(x));
	if (x.size > NV_ABSOLUTE_MAX_IOCTL_SIZE || x.cmd > 0xffu || x.cmd == NV_ESC_IOCTL_XFER_CMD)
		return -EINVAL;
	void *inner = malloc(x.size ? x.size : 1);
	if (!inner)
		return -ENOMEM;
	int rc = fake_mem_read(who->pid, x.ptr, inner, x.size) ? -EFAULT : 0;
	if (rc == 0)
		rc = dispatch(who, x.cmd, inner, x.size, true);
	/* The driver copies the argument back whenever it got it. */
	if (rc != -EFAULT && fake_mem_write(who->pid, x.ptr, inner, x.size))
		rc = -EFAULT;
	free(inner);
	return rc;
}

/* CARD_INFO: one entry per GPU; gpu_id differs from the minor on purpose,
 * so a supervisor that confuses the two is caught. */
unsigned fake_instance_of_gpu(unsigned g)
{
	return fake_st.cfg.reverse_instances ? fake_st.cfg.gpus - 1 - g : g;
}

int fake_gpu_of_instance(uint32_t i)
{
	if (i >= fake_st.cfg.gpus)
		return -1;
	return (int)(fake_st.cfg.reverse_instances ? fake_st.cfg.gpus - 1 - i : i);
}

/* NV_ESC_CHECK_VERSION_STR as the driver answers it at tag 580.142:
 * nvidia_ioctl (kernel-open/nvidia/nv.c) takes it on the control device
 * only (NV_CTL_DEVICE_ONLY: -EINVAL elsewhere) and turns any RM failure
 * into -EINVAL; RmPerformVersionCheck (src/nvidia/arch/nvalloc/unix/src/
 * osapi.c) refuses any size but nv_ioctl_rm_api_version_t's
 * (kernel-open/common/inc/nv-ioctl.h), sets reply to RECOGNIZED, copies
 * NV_VERSION_STRING for the query form and checks nothing; otherwise it
 * compares the strings (the relaxed form up to the first dot) and, on a
 * mismatch, returns its own version in the struct. */
static int esc_check_version(const struct fake_caller *who, void *buf, size_t size)
{
	struct nv_ioctl_rm_api_version *p = buf;
	const char *mine = fake_st.cfg.driver_version;
	size_t n = strlen(mine);

	if (!who->ctl || size != sizeof(*p))
		return -EINVAL;
	p->reply = NV_RM_API_VERSION_REPLY_RECOGNIZED;
	if (p->cmd == NV_RM_API_VERSION_CMD_QUERY) {
		memcpy(p->version_string, mine, n + 1);
		return 0;
	}
	if (p->cmd == FAKE_RM_API_VERSION_CMD_RELAXED) {
		const char *dot = strchr(mine, '.');
		size_t cmp = dot ? (size_t)(dot - mine) + 1 : n + 1;
		if (strncmp(p->version_string, mine, cmp) == 0)
			return 0;
	} else if (strncmp(p->version_string, mine, sizeof(p->version_string)) == 0) {
		return 0;
	}
	memcpy(p->version_string, mine, n + 1);
	return -EINVAL;
}

static int esc_card_info(const struct fake_caller *who, void *buf, size_t size)
{
	struct nv_card_info *cards = buf;
	size_t n = size / sizeof(*cards);

	if (!who->ctl || size % sizeof(*cards))
		return -EINVAL;
	memset(buf, 0, size);
	for (unsigned g = 0; g < fake_st.cfg.gpus && g < n; g++) {
		cards[g].valid = 1;
		cards[g].gpu_id = FAKE_GPU_ID(g);
		cards[g].minor_number = g;
		cards[g].fb_size = fake_st.gpu[g].total;
	}
	return 0;
}

static int dispatch(const struct fake_caller *who, uint32_t nr, void *buf, size_t size, bool inner)
{
	switch (nr) {
	case NV_ESC_RM_ALLOC:
		return esc_alloc(who, buf, size);
	case NV_ESC_RM_ALLOC_OBJECT:
	case NV_ESC_RM_FREE:
	case NV_ESC_RM_CONTROL:
	case NV_ESC_RM_DUP_OBJECT:
	case NV_ESC_RM_VID_HEAP_CONTROL:
		/* ctl-only escapes (rm-abi.md 1.2) */
		if (!who->ctl)
			return -EINVAL;
		switch (nr) {
		case NV_ESC_RM_ALLOC_OBJECT:
			return esc_alloc_object(who, buf, size);
		case NV_ESC_RM_FREE:
			return esc_free(who, buf, size);
		case NV_ESC_RM_CONTROL:
			return fake_esc_control(who, buf, size);
		case NV_ESC_RM_DUP_OBJECT:
			return esc_dup(who, buf, size);
		default:
			return esc_vidheap(who, buf, size);
		}
	case NV_ESC_IOCTL_XFER_CMD:
		return inner ? -EINVAL : esc_xfer(who, buf, size);
	case NV_ESC_CARD_INFO:
		return esc_card_info(who, buf, size);
	case NV_ESC_CHECK_VERSION_STR:
		return esc_check_version(who, buf, size);
	case NV_ESC_RM_SHARE:
		return who->ctl ? fake_esc_share(who, buf, size) : -EINVAL;
	case NV_ESC_EXPORT_TO_DMABUF_FD:
		return fake_esc_export_dmabuf(who, buf, size);
	default:
		/* REGISTER_FD, MAP_MEMORY...:
		 * succeed and leave the argument as it came. */
		return 0;
	}
}

int fake_rm_ioctl(const struct fake_caller *who, uint32_t nr, void *buf, size_t size)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.ioctls++;
	int rc = dispatch(who, nr, buf, size, false);
	fake_busy_refresh();
	pthread_mutex_unlock(&fake_st.lock);
	return rc;
}

void fake_rm_release_file(uint64_t file)
{
	pthread_mutex_lock(&fake_st.lock);
	/* The real RM frees every client of a file when its last reference
	 * closes (RmFreeUnusedClients). */
	for (size_t i = 0; i < fake_st.nclients;) {
		if (fake_st.clients[i]->file == file)
			fake_free_client(fake_st.clients[i]);  /* moves the last one to i */
		else
			i++;
	}
	fake_st.file_releases++;
	fake_busy_refresh();
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_file_opened(void)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.files_open++;
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_file_closed(void)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.files_open--;
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_fd_closed(void)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.fd_closes++;
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_late_reply(int delta)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.late_pending += (uint64_t)(int64_t)delta;
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_note_ioctl_overlap(void)
{
	pthread_mutex_lock(&fake_st.lock);
	if (fake_st.late_pending)
		fake_st.served_while_late++;
	pthread_mutex_unlock(&fake_st.lock);
}

void fake_rm_uvm_ioctl(void)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.uvm_ioctls++;
	pthread_mutex_unlock(&fake_st.lock);
}
