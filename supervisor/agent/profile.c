/* SPDX-License-Identifier: MIT */
/*
 * profile.c - `gpusandbox profile`: the OCI linux.seccomp object for
 * containers served by `gpusandbox agent`.
 *
 * It traps what the command line's filter (filter.c) traps, from the same
 * escape table and with the same rule shapes (filter.h):
 *  - every trapped escape: ioctl whose request word's low byte is the
 *    escape number (MASKED_EQ 0xff), so forged type/direction/size bits
 *    are trapped too;
 *  - seccomp(SET_MODE_FILTER) asking for a new listener fails with EBUSY,
 *    so that nothing in the container can install a listener of its own
 *    once the agent's is gone.
 * Every ABI the command line's filter covers is listed: a syscall from an
 * ABI the profile does not name is killed by the runtime's filter, and one
 * that is named but not trapped would reach the driver unchecked.
 * The UVM mmap rules of managed = deny are not emitted: the agent refuses
 * policies that need them (agent.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arch.h"
#include "driver.h"
#include "filter.h"
#include "gpusandbox.h"
#include "profile.h"
#include "rm_decode.h"

/* Bumped whenever a rule's shape changes (not its escapes, which the hash
 * covers anyway). */
#define PROFILE_SHAPE "gpusandbox-profile-shape-1"
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define N_IOCTL_NR 256u
#define SECCOMP_NEW_LISTENER_FLAG SECCOMP_FILTER_FLAG_NEW_LISTENER

#define ACT_ALLOW "SCMP_ACT_ALLOW"
#define ACT_NOTIFY "SCMP_ACT_NOTIFY"
#define ACT_ERRNO "SCMP_ACT_ERRNO"
#define OP_MASKED_EQ "SCMP_CMP_MASKED_EQ"
#define FLAG_WAIT_KILLABLE "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"
#define ARG_FD_INDEX 0
#define ARG_REQUEST_INDEX 1
#define ARG_SECCOMP_OP 0
#define ARG_SECCOMP_FLAGS 1

/* The OCI names of libseccomp's architecture tokens. */
static const struct {
	uint32_t scmp;
	const char *oci;
} oci_arches[] = {
	{ SCMP_ARCH_X86_64, "SCMP_ARCH_X86_64" }, { SCMP_ARCH_X86, "SCMP_ARCH_X86" },
	{ SCMP_ARCH_X32, "SCMP_ARCH_X32" },       { SCMP_ARCH_AARCH64, "SCMP_ARCH_AARCH64" },
	{ SCMP_ARCH_ARM, "SCMP_ARCH_ARM" },
};

static const char *oci_arch_name(uint32_t scmp)
{
	for (size_t i = 0; i < sizeof(oci_arches) / sizeof(oci_arches[0]); i++)
		if (oci_arches[i].scmp == scmp)
			return oci_arches[i].oci;
	return NULL;
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * FNV_PRIME;
	return h;
}

uint64_t gs_profile_trap_version(const struct gs_rm_abi *abi)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(abi, &n);
	uint64_t h = fnv1a(FNV_OFFSET, PROFILE_SHAPE, strlen(PROFILE_SHAPE));

	h = fnv1a(h, escapes, n);
	for (unsigned i = 0; i < gs_abi_count(); i++)
		h = fnv1a(h, &gs_abi_at(i)->scmp_arch, sizeof(gs_abi_at(i)->scmp_arch));
	return h;
}

bool gs_profile_policy_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= GS_PROFILE_POLICY_NAME_MAX || name[0] == '.')
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len;
}

/* {"index": i, "value": mask, "valueTwo": datum, "op": MASKED_EQ}: the OCI
 * spelling of libseccomp's SCMP_CMP_MASKED_EQ (value is the mask). */
static json_object *masked_arg(unsigned index, uint64_t mask, uint64_t datum)
{
	json_object *a = json_object_new_object();

	json_object_object_add(a, "index", json_object_new_int(index));
	json_object_object_add(a, "value", json_object_new_uint64(mask));
	json_object_object_add(a, "valueTwo", json_object_new_uint64(datum));
	json_object_object_add(a, "op", json_object_new_string(OP_MASKED_EQ));
	return a;
}

static json_object *rule(const char *name, const char *action, json_object *args)
{
	json_object *r = json_object_new_object(), *names = json_object_new_array();

	json_object_array_add(names, json_object_new_string(name));
	json_object_object_add(r, "names", names);
	json_object_object_add(r, "action", json_object_new_string(action));
	json_object_object_add(r, "args", args);
	return r;
}

static json_object *ioctl_rule(const char *action, unsigned nr)
{
	json_object *args = json_object_new_array();

	json_object_array_add(args, masked_arg(ARG_REQUEST_INDEX, GS_FILTER_IOCTL_NR_MASK, nr));
	return rule("ioctl", action, args);
}

