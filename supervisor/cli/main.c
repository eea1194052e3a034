/* SPDX-License-Identifier: MIT */
/*
 * gpusandbox - run a command under a supervisor that enforces GPU memory
 * quotas at the NVIDIA ioctl boundary.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
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
#include "compute_share.h"
#include "envcheck.h"
#include "driver.h"
#include "contain.h"
#include "gpusandbox.h"
#include "exec_managed.h"
#include "launch.h"
#include "options.h"
#include "policy.h"
#include "filter.h"
#include "gpu_uuid.h"
#include "learn.h"
#include "metrics.h"
#include "quota.h"
#include "runner.h"
#include "session.h"
#include "trace_out.h"

#define SIZE_BUF 32
#define ERR_BUF (GS_ERROR_MSG_MAX + 128)

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
	const char     *trace_output;   /* --trace-output FILE, or NULL */
	enum gs_trace_time trace_time;
	bool            dump_filter;
	bool            check;          /* --check: validate, run nothing */
	const char     *policy_path;
	char          **argv;
	/* --policy: the file's audit-log, unless --audit-log overrides it. */
	char            policy_audit_path[PATH_MAX];
	bool            policy_loaded;
	const char     *driver_abi;     /* --driver-abi, or NULL: strict */
	struct gs_contain contain;      /* --user, --group, --groups, --hide */
	struct gs_audit_labels labels;  /* --label KEY=VALUE, for the start record */
	enum gs_audit_level audit_level; /* --audit-level */
	bool            audit_stacks;   /* --audit-stacks on|off */
	const char     *metrics_path;   /* --metrics-file, or NULL */
};

