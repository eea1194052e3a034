/* SPDX-License-Identifier: MIT */
/*
 * gpusandbox - run a command under a supervisor that enforces GPU memory
 * quotas at the NVIDIA ioctl boundary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pwd.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "arch.h"
#include "audit.h"
#include "check_mode.h"
#include "cmdline.h"
#include "compute_share.h"
#include "envcheck.h"
#include "driver.h"
#include "contain.h"
#include "gpusandbox.h"
#include "exec_managed.h"
#include "host_pids.h"
#include "launch.h"
#include "options.h"
#include "policy.h"
#include "private_table.h"
#include "rm_own.h"
#include "filter.h"
#include "gpu_uuid.h"
#include "learn.h"
#include "metrics.h"
#include "quota.h"
#include "runner.h"
#include "session.h"
#include "trace_out.h"
#include "test_switch.h"

#define ERR_BUF (GS_ERROR_MSG_MAX + 128)

/* Signals gpusandbox passes on to the workload. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))


static int block_signals(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaddset(set, forwarded_signals[i]);
	sigaddset(set, SIGCHLD);
	return sigprocmask(SIG_BLOCK, set, NULL);
}

static bool is_forwarded(int sig)
{
	for (size_t i = 0; i < N_FORWARDED; i++)
		if (forwarded_signals[i] == sig)
			return true;
	return false;
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return GS_EXIT_SIGNAL_BASE + WTERMSIG(status);
	return GS_EXIT_ERROR;
}

/* --metrics-file: the sandbox's figures now. A failed write is said once
 * and does not stop the workload: metrics are not the audit log. */
static void write_metrics(struct gs_session *sb, const char *path)
{
	static struct gs_metrics_snap snap; /* about 7 KiB */
	static bool warned;
	struct gs_error err = { 0 };
	char buf[ERR_BUF];

	if (!path)
		return;
	gs_metrics_snapshot(&snap, sb, NULL);
	if (gs_metrics_write(path, &snap, 1, &err) < 0 && !warned) {
		warned = true;
		gs_error_text(&err, buf, sizeof(buf));
		fprintf(stderr, "gpusandbox: warning: %s\n", buf);
	}
}

/* Waits for a signal, doing every GS_METRICS_INTERVAL_MS what is due: the
 * usage records the audit level holds back, and the metrics file. Returns
 * read(2)'s result on sfd. */
static ssize_t read_signal_ticking(int sfd, struct signalfd_siginfo *si, struct gs_session *sb,
                                   const char *metrics_path)
{
	const bool ticking = metrics_path || sb->audit;
	static uint64_t next_tick;
	const uint64_t interval = (uint64_t)GS_METRICS_INTERVAL_MS * 1000000ull;

	for (;;) {
		uint64_t now = gs_monotonic_ns();
		struct pollfd p = { sfd, POLLIN, 0 };

		if (!next_tick)
			next_tick = now + interval;
		if (ticking && now >= next_tick) {
			if (sb->audit && gs_audit_tick(sb->audit) < 0)
				sb->audit_failed = true;
			write_metrics(sb, metrics_path);
			next_tick = now + interval;
		}
		int wait_ms = ticking ? (int)((next_tick - now) / 1000000ull) + 1 : -1;
		if (poll(&p, 1, wait_ms) > 0)
			return read(sfd, si, sizeof(*si));
	}
}

static void report(const struct gs_error *err, struct gs_audit *audit)
{
	char buf[ERR_BUF];

	gs_error_text(err, buf, sizeof(buf));
	fprintf(stderr, "gpusandbox: %s\n", buf);
	if (audit && audit->fd >= 0)
		(void)gs_audit_error(audit, buf);
}

/* --learn: writes what the run needed, once the notify thread has stopped
 * and no workload process is left to race the write. Returns 0 or -1. */
