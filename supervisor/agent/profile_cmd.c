/* SPDX-License-Identifier: MIT */
/*
 * profile_cmd.c - the command line of `gpusandbox profile`.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "driver.h"
#include "cmd_usage.h"
#include "gpusandbox.h"
#include "policy.h"
#include "profile.h"

static const char profile_usage[] =
	"Usage: gpusandbox profile --listener PATH [--base FILE] [--policy-name NAME]\n"
	"                          [--policy FILE] [--wait-killable] [--driver-abi ABI]\n"
	"Print the OCI seccomp profile (the linux.seccomp object of a runtime\n"
	"config) that traps what gpusandbox's own filter traps and hands the\n"
	"container's listener to `gpusandbox agent` at PATH.\n"
	"\n"
	"Every other rule is the container runtimes' default seccomp profile\n"
	"(Docker's, containerd's RuntimeDefault), unless --base names another.\n"
	"\n"
	"  --listener PATH    the agent's socket (absolute path)\n"
	"  --base FILE        merge onto this profile instead: OCI linux.seccomp\n"
	"                     (runc, crun, containerd), Docker's or podman's format\n"
	"                     ({\"defaultAction\": \"SCMP_ACT_ALLOW\"}: allow the rest)\n"
	"  --policy-name NAME the container's policy: NAME.policy in the agent's\n"
	"                     --policy-dir (default: the agent's --policy)\n"
	"  --policy FILE      the policy the agent will serve with it: with\n"
	"                     managed = deny, trap mmap as gpusandbox run does\n"
	"                     (32-bit x86 programs are then killed)\n"
	"  --wait-killable    ask for SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV\n"
	"                     (crun 1.6+, runc 1.5+; runc 1.1 refuses every flag)\n"
	"  --driver-abi ABI   the RM tables to trap for, as in gpusandbox run\n";

static json_object *read_base(const char *path)
{
	json_object *base = json_object_from_file(path);

	if (!base) {
		fprintf(stderr, "gpusandbox: --base %s: %s\n", path, json_util_get_last_err());
		exit(GS_EXIT_ERROR);
	}
	return base;
}

/* Does the policy at path deny managed memory? The rest of it is the
 * agent's business (it loads and checks it again for each container). */
static bool policy_denies_managed(const char *path)
{
	static struct gs_policy p;
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(&p);
	if (gs_policy_load(path, &p, diag, sizeof(diag)) < 0) {
		fprintf(stderr, "gpusandbox: --policy %s: %s\n", path, diag);
		exit(GS_EXIT_ERROR);
	}
	return p.quota.managed == GS_MANAGED_DENY;
}

/* The tables of the driver here, as the agent will choose them. */
static const struct gs_rm_abi *driver_tables(const char *driver_abi)
{
	static struct gs_driver d;
	struct gs_error err = { 0 };
	char buf[GS_ERROR_MSG_MAX + 64];

	if (gs_driver_detect(&d, &err) < 0 || gs_driver_choose_abi(&d, driver_abi, &err) < 0) {
		gs_error_text(&err, buf, sizeof(buf));
		fprintf(stderr, "gpusandbox: %s\n", buf);
		exit(GS_EXIT_ERROR);
	}
	return d.rm_abi;
}

_Noreturn void gs_profile_main(int argc, char **argv)
{
	enum { OPT_LISTENER = 256, OPT_BASE, OPT_POLICY_NAME, OPT_POLICY, OPT_WAIT_KILLABLE, OPT_DRIVER_ABI };
	static const struct option longopts[] = {
		{ "listener", required_argument, NULL, OPT_LISTENER },
		{ "base", required_argument, NULL, OPT_BASE },
		{ "policy-name", required_argument, NULL, OPT_POLICY_NAME },
		{ "policy", required_argument, NULL, OPT_POLICY },
		{ "wait-killable", no_argument, NULL, OPT_WAIT_KILLABLE },
		{ "driver-abi", required_argument, NULL, OPT_DRIVER_ABI },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct gs_profile_opts o = { 0 };
	struct gs_error err = { 0 };
	const char *base_path = NULL, *driver_abi = NULL, *policy_path = NULL;
	json_object *prof;
	int c;

	gs_driver_nodes_init();
	cmd_usage_set("profile");
	opterr = 0;
	optind = 2; /* after "profile" */
	while ((c = getopt_long(argc, argv, "+:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_LISTENER: o.listener_path = optarg; break;
		case OPT_BASE: base_path = optarg; break;
		case OPT_POLICY_NAME:
			if (!gs_profile_policy_name_ok(optarg))
				cmd_usage_error("invalid --policy-name '%s' (letters, digits, '.', '_', '-')", optarg);
			o.policy_name = optarg;
			break;
		case OPT_POLICY: policy_path = optarg; break;
		case OPT_WAIT_KILLABLE: o.wait_killable = true; break;
		case OPT_DRIVER_ABI: driver_abi = optarg; break;
		case 'h': fputs(profile_usage, stdout); exit(0);
		default: cmd_option_error(c, argv);
		}
	}
	if (optind < argc)
		cmd_usage_error("profile takes no arguments (got '%s')", argv[optind]);
	if (!o.listener_path || o.listener_path[0] != '/')
		cmd_usage_error("%s", "profile needs --listener with an absolute path");
	if (gs_abi_resolve() < 0) {
		fprintf(stderr, "gpusandbox: libseccomp does not know ioctl on this machine\n");
		exit(GS_EXIT_ERROR);
	}
	o.rm_abi = driver_tables(driver_abi);
	o.trap_uvm_mmap = policy_path && policy_denies_managed(policy_path);
	if (base_path)
		o.base = read_base(base_path);
	prof = gs_profile_build(&o, &err);
	if (!prof) {
		char buf[GS_ERROR_MSG_MAX + 64];
		gs_error_text(&err, buf, sizeof(buf));
		fprintf(stderr, "gpusandbox: %s\n", buf);
		exit(GS_EXIT_ERROR);
	}
	puts(json_object_to_json_string_ext(prof, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(prof);
	json_object_put(o.base);
	exit(fflush(stdout) == 0 ? 0 : GS_EXIT_ERROR);
}
