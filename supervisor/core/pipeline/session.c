/* SPDX-License-Identifier: MIT */
/*
 * sandbox.c - one sandbox as an object: its buffers, its ledger's
 * reconciliation with the driver (released files), and the processes that
 * created its RM clients. Who drives it (a thread, an event loop) is the
 * runner's business (runner.c); what one call does, the executor's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "dupcache.h"
#include "rm_decode.h"
#include "rm_own.h"
#include "session.h"
#include "uvm_call.h"
#include "quiesce.h"
#include "sharers.h"
#include "stack.h"
#include "learn.h"
#include "test_switch.h"

#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define SANDBOX_ID_BYTES 8

void gs_session_make_id(char *out, size_t len)
{
	unsigned char raw[SANDBOX_ID_BYTES] = { 0 };

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw)) {
		/* Unique enough for a log when the pool is unavailable. */
		unsigned long long v = (unsigned long long)getpid() << 32 ^ (unsigned long long)time(NULL);
		memcpy(raw, &v, sizeof(raw));
	}
	for (size_t i = 0; i < sizeof(raw) && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* Synchronous wake-up (Linux 6.6+) cuts the cost of a trap from ~9 to
 * ~3 us on the GPU machines (design.md 1.11); older kernels say EINVAL and
 * we go on without it. */
void gs_listener_sync_wakeup(int listener)
{
	__u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;

	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags);
}

/* GPUSANDBOX_TEST_UVM_CTLFD (session.h); anything else: checked. */
static enum gs_uvm_ctlfd_test uvm_ctlfd_test_of(const char *v)
{
	if (v && strcmp(v, "unchecked") == 0)
		return GS_UVM_CTLFD_UNCHECKED;
	if (v && strcmp(v, "first-look") == 0)
		return GS_UVM_CTLFD_FIRST_LOOK;
	return GS_UVM_CTLFD_CHECKED;
}

