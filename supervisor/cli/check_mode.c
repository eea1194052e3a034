/* SPDX-License-Identifier: MIT */
/*
 * check_mode.c - the effective policy and its warnings (check_mode.h).
 *
 * The warnings name settings that are valid but do nothing, because what
 * they limit cannot happen under the rest of the policy: a user who wrote
 * them meant something else, and a quiet run would hide it.
 */
#include <inttypes.h>
#include <string.h>

#include "check_mode.h"
#include "stack.h"
#include "nvrm/rm_abi.h"
#include "rm_tables.h"

#define SIZE_TEXT 32
#define KEY_WIDTH 22

static void print_count(FILE *out, const char *key, uint32_t v)
{
	if (v == GS_COUNT_UNLIMITED)
		fprintf(out, "  %-*s unlimited\n", KEY_WIDTH, key);
	else
		fprintf(out, "  %-*s %" PRIu32 "\n", KEY_WIDTH, key, v);
}

static void print_memory(FILE *out, const struct gs_quota *q)
{
	char s[SIZE_TEXT];

	fprintf(out, "  %-*s %s%s\n", KEY_WIDTH, "mem", gs_format_size(q->mem_per_gpu, s, sizeof(s)),
	        q->mem_per_gpu == GS_QUOTA_UNLIMITED ? "" : " on each GPU");
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		char key[SIZE_TEXT];
		if (q->mem_gpu[g] == GS_MEM_GPU_UNSET)
			continue;
		snprintf(key, sizeof(key), "gpu.%u.mem", g);
		fprintf(out, "  %-*s %s\n", KEY_WIDTH, key, gs_format_size(q->mem_gpu[g], s, sizeof(s)));
	}
	fprintf(out, "  %-*s %s\n", KEY_WIDTH, "managed", gs_managed_name(q->managed));
	fprintf(out, "  %-*s %s\n", KEY_WIDTH, "p2p-register", gs_p2p_register_name(q->p2p_register));
	if (q->fd_import != GS_FD_IMPORT_OWN)
		fprintf(out, "  %-*s %s\n", KEY_WIDTH, "fd-import", gs_fd_import_name(q->fd_import));
}

static void print_gpus(FILE *out, const struct gs_quota *q)
{
	fprintf(out, "  %-*s ", KEY_WIDTH, "gpus");
	if (!q->visible_set && !q->n_uuids)
		fputs("all", out);
	gs_print_gpus(out, q);
	fputc('\n', out);
}

static void print_rules(FILE *out, const struct gs_rules *r)
{
	const char *sep = "";

	fprintf(out, "  %-*s ", KEY_WIDTH, "allow");
	for (unsigned g = 0; g < GS_GROUP_N; g++)
		if (r->groups & GS_GROUP_BIT(g)) {
			fprintf(out, "%s%s", sep, gs_group_name((enum gs_group)g));
			sep = ", ";
		}
	fputs(*sep ? "\n" : "none\n", out);
	for (uint32_t i = 0; i < r->n_classes; i++) {
		const struct rm_class_info *ci = rm_class_row(gs_rm_abi_default(), r->classes[i]);
		fprintf(out, "  %-*s 0x%" PRIx32 " %s\n", KEY_WIDTH, "allow.class", r->classes[i],
		        ci && ci->name ? ci->name : "(unknown to gpusandbox)");
	}
	for (uint32_t i = 0; i < r->n_controls; i++) {
		const struct rm_ctrl_info *ci = rm_ctrl_row(gs_rm_abi_default(), r->controls[i]);
		fprintf(out, "  %-*s 0x%" PRIx32 " %s\n", KEY_WIDTH, "allow.control", r->controls[i],
		        ci && ci->name ? ci->name : "(unknown to gpusandbox)");
	}
}

