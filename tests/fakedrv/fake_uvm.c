/* SPDX-License-Identifier: MIT */
/*
 * fake_uvm.c - /dev/nvidia-uvm's external ranges and external mappings:
 * the way a process keeps video memory allocated after RM_FREE of every
 * handle it has, because UVM holds a dup of it for each mapping.
 *
 * After NVIDIA/open-gpu-kernel-modules 580.95.05 (kernel-open/nvidia-uvm/):
 * - uvm_ioctl.h (__UVM_ROUTE_CMD_STACK/_ALLOC): a command is a plain
 *   integer; the module copies the whole params struct in from the caller
 *   (-EFAULT if it cannot), runs, copies it all back (-EFAULT if it cannot)
 *   and returns 0, the NV status in rmStatus. There, commands before
 *   UVM_INITIALIZE get NV_ERR_ILLEGAL_ACTION; the fake does not refuse them.
 * - An open file is a VA space (uvm_va_space_get(filp)), dups of the
 *   descriptor included, torn down with its ranges at the last close.
 * - uvm_api_range_invalid_4k (uvm_api.h): base and length 4 KiB aligned,
 *   not zero, no wrap; else NV_ERR_INVALID_ADDRESS.
 * - uvm_map_external.c: CREATE_EXTERNAL_RANGE adds an empty range (an
 *   overlap is NV_ERR_UVM_ADDRESS_IN_USE, from the range tree). MAP checks
 *   the 4K rule, then 1 <= gpuAttributesCount <= UVM_MAX_GPUS, then that
 *   the span lies in one external range. On each listed GPU it FIRST unmaps
 *   what that GPU maps in the span (uvm_unmap_external_in_range, splitting
 *   a partly covered mapping, uvm_ext_gpu_map_split), THEN dups the memory
 *   through RM, then picks the page size and checks offset + length
 *   against the memory. A failure undoes this call's mappings on the GPUs
 *   before; what it unmapped stays unmapped. Each piece of a mapping keeps
 *   the dup (a kref), so the memory lives until the last piece goes.
 * - rmCtrlFd is never read: UVM keeps it in the uvm_rm_user_object_t
 *   (uvm_common.h) it hands to uvm_map_external_allocation_on_gpu, which
 *   dups the memory by hClient and hMemory alone; so a map whose rmCtrlFd
 *   is any file at all maps (tests/adv/uvm_ctlfd's baselines rely on it).
 * - The dup (nv_gpu_ops.c dupMemory): unknown client INVALID_CLIENT, not
 *   memory INVALID_OBJECT_HANDLE. nvGpuOpsDupMemory passes
 *   NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE, so share policies
 *   apply, and for the default RS_SHARE_TYPE_PID cliresShareCallback
 *   (rmapi/client_resource.c) compares the source client's process with
 *   the current one, the UVM caller: else NV_ERR_INSUFFICIENT_PERMISSIONS
 *   (measured on an H200, 580.159.04). Memory shared with ALL or
 *   OS_SECURITY_TOKEN (one user in the fake) passes, as in fake_share.c.
 * - UNMAP_EXTERNAL: the 4K rule, one range, then the span on the GPU named
 *   by UUID. UVM_FREE (uvm_va_range.c uvm_free): up to 580 exactly
 *   [base, base+length); from 590 no length, the range starting at base.
 *   VALIDATE_VA_RANGE: NV_OK iff a range of exactly that extent exists.
 * - uvm_va_range_device_p2p.c: ALLOC_DEVICE_P2P (570 on) checks base +
 *   offset and length (NV_ERR_INVALID_ARGUMENT), dups the memory as the
 *   map does, and makes a range of P2P pages backed by it, which keeps
 *   the dup until the range is freed or the file goes. The fake plays a
 *   GPU whose P2P pages are set up (device_p2p_initialised); a GPU
 *   without them answers NV_ERR_NOT_SUPPORTED.
 *
 * UVM_REGISTER_CHANNEL and UVM_UNREGISTER_CHANNEL: fake_uvm_chan.c;
 * UVM_REGISTER_GPU: fake_uvm_gpu.c.
 *
 * Not modelled: the GPUs a map names being registered (any UUID is
 * taken), the mapping/caching/format type checks, sparse
 * mappings, and ranges of other types (managed, semaphore pools), which
 * the fake never has: VALIDATE and FREE find no range there.
 *
 * Everything here runs with fake_st.lock held.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <time.h>

#include "fake_rm_int.h"
#include "nvuvm_abi.h"

/* nvstatuscodes.h at 580.95.05; include/nvrm_abi.h lacks them. */
#define NV_ERR_INVALID_OFFSET     0x00000037u
#define NV_ERR_UVM_ADDRESS_IN_USE 0x00000068u

