/* SPDX-License-Identifier: MIT */
/*
 * compute_share.c - --sm PCT: the workload's share of GPU time, capped from
 * outside the process.
 *
 * Kernel launches make no system calls (work goes through mapped
 * doorbells), so nothing can be throttled at launch time. Instead a thread
 * of the supervisor runs a duty cycle on the workload's hardware channels
 * with the driver's own control, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS:
 * every period the channels are on for duty * period and off (disabled
 * and preempted) for the rest. The workload cannot undo it: the control is
 * refused to the workload itself, and a workload call that may put a
 * channel back on the runlist is followed by our own disable while the
 * phase is off (reassert_off_phase, told by the sandbox's observer event).
 *
 * The duty is closed-loop. Once a second the thread reads the driver's
 * engine-utilization samples (PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, the
 * source of NVML's per-process utilization) through its own RM client,
 * keeps the samples of this sandbox, and feeds the measured share to
 * sm_controller.c, which moves the duty until the share meets the target.
 *
 * Safety rules, each from a measured failure or from the threat model:
 * - A channel is toggled only after its group was scheduled and had
 *   SETTLE_MS to finish setting up: toggling during CUDA's context set-up
 *   hung it (design.md 1.6).
 * - bOnlyDisableScheduling stays 0: with 1 the work never resumed.
 * - Every toggle runs under the sandbox lock, so the notify thread cannot
 *   free a channel while we name it, and after reaping clients whose file
 *   was closed, so we never name a dead client whose handle the driver may
 *   have given to someone else.
 * - The call is made through our own dup of the client's open file, taken
 *   afresh each time and checked (kcmp) to be that file. While we hold it
 *   the file, and so the client, cannot be released under us.
 * - Everything we disabled is enabled again when the thread stops, and
 *   before the workload is killed on a controller error. If channels
 *   cannot be reached (their file is held where we cannot see it) the cap
 *   cannot be kept, and the workload is killed: fail closed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "compute_share.h"
#include "gpusandbox.h"
#include "rm_own.h"
#include "session.h"
#include "workload.h"

#define NS_PER_MS 1000000ull
/* Each period's length is drawn from period * (1 +- PERIOD_JITTER). The
 * driver takes a utilization sample every ~200 ms, a multiple of the
 * usual periods: with a fixed period every sample would land at the same
 * phase of the cycle and see the same tenant on the engine (measured on
 * the H200 with two sandboxes sharing it). */
#define PERIOD_JITTER 0.25
/* Samples naming another process mean the GPU is shared. Each sample
 * credits the whole interval to one process, so a shared GPU needs many
 * samples per measurement: CONTENDED_WINDOW_SAMPLES, for CONTENDED_HOLD_MS
 * after the last foreign sample. */
#define CONTENDED_WINDOW_SAMPLES 25u
#define CONTENDED_HOLD_MS 30000u
/* A context's channel groups must have been scheduled this long before
 * their channels are toggled (see above). */
#define SETTLE_MS 500u
/* How often the duty is re-tuned, and the fewest samples that make a
 * measurement. */
#define WINDOW_MS 1000u
#define MIN_WINDOW_SAMPLES 3u
/* Adjustments are audited at most this often per GPU, unless the duty
 * moved by more than AUDIT_DUTY_STEP. */
#define AUDIT_MIN_INTERVAL_MS 5000u
#define AUDIT_DUTY_STEP 0.05
/* Windows left out of the achieved-share figure while the loop settles. */
#define WARMUP_WINDOWS 3u
/* How long channels may be out of reach before the cap counts as lost.
 * A dying process's file is released a little after its fds are gone. */
#define UNREACHABLE_GRACE_MS 1000u
/* Idle detection (report_busy): at least this many samples, and enough
 * that a busy tenant is called idle less than IDLE_FALSE_RATE of the time. */
#define IDLE_SAMPLES_MIN 5u
#define IDLE_SAMPLES_MAX 100u
#define IDLE_FALSE_RATE 0.01
/* While a coordinator's plan is followed, the samples are read this often
 * between windows, so that a tenant that wakes is reported busy at the
 * first sample that names it (one every ~200 ms on a GPU, FAKE_SAMPLE_MS
 * on the fake), not at the next window's edge: a wrongly lent window comes
 * back within a sample and the plan's lead. Idle is still reported only at
 * the edges: reported at every sample, it was called wrongly often enough
 * to break guarantee 30/70 on the fake (the samples are not independent of
 * the shared period's phase; docs/compute-share.md). */
