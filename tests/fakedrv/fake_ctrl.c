/* SPDX-License-Identifier: MIT */
/*
 * fake_ctrl.c - RM_CONTROL and the stats snapshot of the fake RM.
 *
 * Only the controls a sandbox acts on are modelled (memory reports, PID
 * accounting, channel scheduling); every other control succeeds without
 * touching its params so that replays of real traces go through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_rm_int.h"

/* NVOS54 flags that only kernel callers may use (rm-abi.md 2). */
#define NVOS54_FLAGS_IRQL_RAISED  0x1u
#define NVOS54_FLAGS_LOCK_BYPASS  0x2u

/* ---- RM_CONTROL --------------------------------------------------------- */

static uint32_t kib(uint64_t bytes)
{
	return (uint32_t)(bytes / FAKE_KIB);
}

static void fill_fb_info(int gpu, struct nv2080_fb_info_entry *list, uint32_t n)
{
	const struct gpu_acct *g = &fake_st.gpu[gpu];
	for (uint32_t i = 0; i < n; i++) {
		switch (list[i].index) {
		case NV2080_CTRL_FB_INFO_INDEX_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_MAPPABLE_HEAP_SIZE:
		case NV2080_CTRL_FB_INFO_INDEX_USABLE_RAM_SIZE:
			list[i].data = kib(g->total);
			break;
		case NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE:
			list[i].data = kib(g->total - g->used);
			break;
		default:
			break;
		}
	}
}

static struct obj *find_any_obj(nv_handle_t h_client, nv_handle_t h)
{
	struct client *c = fake_find_client(h_client);
	return c ? fake_find_obj(c, h) : NULL;
}

/* Does client c hold an object GET_PIDS looks for on GPU gpu? The driver
 * (subdeviceCtrlCmdGpuGetPids_IMPL, subdevice_ctrl_gpu_kernel.c,
 * 580.95.05) asks gpuGetProcWithObject for a Subdevice when id is
 * NV20_SUBDEVICE_0, else for any ChannelDescendant; the fake has no
 * channel descendants of its own, so it takes channels for them. */
static bool client_has_kind(const struct client *c, int gpu, enum obj_kind kind)
{
	for (size_t j = 0; j < c->n; j++)
		if (c->objs[j].res->kind == kind && c->objs[j].res->gpu == gpu)
			return true;
	return false;
}

/* GET_PIDS: each process (the client's creator) once, in client order. */
static nv_status_t fill_pids(int gpu, struct nv2080_gpu_get_pids *p)
{
	enum obj_kind kind = p->id == NV20_SUBDEVICE_0 ? K_SUBDEVICE : K_CHANNEL;

	if (p->id_type != NV2080_CTRL_GPU_GET_PIDS_ID_TYPE_CLASS)
		return NV_ERR_INVALID_ARGUMENT;
	p->count = 0;
	for (size_t i = 0; i < fake_st.nclients && p->count < NV2080_CTRL_GPU_GET_PIDS_MAX_COUNT; i++) {
		const struct client *c = fake_st.clients[i];
		bool seen = false;
		for (uint32_t k = 0; k < p->count && !seen; k++)
			seen = p->pids[k] == (uint32_t)c->tgid;
		if (!seen && client_has_kind(c, gpu, kind))
			p->pids[p->count++] = (uint32_t)c->tgid;
	}
	return NV_OK;
}

static void fill_pid_info(int gpu, struct nv2080_gpu_pid_info *e)
{
	uint64_t priv = 0, owned = 0, duped = 0;
	if (e->index != NV2080_CTRL_GPU_PID_INFO_INDEX_VIDEO_MEMORY_USAGE) {
		e->result = NV_ERR_INVALID_ARGUMENT;
		return;
	}
	for (size_t i = 0; i < fake_st.nclients; i++) {
		struct client *c = fake_st.clients[i];
		if (c->tgid != (pid_t)e->pid)
			continue;
		for (size_t j = 0; j < c->n; j++) {
			struct obj *o = &c->objs[j];
			if (o->res->kind != K_VIDMEM || o->res->gpu != gpu)
				continue;
			if (o->dup)
				duped += o->res->bytes;
			else if (o->res->refs > 1)
				owned += o->res->bytes;
			else
				priv += o->res->bytes;
		}
	}
	e->result = NV_OK;
	e->mem_private = priv;
	e->mem_shared_owned = owned;
	e->mem_shared_duped = duped;
}