static int save_learned(const char *path, const struct gs_learn *l, struct gs_audit *audit)
{
	struct gs_error err = { 0 };
	char *text = gs_learn_format(l);

	if (!text) {
		gs_fail(&err, ENOMEM, "--learn: formatting the policy");
		return report(&err, audit), -1;
	}
	if (gs_learn_save(path, text, &err) < 0) {
		free(text);
		return report(&err, audit), -1;
	}
	free(text);
	fprintf(stderr, "gpusandbox: --learn: wrote %s (%u entries beyond the policy)\n", path,
	        gs_learn_count(l));
	if (l->dropped)
		fprintf(stderr, "gpusandbox: --learn: %u more stayed refused: too many entries\n",
		        l->dropped);
	return 0;
}

/* Which driver answers, and which RM tables decode its calls: strict
 * unless --driver-abi says otherwise, and then said aloud. */
static int start_driver(const struct gs_cli_options *o, struct gs_driver *d)
{
	struct gs_error err = { 0 };
	char desc[ERR_BUF];

	if (gs_driver_detect(d, &err) < 0 || gs_driver_choose_abi(d, o->driver_abi, &err) < 0)
		return report(&err, NULL), -1;
	gs_driver_describe(d, desc, sizeof(desc));
	if (d->override && d->present)
		fprintf(stderr, "gpusandbox: warning: NVIDIA driver %s: its calls are decoded with "
		        "tables gpusandbox has not checked against it\n", desc);
	if (o->trace)
		fprintf(stderr, "gpusandbox: NVIDIA driver %s\n", desc);
	return 0;
}

/* Returned by a step of main that found nothing to stop the run for; any
 * other value is the exit status main returns at once. */
#define RUN_GOES_ON (-1)

/* Everything one run holds from the command line to the exit status. */
struct run {
	struct gs_cli_options o;
	struct gs_error err;       /* the failure a step reports, or the signal loop's */
	struct gs_audit *audit;    /* static in main: sealed at exit if main returns early */
	struct gs_driver driver;
	struct gs_filter_opts filter_opts;
	struct gs_session_config cfg;
	struct gs_learn *learn;    /* --learn, or NULL */
	bool no_device;            /* no /dev/nvidia* for the audit's start record */
	int sfd;                   /* the signalfd of the forwarded signals and SIGCHLD */
	struct gs_launch_spec spec;
	struct gs_child child;
	struct gs_session sb;
	struct gs_compute_share sm;
	int status;                /* COMMAND's wait status, once child_done */
};

/* The driver, its RM tables and the filter made for them; --dump-filter
 * ends here. */
static int choose_driver_and_filter(struct run *r)
{
	if (start_driver(&r->o, &r->driver) < 0)
		return GS_EXIT_ERROR;
	r->filter_opts.trap_uvm_mmap = r->o.quota.managed == GS_MANAGED_DENY;
	r->filter_opts.rm_abi = r->driver.rm_abi;
	/* The clones that share an fd table beyond a thread group are
	 * followed (filter.h, quiesce.h). GPUSANDBOX_TEST_NO_CLONE_TRACK, in
	 * our own environment: not trapped, while the session still takes
	 * none to have come (tests/adv client_fdswap:proc's baseline). */
	r->filter_opts.follow_shared_tables = gs_test_switch("GPUSANDBOX_TEST_NO_CLONE_TRACK") == NULL;
	r->filter_opts.test_free_untrapped = gs_test_switch("GPUSANDBOX_TEST_FREE_UNTRAPPED") != NULL;
	r->cfg.follows_shared_tables = true;
	if (gs_abi_resolve() < 0) {
		fprintf(stderr, "gpusandbox: libseccomp does not know ioctl on this machine\n");
		return GS_EXIT_ERROR;
	}
	if (r->o.dump_filter)
		return gs_filter_dump(STDOUT_FILENO, &r->filter_opts, &r->err) < 0
		               ? (report(&r->err, NULL), GS_EXIT_ERROR)
		               : 0;
	return RUN_GOES_ON;
}