int gs_session_init(struct gs_session *sb, const struct gs_session_config *cfg, int listener,
                    struct gs_error *err)
{
	memset(sb, 0, sizeof(*sb));
	sb->listener = listener;
	sb->workload_pidfd = -1;
	sb->quota = cfg->quota;
	sb->rm_abi = cfg->driver->rm_abi;
	/* The GPU map is the supervisor's own, read at start (driver.c). */
	memcpy(sb->gpu_map, cfg->driver->gpus, sizeof(sb->gpu_map));
	sb->n_gpu_map = cfg->driver->n_gpus;
	sb->rules = cfg->rules ? cfg->rules : gs_rules_builtin();
	/* Learning enforces the allowlist it grows, so a learned entry is an
	 * ordinary allow from its second use on. */
	sb->learn = cfg->learn;
	if (cfg->learn)
		sb->rules = &cfg->learn->rules;
	sb->quota.p2p_register = gs_p2p_register_effective(cfg->quota.p2p_register, sb->rules);
	sb->audit = cfg->audit;
	sb->stacks = cfg->stacks && cfg->audit && gs_stack_available();
	sb->trace = cfg->trace;
	gs_pidfd_cache_init(&sb->pidfds);
	sb->pidfds.test_no_park = gs_test_switch("GPUSANDBOX_TEST_NO_PARK") != NULL;
	/* The command line's sandbox: the workload we launched and all its
	 * descendants, with this process as their subreaper. */
	gs_taskset_process_tree(&sb->tasks, getpid());
	pthread_mutex_init(&sb->lock, NULL);
	gs_inject_marks_init(&sb->inject_marks);
	if (cfg->id)
		snprintf(sb->id, sizeof(sb->id), "%s", cfg->id);
	else
		gs_session_make_id(sb->id, sizeof(sb->id));
	gs_uvm_maps_init(&sb->uvm);
	struct gs_uvm_layout lay;
	sb->uvm.unregister_short = sb->rm_abi && gs_uvm_layout_of(sb->rm_abi, &lay) && lay.unregister_short;
	sb->uvm.test_settle_in_flight = gs_test_switch("GPUSANDBOX_TEST_SETTLE_IN_FLIGHT") != NULL;
	sb->uvm.test_no_pin_in_flight = gs_test_switch("GPUSANDBOX_TEST_NO_PIN_IN_FLIGHT") != NULL;
	sb->own = (struct gs_own_rm)GS_OWN_RM_INIT;
	sb->own.test_keep_share = gs_test_switch("GPUSANDBOX_TEST_KEEP_SHARE") != NULL;
	sb->own.test_share_per_map = gs_test_switch("GPUSANDBOX_TEST_SHARE_PER_MAP") != NULL;
	sb->own.test_no_reshare = gs_test_switch("GPUSANDBOX_TEST_NO_RESHARE") != NULL;
	if (cfg->uvm_map_as_user)
		sb->own.map_uid = cfg->uvm_map_uid;
	sb->test_mm_keep_no_reopen = gs_test_switch("GPUSANDBOX_TEST_MM_KEEP_NO_REOPEN") != NULL;
	sb->test_engine_objects = gs_test_switch("GPUSANDBOX_TEST_ENGINE_OBJECTS") != NULL;
	if (ledger_init(&sb->ledger) < 0)
		return gs_fail(err, ENOMEM, "allocating the ledger");
	sb->ledger.max_files = cfg->quota.files;
	gs_listener_sync_wakeup(listener);
	sb->uvm_major = gs_driver_uvm_major();
	gs_sharers_init();
	sb->profile = getenv("GPUSANDBOX_PROFILE") != NULL;
	if (sb->profile)
		gs_driver_timing = true;
	sb->quiesce_off = gs_test_switch("GPUSANDBOX_TEST_NO_QUIESCE") != NULL;
	sb->test_quiesce_wait = gs_test_switch("GPUSANDBOX_TEST_QUIESCE_WAIT") != NULL;
	sb->test_clone_no_wait = gs_test_switch("GPUSANDBOX_TEST_CLONE_NO_WAIT") != NULL;
	sb->test_no_caller_back = gs_test_switch("GPUSANDBOX_TEST_NO_CALLER_BACK") != NULL;
	sb->test_no_keep = gs_test_switch("GPUSANDBOX_TEST_NO_KEEP") != NULL;
	sb->test_channel_any_parent = gs_test_switch("GPUSANDBOX_TEST_CHANNEL_ANY_PARENT") != NULL;
	sb->test_resume_any_object = gs_test_switch("GPUSANDBOX_TEST_RESUME_ANY_OBJECT") != NULL;
	sb->test_second_client_continue = gs_test_switch("GPUSANDBOX_TEST_SECOND_CLIENT_CONTINUE") != NULL;
	if (!(sb->quiesces_live = gs_inflight_new()))
		return gs_fail(err, ENOMEM, "allocating the quiesce count");
	sb->tables_shared = !cfg->follows_shared_tables;
	sb->uvm_ctlfd_test = uvm_ctlfd_test_of(gs_test_switch("GPUSANDBOX_TEST_UVM_CTLFD"));
	/* The uvm_ctlfd baselines share per map, as when they were written:
	 * their swapped-in file must get the share's ioctl at every map, not
	 * at the client's first only (exec_uvm.c dup_for_map). */
	if (sb->uvm_ctlfd_test != GS_UVM_CTLFD_CHECKED)
		sb->own.test_share_per_map = true;
	sb->test_foreign_import = gs_test_switch("GPUSANDBOX_TEST_FOREIGN_IMPORT") != NULL;
	sb->test_no_export_pin = gs_test_switch("GPUSANDBOX_TEST_NO_EXPORT_PIN") != NULL;
	return 0;
}

void gs_session_fini(struct gs_session *sb)
{
	gs_pidfd_cache_fini(&sb->pidfds);
	gs_uvm_maps_fini(&sb->uvm, &sb->ledger);
	gs_fd_exports_fini(&sb->exports, &sb->ledger);
	gs_own_rm_close(&sb->own);
	gs_quiesce_handoffs_fini(&sb->handoffs);
	/* A tracing thread may outlive us: it holds its own reference. */
	gs_inflight_put(sb->quiesces_live);
	sb->quiesces_live = NULL;
	ledger_fini(&sb->ledger);
	gs_inject_marks_fini(&sb->inject_marks);
	pthread_mutex_destroy(&sb->lock);
	if (sb->listener >= 0)
		close(sb->listener);
	sb->listener = -1;
}

void gs_session_kill_workload(const struct gs_session *sb)
{
	if (sb->workload_pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, sb->workload_pidfd, SIGKILL, NULL, 0);
	else if (sb->workload > 0)
		(void)kill(sb->workload, SIGKILL);
}

