/* SPDX-License-Identifier: MIT */
/*
 * fake_uvm_chan.c - UVM_REGISTER_CHANNEL and UVM_UNREGISTER_CHANNEL: the
 * way a process keeps a GPU's channel IDs and channel groups (TSGs) held
 * after RM_FREE of every handle it has, because UVM's registration keeps
 * RM's own references on them.
 *
 * After NVIDIA/open-gpu-kernel-modules 580.95.05:
 * - kernel-open/nvidia-uvm/uvm_user_channel.c, uvm_user_channel_create:
 *   the GPU is looked up by UUID among the VA space's GPUs (none:
 *   NV_ERR_INVALID_DEVICE), then RM retains the channel; only then does
 *   uvm_register_channel_under_write refuse a (hClient, hChannel) pair the
 *   VA space has registered already (NV_ERR_INVALID_CHANNEL), dropping
 *   what the retain took. rmCtrlFd is not used ("TODO: Bug 1624521").
 *   uvm_unregister_channel finds the registration by (hClient, hChannel)
 *   in the whole VA space (find_user_channel; the GPU UUID of the 580
 *   struct is never read, and 590 dropped it), else NV_ERR_INVALID_CHANNEL.
 *   The VA space's teardown (the UVM file's last close) drops them all.
 * - src/nvidia/src/kernel/rmapi/nv_gpu_ops.c, nvGpuOpsRetainChannel:
 *   hClient is looked up among all clients (_nvGpuOpsLocksAcquireAll; the
 *   fake answers NV_ERR_INVALID_CLIENT for none); nvGpuOpsVerifyChannel:
 *   hChannel must be a channel of hClient (CliGetKernelChannel, a dup of a
 *   channel is one), else NV_ERR_INVALID_OBJECT_HANDLE, and on the UUID's
 *   GPU, else NV_ERR_OTHER_DEVICE_FOUND. nvGpuOpsGetChannelTsgInfo dups
 *   the channel's TSG into UVM's client with
 *   NV04_DUP_HANDLE_FLAGS_REJECT_KERNEL_DUP_PRIVILEGE, so the TSG's share
 *   policies apply as to a dup made by the calling process
 *   (cliresShareCallback, rmapi/client_resource.c: for PID sharing the
 *   source client's process must be the current one), else
 *   NV_ERR_INSUFFICIENT_PERMISSIONS. Then RM allocates a
 *   UVM_CHANNEL_RETAINER (src/nvidia/src/kernel/gpu/fifo/
 *   uvm_channel_retainer.c), which holds the channel's ID and instance
 *   block.
 *
 * So a registration holds one reference on the channel (the retainer) and
 * one on its channel group (the TSG dup); a channel outside any group has
 * its RM-made group inside the channel's own record (own_group), held by
 * the first. The fake checks the TSG's share policy on the group's first
 * handle (the one RM_ALLOC made), or, for a lone channel, on the channel's.
 *
 * Not modelled: GPU VA space registration (UVM_REGISTER_GPU_VASPACE; the
 * fake takes every fake GPU as registered, so the channel's VA space is
 * not compared with UVM's: nvGpuOpsVerifyChannel's NV_ERR_INVALID_CHANNEL
 * for another VA space never comes), the channel's UVM VA ranges (base
 * and length are not read), the work submit token and stopping the
 * channel at unregister.
 *
 * Everything here runs with fake_st.lock held.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_rm_int.h"
#include "nvuvm_abi.h"

/* nvstatuscodes.h at 580.95.05; include/nvrm_abi.h lacks it. */
#define NV_ERR_OTHER_DEVICE_FOUND 0x0000005au

struct uvm_chan_reg {
	uint64_t    file;       /* the VA space */
	nv_handle_t h_client, h_channel;
	struct res *channel;    /* one reference: the retainer */
	struct res *group;      /* one reference: the TSG dup; NULL for a lone channel */
};

static struct uvm_chan_reg *regs;
static size_t nregs, cap_regs;

