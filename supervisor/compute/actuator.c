/* SPDX-License-Identifier: MIT */
/*
 * actuator.c - the per-session actuator of the compute share: turns the
 * workload's channels on GPU gpu off or on with the driver's own control,
 * NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, through a fresh dup of the
 * client's own file, and fails closed when the cap cannot be kept. The
 * safety rules are compute_share.c's (and docs/compute-share.md's).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compute_internal.h"
#include "gpusandbox.h"
#include "rm_own.h"
#include "session.h"
#include "sm_clock.h"
#include "workload.h"

/* A context's channel groups must have been scheduled this long before
 * their channels are toggled (compute_share.c). */
#define SETTLE_MS 500u
/* How long channels may be out of reach before the cap counts as lost.
 * A dying process's file is released a little after its fds are gone. */
#define UNREACHABLE_GRACE_MS 1000u
#define INITIAL_CHANNELS 64u
#define PROC_PATH_MAX 64

/* ---- failing closed -------------------------------------------------------- */

/* The cap can no longer be kept: turn the channels back on (a workload must
 * never be left disabled), then stop the workload. Lock held. */
void cs_fail(struct gs_compute_share *cs)
{
	struct gs_session *sb = cs->sb;
	char msg[GS_ERROR_MSG_MAX + 64];

	cs_enable_everything(cs);
	gs_error_text(&cs->err, msg, sizeof(msg));
	if (sb->audit && gs_audit_error(sb->audit, msg) < 0)
		sb->audit_failed = true;
	if (!atomic_exchange(&sb->failed, true))
		sb->thread_err = cs->err;
	gs_session_kill_workload(sb);
	atomic_store(&cs->stop, true);
}

/* ---- the toggle ------------------------------------------------------------ */

/* Our dup of fd wfd of task tid, if it is h_client's open file. A look
 * by kcmp first, so that no other file of the task's is dup'ed: the walk
 * below meets every fd of every task, and a dup of a FUSE file the
 * workload serves would be parked for the sandbox's life (workload.h). */
static int dup_if_client_file(struct gs_session *sb, uint32_t h_client, pid_t tid, int wfd)
{
	if (ledger_task_fd_is_client_file(&sb->ledger, h_client, tid, wfd) != 1)
		return -1;
	int fd = dup_workload_fd(&sb->pidfds, tid, wfd);

	/* The fd number may have been closed and reused for another file
	 * since the call that recorded it. */
	if (fd >= 0 && ledger_fd_is_client_file(&sb->ledger, h_client, fd) != 1) {
		close(fd); /* a dup of the workload's */
		fd = -1;
	}
	return fd;
}

/* The recorded route is gone (the task exited, or closed that fd), but the
 * file may live on in another task of the sandbox (a child that inherited
 * it). Looks through the sandbox's tasks for it and records the new route.
 * Rare, so a walk of /proc is affordable. */
static int find_client_file(struct gs_session *sb, uint32_t h_client)
{
	pid_t self = getpid();
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int found = -1;

	while (proc && found < 0 && (de = readdir(proc))) {
		pid_t pid = (pid_t)atoi(de->d_name);
		char dir[PROC_PATH_MAX];
		if (pid <= 0 || pid == self || !gs_taskset_contains(&sb->tasks, pid))
			continue;
		snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
		DIR *fds = opendir(dir);
		struct dirent *fe;
		while (fds && found < 0 && (fe = readdir(fds))) {
			int wfd = atoi(fe->d_name);
			if (fe->d_name[0] < '0' || fe->d_name[0] > '9')
				continue;
			found = dup_if_client_file(sb, h_client, pid, wfd);
			if (found >= 0)
				ledger_set_route(&sb->ledger, h_client, pid, wfd);
		}
		if (fds)
			closedir(fds);
	}
	if (proc)
		closedir(proc);
	return found;
}

/* Our dup of the open file h_client lives on, checked to be that file; -1
 * if no task of the sandbox holds it now. */
