/* SPDX-License-Identifier: MIT */
/*
 * fake_busy.c - a model of GPU busy time for the fake driver, so that the
 * compute-share loop (--sm) can run closed in CI.
 *
 * The modelled workload is compute-bound: a GPU is busy whenever one of its
 * channels could run (not disabled by FIFO_DISABLE_CHANNELS, and its group
 * scheduled, or no group). Like the real driver, work goes on for a while
 * after a disable (a kernel runs to its preemption point): --busy-lag-ms.
 * Busy time is cut into FAKE_SAMPLE_MS samples, kept in a ring of the real
 * control's size and served by PERF_GET_GPUMON_PERFMON_UTIL_SAMPLES_V2,
 * each naming the process on the engine at its end, as RM does, and
 * stamped with that instant on the GPU's PTIMER (fake_ptimer_ns).
 *
 * Several tenants: while the channels of several clients can run, the
 * hardware time-slices between their groups, so each client is credited
 * an equal part of that time (client_busy: the account the multi-sandbox
 * tests of tests/sm judge by), and the samples name the runnable
 * processes in turn.
 */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "fake_rm_int.h"

#define NS_PER_MS 1000000ull
#define SLOT_BUSY_UNSET UINT64_MAX

uint64_t fake_now_ns(void)
{
	struct timespec ts;

	if (fake_st.cfg.clock)
		return gs_test_clock_now(fake_st.cfg.clock);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The GPU's PTIMER at CLOCK_MONOTONIC instant mono. RM loads PTIMER with
 * the host's wall clock (ns since 1970) when it initializes the GPU and
 * lets it run (tmrSetCurrentTime_GV100/_GH100, timer_gv100.c and
 * timer_gh100.c, open-gpu-kernel-modules 580.95.05); TIMER_GET_TIME reads
 * it (tmrGetCurrentTime, subdevice_ctrl_timer_kernel.c), and the
 * utilization samples are stamped with it. So here: the wall clock at the
 * fake's first use, running with CLOCK_MONOTONIC from then, which is
 * neither clock later (the wall clock may be stepped). */
uint64_t fake_ptimer_ns(uint64_t mono)
{
	static uint64_t offset;

	if (!offset) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		offset = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - fake_now_ns();
	}
	return mono + offset;
}

/* Busy time of the GPU up to t, from the model's state. */
static uint64_t busy_at(const struct busy_model *m, uint64_t t)
{
	uint64_t b = m->acc_ns;

	if (m->runnable)
		return b + (t > m->run_since ? t - m->run_since : 0);
	uint64_t end = t < m->tail_to ? t : m->tail_to;
	return b + (end > m->tail_from ? end - m->tail_from : 0);
}

/* Is a channel of this group-or-device able to run? */
static bool channel_can_run(struct client *c, const struct obj *o)
{
	if (o->dup || o->res->kind != K_CHANNEL || o->res->disabled)
		return false;
	const struct obj *p = fake_find_obj(c, o->parent);
	return !p || p->res->kind != K_CHANNEL_GROUP || p->res->scheduled;
}

static bool client_can_run(struct client *c, unsigned gi)
{
	for (size_t j = 0; j < c->n; j++)
		if (c->objs[j].res->gpu == (int)gi && channel_can_run(c, &c->objs[j]))
			return true;
	return false;
}

/* Credits each client its part of [from, to): equal parts among the
 * clients running or still draining, cut where a drain ends. */
static void integrate_shares(unsigned gi, uint64_t from, uint64_t to)
{
	unsigned enabled = 0;

	/* Scheduling overlap: two clients' channels enabled at once (a drain
	 * after a disable is the hardware's, not the scheduler's). */
	for (size_t i = 0; i < fake_st.nclients; i++)
		enabled += fake_st.clients[i]->busy[gi].running;
	if (enabled > 1)
		fake_st.gpu[gi].busy.overlap_ns += to - from;
	for (uint64_t a = from; a < to;) {
		uint64_t b = to;
		unsigned k = 0;
		for (size_t i = 0; i < fake_st.nclients; i++) {
			const struct client_busy *cb = &fake_st.clients[i]->busy[gi];
			if (!cb->running && cb->tail_to <= a)
				continue;
			k++;
			if (!cb->running && cb->tail_to < b)
				b = cb->tail_to;
		}
		for (size_t i = 0; k && i < fake_st.nclients; i++) {
			struct client_busy *cb = &fake_st.clients[i]->busy[gi];
			if (cb->running || cb->tail_to > a)
				cb->busy_ns += (b - a) / k;
		}
		a = b;
	}
}

/* Each client's state from now on, and the processes a sample may name. */
static void update_clients(unsigned gi, uint64_t t)
{
	struct busy_model *m = &fake_st.gpu[gi].busy;

	m->npids = 0;
	for (size_t i = 0; i < fake_st.nclients; i++) {
		struct client *c = fake_st.clients[i];
		struct client_busy *cb = &c->busy[gi];
		bool now = client_can_run(c, gi);
		if (cb->running && !now)
			cb->tail_to = t + (uint64_t)fake_st.cfg.busy_lag_ms * NS_PER_MS;
		cb->running = now;
		bool listed = false;
		for (unsigned p = 0; p < m->npids; p++)
			listed |= m->pids[p] == c->tgid;
		if (now && !listed && m->npids < FAKE_SAMPLE_PIDS)
			m->pids[m->npids++] = c->tgid;
	}
}

