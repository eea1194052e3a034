/* SPDX-License-Identifier: MIT */
/*
 * fake_share.c - what lets memory outlive the handle a client freed, as
 * the driver does it: share policies (RM_SHARE) that let another
 * process's client RM_DUP_OBJECT an object, and dma-buf exports, which
 * dup the memory into the driver's own client.
 *
 * Facts from NVIDIA/open-gpu-kernel-modules at 580.142:
 * - Dup across clients: the default policy for RS_ACCESS_DUP_OBJECT is
 *   RS_SHARE_TYPE_PID (src/nvidia/src/kernel/rmapi/sharing.c), checked in
 *   cliresShareCallback (rmapi/client_resource.c): the source client's
 *   ProcID must be the destination's. RM_SHARE adds policies to the
 *   object (serverShareResourceAccess, resserv/src/rs_server.c): ALL lets
 *   any client dup it, OS_SECURITY_TOKEN any client of the same user,
 *   CLIENT the one client named by target; REVOKE removes a policy. The
 *   fake runs every caller as one user, so ALL and OS_SECURITY_TOKEN
 *   mean the same here; REQUIRE policies and other types are accepted and
 *   not modelled (no test relies on them).
 * - EXPORT_TO_DMABUF_FD (kernel-open/nvidia/nv.c, nv-dmabuf.c): exact
 *   size or -EINVAL; GPU nodes only (NV_ACTUAL_DEVICE_ONLY, -EINVAL on
 *   the control device); the RM status in params->status. Each handle
 *   is dup'ed into the driver's client (nv_dma_buf_dup_mem_handles), so
 *   the memory stays until the dma-buf file is released. The fake cannot
 *   hand the caller a real dma-buf file through FUSE, so its dma-buf
 *   never dies: every exported memory object stays allocated until the
 *   fake stops, as the real one does while the workload keeps the fd.
 *
 * Everything here runs with fake_st.lock held.
 */
#include <errno.h>
#include <stdlib.h>

#include "fake_rm_int.h"

/* References the fake's dma-bufs hold. */
static struct res **dmabuf_refs;
static size_t n_dmabuf_refs, cap_dmabuf_refs;

bool fake_share_allows_dup(const struct client *src, const struct obj *so,
			   const struct client *dst)
{
	if (src == dst || src->tgid == dst->tgid)
		return true;
	return so->res->share_all || (so->res->share_client && so->res->share_client == dst->h);
}

static nv_status_t share(const struct fake_caller *who, const struct nvos57 *p)
{
	struct client *c;
	nv_status_t st = fake_get_client(who, p->h_client, &c);
	if (st != NV_OK)
		return st;
	struct obj *o = fake_find_obj(c, p->h_object);
	if (!o)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (!(p->policy.access_mask & RS_ACCESS_DUP_OBJECT_BIT) ||
	    (p->policy.action & RS_SHARE_ACTION_FLAG_REQUIRE))
		return NV_OK;
	bool on = !(p->policy.action & RS_SHARE_ACTION_FLAG_REVOKE);
	switch (p->policy.type) {
	case RS_SHARE_TYPE_ALL:
	case RS_SHARE_TYPE_OS_SECURITY_TOKEN:
		o->res->share_all = on;
		break;
	case RS_SHARE_TYPE_CLIENT:
		o->res->share_client = on ? p->policy.target : 0;
		break;
	default:
		break;
	}
	return NV_OK;
}

int fake_esc_share(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != sizeof(struct nvos57))
		return -EINVAL;
	struct nvos57 *p = buf;
	p->status = share(who, p);
	return 0;
}

static nv_status_t hold_for_dmabuf(struct res *r)
{
	if (n_dmabuf_refs == cap_dmabuf_refs) {
		size_t cap = cap_dmabuf_refs ? 2 * cap_dmabuf_refs : 16;
		struct res **n = realloc(dmabuf_refs, cap * sizeof(*n));
		if (!n)
			return NV_ERR_NO_MEMORY;
		dmabuf_refs = n;
		cap_dmabuf_refs = cap;
	}
	r->refs++;
	dmabuf_refs[n_dmabuf_refs++] = r;
	fake_st.dmabuf_held++;
	return NV_OK;
}

static nv_status_t export_dmabuf(struct nv_ioctl_export_to_dma_buf_fd *p)
{
	struct client *c = fake_find_client(p->h_client);
	if (!c)
		return NV_ERR_INVALID_CLIENT;
	if (p->num_objects == 0 || p->num_objects > NV_DMABUF_EXPORT_MAX_HANDLES)
		return NV_ERR_INVALID_ARGUMENT;
	/* Check every handle before taking any reference. */
	for (uint32_t i = 0; i < p->num_objects; i++) {
		struct obj *o = fake_find_obj(c, p->handles[i]);
		if (!o || (o->res->kind != K_VIDMEM && o->res->kind != K_SYSMEM))
			return NV_ERR_INVALID_OBJECT_HANDLE;
	}
	for (uint32_t i = 0; i < p->num_objects; i++) {
		nv_status_t st = hold_for_dmabuf(fake_find_obj(c, p->handles[i])->res);
		if (st != NV_OK)
			return st;
	}
	return NV_OK;
}

int fake_esc_export_dmabuf(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != sizeof(struct nv_ioctl_export_to_dma_buf_fd) || who->ctl)
		return -EINVAL;
	struct nv_ioctl_export_to_dma_buf_fd *p = buf;
	p->status = export_dmabuf(p);
	return 0;
}