/* Known controls. Returns the status; sets *dirty when params changed. */

/* GET_SURFACE_INFO on memory: the sizes of the list in the caller's
 * memory (mem_ctrl.c, 580.95.05: PHYS_SIZE_LO/HI from the memory
 * descriptor's size; other indices are not modelled and answer 0). */
#define FAKE_SURFACE_INFO_MAX 16u
static nv_status_t surface_info(const struct fake_caller *who, const struct res *r,
                                const struct nv0041_get_surface_info_params *p)
{
	struct nv0041_surface_info list[FAKE_SURFACE_INFO_MAX];
	size_t len = (size_t)p->count * sizeof(list[0]);

	if (r->kind != K_VIDMEM && r->kind != K_SYSMEM)
		return NV_ERR_NOT_SUPPORTED;
	if (p->count == 0 || p->count > FAKE_SURFACE_INFO_MAX || fake_mem_read(who->pid, p->list, list, len))
		return NV_ERR_INVALID_ARGUMENT;
	for (uint32_t i = 0; i < p->count; i++)
		list[i].data = list[i].index == NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_LO ? (uint32_t)r->bytes
		             : list[i].index == NV0041_CTRL_SURFACE_INFO_INDEX_PHYS_SIZE_HI ? (uint32_t)(r->bytes >> 32)
		                                                                             : 0;
	return fake_mem_write(who->pid, p->list, list, len) ? NV_ERR_INVALID_ADDRESS : NV_OK;
}

static nv_status_t run_control(const struct fake_caller *who, const struct nvos54 *ctl,
			       struct obj *o, void *params, bool *dirty)
{
	enum obj_kind kind = o ? o->res->kind : K_OTHER;
	int gpu = o ? o->res->gpu : -1;