#define UVM_PAGE_4K  (4ull << 10)
#define UVM_PAGE_64K (64ull << 10)
#define UVM_PAGE_2M  (2ull << 20)

/* First UVM branch with 256 GPU attribute slots, and with the 16-byte
 * UVM_FREE (include/nvuvm_abi.h). */
#define UVM_BIG_GPU_ARRAY_BRANCH 570
#define UVM_FREE_BASE_ONLY_BRANCH 590

struct uvm_range {          /* an external range of one VA space */
	uint64_t file;
	uint64_t start, end;    /* inclusive, as UVM's range tree nodes */
};

struct uvm_map {            /* one piece of a mapping on one GPU */
	uint64_t    file;
	uint64_t    start, end; /* inclusive */
	uint64_t    page;       /* its GPU page size: splits must align */
	uint8_t     uuid[UVM_UUID_BYTES];
	struct res *res;        /* the memory; this piece holds one ref */
};

static struct uvm_range *ranges;
static size_t nranges, cap_ranges;
static struct uvm_map *maps;
static size_t nmaps, cap_maps;

static bool grow(void **arr, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 16;
	void *p = realloc(*arr, c * elem);
	if (!p)
		return false;
	*arr = p;
	*cap = c;
	return true;
}

static int branch(void)
{
	return atoi(gs_rm_abi_branch(fake_st.abi));
}

static uint32_t max_gpus(void)
{
	return branch() >= UVM_BIG_GPU_ARRAY_BRANCH ? UVM_MAX_GPUS_570 : UVM_MAX_GPUS_535;
}

static bool range_invalid_4k(uint64_t base, uint64_t len)
{
	return base % UVM_PAGE_4K || len % UVM_PAGE_4K || !base || !len || base + len < base;
}

/* The range of this VA space that contains addr, or NULL. */
static struct uvm_range *range_at(uint64_t file, uint64_t addr)
{
	for (size_t i = 0; i < nranges; i++)
		if (ranges[i].file == file && ranges[i].start <= addr && addr <= ranges[i].end)
			return &ranges[i];
	return NULL;
}

/* [base, base+len) inside one range of this VA space. */
static bool span_in_range(uint64_t file, uint64_t base, uint64_t len)
{
	struct uvm_range *r = range_at(file, base);
	return r && base + len - 1 <= r->end;
}

static void drop_map(size_t i)
{
	fake_res_put(maps[i].res);
	maps[i] = maps[--nmaps];
}

/* Unmap [s, e] from map i, keeping the parts outside it: a part kept on
 * each side means one more piece, which takes its own reference. A cut
 * must fall on the mapping's page size (uvm_ext_gpu_map_split). */
static nv_status_t cut_map(size_t i, uint64_t s, uint64_t e)
{
	struct uvm_map m = maps[i];
	bool left = m.start < s, right = m.end > e;

	if ((left && s % m.page) || (right && (e + 1) % m.page))
		return NV_ERR_INVALID_ADDRESS;
	if (left && right && !grow((void **)&maps, &cap_maps, nmaps, sizeof(*maps)))
		return NV_ERR_NO_MEMORY;
	if (!left && !right) {
		drop_map(i);
		return NV_OK;
	}
	if (left)
		maps[i].end = s - 1;
	if (right) {
		m.start = e + 1;
		if (left) {
			m.res->refs++;
			maps[nmaps++] = m;
		} else {
			maps[i] = m;
		}
	}
	return NV_OK;
}

/* uvm_unmap_external_in_range: everything GPU uuid maps in [s, e] of this
 * VA space. A piece left in place never overlaps [s, e] again, so the
 * loop looks at index i again after every cut. */
