/* SPDX-License-Identifier: MIT */
/*
 * exec_int.h - what the executor's files share: the call in flight, the
 * answer, and the helpers that read and write the workload's memory,
 * perform calls through the dup of its fd, and shape refusals. Private to
 * supervisor/exec_*.c and executor.c.
 */
#ifndef GPUSANDBOX_EXEC_INT_H
#define GPUSANDBOX_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "arch.h"
#include "nvrm_abi.h"
#include "private_table.h"
#include "quiesce.h"
#include "rm_decode.h"
#include "rm_tables.h"
#include "scratch.h"
#include "session.h"
#include "verdict.h"
#include "workload.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define UVM_DEVICE_PATH "/dev/nvidia-uvm"
#define PTR32_MASK 0xffffffffull

/* ANSWER_DONE: answered already, by the injection's own steps
 * (exec_inject.c): recorded, not sent. */
enum answer_kind { ANSWER_VALUE, ANSWER_CONTINUE, ANSWER_NONE, ANSWER_DONE };

struct answer {
	enum answer_kind kind;
	int64_t          val;
	int              error;  /* positive errno, answered as -error */
};

/* Everything about the call in flight. */
struct call {
	struct gs_session   *sb;
	struct gs_scratch   *scratch; /* the worker's copies of nested levels */
	pid_t                tid;
	/* The trapped task's address space, where answers are written
	 * (workload.h), reached only through answer_mem: opened when the
	 * first write is due (or, for a call that always writes, before the
	 * fetch stage's ID_VALID), and written only once an ID_VALID made
	 * after the open proved it the trapped task's (mem_proven); closed
	 * when the call ends. A kept file (mem.kept) taken unlooked is
	 * proven by its slot's look instead (fetch_reads_proven). */
	struct gs_task_mem   mem;
	bool                 mem_proven;
	const struct gs_abi *abi;
	int                  wfd;     /* the workload's fd number */
	int                  dup;     /* our dup of it, or -1 */
	/* The worker's dup-cache slot dup came from or goes to (-1: none,
	 * dup is the call's own and closed after it), and whether dup may be
	 * kept there past the call (a control file: dup_for_call). */
	int                  dup_slot;
	bool                 dup_keep;
	/* dup is not ours to close: the fd of a UVM space the sandbox holds
	 * (uvm_maps.h), used as it is by a map, which runs with the session
	 * lock held from the look to the answer (route_uvm). */
	bool                 dup_borrowed;
	/* The caller was alone with its fd table before the look through
	 * /proc that found no driver file (dup_for_call): that look is
	 * final (continue_other_file). */
	bool                 alone_at_look;
	uint32_t             nr, size;
	uint64_t             argp;
	bool                 via_xfer;
	struct gs_decision   d;
	bool                 audit;   /* write d to the audit log */
	/* Nonzero (the control's command): the driver call may run without
	 * the session lock when it is known to be slow (exec_escape). Set only
	 * for a call whose verdict and effects need no atomicity across it. */
	uint32_t             off_lock_key;
	/* An object this call made and charged (RM_ALLOC performed), so that
	 * an answer the task never receives can be undone. */
	struct {
		bool        set;
		nv_handle_t client, parent, object;
	} made;
	/* The fd table held still for a continued client (quiesce.h), let go
	 * once the answer is in; NULL when nothing is held. */
	struct gs_quiesce   *quiesce;
	/* An RM_CONTROL's top-level struct read before the dup, to see
	 * whether --p2p-register answer takes it (answers_p2p_registration);
	 * when it does not, fetch_control uses this read, checked by
	 * ID_VALID after the dup. */
	struct nvos54        early_top;
	bool                 early_top_read;
	/* Answered by the supervisor, the driver never called (--trace
	 * says so). */
	bool                 answered;
	/* The call will be made by its caller from a page of ours
	 * (exec_inject.c): the quiesce stops the address space's sharers too. */
	bool                 inject;
	/* A trapped UVM command (route_uvm), for the profile's kind. */
	bool                 uvm;
	/* GPUSANDBOX_PROFILE: the clock and this thread's driver times
	 * (gs_driver_ns) when the call was received, then at its answer. */
	uint64_t             prof_t0, prof_cpu0, prof_drv0[2];
};

/* One injected second client (exec_inject.c). */
struct inject_flight {
	struct gs_inject_plan  plan;
	struct gs_inject_out   out;
	enum gs_inject_outcome outcome;
};
/* Can a second client be made by injection here (x86-64 call, a runner
 * that hands the listener on, a killable seccomp wait)? */
bool inject_possible(const struct call *c);
/* hold_judged_file for an injection: fd-table and address-space sharers
 * stopped, the caller seized. false with *why: refuse. */
bool inject_hold(struct call *c, const char **why);
/* Interrupts the caller, answers -ERESTARTNOINTR, runs fl->plan in it.
 * false: the task was gone before anything changed (answer nothing). */
bool inject_run(struct call *c, struct inject_flight *fl);
/* Into the stopped caller's memory (the driver's answer). */
int inject_write(const struct call *c, uint64_t addr, const void *buf, size_t len);
/* Gives the caller back with its ioctl returning ret, lets every task go,
 * and says what happened in c->d. */
