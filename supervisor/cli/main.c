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

enum long_option {
	OPT_MEM = 256, OPT_AUDIT, OPT_TRACE, OPT_VERSION, OPT_DUMP, OPT_CHANNELS, OPT_GROUPS,
	OPT_GPUS, OPT_ACTIVE, OPT_SM, OPT_SM_PERIOD, OPT_SM_MODE, OPT_MANAGED,
	/* The policy file (issue #5). */
	OPT_POLICY, OPT_LIST_GROUPS, OPT_LEARN, OPT_DRIVER_ABI, OPT_AUDIT_FD,
	/* Issue #14. */
	OPT_CHECK, OPT_TRACE_OUTPUT, OPT_TRACE_TIME,
	/* Containment (issue #17). */
	OPT_USER, OPT_GROUP, OPT_SUPP_GROUPS, OPT_HIDE, OPT_ALLOW_MPS,
	/* Issue #15. */
	OPT_LABEL, OPT_AUDIT_LEVEL, OPT_AUDIT_STACKS, OPT_METRICS
};

/* The option table; gs_option_error (options.c) reads it for its
 * diagnostics, so every spelling the user may write is here once. */
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

/* "+": stop at the first non-option, so COMMAND's own options are its;
 * ":": a missing value is told apart from an unknown option. */
#define SHORT_OPTIONS "+:h"

/* What one option may depend on among those before it. */
enum { AUDIT_SEEN_LOG = 1, AUDIT_SEEN_FD = 2 };
struct parse_state {
	int  audit_seen;  /* AUDIT_SEEN_*: --audit-log and --audit-fd exclude each other */
	bool gpus_seen;   /* the first --gpus drops the policy file's list */
};

static void options_defaults(struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->audit_fd = -1;
	o->audit_level = GS_AUDIT_LEVEL_STANDARD;
	o->audit_stacks = true;
	gs_quota_init(&o->quota);
	gs_rules_default(&o->rules);
}

/* First pass: only --policy, so that the file sets the starting values
 * and every other option, wherever it stands, overrides it. */
static void read_policy_option(int argc, char **argv, struct options *o)
{
	int c;

	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, longopts, NULL)) != -1) {
		if (c != OPT_POLICY)
			continue;
		if (o->policy_loaded)
			gs_die_usage("%s", "--policy given twice");
		load_policy(o, optarg);
		o->policy_loaded = true;
		o->policy_path = optarg;
	}
}

static void parse_mem_option(struct options *o)
{
	char why[GS_ERROR_MSG_MAX];

	if (gs_parse_mem_quota(optarg, &o->quota.mem_per_gpu, why, sizeof(why)) < 0)
		gs_die_usage("--mem: %s", why);
	/* --mem is every GPU's quota: the file's gpu.N.mem go. */
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		o->quota.mem_gpu[g] = GS_MEM_GPU_UNSET;
}

static void parse_gpus_option(struct options *o, struct parse_state *ps)
{
	const char *why = NULL;

	/* The command line's list replaces the file's. */
	if (!ps->gpus_seen) {
		o->quota.visible_set = false;
		o->quota.visible = 0;
		o->quota.n_uuids = 0;
		ps->gpus_seen = true;
	}
	if (gs_parse_gpus(optarg, &o->quota, &why) < 0) {
		fprintf(stderr, "gpusandbox: invalid --gpus '%s': %s\n", optarg, why);
		gs_die_usage("%s", "bad GPU list");
	}
}