#define IDLE_POLL_MS 50u
/* How long the duty cycle waits for the sandbox lock before it turns
 * channels off without it, and how often it tries again. */
#define LOCK_WAIT_MS 1u
#define LOCK_RETRY_MS 1u
#define CTL_PATH "/dev/nvidiactl"
#define GPU_NODE_FMT "/dev/nvidia%u"
#define NODE_PATH_MAX 32
#define INITIAL_CHANNELS 64u
#define PROC_PATH_MAX 64
#define OWN_HANDLE_BASE 0xc5d00000u   /* device/subdevice handles in our client */
#define PERCENT 100.0

static void sleep_until(uint64_t t)
{
	struct timespec ts = { (time_t)(t / GS_NS_PER_S), (long)(t % GS_NS_PER_S) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* ---- failing closed -------------------------------------------------------- */

static void enable_everything(struct gs_compute_share *cs);

/* The cap can no longer be kept: turn the channels back on (a workload must
 * never be left disabled), then stop the workload. Lock held. */
static void sm_fail(struct gs_compute_share *cs)
{
	struct gs_session *sb = cs->sb;
	char msg[GS_ERROR_MSG_MAX + 64];

	enable_everything(cs);
	gs_error_text(&cs->err, msg, sizeof(msg));
	if (sb->audit && gs_audit_error(sb->audit, msg) < 0)
		sb->audit_failed = true;
	if (!atomic_exchange(&sb->failed, true))
		sb->thread_err = cs->err;
	gs_session_kill_workload(sb);
	atomic_store(&cs->stop, true);
}

/* ---- the toggle ------------------------------------------------------------ */

/* Our dup of fd wfd of task tid, if it is h_client's open file. */
static int dup_if_client_file(struct gs_session *sb, uint32_t h_client, pid_t tid, int wfd)
{
	int fd = dup_workload_fd(&sb->pidfds, tid, wfd);

	/* The fd number may have been closed and reused for another file
	 * since the call that recorded it. */
	if (fd >= 0 && ledger_fd_is_client_file(&sb->ledger, h_client, fd) != 1) {
		close(fd);
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
static bool set_gpu_channels(struct gs_compute_share *cs, int gpu, bool disable,
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
	n = ledger_list_channels(&sb->ledger, gpu, gs_monotonic_ns(), SETTLE_MS * NS_PER_MS, cs->chans,
	                         cs->cap_chans);
	/* Keep the channels this toggle is about, then take them client by
	 * client (a control names channels of clients on its own file). Off
	 * means every settled channel, even one we believe off already: a
	 * workload call may have put it back (reassert_off_phase). */
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (disable ? cs->chans[i].settled : cs->chans[i].sm_disabled)
			cs->chans[m++] = cs->chans[i];
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
	uint64_t t = gs_monotonic_ns();
	if (!cs->unreachable_since_ns)
		cs->unreachable_since_ns = t;
	if (t - cs->unreachable_since_ns < UNREACHABLE_GRACE_MS * NS_PER_MS)
		return true;
	gs_fail(&cs->err, 0, "--sm: channels on GPU %d are held by a file gpusandbox cannot reach; "
	        "the compute cap cannot be kept", gpu);
	return false;
}

/* Best effort, lock held: used on the way out, never fails closed again. */
static void enable_everything(struct gs_compute_share *cs)
{
	struct gs_error keep = cs->err;

	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen) {
			(void)set_gpu_channels(cs, (int)g, false, NULL);
			cs->gpu[g].off = false;
		}
	cs->err = keep;
}

/* The sandbox's event (gs_session_observer), with the sandbox lock held,
 * after a workload call that may have made channels on gpu runnable again:
 * if the duty cycle has them off now, they are turned off again. */
static void reassert_off_phase(void *ctx, int gpu)
{
	struct gs_compute_share *cs = ctx;

	if (!cs || gpu < 0 || (unsigned)gpu >= GS_MAX_GPUS || !cs->gpu[gpu].off ||
	    atomic_load(&cs->stop))
		return;
	if (!set_gpu_channels(cs, gpu, true, NULL))
		sm_fail(cs);
}

/* ---- measuring ------------------------------------------------------------- */

/* Our own device and subdevice on GPU gpu (a minor, as the ledger keys
 * GPUs), for the samples. The device is made with the GPU's device
 * instance, which follows attach order, not the minor. The driver lets a
 * process make a device only while it has the GPU's node open, so the
 * nodes are opened around the allocation and closed again. */
static bool open_sampler(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	int nodes[GS_MAX_GPUS];
	unsigned n_nodes = 0;
	nv_status_t st;

	if (g->subdevice)
		return true;
	if (g->no_samples || cs->ctl_fd < 0)
		return false;
	for (unsigned m = 0; m < GS_MAX_GPUS; m++) {
		char path[NODE_PATH_MAX];
		snprintf(path, sizeof(path), GPU_NODE_FMT, m);
		int fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd >= 0)
			nodes[n_nodes++] = fd;
	}
	struct nv0080_alloc_params dp = { 0 };
	if (gs_gpu_instance_of_minor(cs->ctl_fd, cs->client, cs->sb->gpu_map, cs->sb->n_gpu_map,
	                             (unsigned)gpu, &dp.device_id) < 0) {
		for (unsigned i = 0; i < n_nodes; i++)
			close(nodes[i]);
		g->no_samples = true;
		return false;
	}
	struct nv2080_alloc_params sp = { .sub_device_id = 0 };
	/* Handles in our own client: the gpu index keeps them unique. */
	nv_handle_t dev = OWN_HANDLE_BASE + (uint32_t)gpu * 2u;
	nv_handle_t sub = dev + 1u;
	st = rm_own_alloc(cs->ctl_fd, cs->client, cs->client, &dev, NV01_DEVICE_0, &dp, sizeof(dp));
	if (st == NV_OK)
		st = rm_own_alloc(cs->ctl_fd, cs->client, dev, &sub, NV20_SUBDEVICE_0, &sp, sizeof(sp));
	for (unsigned i = 0; i < n_nodes; i++)
		close(nodes[i]);
	if (st != NV_OK) {
		g->no_samples = true;
		return false;
	}
	g->device = dev;
	g->subdevice = sub;
	return true;
}

/* A period length with jitter (xorshift: no need for a good generator, only
 * for phases that do not repeat). */
static uint64_t jittered_period(struct gs_compute_share *cs, uint64_t period)
{
	uint64_t x = cs->rng;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	cs->rng = x;
	double u = (double)(x >> 11) / (double)(1ull << 53);  /* [0, 1) */
	return (uint64_t)((double)period * (1.0 + PERIOD_JITTER * (2.0 * u - 1.0)));
}

/* Did a process of this sandbox make the work a sample names? A creator
 * of one of its clients, or any task of the sandbox now. The creators are
 * a ring the workload can flush by churning processes that each make a
 * client (issue #17 item 13: 1100 of them took a --sm 25 workload to
 * 0.34 on the fake, 0.58 on a GPU); the taskset cannot be flushed, and a
 * process on the engine is alive. */
static bool pid_is_sandbox(const struct gs_session *sb, pid_t pid)
{
	return pid > 0 && (gs_session_is_creator(sb, pid) || gs_taskset_contains(&sb->tasks, pid));
}

/* Is this sample's time ours? A sample names the process that was on the
 * engine when it was taken. A sample taken while the engine was idle
 * names no process; its busy time counts as ours, which can only
 * over-throttle this sandbox, never let it take more. */
static bool sample_is_ours(const struct gs_session *sb, uint32_t proc_id)
{
	return proc_id == NV2080_GPUMON_PID_INVALID || proc_id == 0 || pid_is_sandbox(sb, (pid_t)proc_id);
}

static uint32_t u32_at(const uint8_t *p, size_t off)
{
	uint32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

static uint64_t u64_at(const uint8_t *p, size_t off)
{
	uint64_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* The running driver's layout of UTIL_SAMPLES_V2 (nvrm/v<branch>/facts.def):
 * 535 and 550 have 4 and 6 engines of 116 bytes per sample, 570+ 6 of 128,
 * so a 580-shaped request is refused there and --sm would run open-loop.
 * A layout that does not fit our buffer or its own size is not used. */
static bool util_layout(const struct gs_rm_abi *abi, uint32_t f[GS_FACT_COUNT])
{
	for (int i = 0; i < GS_FACT_COUNT; i++)
		f[i] = gs_rm_abi_fact(abi, (enum gs_rm_fact)i);
	uint64_t samples_end = (uint64_t)f[GS_FACT_UTIL_SAMPLES_OFF] +
	                       (uint64_t)f[GS_FACT_UTIL_SAMPLE_COUNT] * f[GS_FACT_UTIL_SAMPLE_SIZE];
	uint64_t gr_end = (uint64_t)f[GS_FACT_UTIL_SAMPLE_GR_OFF] +
	                  f[GS_FACT_UTIL_ENGINE_PROC_ID_OFF] + sizeof(uint32_t);
	return f[GS_FACT_UTIL_SAMPLES_SIZE] <= sizeof(struct nv2080_perfmon_util_samples_v2) &&
	       samples_end <= f[GS_FACT_UTIL_SAMPLES_SIZE] &&
	       gr_end <= f[GS_FACT_UTIL_SAMPLE_SIZE] &&
	       f[GS_FACT_UTIL_SAMPLE_TS_OFF] + sizeof(uint64_t) <= f[GS_FACT_UTIL_SAMPLE_SIZE];
}

/* Adds the samples taken since the last read to the window. */
static void read_samples(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	uint8_t *p = (uint8_t *)cs->samples;
	uint64_t newest = g->last_sample_ts;
	uint32_t f[GS_FACT_COUNT];
	const uint8_t type = NV2080_CTRL_GPUMON_SAMPLE_TYPE_PERFMON_UTIL;

	if (!open_sampler(cs, gpu))
		return;
	if (!util_layout(cs->sb->rm_abi, f)) {
		g->no_samples = true;
		return;
	}
	memset(p, 0, f[GS_FACT_UTIL_SAMPLES_SIZE]);
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, type), &type, sizeof(type));
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, buf_size), &f[GS_FACT_UTIL_BUFFER_SIZE],
	       sizeof(uint32_t));
	if (rm_own_control(cs->ctl_fd, cs->client, g->subdevice,
	                   NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, p,
	                   f[GS_FACT_UTIL_SAMPLES_SIZE]) != NV_OK) {
		g->no_samples = true;
		return;
	}
	for (uint32_t i = 0; i < f[GS_FACT_UTIL_SAMPLE_COUNT]; i++) {
		const uint8_t *s = p + f[GS_FACT_UTIL_SAMPLES_OFF] + (size_t)i * f[GS_FACT_UTIL_SAMPLE_SIZE];
		uint64_t ts = u64_at(s, f[GS_FACT_UTIL_SAMPLE_TS_OFF]);
		uint32_t util = u32_at(s, f[GS_FACT_UTIL_SAMPLE_GR_OFF] + f[GS_FACT_UTIL_ENGINE_UTIL_OFF]);
		uint32_t pid = u32_at(s, f[GS_FACT_UTIL_SAMPLE_GR_OFF] + f[GS_FACT_UTIL_ENGINE_PROC_ID_OFF]);
		if (!ts || ts <= g->last_sample_ts)
			continue;
		if (ts > newest)
			newest = ts;
		g->win_n++;
		if (!sample_is_ours(cs->sb, pid) && util)
			g->contended_until = gs_monotonic_ns() + CONTENDED_HOLD_MS * NS_PER_MS;
		/* Busy: the engine was working with one of ours on it. A
		 * sample naming no process says nothing about who. */
		if (util && pid != NV2080_GPUMON_PID_INVALID && pid_is_sandbox(cs->sb, (pid_t)pid))
			g->quiet_samples = 0;
		else if (g->quiet_samples < UINT32_MAX)
			g->quiet_samples++;
		if (sample_is_ours(cs->sb, pid))
			g->win_util += (double)(util > NV2080_GPUMON_UTIL_FULL ? NV2080_GPUMON_UTIL_FULL : util) /
			               NV2080_GPUMON_UTIL_FULL;
		if (cs->debug)
			fprintf(stderr, "[gpusandbox sm] gpu%d sample ts=%llu gr.util=%u gr.pid=%u\n", gpu,
			        (unsigned long long)ts, util, pid);
	}
	/* The first read only marks where we start: older samples predate
	 * the window. */
	if (!g->last_sample_ts)
		g->win_util = 0, g->win_n = 0;
	g->last_sample_ts = newest ? newest : 1;
}