void gs_check_print(FILE *out, const struct gs_check_input *in)
{
	const struct gs_quota *q = in->quota;

	fprintf(out, "effective policy (%s%s, then the command line):\n",
	        in->policy_path ? "policy file " : "built-in defaults", in->policy_path ? in->policy_path : "");
	print_memory(out, q);
	if (q->sm_percent < GS_SM_UNLIMITED)
		fprintf(out, "  %-*s %" PRIu32 " %% of GPU time (%s), period %" PRIu32 " ms\n", KEY_WIDTH,
		        "sm", q->sm_percent,
		        q->sm_mode == GS_SM_MODE_GUARANTEE ? "guarantee: at least, idle time of others lent"
		                                           : "cap: at most",
		        q->sm_period_ms);
	else
		fprintf(out, "  %-*s unlimited\n", KEY_WIDTH, "sm");
	for (unsigned k = 0; k < GS_QK_N; k++)
		print_count(out, gs_quota_kind_row((enum gs_quota_kind)k)->key, q->count[k]);
	print_gpus(out, q);
	fprintf(out, "  %-*s %s\n", KEY_WIDTH, "audit-log", in->audit_path ? in->audit_path : "none");
	fprintf(out, "  %-*s %s\n", KEY_WIDTH, "audit-level", gs_audit_level_name(in->audit_level));
	fprintf(out, "  %-*s %s\n", KEY_WIDTH, "audit-stacks",
	        !in->audit_stacks ? "off" : gs_stack_available() ? "on" : "on (unavailable: built without libdw)");
	print_rules(out, in->rules);
	if (in->quota->p2p_register == GS_P2P_REGISTER_AUTO)
		fprintf(out, "  %-*s %s (auto)\n", KEY_WIDTH, "p2p-register in effect",
		        gs_p2p_register_name(gs_p2p_register_effective(GS_P2P_REGISTER_AUTO, in->rules)));
}

/* True when the rules let some class of engine e through: the video group,
 * or an explicit allow.class of one of its classes. */
static bool engine_reachable(const struct gs_rules *r, enum gs_engine e)
{
	/* A policy check runs without a driver: the newest tables name the
	 * classes, as the policy parser's do. */
	const struct gs_rm_abi *abi = gs_rm_abi_default();
	size_t n = rm_class_table_size(abi);

	for (size_t i = 0; i < n; i++) {
		const struct rm_class_info *ci = rm_class_table_at(abi, i);
		if (ci->engine == (int8_t)e &&
		    ((r->groups & GS_GROUP_BIT(ci->group)) ||
		     (ci->also != GS_GROUP_NONE && (r->groups & GS_GROUP_BIT(ci->also)))))
			return true;
	}
	for (uint32_t i = 0; i < r->n_classes; i++)
		if (gs_class_engine(abi, r->classes[i]) == e)
			return true;
	return false;
}

static unsigned warn_engines(FILE *w, const struct gs_check_input *in)
{
	unsigned n = 0;

	for (unsigned e = 0; e < GS_ENGINE_N; e++) {
		if (in->quota->engines[e] == GS_COUNT_UNLIMITED || engine_reachable(in->rules, e))
			continue;
		fprintf(w, "gpusandbox: warning: %s has no effect: the policy allows none of its "
		           "classes (add the video group: allow = ..., video)\n", gs_engine_key((enum gs_engine)e));
		n++;
	}
	return n;
}

static unsigned warn_gpu_mem(FILE *w, const struct gs_quota *q)
{
	unsigned n = 0;

	/* GPUs named by UUID are resolved at start; only indices are known. */
	if (!q->visible_set || q->n_uuids)
		return 0;
	for (unsigned g = 0; g < GS_MAX_GPUS; g++) {
		if (q->mem_gpu[g] == GS_MEM_GPU_UNSET || (q->visible & (1ull << g)))
			continue;
		fprintf(w, "gpusandbox: warning: gpu.%u.mem has no effect: GPU %u is not in gpus\n", g, g);
		n++;
	}
	return n;
}

unsigned gs_check_warn(FILE *w, const struct gs_check_input *in)
{
	const struct gs_quota *q = in->quota;
	unsigned n = warn_engines(w, in) + warn_gpu_mem(w, q);

	if (q->sm_percent >= GS_SM_UNLIMITED && q->sm_period_ms != GS_SM_PERIOD_DEFAULT_MS) {
		fprintf(w, "gpusandbox: warning: sm-period has no effect without sm (a share of GPU "
		           "time under 100)\n");
		n++;
	}
	if (q->sm_percent >= GS_SM_UNLIMITED && q->sm_mode != GS_SM_MODE_CAP) {
		fprintf(w, "gpusandbox: warning: sm-mode has no effect without sm (a share of GPU "
		           "time under 100)\n");
		n++;
	}
	if (q->active_channel_groups != GS_COUNT_UNLIMITED && q->channel_groups != GS_COUNT_UNLIMITED &&
	    q->active_channel_groups >= q->channel_groups) {
		fprintf(w, "gpusandbox: warning: active-channel-groups (%" PRIu32 ") has no effect: "
		           "channel-groups (%" PRIu32 ") already allows no more\n",
		        q->active_channel_groups, q->channel_groups);
		n++;
	}
	return n;
}