void gs_session_print_profile(const struct gs_session *sb)
{
	if (!sb->profile)
		return;
	fprintf(stderr, "gpusandbox profile: %llu notifications\n", (unsigned long long)sb->notifications);
	fprintf(stderr, "  per call, us: to the answer (of it the driver's: the call's own, ours; "
	                "the rest is ours), then after the answer (wall, CPU, of it the driver's); "
	                "lock_wait: waiting for the session lock, before the call and inside it\n");
	for (unsigned i = 0; i <= GS_PROF_KINDS; i++) {
		const struct gs_call_prof *p = &sb->prof[i];
		const struct rm_escape *e = p->uvm ? NULL : rm_escape_find(sb->rm_abi, p->nr);
		const double n = (double)p->n * 1e3; /* ns to us per call */
		if (!p->n)
			continue;
		fprintf(stderr, "  %-4s 0x%02x %-14s 0x%-8x calls=%-7llu supervisor_us_per_call=%.2f driver=%.2f "
		                "own_driver=%.2f rest=%.2f after=%.2f after_cpu=%.2f after_driver=%.2f lock_wait=%.2f\n",
		        i == GS_PROF_KINDS ? "more" : p->uvm ? "uvm" : "rm", p->nr,
		        p->uvm ? "" : e ? e->name : "other", p->what, (unsigned long long)p->n, p->ns / n,
		        p->driver_ns / n, p->own_ns / n, ((double)p->ns - (double)p->driver_ns - (double)p->own_ns) / n,
		        p->after_ns / n, p->after_cpu_ns / n, p->after_own_ns / n, p->lock_ns / n);
	}
	gs_quiesce_print_profile(stderr);
	const struct gs_uvm_maps *m = &sb->uvm;
	if (m->n_registers)
		fprintf(stderr, "  uvm channels: %llu registrations continued, %llu made as the workload's uid, "
		                "%llu channel handles settled, unregisters: %llu ok, %llu found none, %llu failed\n",
		        (unsigned long long)(m->n_registers - m->n_registers_made),
		        (unsigned long long)m->n_registers_made, (unsigned long long)m->n_settled,
		        (unsigned long long)m->n_unreg_ok, (unsigned long long)m->n_unreg_none,
		        (unsigned long long)m->n_unreg_failed);
}

/* One FILE_CLOSE record per GPU of a reaped client, credited to the
 * process that created the client (it held the memory, not us). */
static void note_file_close(struct gs_session *sb, const struct ledger_owner *owner,
                            const uint64_t released[GS_MAX_GPUS],
                            const uint64_t before[GS_MAX_GPUS], const char *why)
{
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (!released[g])
			continue;
		if (sb->trace)
			fprintf(sb->trace, "[gpusandbox] released %llu bytes on gpu%u: client file of pid %d closed\n",
			        (unsigned long long)released[g], g, (int)owner->pid);
		if (!sb->audit)
			continue;
		struct gs_decision d = {
			.call = "FILE_CLOSE", .gpu = (int)g, .has_size = true, .size = released[g],
			.verdict = GS_VERDICT_RELEASE, .has_usage = true, .usage_before = before[g],
			.usage_after = sb->ledger.used[g], .quota = gs_quota_mem(&sb->quota, (int)g),
			/* No thread made this call: tid 0 says so. */
			.pid = owner->pid ? owner->pid : getpid(), .tid = 0,
			.comm = owner->pid ? owner->comm : NULL,
			.reason = why,
		};
		if (gs_audit_decision(sb->audit, &d) < 0)
			sb->audit_failed = true;
	}
}

/* Reaps dead clients, looking at up to max_checks watched clients for
 * each one reaped (UINT32_MAX: all of them, until none is dead); and the
 * mappings of UVM files released since (their VA space torn down, UVM's
 * references on the memory gone with it). */