static nv_status_t unmap_in(uint64_t file, const uint8_t *uuid, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < nmaps;) {
		struct uvm_map *m = &maps[i];
		if (m->file != file || memcmp(m->uuid, uuid, UVM_UUID_BYTES) ||
		    m->end < s || m->start > e) {
			i++;
			continue;
		}
		nv_status_t st = cut_map(i, s, e);
		if (st != NV_OK)
			return st;
	}
	return NV_OK;
}

/* Every mapping of this VA space in [s, e], on all GPUs (UVM_FREE and the
 * VA space's teardown: the range goes whole, so nothing is split). */
static void drop_maps(uint64_t file, uint64_t s, uint64_t e)
{
	for (size_t i = 0; i < nmaps;) {
		if (maps[i].file == file && maps[i].start >= s && maps[i].end <= e)
			drop_map(i);
		else
			i++;
	}
}

static void destroy_range(struct uvm_range *r)
{
	drop_maps(r->file, r->start, r->end);
	*r = ranges[--nranges];
}

static nv_status_t create_range(uint64_t file, const struct uvm_create_external_range_params *p)
{
	if (range_invalid_4k(p->base, p->length))
		return NV_ERR_INVALID_ADDRESS;
	uint64_t end = p->base + p->length - 1;
	for (size_t i = 0; i < nranges; i++)
		if (ranges[i].file == file && ranges[i].start <= end && p->base <= ranges[i].end)
			return NV_ERR_UVM_ADDRESS_IN_USE;
	if (!grow((void **)&ranges, &cap_ranges, nranges, sizeof(*ranges)))
		return NV_ERR_NO_MEMORY;
	ranges[nranges++] = (struct uvm_range){ file, p->base, end };
	return NV_OK;
}

/* The RM side of the map (dupMemory): the memory, as the caller may dup
 * it into UVM's kernel client. */
static nv_status_t dup_memory(pid_t caller, nv_handle_t hc, nv_handle_t hm, struct res **out)
{
	struct client *c = fake_find_client(hc);
	if (!c)
		return NV_ERR_INVALID_CLIENT;
	struct obj *o = fake_find_obj(c, hm);
	if (!o || (o->res->kind != K_VIDMEM && o->res->kind != K_SYSMEM))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (!fake_share_allows(c, o, fake_tgid_of(caller), fake_req_euid(), 0))
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	*out = o->res;
	return NV_OK;
}

/* The biggest GPU page (4K, 64K, 2M) that the memory's page size, base,
 * length and offset are all aligned to; 0 if none. The fake's video memory
 * is in 2 MiB pages (FAKE_VIDMEM_ALIGN), its system memory in 4 KiB. */
static uint64_t page_size(const struct res *r, uint64_t base, uint64_t len, uint64_t off)
{
	uint64_t a = (r->kind == K_VIDMEM ? UVM_PAGE_2M : UVM_PAGE_4K) | base | len | off;
	uint64_t low = a & (~a + 1);
	static const uint64_t sizes[] = { UVM_PAGE_2M, UVM_PAGE_64K, UVM_PAGE_4K };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		if (sizes[i] <= low)
			return sizes[i];
	return 0;
}

/* uvm_map_external_allocation_on_gpu, in the driver's order. */
static nv_status_t map_on_gpu(pid_t caller, uint64_t file, const uint8_t *uuid,
			      const struct uvm_map_external_head *h,
			      const struct uvm_map_external_tail *t)
{
	uint64_t end = h->base + h->length - 1;
	struct res *r;
	nv_status_t st = unmap_in(file, uuid, h->base, end);

	if (st == NV_OK)
		st = dup_memory(caller, t->h_client, t->h_memory, &r);
	if (st != NV_OK)
		return st;
	uint64_t page = page_size(r, h->base, h->length, h->offset);
	if (!page)
		return NV_ERR_INVALID_ADDRESS;
	if (h->offset > r->bytes || h->length > r->bytes - h->offset)
		return NV_ERR_INVALID_OFFSET;
	if (!grow((void **)&maps, &cap_maps, nmaps, sizeof(*maps)))
		return NV_ERR_NO_MEMORY;
	struct uvm_map *m = &maps[nmaps++];
	*m = (struct uvm_map){ .file = file, .start = h->base, .end = end, .page = page, .res = r };
	memcpy(m->uuid, uuid, UVM_UUID_BYTES);
	r->refs++;
	return NV_OK;
}

