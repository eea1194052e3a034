/* SPDX-License-Identifier: MIT */
/*
 * gpusandbox - run a command under a supervisor that enforces GPU memory
 * quotas at the NVIDIA ioctl boundary.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "arch.h"
#include "audit.h"
#include "audit_verify.h"
#include "compute_share.h"
#include "gpusandbox.h"
#include "exec_managed.h"
#include "launch.h"
#include "policy.h"
#include "filter.h"
#include "gpu_uuid.h"
#include "learn.h"
#include "quota.h"
#include "sandbox.h"

#define SIZE_BUF 32
#define ERR_BUF (GS_ERROR_MSG_MAX + 128)
#define REAP_ROUNDS 200
#define REAP_PAUSE_NS (5 * 1000 * 1000)
#define STAT_BUF 512
#define PATH_BUF 64

/* Signals gpusandbox passes on to the workload. */
static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define N_FORWARDED (sizeof(forwarded_signals) / sizeof(forwarded_signals[0]))

struct options {
	struct gs_quota quota;
	struct gs_rules rules;
	const char     *audit_path;
	int             audit_fd;       /* --audit-fd N, or -1 */
	const char     *learn_path;     /* --learn FILE, or NULL */
	bool            trace;
	bool            dump_filter;
	char          **argv;
	/* --policy: the file's audit-log, unless --audit-log overrides it. */
	char            policy_audit_path[PATH_MAX];
	bool            policy_loaded;
};

static const char usage_text[] =
	"Usage: gpusandbox [OPTIONS] [--] COMMAND [ARG...]\n"
	"       gpusandbox audit verify [--head HASH]... FILE...\n"
	"Run COMMAND under a supervisor that enforces GPU quotas at the NVIDIA\n"
	"driver's ioctl boundary. The workload cannot bypass it: static binaries\n"
	"and raw ioctls are held to the same limits as CUDA programs.\n"
	"\n"
	"Options:\n"
	"  --mem SIZE         video memory each GPU may hold for the whole process\n"
	"                     tree; SIZE is bytes or a number with a binary suffix\n"
	"                     k, m, g or t (1g = 1073741824). A refused allocation\n"
	"                     fails like a full GPU (NV_ERR_NO_MEMORY).\n"
	"  --channels N       at most N live GPFIFO channels in the whole sandbox;\n"
	"                     channels are a finite hardware pool shared by all\n"
	"                     tenants of a GPU. The next one fails like an\n"
	"                     exhausted pool (NV_ERR_INSUFFICIENT_RESOURCES).\n"
	"  --channel-groups N at most N live channel groups (TSGs)\n"
	"  --active-channel-groups N\n"
	"                     at most N channel groups scheduled at once\n"
	"                     (GPFIFO_SCHEDULE enabled)\n"
	"  --sm PCT           the workload's share of GPU time on each of its GPUs,\n"
	"                     1-100 (percent); enforced by switching its channels\n"
	"                     off and on with the driver's own control, tuned to\n"
	"                     the driver's measured utilization\n"
	"  --sm-period MS     duty-cycle period for --sm, 5-1000 ms (default 20);\n"
	"                     shorter keeps latency lower, longer is more exact\n"
	"  --managed MODE     managed (UVM) memory, which the driver does not count\n"
	"                     per process: allow-unaccounted (the default) lets\n"
	"                     it run outside --mem; deny refuses every managed\n"
	"                     allocation (CUDA: cudaErrorNotPermitted) and needs\n"
	"                     a driver without pageable memory access (HMM/ATS)\n"
	"  --gpus LIST        GPUs the workload may see and use, by index\n"
	"                     (nvidia-smi's) or UUID, e.g. 0 or 1,GPU-5d1e...;\n"
	"                     enforced in the driver's calls, not by environment\n"
	"                     variables\n"
	"  --audit-log FILE   append one JSON record per decision that matters,\n"
	"                     plus start, summary and seal records, to FILE\n"
	"                     (hash-chained: see 'gpusandbox audit verify')\n"
	"  --audit-fd N       write the audit log to open descriptor N (3 or\n"
	"                     above) instead; the workload never inherits it\n"
	"  --policy FILE      read limits, allowed groups of RM classes and\n"
	"                     controls, and video engine caps from FILE (see\n"
	"                     gpusandbox.policy(5)); options given on the command\n"
	"                     line override the file\n"
	"  --learn FILE       learning mode: classes and controls gpusandbox knows\n"
	"                     are allowed even where the policy refuses them, and\n"
	"                     at exit FILE gets the policy plus one entry for each\n"
	"                     (quotas and every other check still hold)\n"
	"  --list-groups      print the groups of RM classes and controls a\n"
	"                     policy can allow, with their members, and exit\n"
	"  --trace            print each decoded RM call to stderr\n"
	"  --dump-filter      print the seccomp filter and exit\n"
	"  -h, --help         show this help and exit\n"
	"  --version          show the version and exit\n"
	"\n"
	"Exit status: COMMAND's status, or 128+N if it was killed by signal N;\n"
	"125 if gpusandbox itself failed, 126 if COMMAND cannot be executed,\n"
	"127 if COMMAND was not found.\n"
	"\n"
	"See gpusandbox(1).\n";