/* How many samples in a row must not name us before we call ourselves
 * idle: a busy tenant on the engine a fraction w of the time goes unnamed
 * in n samples with probability (1 - w)^n, kept under IDLE_FALSE_RATE. */
static uint32_t idle_after_samples(double w)
{
	double miss = 1.0;
	uint32_t n = 0;

	while (n < IDLE_SAMPLES_MAX && (n < IDLE_SAMPLES_MIN || miss >= IDLE_FALSE_RATE)) {
		miss *= 1.0 - w;
		n++;
	}
	return n;
}

/* Does the workload use the GPU? Busy unless the samples say otherwise
 * (without samples we cannot tell, and a busy claim only keeps our own
 * window, never takes another's). Lock held. */
static bool workload_busy(const struct gs_compute_share *cs, int gpu, bool has_channels)
{
	const struct gs_sm_gpu *g = &cs->gpu[gpu];
	double w = g->coordinated ? gs_coord_own_ppm(&g->coord) / (double)GS_PLAN_PPM : g->ctl.duty;

	return has_channels && (g->no_samples || g->quiet_samples < idle_after_samples(w));
}

/* At every window's edge, changed or not. Lock held. */
static void report_busy(struct gs_compute_share *cs, int gpu, bool has_channels)
{
	gs_coord_report(&cs->gpu[gpu].coord, workload_busy(cs, gpu, has_channels));
}