static const char usage_text[] =
	"Usage: gpusandbox [run] [OPTIONS] [--] COMMAND [ARG...]\n"
	"       gpusandbox --check [OPTIONS]\n"
	"       gpusandbox list-groups\n"
	"       gpusandbox audit VIEW [OPTIONS] FILE...  (summary, denials, timeline,\n"
	"                  usage, plot, verify: gpusandbox audit --help)\n"
	"       gpusandbox agent|profile [SUBCOMMAND OPTIONS]\n"
	"Run COMMAND under a supervisor that enforces GPU quotas at the NVIDIA\n"
	"driver's ioctl boundary. The workload cannot bypass it: static binaries\n"
	"and raw ioctls are held to the same limits as CUDA programs.\n"
	"\n"
	"Options:\n"
	"  --mem SIZE         video memory each GPU may hold for the whole process\n"
	"                     tree; SIZE is bytes or a number with a binary suffix\n"
	"                     k, m, g or t (1g = 1073741824; 4096 is 4 KiB, 4096m\n"
	"                     is 4 GiB), at least 64m, room for a CUDA context. A\n"
	"                     refused allocation fails like a full GPU\n"
	"                     (NV_ERR_NO_MEMORY).\n"
	"  --channels N       at most N live GPFIFO channels in the whole sandbox;\n"
	"                     channels are a finite hardware pool shared by all\n"
	"                     tenants of a GPU. The next one fails like an\n"
	"                     exhausted pool (NV_ERR_INSUFFICIENT_RESOURCES).\n"
	"                     Default 640; N may be 'unlimited'.\n"
	"  --channel-groups N at most N live channel groups (TSGs); default 128,\n"
	"                     which bounds the memory RM allocates for them\n"
	"                     outside --mem; N may be 'unlimited'\n"
	"  --active-channel-groups N\n"
	"                     at most N channel groups scheduled at once\n"
	"                     (GPFIFO_SCHEDULE enabled)\n"
	"  --sm PCT           the workload's share of GPU time on each of its GPUs,\n"
	"                     1-100 (percent); enforced by switching its channels\n"
	"                     off and on with the driver's own control, tuned to\n"
	"                     the driver's measured utilization\n"
	"  --sm-period MS     duty-cycle period for --sm, 5-1000 ms (default 20);\n"
	"                     shorter keeps latency lower, longer is more exact\n"
	"  --sm-mode MODE     what --sm means: cap (the default) never more than\n"
	"                     PCT; guarantee at least PCT when others are busy,\n"
	"                     and time other sandboxes leave idle on top\n"
	"  --managed MODE     managed (UVM) memory, which the driver does not count\n"
	"                     per process: allow-unaccounted (the default) lets\n"
	"                     it run outside --mem; deny refuses every managed\n"
	"                     allocation (CUDA: cudaErrorNotPermitted) and needs\n"
	"                     a driver without pageable memory access (HMM/ATS)\n"
	"  --gpus LIST        GPUs the workload may see and use, by index\n"
	"                     (nvidia-smi's) or UUID, e.g. 0 or 1,GPU-5d1e..., or\n"
	"                     all; each is checked against the host's GPUs at\n"
	"                     start; enforced in the driver's calls, not by\n"
	"                     environment variables\n"
	"  --audit-log FILE   append one JSON record per decision that matters,\n"
	"                     plus start, summary and seal records, to FILE\n"
	"                     (hash-chained: see 'gpusandbox audit verify';\n"
	"                     not \"-\": the workload shares standard output)\n"
	"  --audit-fd N       write the audit log to open descriptor N (3 or\n"
	"                     above) instead; the workload never inherits it\n"
	"  --audit-level LEVEL  what the audit log records: refusals (the start,\n"
	"                     every refusal, the end), standard (also calls passed\n"
	"                     on unexamined, releases at file close or of 256 MiB\n"
	"                     or more, and memory in use per GPU at most 4 times a\n"
	"                     second; the default) or all (every decision)\n"
	"  --audit-stacks on|off  record the user-space call stack of each refused\n"
	"                     call (default on where built with libdw)\n"
	"  --metrics-file FILE  write Prometheus text metrics to FILE (replaced\n"
	"                     atomically, every second and at exit)\n"	"  --label KEY=VALUE  a label for the audit log's start record (repeatable;\n"
	"                     KEY: a-z then a-z, 0-9, '_', '.', '-'; VALUE: UTF-8)\n"
	"  --policy FILE      read limits, allowed groups of RM classes and\n"
	"                     controls, and video engine caps from FILE (see\n"
	"                     gpusandbox.policy(5)); options given on the command\n"
	"                     line override the file\n"
	"  --learn FILE       learning mode: classes and controls gpusandbox knows\n"
	"                     are allowed even where the policy refuses them, and\n"
	"                     at exit FILE gets the policy plus one entry for each\n"
	"                     (quotas and every other check still hold)\n"
	"  --check            validate --policy and the options, print the\n"
	"                     effective policy and warnings for settings that\n"
	"                     cannot take effect, and exit without running\n"
	"                     anything (0: valid; 125: invalid)\n"
	"  --list-groups      print the groups of RM classes and controls a\n"
	"                     policy can allow, with their members, and exit\n"
	"                     (also: gpusandbox list-groups)\n"
	"  --driver-abi ABI   run on a driver whose RM tables gpusandbox does not\n"
	"                     have, with the tables of ABI: nearest, or a branch\n"
	"                     such as 580 (audited, with a warning); without it\n"
	"                     such a driver is refused\n"
	"  --user USER        run the workload as USER (name or uid); its group is\n"
	"                     USER's unless --group names one, and it has no\n"
	"                     supplementary groups unless --groups gives them\n"
	"  --group GROUP      run the workload with group GROUP (name or gid)\n"
	"  --groups LIST      supplementary groups, e.g. video,1001 ('' for none)\n"
	"  --hide PATH        make PATH unreachable for the workload (a broker's\n"
	"                     socket or directory); repeatable\n"
	"  --allow-mps        leave the MPS pipe directory reachable (masked by\n"
	"                     default: MPS allocates outside every quota)\n"
	"  --trace            print each decoded RM call to stderr\n"
	"  --trace-output FILE\n"
	"                     write the trace to FILE instead (created or\n"
	"                     truncated, like strace -o); implies --trace\n"
	"  --trace-time MODE  put a time stamp before each trace line: clock\n"
	"                     (time of day with microseconds, strace -tt),\n"
	"                     epoch (seconds since 1970, -ttt) or relative\n"
	"                     (seconds since the previous line, -r); implies\n"
	"                     --trace\n"
	"  --dump-filter      print the seccomp filter and exit\n"
	"  -h, --help         show this help and exit\n"
	"  --version          show the version, the kernel features gpusandbox\n"
	"                     uses, the NVIDIA driver ABIs it knows and the\n"
	"                     driver found, and exit\n"
	"\n"
	"Exit status: COMMAND's status, or 128+N if it was killed by signal N;\n"
	"125 if gpusandbox itself failed, 126 if COMMAND cannot be executed,\n"
	"127 if COMMAND was not found; 2 for a subcommand this build lacks.\n"
	"A first argument naming a subcommand (run, list-groups, agent, profile;\n"
	"audit is reserved) is that subcommand: to run a program of that name,\n"
	"put -- before it (gpusandbox -- audit). agent and profile serve\n"
	"containers: gpusandbox agent --help, gpusandbox profile --help.\n"
	"\n"
	"See gpusandbox(1).\n";

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
	/* Kept until exit: the launcher resolves them after parsing. */
	if (p->user[0] && !(o->contain.user_arg = strdup(p->user)))
		exit(GS_EXIT_ERROR);
	if (p->group[0] && !(o->contain.group_arg = strdup(p->group)))
		exit(GS_EXIT_ERROR);
	if (p->groups[0] && !(o->contain.groups_arg = strdup(p->groups)))
		exit(GS_EXIT_ERROR);
	if (p->has_audit_log) {
		snprintf(o->policy_audit_path, sizeof(o->policy_audit_path), "%s", p->audit_log);
		o->audit_path = o->policy_audit_path;
	}
	if (p->has_audit_level)
		o->audit_level = p->audit_level;
	if (p->has_audit_stacks)
		o->audit_stacks = p->audit_stacks;
	free(p);
}