/* --uvm-map as-user: the workload's memory becomes dup'able by every
 * process of its uid (own_rm.h, gs_own_rm_share_token), so the uid must
 * be one --user names, never 0 (every service of the host), and this
 * process must be able to act as it and come back (rm_own.h). Whether
 * the uid is the sandbox's alone is the operator's word: said in the
 * trace and the start record. */
static int check_map_as_user(struct run *r)
{
	const struct gs_contain *c = &r->o.contain;

	if (!c->user_arg) {
		fprintf(stderr, "gpusandbox: --uvm-map as-user needs --user: the workload's uid must be "
		        "the sandbox's alone\n");
		return -1;
	}
	if (c->uid == 0) {
		fprintf(stderr, "gpusandbox: --uvm-map as-user with uid 0: every root process of the host "
		        "could dup the sandbox's memory; give --user a uid of its own\n");
		return -1;
	}
	if (!gs_can_call_as(c->uid)) {
		fprintf(stderr, "gpusandbox: --uvm-map as-user needs a supervisor running as root "
		        "(real, effective and saved uid 0) that can take uid %u\n", (unsigned)c->uid);
		return -1;
	}
	r->cfg.uvm_map_as_user = true;
	r->cfg.uvm_map_uid = c->uid;
	/* A look now, not a proof for later: the uid is the operator's word. */
	unsigned others = gs_processes_of_uid(c->uid);
	if (others)
		fprintf(stderr, "gpusandbox: warning: --uvm-map as-user: %u process(es) of uid %u run outside "
		        "the sandbox now; each could dup the sandbox's GPU memory\n", others, (unsigned)c->uid);
	return 0;
}

/* --learn, the GPUs and the containment: every limit the session will
 * hold, settled before anything runs. */
