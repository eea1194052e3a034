/* SPDX-License-Identifier: MIT */
/*
 * profile.h - the OCI seccomp profile (the linux.seccomp object of a
 * runtime config) that traps what the command line's filter traps, for
 * containers served by `gpusandbox agent`.
 */
#ifndef GPUSANDBOX_PROFILE_H
#define GPUSANDBOX_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "gs_error.h"
#include "nvrm/rm_abi.h"

/* listenerMetadata: "gpusandbox;traps=<16 hex digits>[;policy=NAME]". The
 * traps value is a hash of the trap set (the escapes and the rules' shape):
 * an agent refuses a container whose profile it would not have written,
 * because a stale profile leaves newer escapes untrapped. */
#define GS_PROFILE_META_PREFIX "gpusandbox;traps="
#define GS_PROFILE_META_POLICY ";policy="
#define GS_PROFILE_VERSION_HEX 16
#define GS_PROFILE_POLICY_NAME_MAX 64

struct gs_profile_opts {
	const struct gs_rm_abi *rm_abi;   /* which escapes are trapped */
	const char *listener_path;        /* absolute path of the agent's socket */
	const char *policy_name;          /* NULL: the agent's default policy */
	bool wait_killable;               /* SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV */
	/* managed = deny: the UVM mmap rules of the command line's filter.
	 * ABIs whose mmap passes its arguments in memory (i386's old mmap)
	 * cannot be trapped by shape, and OCI rules cannot differ per ABI,
	 * so those ABIs are left out: their syscalls are killed. */
	bool trap_uvm_mmap;
	json_object *base;                /* a linux.seccomp object to merge onto; NULL: none */
};

/* The trap set's version for these tables, with or without the mmap traps
 * of managed = deny (what listenerMetadata carries). */
uint64_t gs_profile_trap_version(const struct gs_rm_abi *abi, bool trap_uvm_mmap);

/* Is name a policy name the metadata may carry (letters, digits, '.', '_',
 * '-', not starting with '.')? */
bool gs_profile_policy_name_ok(const char *name);

/* Builds the profile; NULL (err set) if base cannot be merged safely. */
json_object *gs_profile_build(const struct gs_profile_opts *o, struct gs_error *err);

/* `gpusandbox profile ...`; does not return. */
_Noreturn void gs_profile_main(int argc, char **argv);

#endif
