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
 *   ProcID must be the destination's. RM_SHARE edits the policies of
 *   the handle named (an RsResourceRef, not the memory behind it:
 *   clientShareResource_IMPL, resserv/src/rs_client.c, 580.95.05): ALL
 *   lets any client dup it, OS_SECURITY_TOKEN a client whose security
 *   token matches the owner's, CLIENT the one client named by target; REVOKE removes rights from a
 *   policy. A handle whose policies were never edited takes those of its
 *   nearest edited ancestor, up to its client, or else the default
 *   (rsAccessGetActiveShareList, resserv/src/rs_access_map.c). The first
 *   edit starts from an empty list, so a policy shared without
 *   RS_SHARE_ACTION_FLAG_COMPOSE replaces the default one (a second
 *   client of the owner's process may no longer dup it); with COMPOSE it
 *   starts from the active list and adds to it. Equal policies (type and
 *   target) merge their rights (rsShareListInsert). REQUIRE policies and
 *   other types are accepted and not modelled (no test relies on them).
 * - The security token (osGetSecurityToken, osValidateClientTokens,
 *   arch/nvalloc/unix/src/os.c, 580.95.05): a client's is the effective
 *   uid and the process (tgid) of the thread that made it; two tokens
 *   match when either the euid or the pid is equal. cliresShareCallback
 *   takes, for a kernel client (UVM's dup of the memory it maps), the
 *   calling thread's token, for a user client that client's own. The
 *   thread's euid is what FUSE reports as the request's uid (the fsuid,
 *   which follows the euid unless set apart).
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

/* A handle's ancestors are looked at no deeper than this: RM's trees are
 * a few levels deep (client, device, subdevice, object). */
#define FAKE_MAX_DEPTH 16u

/* The driver's default list: clients of the owner's process may dup. */
static const struct share_list default_list = {
	.n = 1, .p = { { .type = RS_SHARE_TYPE_PID, .mask = RS_ACCESS_DUP_OBJECT_BIT } },
};

/* The list that applies to o (NULL: the client object itself). */
static const struct share_list *active_list(struct client *c, const struct obj *o)
{
	for (unsigned depth = 0; o && depth < FAKE_MAX_DEPTH; depth++) {
		if (o->share.modified)
			return &o->share;
		o = o->parent == c->h ? NULL : fake_find_obj(c, o->parent);
	}
	return c->share.modified ? &c->share : &default_list;
}

/* osValidateClientTokens: the euid or the pid equal. */
static bool tokens_match(const struct client *src, pid_t tgid, uid_t euid)
{
	return src->euid == euid || src->tgid == tgid;
}

bool fake_share_allows(struct client *src, const struct obj *so, pid_t tgid, uid_t euid, nv_handle_t dst)
{
	const struct share_list *l = active_list(src, so);

	for (unsigned i = 0; i < l->n; i++) {
		const struct share_policy *p = &l->p[i];
		if (!(p->mask & RS_ACCESS_DUP_OBJECT_BIT))
			continue;
		if ((p->type == RS_SHARE_TYPE_PID && src->tgid == tgid) || p->type == RS_SHARE_TYPE_ALL ||
		    (p->type == RS_SHARE_TYPE_OS_SECURITY_TOKEN && tokens_match(src, tgid, euid)) ||
		    (p->type == RS_SHARE_TYPE_CLIENT && dst && p->target == dst))
			return true;
	}
	return false;
}

bool fake_share_allows_dup(struct client *src, const struct obj *so, const struct client *dst)
{
	/* The owner client holds every right on its own objects. */
	return src == dst || fake_share_allows(src, so, dst->tgid, dst->euid, dst->h);
}

static struct share_policy *find_policy(struct share_list *l, const struct share_policy *want)
{
	for (unsigned i = 0; i < l->n; i++)
		if (l->p[i].type == want->type && l->p[i].target == want->target)
			return &l->p[i];
	return NULL;
}

static nv_status_t edit_list(struct share_list *l, const struct share_list *active,
                             const struct rs_share_policy *pol)
{
	struct share_policy want = { pol->type, pol->type == RS_SHARE_TYPE_CLIENT ? pol->target : 0,
	                             pol->access_mask };

	if (!l->modified) {
		*l = (pol->action & RS_SHARE_ACTION_FLAG_COMPOSE) ? *active : (struct share_list){ 0 };
		l->modified = true;
	}
	if (!(pol->action & RS_SHARE_ACTION_FLAG_COMPOSE))
		l->n = 0;
	struct share_policy *have = find_policy(l, &want);
	if (pol->action & RS_SHARE_ACTION_FLAG_REVOKE) {
		if (have && !(have->mask &= ~want.mask))
			*have = l->p[--l->n];
		return NV_OK;
	}
	if (have) {
		have->mask |= want.mask;
		return NV_OK;
	}
	if (l->n == FAKE_SHARE_MAX)
		return NV_ERR_INSUFFICIENT_RESOURCES;
	l->p[l->n++] = want;
	if (want.type == RS_SHARE_TYPE_OS_SECURITY_TOKEN && (want.mask & RS_ACCESS_DUP_OBJECT_BIT))
		fake_st.token_shares++;
	return NV_OK;
}

static nv_status_t share(const struct fake_caller *who, const struct nvos57 *p)
{
	struct client *c;
	nv_status_t st = fake_get_client(who, p->h_client, &c);
	if (st != NV_OK)
		return st;
	if (p->policy.action & RS_SHARE_ACTION_FLAG_REQUIRE)
		return NV_OK;
	if (p->h_object == c->h)
		return edit_list(&c->share, active_list(c, NULL), &p->policy);
	struct obj *o = fake_find_obj(c, p->h_object);
	if (!o)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	return edit_list(&o->share, active_list(c, o), &p->policy);
}

/* Policies of a type that grant a dup, in one edited list. */
static unsigned dup_policies(const struct share_list *l, uint16_t type)
{
	unsigned n = 0;

	for (unsigned i = 0; l->modified && i < l->n; i++)
		n += l->p[i].type == type && (l->p[i].mask & RS_ACCESS_DUP_OBJECT_BIT);
	return n;
}

static unsigned client_policies(const struct share_list *l)
{
	return dup_policies(l, RS_SHARE_TYPE_CLIENT);
}

unsigned fake_share_token_policies(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < fake_st.nclients; i++) {
		const struct client *c = fake_st.clients[i];
		n += dup_policies(&c->share, RS_SHARE_TYPE_OS_SECURITY_TOKEN);
		for (size_t j = 0; j < c->n; j++)
			n += dup_policies(&c->objs[j].share, RS_SHARE_TYPE_OS_SECURITY_TOKEN);
	}
	return n;
}

unsigned fake_share_client_policies(void)
{
	return fake_share_object_policies() + fake_share_client_object_policies();
}

unsigned fake_share_object_policies(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < fake_st.nclients; i++) {
		const struct client *c = fake_st.clients[i];
		for (size_t j = 0; j < c->n; j++)
			n += client_policies(&c->objs[j].share);
	}
	return n;
}

unsigned fake_share_client_object_policies(void)
{
	unsigned n = 0;

	for (size_t i = 0; i < fake_st.nclients; i++)
		n += client_policies(&fake_st.clients[i]->share);
	return n;
}

/* NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY (0xd04) on client c:
 * cliresCtrlCmdClientSetInheritedSharePolicy_IMPL shares the client
 * object itself with the policy given (through ClientShareObject and
 * clientShareResource: client_resource.c, rs_client.c, 580.95.05), so it
 * edits the list every object that never had its own inherits; without
 * RS_SHARE_ACTION_FLAG_COMPOSE it replaces that list. */
nv_status_t fake_share_inherited(struct client *c, const struct rs_share_policy *pol)
{
	if (pol->action & RS_SHARE_ACTION_FLAG_REQUIRE)
		return NV_OK;
	return edit_list(&c->share, active_list(c, NULL), pol);
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