struct answer inject_end(struct call *c, struct inject_flight *fl, long ret);


bool notif_still_valid(const struct call *c);
/* The answer's memory, for a write: c->mem, opened now if it is not yet
 * and proven the trapped task's by an ID_VALID after its open; its fd is
 * -1 (so the write fails, EFAULT) when it cannot be (exec_common.c says
 * why that order is sound). */
struct gs_task_mem *answer_mem(struct call *c);
/* The answer memory kept by the worker for this task (mm_keep.h) into
 * c->mem, proven; false when there is none. Tried before an open. */
bool take_kept_mem(struct call *c);
bool take_kept_mem_unlooked(struct call *c);
/* Writes into the answer's memory (mem_write, mem_write_changed2), once
 * more through a fresh open where a kept file took no write (the task
 * exec'd since it was kept, mm_keep.h). */
int answer_write(struct call *c, uint64_t addr, const void *buf, size_t len);
int answer_write_changed2(struct call *c, const struct gs_mem_out *a, const struct gs_mem_out *b);
/* The call is over: a file it opened and proved is kept for the task's
 * next call, anything else closed. */
void answer_mem_done(struct call *c);
/* A fetch's ID_VALID just proved the task the trapped one: an answer
 * memory opened before it is proven too. */
void note_fetch_valid(struct call *c);
/* After a fetch's reads by tid: proves them the trapped task's, with the
 * answer memory taken before them (a kept file's one look, else
 * ID_VALID). False: the task is not the trapped one; answer none. */
bool fetch_reads_proven(struct call *c);
/* Before a CONTINUE of a judged call: every task sharing the caller's fd
 * table stopped until the caller has left the ioctl (c->quiesce), and
 * c->wfd checked to name still the file judged: the one c->dup is of, or,
 * with no dup (c->dup -1), a file of no kind in judged (GS_NODE_BIT).
 * false, with *why, when it cannot be held (fail closed). */
bool hold_judged_file(struct call *c, unsigned judged, struct gs_inflight *track, const char **why);
/* The tests' GPUSANDBOX_TEST_LOOK_DELAY_US after a look at the caller's fd
 * table (exec_common.c); nothing in a release build. */
void test_look_delay(void);
/* The RM_ALLOC a dead agent was performing (c->made): freed through the
 * task's fd c->wfd, and from the ledger. True when freed (c->d says so). */
bool undo_resumed_alloc(struct call *c);
/* A second reach into the trapped task (its fd) after the fetch stage's
 * check: checked again after, -1 (errno ESRCH) when the task is gone and
 * its tid may name another process (its GPU nodes: exec_escape_private). */
int dup_trapped_fd(struct call *c, int wfd);
int fetch_top_bytes(struct call *c, void *top, size_t len);
/* The fetch stage's first step for every escape: the top-level struct
 * (fetch_top_bytes), then proof that the task it was read from is still
 * the trapped one. False with *a (EFAULT, or no answer) when the call
 * ends here. */
bool fetch_trapped_top(struct call *c, void *top, size_t len, struct answer *a);
int fetch_nested(struct call *c, uint64_t addr, void *buf, size_t len);
void keep_params(struct call *c, uint64_t addr, const void *params, size_t len);
int exec_escape(const struct call *c, uint32_t nr, uint32_t size, void *buf);
/* The session lock let go around a slow driver call, the listener handed
 * to another worker first (exec_escape says why that is safe); false,
 * the lock kept, where the runner cannot hand it over (the agent's
 * workers). exec_retake_lock takes it again when left. */
bool exec_leave_lock(const struct call *c);
void exec_retake_lock(const struct call *c, bool left);
enum gs_private_outcome exec_escape_private(const struct call *c, uint32_t nr, uint32_t size,
                                            void *buf, bool only_with_nodes, int *rc);
void undo_alloc(const struct call *c, nv_handle_t client, nv_handle_t parent, nv_handle_t obj);
int note_client(const struct call *c, nv_handle_t h_client);
int bind_client_for_charge(struct call *c, nv_handle_t h_client);
struct answer answer_value(int rc);
struct answer answer_errno(int e);
struct answer answer_continue(void);
struct answer answer_none(void);
struct answer answer_done(void);
struct answer refuse_with_status(struct call *c, void *top, size_t status_off,
                                        nv_status_t st, enum gs_verdict v, const char *why);
struct answer answer_executed(struct call *c, uint64_t nested_addr, const void *nested,
                                     size_t nested_len, const void *top, size_t top_len, int rc,
                                     nv_status_t st);
/* Would charging bytes on gpu exceed the quota, even after releasing the
 * clients of closed files (reconciled explicitly, only when over)? */
bool over_quota_reconciled(struct gs_session *sb, int gpu, uint64_t bytes);
void note_usage(struct call *c, int gpu, uint64_t before);
void note_release(struct call *c, const uint64_t released[GS_MAX_GPUS],
                  const uint64_t before[GS_MAX_GPUS]);