static void reconcile_within(struct gs_session *sb, uint32_t max_checks)
{
	uint64_t released[GS_MAX_GPUS];
	uint64_t before[GS_MAX_GPUS];
	struct ledger_owner owner = { 0 };

	/* Channel handles that went while a registration was in flight are
	 * unregistered once none is (uvm_maps.h); no memory goes with them. */
	(void)gs_uvm_settle_unregisters(&sb->uvm, &sb->ledger);
	memset(released, 0, sizeof(released));
	memcpy(before, sb->ledger.used, sizeof(before));
	/* An export file released: the driver freed its dups of our memory
	 * (fd_exports.h); the pins go, and the memory with them when no
	 * handle is left. One kcmp a file: only in a full reconcile, which
	 * every quota refusal and the end of a run make first, not in the
	 * tidying a call does (a stale pin only charges longer). */
	if (max_checks == UINT32_MAX && gs_fd_exports_sweep(&sb->exports, &sb->ledger, released))
		note_file_close(sb, &owner, released, before, "the driver freed the exports of a closed file");
	memset(released, 0, sizeof(released));
	memcpy(before, sb->ledger.used, sizeof(before));
	if (gs_uvm_maps_reap(&sb->uvm, &sb->ledger, released))
		note_file_close(sb, &owner, released, before,
		                "the mappings of processes that exited were taken back");
	for (;;) {
		memset(released, 0, sizeof(released));
		memcpy(before, sb->ledger.used, sizeof(before));
		if (!ledger_reap_dead_client_within(&sb->ledger, max_checks, released, &owner))
			break;
		/* Memory of the closed file's clients that UVM still maps
		 * through a mapping we made goes back with it (uvm_maps.h). */
		(void)gs_uvm_maps_take_back_orphans(&sb->uvm, &sb->ledger, released);
		note_file_close(sb, &owner, released, before,
		                "the driver freed the clients of a closed file");
	}
}

void gs_session_reconcile(struct gs_session *sb)
{
	/* A full reconcile is what a refusal, the compute share and the end
	 * of a run rely on to see every closed file released: the files that
	 * only our workers' kept dups hold open go first (dupcache.h). */
	gs_dup_cache_drop_owner(sb);
	reconcile_within(sb, UINT32_MAX);
}

unsigned gs_session_note_exports_left(struct gs_session *sb)
{
	uint64_t held[GS_MAX_GPUS] = { 0 };

	if (!sb->exports.n)
		return 0;
	gs_fd_exports_held(&sb->exports, &sb->ledger, held);
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (!held[g])
			continue;
		fprintf(stderr, "gpusandbox: warning: %u export file(s) outlive the sandbox, holding %llu bytes "
		        "on GPU %u outside any quota (docs/security/fd-export.md)\n",
		        sb->exports.n, (unsigned long long)held[g], g);
		if (!sb->audit)
			continue;
		struct gs_decision d = {
			.call = "EXPORT_FILE", .gpu = (int)g, .has_size = true, .size = held[g],
			.verdict = GS_VERDICT_RELEASE, .pid = getpid(), .tid = 0,
			.reason = "an export file outlives the sandbox: the driver keeps its memory",
		};
		if (gs_audit_decision(sb->audit, &d) < 0)
			sb->audit_failed = true;
	}
	return sb->exports.n;
}

void gs_session_reconcile_some(struct gs_session *sb)
{
	reconcile_within(sb, LEDGER_REAP_SOME);
}

void gs_session_note_creator(struct gs_session *sb, pid_t tid)
{
	pid_t tgid = 0;
	char comm[2];

	gs_read_task(tid, &tgid, comm, sizeof(comm));
	if (tgid <= 0 || gs_session_is_creator(sb, tgid))
		return;
	sb->creators[sb->next_creator] = tgid;
	sb->next_creator = (sb->next_creator + 1) % GS_MAX_CREATORS;
	if (sb->n_creators < GS_MAX_CREATORS)
		sb->n_creators++;
}

bool gs_session_is_creator(const struct gs_session *sb, pid_t tgid)
{
	for (unsigned i = 0; i < sb->n_creators; i++)
		if (sb->creators[i] == tgid)
			return true;
	return false;
}

void gs_session_emit_channels_may_resume(struct gs_session *sb, int gpu)
{
	if (sb->observer.channels_may_resume)
		sb->observer.channels_may_resume(sb->observer.ctx, gpu);
}

void gs_session_emit_resume_call(struct gs_session *sb, bool begin)
{
	if (sb->observer.resume_call)
		sb->observer.resume_call(sb->observer.ctx, begin);
}

bool gs_session_channels_observed(const struct gs_session *sb)
{
	return sb->observer.channels_may_resume != NULL;
}