	switch (ctl->cmd) {
	case NV2080_CTRL_CMD_FB_GET_INFO_V2: {
		/* The list holds as many entries as the played branch's struct
		 * (54 on 535, 128 on 580). */
		struct nv2080_fb_get_info_v2_params *p = params;
		uint32_t size = fake_ctrl_size(ctl->cmd);
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != size || size < offsetof(struct nv2080_fb_get_info_v2_params, list) ||
		    p->list_size > (size - offsetof(struct nv2080_fb_get_info_v2_params, list)) /
		                   sizeof(p->list[0]))
			return NV_ERR_INVALID_ARGUMENT;
		fill_fb_info(gpu, p->list, p->list_size);
		*dirty = true;
		return NV_OK;
	}
	case NV2080_CTRL_CMD_FB_GET_INFO: {
		struct nv2080_fb_get_info_v1_params *p = params;
		struct nv2080_fb_info_entry list[NV2080_CTRL_FB_INFO_MAX_LIST_SIZE];
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != sizeof(*p) || p->list_size > NV2080_CTRL_FB_INFO_MAX_LIST_SIZE)
			return NV_ERR_INVALID_ARGUMENT;
		size_t len = p->list_size * sizeof(list[0]);
		if (fake_mem_read(who->pid, p->list, list, len))
			return NV_ERR_INVALID_ADDRESS;
		fill_fb_info(gpu, list, p->list_size);
		if (fake_mem_write(who->pid, p->list, list, len))
			return NV_ERR_INVALID_ADDRESS;
		return NV_OK;
	}
	case NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS: {
		struct nv2080_fifo_disable_channels *p = params;
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != sizeof(*p) ||
		    p->num_channels > NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES)
			return NV_ERR_INVALID_ARGUMENT;
		/* Only kernel callers may ask for a preempt event. */
		if (p->p_runlist_preempt_event)
			return NV_ERR_INSUFFICIENT_PERMISSIONS;
		for (uint32_t i = 0; i < p->num_channels; i++) {
			struct obj *ch = find_any_obj(p->h_client_list[i], p->h_channel_list[i]);
			if (!ch || ch->res->kind != K_CHANNEL)
				return NV_ERR_INVALID_OBJECT_HANDLE;
		}
		if (p->b_disable && fake_st.cfg.fail_disable_after &&
		    fake_st.gpu[gpu].disable_calls >= fake_st.cfg.fail_disable_after)
			return NV_ERR_INVALID_STATE;
		for (uint32_t i = 0; i < p->num_channels; i++)
			find_any_obj(p->h_client_list[i], p->h_channel_list[i])->res->disabled =
				p->b_disable != 0;
		if (p->b_disable)
			fake_st.gpu[gpu].disable_calls++;
		else
			fake_st.gpu[gpu].enable_calls++;
		return NV_OK;
	}
	case NV2080_CTRL_CMD_TIMER_GET_TIME: {
		/* The GPU's PTIMER (fake_ptimer_ns), the clock the samples'
		 * timestamps are on. */
		struct nv2080_timer_get_time_params *p = params;
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != sizeof(*p))
			return NV_ERR_INVALID_PARAM_STRUCT;
		p->time_nsec = fake_ptimer_ns(fake_now_ns());
		*dirty = true;
		return NV_OK;
	}
	case NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2: {
		/* The played branch's size: 34000 on 535, 50704 on 550. */
		uint32_t buf_size;
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != gs_rm_abi_fact(fake_st.abi, GS_FACT_UTIL_SAMPLES_SIZE))
			return NV_ERR_INVALID_PARAM_STRUCT;
		memcpy(&buf_size, (uint8_t *)params + offsetof(struct nv2080_perfmon_util_samples_v2, buf_size),
		       sizeof(buf_size));
		if (buf_size != gs_rm_abi_fact(fake_st.abi, GS_FACT_UTIL_BUFFER_SIZE))
			return NV_ERR_INVALID_ARGUMENT;
		fake_busy_samples((unsigned)gpu, params);
		*dirty = true;
		return NV_OK;
	}
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE: {
		struct nva06c_gpfifo_schedule_params *p = params;
		if (kind != K_CHANNEL_GROUP)
			return NV_ERR_NOT_SUPPORTED;
		/* 2 bytes on 535..570, 3 on 580+; enable is first. */
		if (ctl->params_size != fake_ctrl_size(ctl->cmd))
			return NV_ERR_INVALID_ARGUMENT;
		o->res->scheduled = p->enable != 0;
		/* Scheduling a group turns its channels on, disabled or not:
		 * the reason gpusandbox re-asserts an off phase after it. */
		if (p->enable)
			fake_chgrp_enable_channels(fake_find_client(ctl->h_client), ctl->h_object,
			                           o->res);
		return NV_OK;
	}
	case NVA06F_CTRL_CMD_GPFIFO_SCHEDULE: {
		/* A channel's own scheduling; the stats count the ones that
		 * are in no group (the runlist schedules them alone). */
		struct nva06c_gpfifo_schedule_params *p = params;
		if (kind != K_CHANNEL)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != fake_ctrl_size(ctl->cmd))
			return NV_ERR_INVALID_ARGUMENT;
		o->res->scheduled = p->enable != 0;
		/* A lone channel's runlist entry is its RM-made group. */
		if (o->res->internal_group)
			o->res->internal_group->scheduled = p->enable != 0;
		return NV_OK;
	}
	case NV0041_CTRL_CMD_GET_SURFACE_INFO:
		if (!o || ctl->params_size != sizeof(struct nv0041_get_surface_info_params))
			return NV_ERR_INVALID_ARGUMENT;
		return surface_info(who, o->res, params);
	case NV2080_CTRL_CMD_GPU_GET_ENGINES_V2:
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		*dirty = true;
		return fake_engines_control(gpu, ctl, params);
	case NV2080_CTRL_CMD_GPU_GET_PIDS:
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != sizeof(struct nv2080_gpu_get_pids))
			return NV_ERR_INVALID_ARGUMENT;
		*dirty = true;
		return fill_pids(gpu, params);
	case NV2080_CTRL_CMD_GPU_GET_PID_INFO: {
		struct nv2080_gpu_get_pid_info *p = params;
		if (kind != K_SUBDEVICE)
			return NV_ERR_NOT_SUPPORTED;
		if (ctl->params_size != sizeof(*p) || p->count == 0 ||
		    p->count > NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT)
			return NV_ERR_INVALID_ARGUMENT;
		for (uint32_t i = 0; i < p->count; i++)
			fill_pid_info(gpu, &p->list[i]);
		*dirty = true;
		return NV_OK;
	}
	case NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS:
	case NV0000_CTRL_CMD_GPU_GET_PROBED_IDS: {
		uint32_t *ids = params;
		/* PROBED_IDS is 256 bytes (no gpuFlags) on 535..575. */
		size_t want = fake_ctrl_size(ctl->cmd);
		if (!want || ctl->params_size != want)
			return NV_ERR_INVALID_ARGUMENT;
		memset(params, 0, want);
		for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
			ids[i] = i < fake_st.cfg.gpus ? FAKE_GPU_ID(i) : NV0000_CTRL_GPU_INVALID_ID;
		if (ctl->cmd == NV0000_CTRL_CMD_GPU_GET_PROBED_IDS)
			for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++)
				((struct nv0000_probed_ids_params *)params)->excluded_gpu_ids[i] =
					NV0000_CTRL_GPU_INVALID_ID;
		*dirty = true;
		return NV_OK;
	}
	case NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID: {
		struct nv0000_uuid_from_gpu_id_params *p = params;
		if (ctl->params_size != sizeof(*p))
			return NV_ERR_INVALID_ARGUMENT;
		for (unsigned g = 0; g < fake_st.cfg.gpus; g++)
			if (p->gpu_id == FAKE_GPU_ID(g)) {
				int n = snprintf((char *)p->gpu_uuid, sizeof(p->gpu_uuid), FAKE_GPU_UUID_FMT, g);
				p->uuid_str_len = (uint32_t)n + 1;
				*dirty = true;
				return NV_OK;
			}
		return NV_ERR_OBJECT_NOT_FOUND;
	}
	/* As cliresCtrlCmdGpuAcctGetAccountingState_IMPL (client_resource.c,
	 * 580.142): an unknown gpuId is INVALID_ARGUMENT, a known one reads
	 * its accounting mode (off here). */
	case NV0000_CTRL_CMD_GPUACCT_GET_ACCOUNTING_STATE: {
		struct nv0000_gpuacct_state_params *p = params;
		if (ctl->params_size != sizeof(*p))
			return NV_ERR_INVALID_ARGUMENT;
		for (unsigned g = 0; g < fake_st.cfg.gpus; g++)
			if (p->gpu_id == FAKE_GPU_ID(g)) {
				p->state = NV0000_CTRL_GPU_ACCOUNTING_STATE_DISABLED;
				*dirty = true;
				return NV_OK;
			}
		return NV_ERR_INVALID_ARGUMENT;
	}
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO:
	case NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2: {
		struct nv0000_id_info_v2_params *p = params;
		if (ctl->params_size < sizeof(*p))
			return NV_ERR_INVALID_ARGUMENT;
		for (unsigned g = 0; g < fake_st.cfg.gpus; g++)
			if (p->gpu_id == FAKE_GPU_ID(g)) {
				p->device_instance = fake_instance_of_gpu(g);
				p->subdevice_instance = 0;
				*dirty = true;
				return NV_OK;
			}
		return NV_ERR_INVALID_ARGUMENT;
	}
	case NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY:
		if (o || ctl->params_size != sizeof(struct rs_share_policy))
			return NV_ERR_INVALID_ARGUMENT;
		return fake_share_inherited(fake_find_client(ctl->h_client), params);
	default:
		/* Unknown controls succeed and leave params alone, so replays
		 * of real traces go through. */
		return NV_OK;
	}
}