void note_count(struct call *c, const char *resource, uint32_t before, uint32_t after,
                       uint32_t limit);

/* Around the policy's verdicts (exec_policy.c). */
/* --learn: admits key, which the allowlist alone refused, when gpusandbox
 * knows it; the record then says that only learning let it through. */
bool policy_learns(struct call *c, bool is_control, uint32_t key);
/* The live count of quota kind k, counted as its row says. */
uint32_t count_of_kind(struct call *c, enum gs_quota_kind k);
/* usage's counts of the kinds the call rc counts against (its events,
 * gs_call_count_events, read from usage as filled so far). */
void take_counts(struct call *c, const struct gs_rm_call *rc, struct gs_usage *u);
/* The video engine sessions of engine e (exec_engines.c): over the whole
 * sandbox, with .held the objects of the group of (client, gpu): the
 * client's on the GPU, or for a kind whose sessions span clients the
 * GPU's. */
struct ledger_engine_count count_engine_sessions(struct call *c, enum gs_engine e, uint32_t client, int gpu);
/* u's count of e's kind for the video engine object rc makes, and
 * whether the object joins a session its group holds on that GPU
 * (u->engine_joins_session) rather than opening one. */
void take_engine_usage(struct call *c, const struct gs_rm_call *rc, enum gs_engine e, struct gs_usage *u);
/* An escape gpusandbox does not know, or one the driver does not handle:
 * refused with -EINVAL, as the driver refuses it, and audited. */
struct answer refuse_escape(struct call *c, const char *name, const char *why);

/* RM_ALLOC, RM_ALLOC_OBJECT and VID_HEAP_CONTROL, through the staged
 * pipeline (exec_alloc.c). */
struct answer handle_alloc(struct call *c);
/* The answer to c could not be delivered (the task's wait was interrupted
 * and the kernel abandoned the notification): frees the object c made and
 * releases its charge, when the client still lives on the task's file.
 * Returns true with c->d describing that RM_FREE, to be recorded. */
bool undo_abandoned_alloc(struct call *c);
struct answer handle_alloc_object(struct call *c);
struct answer handle_vid_heap(struct call *c);

/* The control path (exec_control.c). */
struct answer handle_control(struct call *c);
/* --p2p-register answer: true, with *a, when the trapped call is a
 * REGISTER_VIDMEM or UNREGISTER_VIDMEM answered NV_OK without the driver
 * and without a dup of the workload's fd (or the task is gone); false
 * when it must take the usual path. Before the dup. */
bool answers_p2p_registration(struct call *c, struct answer *a);

/* The OS_UNIX export and import controls (call.fd_export), with our
 * copy of their params (exec_fdexport.c): the caller's fd resolved once
 * into ours, the exports pinned, imports from elsewhere refused. */
struct answer handle_fd_export(struct call *c, struct nvos54 *top, uint64_t user_params, uint8_t *params,
                               uint32_t psize);

/* The GPU's process lists shown to the sandbox (exec_pids.c): GET_PIDS
 * keeps the sandbox's own processes, by the pids the caller sees;
 * GET_PID_INFO asks the driver only about them. Around the driver call,
 * on our copy of the params. */
struct gs_pid_rewrite {
	uint32_t n;
	int      depth;  /* the caller's PID namespace level */
	uint32_t seen[NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT], index[NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT];
	pid_t    host[NV2080_CTRL_GPU_GET_PID_INFO_MAX_COUNT];
};
bool gs_pids_rewrites(uint32_t cmd);
void gs_pids_before(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize,
                    struct gs_pid_rewrite *rw);
void gs_pids_after(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize,
                   const struct gs_pid_rewrite *rw);
/* The GPU's NVENC and NvFBC session statistics: zero (no session) for a
 * sandbox whose policy does not let it make such sessions; after a
 * successful driver call, on our copy of the params. */
void gs_session_stats_after(const struct call *c, uint32_t cmd, uint8_t *params, uint32_t psize);

/* RM_FREE, RM_DUP_OBJECT, RM_SHARE and REGISTER_FD (exec_handles.c). */
struct answer handle_free(struct call *c);
struct answer handle_dup(struct call *c);
struct answer handle_share(struct call *c);
struct answer handle_register_fd(struct call *c);

/* UVM's trapped commands on the UVM file c->dup (exec_uvm.c): the map,
 * performed from our copy; ALLOC_DEVICE_P2P, refused; REGISTER_CHANNEL,
 * continued with the caller held. space: the file's space when the
 * router found it held (gs_uvm_space_held), else -1. */
struct answer handle_uvm(struct call *c, uint32_t cmd, int space);

/* GPU visibility, --gpus (exec_visibility.c). */
bool gpu_instance_visible(struct call *c, nv_handle_t client, uint32_t instance);
/* The /dev/nvidiaN minor of the GPU with this device instance, or -1. */
int gpu_minor_of_instance(struct call *c, nv_handle_t client, uint32_t instance);
void visibility_after_control(struct call *c, struct nvos54 *top, uint32_t psize);
struct answer handle_card_info(struct call *c);

#endif
