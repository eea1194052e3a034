/* SPDX-License-Identifier: MIT */
/*
 * sandbox.h - one sandbox: its listener, ledger, quota and audit log, kept
 * in one object and not in globals, so that one supervisor process can later
 * serve many listener fds handed over by a container runtime.
 *
 * The notify loop does not care how the listener was obtained (our own
 * launcher, or SCM_RIGHTS from an OCI runtime's listenerPath).
 */
#ifndef GPUSANDBOX_SANDBOX_H
#define GPUSANDBOX_SANDBOX_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "audit.h"
#include "groups.h"
#include "gs_error.h"
#include "ledger.h"
#include "quota.h"

#define GS_PIDFD_CACHE 64u
#define GS_SANDBOX_ID_LEN 33
/* Processes that created RM clients, remembered for attributing the
 * driver's utilization samples (a ring: the oldest are likely dead). */
#define GS_MAX_CREATORS 1024u

struct gs_compute_share;
struct gs_learn;

struct gs_pidfd_slot {
	pid_t tid;
	int   pidfd;
};

enum gs_count { GS_COUNT_ALLOWED, GS_COUNT_DENIED, GS_COUNT_CONTINUED, GS_COUNT_REFUSED,
                GS_COUNT_N };

/* A GPU as the sandbox knows it (exec_visibility.c). */
struct gs_gpu_entry {
	uint32_t gpu_id;    /* RM's id in the listing controls */
	uint32_t minor;     /* /dev/nvidiaN: the index --gpus names */
};

struct gs_sandbox {
	char                 id[GS_SANDBOX_ID_LEN];
	int                  listener;
	struct gs_quota      quota;
	const struct gs_rules *rules;     /* the policy's allowlist */
	struct gs_learn     *learn;       /* NULL without --learn */
	struct ledger        ledger;
	struct gs_audit     *audit;       /* NULL without --audit-log */
	FILE                *trace;       /* NULL without --trace */
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t               req_size, resp_size;
	uint8_t             *params;      /* our copy of nested params */
	uint8_t             *embedded[RM_EMBEDDED_MAX_PTRS]; /* our copies of embedded lists */
	struct gs_pidfd_slot pidfds[GS_PIDFD_CACHE];
	unsigned             uvm_major;   /* 0 if unknown */
	uint64_t             counts[GS_COUNT_N];
	uint64_t             notifications;
	atomic_bool          audit_failed;
	/* The notify thread (gs_sandbox_start). */
	pthread_t            thread;
	bool                 thread_started;
	atomic_bool          stop;
	atomic_bool          failed;        /* thread hit a hard error */
	pid_t                workload;      /* killed if the thread fails */
	struct gs_error      thread_err;
	struct gs_gpu_entry  gpu_map[GS_MAX_GPUS];
	unsigned             n_gpu_map;
	/* Serialises the notify thread's handling of a call with the
	 * compute-share thread's use of the ledger and the driver, so a
	 * channel is never toggled while a call that frees it is in flight. */
	pthread_mutex_t      lock;
	struct gs_compute_share *sm;      /* NULL without --sm */
	pid_t                creators[GS_MAX_CREATORS];
	unsigned             n_creators, next_creator;
	/* GPUSANDBOX_PROFILE=1: supervisor-side time per escape number. */
	bool                 profile;
	uint64_t             prof_ns[256], prof_n[256];
};

struct gs_sandbox_config {
	struct gs_quota  quota;
	const struct gs_rules *rules;     /* NULL: the built-in default */
	/* --learn: what the allowlist refuses is learned here instead; the
	 * sandbox then enforces learn->rules, which start as a copy of the
	 * policy's, and rules is not used. */
	struct gs_learn *learn;
	struct gs_audit *audit;
	FILE            *trace;
	const char      *id;              /* NULL: a random one */
};

int  gs_sandbox_init(struct gs_sandbox *sb, const struct gs_sandbox_config *cfg, int listener,
                     struct gs_error *err);
void gs_sandbox_fini(struct gs_sandbox *sb);

/* Fills out with a random hex sandbox id. */
void gs_sandbox_make_id(char *out, size_t len);

/* Receives one notification and answers it. Returns 1 if one was handled,
 * 0 if there was nothing to do (the target went away), -1 when the listener
 * is unusable (every workload task is gone, or a hard error). */
int gs_sandbox_handle_one(struct gs_sandbox *sb, struct gs_error *err);

/* Serves the listener from a dedicated thread blocked in RECV, so a trap
 * costs one wake-up and no poll. If the thread fails (or the audit log
 * cannot be written) it kills the workload, which ends the run. */
int  gs_sandbox_start(struct gs_sandbox *sb, pid_t workload, struct gs_error *err);
/* Stops and joins the thread; afterwards the ledger is the caller's. */
void gs_sandbox_stop(struct gs_sandbox *sb);
/* Prints the profile to stderr when GPUSANDBOX_PROFILE is set. */
void gs_sandbox_print_profile(const struct gs_sandbox *sb);

/* Releases charges of clients whose file was closed; audits the releases. */
void gs_sandbox_reconcile(struct gs_sandbox *sb);

/* Writes the summary record. */
void gs_sandbox_summarize(struct gs_sandbox *sb, int exit_status, int term_signal);

/* The nvidia-uvm character major from /proc/devices; 0 if not loaded. */
unsigned gs_find_uvm_major(void);

/* Remembers the process of task tid as the creator of an RM client. */
void gs_sandbox_note_creator(struct gs_sandbox *sb, pid_t tid);
/* Did process tgid create an RM client in this sandbox? */
bool gs_sandbox_is_creator(const struct gs_sandbox *sb, pid_t tgid);

/* Implemented in executor.c: decides and answers one notification (an
 * ioctl, or under managed = deny an mmap). */
void gs_execute_notification(struct gs_sandbox *sb);

#endif
