/* SPDX-License-Identifier: MIT */
/*
 * session.h - one sandbox's session: its listener, ledger, quota and audit log, kept
 * in one object and not in globals, so that one supervisor process can later
 * serve many listener fds handed over by a container runtime.
 *
 * The notify loop does not care how the listener was obtained (our own
 * launcher, or SCM_RIGHTS from an OCI runtime's listenerPath).
 */
#ifndef GPUSANDBOX_SESSION_H
#define GPUSANDBOX_SESSION_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "audit.h"
#include "driver.h"
#include "groups.h"
#include "gs_error.h"
#include "fd_exports.h"
#include "ledger.h"
#include "own_rm.h"
#include "uvm_maps.h"
#include "quota.h"
#include "refusals.h"
#include "taskset.h"
#include "workload.h"

#define GS_SANDBOX_ID_LEN 33
/* Processes that created RM clients, remembered for attributing the
 * driver's utilization samples (a ring: the oldest are likely dead). */
#define GS_MAX_CREATORS 1024u

struct gs_compute_share;
struct gs_runner;
struct gs_scratch;
struct gs_learn;

enum gs_count { GS_COUNT_ALLOWED, GS_COUNT_DENIED, GS_COUNT_CONTINUED, GS_COUNT_REFUSED,
                GS_COUNT_N };

/* What the sandbox tells an observer above it. The compute share registers
 * itself here (gs_sm_start); the executor only emits, so nothing below the
 * sandbox calls up into the compute share. Called with the sandbox lock
 * held, from the notify thread. */
struct gs_session_observer {
	/* A workload call succeeded that may have made channels on gpu
	 * runnable again (they were scheduled, or a group was enabled). */
	void (*channels_may_resume)(void *ctx, int gpu);
	/* Such a call goes to the driver (begin true), and is done, its
	 * channels_may_resume told (begin false): the test build's shared
	 * clock stands still in between (sm_clock.h gs_sm_clock_hold). */
	void (*resume_call)(void *ctx, bool begin);
	void  *ctx;
};

/* How many controls' driver times the session remembers (direct-mapped). */
#define GS_DRIVER_TIME_SLOTS 256u

#define GS_PROF_KINDS 128