static int settle_limits(struct run *r)
{
	/* The learned file's limits are the ones given, UUIDs unresolved; a
	 * file we could not write at the end is our error now, not after the
	 * run. */
	if (r->o.learn_path) {
		/* Static: tens of KiB, alive until exit. */
		static struct gs_learn learn_state;
		r->learn = &learn_state;
		gs_learn_init(r->learn, r->driver.rm_abi, &r->o.quota, &r->o.rules);
		if (gs_learn_check_path(r->o.learn_path, &r->err) < 0)
			return report(&r->err, NULL), GS_EXIT_ERROR;
		r->cfg.learn = r->learn;
	}
	/* UUIDs become /dev/nvidiaN minors before anything runs: a typo is
	 * our error, not a sandbox that shows no GPU. */
	if (gs_resolve_gpu_uuids(&r->o.quota, &r->err) < 0 ||
	    gs_driver_check_gpus(&r->driver, &r->o.quota, &r->err) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	r->o.contain.hidden_gpu_nodes = gs_driver_hidden_minors(&r->driver, &r->o.quota);
	if (gs_contain_prepare(&r->o.contain, &r->err) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	if (r->o.uvm_map_as_user && check_map_as_user(r) < 0)
		return GS_EXIT_ERROR;
	r->cfg.quota = r->o.quota;
	r->cfg.driver = &r->driver;
	r->cfg.rules = &r->o.rules;
	return RUN_GOES_ON;
}

/* Keeps the workload away from its audit log (audit_guard.h): the file
 * append-only, and the log masked in the workload's mount namespace (its
 * directory, or the file alone), before anything runs. The test switches
 * (tests/adv audit_reach's baselines) turn off both, or the mask alone;
 * the start record says what was in force. */
static int guard_audit_log(struct run *r)
{
	struct gs_audit_guard *g = &r->audit->guard;
	char cwd[PATH_MAX];

	if (gs_test_switch("GPUSANDBOX_TEST_NO_AUDIT_GUARD")) {
		gs_audit_guard_no_mask(g, "turned off for a test (GPUSANDBOX_TEST_NO_AUDIT_GUARD)");
		return 0;
	}
	gs_audit_guard_file(g, r->audit->fd);
	if (gs_test_switch("GPUSANDBOX_TEST_NO_AUDIT_MASK")) {
		gs_audit_guard_no_mask(g, "turned off for a test (GPUSANDBOX_TEST_NO_AUDIT_MASK)");
		return 0;
	}
	gs_audit_guard_mask_target(g, r->audit->fd, r->o.audit_path, getcwd(cwd, sizeof(cwd)));
	return g->mask == GS_AUDIT_MASK_NONE ? 0 : gs_contain_mask(&r->o.contain, g->mask_path, &r->err);
}

/* The trace, the audit log and the metrics file, each opened or checked
 * now so that a bad path is our error and the workload never runs
 * unaudited. */
static int open_outputs(struct run *r)
{
	if (r->o.trace && !(r->cfg.trace = gs_trace_open(r->o.trace_output, r->o.trace_time, &r->err)))
		return report(&r->err, NULL), GS_EXIT_ERROR;
	/* The P2P registration controls do not reach the driver: a trace of
	 * cuMemAlloc shows fewer driver calls, and GPUDirect cannot reach the
	 * sandbox's memory. Said only when asked for: the default adds no
	 * line (its trace marks the P2P object's answer). */
	if (r->cfg.trace && r->o.quota.p2p_register == GS_P2P_REGISTER_ANSWER)
		fprintf(r->cfg.trace, "[gpusandbox] p2p-register answer: the P2P registration controls are "
		        "answered without the driver\n");
	if (r->cfg.trace && r->o.quota.p2p_register == GS_P2P_REGISTER_NONE)
		fprintf(r->cfg.trace, "[gpusandbox] p2p-register none: no third-party P2P object, so no "
		        "registration controls\n");
	if (r->cfg.trace && r->cfg.uvm_map_as_user)
		fprintf(r->cfg.trace, "[gpusandbox] uvm-map as-user: maps are made with uid %u, and every "
		        "process of that uid may dup the sandbox's memory\n", (unsigned)r->cfg.uvm_map_uid);
	r->no_device = gs_env_warn(stderr, &r->o.quota);
	if (r->o.audit_path || r->o.audit_fd >= 0) {
		char id[GS_SANDBOX_ID_LEN];
		gs_session_make_id(id, sizeof(id));
		if ((r->o.audit_path ? gs_audit_open(r->audit, r->o.audit_path, id, &r->err)
		                     : gs_audit_open_fd(r->audit, r->o.audit_fd, id, &r->err)) < 0)
			return report(&r->err, NULL), GS_EXIT_ERROR;
		r->audit->level = r->o.audit_level;
		r->cfg.stacks = r->o.audit_stacks;
		r->cfg.audit = r->audit;
		r->cfg.id = r->audit->sandbox_id;
		if (guard_audit_log(r) < 0)
			return report(&r->err, r->audit), GS_EXIT_ERROR;
	}
	/* The metrics file's place is checked now (a file with no samples),
	 * so that a bad path is our error before anything runs. */
	if (r->o.metrics_path && gs_metrics_write(r->o.metrics_path, NULL, 0, &r->err) < 0)
		return report(&r->err, r->audit), GS_EXIT_ERROR;
	return RUN_GOES_ON;
}

/* The supervisor's own guards, the last checks before the launch. */
static int guard_supervisor(struct run *r)
{
	sigset_t sigs;

	if (block_signals(&sigs) < 0 || (r->sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		gs_fail(&r->err, errno, "setting up signal handling");
		return report(&r->err, r->audit), GS_EXIT_ERROR;
	}
	/* Nothing in the workload may ptrace or read the supervisor, nor
	 * anything else of its uid (the workload cannot even name it: it
	 * has no pid in the sandbox's PID namespace). */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* managed = deny must hold for every way into GPU memory UVM has; if
	 * the driver gives GPUs pageable memory, it cannot, and nothing
	 * starts. */
	if (r->o.quota.managed == GS_MANAGED_DENY &&
	    gs_managed_check_host(gs_driver_uvm_major(), &r->err) < 0)
		return report(&r->err, r->audit), GS_EXIT_ERROR;
	return RUN_GOES_ON;
}

/* The start record names COMMAND's process (the init's if unknown), the
 * uid and user it runs as (--user's, else ours: the workload keeps our
 * uid), the working directory it starts in (ours) and the policy file. */
static void audit_start(struct run *r)
{
	const struct gs_contain *c = &r->o.contain;
	const uid_t uid = c->change_identity ? c->uid : getuid();
	const struct passwd *pw = getpwuid(uid);
	char cwd[PATH_MAX];
	const struct gs_audit_start start = {
		.child = r->child.command_pid > 0 ? r->child.command_pid : r->child.pid,
		.argv = r->o.argv, .quota = &r->o.quota, .rules = &r->o.rules,
		.driver = &r->driver, .labels = &r->o.labels, .stacks = r->sb.stacks,
		.uid = (long)uid, .user = pw ? pw->pw_name : NULL,
		.cwd = getcwd(cwd, sizeof(cwd)), .policy_file = r->o.policy_path,
		.uvm_map_as_user = r->cfg.uvm_map_as_user,
	};

	r->audit->no_nvidia_device = r->no_device;
	if (r->cfg.audit && gs_audit_start(r->audit, &start) < 0)
		r->sb.audit_failed = true;
}

/* Starts the workload and the session that supervises it; on a failure
 * the workload is killed before it runs a call unsupervised. */
static int launch_supervised(struct run *r)
{
	int code = GS_EXIT_ERROR;

	r->spec.argv = r->o.argv;
	r->spec.filter = &r->filter_opts;
	r->spec.contain = &r->o.contain;
	/* Still one thread: the fd table grows now, not under the walks, and
	 * the host's processes are remembered before the workload runs. */
	gs_host_pids_prepare();
	if (gs_launch(&r->spec, &r->child, &code, &r->err) < 0)
		return report(&r->err, r->audit), code;
	/* Only now: the init needed CAP_SYS_ADMIN for its namespaces. No call
	 * is performed for the workload before the notify thread starts. The
	 * device allocations' spawner after the drop: its helpers inherit its
	 * capabilities, and the driver judges privilege by the calling thread
	 * (private_table.h). */
	if (gs_drop_supervisor_privileges(&r->err) < 0 ||
	    gs_private_table_start(&r->err) < 0 ||
	    gs_session_init(&r->sb, &r->cfg, r->child.listener, &r->err) < 0) {
		report(&r->err, r->audit);
		gs_launch_kill(&r->child);
		return GS_EXIT_ERROR;
	}
	audit_start(r);
	if (gs_session_start(&r->sb, r->child.pid, &r->err) < 0) {
		report(&r->err, r->audit);
		gs_launch_kill(&r->child);
		gs_session_fini(&r->sb);
		return GS_EXIT_ERROR;
	}
	if (r->o.quota.sm_percent < GS_SM_UNLIMITED && gs_sm_start(&r->sm, &r->sb, &r->err) < 0) {
		report(&r->err, r->audit);
		gs_launch_kill(&r->child);
		gs_session_stop(&r->sb);
		gs_session_fini(&r->sb);
		return GS_EXIT_ERROR;
	}
	return RUN_GOES_ON;
}

/* Reaps what SIGCHLD announced; true once COMMAND's process is gone.
 * __WNOTHREAD: only this thread's children (the init). A wait of the
 * whole process would also take the ptrace stops of the tasks a
 * quiesce holds (quiesce.c): they are traced by another thread of ours. */
static bool reap_children(struct run *r)
{
	bool child_done = false;
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG | __WNOTHREAD)) > 0)
		if (p == r->child.pid) {
			r->status = gs_launch_command_status(&r->child, st);
			child_done = true;
		}
	return child_done;
}