/* seccomp(SET_MODE_FILTER, flags with NEW_LISTENER): EBUSY, as filter.c. */
static json_object *listener_refusal(void)
{
	json_object *args = json_object_new_array(), *r;

	json_object_array_add(args, masked_arg(ARG_SECCOMP_OP, GS_FILTER_SECCOMP_OP_MASK,
	                                       SECCOMP_SET_MODE_FILTER));
	json_object_array_add(args, masked_arg(ARG_SECCOMP_FLAGS, SECCOMP_NEW_LISTENER_FLAG,
	                                       SECCOMP_NEW_LISTENER_FLAG));
	r = rule("seccomp", ACT_ERRNO, args);
	json_object_object_add(r, "errnoRet", json_object_new_int(EBUSY));
	return r;
}

static void add_trap_rules(json_object *syscalls, const struct gs_rm_abi *abi)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(abi, &n);

	for (size_t i = 0; i < n; i++)
		json_object_array_add(syscalls, ioctl_rule(ACT_NOTIFY, escapes[i]));
	json_object_array_add(syscalls, listener_refusal());
}

static bool is_trapped(const struct gs_rm_abi *abi, unsigned nr)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(abi, &n);

	for (size_t i = 0; i < n; i++)
		if (escapes[i] == nr)
			return true;
	return false;
}

/* A base whose default refuses, and which allowed ioctl and seccomp by
 * a rule we had to remove: allow again exactly what we do not trap. Every
 * rule is disjoint from the traps, because libseccomp lets an overlapping
 * ALLOW swallow a NOTIFY rule of the same syscall (measured with
 * libseccomp 2.5.4: an unconditional ALLOW on ioctl removes every
 * conditional NOTIFY). */
static void add_complement_rules(json_object *syscalls, const struct gs_rm_abi *abi,
                                 bool ioctl_allowed, bool seccomp_allowed)
{
	static const unsigned other_ops[] = { SECCOMP_SET_MODE_STRICT, SECCOMP_GET_ACTION_AVAIL,
	                                      SECCOMP_GET_NOTIF_SIZES };

	for (unsigned nr = 0; ioctl_allowed && nr < N_IOCTL_NR; nr++)
		if (!is_trapped(abi, nr))
			json_object_array_add(syscalls, ioctl_rule(ACT_ALLOW, nr));
	if (!seccomp_allowed)
		return;
	json_object *args = json_object_new_array();
	json_object_array_add(args, masked_arg(ARG_SECCOMP_FLAGS, SECCOMP_NEW_LISTENER_FLAG, 0));
	json_object_array_add(syscalls, rule("seccomp", ACT_ALLOW, args));
	for (size_t i = 0; i < sizeof(other_ops) / sizeof(other_ops[0]); i++) {
		args = json_object_new_array();
		json_object_array_add(args, masked_arg(ARG_SECCOMP_OP, GS_FILTER_SECCOMP_OP_MASK,
		                                       other_ops[i]));
		json_object_array_add(args, masked_arg(ARG_SECCOMP_FLAGS, SECCOMP_NEW_LISTENER_FLAG,
		                                       SECCOMP_NEW_LISTENER_FLAG));
		json_object_array_add(syscalls, rule("seccomp", ACT_ALLOW, args));
	}
}

static bool str_eq(json_object *o, const char *s)
{
	return o && json_object_is_type(o, json_type_string) && strcmp(json_object_get_string(o), s) == 0;
}

/* Takes "ioctl" and "seccomp" out of a base rule. Only an unconditional
 * ALLOW can be taken over; anything else (conditions, another action) would
 * change what the traps mean, so it is refused. Sets *allowed_* for the
 * names removed. Returns -1 (err set) on refusal. */
static int strip_trapped_names(json_object *r, bool *allowed_ioctl, bool *allowed_seccomp,
                               struct gs_error *err)
{
	json_object *names = NULL, *args = NULL, *keep;
	bool plain_allow;

	if (!json_object_object_get_ex(r, "names", &names) || !json_object_is_type(names, json_type_array))
		return gs_fail(err, EINVAL, "--base: a syscalls entry without a names list");
	json_object_object_get_ex(r, "args", &args);
	plain_allow = str_eq(json_object_object_get(r, "action"), ACT_ALLOW) &&
	              (!args || json_object_is_type(args, json_type_null) || json_object_array_length(args) == 0);
	keep = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		json_object *n = json_object_array_get_idx(names, i);
		bool io = str_eq(n, "ioctl"), sc = str_eq(n, "seccomp");
		if ((io || sc) && !plain_allow) {
			json_object_put(keep);
			return gs_fail(err, EINVAL, "--base: a rule for %s other than an unconditional "
			               "SCMP_ACT_ALLOW: gpusandbox's traps would not mean what they say",
			               io ? "ioctl" : "seccomp");
		}
		*allowed_ioctl |= io;
		*allowed_seccomp |= sc;
		if (!io && !sc)
			json_object_array_add(keep, json_object_get(n));
	}
	json_object_object_add(r, "names", keep);
	return 0;
}