struct gs_session {
	char                 id[GS_SANDBOX_ID_LEN];
	int                  listener;
	struct gs_quota      quota;
	const struct gs_rm_abi *rm_abi;   /* the running driver's RM tables */
	const struct gs_rules *rules;     /* the policy's allowlist */
	struct gs_learn     *learn;       /* NULL without --learn */
	struct ledger        ledger;
	/* The UVM external mappings we made, each pinning what it maps
	 * (uvm_maps.h), and our own RM client through which they are made
	 * (exec_uvm.c: UVM dups memory as the calling process, so a mapping
	 * the supervisor makes names a dup of its own). Under lock. */
	struct gs_uvm_maps   uvm;
	struct gs_own_rm     own;
	/* Video engine instances per GPU minor, by enum gs_engine: asked of
	 * the driver through own on the first count that meets the GPU
	 * (exec_engines.c; engines_asked has bit g once asked), 0 where it
	 * did not answer. Under lock. */
	uint64_t             engines_asked;
	uint32_t             engine_instances[GS_MAX_GPUS][GS_ENGINE_N];
	/* GPUSANDBOX_TEST_ENGINE_OBJECTS: every video engine object is a
	 * session of its own, as before issue #29 (the baseline of tests/adv
	 * video_sessions). Never for use. */
	bool                 test_engine_objects;
	/* The control files this sandbox exported memory into, each slot
	 * pinning what it holds until the file is released (fd_exports.h).
	 * Under lock. */
	struct gs_fd_exports exports;
	/* GPUSANDBOX_TEST_FOREIGN_IMPORT: an import from an export file made
	 * outside the sandbox is let through, uncharged (the baseline of
	 * tests/adv fd_export). Never for use. */
	bool                 test_foreign_import;
	/* GPUSANDBOX_TEST_NO_EXPORT_PIN: exports are performed but pin
	 * nothing, so the charge goes with the exporter's handle while the
	 * export file still holds the memory (the baseline of tests/adv
	 * fd_export one). Never for use. */
	bool                 test_no_export_pin;
	struct gs_audit     *audit;       /* NULL without --audit-log */
	bool                 stacks;      /* refusals are audited with their call stacks */
	FILE                *trace;       /* NULL without --trace */
	struct gs_pidfd_cache pidfds;
	struct gs_taskset    tasks;       /* which tasks are the sandbox's */
	unsigned             uvm_major;   /* 0 if unknown */
	uint64_t             counts[GS_COUNT_N];
	struct gs_refusals   refusals;      /* for the line on stderr at exit */
	uint64_t             notifications;
	atomic_bool          audit_failed;
	/* Who drives the sandbox (runner.c's thread for the command line);
	 * opaque here: the sandbox itself has no thread, and the notification,
	 * the answer and the executor's copies are the worker's. */
	struct gs_runner    *runner;
	/* Failing closed: set by whoever cannot go on (the runner, the
	 * compute share), which then kills the workload. */
	atomic_bool          failed;
	pid_t                workload;      /* killed if supervision fails */
	/* >= 0: the workload is killed through this pidfd instead (the
	 * agent's: a container's init is not our child, so its pid can be
	 * reused once it is reaped). Not owned: its holder closes it after
	 * every thread that may kill (the compute share's) is stopped. */
	int                  workload_pidfd;
	struct gs_error      thread_err;    /* why it failed */
	struct gs_gpu_entry  gpu_map[GS_MAX_GPUS];
	unsigned             n_gpu_map;
	/* Serialises the notify thread's handling of a call with the
	 * compute-share thread's use of the ledger and the driver, so a
	 * channel is never toggled while a call that frees it is in flight. */
	pthread_mutex_t      lock;
	struct gs_compute_share *sm;      /* NULL without --sm; only for the summary */
	struct gs_session_observer observer;
	pid_t                creators[GS_MAX_CREATORS];
	unsigned             n_creators, next_creator;
	/* GPUSANDBOX_PROFILE=1: supervisor-side time per call kind (an RM
	 * escape or trapped UVM command, and the class or control it
	 * names; GS_PROF_KINDS kinds, then one row for the rest): the
	 * handling up to the answer, of it the driver's time in the
	 * workload's own call and in ours (gs_driver_ioctl), and what is
	 * done after the answer (with SYNC_WAKE_UP, on the workload's path
	 * all the same). Added to under the session lock. */
	bool                 profile;
	struct gs_call_prof {
		bool     used, uvm;
		uint8_t  nr;
		uint32_t what;      /* the class or control, 0 for none */
		uint64_t n, ns, driver_ns, own_ns, after_ns, after_cpu_ns, after_own_ns;
		/* Waiting for the session lock: before the call began (not in
		 * ns) and when retaking it after a slow driver call (in ns). */
		uint64_t lock_ns;
	} prof[GS_PROF_KINDS + 1];
	/* GPUSANDBOX_TEST_MM_KEEP_NO_REOPEN (tests/adv exec_again's
	 * baseline): a write a kept answer memory did not take is not made
	 * again through a fresh open (answer_write). */
	bool                 test_mm_keep_no_reopen;
	/* A runner with several workers (runner.c) sets this: the executor
	 * calls it, with the lock held, before it drops the lock around a
	 * driver call known to be slow, so that another worker takes the
	 * listener meanwhile. NULL (the agent): the lock is never dropped. */
	void               (*release_receiver)(void *ctx, struct gs_scratch *scratch);
	void                *receiver_ctx;
	/* The same runner: is this task's trapped call received by one of
	 * its workers and not yet answered (quiesce.h, gs_task_held_fn)?
	 * NULL (the agent): one worker per listener, none is. */
	bool               (*task_held)(void *ctx, pid_t tid);
	/* GPUSANDBOX_TEST_NO_QUIESCE in the supervisor's own environment: the
	 * tests' baseline of client_fdswap, a continued client without its
	 * fd table held still. Never for use. */
	bool                 quiesce_off;
	/* Every quiesce of the sandbox until its tasks are let go
	 * (quiesce.h, gs_quiesce_who.live): a clone that makes a sharer of
	 * an fd table waits for none to be left (note_shared_table, executor.c). NULL when it
	 * could not be allocated: the session does not start. */
	struct gs_inflight  *quiesces_live;
	/* Quiesces whose continued caller may still be in the kernel, handed
	 * off by their worker (quiesce.h); under lock. */
	struct gs_quiesce_handoffs handoffs;
	/* What the searches for fd-table sharers of this sandbox compared
	 * (quiesce.h): the agent says it when a container is torn down. */
	struct gs_walk_stats walk_stats;
	/* Second clients made by their caller from a page of ours, in
	 * flight (inject.h): their injected ioctl, trapped by our own
	 * filter, is continued by the worker that receives it without the
	 * session lock, which the injecting worker holds. */
	struct gs_inject_marks inject_marks;
	/* GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE: a second client on a
	 * control file is continued from the workload's own struct instead
	 * of injected (the baseline of tests/adv client_flip:second). Never
	 * for use. */
	bool                 test_second_client_continue;
	/* GPUSANDBOX_TEST_QUIESCE_WAIT in the supervisor's own environment:
	 * the worker waits, under the session lock, until a continued
	 * caller has left its ioctl, as before issue #16's hand-off (the
	 * baseline of tests/adv uvm_channel overlap). Never for use. */
	bool                 test_quiesce_wait;
	/* GPUSANDBOX_TEST_CLONE_NO_WAIT: a clone that makes a sharer of an
	 * fd table is continued without waiting for the sandbox's quiesces
	 * (the baseline of tests/adv uvm_channel clone). Never for use. */
	bool                 test_clone_no_wait;
	/* GPUSANDBOX_TEST_NO_CALLER_BACK: a task's new trap does not let its
	 * handed-off quiesce go (gs_quiesce_caller_back; the baseline of
	 * tests/adv quick_return). Never for use. */
	bool                 test_no_caller_back;
	/* GPUSANDBOX_TEST_NO_KEEP: the references the driver keeps for a
	 * semaphore surface or memory mapper are not charged (ledger_keep):
	 * tests/adv sem_surf's baseline. */
	bool                 test_no_keep;
	/* GPUSANDBOX_TEST_CHANNEL_ANY_PARENT: a channel under a parent of no
	 * known GPU is made (exec_alloc.c channel_placed), and
	 * GPUSANDBOX_TEST_RESUME_ANY_OBJECT: a control that may resume
	 * channels is taken on any object (exec_control.c
	 * resumes_placed_object): the baselines of tests/sm/escape.sh. */
	bool                 test_channel_any_parent, test_resume_any_object;
	/* May an fd table of the sandbox be shared beyond a thread group?
	 * Set from the start unless the filter follows the clones that make
	 * one (gs_session_config.follows_shared_tables), and then by the
	 * first such clone (exec_clone, under the session lock, before the
	 * clone runs). Unset, a quiesce stops the caller's own sharing
	 * threads without a walk of every process (issue #16). */
	bool                 tables_shared;
	/* GPUSANDBOX_TEST_UVM_CTLFD in the supervisor's own environment: the
	 * tests' baselines of uvm_ctlfd, a UVM map whose rmCtrlFd is not
	 * checked to be the client's control file ("unchecked"), or checked
	 * only by its first look at the caller's fd table, its dup not again
	 * ("first-look"). Never for use. */
	enum gs_uvm_ctlfd_test {
		GS_UVM_CTLFD_CHECKED,
		GS_UVM_CTLFD_FIRST_LOOK,
		GS_UVM_CTLFD_UNCHECKED,
	} uvm_ctlfd_test;
	/* The driver's time per control seen so far (exec_escape), by
	 * command, to tell a slow call before it is made. Under lock. */
	struct gs_driver_time {
		uint32_t key;
		uint32_t ewma_us;
	} driver_time[GS_DRIVER_TIME_SLOTS];
};