/* The raw 16-byte UUID of fake GPU g: the hex digits of its printed form
 * (FAKE_GPU_UUID_FMT), as RM's binary GID is the printed one's digits. */
static void fake_gpu_raw_uuid(unsigned g, uint8_t out[UVM_UUID_BYTES])
{
	char text[64];
	size_t n = 0;

	snprintf(text, sizeof(text), FAKE_GPU_UUID_FMT, g);
	memset(out, 0, UVM_UUID_BYTES);
	for (const char *p = text + strlen("GPU-"); *p && n < 2 * UVM_UUID_BYTES; p++) {
		if (!isxdigit((unsigned char)*p))
			continue;
		unsigned v = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
		                                        : (unsigned)(tolower((unsigned char)*p) - 'a' + 10);
		out[n / 2] |= (uint8_t)(n % 2 ? v : v << 4);
		n++;
	}
}

int fake_gpu_of_raw_uuid(const uint8_t *uuid)
{
	uint8_t raw[UVM_UUID_BYTES];

	for (unsigned g = 0; g < fake_st.cfg.gpus && g < FAKE_MAX_GPUS; g++) {
		fake_gpu_raw_uuid(g, raw);
		if (!memcmp(raw, uuid, UVM_UUID_BYTES))
			return (int)g;
	}
	return -1;
}

/* The handle RM_ALLOC made for r (not a dup), in any client; NULL if only
 * dups are left. */
static struct obj *first_handle(const struct res *r, struct client **owner)
{
	for (size_t i = 0; i < fake_st.nclients; i++) {
		struct client *c = fake_st.clients[i];
		for (size_t k = 0; k < c->n; k++)
			if (c->objs[k].res == r && !c->objs[k].dup) {
				*owner = c;
				return &c->objs[k];
			}
	}
	return NULL;
}

/* nvGpuOpsGetChannelTsgInfo's dup of the TSG, by the calling process:
 * may it? (the group's share policies, or a lone channel's.) */
static bool tsg_dup_allowed(pid_t caller, struct client *c, struct obj *chan)
{
	struct res *tsg = chan->res->group ? chan->res->group : chan->res;
	struct client *owner = c;
	struct obj *o = first_handle(tsg, &owner);

	return fake_share_allows(owner, o ? o : chan, fake_tgid_of(caller), fake_req_euid(), 0);
}

static struct uvm_chan_reg *find_reg(uint64_t file, nv_handle_t hc, nv_handle_t hch)
{
	for (size_t i = 0; i < nregs; i++)
		if (regs[i].file == file && regs[i].h_client == hc && regs[i].h_channel == hch)
			return &regs[i];
	return NULL;
}

/* nvGpuOpsRetainChannel's checks, in the driver's order: the channel. */
static nv_status_t verify_channel(pid_t caller, const struct uvm_register_channel_params *p, int gpu,
				  struct res **out)
{
	struct client *c = fake_find_client(p->h_client);
	if (!c)
		return NV_ERR_INVALID_CLIENT;
	struct obj *o = fake_find_obj(c, p->h_channel);
	if (!o || o->res->kind != K_CHANNEL)
		return NV_ERR_INVALID_OBJECT_HANDLE;
	if (o->res->gpu != gpu)
		return NV_ERR_OTHER_DEVICE_FOUND;
	if (!tsg_dup_allowed(caller, c, o))
		return NV_ERR_INSUFFICIENT_PERMISSIONS;
	*out = o->res;
	return NV_OK;
}

nv_status_t fake_uvm_chan_retain(pid_t caller, uint64_t file, const struct uvm_register_channel_params *p,
                                 struct fake_uvm_retained *out)
{
	int gpu = fake_gpu_of_raw_uuid(p->gpu_uuid);
	struct res *ch;