static void die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpusandbox: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'gpusandbox --help' for more information.\n");
	exit(GS_EXIT_ERROR);
}

/* Reads the policy file into o; an invalid policy stops everything before
 * the workload starts. */
static void load_policy(struct options *o, const char *path)
{
	struct gs_policy *p = malloc(sizeof(*p));
	char diag[GS_POLICY_DIAG_MAX];

	if (!p) {
		fprintf(stderr, "gpusandbox: out of memory reading the policy\n");
		exit(GS_EXIT_ERROR);
	}
	gs_policy_init(p);
	if (gs_policy_load(path, p, diag, sizeof(diag)) < 0) {
		fputs(diag, stderr);
		fprintf(stderr, "gpusandbox: invalid policy; nothing was started\n");
		exit(GS_EXIT_ERROR);
	}
	o->quota = p->quota;
	o->rules = p->rules;
	if (p->has_audit_log) {
		snprintf(o->policy_audit_path, sizeof(o->policy_audit_path), "%s", p->audit_log);
		o->audit_path = o->policy_audit_path;
	}
	free(p);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_MEM = 256, OPT_AUDIT, OPT_TRACE, OPT_VERSION, OPT_DUMP, OPT_CHANNELS, OPT_GROUPS,
	       OPT_GPUS, OPT_ACTIVE, OPT_SM, OPT_SM_PERIOD, OPT_MANAGED,
	       /* The policy file (issue #5). */
	       OPT_POLICY, OPT_LIST_GROUPS, OPT_LEARN, OPT_AUDIT_FD };
	static const struct option longopts[] = {
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "audit-log", required_argument, NULL, OPT_AUDIT },
		{ "audit-fd", required_argument, NULL, OPT_AUDIT_FD },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "channel-groups", required_argument, NULL, OPT_GROUPS },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "active-channel-groups", required_argument, NULL, OPT_ACTIVE },
		{ "sm", required_argument, NULL, OPT_SM },
		{ "sm-period", required_argument, NULL, OPT_SM_PERIOD },
		{ "managed", required_argument, NULL, OPT_MANAGED },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "list-groups", no_argument, NULL, OPT_LIST_GROUPS },
		{ "learn", required_argument, NULL, OPT_LEARN },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "dump-filter", no_argument, NULL, OPT_DUMP },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, audit_seen = 0;
	bool gpus_seen = false;

	memset(o, 0, sizeof(*o));
	o->audit_fd = -1;
	gs_quota_init(&o->quota);
	gs_rules_default(&o->rules);
	opterr = 0;
	/* First pass: only --policy, so that the file sets the starting
	 * values and every other option, wherever it stands, overrides it. */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c != OPT_POLICY)
			continue;
		if (o->policy_loaded)
			die_usage("%s", "--policy given twice");
		load_policy(o, optarg);
		o->policy_loaded = true;
	}
	optind = 0; /* glibc: a full rescan */
	/* "+": stop at the first non-option, so COMMAND's own options are its. */
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			break; /* read in the first pass */
		case OPT_LIST_GROUPS:
			gs_groups_print(stdout, GS_GROUPS_DEFAULT);
			exit(0);
		case OPT_MEM:
			if (gs_parse_size(optarg, &o->quota.mem_per_gpu) < 0)
				die_usage("invalid --mem size '%s' (use bytes or k/m/g/t, e.g. 4g)", optarg);
			/* --mem is every GPU's quota: the file's gpu.N.mem go. */
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				o->quota.mem_gpu[g] = GS_MEM_GPU_UNSET;
			break;
		case OPT_AUDIT:
			o->audit_path = optarg;
			audit_seen |= 1;
			break;
		case OPT_AUDIT_FD:
			if (gs_parse_audit_fd(optarg, &o->audit_fd) < 0)
				die_usage("invalid --audit-fd '%s' (an open descriptor, 3 or above)", optarg);
			o->audit_path = NULL; /* over the policy file's audit-log */
			audit_seen |= 2;
			break;
		case OPT_LEARN:
			if (o->learn_path)
				die_usage("%s", "--learn given twice");
			o->learn_path = optarg;
			break;
		case OPT_CHANNELS:
			if (gs_parse_count(optarg, &o->quota.channels) < 0)
				die_usage("invalid --channels count '%s' (a positive number)", optarg);
			break;
		case OPT_GPUS: {
			const char *why = NULL;
			/* The command line's list replaces the file's. */
			if (!gpus_seen) {
				o->quota.visible_set = false;
				o->quota.visible = 0;
				o->quota.n_uuids = 0;
				gpus_seen = true;
			}
			if (gs_parse_gpus(optarg, &o->quota, &why) < 0) {
				fprintf(stderr, "gpusandbox: invalid --gpus '%s': %s\n", optarg, why);
				die_usage("%s", "bad GPU list");
			}
			break;
		}
		case OPT_ACTIVE:
			if (gs_parse_count(optarg, &o->quota.active_channel_groups) < 0)
				die_usage("invalid --active-channel-groups count '%s' (a positive number)", optarg);
			break;
		case OPT_GROUPS:
			if (gs_parse_count(optarg, &o->quota.channel_groups) < 0)
				die_usage("invalid --channel-groups count '%s' (a positive number)", optarg);
			break;
		case OPT_SM:
			if (gs_parse_percent(optarg, &o->quota.sm_percent) < 0)
				die_usage("invalid --sm share '%s' (a percentage, 1-100)", optarg);
			break;
		case OPT_SM_PERIOD:
			if (gs_parse_period_ms(optarg, &o->quota.sm_period_ms) < 0)
				die_usage("invalid --sm-period '%s' (milliseconds, 5-1000)", optarg);
			break;
		case OPT_MANAGED:
			if (gs_parse_managed(optarg, &o->quota.managed) < 0)
				die_usage("invalid --managed mode '%s' (deny or allow-unaccounted)", optarg);
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_DUMP:
			o->dump_filter = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			printf("gpusandbox %s\n", GPUSANDBOX_VERSION);
			exit(0);
		default:
			die_usage("unrecognized or incomplete option '%s'", argv[optind - 1]);
		}
	}
	if (audit_seen == 3)
		die_usage("%s", "--audit-log and --audit-fd are both given: choose one");
	o->argv = argv + optind;
	if (!o->dump_filter && !o->argv[0])
		die_usage("%s", "no COMMAND given");
}

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