static nv_status_t map_external(pid_t caller, uint64_t file, uint8_t *buf, uint32_t max)
{
	const struct uvm_map_external_head *h = (const void *)buf;
	const struct uvm_map_external_tail *t = (const void *)(buf + UVM_MAP_EXTERNAL_TAIL_OFF(max));
	const struct uvm_gpu_mapping_attrs *a = (const void *)(buf + sizeof(*h));
	nv_status_t st = NV_OK;
	uint64_t i;

	if (range_invalid_4k(h->base, h->length))
		return NV_ERR_INVALID_ADDRESS;
	if (t->gpu_count == 0 || t->gpu_count > max)
		return NV_ERR_INVALID_ARGUMENT;
	if (!span_in_range(file, h->base, h->length))
		return NV_ERR_INVALID_ADDRESS;
	for (i = 0; i < t->gpu_count && st == NV_OK; i++)
		st = map_on_gpu(caller, file, a[i].gpu_uuid, h, t);
	if (st == NV_OK) {
		fake_st.uvm_maps++;
		return NV_OK;
	}
	/* Undo this call's mappings on the GPUs done before the failure:
	 * they cover [base, end] exactly, so nothing is split. */
	for (uint64_t k = 0; k + 1 < i; k++)
		(void)unmap_in(file, a[k].gpu_uuid, h->base, h->base + h->length - 1);
	return st;
}

static nv_status_t alloc_device_p2p(pid_t caller, uint64_t file,
				    const struct uvm_alloc_device_p2p_params *p)
{
	struct uvm_create_external_range_params range = { .base = p->base, .length = p->length };
	struct res *r;

	if (range_invalid_4k(p->base + p->offset, p->length))
		return NV_ERR_INVALID_ARGUMENT;
	nv_status_t st = dup_memory(caller, p->h_client, p->h_memory, &r);
	if (st != NV_OK)
		return st;
	if (p->offset > r->bytes || p->length > r->bytes - p->offset)
		return NV_ERR_INVALID_ARGUMENT;
	if ((st = create_range(file, &range)) != NV_OK)
		return st;
	if (!grow((void **)&maps, &cap_maps, nmaps, sizeof(*maps)))
		return NV_ERR_NO_MEMORY;
	struct uvm_map *m = &maps[nmaps++];
	*m = (struct uvm_map){ .file = file, .start = p->base, .end = p->base + p->length - 1,
	                       .page = UVM_PAGE_4K, .res = r };
	memcpy(m->uuid, p->gpu_uuid, UVM_UUID_BYTES);
	r->refs++;
	return NV_OK;
}

static nv_status_t unmap_external(uint64_t file, const struct uvm_unmap_external_params *p)
{
	if (range_invalid_4k(p->base, p->length) || !span_in_range(file, p->base, p->length))
		return NV_ERR_INVALID_ADDRESS;
	return unmap_in(file, p->gpu_uuid, p->base, p->base + p->length - 1);
}

/* UVM_FREE; base_only is the 590 form: the range that starts at base. */
static nv_status_t free_range(uint64_t file, uint64_t base, uint64_t length, bool base_only)
{
	if (!base_only && range_invalid_4k(base, length))
		return NV_ERR_INVALID_ADDRESS;
	struct uvm_range *r = range_at(file, base);
	if (!r || r->start != base || (!base_only && r->end != base + length - 1))
		return NV_ERR_INVALID_ADDRESS;
	destroy_range(r);
	return NV_OK;
}

static nv_status_t validate(uint64_t file, const struct uvm_validate_va_range_params *p)
{
	struct uvm_range *r = range_at(file, p->base);
	return r && r->start == p->base && r->end + 1 == p->base + p->length ? NV_OK
	                                                                      : NV_ERR_INVALID_ADDRESS;
}