/* Between windows, while a plan is followed: the samples read so far are
 * added to the window (read_samples skips those already counted, so the
 * window's figures are the same as if read at its edge), and a tenant
 * reported idle is reported busy again at once when a sample names it.
 * Until the next plan it runs in its own window, which is never lent away
 * from it (plan.h: lent time is shared, not taken). Lock held. */
static void poll_busy(struct gs_compute_share *cs, int gpu, bool has_channels)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	if (!g->coordinated)
		return;
	read_samples(cs, gpu);
	if (!g->coord.busy && workload_busy(cs, gpu, has_channels))
		gs_coord_report(&g->coord, true);
}

/* Audits the plan we follow when its shape changes, and warns once when
 * the GPU is oversubscribed. Lock held. */
static void note_plan(struct gs_compute_share *cs, int gpu)
{
	struct gs_sm_gpu *g = &cs->gpu[gpu];
	const struct gs_coord_plan *p = &g->coord.cur;

	if (!g->coordinated || (p->tenants == g->audited_plan_tenants &&
	                        p->asked_percent == g->audited_plan_asked))
		return;
	if (p->asked_percent > PERCENT && g->audited_plan_asked <= PERCENT)
		fprintf(stderr, "gpusandbox: warning: GPU %d is oversubscribed: %u tenants ask for %u %% "
		        "of its time; every share is scaled by 100/%u\n", gpu, p->tenants,
		        p->asked_percent, p->asked_percent);
	g->audited_plan_tenants = p->tenants;
	g->audited_plan_asked = p->asked_percent;
	struct gs_sm_plan_info info = { .gpu = (unsigned)gpu, .tenants = p->tenants,
	                                .asked_percent = p->asked_percent,
	                                .oversubscribed = p->asked_percent > PERCENT,
	                                .own_share = p->slot.own.len / (double)GS_PLAN_PPM,
	                                .on_share = p->slot.on_ppm / (double)GS_PLAN_PPM };
	if (cs->sb->audit && gs_audit_sm_plan(cs->sb->audit, &info) < 0)
		cs->sb->audit_failed = true;
}

