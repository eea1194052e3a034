/* SPDX-License-Identifier: MIT */
/*
 * sampler.c - the per-GPU, per-process reader of the driver's utilization
 * samples (sampler.h).
 *
 * The timestamps. RM's samples carry their instant in ns
 * (NV2080_CTRL_GPUMON_SAMPLE.timeStamp, ctrl2080gpumon.h). They are filled
 * by physical RM (GSP on an H100: subdeviceCtrlCmdPerfGetGpumonPerfmon-
 * UtilSamplesV2_KERNEL only forwards and translates pids,
 * kern_perf_ctrl.c, 580.95.05), whose clock is the GPU's PTIMER; RM loads
 * PTIMER with the host's wall clock at init (tmrSetCurrentTime_GV100 and
 * _GH100, timer_gv100.c and timer_gh100.c, 580.95.05) and lets it run on
 * its own crystal. So the sample clock is put on CLOCK_MONOTONIC here by
 * reading PTIMER with TIMER_GET_TIME (tmrGetCurrentTime,
 * subdevice_ctrl_timer_kernel.c, 580.95.05) between two CLOCK_MONOTONIC
 * reads, the tightest of CALIBRATE_READS brackets, again every
 * GS_SAMPLER_CALIBRATE_MS (crystal drift: ~50 ppm is 50 us a second).
 * That the samples use PTIMER is the one fact the open source does not
 * show (GSP fills them); a mapping that puts a sample in the future is
 * given up for good, and the session's own check (idle_rule.h: a sample
 * naming the tenant while it was surely off) gives it up too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpusandbox.h"
#include "idle_rule.h"
#include "rm_own.h"
#include "sampler.h"
#include "sm_clock.h"

#define NS_PER_MS 1000000ull
#define CTL_PATH "/dev/nvidiactl"
#define OWN_DEVICE_HANDLE 0xc5d00000u
#define OWN_SUBDEVICE_HANDLE 0xc5d00001u
#define CALIBRATE_READS 3u
/* A mapped sample may lie this far past now (the reads' own skew) before
 * the mapping counts as wrong. */
#define FUTURE_SLACK_NS (5 * NS_PER_MS)

struct gs_sampler {
	struct gs_sampler *next;
	uint32_t           gpu_id;
	unsigned           refs;
	pthread_mutex_t    lock;
	int                ctl_fd;
	nv_handle_t        client;
	bool               dead;        /* the driver stopped giving samples */
	bool               map_broken;  /* a sample mapped into the future */
	const struct gs_rm_abi *abi;
	struct nv2080_perfmon_util_samples_v2 *params;
	uint64_t           read_ns, calibrated_ns;
	struct gs_ts_map   map;
	struct gs_util_sample ring[NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL];
	unsigned           n;
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gs_sampler *registry;

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
	       f[GS_FACT_UTIL_SAMPLE_COUNT] <= NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL &&
	       samples_end <= f[GS_FACT_UTIL_SAMPLES_SIZE] &&
	       gr_end <= f[GS_FACT_UTIL_SAMPLE_SIZE] &&
	       f[GS_FACT_UTIL_SAMPLE_TS_OFF] + sizeof(uint64_t) <= f[GS_FACT_UTIL_SAMPLE_SIZE];
}

/* Our own client, device and subdevice on the GPU. The device is made
 * with the GPU's device instance, which follows attach order, not the
 * minor. The driver lets a process make a device only while it has the
 * GPU's node open, so the nodes are opened around the allocation. */