static nv_status_t control(const struct fake_caller *who, struct nvos54 *ctl)
{
	/* Opaque formats the fake cannot (and the real CPU-RM would not)
	 * check: refused outright. */
	if ((ctl->cmd & NV_CTRL_GSS_LEGACY_MASK) || (ctl->flags & NVOS54_FLAGS_FINN_SERIALIZED))
		return NV_ERR_NOT_SUPPORTED;
	if (ctl->flags & (NVOS54_FLAGS_IRQL_RAISED | NVOS54_FLAGS_LOCK_BYPASS))
		return NV_ERR_INVALID_CLIENT;
	struct client *c;
	nv_status_t st = fake_get_client(who, ctl->h_client, &c);
	if (st != NV_OK)
		return st;
	struct obj *o = NULL;
	if (ctl->h_object != c->h && !(o = fake_find_obj(c, ctl->h_object)))
		return NV_ERR_INVALID_OBJECT_HANDLE;
	/* Not exported on the played branch (rs_resource.c). */
	if (fake_ctrl_absent(ctl->cmd))
		return NV_ERR_NOT_SUPPORTED;
	if (ctl->params_size > NV_RMAPI_MAX_PARAMS_SIZE)
		return NV_ERR_INVALID_ARGUMENT;
	if (ctl->params_size && !ctl->params)
		return NV_ERR_INVALID_ARGUMENT;

	void *params = NULL;
	if (ctl->params_size) {
		params = malloc(ctl->params_size);
		if (!params)
			return NV_ERR_NO_MEMORY;
		if (fake_mem_read(who->pid, ctl->params, params, ctl->params_size)) {
			free(params);
			return NV_ERR_INVALID_ADDRESS;
		}
	}
	bool dirty = false;
	if (fake_export_models(ctl->cmd) && o == NULL) {
		st = fake_export_control(who, c, ctl->cmd, params, ctl->params_size, &dirty);
		if (st == NV_OK && fake_mem_write(who->pid, ctl->params, params, ctl->params_size))
			st = NV_ERR_INVALID_ADDRESS;
		free(params);
		return st;
	}
	if (fake_smi_models(ctl->cmd)) {
		st = fake_smi_control(o, ctl->cmd, params, ctl->params_size, &dirty);
		if (st == NV_OK && dirty && fake_mem_write(who->pid, ctl->params, params, ctl->params_size))
			st = NV_ERR_INVALID_ADDRESS;
		free(params);
		return st;
	}
	if (fake_p2p_is_registration(ctl->cmd)) {
		st = fake_p2p_control(c, o, ctl->cmd, params, ctl->params_size);
		free(params);
		return st;
	}
	switch (ctl->cmd) {
	case NV2080_CTRL_CMD_FB_GET_INFO_V2:
	case NV2080_CTRL_CMD_FB_GET_INFO:
	case NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS:
	case NVA06C_CTRL_CMD_GPFIFO_SCHEDULE:
	case NVA06F_CTRL_CMD_GPFIFO_SCHEDULE:
	case NV2080_CTRL_CMD_GPU_GET_PID_INFO:
	case NV2080_CTRL_CMD_GPU_GET_PIDS:
	case NV2080_CTRL_CMD_GPU_GET_ENGINES_V2:
	case NV0041_CTRL_CMD_GET_SURFACE_INFO:
	case NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2:
	case NV2080_CTRL_CMD_TIMER_GET_TIME:
		/* Known controls have fixed sizes; a NULL or short buffer
		 * is the caller's error, as the driver's size check says. */
		if (!params) {
			st = NV_ERR_INVALID_ARGUMENT;
			break;
		}
		/* fall through */
	default:
		st = run_control(who, ctl, o, params, &dirty);
		break;
	}
	if (st == NV_OK && dirty &&
	    fake_mem_write(who->pid, ctl->params, params, ctl->params_size))
		st = NV_ERR_INVALID_ADDRESS;
	free(params);
	return st;
}