/* Closes a window: the measured share re-tunes the duty, unless a plan
 * set our windows (the duty is then kept for when we run alone again: a
 * share another tenant's window limited must not raise our own cap).
 * Lock held. */
static void close_window(struct gs_compute_share *cs, int gpu, uint64_t t, bool has_channels)
{
	struct gs_session *sb = cs->sb;
	struct gs_sm_gpu *g = &cs->gpu[gpu];

	read_samples(cs, gpu);
	report_busy(cs, gpu, has_channels);
	note_plan(cs, gpu);
	if (g->coordinated) {
		g->win_util = 0;
		g->win_n = 0;
		return;
	}
	unsigned need = t < g->contended_until ? CONTENDED_WINDOW_SAMPLES : MIN_WINDOW_SAMPLES;
	if (g->no_samples || g->win_n < need)
		return;
	double share = g->win_util / g->win_n;
	double before = g->ctl.duty;
	double after = sm_ctl_update(&g->ctl, share);
	unsigned n = g->win_n;

	g->win_util = 0;
	g->win_n = 0;
	g->windows++;
	if (g->windows > WARMUP_WINDOWS && share >= SM_IDLE_SHARE) {
		g->share_sum += share;
		g->share_n++;
		g->last_busy_share = share;
	}
	if (cs->debug)
		fprintf(stderr, "[gpusandbox sm] gpu%d window %u: share %.3f duty %.3f -> %.3f (%u samples%s)\n",
		        gpu, g->windows, share, before, after, n, t < g->contended_until ? ", shared" : "");
	bool moved = after - g->audited_duty > AUDIT_DUTY_STEP || g->audited_duty - after > AUDIT_DUTY_STEP;
	if (sb->audit && (moved || t - g->audited_ns >= AUDIT_MIN_INTERVAL_MS * NS_PER_MS)) {
		struct gs_sm_adjust adj = { .gpu = (unsigned)gpu, .target_percent = cs->percent,
		                            .measured_share = share, .duty_before = before,
		                            .duty_after = after, .samples = n };
		if (gs_audit_sm_adjust(sb->audit, &adj) < 0)
			sb->audit_failed = true;
		g->audited_duty = after;
		g->audited_ns = t;
	}
}

