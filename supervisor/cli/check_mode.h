/* SPDX-License-Identifier: MIT */
/*
 * check_mode.h - `gpusandbox --check`: validate the policy file and the
 * options without running anything (as sshd -t, nginx -t), print the
 * effective policy, and warn about settings that cannot take effect.
 */
#ifndef GPUSANDBOX_CHECK_MODE_H
#define GPUSANDBOX_CHECK_MODE_H

#include <stdio.h>

#include "groups.h"
#include "policy.h"
#include "quota.h"

struct gs_check_input {
	const struct gs_quota *quota;
	const struct gs_rules *rules;
	const char            *policy_path;   /* NULL: no --policy */
	const char            *audit_path;    /* NULL: no audit log */
	enum gs_audit_level    audit_level;
	bool                   audit_stacks;
};

/* Prints the effective policy on out. */
void gs_check_print(FILE *out, const struct gs_check_input *in);

/* Prints one "gpusandbox: warning: ..." line on warn for each setting that
 * cannot take effect; returns how many. */
unsigned gs_check_warn(FILE *warn, const struct gs_check_input *in);

#endif
