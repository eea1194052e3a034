/* SPDX-License-Identifier: MIT */
/*
 * groups.h - named groups of RM classes and controls, and the verdicts the
 * policy gives a class or a control.
 *
 * Every class and control gpusandbox lets through must be allowed by the
 * policy: by one of its groups, or by an explicit allow.class /
 * allow.control entry. Anything else is refused the way the driver refuses
 * what a GPU does not support: NV_ERR_INVALID_CLASS for a class,
 * NV_ERR_NOT_SUPPORTED for a control (docs/policy-evidence.md says where
 * each default entry comes from).
 */
#ifndef GPUSANDBOX_GROUPS_H
#define GPUSANDBOX_GROUPS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nvrm_abi.h"
#include "nvrm/groups.h"
#include "rm_tables.h"
#include "quota.h"

#define GS_GROUP_BIT(g) (1u << (g))
/* What PyTorch (and CUDA programs on the driver API) needed in the traces. */
#define GS_GROUPS_DEFAULT \
	(GS_GROUP_BIT(GS_GROUP_COMPUTE) | GS_GROUP_BIT(GS_GROUP_MEMORY) | \
	 GS_GROUP_BIT(GS_GROUP_MONITORING))

/* Explicit entries a policy may add on top of its groups. */
#define GS_RULES_MAX_EXTRA 256u

/* The allowlist half of a policy. */
struct gs_rules {
	uint32_t groups;                         /* GS_GROUP_BIT()s */
	uint32_t n_classes;
	uint32_t classes[GS_RULES_MAX_EXTRA];
	uint32_t n_controls;
	uint32_t controls[GS_RULES_MAX_EXTRA];
};

/* The built-in default: GS_GROUPS_DEFAULT and no explicit entries. */
void gs_rules_default(struct gs_rules *r);
const struct gs_rules *gs_rules_builtin(void);

const char *gs_group_name(enum gs_group g);

/* p2p-register = auto, resolved against the rules: perform where the
 * p2p group is allowed (the sandbox may share memory beyond itself, and
 * GPUDirect RDMA needs the registrations), none elsewhere. Any other
 * mode is returned as it is. */
enum gs_p2p_register gs_p2p_register_effective(enum gs_p2p_register m, const struct gs_rules *r);
const char *gs_group_help(enum gs_group g);
/* GS_GROUP_NONE when the name is not a group's. */
enum gs_group gs_group_find(const char *name, size_t len);

/* Which group a class or control belongs to; GS_GROUP_NONE for none. */
enum gs_group gs_class_group(const struct gs_rm_abi *abi, uint32_t cls);
enum gs_group gs_control_group(const struct gs_rm_abi *abi, uint32_t cmd);

/* Which video engine a class drives; GS_ENGINE_NONE for other classes. */
enum gs_engine gs_class_engine(const struct gs_rm_abi *abi, uint32_t cls);

/* The verdict of the allowlist on one class or control. */
struct gs_rule_verdict {
	bool        allowed;
	nv_status_t status;      /* the refusal's RM status when !allowed */
	const char *reason;      /* why it was refused; NULL when allowed */
	const char *group;       /* the group it belongs to, or NULL */
};

/* Membership comes from the rows of the driver version abi. */
struct gs_rule_verdict gs_rules_class(const struct gs_rm_abi *abi, const struct gs_rules *r,
                                      uint32_t cls);
struct gs_rule_verdict gs_rules_control(const struct gs_rm_abi *abi, const struct gs_rules *r,
                                        uint32_t cmd);

/* Prints every group with its help text and members (--list-groups). */
void gs_groups_print(FILE *f, const struct gs_rm_abi *abi, uint32_t default_groups);

#endif