/* The quota options (policy/quota.h). Returns false for any other. */
static bool parse_quota_option(int c, struct options *o, struct parse_state *ps)
{
	switch (c) {
	case OPT_MEM:
		parse_mem_option(o);
		return true;
	case OPT_CHANNELS:
		if (gs_parse_count(optarg, &o->quota.channels) < 0)
			gs_die_usage("invalid --channels count '%s' (a positive number)", optarg);
		return true;
	case OPT_GPUS:
		parse_gpus_option(o, ps);
		return true;
	case OPT_ACTIVE:
		if (gs_parse_count(optarg, &o->quota.active_channel_groups) < 0)
			gs_die_usage("invalid --active-channel-groups count '%s' (a positive number)", optarg);
		return true;
	case OPT_GROUPS:
		if (gs_parse_count(optarg, &o->quota.channel_groups) < 0)
			gs_die_usage("invalid --channel-groups count '%s' (a positive number)", optarg);
		return true;
	case OPT_SM:
		if (gs_parse_percent(optarg, &o->quota.sm_percent) < 0)
			gs_die_usage("invalid --sm share '%s' (a percentage, 1-100)", optarg);
		return true;
	case OPT_SM_PERIOD:
		if (gs_parse_period_ms(optarg, &o->quota.sm_period_ms) < 0)
			gs_die_usage("invalid --sm-period '%s' (milliseconds, 5-1000)", optarg);
		return true;
	case OPT_SM_MODE:
		if (gs_parse_sm_mode(optarg, &o->quota.sm_mode) < 0)
			gs_die_usage("invalid --sm-mode '%s' (cap or guarantee)", optarg);
		return true;
	case OPT_MANAGED:
		if (gs_parse_managed(optarg, &o->quota.managed) < 0)
			gs_die_usage("invalid --managed mode '%s' (deny or allow-unaccounted)", optarg);
		return true;
	}
	return false;
}

static void parse_label_option(struct options *o)
{
	const char *why;
	char msg[GS_LABEL_KEY_MAX + GS_LABEL_VALUE_MAX + 128];

	if (gs_audit_label_add(&o->labels, optarg, &why) < 0) {
		snprintf(msg, sizeof(msg), "invalid --label '%.*s': %s",
		         (int)(GS_LABEL_KEY_MAX + GS_LABEL_VALUE_MAX), optarg, why);
		gs_die_usage("%s", msg);
	}
}

/* The audit log and metrics options. Returns false for any other. */
static bool parse_audit_option(int c, struct options *o, struct parse_state *ps)
{
	switch (c) {
	case OPT_AUDIT:
		o->audit_path = optarg;
		ps->audit_seen |= AUDIT_SEEN_LOG;
		return true;
	case OPT_AUDIT_FD:
		if (gs_parse_audit_fd(optarg, &o->audit_fd) < 0)
			gs_die_usage("invalid --audit-fd '%s' (an open descriptor, 3 or above)", optarg);
		o->audit_path = NULL; /* over the policy file's audit-log */
		ps->audit_seen |= AUDIT_SEEN_FD;
		return true;
	case OPT_AUDIT_LEVEL:
		if (gs_audit_level_parse(optarg, &o->audit_level) < 0)
			gs_die_usage("invalid --audit-level '%s' (refusals, standard or all)", optarg);
		return true;
	case OPT_AUDIT_STACKS:
		if (gs_parse_on_off(optarg, &o->audit_stacks) < 0)
			gs_die_usage("invalid --audit-stacks '%s' (on or off)", optarg);
		return true;
	case OPT_METRICS:
		o->metrics_path = optarg;
		return true;
	case OPT_LABEL:
		parse_label_option(o);
		return true;
	}
	return false;
}

static void parse_hide_option(struct options *o)
{
	const char *why = NULL;

	if (gs_contain_add_hide(&o->contain, optarg, &why) < 0) {
		fprintf(stderr, "gpusandbox: invalid --hide '%s': %s\n", optarg, why);
		gs_die_usage("%s", "bad --hide path");
	}
}

/* The containment options (contain.h). Returns false for any other. */
static bool parse_contain_option(int c, struct options *o)
{
	switch (c) {
	case OPT_USER:
		o->contain.user_arg = optarg;
		return true;
	case OPT_GROUP:
		o->contain.group_arg = optarg;
		return true;
	case OPT_SUPP_GROUPS:
		o->contain.groups_arg = optarg;
		return true;
	case OPT_HIDE:
		parse_hide_option(o);
		return true;
	case OPT_ALLOW_MPS:
		o->contain.allow_mps = true;
		return true;
	}
	return false;
}

/* The trace options; each of them implies --trace. Returns false for
 * any other. */
static bool parse_trace_option(int c, struct options *o)
{
	switch (c) {
	case OPT_TRACE:
		o->trace = true;
		return true;
	case OPT_TRACE_OUTPUT:
		o->trace = true;
		o->trace_output = optarg;
		return true;
	case OPT_TRACE_TIME:
		if (gs_parse_trace_time(optarg, &o->trace_time) < 0)
			gs_die_usage("invalid --trace-time '%s' (clock, epoch or relative)", optarg);
		o->trace = true;
		return true;
	}
	return false;
}