static bool open_client(struct gs_sampler *s, unsigned minor, const struct gs_gpu_entry *map,
                        unsigned n_map)
{
	int nodes[GS_MAX_GPUS];
	unsigned n_nodes = 0;
	nv_status_t st = NV_ERR_GENERIC;

	s->ctl_fd = open(CTL_PATH, O_RDWR | O_CLOEXEC);
	if (s->ctl_fd < 0 ||
	    rm_own_alloc(s->ctl_fd, 0, 0, &s->client, NV01_ROOT_CLIENT, &s->client, 0) != NV_OK)
		return false;
	/* Our own nodes, in the shared table, for our own device: no
	 * worker's device allocation meets them (each is made in a private
	 * table, private_table.h), and a worker's dup of a workload's node
	 * that ours might meet vouches for a GPU we open ourselves anyway. */
	n_nodes = rm_own_open_gpu_nodes(nodes, GS_MAX_GPUS);
	struct nv0080_alloc_params dp = { 0 };
	struct nv2080_alloc_params sp = { .sub_device_id = 0 };
	nv_handle_t dev = OWN_DEVICE_HANDLE, sub = OWN_SUBDEVICE_HANDLE;
	if (gs_gpu_instance_of_minor(s->ctl_fd, s->client, map, n_map, minor, &dp.device_id) == 0) {
		st = rm_own_alloc(s->ctl_fd, s->client, s->client, &dev, NV01_DEVICE_0, &dp, sizeof(dp));
		if (st == NV_OK)
			st = rm_own_alloc(s->ctl_fd, s->client, dev, &sub, NV20_SUBDEVICE_0, &sp, sizeof(sp));
	}
	rm_own_close_fds(nodes, n_nodes);
	return st == NV_OK;
}

static void close_client(struct gs_sampler *s)
{
	if (s->ctl_fd < 0)
		return;
	if (s->client)
		(void)rm_own_free(s->ctl_fd, s->client, s->client, s->client);
	close(s->ctl_fd);
	s->ctl_fd = -1;
	s->client = 0;
}

/* PTIMER against CLOCK_MONOTONIC: the tightest of a few brackets. A
 * driver without the control leaves the samples untimed. */
static void calibrate(struct gs_sampler *s, uint64_t now)
{
	gs_ts_map_reset(&s->map);
	s->calibrated_ns = now;
	for (unsigned i = 0; i < CALIBRATE_READS && !s->map_broken; i++) {
		struct nv2080_timer_get_time_params p = { 0 };
		uint64_t before = gs_sm_now();
		if (rm_own_control(s->ctl_fd, s->client, OWN_SUBDEVICE_HANDLE, NV2080_CTRL_CMD_TIMER_GET_TIME,
		                   &p, sizeof(p)) != NV_OK)
			return;
		gs_ts_map_add(&s->map, before, p.time_nsec, gs_sm_now());
	}
}

/* Reads the ring from the driver into s->ring. Sampler lock held. */
static bool refresh(struct gs_sampler *s, uint64_t now)
{
	uint8_t *p = (uint8_t *)s->params;
	uint32_t f[GS_FACT_COUNT];
	const uint8_t type = NV2080_CTRL_GPUMON_SAMPLE_TYPE_PERFMON_UTIL;

	if (!util_layout(s->abi, f))
		return false;
	if (now - s->calibrated_ns >= GS_SAMPLER_CALIBRATE_MS * NS_PER_MS || !s->calibrated_ns)
		calibrate(s, now);
	memset(p, 0, f[GS_FACT_UTIL_SAMPLES_SIZE]);
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, type), &type, sizeof(type));
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, buf_size), &f[GS_FACT_UTIL_BUFFER_SIZE],
	       sizeof(uint32_t));
	if (rm_own_control(s->ctl_fd, s->client, OWN_SUBDEVICE_HANDLE,
	                   NV2080_CTRL_CMD_PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2, p,
	                   f[GS_FACT_UTIL_SAMPLES_SIZE]) != NV_OK)
		return false;
	uint64_t after = gs_sm_now();
	s->n = 0;
	for (uint32_t i = 0; i < f[GS_FACT_UTIL_SAMPLE_COUNT]; i++) {
		const uint8_t *e = p + f[GS_FACT_UTIL_SAMPLES_OFF] + (size_t)i * f[GS_FACT_UTIL_SAMPLE_SIZE];
		struct gs_util_sample *o = &s->ring[s->n];
		o->ts = u64_at(e, f[GS_FACT_UTIL_SAMPLE_TS_OFF]);
		if (!o->ts)
			continue;
		o->util = u32_at(e, f[GS_FACT_UTIL_SAMPLE_GR_OFF] + f[GS_FACT_UTIL_ENGINE_UTIL_OFF]);
		o->pid = u32_at(e, f[GS_FACT_UTIL_SAMPLE_GR_OFF] + f[GS_FACT_UTIL_ENGINE_PROC_ID_OFF]);
		o->timed = !s->map_broken && gs_ts_map_to_mono(&s->map, o->ts, &o->mono);
		/* A sample is taken before we read it: one "later" than
		 * our read means the clock is not the one we mapped. */
		if (o->timed && o->mono > after + s->map.err_ns + FUTURE_SLACK_NS)
			s->map_broken = true;
		s->n++;
	}
	for (unsigned i = 0; s->map_broken && i < s->n; i++)
		s->ring[i].timed = false;
	s->read_ns = now;
	return true;
}