static int pin_client_file(struct gs_session *sb, uint32_t h_client)
{
	struct ledger_route r;
	int fd = -1;

	if (ledger_client_route(&sb->ledger, h_client, &r) == 0 && r.wfd >= 0)
		fd = dup_if_client_file(sb, h_client, r.tid, r.wfd);
	if (fd < 0 && ledger_client_file_alive(&sb->ledger, h_client))
		fd = find_client_file(sb, h_client);
	return fd;
}

enum toggle_result { TOGGLE_OK, TOGGLE_GONE, TOGGLE_UNREACHABLE, TOGGLE_FAILED };

/* Research mechanisms (GPUSANDBOX_SM_MECHANISM): the control each one
 * sends, per channel group or per channel, for the off and on phases. */

static nv_status_t research_toggle(const struct gs_compute_share *cs, int fd, uint32_t h_client,
                                   const struct ledger_channel *ch, bool disable)
{
	struct nva06c_gpfifo_schedule_params sched = { .enable = !disable };
	struct nva06c_preempt_params pre = { .b_wait = 1 };

	switch (cs->mechanism) {
	case GS_SM_GROUP_SCHEDULE:
		return rm_own_control(fd, h_client, ch->parent, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, &sched,
		                      sizeof(sched));
	case GS_SM_GROUP_PREEMPT:
		return disable ? rm_own_control(fd, h_client, ch->parent, NVA06C_CTRL_CMD_PREEMPT, &pre,
		                                sizeof(pre))
		               : NV_OK;
	case GS_SM_CHANNEL_SCHEDULE:
		return rm_own_control(fd, h_client, ch->handle, NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, &sched,
		                      sizeof(sched));
	case GS_SM_DISABLE_CHANNELS:
		break;
	}
	return NV_ERR_NOT_SUPPORTED;
}

/* Issues FIFO_DISABLE_CHANNELS for n channels of one client, in batches
 * of the most the control takes. */
static enum toggle_result toggle_client(struct gs_compute_share *cs, int gpu, uint32_t h_client,
                                        const struct ledger_channel *chs, uint32_t n, bool disable,
                                        struct gs_off_cache *record)
{
	struct gs_session *sb = cs->sb;
	uint32_t subdev = ledger_subdevice_of(&sb->ledger, h_client, gpu);
	int fd;

	if (!subdev) {
		gs_fail(&cs->err, 0,
		        "--sm: client 0x%x has channels on GPU %d but no subdevice to stop them with",
		        h_client, gpu);
		return TOGGLE_FAILED;
	}
	fd = pin_client_file(sb, h_client);
	if (fd < 0)
		return ledger_client_file_alive(&sb->ledger, h_client) ? TOGGLE_UNREACHABLE
		                                                        : TOGGLE_GONE;
	if (cs->mechanism != GS_SM_DISABLE_CHANNELS) {
		for (uint32_t i = 0; i < n; i++) {
			nv_status_t st = research_toggle(cs, fd, h_client, &chs[i], disable);
			if (st != NV_OK) {
				close(fd);
				gs_fail(&cs->err, 0, "--sm research mechanism %d failed: status 0x%x",
				        (int)cs->mechanism, st);
				return TOGGLE_FAILED;
			}
			ledger_set_sm_disabled(&sb->ledger, h_client, chs[i].handle, disable);
		}
		cs->gpu[gpu].toggles++;
		close(fd);
		return TOGGLE_OK;
	}
	for (uint32_t done = 0; done < n;) {
		struct nv2080_fifo_disable_channels p = { .b_disable = disable };
		uint32_t k = n - done;
		if (k > NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES)
			k = NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES;
		p.num_channels = k;
		for (uint32_t i = 0; i < k; i++) {
			p.h_client_list[i] = h_client;
			p.h_channel_list[i] = chs[done + i].handle;
		}
		nv_status_t st = rm_own_control(fd, h_client, subdev,
		                                NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, &p, sizeof(p));
		if (st != NV_OK) {
			close(fd);
			gs_fail(&cs->err, 0, "--sm: FIFO_DISABLE_CHANNELS(%s) on GPU %d failed: status 0x%x",
			        disable ? "off" : "on", gpu, st);
			return TOGGLE_FAILED;
		}
		for (uint32_t i = 0; i < k; i++)
			ledger_set_sm_disabled(&sb->ledger, h_client, chs[done + i].handle, disable);
		/* The off cache keeps its dup past this call, a GPU node
		 * too (a client may live on one): in our shared table it
		 * vouches for no device allocation we perform, each being
		 * made in a private table (private_table.h). */
		if (record)
			(void)gs_off_cache_add(record, fd, h_client, subdev, chs + done, k);
		cs->gpu[gpu].toggles++;
		done += k;
	}
	close(fd);
	return TOGGLE_OK;
}