bool fake_uvm_models(uint32_t cmd)
{
	return cmd == UVM_INITIALIZE || cmd == UVM_CREATE_EXTERNAL_RANGE ||
	       cmd == UVM_MAP_EXTERNAL_ALLOCATION || cmd == UVM_UNMAP_EXTERNAL ||
	       cmd == UVM_FREE || cmd == UVM_VALIDATE_VA_RANGE || cmd == UVM_ALLOC_DEVICE_P2P ||
	       cmd == UVM_REGISTER_GPU || fake_uvm_chan_models(cmd);
}

/* The params size of cmd on the played branch. rmStatus is the last u32
 * of MAP's, ALLOC_DEVICE_P2P's and the 590 UNREGISTER_CHANNEL's struct,
 * and the one before a u32 pad in the others. */
#define UVM_STATUS_BEFORE_PAD(t) (offsetof(t, rm_status) + 8 == sizeof(t))
_Static_assert(UVM_STATUS_BEFORE_PAD(struct uvm_initialize_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_create_external_range_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_validate_va_range_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_unmap_external_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_free_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_free_params_590) &&
               offsetof(struct uvm_map_external_tail, rm_status) + 4 ==
               sizeof(struct uvm_map_external_tail) &&
               offsetof(struct uvm_alloc_device_p2p_params, rm_status) + 4 ==
               sizeof(struct uvm_alloc_device_p2p_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_register_channel_params) &&
               UVM_STATUS_BEFORE_PAD(struct uvm_unregister_channel_params) &&
               offsetof(struct uvm_unregister_channel_params_590, rm_status) + 4 ==
               sizeof(struct uvm_unregister_channel_params_590), "where rmStatus is");

static size_t params_size(uint32_t cmd, size_t *status_off)
{
	size_t size = sizeof(struct uvm_validate_va_range_params);  /* and CREATE's */

	if (cmd == UVM_INITIALIZE)
		size = sizeof(struct uvm_initialize_params);
	else if (cmd == UVM_UNMAP_EXTERNAL)
		size = sizeof(struct uvm_unmap_external_params);
	else if (cmd == UVM_FREE)
		size = branch() >= UVM_FREE_BASE_ONLY_BRANCH ? sizeof(struct uvm_free_params_590)
		                                             : sizeof(struct uvm_free_params);
	else if (cmd == UVM_MAP_EXTERNAL_ALLOCATION)
		size = UVM_MAP_EXTERNAL_SIZE(max_gpus());
	else if (cmd == UVM_ALLOC_DEVICE_P2P)
		size = sizeof(struct uvm_alloc_device_p2p_params);
	else if (cmd == UVM_REGISTER_GPU)
		size = sizeof(struct uvm_register_gpu_params);
	else if (fake_uvm_chan_models(cmd))
		size = fake_uvm_chan_params_size(cmd, branch());
	bool status_last = cmd == UVM_MAP_EXTERNAL_ALLOCATION || cmd == UVM_ALLOC_DEVICE_P2P ||
	                   cmd == UVM_REGISTER_GPU ||
	                   (cmd == UVM_UNREGISTER_CHANNEL && size == sizeof(struct uvm_unregister_channel_params_590));
	*status_off = size - (status_last ? 4 : 8);
	return size;
}

static nv_status_t run(pid_t caller, uint64_t file, uint32_t cmd, uint8_t *buf)
{
	switch (cmd) {
	case UVM_INITIALIZE:
		return NV_OK;
	case UVM_CREATE_EXTERNAL_RANGE:
		return create_range(file, (const void *)buf);
	case UVM_MAP_EXTERNAL_ALLOCATION:
		if (fake_st.cfg.map_sleep_ms) {
			struct timespec ts = { fake_st.cfg.map_sleep_ms / 1000u,
			                       (long)(fake_st.cfg.map_sleep_ms % 1000u) * 1000000L };
			fake_st.cfg.map_sleep_ms = 0;  /* the first one only */
			nanosleep(&ts, NULL);
		}
		return map_external(caller, file, buf, max_gpus());
	case UVM_UNMAP_EXTERNAL:
		return unmap_external(file, (const void *)buf);
	case UVM_ALLOC_DEVICE_P2P:
		return alloc_device_p2p(caller, file, (const void *)buf);
	case UVM_REGISTER_CHANNEL:
	case UVM_UNREGISTER_CHANNEL:
		return fake_uvm_chan_run(caller, file, cmd, buf, branch());
	case UVM_REGISTER_GPU:
		return fake_uvm_gpu_register(caller, file, (void *)buf);
	case UVM_FREE: {
		/* base comes first in both shapes; only up to 580 a length. */
		const struct uvm_free_params *f = (const void *)buf;
		bool base_only = branch() >= UVM_FREE_BASE_ONLY_BRANCH;
		return free_range(file, f->base, base_only ? 0 : f->length, base_only);
	}
	default:
		return validate(file, (const void *)buf);
	}
}