/* Kills whatever is left of the workload once its main process has exited.
 * As a child subreaper we inherit every orphan of the tree, so "our
 * children" are exactly the workload's survivors; killing them repeatedly
 * until none is left also catches those orphaned while we were killing. */
static void kill_survivors(pid_t self)
{
	struct timespec pause = { 0, REAP_PAUSE_NS };

	for (int round = 0; round < REAP_ROUNDS; round++) {
		DIR *d = opendir("/proc");
		struct dirent *de;
		bool any = false;

		while (d && (de = readdir(d))) {
			char path[PATH_BUF], buf[STAT_BUF];
			int pid = atoi(de->d_name), ppid = 0;
			FILE *f;
			if (pid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/stat", pid);
			f = fopen(path, "re");
			if (!f)
				continue;
			if (fgets(buf, sizeof(buf), f)) {
				/* The comm field may hold spaces and parens: parse
				 * after the last ')'. */
				char *p = strrchr(buf, ')');
				if (p)
					sscanf(p + 1, " %*c %d", &ppid);
			}
			fclose(f);
			if (ppid == self) {
				kill(pid, SIGKILL);
				any = true;
			}
		}
		if (d)
			closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			any = true;
		if (!any && waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD)
			return;
		nanosleep(&pause, NULL);
	}
}

static int exit_code_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return GS_EXIT_SIGNAL_BASE + WTERMSIG(status);
	return GS_EXIT_ERROR;
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

int main(int argc, char **argv)
{
	struct options o;
	struct gs_error err = { 0 };
	/* Static: sealed by an exit handler if main returns early. */
	static struct gs_audit audit = { .fd = -1 };
	struct gs_sandbox sb;
	struct gs_compute_share sm = { 0 };
	struct gs_sandbox_config cfg = { 0 };
	struct gs_child child = { -1, -1 };
	struct gs_learn *learn = NULL;
	struct gs_filter_opts filter_opts = { 0 };
	sigset_t sigs;
	int sfd, code = GS_EXIT_ERROR, status = 0;
	bool child_done = false;

	if (argc > 1 && strcmp(argv[1], "audit") == 0)
		return gs_audit_command(argc - 1, argv + 1);
	parse_options(argc, argv, &o);
	filter_opts.trap_uvm_mmap = o.quota.managed == GS_MANAGED_DENY;
	if (gs_abi_resolve() < 0) {
		fprintf(stderr, "gpusandbox: libseccomp does not know ioctl on this machine\n");
		return GS_EXIT_ERROR;
	}
	if (o.dump_filter)
		return gs_filter_dump(STDOUT_FILENO, &filter_opts, &err) < 0 ? (report(&err, NULL), GS_EXIT_ERROR)
		                                                             : 0;

	/* The learned file's limits are the ones given, UUIDs unresolved; a
	 * file we could not write at the end is our error now, not after the
	 * run. */
	if (o.learn_path) {
		/* Static: tens of KiB, alive until exit. */
		static struct gs_learn learn_state;
		learn = &learn_state;
		gs_learn_init(learn, &o.quota, &o.rules);
		if (gs_learn_check_path(o.learn_path, &err) < 0)
			return report(&err, NULL), GS_EXIT_ERROR;
		cfg.learn = learn;
	}
	/* UUIDs become /dev/nvidiaN minors before anything runs: a typo is
	 * our error, not a sandbox that shows no GPU. */
	if (gs_resolve_gpu_uuids(&o.quota, &err) < 0)
		return report(&err, NULL), GS_EXIT_ERROR;
	cfg.quota = o.quota;
	cfg.rules = &o.rules;
	cfg.trace = o.trace ? stderr : NULL;
	/* Open the log before anything runs, so that a bad path is our error
	 * and the workload never runs unaudited. */
	if (o.audit_path || o.audit_fd >= 0) {
		char id[GS_SANDBOX_ID_LEN];
		gs_sandbox_make_id(id, sizeof(id));
		if ((o.audit_path ? gs_audit_open(&audit, o.audit_path, id, &err)
		                  : gs_audit_open_fd(&audit, o.audit_fd, id, &err)) < 0)
			return report(&err, NULL), GS_EXIT_ERROR;
		cfg.audit = &audit;
		cfg.id = audit.sandbox_id;
	}
	if (block_signals(&sigs) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		gs_fail(&err, errno, "setting up signal handling");
		return report(&err, &audit), GS_EXIT_ERROR;
	}
	/* Orphans of the workload become our children, so none escapes the
	 * clean-up at exit. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	/* Nothing in the workload may ptrace or read the supervisor. */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (gs_drop_supervisor_privileges(&err) < 0)
		return report(&err, &audit), GS_EXIT_ERROR;
	/* managed = deny must hold for every way into GPU memory UVM has; if
	 * the driver gives GPUs pageable memory, it cannot, and nothing
	 * starts. */
	if (o.quota.managed == GS_MANAGED_DENY && gs_managed_check_host(gs_find_uvm_major(), &err) < 0)
		return report(&err, &audit), GS_EXIT_ERROR;
	if (gs_launch(o.argv, &filter_opts, &child, &code, &err) < 0) {
		report(&err, &audit);
		return code;
	}
	if (gs_sandbox_init(&sb, &cfg, child.listener, &err) < 0) {
		report(&err, &audit);
		kill(child.pid, SIGKILL);
		kill_survivors(getpid());
		return GS_EXIT_ERROR;
	}
	if (cfg.audit && gs_audit_start(&audit, child.pid, o.argv, o.quota.mem_per_gpu,
	                                gs_managed_name(o.quota.managed)) < 0)
		sb.audit_failed = true;

	if (gs_sandbox_start(&sb, child.pid, &err) < 0) {
		report(&err, &audit);
		kill(child.pid, SIGKILL);
		kill_survivors(getpid());
		gs_sandbox_fini(&sb);
		return GS_EXIT_ERROR;
	}
	if (o.quota.sm_percent < GS_SM_UNLIMITED && gs_sm_start(&sm, &sb, &err) < 0) {
		report(&err, &audit);
		kill(child.pid, SIGKILL);
		kill_survivors(getpid());
		gs_sandbox_stop(&sb);
		gs_sandbox_fini(&sb);
		return GS_EXIT_ERROR;
	}
	/* The main thread only handles signals; the notify thread serves the
	 * listener. */
	while (!child_done) {
		struct signalfd_siginfo si;
		ssize_t n = read(sfd, &si, sizeof(si));

		if (n != (ssize_t)sizeof(si)) {
			if (n < 0 && errno == EINTR)
				continue;
			gs_fail(&err, errno, "reading signals");
			break;
		}
		if (si.ssi_signo == SIGCHLD) {
			pid_t p;
			int st;
			while ((p = waitpid(-1, &st, WNOHANG)) > 0)
				if (p == child.pid) {
					status = st;
					child_done = true;
				}
		} else if (is_forwarded((int)si.ssi_signo) && si.ssi_code <= 0) {
			/* Sent by a process (kill, sigqueue): pass it on.
			 * Terminal-generated signals (positive codes) already
			 * reached the workload's process group. */
			kill(child.pid, (int)si.ssi_signo);
		}
	}
	if (!child_done || atomic_load(&sb.failed)) {
		/* Supervisor failure: fail closed. The workload must not run on
		 * unsupervised. */
		if (atomic_load(&sb.failed))
			err = sb.thread_err;
		report(&err, &audit);
		kill(child.pid, SIGKILL);
		kill_survivors(getpid());
		gs_sm_stop(&sm);
		gs_sandbox_stop(&sb);
		/* What was learned up to the failure is still true. */
		if (learn)
			(void)save_learned(o.learn_path, learn, &audit);
		gs_sandbox_reconcile(&sb);
		gs_sandbox_summarize(&sb, -1, SIGKILL);
		gs_sandbox_fini(&sb);
		gs_audit_close(&audit);
		return GS_EXIT_ERROR;
	}
	kill_survivors(getpid());
	/* Channels the duty cycle has off come back on before we go. */
	gs_sm_stop(&sm);
	gs_sandbox_stop(&sb);
	gs_sandbox_reconcile(&sb);
	gs_sandbox_print_profile(&sb);
	code = exit_code_of(status);
	/* Also after a workload killed by a signal: what it needed until
	 * then is what the file is for. */
	if (learn && save_learned(o.learn_path, learn, &audit) < 0)
		code = GS_EXIT_ERROR;
	gs_sandbox_summarize(&sb, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	                     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	gs_sandbox_fini(&sb);
	/* The seal is the log's last record: its failure counts too. */
	if (gs_audit_close(&audit) < 0 || sb.audit_failed) {
		fprintf(stderr, "gpusandbox: writing the audit log failed\n");
		code = GS_EXIT_ERROR;
	}
	return code;
}