static void parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_MEM = 256, OPT_AUDIT, OPT_TRACE, OPT_VERSION, OPT_DUMP, OPT_CHANNELS, OPT_GROUPS,
	       OPT_GPUS, OPT_ACTIVE, OPT_SM, OPT_SM_PERIOD, OPT_SM_MODE, OPT_MANAGED,
	       /* The policy file (issue #5). */
	       OPT_POLICY, OPT_LIST_GROUPS, OPT_LEARN, OPT_DRIVER_ABI, OPT_AUDIT_FD,
	       /* Issue #14. */
	       OPT_CHECK, OPT_TRACE_OUTPUT, OPT_TRACE_TIME,
	       /* Containment (issue #17). */
	       OPT_USER, OPT_GROUP, OPT_SUPP_GROUPS, OPT_HIDE, OPT_ALLOW_MPS,
	       /* Issue #15. */
	       OPT_LABEL, OPT_AUDIT_LEVEL, OPT_AUDIT_STACKS, OPT_METRICS };
	static const struct option longopts[] = {
		{ "mem", required_argument, NULL, OPT_MEM },
		{ "audit-log", required_argument, NULL, OPT_AUDIT },
		{ "audit-fd", required_argument, NULL, OPT_AUDIT_FD },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "audit-level", required_argument, NULL, OPT_AUDIT_LEVEL },
		{ "audit-stacks", required_argument, NULL, OPT_AUDIT_STACKS },
		{ "metrics-file", required_argument, NULL, OPT_METRICS },
		{ "channels", required_argument, NULL, OPT_CHANNELS },
		{ "channel-groups", required_argument, NULL, OPT_GROUPS },
		{ "gpus", required_argument, NULL, OPT_GPUS },
		{ "active-channel-groups", required_argument, NULL, OPT_ACTIVE },
		{ "sm", required_argument, NULL, OPT_SM },
		{ "sm-period", required_argument, NULL, OPT_SM_PERIOD },
		{ "sm-mode", required_argument, NULL, OPT_SM_MODE },
		{ "managed", required_argument, NULL, OPT_MANAGED },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "list-groups", no_argument, NULL, OPT_LIST_GROUPS },
		{ "learn", required_argument, NULL, OPT_LEARN },
		{ "user", required_argument, NULL, OPT_USER },
		{ "group", required_argument, NULL, OPT_GROUP },
		{ "groups", required_argument, NULL, OPT_SUPP_GROUPS },
		{ "hide", required_argument, NULL, OPT_HIDE },
		{ "allow-mps", no_argument, NULL, OPT_ALLOW_MPS },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "trace-output", required_argument, NULL, OPT_TRACE_OUTPUT },
		{ "trace-time", required_argument, NULL, OPT_TRACE_TIME },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "driver-abi", required_argument, NULL, OPT_DRIVER_ABI },
		{ "dump-filter", no_argument, NULL, OPT_DUMP },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	int c, audit_seen = 0;
	bool gpus_seen = false;

	memset(o, 0, sizeof(*o));
	o->audit_fd = -1;
	o->audit_level = GS_AUDIT_LEVEL_STANDARD;
	o->audit_stacks = true;
	gs_quota_init(&o->quota);
	gs_rules_default(&o->rules);
	opterr = 0;
	/* First pass: only --policy, so that the file sets the starting
	 * values and every other option, wherever it stands, overrides it. */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		if (c != OPT_POLICY)
			continue;
		if (o->policy_loaded)
			gs_die_usage("%s", "--policy given twice");
		load_policy(o, optarg);
		o->policy_loaded = true;
		o->policy_path = optarg;
	}
	optind = 0; /* glibc: a full rescan */
	/* "+": stop at the first non-option, so COMMAND's own options are its. */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_POLICY:
			break; /* read in the first pass */
		case OPT_LIST_GROUPS:
			gs_groups_print(stdout, gs_rm_abi_default(), GS_GROUPS_DEFAULT);
			exit(0);
		case OPT_MEM: {
			char why[GS_ERROR_MSG_MAX];
			if (gs_parse_mem_quota(optarg, &o->quota.mem_per_gpu, why, sizeof(why)) < 0)
				gs_die_usage("--mem: %s", why);
			/* --mem is every GPU's quota: the file's gpu.N.mem go. */
			for (unsigned g = 0; g < GS_MAX_GPUS; g++)
				o->quota.mem_gpu[g] = GS_MEM_GPU_UNSET;
			break;
		}
		case OPT_AUDIT:
			o->audit_path = optarg;
			audit_seen |= 1;
			break;
		case OPT_AUDIT_FD:
			if (gs_parse_audit_fd(optarg, &o->audit_fd) < 0)
				gs_die_usage("invalid --audit-fd '%s' (an open descriptor, 3 or above)", optarg);
			o->audit_path = NULL; /* over the policy file's audit-log */
			audit_seen |= 2;
			break;
		case OPT_AUDIT_LEVEL:
			if (gs_audit_level_parse(optarg, &o->audit_level) < 0)
				gs_die_usage("invalid --audit-level '%s' (refusals, standard or all)", optarg);
			break;
		case OPT_AUDIT_STACKS:
			if (gs_parse_on_off(optarg, &o->audit_stacks) < 0)
				gs_die_usage("invalid --audit-stacks '%s' (on or off)", optarg);
			break;
		case OPT_METRICS:
			o->metrics_path = optarg;
			break;
		case OPT_LABEL: {
			const char *why;
			char msg[GS_LABEL_KEY_MAX + GS_LABEL_VALUE_MAX + 128];
			if (gs_audit_label_add(&o->labels, optarg, &why) < 0) {
				snprintf(msg, sizeof(msg), "invalid --label '%.*s': %s",
				         (int)(GS_LABEL_KEY_MAX + GS_LABEL_VALUE_MAX), optarg, why);
				gs_die_usage("%s", msg);
			}
			break;
		}
		case OPT_LEARN:
			if (o->learn_path)
				gs_die_usage("%s", "--learn given twice");
			o->learn_path = optarg;
			break;
		case OPT_CHANNELS:
			if (gs_parse_count(optarg, &o->quota.channels) < 0)
				gs_die_usage("invalid --channels count '%s' (a positive number)", optarg);
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
				gs_die_usage("%s", "bad GPU list");
			}
			break;
		}
		case OPT_ACTIVE:
			if (gs_parse_count(optarg, &o->quota.active_channel_groups) < 0)
				gs_die_usage("invalid --active-channel-groups count '%s' (a positive number)", optarg);
			break;
		case OPT_GROUPS:
			if (gs_parse_count(optarg, &o->quota.channel_groups) < 0)
				gs_die_usage("invalid --channel-groups count '%s' (a positive number)", optarg);
			break;
		case OPT_SM:
			if (gs_parse_percent(optarg, &o->quota.sm_percent) < 0)
				gs_die_usage("invalid --sm share '%s' (a percentage, 1-100)", optarg);
			break;
		case OPT_SM_PERIOD:
			if (gs_parse_period_ms(optarg, &o->quota.sm_period_ms) < 0)
				gs_die_usage("invalid --sm-period '%s' (milliseconds, 5-1000)", optarg);
			break;
		case OPT_SM_MODE:
			if (gs_parse_sm_mode(optarg, &o->quota.sm_mode) < 0)
				gs_die_usage("invalid --sm-mode '%s' (cap or guarantee)", optarg);
			break;
		case OPT_MANAGED:
			if (gs_parse_managed(optarg, &o->quota.managed) < 0)
				gs_die_usage("invalid --managed mode '%s' (deny or allow-unaccounted)", optarg);
			break;
		case OPT_USER:
			o->contain.user_arg = optarg;
			break;
		case OPT_GROUP:
			o->contain.group_arg = optarg;
			break;
		case OPT_SUPP_GROUPS:
			o->contain.groups_arg = optarg;
			break;
		case OPT_HIDE: {
			const char *why = NULL;
			if (gs_contain_add_hide(&o->contain, optarg, &why) < 0) {
				fprintf(stderr, "gpusandbox: invalid --hide '%s': %s\n", optarg, why);
				gs_die_usage("%s", "bad --hide path");
			}
			break;
		}
		case OPT_ALLOW_MPS:
			o->contain.allow_mps = true;
			break;
		case OPT_TRACE:
			o->trace = true;
			break;
		case OPT_TRACE_OUTPUT:
			o->trace = true;
			o->trace_output = optarg;
			break;
		case OPT_TRACE_TIME:
			if (gs_parse_trace_time(optarg, &o->trace_time) < 0)
				gs_die_usage("invalid --trace-time '%s' (clock, epoch or relative)", optarg);
			o->trace = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_DUMP:
			o->dump_filter = true;
			break;
		case OPT_DRIVER_ABI:
			o->driver_abi = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			exit(0);
		case OPT_VERSION:
			gs_print_version(stdout);
			exit(0);
		default:
			gs_option_error(c, argv, longopts);
		}
	}
	if (audit_seen == 3)
		gs_die_usage("%s", "--audit-log and --audit-fd are both given: choose one");
	o->argv = argv + optind;
	if (o->argv[0])
		gs_refuse_subcommand_word(argv, optind);
	if (!o->dump_filter && !o->check && !o->argv[0])
		gs_die_usage("%s", "no COMMAND given");
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