/* ---- the thread ------------------------------------------------------------ */

/* Should GPU g's channels be off at now, and when may that next change?
 * A plan from the GPU's coordinator decides when there is one to follow;
 * otherwise our own hard-cap duty cycle does (coord.h: failing closed). */
static bool want_off(struct gs_compute_share *cs, struct gs_sm_gpu *g, uint64_t now, uint64_t *edge)
{
	bool on;

	g->coordinated = gs_coord_schedule(&g->coord, now, &on, edge);
	if (g->coordinated)
		return !on;
	if (now >= g->period_start + g->period_len) {
		g->period_start = now;
		g->period_len = jittered_period(cs, (uint64_t)cs->period_ms * NS_PER_MS);
	}
	const uint64_t end = g->period_start + g->period_len;
	const uint64_t off_at = g->period_start + (uint64_t)(g->ctl.duty * (double)g->period_len);
	if (!sm_ctl_throttling(&g->ctl) || now < off_at) {
		*edge = sm_ctl_throttling(&g->ctl) ? off_at : end;
		return false;
	}
	*edge = end;
	return true;
}

/* The GPU's RM id, which names it to the coordinator host-wide. */
static bool gpu_id_of_minor(const struct gs_session *sb, unsigned minor, uint32_t *id)
{
	for (unsigned i = 0; i < sb->n_gpu_map; i++)
		if (sb->gpu_map[i].minor == minor) {
			*id = sb->gpu_map[i].gpu_id;
			return true;
		}
	return false;
}

static void start_gpu(struct gs_compute_share *cs, unsigned gpu)
{
	struct gs_sm_gpu *s = &cs->gpu[gpu];
	uint32_t id = 0;
	bool known = gpu_id_of_minor(cs->sb, gpu, &id);

	s->seen = true;
	sm_ctl_init(&s->ctl, cs->percent / PERCENT);
	s->audited_duty = s->ctl.duty;
	gs_coord_init(&s->coord, known ? cs->coord_dir : NULL, id, cs->percent, cs->mode, cs->period_ms);
}

/* One pass: every GPU's channels are switched to what its schedule says
 * now. Returns the earliest time anything changes. Lock held. */
static uint64_t switch_gpus(struct gs_compute_share *cs, uint64_t now, const uint32_t counts[])
{
	uint64_t next = now + WINDOW_MS * NS_PER_MS;
	bool ok = true;

	for (unsigned g = 0; g < GS_MAX_GPUS && ok; g++) {
		struct gs_sm_gpu *s = &cs->gpu[g];
		uint64_t edge = next;
		if (counts[g] && !s->seen)
			start_gpu(cs, g);
		if (!s->seen)
			continue;
		bool off = counts[g] && want_off(cs, s, now, &edge);
		if (off != s->off) {
			uint64_t t0 = gs_monotonic_ns();
			ok = set_gpu_channels(cs, (int)g, off, off ? &s->off_cache : NULL);
			gs_sm_note_switch(s, t0, gs_monotonic_ns(), off);
			s->off = off;
		}
		if (edge < next)
			next = edge;
	}
	if (!ok)
		sm_fail(cs);
	return next;
}

/* The sandbox lock, if it comes within LOCK_WAIT_MS: a notify worker may
 * hold it in a read the workload keeps waiting (off_cache.h). */
static bool lock_soon(pthread_mutex_t *m)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)(LOCK_WAIT_MS * NS_PER_MS);
	if (ts.tv_nsec >= (long)GS_NS_PER_S) {
		ts.tv_sec++;
		ts.tv_nsec -= (long)GS_NS_PER_S;
	}
	return pthread_mutex_timedlock(m, &ts) == 0;
}

