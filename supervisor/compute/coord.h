/* SPDX-License-Identifier: MIT */
/*
 * coord.h - one compute-share coordinator per GPU on the host, shared by
 * every supervisor that caps a workload on that GPU (command-line runs and
 * agent sessions alike).
 *
 * Rendezvous: a root-only directory (GS_COORD_DIR_DEFAULT, or
 * GPUSANDBOX_COORD_DIR in the supervisor's own environment, which the
 * workload's environment cannot change), with one lock file and one unix
 * socket per GPU. The supervisor that holds the lock hosts the coordinator
 * (a thread, coord_server.c); every supervisor, the host's included, is
 * its client. The directory is masked from the workload (contain.c), and
 * the coordinator accepts only peers with our uid whose PID namespace is
 * ours: a sandboxed process is never a peer.
 *
 * The coordinator plans (plan.c) and sends each client its windows; each
 * supervisor still switches only its own workload's channels.
 *
 * Failing closed: a client follows a plan only while it is connected and
 * heard from the coordinator within GS_COORD_PLAN_TTL_MS. At any other
 * time (before the first plan, host dead, directory unusable) the caller
 * runs its own independent hard-cap duty cycle, so no tenant runs uncapped.
 * When the host dies, the clients race for the lock; the winner hosts and
 * re-plans.
 *
 * The client side never blocks: every socket call is non-blocking, so the
 * duty cycle that calls it never waits on another supervisor.
 */
#ifndef GPUSANDBOX_COORD_H
#define GPUSANDBOX_COORD_H

#include <stdbool.h>
#include <stdint.h>

#include "plan.h"

#define GS_COORD_DIR_DEFAULT "/run/gpusandbox/coord"
#define GS_COORD_DIR_ENV     "GPUSANDBOX_COORD_DIR"
#define GS_COORD_PATH_MAX    108   /* sun_path */
/* A plan not refreshed for this long is no longer followed. */
#define GS_COORD_PLAN_TTL_MS 1500u

struct coord_server;

/* What the coordinator sends one client. */
struct gs_coord_plan {
	uint64_t              from_ns;      /* CLOCK_MONOTONIC: follow it from then */
	uint64_t              anchor_ns;    /* start of period anchor_k */
	uint64_t              anchor_k;
	uint64_t              seed;         /* period jitter (gs_plan_period_ns) */
	uint64_t              period_ns;    /* base period */
	uint32_t              jitter_ppm;
	uint32_t              tenants;      /* in the plan */
	uint32_t              asked_percent;
	struct gs_plan_slot   slot;         /* ours */
	uint32_t              n_starts;     /* where a period may start */
	uint32_t              starts[GS_PLAN_MAX_STARTS];   /* (gs_plan_rotation_ppm) */
};

struct gs_coord {
	bool                 enabled;
	char                 lock_path[GS_COORD_PATH_MAX], sock_path[GS_COORD_PATH_MAX];
	int                  fd;             /* our connection, -1 when none */
	struct coord_server *server;         /* when we host */
	uint64_t             next_try_ns;
	uint32_t             percent, period_ms;
	enum gs_sm_mode      mode;
	bool                 busy;
	struct gs_coord_plan cur, next;
	bool                 have_cur, have_next;
	uint64_t             heard_ns;
	/* Period cursor: period k starts at k_start and lasts k_len. */
	uint64_t             k, k_start, k_len;
	uint32_t             plans_received, hosted_times;
};

/* The coordinator directory for this run, or NULL when there is none (the
 * fake driver's GPUs are not the host's: without GPUSANDBOX_COORD_DIR,
 * fake-driver runs (gs_driver_nodes_fake) coordinate with nobody). Call
 * after gs_driver_nodes_init. */
const char *gs_coord_dir(void);
/* Creates dir (0700, ours) if needed and checks it is a directory of our
 * euid that nobody else may enter; -1 if it cannot be used. */
int gs_coord_dir_ready(const char *dir);

/* Sets c up for the GPU with RM id gpu_id. Connects lazily (tick). */
void gs_coord_init(struct gs_coord *c, const char *dir, uint32_t gpu_id, uint32_t percent,
                   enum gs_sm_mode mode, uint32_t period_ms);
/* Non-blocking: (re)connects or takes over hosting at most every retry
 * interval, sends nothing unless asked, and drains the plans received. */
void gs_coord_tick(struct gs_coord *c, uint64_t now);
/* Tells the coordinator whether the workload used the GPU lately. */
void gs_coord_report(struct gs_coord *c, bool busy);
/* Is there a plan to follow now? If so, *on says whether our channels may
 * run at now, and *edge when that next changes. False: run independently. */
bool gs_coord_schedule(struct gs_coord *c, uint64_t now, bool *on, uint64_t *edge);
/* Our own window's share of the period (ppm) in the plan followed now. */
uint32_t gs_coord_own_ppm(const struct gs_coord *c);
void gs_coord_close(struct gs_coord *c);

/* coord_server.c: the hosted coordinator. */
struct coord_server *coord_server_start(int lock_fd, const char *sock_path, uint32_t period_ms);
void coord_server_stop(struct coord_server *s);

/* The wire format, one datagram each (SOCK_SEQPACKET). */
/* "GSC2": the plan carries its starts. A supervisor of another version
 * sends datagrams of another size, and the host drops it: it keeps its
 * own hard cap (fails closed). */
#define GS_COORD_MAGIC 0x47534332u
struct coord_report_msg {
	uint32_t magic;
	uint32_t percent;
	uint32_t mode;
	uint32_t busy;
};
struct coord_plan_msg {
	uint32_t             magic;
	uint32_t             pad;
	struct gs_coord_plan plan;
};

#endif