uint64_t fake_client_busy_ms(const struct client *c, unsigned gi)
{
	return c->busy[gi].busy_ns / NS_PER_MS;
}

static bool gpu_runnable(unsigned gi, pid_t *who)
{
	for (size_t i = 0; i < fake_st.nclients; i++) {
		struct client *c = fake_st.clients[i];
		for (size_t j = 0; j < c->n; j++)
			if (c->objs[j].res->gpu == (int)gi && channel_can_run(c, &c->objs[j])) {
				*who = c->tgid;
				return true;
			}
	}
	return false;
}

/* Closes the samples that ended by t. */
static void close_samples(struct busy_model *m, uint64_t t)
{
	const uint64_t len = FAKE_SAMPLE_MS * NS_PER_MS;

	if (!m->slot_start) {
		m->slot_start = t + (fake_st.cfg.clock ? FAKE_SAMPLE_PHASE_MS * NS_PER_MS : 0);
		m->slot_busy = fake_st.cfg.clock ? SLOT_BUSY_UNSET : busy_at(m, t);
		return;
	}
	if (t < m->slot_start)
		return;
	/* The first sample's busy time counts from its start: the state
	 * since the last refresh held then (this one's comes after). */
	if (m->slot_busy == SLOT_BUSY_UNSET)
		m->slot_busy = busy_at(m, m->slot_start);
	while (m->slot_start + len <= t) {
		uint64_t end = m->slot_start + len, b = busy_at(m, end);
		struct fake_sample *s = &m->ring[m->tracker];
		s->ts = fake_st.cfg.untimed_samples ? end : fake_ptimer_ns(end);
		s->util = (uint32_t)((b - m->slot_busy) * NV2080_GPUMON_UTIL_FULL / len);
		/* The process on the engine when the sample was taken. */
		if (m->runnable && m->npids)
			s->pid = (uint32_t)m->pids[m->samples_taken % m->npids];
		else
			s->pid = (m->runnable || end < m->tail_to) ? (uint32_t)m->pid : NV2080_GPUMON_PID_INVALID;
		m->samples_taken++;
		m->tracker = (m->tracker + 1) % NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL;
		m->slot_busy = b;
		m->slot_start = end;
	}
}

void fake_busy_refresh(void)
{
	uint64_t t = fake_now_ns();

	for (unsigned gi = 0; gi < fake_st.cfg.gpus; gi++) {
		struct busy_model *m = &fake_st.gpu[gi].busy;
		pid_t who = 0;
		bool now = gpu_runnable(gi, &who);

		close_samples(m, t);
		integrate_shares(gi, m->shares_at ? m->shares_at : t, t);
		m->shares_at = t;
		update_clients(gi, t);
		/* Fold the time so far into acc, then start the new state. */
		m->acc_ns = busy_at(m, t);
		if (m->runnable) {
			m->run_since = t;
		} else if (m->tail_to > t) {
			m->tail_from = t;
		} else {
			m->tail_from = m->tail_to = t;
		}
		if (now && !m->runnable) {
			m->run_since = t;
			m->tail_from = m->tail_to = t;
		} else if (!now && m->runnable) {
			m->tail_from = t;
			m->tail_to = t + (uint64_t)fake_st.cfg.busy_lag_ms * NS_PER_MS;
		}
		m->runnable = now;
		if (now)
			m->pid = who;
	}
}

uint64_t fake_busy_ms(unsigned gi)
{
	return busy_at(&fake_st.gpu[gi].busy, fake_now_ns()) / NS_PER_MS;
}

static uint32_t fact(enum gs_rm_fact f)
{
	return gs_rm_abi_fact(fake_st.abi, f);
}

/* The played branch's layout: 535 and 550 samples are 472 and 704 bytes
 * with the graphics engine at 124, 570+ 776 with it at 136. The caller
 * checked the params are fact(UTIL_SAMPLES_SIZE) bytes. */
void fake_busy_samples(unsigned gi, uint8_t *p)
{
	const struct busy_model *m = &fake_st.gpu[gi].busy;
	uint32_t count = fact(GS_FACT_UTIL_SAMPLE_COUNT);
	uint32_t gr = fact(GS_FACT_UTIL_SAMPLE_GR_OFF);

	fake_busy_refresh();
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, count), &count, sizeof(count));
	memcpy(p + offsetof(struct nv2080_perfmon_util_samples_v2, tracker), &m->tracker, sizeof(m->tracker));
	memset(p + fact(GS_FACT_UTIL_SAMPLES_OFF), 0, (size_t)count * fact(GS_FACT_UTIL_SAMPLE_SIZE));
	for (unsigned i = 0; i < count && i < NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL; i++) {
		const struct fake_sample *s = &m->ring[i];
		uint8_t *out = p + fact(GS_FACT_UTIL_SAMPLES_OFF) + (size_t)i * fact(GS_FACT_UTIL_SAMPLE_SIZE);
		if (!s->ts)
			continue;
		memcpy(out + fact(GS_FACT_UTIL_SAMPLE_TS_OFF), &s->ts, sizeof(s->ts));
		memcpy(out + gr + fact(GS_FACT_UTIL_ENGINE_UTIL_OFF), &s->util, sizeof(s->util));
		memcpy(out + gr + fact(GS_FACT_UTIL_ENGINE_PROC_ID_OFF), &s->pid, sizeof(s->pid));
	}
}