int fake_uvm_ioctl(pid_t caller, uint64_t file, uint32_t cmd, uint64_t arg)
{
	size_t status_off;
	size_t size = params_size(cmd, &status_off);
	uint8_t *buf = malloc(size);
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	if (fake_mem_read(caller, arg, buf, size)) {
		free(buf);
		return -EFAULT;  /* copy_from_user failed: nothing ran */
	}
	pthread_mutex_lock(&fake_st.lock);
	nv_status_t st = run(caller, file, cmd, buf);
	pthread_mutex_unlock(&fake_st.lock);
	memcpy(buf + status_off, &st, sizeof(st));
	/* The module copies the whole struct back, and fails the call if it
	 * cannot (what it did stays done). */
	if (fake_mem_write(caller, arg, buf, size))
		rc = -EFAULT;
	free(buf);
	return rc;
}

/* ---- --register-late-ms ---- */

struct late_register {
	pid_t                    pid;
	uint64_t                 addr;
	unsigned                 ms;
	fake_late_reply_fn       reply;
	void                    *ctx;
	struct fake_uvm_retained r;
};

static void *register_late_reply(void *arg)
{
	struct late_register *l = arg;
	nv_status_t st;

	usleep(l->ms * 1000u);
	pthread_mutex_lock(&fake_st.lock);
	st = fake_uvm_chan_commit(&l->r);
	pthread_mutex_unlock(&fake_st.lock);
	fake_rm_late_reply(-1);
	l->reply(l->ctx, fake_mem_write(l->pid, l->addr + offsetof(struct uvm_register_channel_params, rm_status),
	                                &st, sizeof(st))
	                     ? EFAULT
	                     : 0);
	free(l);
	return NULL;
}

bool fake_uvm_register_late(pid_t pid, uint64_t file, uint64_t addr, fake_late_reply_fn reply, void *ctx)
{
	struct uvm_register_channel_params p;
	struct late_register *l;
	pthread_t t;

	pthread_mutex_lock(&fake_st.lock);
	unsigned ms = fake_st.cfg.register_late_ms;
	fake_st.cfg.register_late_ms = 0;  /* the first one only */
	pthread_mutex_unlock(&fake_st.lock);
	if (!ms || fake_mem_read(pid, addr, &p, sizeof(p)) || !(l = calloc(1, sizeof(*l))))
		return false;
	*l = (struct late_register){ .pid = pid, .addr = addr, .ms = ms, .reply = reply, .ctx = ctx };
	pthread_mutex_lock(&fake_st.lock);
	nv_status_t st = fake_uvm_chan_retain(pid, file, &p, &l->r);
	pthread_mutex_unlock(&fake_st.lock);
	/* A call the checks refuse is served as usual: they answer alike. */
	if (st != NV_OK) {
		free(l);
		return false;
	}
	fake_rm_late_reply(+1);
	if (pthread_create(&t, NULL, register_late_reply, l) != 0) {
		l->ms = 0;  /* no thread: recorded and answered now */
		(void)register_late_reply(l);
		return true;
	}
	pthread_detach(t);
	return true;
}

void fake_uvm_release_file(uint64_t file)
{
	pthread_mutex_lock(&fake_st.lock);
	for (size_t i = 0; i < nranges;) {
		if (ranges[i].file == file)
			destroy_range(&ranges[i]);  /* moves the last one to i */
		else
			i++;
	}
	fake_uvm_chan_release_file(file);
	fake_uvm_gpu_release_file(file);
	pthread_mutex_unlock(&fake_st.lock);
}

size_t fake_uvm_live(void)
{
	return nmaps;
}
