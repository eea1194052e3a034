/* SPDX-License-Identifier: MIT */
/*
 * cmdline.c - the run's options (cmdline.h): the usage text, the option
 * table and one parser per group of options. Diagnostics that need more
 * than a line of judgement, and the subcommand words, are in options.c.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmdline.h"
#include "envcheck.h"
#include "gpusandbox.h"
#include "groups.h"
#include "options.h"

/* The usage text up to the quota kinds' options. */
static const char usage_head[] =
	"Usage: gpusandbox [run] [OPTIONS] [--] COMMAND [ARG...]\n"
	"       gpusandbox --check [OPTIONS]\n"
	"       gpusandbox list-groups\n"
	"       gpusandbox audit VIEW [OPTIONS] FILE...  (summary, denials, timeline,\n"
	"                  usage, plot, verify: gpusandbox audit --help)\n"
	"       gpusandbox agent|keeper|profile [SUBCOMMAND OPTIONS]\n"
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
	;

/* The options that follow the quota kinds' (printed from their rows). */
static const char usage_tail[] =
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
	"  --p2p-register MODE\n"
	"                     CUDA's per-allocation P2P registration controls:\n"
	"                     auto (the default) is perform under a policy that\n"
	"                     allows p2p, none otherwise; perform passes them\n"
	"                     to the driver;\n"
	"                     answer says NV_OK without the driver (faster\n"
	"                     cuMemAlloc/cuMemFree), and the sandbox's memory is\n"
	"                     then never registered for GPUDirect RDMA or P2P\n"
	"                     tokens; none answers CUDA's NV50_THIRD_PARTY_P2P\n"
	"                     object NV_ERR_NOT_SUPPORTED, as a driver without\n"
	"                     it would, and CUDA then makes no registration\n"
	"                     controls at all (the fastest; no GPUDirect RDMA)\n"
	"  --uvm-map MODE     how CUDA's mappings of its memory (UVM external\n"
	"                     maps) are made: dup (the default) maps a dup of\n"
	"                     the memory in the supervisor's own client;\n"
	"                     as-user maps the workload's own memory, and makes\n"
	"                     its UVM channel registrations, with the uid of\n"
	"                     --user: faster per cuMemAlloc, and lets any\n"
	"                     process of that uid dup the sandbox's memory:\n"
	"                     only for a uid that is the sandbox's alone\n"
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
	"A first argument naming a subcommand (run, list-groups, agent, keeper,\n"
	"profile; audit is reserved) is that subcommand: to run a program of that\n"
	"name, put -- before it (gpusandbox -- audit). agent, keeper and profile\n"
	"serve containers: gpusandbox agent --help, keeper --help, profile --help.\n"
	"\n"
	"See gpusandbox(1).\n";

/* Reads the policy file into o; an invalid policy stops everything before
 * the workload starts. */
static void load_policy(struct gs_cli_options *o, const char *path)
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
	OPT_MEM = 256, OPT_AUDIT, OPT_TRACE, OPT_VERSION, OPT_DUMP,
	OPT_GPUS, OPT_SM, OPT_SM_PERIOD, OPT_SM_MODE, OPT_MANAGED,
	OPT_P2P_REGISTER, OPT_UVM_MAP,
	/* The policy file (issue #5). */
	OPT_POLICY, OPT_LIST_GROUPS, OPT_LEARN, OPT_DRIVER_ABI, OPT_AUDIT_FD,
	/* Issue #14. */
	OPT_CHECK, OPT_TRACE_OUTPUT, OPT_TRACE_TIME,
	/* Containment (issue #17). */
	OPT_USER, OPT_GROUP, OPT_SUPP_GROUPS, OPT_HIDE, OPT_ALLOW_MPS,
	/* Issue #15. */
	OPT_LABEL, OPT_AUDIT_LEVEL, OPT_AUDIT_STACKS, OPT_METRICS,
	/* One per quota kind with an option: OPT_KIND + enum gs_quota_kind. */
	OPT_KIND
};

/* The option table (build_longopts: these, then the quota kinds');
 * gs_option_error (options.c) reads it for its diagnostics, so every
 * spelling the user may write is there once. */
static const struct option fixed_longopts[] = {
	{ "mem", required_argument, NULL, OPT_MEM },
	{ "audit-log", required_argument, NULL, OPT_AUDIT },
	{ "audit-fd", required_argument, NULL, OPT_AUDIT_FD },
	{ "label", required_argument, NULL, OPT_LABEL },
	{ "audit-level", required_argument, NULL, OPT_AUDIT_LEVEL },
	{ "audit-stacks", required_argument, NULL, OPT_AUDIT_STACKS },
	{ "metrics-file", required_argument, NULL, OPT_METRICS },
	{ "gpus", required_argument, NULL, OPT_GPUS },
	{ "sm", required_argument, NULL, OPT_SM },
	{ "sm-period", required_argument, NULL, OPT_SM_PERIOD },
	{ "sm-mode", required_argument, NULL, OPT_SM_MODE },
	{ "managed", required_argument, NULL, OPT_MANAGED },
	{ "p2p-register", required_argument, NULL, OPT_P2P_REGISTER },
	{ "uvm-map", required_argument, NULL, OPT_UVM_MAP },
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
};
#define N_FIXED_LONGOPTS (sizeof(fixed_longopts) / sizeof(fixed_longopts[0]))
static struct option longopts[N_FIXED_LONGOPTS + GS_QK_N + 1];