struct gs_session_config {
	struct gs_quota  quota;
	/* The driver found at start: its RM tables and its GPUs. */
	const struct gs_driver *driver;
	const struct gs_rules *rules;     /* NULL: the built-in default */
	/* --learn: what the allowlist refuses is learned here instead; the
	 * sandbox then enforces learn->rules, which start as a copy of the
	 * policy's, and rules is not used. */
	struct gs_learn *learn;
	struct gs_audit *audit;
	bool             stacks;          /* audit refusals with their call stacks */
	/* The filter traps the clones that make a process share its
	 * creator's fd table (gs_filter_opts.follow_shared_tables): until one
	 * comes, no fd table of the sandbox is shared beyond a thread group.
	 * False: any may be (the agent's containers, whose history before
	 * their filter is not ours to know). */
	bool             follows_shared_tables;
	FILE            *trace;
	const char      *id;              /* NULL: a random one */
	/* --uvm-map as-user: maps made as uvm_map_uid (own_rm.h map_uid). */
	bool             uvm_map_as_user;
	uid_t            uvm_map_uid;
};

/* Asks the kernel for synchronous wake-up on a listener (where it has it):
 * every listener the supervisor serves, the CLI's and each of the agent's. */
void gs_listener_sync_wakeup(int listener);

int  gs_session_init(struct gs_session *sb, const struct gs_session_config *cfg, int listener,
                     struct gs_error *err);