/* The main thread only handles signals; the notify thread serves the
 * listener. Returns true when the workload ended, false when reading
 * signals failed (r->err says why). */
static bool wait_for_workload(struct run *r)
{
	for (;;) {
		struct signalfd_siginfo si;
		ssize_t n = read_signal_ticking(r->sfd, &si, &r->sb, r->o.metrics_path);

		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			gs_fail(&r->err, errno, "reading signals");
			return false;
		}
		if (si.ssi_signo == SIGCHLD) {
			if (reap_children(r))
				return true;
		} else if (is_forwarded((int)si.ssi_signo) && si.ssi_code <= 0) {
			/* Sent by a process (kill, sigqueue): pass it on.
			 * Terminal-generated signals (positive codes) already
			 * reached the workload's process group. */
			kill(r->child.pid, (int)si.ssi_signo);
		}
	}
}

/* Supervisor failure: fail closed. The workload must not run on
 * unsupervised. */
static int fail_closed(struct run *r)
{
	gs_launch_kill(&r->child);
	gs_sm_stop(&r->sm);
	gs_session_stop(&r->sb);
	/* Read only now: the threads that write it are joined (a thread sets
	 * failed first, then thread_err). */
	if (atomic_load(&r->sb.failed))
		r->err = r->sb.thread_err;
	report(&r->err, r->audit);
	/* What was learned up to the failure is still true. */
	if (r->learn)
		(void)save_learned(r->o.learn_path, r->learn, r->audit);
	gs_session_reconcile(&r->sb);
	gs_session_summarize(&r->sb, -1, SIGKILL);
	write_metrics(&r->sb, r->o.metrics_path);
	(void)gs_refusals_print(&r->sb.refusals, &r->sb.quota, stderr);
	gs_session_fini(&r->sb);
	gs_audit_close(r->audit);
	return GS_EXIT_ERROR;
}