struct gs_sampler *gs_sampler_get(uint32_t gpu_id, unsigned minor, const struct gs_gpu_entry *map,
                                  unsigned n_map, const struct gs_rm_abi *abi)
{
	struct gs_sampler *s;

	pthread_mutex_lock(&registry_lock);
	for (s = registry; s && s->gpu_id != gpu_id; s = s->next)
		;
	if (s) {
		s->refs++;
		pthread_mutex_unlock(&registry_lock);
		return s;
	}
	s = calloc(1, sizeof(*s));
	if (s) {
		s->ctl_fd = -1;
		s->params = malloc(sizeof(*s->params));
	}
	if (!s || !s->params || !open_client(s, minor, map, n_map)) {
		if (s) {
			close_client(s);
			free(s->params);
			free(s);
		}
		pthread_mutex_unlock(&registry_lock);
		return NULL;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->gpu_id = gpu_id;
	s->abi = abi;
	s->refs = 1;
	s->next = registry;
	registry = s;
	pthread_mutex_unlock(&registry_lock);
	return s;
}

void gs_sampler_put(struct gs_sampler *s)
{
	struct gs_sampler **pp;

	if (!s)
		return;
	pthread_mutex_lock(&registry_lock);
	if (--s->refs) {
		pthread_mutex_unlock(&registry_lock);
		return;
	}
	for (pp = &registry; *pp && *pp != s; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = s->next;
	pthread_mutex_unlock(&registry_lock);
	close_client(s);
	pthread_mutex_destroy(&s->lock);
	free(s->params);
	free(s);
}

int gs_sampler_read(struct gs_sampler *s, uint64_t after_ts, struct gs_util_sample *out, unsigned max,
                    uint64_t *err_ns)
{
	uint64_t now = gs_sm_now();
	int n = 0;

	pthread_mutex_lock(&s->lock);
	if (!s->dead && (!s->read_ns || now - s->read_ns >= GS_SAMPLER_FRESH_MS * NS_PER_MS))
		s->dead = !refresh(s, now);
	if (s->dead) {
		pthread_mutex_unlock(&s->lock);
		return -1;
	}
	/* The ring is in slot order; the caller wants time order. */
	for (unsigned i = 0; i < s->n && (unsigned)n < max; i++)
		if (s->ring[i].ts > after_ts)
			out[n++] = s->ring[i];
	*err_ns = s->map.err_ns;
	pthread_mutex_unlock(&s->lock);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && out[j].ts < out[j - 1].ts; j--) {
			struct gs_util_sample t = out[j];
			out[j] = out[j - 1];
			out[j - 1] = t;
		}
	return n;
}

unsigned gs_sampler_count(void)
{
	unsigned n = 0;

	pthread_mutex_lock(&registry_lock);
	for (const struct gs_sampler *s = registry; s; s = s->next)
		n++;
	pthread_mutex_unlock(&registry_lock);
	return n;
}