/* Without the lock: every GPU whose schedule says off and whose channels
 * are on is turned off from its cache. Nothing is turned on (that waits
 * for the lock). Returns when to try again. */
static uint64_t off_without_lock(struct gs_compute_share *cs, uint64_t now)
{
	uint64_t next = now + LOCK_RETRY_MS * NS_PER_MS;

	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		struct gs_sm_gpu *s = &cs->gpu[g];
		uint64_t edge = next;
		if (!s->seen || !s->off_cache.n || !want_off(cs, s, now, &edge) || s->off)
			continue;
		(void)gs_off_cache_disable(&s->off_cache);
		s->off_since_ns = gs_monotonic_ns();
		s->off = true;
		s->off_without_lock = true;
		s->lockless_offs++;
	}
	return next;
}

/* After an off made without the lock, the ledger does not know what is
 * off: a locked off pass says it again, so that the on pass finds it. */
static bool resync_lockless(struct gs_compute_share *cs)
{
	bool ok = true;

	for (unsigned g = 0; g < GS_MAX_GPUS && ok; g++)
		if (cs->gpu[g].off_without_lock) {
			ok = set_gpu_channels(cs, (int)g, true, &cs->gpu[g].off_cache);
			cs->gpu[g].off_without_lock = false;
		}
	return ok;
}

/* Does any GPU follow a coordinator's plan (and so poll for busy)? */
static bool any_coordinated(const struct gs_compute_share *cs)
{
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen && cs->gpu[g].coordinated)
			return true;
	return false;
}

static void *duty_cycle_thread(void *arg)
{
	struct gs_compute_share *cs = arg;
	struct gs_session *sb = cs->sb;
	uint64_t next_window = gs_monotonic_ns() + WINDOW_MS * NS_PER_MS;
	uint64_t next_poll = next_window;

	while (!atomic_load(&cs->stop)) {
		uint32_t counts[GS_MAX_GPUS];
		uint64_t t = gs_monotonic_ns();

		/* The coordinator first, without the sandbox lock: it never
		 * blocks, and it needs nothing of the sandbox. */
		for (unsigned g = 0; g < GS_MAX_GPUS; g++)
			if (cs->gpu[g].seen)
				gs_coord_tick(&cs->gpu[g].coord, t);
		if (!lock_soon(&sb->lock)) {
			sleep_until(off_without_lock(cs, t));
			continue;
		}
		if (!resync_lockless(cs))
			sm_fail(cs);
		ledger_count_channels(&sb->ledger, counts);
		uint64_t wake = atomic_load(&cs->stop) ? t : switch_gpus(cs, t, counts);
		if (t >= next_window && !atomic_load(&cs->stop)) {
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				if (cs->gpu[g].seen)
					close_window(cs, (int)g, t, counts[g] != 0);
			next_window = t + WINDOW_MS * NS_PER_MS;
			next_poll = t + IDLE_POLL_MS * NS_PER_MS;
		} else if (t >= next_poll && !atomic_load(&cs->stop)) {
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				if (cs->gpu[g].seen)
					poll_busy(cs, (int)g, counts[g] != 0);
			next_poll = t + IDLE_POLL_MS * NS_PER_MS;
		}
		pthread_mutex_unlock(&sb->lock);
		uint64_t until = wake < next_window ? wake : next_window;
		if (any_coordinated(cs) && next_poll < until)
			until = next_poll;
		sleep_until(until);
	}
	return NULL;
}

static void close_own_client(struct gs_compute_share *cs)
{
	if (cs->ctl_fd < 0)
		return;
	if (cs->client)
		(void)rm_own_free(cs->ctl_fd, cs->client, cs->client, cs->client);
	close(cs->ctl_fd);
	cs->ctl_fd = -1;
	cs->client = 0;
}

static enum gs_sm_mechanism mechanism_from_env(void)
{
	static const struct {
		const char *name;
		enum gs_sm_mechanism m;
	} names[] = {
		{ "group-schedule", GS_SM_GROUP_SCHEDULE },
		{ "group-preempt", GS_SM_GROUP_PREEMPT },
		{ "channel-schedule", GS_SM_CHANNEL_SCHEDULE },
	};
	const char *v = getenv("GPUSANDBOX_SM_MECHANISM");

	for (size_t i = 0; v && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(v, names[i].name) == 0)
			return names[i].m;
	return GS_SM_DISABLE_CHANNELS;
}

