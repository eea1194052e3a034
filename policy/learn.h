/* SPDX-License-Identifier: MIT */
/*
 * learn.h - learning mode (gpusandbox --learn FILE).
 *
 * A learning run starts from the policy it would otherwise run under (the
 * default groups, or --policy's, with the command line's limits) and, where
 * that allowlist refuses a class or control that gpusandbox knows, adds an
 * explicit entry instead of refusing. Each entry remembers the first call
 * that needed it. At exit the result is written as a policy file
 * (gpusandbox.policy(5)) that, used as --policy, allows the same run.
 *
 * Only the allowlist learns. Quotas, the refusal of classes and controls
 * gpusandbox does not know, FINN-serialized params, controls with pointers
 * it cannot relocate, process-bound classes and every other check that is
 * not about the allowlist stay exactly as in an ordinary run: those are
 * what keeps the supervisor safe, not what a policy chooses.
 */
#ifndef GPUSANDBOX_LEARN_H
#define GPUSANDBOX_LEARN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "groups.h"
#include "gs_error.h"
#include "quota.h"

/* Bytes of a command name we keep: the kernel's TASK_COMM_LEN. */
#define GS_LEARN_COMM_MAX 16u
/* The audit reason of a call that only the learning run allowed. */
#define GS_LEARN_REASON "allowed by --learn: not in the policy"

/* The first call that needed an entry. call is a static string (the
 * escape's name); comm is already made safe to print (learn.c). */
struct gs_learn_origin {
	const char *call;          /* NULL: the entry came from the policy */
	bool        via_xfer;
	pid_t       pid;
	char        comm[GS_LEARN_COMM_MAX];
};

struct gs_learn {
	/* The RM tables of the running driver: what is known, named, grouped. */
	const struct gs_rm_abi *abi;
	/* The allowlist of the learning run: the starting policy's groups and
	 * entries, then what was learned. The supervisor enforces this one,
	 * so a second call of a learned class is an ordinary allow. */
	struct gs_rules        rules;
	/* origins of rules.classes[i] / rules.controls[i] */
	struct gs_learn_origin class_from[GS_RULES_MAX_EXTRA];
	struct gs_learn_origin control_from[GS_RULES_MAX_EXTRA];
	/* The limits to write: the starting policy's, with the command
	 * line's overrides, as given (GPU UUIDs not yet resolved). */
	struct gs_quota        quota;
	/* Entries the run needed that did not fit (GS_RULES_MAX_EXTRA): they
	 * stayed refused, and the written file does not allow them. */
	uint32_t               dropped;
};

/* Starts learning from these limits and this allowlist. */
void gs_learn_init(struct gs_learn *l, const struct gs_rm_abi *abi, const struct gs_quota *q,
                   const struct gs_rules *base);

/* The allowlist refused key (a class, or a control when is_control) for
 * the call described by from. Returns true when the entry was learned and
 * the call may go on; false when it must stay refused: gpusandbox does not
 * know the class or control (it could not be written, nor performed
 * safely), or there is no room left. */
bool gs_learn_add(struct gs_learn *l, bool is_control, uint32_t key,
                  const struct gs_learn_origin *from);

/* How many entries the run learned (not counting the policy's own). */
unsigned gs_learn_count(const struct gs_learn *l);

/* Copies a command name into out, with every byte a policy file or a
 * terminal could take for something else (controls, non-ASCII) as '?'. */
void gs_learn_clean_comm(const char *comm, char out[GS_LEARN_COMM_MAX]);

/* The learned policy as text (malloc'd; NULL when out of memory). */
char *gs_learn_format(const struct gs_learn *l);

/* Before the workload starts: can path be written the way
 * gs_learn_save() will? Returns 0, or -1 with err set. */
int gs_learn_check_path(const char *path, struct gs_error *err);

/* Writes text to path atomically: path.tmp in the same directory, fsync,
 * rename, fsync of the directory. Returns 0, or -1 with err set. */
int gs_learn_save(const char *path, const char *text, struct gs_error *err);

#endif