static bool grow_channel_buffer(struct gs_compute_share *cs, uint32_t need)
{
	if (need <= cs->cap_chans)
		return true;
	uint32_t cap = cs->cap_chans ? cs->cap_chans : INITIAL_CHANNELS;
	while (cap < need)
		cap *= 2;
	struct ledger_channel *n = realloc(cs->chans, sizeof(*n) * cap);
	if (!n)
		return false;
	cs->chans = n;
	cs->cap_chans = cap;
	return true;
}

/* Turns the channels of one GPU off (the settled ones) or on (the ones we
 * turned off). Lock held. An off pass of the duty cycle's own records what
 * it turned off in record (off_cache.h: only that thread touches the
 * cache). Returns false if the cap cannot be kept. */
bool cs_set_gpu_channels(struct gs_compute_share *cs, int gpu, bool disable,
                             struct gs_off_cache *record)
{
	struct gs_session *sb = cs->sb;
	uint32_t n;
	struct ledger_channel batch[NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES];
	bool unreachable = false;

	/* The duty cycle's off pass records afresh what it turns off; the
	 * dups of the last one go first, so a file the workload closed is
	 * released now and reaped below. */
	if (record)
		gs_off_cache_clear(record);
	/* Never name a client whose file is gone: its handle may be reused. */
	gs_session_reconcile(sb);
	/* The sandbox's live channel count bounds any one GPU's: no scan. */
	if (!grow_channel_buffer(cs, sb->ledger.channels)) {
		gs_fail(&cs->err, ENOMEM, "--sm: listing channels");
		return false;
	}
	uint64_t now = gs_sm_now();
	n = ledger_list_channels(&sb->ledger, gpu, now, SETTLE_MS * NS_PER_MS, cs->chans, cs->cap_chans);
	/* Keep the channels this toggle is about, then take them client by
	 * client (a control names channels of clients on its own file). Off
	 * means every settled channel, even one we believe off already: a
	 * workload call may have put it back (reassert_off_phase); and the
	 * unsettled ones too once the GPU's settling grace is spent
	 * (sm_controller.h: a budget, or a group made every 0.4 s would
	 * never be switched). */
	struct sm_grace *grace = &cs->gpu[gpu].grace;
	bool spare = disable && (cs->test_settle_unbounded || sm_grace_may_spare(grace, now));
	bool spared = false;
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++) {
		bool want = disable ? cs->chans[i].settled || !spare : cs->chans[i].sm_disabled;
		spared |= disable && !want;
		if (want)
			cs->chans[m++] = cs->chans[i];
	}
	sm_grace_note(grace, spared, now);
	for (uint32_t i = 0; i < m; i++) {
		uint32_t client = cs->chans[i].client, k = 0;
		if (!client)
			continue;
		for (uint32_t j = i; j < m; j++) {
			if (cs->chans[j].client != client)
				continue;
			batch[k++] = cs->chans[j];
			cs->chans[j].client = 0;
			if (k == NV2080_CTRL_FIFO_DISABLE_CHANNELS_MAX_ENTRIES) {
				enum toggle_result r = toggle_client(cs, gpu, client, batch, k, disable, record);
				if (r == TOGGLE_FAILED)
					return false;
				unreachable |= r == TOGGLE_UNREACHABLE;
				k = 0;
			}
		}
		if (k) {
			enum toggle_result r = toggle_client(cs, gpu, client, batch, k, disable, record);
			if (r == TOGGLE_FAILED)
				return false;
			unreachable |= r == TOGGLE_UNREACHABLE;
		}
	}
	if (!unreachable) {
		cs->unreachable_since_ns = 0;
		return true;
	}
	/* A file no workload task holds by the fd we know: it may be on its
	 * way out (process exit), or hidden (passed away, or kept only by a
	 * mapping). Past the grace period the cap is lost. */
	uint64_t t = gs_sm_now();
	if (!cs->unreachable_since_ns)
		cs->unreachable_since_ns = t;
	if (t - cs->unreachable_since_ns < UNREACHABLE_GRACE_MS * NS_PER_MS)
		return true;
	gs_fail(&cs->err, 0, "--sm: channels on GPU %d are held by a file gpusandbox cannot reach; "
	        "the compute cap cannot be kept", gpu);
	return false;
}