/* --check: everything a run would refuse before starting, then the
 * effective policy and what in it cannot take effect. Nothing runs. */
static int check_only(const struct options *o)
{
	const struct gs_check_input in = { &o->quota, &o->rules, o->policy_path, o->audit_path,
		                           o->audit_level, o->audit_stacks };
	unsigned warnings;

	gs_check_print(stdout, &in);
	warnings = gs_check_warn(stderr, &in);
	(void)gs_env_warn(stderr, &o->quota);
	fprintf(stderr, "gpusandbox: --check: valid (%u warning%s); nothing was run\n", warnings,
	        warnings == 1 ? "" : "s");
	return 0;
}

/* Which driver answers, and which RM tables decode its calls: strict
 * unless --driver-abi says otherwise, and then said aloud. */
static int start_driver(const struct options *o, struct gs_driver *d)
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

int main(int argc, char **argv)
{
	struct options o;
	struct gs_error err = { 0 };
	/* Static: sealed by an exit handler if main returns early. */
	static struct gs_audit audit = { .fd = -1 };
	struct gs_session sb;
	struct gs_compute_share sm = { 0 };
	struct gs_session_config cfg = { 0 };
	struct gs_child child = { .pid = -1, .listener = -1, .status_fd = -1 };
	struct gs_launch_spec spec = { .forwarded = forwarded_signals, .n_forwarded = N_FORWARDED };
	struct gs_learn *learn = NULL;
	struct gs_filter_opts filter_opts = { 0 };
	struct gs_driver driver;
	const struct gs_rm_abi *rm_abi;
	sigset_t sigs;
	int sfd, code = GS_EXIT_ERROR, status = 0;
	bool child_done = false, no_device;

	/* Our command line's strings, for the init to blank (launch.h). */
	spec.own_args = argv[0];
	spec.own_args_len = (size_t)(argv[argc - 1] + strlen(argv[argc - 1]) + 1 - argv[0]);
	gs_subcommand_dispatch(&argc, &argv);
	/* Before anything else reads the environment or the workload exists. */
	gs_driver_nodes_init();
	parse_options(argc, argv, &o);
	if (gs_check_output_paths(o.audit_path, o.learn_path, o.trace_output, o.metrics_path, &err) < 0)
		return report(&err, NULL), GS_EXIT_ERROR;
	if (o.check)
		return check_only(&o);
	if (start_driver(&o, &driver) < 0)
		return GS_EXIT_ERROR;
	rm_abi = driver.rm_abi;
	filter_opts.trap_uvm_mmap = o.quota.managed == GS_MANAGED_DENY;
	filter_opts.rm_abi = rm_abi;
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
		gs_learn_init(learn, rm_abi, &o.quota, &o.rules);
		if (gs_learn_check_path(o.learn_path, &err) < 0)
			return report(&err, NULL), GS_EXIT_ERROR;
		cfg.learn = learn;
	}
	/* UUIDs become /dev/nvidiaN minors before anything runs: a typo is
	 * our error, not a sandbox that shows no GPU. */
	if (gs_resolve_gpu_uuids(&o.quota, &err) < 0 ||
	    gs_driver_check_gpus(&driver, &o.quota, &err) < 0)
		return report(&err, NULL), GS_EXIT_ERROR;
	if (gs_contain_prepare(&o.contain, &err) < 0)
		return report(&err, NULL), GS_EXIT_ERROR;
	cfg.quota = o.quota;
	cfg.driver = &driver;
	cfg.rules = &o.rules;
	if (o.trace && !(cfg.trace = gs_trace_open(o.trace_output, o.trace_time, &err)))
		return report(&err, NULL), GS_EXIT_ERROR;
	no_device = gs_env_warn(stderr, &o.quota);
	/* Open the log before anything runs, so that a bad path is our error
	 * and the workload never runs unaudited. */
	if (o.audit_path || o.audit_fd >= 0) {
		char id[GS_SANDBOX_ID_LEN];
		gs_session_make_id(id, sizeof(id));
		if ((o.audit_path ? gs_audit_open(&audit, o.audit_path, id, &err)
		                  : gs_audit_open_fd(&audit, o.audit_fd, id, &err)) < 0)
			return report(&err, NULL), GS_EXIT_ERROR;
		audit.level = o.audit_level;
		cfg.stacks = o.audit_stacks;
		cfg.audit = &audit;
		cfg.id = audit.sandbox_id;
	}
	/* The metrics file's place is checked now (a file with no samples),
	 * so that a bad path is our error before anything runs. */
	if (o.metrics_path && gs_metrics_write(o.metrics_path, NULL, 0, &err) < 0)
		return report(&err, &audit), GS_EXIT_ERROR;
	if (block_signals(&sigs) < 0 || (sfd = signalfd(-1, &sigs, SFD_CLOEXEC)) < 0) {
		gs_fail(&err, errno, "setting up signal handling");
		return report(&err, &audit), GS_EXIT_ERROR;
	}
	/* Nothing in the workload may ptrace or read the supervisor, nor
	 * anything else of its uid (the workload cannot even name it: it
	 * has no pid in the sandbox's PID namespace). */
	(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	/* managed = deny must hold for every way into GPU memory UVM has; if
	 * the driver gives GPUs pageable memory, it cannot, and nothing
	 * starts. */
	if (o.quota.managed == GS_MANAGED_DENY && gs_managed_check_host(gs_driver_uvm_major(), &err) < 0)
		return report(&err, &audit), GS_EXIT_ERROR;
	spec.argv = o.argv;
	spec.filter = &filter_opts;
	spec.contain = &o.contain;
	if (gs_launch(&spec, &child, &code, &err) < 0) {
		report(&err, &audit);
		return code;
	}
	/* Only now: the init needed CAP_SYS_ADMIN for its namespaces. No call
	 * is performed for the workload before the notify thread starts. */
	if (gs_drop_supervisor_privileges(&err) < 0) {
		report(&err, &audit);
		gs_launch_kill(&child);
		return GS_EXIT_ERROR;
	}
	if (gs_session_init(&sb, &cfg, child.listener, &err) < 0) {
		report(&err, &audit);
		gs_launch_kill(&child);
		return GS_EXIT_ERROR;
	}
	audit.no_nvidia_device = no_device;
	/* The start record names COMMAND's process (the init's if unknown). */
	const struct gs_audit_start start = {
		.child = child.command_pid > 0 ? child.command_pid : child.pid, .argv = o.argv,
		.quota = &o.quota, .rules = &o.rules, .driver = &driver, .labels = &o.labels,
		.stacks = sb.stacks,
	};
	if (cfg.audit && gs_audit_start(&audit, &start) < 0)
		sb.audit_failed = true;

	if (gs_session_start(&sb, child.pid, &err) < 0) {
		report(&err, &audit);
		gs_launch_kill(&child);
		gs_session_fini(&sb);
		return GS_EXIT_ERROR;
	}
	if (o.quota.sm_percent < GS_SM_UNLIMITED && gs_sm_start(&sm, &sb, &err) < 0) {
		report(&err, &audit);
		gs_launch_kill(&child);
		gs_session_stop(&sb);
		gs_session_fini(&sb);
		return GS_EXIT_ERROR;
	}
	/* The main thread only handles signals; the notify thread serves the
	 * listener. */
	while (!child_done) {
		struct signalfd_siginfo si;
		ssize_t n = read_signal_ticking(sfd, &si, &sb, o.metrics_path);

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
					status = gs_launch_command_status(&child, st);
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
		gs_launch_kill(&child);
		gs_sm_stop(&sm);
		gs_session_stop(&sb);
		/* Read only now: the threads that write it are joined (a
		 * thread sets failed first, then thread_err). */
		if (atomic_load(&sb.failed))
			err = sb.thread_err;
		report(&err, &audit);
		/* What was learned up to the failure is still true. */
		if (learn)
			(void)save_learned(o.learn_path, learn, &audit);
		gs_session_reconcile(&sb);
		gs_session_summarize(&sb, -1, SIGKILL);
		write_metrics(&sb, o.metrics_path);
		(void)gs_refusals_print(&sb.refusals, &sb.quota, stderr);
		gs_session_fini(&sb);
		gs_audit_close(&audit);
		return GS_EXIT_ERROR;
	}
	/* The init is reaped: the kernel has ended every task of the sandbox. */
	/* Channels the duty cycle has off come back on before we go. */
	gs_sm_stop(&sm);
	gs_session_stop(&sb);
	gs_session_reconcile(&sb);
	gs_session_print_profile(&sb);
	code = exit_code_of(status);
	/* Also after a workload killed by a signal: what it needed until
	 * then is what the file is for. */
	if (learn && save_learned(o.learn_path, learn, &audit) < 0)
		code = GS_EXIT_ERROR;
	gs_session_summarize(&sb, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
	                     WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	write_metrics(&sb, o.metrics_path);
	/* Even without --audit-log: why the workload saw out-of-memory. */
	(void)gs_refusals_print(&sb.refusals, &sb.quota, stderr);
	gs_session_fini(&sb);
	/* The seal is the log's last record: its failure counts too. */
	if (gs_audit_close(&audit) < 0 || sb.audit_failed) {
		fprintf(stderr, "gpusandbox: writing the audit log failed\n");
		code = GS_EXIT_ERROR;
	}
	return code;
}
