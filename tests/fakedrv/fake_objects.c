/* SPDX-License-Identifier: MIT */
/*
 * fake_objects.c - the fake RM's clients and objects (fake_rm.c's model):
 * the memory of the calling process, the model's set-up, lookups by
 * handle, handles RM picks, objects and the resources behind them, and a
 * subtree's or a client's free. Under fake_st.lock, as all of the model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "fake_rm_int.h"

/* Where the fake pretends each GPU's heap starts, so offsets look real. */
#define FAKE_HEAP_BASE (1ull << 32)

/* ---- caller memory ------------------------------------------------------ */

int fake_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len)
{
	if (len == 0)
		return 0;
	struct iovec local = { dst, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int fake_mem_write(pid_t pid, uint64_t addr, const void *src, size_t len)
{
	if (len == 0)
		return 0;
	struct iovec local = { (void *)src, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* FUSE reports the calling thread; RM records the process (tgid). */
pid_t fake_tgid_of(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return tid;
	pid_t tgid = tid;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

/* Per FUSE worker thread: each serves one request at a time. */
static __thread uid_t req_euid;

uid_t fake_req_euid(void)
{
	return req_euid;
}

void fake_set_req_euid(uid_t euid)
{
	req_euid = euid;
}

/* ---- clients and objects ------------------------------------------------ */

void fake_rm_init(const struct fake_config *cfg)
{
	pthread_mutex_lock(&fake_st.lock);
	fake_st.cfg = *cfg;
	/* A version without tables (a test of gpusandbox's refusal) plays
	 * the nearest branch, as --driver-abi nearest would pick. */
	fake_st.abi = gs_rm_abi_for_version(cfg->driver_version);
	if (!fake_st.abi)
		fake_st.abi = gs_rm_abi_nearest(cfg->driver_version);
	if (!fake_st.abi)
		fake_st.abi = gs_rm_abi_default();
	for (unsigned g = 0; g < FAKE_MAX_GPUS; g++) {
		memset(&fake_st.gpu[g], 0, sizeof(fake_st.gpu[g]));
		fake_st.gpu[g].total = cfg->vidmem;
		fake_st.gpu[g].next_offset = FAKE_HEAP_BASE;
	}
	pthread_mutex_unlock(&fake_st.lock);
}

bool fake_class_absent(uint32_t cls)
{
	return rm_class_row(fake_st.abi, cls) && !rm_class_lookup(fake_st.abi, cls);
}

bool fake_ctrl_absent(uint32_t cmd)
{
	return rm_ctrl_row(fake_st.abi, cmd) && !rm_ctrl_lookup(fake_st.abi, cmd);
}

uint32_t fake_ctrl_size(uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_lookup(fake_st.abi, cmd);
	return ci ? ci->params_size : 0;
}

/* rmapi_deprecated_vidheapctrl.c checks USE_EGM only on 550..590: 535 never
 * had the bit and 595 deleted it, so there the request becomes
 * NV01_MEMORY_LOCAL_USER (abi-drift.md 4.1; 535.288.01, 595.45.04). */
#define EGM_FIRST_BRANCH 550
#define EGM_LAST_BRANCH  590

bool fake_vidheap_honours_egm(void)
{
	int branch = atoi(gs_rm_abi_branch(fake_st.abi));
	return branch >= EGM_FIRST_BRANCH && branch <= EGM_LAST_BRANCH;
}

struct client *fake_find_client(nv_handle_t h)
{
	for (size_t i = 0; i < fake_st.nclients; i++)
		if (fake_st.clients[i]->h == h)
			return fake_st.clients[i];
	return NULL;
}

struct obj *fake_find_obj(struct client *c, nv_handle_t h)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->objs[i].h == h)
			return &c->objs[i];
	return NULL;
}

/* Strict validation, the driver's default: a client may be used only
 * through the open file that created it, whoever the caller is. Calls on a
 * device fd (events after REGISTER_FD) are matched against whatever ctl
 * file the client has, since the fake cannot see REGISTER_FD's link. */
nv_status_t fake_get_client(const struct fake_caller *who, nv_handle_t h, struct client **out)
{
	struct client *c = fake_find_client(h);
	if (!c || (who->ctl && c->file != who->file))
		return NV_ERR_INVALID_CLIENT;
	*out = c;
	return NV_OK;
}

bool fake_handle_in_use(struct client *c, nv_handle_t h)
{
	return h == c->h || fake_find_obj(c, h) != NULL;
}

nv_handle_t fake_pick_handle(struct client *c)
{
	nv_handle_t h;

	/* Fault injection (--handle-zero): RM never picks 0, but a handle is
	 * the driver's answer, and 0 is a value the supervisor's ledger once
	 * took for "no parent" (issue #17 item 12: an endless loop). */
	if (fake_st.cfg.handle_zero && !fake_handle_in_use(c, 0))
		return 0;
	do
		h = FAKE_OBJECT_HANDLE_BASE + c->next_handle++;
	while (fake_handle_in_use(c, h));
	return h;
}

struct obj *fake_add_obj(struct client *c)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct obj *o = realloc(c->objs, cap * sizeof(*o));
		if (!o)
			return NULL;
		c->objs = o;
		c->cap = cap;
	}
	struct obj *o = &c->objs[c->n++];
	memset(o, 0, sizeof(*o));
	return o;
}

void fake_res_put(struct res *r)
{
	if (--r->refs > 0)
		return;
	if (r->gpu >= 0) {
		struct gpu_acct *g = &fake_st.gpu[r->gpu];
		if (r->kind == K_CHANNEL && r->disabled)
			g->freed_while_disabled++;
		if (r->kind == K_VIDMEM)
			g->used -= r->bytes;
		else if (r->kind == K_CHANNEL)
			g->ch_live--;
		/* RM's own group of a lone channel is counted with the
		 * channel (own_group), not again as a group. */
		if (r->kind == K_CHANNEL && r->own_group)
			g->grp_live--;
		else if (r->kind == K_CHANNEL_GROUP && !r->rm_internal)
			g->grp_live--;
		else if (r->kind == K_ENGINE)
			g->eng_live[r->engine]--;
	}
	fake_p2p_forget(r);
	/* The last copy of a semaphore surface frees the driver's dups. */
	fake_semsurf_release(r);
	struct res *group = r->group, *internal = r->internal_group;
	free(r);
	/* The channel's reference on its group (alloc_object), or on the
	 * group RM made for it (fake_chgrp.c). */
	if (group)
		fake_res_put(group);
	if (internal)
		fake_res_put(internal);
}

/* Free h and everything below it. Doomed handles are collected in a list so
 * that freeing one leaf among thousands of objects costs one pass. */
void fake_free_subtree(struct client *c, struct obj *root)
{
	size_t cap = 16, nd = 0;
	nv_handle_t *doomed = malloc(cap * sizeof(*doomed));
	root->doomed = true;
	if (doomed)
		doomed[nd++] = root->h;
	for (bool changed = true; changed && doomed;) {
		changed = false;
		for (size_t i = 0; i < c->n; i++) {
			struct obj *o = &c->objs[i];
			if (o->doomed)
				continue;
			bool tied = fake_chgrp_tied_to_doomed(c, o);
			for (size_t k = 0; k < nd; k++) {
				if (!tied && o->parent != doomed[k])
					continue;
				o->doomed = true;
				changed = true;
				if (nd == cap) {
					nv_handle_t *d = realloc(doomed, 2 * cap * sizeof(*d));
					if (!d)
						break;
					doomed = d;
					cap *= 2;
				}
				doomed[nd++] = o->h;
				break;
			}
		}
	}
	free(doomed);
	size_t w = 0;
	for (size_t i = 0; i < c->n; i++) {
		if (c->objs[i].doomed)
			fake_res_put(c->objs[i].res);
		else
			c->objs[w++] = c->objs[i];
	}
	c->n = w;
}

void fake_free_client(struct client *c)
{
	for (size_t i = 0; i < c->n; i++)
		fake_res_put(c->objs[i].res);
	free(c->objs);
	for (size_t i = 0; i < fake_st.nclients; i++) {
		if (fake_st.clients[i] == c) {
			fake_st.clients[i] = fake_st.clients[--fake_st.nclients];
			break;
		}
	}
	free(c);
}

uint64_t fake_round_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) / align * align;
}