int fake_esc_control(const struct fake_caller *who, void *buf, size_t size)
{
	if (size != NV_ESC_SIZE_NVOS54)
		return -EINVAL;
	struct nvos54 *ctl = buf;
	fake_st.controls++;
	ctl->status = control(who, ctl);
	return 0;
}

/* ---- stats -------------------------------------------------------------- */

struct sbuf {
	char  *p;
	size_t len, cap;
};

static void put(struct sbuf *b, const char *key, unsigned gpu, bool per_gpu, uint64_t v)
{
	if (b->len >= b->cap)
		return;
	int n = per_gpu ? snprintf(b->p + b->len, b->cap - b->len, "gpu%u.%s %" PRIu64 "\n", gpu, key, v)
			: snprintf(b->p + b->len, b->cap - b->len, "%s %" PRIu64 "\n", key, v);
	if (n > 0)
		b->len += (size_t)n < b->cap - b->len ? (size_t)n : b->cap - b->len;
}

size_t fake_rm_format_stats(char *out, size_t cap)
{
	struct sbuf b = { out, 0, cap };
	pthread_mutex_lock(&fake_st.lock);
	fake_busy_refresh();  /* the per-client shares up to now */
	fake_export_sweep();  /* exports of released files go with them */
	/* Each object once, whichever handle (the first, or a dup that
	 * outlived it) still holds it. */
	static unsigned pass;
	for (unsigned gi = 0; gi < fake_st.cfg.gpus; gi++) {
		const struct gpu_acct *g = &fake_st.gpu[gi];
		uint64_t disabled = 0, scheduled = 0;
		pass++;
		for (size_t i = 0; i < fake_st.nclients; i++) {
			struct client *c = fake_st.clients[i];
			for (size_t j = 0; j < c->n; j++) {
				struct res *r = c->objs[j].res;
				if (r->gpu != (int)gi || r->seen == pass)
					continue;
				r->seen = pass;
				disabled += r->kind == K_CHANNEL && r->disabled;
				/* A runlist unit: a group, or a channel in none. */
				/* RM's group of a lone channel is counted as
				 * its channel. */
				scheduled += r->scheduled && ((r->kind == K_CHANNEL_GROUP && !r->rm_internal) ||
				                              (r->kind == K_CHANNEL && r->own_group));
			}
		}
		put(&b, "vidmem_total", gi, true, g->total);
		put(&b, "vidmem_used", gi, true, g->used);
		put(&b, "vidmem_peak", gi, true, g->peak);
		put(&b, "channels_live", gi, true, g->ch_live);
		put(&b, "channels_peak", gi, true, g->ch_peak);
		put(&b, "channel_groups_live", gi, true, g->grp_live);
		put(&b, "channel_groups_peak", gi, true, g->grp_peak);
		put(&b, "channels_disabled", gi, true, disabled);
		put(&b, "channel_groups_scheduled", gi, true, scheduled);
		put(&b, "disable_calls", gi, true, g->disable_calls);
		put(&b, "enable_calls", gi, true, g->enable_calls);
		put(&b, "freed_while_disabled", gi, true, g->freed_while_disabled);
		put(&b, "uvm_registered", gi, true, fake_uvm_gpu_registered(gi));
		put(&b, "uvm_registered_peak", gi, true, fake_uvm_gpu_registered_peak(gi));
		put(&b, "busy_ms", gi, true, fake_busy_ms(gi));
		/* Time in which several clients could run at once: the
		 * contention the compute-share coordinator removes. */
		put(&b, "overlap_ms", gi, true, g->busy.overlap_ns / 1000000u);
		/* Each client's time-sliced part: gpuN.client.0xHANDLE.busy_ms. */
		for (size_t i = 0; i < fake_st.nclients; i++) {
			const struct client *c = fake_st.clients[i];
			char key[48];
			if (!c->busy[gi].busy_ns && !c->busy[gi].running)
				continue;
			snprintf(key, sizeof(key), "client.%#x.busy_ms", c->h);
			put(&b, key, gi, true, fake_client_busy_ms(c, gi));
		}
		static const char *const eng_live[FE_N] = { "nvdec_live", "nvenc_live", "nvjpg_live",
		                                            "ofa_live" };
		static const char *const eng_peak[FE_N] = { "nvdec_peak", "nvenc_peak", "nvjpg_peak",
		                                            "ofa_peak" };
		/* The instances GET_ENGINES_V2 lists (0 when it fails). */
		static const char *const eng_instances[FE_N] = { "nvdec_engines", "nvenc_engines",
		                                                 "nvjpg_engines", "ofa_engines" };
		for (unsigned e = 0; e < FE_N; e++) {
			put(&b, eng_live[e], gi, true, g->eng_live[e]);
			put(&b, eng_peak[e], gi, true, g->eng_peak[e]);
			put(&b, eng_instances[e], gi, true,
			    fake_st.cfg.no_engine_list ? 0 : fake_st.cfg.engines[e]);
		}
	}
	uint64_t objects = 0;
	for (size_t i = 0; i < fake_st.nclients; i++)
		objects += fake_st.clients[i]->n;
	put(&b, "now_ms", 0, false, fake_now_ns() / 1000000u);
	put(&b, "clients_live", 0, false, fake_st.nclients);
	put(&b, "clients_peak", 0, false, fake_st.clients_peak);
	put(&b, "objects_live", 0, false, objects);
	put(&b, "allocs_ok", 0, false, fake_st.allocs_ok);
	put(&b, "allocs_failed", 0, false, fake_st.allocs_failed);
	put(&b, "frees", 0, false, fake_st.frees);
	put(&b, "controls", 0, false, fake_st.controls);
	put(&b, "ioctls", 0, false, fake_st.ioctls);
	put(&b, "uvm_ioctls", 0, false, fake_st.uvm_ioctls);
	put(&b, "uvm_mappings", 0, false, fake_uvm_live());
	put(&b, "uvm_maps", 0, false, fake_st.uvm_maps);
	put(&b, "uvm_channels_registered", 0, false, fake_uvm_chan_live());
	put(&b, "uvm_channel_registrations", 0, false, fake_st.uvm_channel_registrations);
	put(&b, "uvm_channel_registrations_by_other", 0, false, fake_st.uvm_channel_registrations_by_other);
	put(&b, "semsurf_kept", 0, false, fake_st.semsurf_kept);
	put(&b, "served_while_late", 0, false, fake_st.served_while_late);
	put(&b, "late_pending", 0, false, fake_st.late_pending);
	put(&b, "files_open", 0, false, fake_st.files_open);
	put(&b, "file_releases", 0, false, fake_st.file_releases);
	put(&b, "fd_closes", 0, false, fake_st.fd_closes);
	put(&b, "device_node_grants", 0, false, fake_st.device_node_grants);
	put(&b, "device_node_refusals", 0, false, fake_st.device_node_refusals);
	put(&b, "device_unentitled_grants", 0, false, fake_st.device_unentitled_grants);
	put(&b, "dmabuf_held", 0, false, fake_st.dmabuf_held);
	put(&b, "export_files_live", 0, false, fake_export_live());
	put(&b, "export_files_released", 0, false, fake_st.export_files_released);
	put(&b, "exports_made", 0, false, fake_st.exports_made);
	put(&b, "imports_made", 0, false, fake_st.imports_made);
	put(&b, "dups_cross_gpu", 0, false, fake_st.dups_cross_gpu);
	put(&b, "share_client_policies", 0, false, fake_share_client_policies());
	put(&b, "share_object_policies", 0, false, fake_share_object_policies());
	put(&b, "share_client_object_policies", 0, false, fake_share_client_object_policies());
	put(&b, "share_token_policies", 0, false, fake_share_token_policies());
	put(&b, "token_shares", 0, false, fake_st.token_shares);
	put(&b, "dups_made", 0, false, fake_st.dups_made);
	put(&b, "grown_tail_reads", 0, false, fake_st.grown_tail_reads);
	put(&b, "grown_tail_nonzero", 0, false, fake_st.grown_tail_nonzero);
	put(&b, "p2p_registered", 0, false, fake_st.p2p_registered);
	put(&b, "p2p_register_failed", 0, false, fake_st.p2p_register_failed);
	put(&b, "p2p_unregistered", 0, false, fake_st.p2p_unregistered);
	put(&b, "p2p_unregister_failed", 0, false, fake_st.p2p_unregister_failed);
	put(&b, "p2p_registrations_live", 0, false, fake_p2p_live());
	put(&b, "p2p_objects_made", 0, false, fake_st.p2p_objects_made);
	put(&b, "compute_mode_sets", 0, false, fake_st.compute_mode_sets);
	put(&b, "diag_config_writes", 0, false, fake_st.diag_config_writes);
	pthread_mutex_unlock(&fake_st.lock);
	return b.len;
}