	if (gpu < 0)
		return NV_ERR_INVALID_DEVICE;
	nv_status_t st = verify_channel(caller, p, gpu, &ch);
	if (st != NV_OK)
		return st;
	const struct client *c = fake_find_client(p->h_client);
	*out = (struct fake_uvm_retained){ file, p->h_client, p->h_channel, ch, ch->group,
	                                   c && c->tgid != fake_tgid_of(caller) };
	ch->refs++;
	if (ch->group)
		ch->group->refs++;
	return NV_OK;
}

nv_status_t fake_uvm_chan_commit(const struct fake_uvm_retained *r)
{
	/* The pair registered already: what the retain took is dropped. */
	if (find_reg(r->file, r->h_client, r->h_channel)) {
		if (r->group)
			fake_res_put(r->group);
		fake_res_put(r->channel);
		return NV_ERR_INVALID_CHANNEL;
	}
	if (nregs == cap_regs) {
		size_t cap = cap_regs ? 2 * cap_regs : 16;
		struct uvm_chan_reg *n = realloc(regs, cap * sizeof(*n));
		if (!n) {
			if (r->group)
				fake_res_put(r->group);
			fake_res_put(r->channel);
			return NV_ERR_NO_MEMORY;
		}
		regs = n;
		cap_regs = cap;
	}
	regs[nregs++] = (struct uvm_chan_reg){ r->file, r->h_client, r->h_channel, r->channel, r->group };
	fake_st.uvm_channel_registrations++;
	if (r->by_other)
		fake_st.uvm_channel_registrations_by_other++;
	return NV_OK;
}

/* The retain, then (uvm_register_channel_under_write) the record. */
static nv_status_t register_channel(pid_t caller, uint64_t file,
				    const struct uvm_register_channel_params *p)
{
	struct fake_uvm_retained r;
	nv_status_t st = fake_uvm_chan_retain(caller, file, p, &r);

	return st == NV_OK ? fake_uvm_chan_commit(&r) : st;
}

/* The retainer and the TSG dup go (the channel's reference last: it may
 * hold the group's last but one). */
static void drop_reg(size_t i)
{
	struct uvm_chan_reg r = regs[i];

	regs[i] = regs[--nregs];
	if (r.group)
		fake_res_put(r.group);
	fake_res_put(r.channel);
}

static nv_status_t unregister_channel(uint64_t file, nv_handle_t hc, nv_handle_t hch)
{
	struct uvm_chan_reg *r = find_reg(file, hc, hch);

	if (!r)
		return NV_ERR_INVALID_CHANNEL;
	drop_reg((size_t)(r - regs));
	return NV_OK;
}

bool fake_uvm_chan_models(uint32_t cmd)
{
	return cmd == UVM_REGISTER_CHANNEL || cmd == UVM_UNREGISTER_CHANNEL;
}

size_t fake_uvm_chan_params_size(uint32_t cmd, int branch)
{
	if (cmd == UVM_REGISTER_CHANNEL)
		return sizeof(struct uvm_register_channel_params);
	return branch >= UVM_UNREGISTER_CHANNEL_SHORT_BRANCH ? sizeof(struct uvm_unregister_channel_params_590)
	                                                     : sizeof(struct uvm_unregister_channel_params);
}

nv_status_t fake_uvm_chan_run(pid_t caller, uint64_t file, uint32_t cmd, void *params, int branch)
{
	if (cmd == UVM_REGISTER_CHANNEL)
		return register_channel(caller, file, params);
	if (branch >= UVM_UNREGISTER_CHANNEL_SHORT_BRANCH) {
		const struct uvm_unregister_channel_params_590 *u = params;
		return unregister_channel(file, u->h_client, u->h_channel);
	}
	const struct uvm_unregister_channel_params *u = params;
	return unregister_channel(file, u->h_client, u->h_channel);
}

void fake_uvm_chan_release_file(uint64_t file)
{
	for (size_t i = 0; i < nregs;) {
		if (regs[i].file == file)
			drop_reg(i);  /* moves the last one to i */
		else
			i++;
	}
}

size_t fake_uvm_chan_live(void)
{
	return nregs;
}