/* The init is reaped: the kernel has ended every task of the sandbox.
 * Returns COMMAND's exit status, or ours where what we owe failed. */
static int finish_run(struct run *r)
{
	const int status = r->status;
	int code;

	/* Channels the duty cycle has off come back on before we go. */
	gs_sm_stop(&r->sm);
	gs_session_stop(&r->sb);
	gs_session_reconcile(&r->sb);
	(void)gs_session_note_exports_left(&r->sb);
	gs_session_print_profile(&r->sb);
	code = exit_code_of(status);
	/* Also after a workload killed by a signal: what it needed until
	 * then is what the file is for. */
	if (r->learn && save_learned(r->o.learn_path, r->learn, r->audit) < 0)
		code = GS_EXIT_ERROR;
	gs_session_summarize(&r->sb, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	                     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	write_metrics(&r->sb, r->o.metrics_path);
	/* Even without --audit-log: why the workload saw out-of-memory. */
	(void)gs_refusals_print(&r->sb.refusals, &r->sb.quota, stderr);
	gs_session_fini(&r->sb);
	/* The seal is the log's last record: its failure counts too. */
	if (gs_audit_close(r->audit) < 0 || r->sb.audit_failed) {
		fprintf(stderr, "gpusandbox: writing the audit log failed\n");
		code = GS_EXIT_ERROR;
	}
	return code;
}

/* --check's checks of what the run checks before it starts, the same way
 * and with the same messages: the users and groups named, the GPUs named
 * (against the driver's own listing, as a run; with no driver here they
 * cannot be, and that is a warning), and the places of the output files
 * (nothing is created). Adds the warnings it prints to *warnings.
 * Returns 0, or -1 with r->err. */
static int check_as_run(struct run *r, unsigned *warnings)
{
	struct gs_quota *q = &r->o.quota;

	if (gs_contain_check_identity(&r->o.contain, &r->err) < 0 ||
	    gs_check_output_places(r->o.audit_path, r->o.trace_output, r->o.metrics_path, &r->err) < 0 ||
	    (r->o.learn_path && gs_learn_check_path(r->o.learn_path, &r->err) < 0))
		return -1;
	if (gs_driver_detect(&r->driver, &r->err) < 0 || gs_driver_choose_abi(&r->driver, r->o.driver_abi, &r->err) < 0)
		return -1;
	if (r->driver.present)
		return gs_resolve_gpu_uuids(q, &r->err) < 0 || gs_driver_check_gpus(&r->driver, q, &r->err) < 0 ? -1 : 0;
	/* Without the device node the environment's warning says it (no
	 * NVIDIA device: gpus has nothing to enforce). */
	if ((q->visible_set || q->n_uuids) && gs_have_nvidia_device()) {
		fprintf(stderr, "gpusandbox: warning: no NVIDIA driver answers here: the GPUs named (gpus) "
		                "are not checked\n");
		(*warnings)++;
	}
	return 0;
}

/* --check: everything a run would refuse before starting, then the
 * effective policy and what in it cannot take effect. Nothing runs. Every
 * warning printed is counted in the closing line. */
static int check_only(struct run *r)
{
	const struct gs_cli_options *o = &r->o;
	const struct gs_check_input in = { &o->quota, &o->rules, o->policy_path, o->audit_path,
		                           o->audit_level, o->audit_stacks };
	unsigned warnings = 0, env = 0;

	if (check_as_run(r, &warnings) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	gs_check_print(stdout, &in);
	warnings += gs_check_warn(stderr, &in);
	(void)gs_env_warnings(stderr, &o->quota, &env);
	warnings += env;
	if (o->argv && o->argv[0])
		fprintf(stderr, "gpusandbox: --check: COMMAND (%s) is not run nor looked up\n", o->argv[0]);
	fprintf(stderr, "gpusandbox: --check: valid (%u warning%s); nothing was run\n", warnings,
	        warnings == 1 ? "" : "s");
	return 0;
}

/* The run's steps in order; the first that stops the run gives the exit
 * status. */
static int run_sandbox(struct run *r)
{
	int code;

	if (gs_check_output_paths(r->o.audit_path, r->o.learn_path, r->o.trace_output,
	                          r->o.metrics_path, &r->err) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	if (r->o.check)
		return check_only(r);
	if ((code = choose_driver_and_filter(r)) != RUN_GOES_ON ||
	    (code = settle_limits(r)) != RUN_GOES_ON || (code = open_outputs(r)) != RUN_GOES_ON ||
	    (code = guard_supervisor(r)) != RUN_GOES_ON || (code = launch_supervised(r)) != RUN_GOES_ON)
		return code;
	if (!wait_for_workload(r) || atomic_load(&r->sb.failed))
		return fail_closed(r);
	return finish_run(r);
}

int main(int argc, char **argv)
{
	/* Static: sealed by an exit handler if main returns early. */
	static struct gs_audit audit = { .fd = -1 };
	/* Static: the session and the options are large, and live until exit. */
	static struct run r;

	r.audit = &audit;
	r.child = (struct gs_child){ .pid = -1, .listener = -1, .status_fd = -1 };
	r.spec = (struct gs_launch_spec){ .forwarded = forwarded_signals, .n_forwarded = N_FORWARDED };
	/* Our command line's strings, for the init to blank (launch.h). */
	r.spec.own_args = argv[0];
	r.spec.own_args_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	gs_subcommand_dispatch(&argc, &argv);
	/* Before anything else reads the environment or the workload exists. */
	gs_driver_nodes_init();
	gs_parse_command_line(argc, argv, &r.o);
	return run_sandbox(&r);
}