/* Best effort, lock held: used on the way out, never fails closed again. */
void cs_enable_everything(struct gs_compute_share *cs)
{
	struct gs_error keep = cs->err;

	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen) {
			(void)cs_set_gpu_channels(cs, (int)g, false, NULL);
			cs->gpu[g].off = false;
		}
	cs->err = keep;
}

/* GPU gpu's channels off again if the duty cycle has them off now. */
static void reassert_gpu(struct gs_compute_share *cs, unsigned gpu)
{
	if (!cs->gpu[gpu].off)
		return;
	if (!cs_set_gpu_channels(cs, (int)gpu, true, NULL))
		cs_fail(cs);
}

/* The sandbox's event (gs_session_observer), with the sandbox lock held,
 * after a workload call that may have made channels on gpu runnable again:
 * if the duty cycle has them off now, they are turned off again.
 * A call on an object of no known GPU (gpu < 0) is followed on every GPU
 * in an off phase: the channel group RM makes for a lone channel has a
 * handle the driver never tells (exec_alloc.c channel_placed), so the
 * ledger cannot place it, yet GPFIFO_SCHEDULE on it turns that channel
 * back on. */
void cs_reassert_off_phase(void *ctx, int gpu)
{
	struct gs_compute_share *cs = ctx;

	if (!cs || atomic_load(&cs->stop) || gpu >= (int)GS_MAX_GPUS)
		return;
	if (gpu >= 0) {
		reassert_gpu(cs, (unsigned)gpu);
		return;
	}
	if (cs->test_reassert_known_gpu)
		return;
	for (unsigned g = 0; g < GS_MAX_GPUS && !atomic_load(&cs->stop); g++)
		if (cs->gpu[g].seen)
			reassert_gpu(cs, g);
}

/* The sandbox's event, lock held, around a workload call that may let
 * channels run and its reassert_off_phase: on the test's clock, which
 * every sandbox on the GPU shares, the call and the switch that follows
 * it happen at one instant, as they do on a GPU whose scheduler does not
 * slice that finely; without it another sandbox's duty thread moved the
 * clock past its wake-up while the new channel ran (tests/sm/multi.sh
 * fight-churn-chan). Nothing on CLOCK_MONOTONIC. */
void cs_resume_call(void *ctx, bool begin)
{
	struct gs_compute_share *cs = ctx;

	if (!cs)
		return;
	if (begin) {
		cs->clock_held = gs_sm_clock_hold(&cs->clock);
		return;
	}
	gs_sm_clock_release(&cs->clock, cs->clock_held);
	cs->clock_held = false;
}