/* Copies the base's rules but those for the trapped syscalls into out. */
static int merge_base_rules(json_object *base_rules, json_object *out, bool *allowed_ioctl,
                            bool *allowed_seccomp, struct gs_error *err)
{
	for (size_t i = 0; base_rules && i < json_object_array_length(base_rules); i++) {
		json_object *r = NULL;
		if (json_object_deep_copy(json_object_array_get_idx(base_rules, i), &r, NULL) < 0)
			return gs_fail(err, ENOMEM, "--base: copying a rule");
		if (str_eq(json_object_object_get(r, "action"), ACT_NOTIFY)) {
			json_object_put(r);
			return gs_fail(err, EINVAL, "--base: it already has SCMP_ACT_NOTIFY rules: one "
			               "filter has one listener");
		}
		if (strip_trapped_names(r, allowed_ioctl, allowed_seccomp, err) < 0) {
			json_object_put(r);
			return -1;
		}
		if (json_object_array_length(json_object_object_get(r, "names")) > 0)
			json_object_array_add(out, r);
		else
			json_object_put(r);
	}
	return 0;
}

static void add_architectures(json_object *prof)
{
	json_object *arches = json_object_object_get(prof, "architectures");

	if (!arches || !json_object_is_type(arches, json_type_array)) {
		arches = json_object_new_array();
		json_object_object_add(prof, "architectures", arches);
	}
	for (unsigned i = 0; i < gs_abi_count(); i++) {
		const char *name = oci_arch_name(gs_abi_at(i)->scmp_arch);
		bool have = false;
		for (size_t j = 0; name && j < json_object_array_length(arches); j++)
			have |= str_eq(json_object_array_get_idx(arches, j), name);
		if (name && !have)
			json_object_array_add(arches, json_object_new_string(name));
	}
}

static void set_listener(json_object *prof, const struct gs_profile_opts *o)
{
	char meta[sizeof(GS_PROFILE_META_PREFIX) + GS_PROFILE_VERSION_HEX + sizeof(GS_PROFILE_META_POLICY) +
	          GS_PROFILE_POLICY_NAME_MAX];

	snprintf(meta, sizeof(meta), GS_PROFILE_META_PREFIX "%016llx%s%s",
	         (unsigned long long)gs_profile_trap_version(o->rm_abi),
	         o->policy_name ? GS_PROFILE_META_POLICY : "", o->policy_name ? o->policy_name : "");
	json_object_object_add(prof, "listenerPath", json_object_new_string(o->listener_path));
	json_object_object_add(prof, "listenerMetadata", json_object_new_string(meta));
	if (o->wait_killable) {
		json_object *flags = json_object_object_get(prof, "flags");
		if (!flags || !json_object_is_type(flags, json_type_array)) {
			flags = json_object_new_array();
			json_object_object_add(prof, "flags", flags);
		}
		json_object_array_add(flags, json_object_new_string(FLAG_WAIT_KILLABLE));
	}
}

json_object *gs_profile_build(const struct gs_profile_opts *o, struct gs_error *err)
{
	json_object *prof = NULL, *syscalls = json_object_new_array();
	bool allowed_ioctl = false, allowed_seccomp = false, default_allows = true;

	for (unsigned i = 0; i < gs_abi_count(); i++)
		if (!oci_arch_name(gs_abi_at(i)->scmp_arch)) {
			gs_fail(err, ENOTSUP, "no OCI name for the %s ABI", gs_abi_at(i)->name);
			goto fail;
		}
	if (o->base) {
		if (!json_object_is_type(o->base, json_type_object) ||
		    !json_object_is_type(json_object_object_get(o->base, "defaultAction"), json_type_string)) {
			gs_fail(err, EINVAL, "--base: not a linux.seccomp object (no defaultAction)");
			goto fail;
		}
		if (json_object_deep_copy(o->base, &prof, NULL) < 0) {
			gs_fail(err, ENOMEM, "--base: copying");
			goto fail;
		}
		default_allows = str_eq(json_object_object_get(prof, "defaultAction"), ACT_ALLOW);
	} else {
		prof = json_object_new_object();
		json_object_object_add(prof, "defaultAction", json_object_new_string(ACT_ALLOW));
	}
	/* Ours first: a reader sees the traps at the top. */
	add_trap_rules(syscalls, o->rm_abi);
	if (merge_base_rules(json_object_object_get(prof, "syscalls"), syscalls, &allowed_ioctl,
	                     &allowed_seccomp, err) < 0)
		goto fail;
	if (!default_allows)
		add_complement_rules(syscalls, o->rm_abi, allowed_ioctl, allowed_seccomp);
	json_object_object_add(prof, "syscalls", syscalls);
	syscalls = NULL;
	add_architectures(prof);
	set_listener(prof, o);
	return prof;
fail:
	json_object_put(syscalls);
	json_object_put(prof);
	return NULL;
}