/* The options that print and exit, or change what gpusandbox does
 * (--check, --dump-filter, --learn, --driver-abi); anything left is an
 * error, told by gs_option_error. */
static void parse_mode_option(int c, char **argv, struct options *o)
{
	switch (c) {
	case OPT_POLICY:
		break; /* read in the first pass */
	case OPT_LIST_GROUPS:
		gs_groups_print(stdout, gs_rm_abi_default(), GS_GROUPS_DEFAULT);
		exit(0);
	case OPT_LEARN:
		if (o->learn_path)
			gs_die_usage("%s", "--learn given twice");
		o->learn_path = optarg;
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

/* What holds only for the command line as a whole. */
static void check_command_line(char **argv, struct options *o, const struct parse_state *ps)
{
	if (ps->audit_seen == (AUDIT_SEEN_LOG | AUDIT_SEEN_FD))
		gs_die_usage("%s", "--audit-log and --audit-fd are both given: choose one");
	o->argv = argv + optind;
	if (o->argv[0])
		gs_refuse_subcommand_word(argv, optind);
	if (!o->dump_filter && !o->check && !o->argv[0])
		gs_die_usage("%s", "no COMMAND given");
}

/* Options in the order given, each judged as it comes: the first bad one
 * stops everything with its own diagnostic. */
static void parse_options(int argc, char **argv, struct options *o)
{
	struct parse_state ps = { 0 };
	int c;

	options_defaults(o);
	opterr = 0;
	read_policy_option(argc, argv, o);
	optind = 0; /* glibc: a full rescan */
	while ((c = getopt_long(argc, argv, SHORT_OPTIONS, longopts, NULL)) != -1) {
		if (!parse_quota_option(c, o, &ps) && !parse_audit_option(c, o, &ps) &&
		    !parse_contain_option(c, o) && !parse_trace_option(c, o))
			parse_mode_option(c, argv, o);
	}
	check_command_line(argv, o, &ps);
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

/* Returned by a step of main that found nothing to stop the run for; any
 * other value is the exit status main returns at once. */
#define RUN_GOES_ON (-1)

/* Everything one run holds from the command line to the exit status. */
struct run {
	struct options o;
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
	if (gs_contain_prepare(&r->o.contain, &r->err) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	r->cfg.quota = r->o.quota;
	r->cfg.driver = &r->driver;
	r->cfg.rules = &r->o.rules;
	return RUN_GOES_ON;
}

/* The trace, the audit log and the metrics file, each opened or checked
 * now so that a bad path is our error and the workload never runs
 * unaudited. */
static int open_outputs(struct run *r)
{
	if (r->o.trace && !(r->cfg.trace = gs_trace_open(r->o.trace_output, r->o.trace_time, &r->err)))
		return report(&r->err, NULL), GS_EXIT_ERROR;
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

/* The start record names COMMAND's process (the init's if unknown). */
static void audit_start(struct run *r)
{
	const struct gs_audit_start start = {
		.child = r->child.command_pid > 0 ? r->child.command_pid : r->child.pid,
		.argv = r->o.argv, .quota = &r->o.quota, .rules = &r->o.rules,
		.driver = &r->driver, .labels = &r->o.labels, .stacks = r->sb.stacks,
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
	if (gs_launch(&r->spec, &r->child, &code, &r->err) < 0)
		return report(&r->err, r->audit), code;
	/* Only now: the init needed CAP_SYS_ADMIN for its namespaces. No call
	 * is performed for the workload before the notify thread starts. */
	if (gs_drop_supervisor_privileges(&r->err) < 0 ||
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

/* Reaps what SIGCHLD announced; true once COMMAND's process is gone. */
static bool reap_children(struct run *r)
{
	bool child_done = false;
	pid_t p;
	int st;

	while ((p = waitpid(-1, &st, WNOHANG)) > 0)
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

/* The run's steps in order; the first that stops the run gives the exit
 * status. */
static int run_sandbox(struct run *r)
{
	int code;

	if (gs_check_output_paths(r->o.audit_path, r->o.learn_path, r->o.trace_output,
	                          r->o.metrics_path, &r->err) < 0)
		return report(&r->err, NULL), GS_EXIT_ERROR;
	if (r->o.check)
		return check_only(&r->o);
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
	parse_options(argc, argv, &r.o);
	return run_sandbox(&r);
}