static void build_longopts(void)
{
	size_t n = N_FIXED_LONGOPTS;

	memcpy(longopts, fixed_longopts, sizeof(fixed_longopts));
	for (int k = 0; k < GS_QK_N; k++) {
		const char *name = gs_quota_kind_row((enum gs_quota_kind)k)->option;
		if (name)
			longopts[n++] = (struct option){ name, required_argument, NULL, OPT_KIND + k };
	}
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };
}

/* The option column of --help, and the indent of the lines after it. */
#define HELP_COLUMN 21

/* A quota kind's entry in --help: "  --key N", its text beside it from
 * the help column, or below when the option is too long for it. */
static void print_kind_help(FILE *out, const struct gs_quota_kind_row *row)
{
	int n = fprintf(out, "  --%s N", row->option);

	if (n >= HELP_COLUMN) {
		fputc('\n', out);
		n = 0;
	}
	for (const char *line = row->help; *line; n = 0) {
		size_t len = strcspn(line, "\n");
		fprintf(out, "%*s%.*s\n", HELP_COLUMN - n, "", (int)len, line);
		line += len + (line[len] == '\n');
	}
}

static void print_usage(FILE *out)
{
	fputs(usage_head, out);
	for (int k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		if (row->option)
			print_kind_help(out, row);
	}
	fputs(usage_tail, out);
}

/* "+": stop at the first non-option, so COMMAND's own options are its;
 * ":": a missing value is told apart from an unknown option. */
#define SHORT_OPTIONS "+:h"

/* What one option may depend on among those before it. */
enum { AUDIT_SEEN_LOG = 1, AUDIT_SEEN_FD = 2 };
struct parse_state {
	int  audit_seen;  /* AUDIT_SEEN_*: --audit-log and --audit-fd exclude each other */
	bool gpus_seen;   /* the first --gpus drops the policy file's list */
};

static void options_defaults(struct gs_cli_options *o)
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
static void read_policy_option(int argc, char **argv, struct gs_cli_options *o)
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

static void parse_mem_option(struct gs_cli_options *o)
{
	char why[GS_ERROR_MSG_MAX];

	if (gs_parse_mem_quota(optarg, &o->quota.mem_per_gpu, why, sizeof(why)) < 0)
		gs_die_usage("--mem: %s", why);
	/* --mem is every GPU's quota: the file's gpu.N.mem go. */
	for (unsigned g = 0; g < GS_MAX_GPUS; g++)
		o->quota.mem_gpu[g] = GS_MEM_GPU_UNSET;
}

static void parse_gpus_option(struct gs_cli_options *o, struct parse_state *ps)
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
static bool parse_quota_option(int c, struct gs_cli_options *o, struct parse_state *ps)
{
	enum gs_uvm_map_mode mode;

	if (c >= OPT_KIND && c < OPT_KIND + GS_QK_N) {
		enum gs_quota_kind k = (enum gs_quota_kind)(c - OPT_KIND);
		const struct gs_quota_kind_row *row = gs_quota_kind_row(k);
		char msg[GS_ERROR_MSG_MAX];
		if (gs_parse_kind_count(k, optarg, &o->quota.count[k]) == 0)
			return true;
		snprintf(msg, sizeof(msg), "invalid --%s count '%s' (a %snumber)", row->option, optarg,
		         row->flags & GS_QK_ZERO_OK ? "" : "positive ");
		gs_die_usage("%s", msg);
	}
	switch (c) {
	case OPT_MEM:
		parse_mem_option(o);
		return true;
	case OPT_GPUS:
		parse_gpus_option(o, ps);
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
	case OPT_P2P_REGISTER:
		if (gs_parse_p2p_register(optarg, &o->quota.p2p_register) < 0)
			gs_die_usage("invalid --p2p-register mode '%s' (auto, perform, answer or none)", optarg);
		return true;
	case OPT_UVM_MAP:
		if (gs_parse_uvm_map_mode(optarg, &mode) < 0)
			gs_die_usage("invalid --uvm-map mode '%s' (dup or as-user)", optarg);
		o->uvm_map_as_user = mode == GS_UVM_MAP_AS_USER;
		return true;
	}
	return false;
}

static void parse_label_option(struct gs_cli_options *o)
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
static bool parse_audit_option(int c, struct gs_cli_options *o, struct parse_state *ps)
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

static void parse_hide_option(struct gs_cli_options *o)
{
	const char *why = NULL;

	if (gs_contain_add_hide(&o->contain, optarg, &why) < 0) {
		fprintf(stderr, "gpusandbox: invalid --hide '%s': %s\n", optarg, why);
		gs_die_usage("%s", "bad --hide path");
	}
}

/* The containment options (contain.h). Returns false for any other. */
static bool parse_contain_option(int c, struct gs_cli_options *o)
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
static bool parse_trace_option(int c, struct gs_cli_options *o)
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
static void parse_mode_option(int c, char **argv, struct gs_cli_options *o)
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
		print_usage(stdout);
		exit(0);
	case OPT_VERSION:
		gs_print_version(stdout);
		exit(0);
	default:
		gs_option_error(c, argv, longopts);
	}
}

/* What holds only for the command line as a whole. */
static void check_command_line(char **argv, struct gs_cli_options *o, const struct parse_state *ps)
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
void gs_parse_command_line(int argc, char **argv, struct gs_cli_options *o)
{
	struct parse_state ps = { 0 };
	int c;

	options_defaults(o);
	build_longopts();
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