void gs_session_fini(struct gs_session *sb);

/* Fills out with a random hex sandbox id. */
void gs_session_make_id(char *out, size_t len);

/* Prints the profile to stderr when GPUSANDBOX_PROFILE is set. */
void gs_session_print_profile(const struct gs_session *sb);

/* Releases charges of clients whose file was closed; audits the releases. */
void gs_session_reconcile(struct gs_session *sb);
/* A bounded share of it: up to LEDGER_REAP_SOME watched clients looked
 * at, in turn across calls, so that a call that only tidies the ledger
 * costs the same with 10 or 1000 clients (issue #16). Only where no
 * verdict rests on it: a quota or limit refusal reconciles in full first
 * (needs_reconcile, over_quota_reconciled), and an entry not yet reaped
 * only keeps a charge (the safe side). */
void gs_session_reconcile_some(struct gs_session *sb);
/* At the sandbox's end, after a full reconcile (every task gone): an
 * export file still open is held outside the sandbox, and the driver
 * keeps its memory outside any quota (docs/security/fd-export.md). Said
 * on stderr and in the audit log. Returns how many files. */
unsigned gs_session_note_exports_left(struct gs_session *sb);

/* Failing closed: SIGKILL to the workload (its pidfd when it has one). */
void gs_session_kill_workload(const struct gs_session *sb);

/* Tells the observer, if any, that channels on gpu may have resumed. */
void gs_session_emit_channels_may_resume(struct gs_session *sb, int gpu);
/* Tells the observer, if any, that a call after which channels may
 * resume goes to the driver (begin) or is done (!begin). */
void gs_session_emit_resume_call(struct gs_session *sb, bool begin);
/* Does an observer hold channels off at times (--sm)? Then the workload's
 * own scheduling controls must not reach the driver. */
bool gs_session_channels_observed(const struct gs_session *sb);


/* Remembers the process of task tid as the creator of an RM client. */
void gs_session_note_creator(struct gs_session *sb, pid_t tid);
/* Did process tgid create an RM client in this sandbox? */
bool gs_session_is_creator(const struct gs_session *sb, pid_t tgid);

#endif
