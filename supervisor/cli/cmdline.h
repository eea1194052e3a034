/* SPDX-License-Identifier: MIT */
/*
 * cmdline.h - the run's command line: what the options and the policy
 * file say, read into one struct before anything starts.
 */
#ifndef GPUSANDBOX_CMDLINE_H
#define GPUSANDBOX_CMDLINE_H

#include <limits.h>
#include <stdbool.h>

#include "audit.h"
#include "contain.h"
#include "policy.h"
#include "quota.h"
#include "trace_out.h"

/* What the command line and --policy ask of a run. */
struct gs_cli_options {
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
	/* --uvm-map as-user: UVM maps made with the workload's uid, which
	 * --user names and the operator says is the sandbox's alone
	 * (own_rm.h, gs_own_rm_share_token); false: dup, the default. */
	bool            uvm_map_as_user;
};

/* Reads argv (after gs_subcommand_dispatch) into o: --policy first, then
 * every other option over it, in the order given. --help, --version and
 * --list-groups print and exit 0; the first bad option, or a command line
 * that names no COMMAND where one is needed, exits 125 with its own
 * diagnostic (options.c). */
void gs_parse_command_line(int argc, char **argv, struct gs_cli_options *o);

#endif