int gs_sm_start(struct gs_compute_share *cs, struct gs_session *sb, struct gs_error *err)
{
	sigset_t all, old;
	const char *dbg = getenv("GPUSANDBOX_SM_DEBUG");
	int rc;

	memset(cs, 0, sizeof(*cs));
	cs->sb = sb;
	cs->percent = sb->quota.sm_percent;
	cs->period_ms = sb->quota.sm_period_ms;
	cs->mode = sb->quota.sm_mode;
	/* A directory we cannot trust (not ours, open to others) is not
	 * used: this sandbox then keeps its own hard cap. */
	cs->coord_dir = gs_coord_dir();
	if (cs->coord_dir && gs_coord_dir_ready(cs->coord_dir) < 0) {
		fprintf(stderr, "gpusandbox: warning: --sm: the coordinator directory %s cannot be used "
		        "(not a directory of ours closed to others); this sandbox runs its own duty "
		        "cycle\n", cs->coord_dir);
		cs->coord_dir = NULL;
	}
	cs->debug = dbg && *dbg == '1';
	cs->rng = gs_monotonic_ns() | 1u;
	cs->mechanism = mechanism_from_env();
	cs->samples = malloc(sizeof(*cs->samples));
	if (!cs->samples)
		return gs_fail(err, ENOMEM, "--sm: allocating the sample buffer");
	/* Our own client only reads samples; without it the loop runs open
	 * (duty = target), which still caps, less exactly. */
	cs->ctl_fd = open(CTL_PATH, O_RDWR | O_CLOEXEC);
	if (cs->ctl_fd >= 0 &&
	    rm_own_alloc(cs->ctl_fd, 0, 0, &cs->client, NV01_ROOT_CLIENT, &cs->client, 0) != NV_OK) {
		cs->client = 0;
		close_own_client(cs);
	}
	/* The notify thread already runs and reads these with the lock held
	 * (gs_session_emit_channels_may_resume). */
	pthread_mutex_lock(&sb->lock);
	sb->sm = cs;
	sb->observer = (struct gs_session_observer){ .channels_may_resume = reassert_off_phase,
	                                             .ctx = cs };
	pthread_mutex_unlock(&sb->lock);
	/* The thread must not take the workload's signals (signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&cs->thread, NULL, duty_cycle_thread, cs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		pthread_mutex_lock(&sb->lock);
		sb->sm = NULL;
		sb->observer = (struct gs_session_observer){ 0 };
		pthread_mutex_unlock(&sb->lock);
		close_own_client(cs);
		free(cs->samples);
		return gs_fail(err, rc, "--sm: starting the duty-cycle thread");
	}
	cs->started = true;
	return 0;
}

void gs_sm_stop(struct gs_compute_share *cs)
{
	if (!cs->started)
		return;
	atomic_store(&cs->stop, true);
	pthread_join(cs->thread, NULL);
	cs->started = false;
	pthread_mutex_lock(&cs->sb->lock);
	enable_everything(cs);
	pthread_mutex_unlock(&cs->sb->lock);
	gs_sm_print_figures(cs);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		if (cs->gpu[g].seen) {
			gs_coord_close(&cs->gpu[g].coord);
			gs_off_cache_fini(&cs->gpu[g].off_cache);
		}
	close_own_client(cs);
	free(cs->samples);
	cs->samples = NULL;
	free(cs->chans);
	cs->chans = NULL;
	cs->cap_chans = 0;
}

/* The mean measured share over the busy windows after the warm-up. The
 * last one is left out when there are others: the workload's exit cuts it
 * short (measured on two H200s: 0.09 against 0.49 before it). */
static double achieved_share(const struct gs_sm_gpu *s)
{
	if (s->share_n > 1)
		return (s->share_sum - s->last_busy_share) / (s->share_n - 1);
	return s->share_n ? s->share_sum : 0;
}

void gs_sm_summary(const struct gs_compute_share *cs, struct gs_sm_summary *out)
{
	memset(out, 0, sizeof(*out));
	out->target_percent = cs->percent;
	out->period_ms = cs->period_ms;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		const struct gs_sm_gpu *s = &cs->gpu[g];
		if (!s->seen)
			continue;
		out->gpu[out->n++] = (struct gs_sm_gpu_summary){
			.gpu = g,
			.achieved_share = achieved_share(s),
			.busy_windows = s->share_n > 1 ? s->share_n - 1 : s->share_n,
			.windows = s->windows,
			.duty = s->ctl.duty,
			.toggles = s->toggles,
			.open_loop = s->no_samples,
		};
	}
}
