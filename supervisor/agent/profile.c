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
 *    once the agent's is gone;
 *  - io_uring's system calls fail with ENOSYS (filter.c says why).
 * Every ABI the command line's filter covers is listed: a syscall from an
 * ABI the profile does not name is killed by the runtime's filter, and one
 * that is named but not trapped would reach the driver unchecked.
 * Under managed = deny (--policy naming such a policy) the UVM mmap rules
 * of filter.c are added with the same shapes; see struct gs_profile_opts
 * for the ABIs that cannot have them.
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
#include "runtime_default.h"

/* Bumped whenever a rule's shape changes (not its escapes, which the hash
 * covers anyway). */
#define PROFILE_SHAPE "gpusandbox-profile-shape-2"
#define PROFILE_SHAPE_UVM_MMAP "uvm-mmap-1"
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull
#define N_IOCTL_NR 256u
#define SECCOMP_NEW_LISTENER_FLAG SECCOMP_FILTER_FLAG_NEW_LISTENER

#define ACT_ALLOW "SCMP_ACT_ALLOW"
#define ACT_NOTIFY "SCMP_ACT_NOTIFY"
#define ACT_ERRNO "SCMP_ACT_ERRNO"
#define OP_MASKED_EQ "SCMP_CMP_MASKED_EQ"
#define OP_NE "SCMP_CMP_NE"
#define OP_EQ "SCMP_CMP_EQ"
#define FLAG_WAIT_KILLABLE "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"
#define ARG_FD_INDEX 0
#define ARG_REQUEST_INDEX 1
#define ARG_SECCOMP_OP 0
#define ARG_SECCOMP_FLAGS 1
#define ARG_MMAP_PROT 2
#define ARG_MMAP_FLAGS 3
#define ARG_MMAP_OFFSET 5

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

/* Does the profile list this ABI? Not one whose mmap cannot be trapped by
 * shape when the mmap traps are asked for (profile.h). */
static bool abi_listed(const struct gs_abi *abi, bool trap_uvm_mmap)
{
	return !(trap_uvm_mmap && abi->old_mmap);
}

uint64_t gs_profile_trap_version(const struct gs_rm_abi *abi, bool trap_uvm_mmap)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(abi, &n);
	uint64_t h = fnv1a(FNV_OFFSET, PROFILE_SHAPE, strlen(PROFILE_SHAPE));

	h = fnv1a(h, escapes, n);
	/* UVM's trapped calls' bytes too: a profile made before they were
	 * trapped lets the map reach the driver unseen, and must not pass
	 * for this one. */
	for (unsigned nr = 0; nr < N_IOCTL_NR; nr++) {
		uint8_t byte = (uint8_t)nr;
		if (gs_filter_is_uvm_byte(abi, nr))
			h = fnv1a(h, &byte, sizeof(byte));
	}
	for (unsigned i = 0; i < gs_abi_count(); i++)
		if (abi_listed(gs_abi_at(i), trap_uvm_mmap))
			h = fnv1a(h, &gs_abi_at(i)->scmp_arch, sizeof(gs_abi_at(i)->scmp_arch));
	if (trap_uvm_mmap)
		h = fnv1a(h, PROFILE_SHAPE_UVM_MMAP, strlen(PROFILE_SHAPE_UVM_MMAP));
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

/* {"index": i, "value": v, "op": OP}: a plain comparison. */
static json_object *cmp_arg(unsigned index, uint64_t value, const char *op)
{
	json_object *a = json_object_new_object();

	json_object_object_add(a, "index", json_object_new_int(index));
	json_object_object_add(a, "value", json_object_new_uint64(value));
	json_object_object_add(a, "op", json_object_new_string(op));
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

/* The mmap forms the listed ABIs have, by name: "mmap" on all of them
 * (only by shape: i386's old mmap is not listed), "mmap2" where a listed
 * ABI has it. */
static bool listed_abi_has_mmap2(bool trap_uvm_mmap)
{
	for (unsigned i = 0; i < gs_abi_count(); i++)
		if (abi_listed(gs_abi_at(i), trap_uvm_mmap) && gs_abi_at(i)->mmap2_nr >= 0)
			return true;
	return false;
}

/* filter.c's add_uvm_mmap_rules, in OCI: NOTIFY when PROT_WRITE is in
 * prot, the type is shared (either spelling) without MAP_ANONYMOUS, and
 * the offset is not 0. Each condition of one rule must hold (AND). */
static void add_uvm_mmap_rules(json_object *syscalls, const char *name)
{
	static const unsigned shared_types[] = { MAP_SHARED, MAP_SHARED_VALIDATE };

	for (size_t i = 0; i < sizeof(shared_types) / sizeof(shared_types[0]); i++) {
		json_object *args = json_object_new_array();
		json_object_array_add(args, masked_arg(ARG_MMAP_PROT, PROT_WRITE, PROT_WRITE));
		json_object_array_add(args, masked_arg(ARG_MMAP_FLAGS, GS_FILTER_MMAP_TYPE_MASK, shared_types[i]));
		json_object_array_add(args, cmp_arg(ARG_MMAP_OFFSET, 0, OP_NE));
		json_object_array_add(syscalls, rule(name, ACT_NOTIFY, args));
	}
}

/* filter.c's add_mmap_rules for the listed ABIs: remap_file_pages whole
 * (it calls the file's mmap handler again), mmap and mmap2 by shape. */
static void add_mmap_traps(json_object *syscalls)
{
	json_object_array_add(syscalls, rule("remap_file_pages", ACT_NOTIFY, json_object_new_array()));
	add_uvm_mmap_rules(syscalls, "mmap");
	if (listed_abi_has_mmap2(true))
		add_uvm_mmap_rules(syscalls, "mmap2");
}

/* filter.c's add_iouring_refusal: each refused whole. */
static void add_iouring_refusal(json_object *syscalls)
{
	for (int i = 0; i < GS_FILTER_IOURING_N; i++) {
		json_object *r = rule(gs_filter_iouring_names[i], ACT_ERRNO, json_object_new_array());
		json_object_object_add(r, "errnoRet", json_object_new_int(GS_FILTER_IOURING_ERRNO));
		json_object_array_add(syscalls, r);
	}
}

static void add_trap_rules(json_object *syscalls, const struct gs_profile_opts *o)
{
	size_t n = 0;
	const uint8_t *escapes = rm_trapped_escapes(o->rm_abi, &n);

	for (size_t i = 0; i < n; i++)
		json_object_array_add(syscalls, ioctl_rule(ACT_NOTIFY, escapes[i]));
	/* UVM's performed calls by their low byte, as filter.c traps them. */
	for (unsigned nr = 0; nr < N_IOCTL_NR; nr++)
		if (gs_filter_is_uvm_byte(o->rm_abi, nr))
			json_object_array_add(syscalls, ioctl_rule(ACT_NOTIFY, nr));
	json_object_array_add(syscalls, listener_refusal());
	add_iouring_refusal(syscalls);
	if (o->trap_uvm_mmap)
		add_mmap_traps(syscalls);
}

static bool is_trapped(const struct gs_rm_abi *abi, unsigned nr)
{
	return gs_filter_is_rm_byte(abi, nr) || gs_filter_is_uvm_byte(abi, nr);
}

/* The syscalls the profile traps, by name: a base's rules for them are
 * taken over (strip_trapped_names), and, under a refusing default, what
 * the base allowed of them and we do not trap is allowed back. */
enum { T_IOCTL, T_SECCOMP, T_MMAP, T_MMAP2, T_REMAP, T_IOURING0, N_TRAPPED = T_IOURING0 + GS_FILTER_IOURING_N };
_Static_assert(GS_FILTER_IOURING_N == 3, "the io_uring entries of taken_over.trapped");
static const char *const trapped_names[T_IOURING0] = {
	[T_IOCTL] = "ioctl", [T_SECCOMP] = "seccomp", [T_MMAP] = "mmap", [T_MMAP2] = "mmap2",
	[T_REMAP] = "remap_file_pages",
};

/* io_uring's names are filter.h's; they are refused whole: nothing of
 * them is allowed back. */
static const char *trapped_name(int i)
{
	return i >= T_IOURING0 ? gs_filter_iouring_names[i - T_IOURING0] : trapped_names[i];
}

struct taken_over {
	bool trapped[N_TRAPPED];   /* names the profile has rules for */
	bool allowed[N_TRAPPED];   /* names the base allowed (its rules removed) */
};

static void seccomp_complement(json_object *syscalls)
{
	static const unsigned other_ops[] = { SECCOMP_SET_MODE_STRICT, SECCOMP_GET_ACTION_AVAIL,
	                                      SECCOMP_GET_NOTIF_SIZES };
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

static json_object *one_arg(json_object *arg)
{
	json_object *args = json_object_new_array();

	json_object_array_add(args, arg);
	return args;
}

/* Every mmap that is not shaped like a UVM mapping, as rules that each
 * contradict the trap (add_uvm_mmap_rules): no PROT_WRITE; or flags whose
 * type bits are any value but the two shared types (every other value of
 * the mask, one rule each); or offset 0. */
static void mmap_complement(json_object *syscalls, const char *name)
{
	const uint64_t mask = GS_FILTER_MMAP_TYPE_MASK;

	json_object_array_add(syscalls, rule(name, ACT_ALLOW, one_arg(masked_arg(ARG_MMAP_PROT, PROT_WRITE, 0))));
	for (uint64_t v = mask;; v = (v - 1) & mask) {
		if (v != MAP_SHARED && v != MAP_SHARED_VALIDATE)
			json_object_array_add(syscalls, rule(name, ACT_ALLOW,
			                                     one_arg(masked_arg(ARG_MMAP_FLAGS, mask, v))));
		if (v == 0)
			break;
	}
	json_object_array_add(syscalls, rule(name, ACT_ALLOW, one_arg(cmp_arg(ARG_MMAP_OFFSET, 0, OP_EQ))));
}

/* A base whose default refuses, and which allowed a trapped syscall by a
 * rule we had to remove: allow again exactly what we do not trap. Every
 * rule is disjoint from the traps, because libseccomp lets an overlapping
 * ALLOW swallow a NOTIFY rule of the same syscall (measured with
 * libseccomp 2.5.4: an unconditional ALLOW on ioctl removes every
 * conditional NOTIFY). remap_file_pages is trapped whole: nothing is left
 * to allow. */
static void add_complement_rules(json_object *syscalls, const struct gs_rm_abi *abi,
                                 const struct taken_over *t)
{
	for (unsigned nr = 0; t->allowed[T_IOCTL] && nr < N_IOCTL_NR; nr++)
		if (!is_trapped(abi, nr))
			json_object_array_add(syscalls, ioctl_rule(ACT_ALLOW, nr));
	if (t->allowed[T_SECCOMP])
		seccomp_complement(syscalls);
	if (t->trapped[T_MMAP] && t->allowed[T_MMAP])
		mmap_complement(syscalls, trapped_names[T_MMAP]);
	if (t->trapped[T_MMAP2] && t->allowed[T_MMAP2])
		mmap_complement(syscalls, trapped_names[T_MMAP2]);
}

static bool str_eq(json_object *o, const char *s)
{
	return o && json_object_is_type(o, json_type_string) && strcmp(json_object_get_string(o), s) == 0;
}

static int trapped_index(const struct taken_over *t, json_object *name)
{
	for (int i = 0; i < N_TRAPPED; i++)
		if (t->trapped[i] && str_eq(name, trapped_name(i)))
			return i;
	return -1;
}

/* A Docker/podman-format condition ("includes"/"excludes": arches, caps,
 * minKernel) that is not empty: the rule holds only for some containers,
 * so it is not an unconditional ALLOW. */
static bool has_condition(json_object *r, const char *key)
{
	json_object *c = json_object_object_get(r, key);

	return c && !json_object_is_type(c, json_type_null) &&
	       !(json_object_is_type(c, json_type_object) && json_object_object_length(c) == 0);
}

/* Takes the trapped names out of a base rule. Only an unconditional ALLOW
 * can be taken over; anything else (conditions, another action) would
 * change what the traps mean, so it is refused. Marks the names removed in
 * t->allowed. Returns -1 (err set) on refusal. */
static int strip_trapped_names(json_object *r, struct taken_over *t, struct gs_error *err)
{
	json_object *names = NULL, *args = NULL, *keep;
	bool plain_allow;

	if (!json_object_object_get_ex(r, "names", &names) || !json_object_is_type(names, json_type_array))
		return gs_fail(err, EINVAL, "--base: a syscalls entry without a names list");
	json_object_object_get_ex(r, "args", &args);
	plain_allow = str_eq(json_object_object_get(r, "action"), ACT_ALLOW) &&
	              (!args || json_object_is_type(args, json_type_null) || json_object_array_length(args) == 0) &&
	              !has_condition(r, "includes") && !has_condition(r, "excludes");
	keep = json_object_new_array();
	for (size_t i = 0; i < json_object_array_length(names); i++) {
		json_object *n = json_object_array_get_idx(names, i);
		int k = trapped_index(t, n);
		if (k >= 0 && !plain_allow) {
			json_object_put(keep);
			return gs_fail(err, EINVAL, "--base: a rule for %s other than an unconditional "
			               "SCMP_ACT_ALLOW: gpusandbox's traps would not mean what they say",
			               trapped_name(k));
		}
		if (k >= 0)
			t->allowed[k] = true;
		else
			json_object_array_add(keep, json_object_get(n));
	}
	json_object_object_add(r, "names", keep);
	return 0;
}

/* Copies the base's rules but those for the trapped syscalls into out. */
static int merge_base_rules(json_object *base_rules, json_object *out, struct taken_over *t,
                            struct gs_error *err)
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
		if (strip_trapped_names(r, t, err) < 0) {
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

static bool left_out_name(json_object *a, bool trap_uvm_mmap)
{
	for (unsigned i = 0; i < gs_abi_count(); i++)
		if (!abi_listed(gs_abi_at(i), trap_uvm_mmap) && str_eq(a, oci_arch_name(gs_abi_at(i)->scmp_arch)))
			return true;
	return false;
}

/* A copy of the array a without the ABIs the profile leaves out. */
static json_object *without_left_out(json_object *a, bool trap_uvm_mmap)
{
	json_object *out = json_object_new_array();

	for (size_t j = 0; a && json_object_is_type(a, json_type_array) && j < json_object_array_length(a); j++)
		if (!left_out_name(json_object_array_get_idx(a, j), trap_uvm_mmap))
			json_object_array_add(out, json_object_get(json_object_array_get_idx(a, j)));
	return out;
}

/* The Docker/podman format's "archMap" (a runtime takes the entry whose
 * architecture is the host's, with its subArchitectures): podman refuses a
 * profile with both it and "architectures", so a base that has it keeps
 * it. Every entry loses the ABIs the profile leaves out, and the native
 * ABI's entry (made if missing) lists every ABI the profile covers. */
static void set_arch_map(json_object *map, bool trap_uvm_mmap)
{
	const char *native = oci_arch_name(gs_abi_at(0)->scmp_arch);
	json_object *entry = NULL, *subs;

	for (size_t j = 0; j < json_object_array_length(map); j++) {
		json_object *e = json_object_array_get_idx(map, j);
		if (!json_object_is_type(e, json_type_object))
			continue;
		json_object_object_add(e, "subArchitectures",
		                       without_left_out(json_object_object_get(e, "subArchitectures"), trap_uvm_mmap));
		if (str_eq(json_object_object_get(e, "architecture"), native))
			entry = e;
	}
	if (!entry) {
		entry = json_object_new_object();
		json_object_object_add(entry, "architecture", json_object_new_string(native));
		json_object_object_add(entry, "subArchitectures", json_object_new_array());
		json_object_array_add(map, entry);
	}
	subs = json_object_object_get(entry, "subArchitectures");
	for (unsigned i = 1; i < gs_abi_count(); i++) {
		const char *name = oci_arch_name(gs_abi_at(i)->scmp_arch);
		bool have = false;
		if (!abi_listed(gs_abi_at(i), trap_uvm_mmap))
			continue;
		for (size_t j = 0; j < json_object_array_length(subs); j++)
			have |= str_eq(json_object_array_get_idx(subs, j), name);
		if (!have)
			json_object_array_add(subs, json_object_new_string(name));
	}
}

/* Every ABI the profile covers is listed; one it leaves out (profile.h) is
 * taken out of a base's list too, so that its syscalls are killed rather
 * than let through untrapped. */
static void set_architectures(json_object *prof, bool trap_uvm_mmap)
{
	json_object *map = json_object_object_get(prof, "archMap");

	if (map && json_object_is_type(map, json_type_array)) {
		set_arch_map(map, trap_uvm_mmap);
		return;
	}
	json_object *arches = json_object_object_get(prof, "architectures"), *out = json_object_new_array();

	for (size_t j = 0; arches && json_object_is_type(arches, json_type_array) &&
	                   j < json_object_array_length(arches); j++) {
		json_object *a = json_object_array_get_idx(arches, j);
		bool left_out = false;
		for (unsigned i = 0; i < gs_abi_count(); i++)
			left_out |= !abi_listed(gs_abi_at(i), trap_uvm_mmap) &&
			            str_eq(a, oci_arch_name(gs_abi_at(i)->scmp_arch));
		if (!left_out)
			json_object_array_add(out, json_object_get(a));
	}
	for (unsigned i = 0; i < gs_abi_count(); i++) {
		const char *name = oci_arch_name(gs_abi_at(i)->scmp_arch);
		bool have = false;
		if (!abi_listed(gs_abi_at(i), trap_uvm_mmap))
			continue;
		for (size_t j = 0; j < json_object_array_length(out); j++)
			have |= str_eq(json_object_array_get_idx(out, j), name);
		if (!have)
			json_object_array_add(out, json_object_new_string(name));
	}
	json_object_object_add(prof, "architectures", out);
}

static void set_listener(json_object *prof, const struct gs_profile_opts *o)
{
	char meta[sizeof(GS_PROFILE_META_PREFIX) + GS_PROFILE_VERSION_HEX + sizeof(GS_PROFILE_META_POLICY) +
	          GS_PROFILE_POLICY_NAME_MAX];

	snprintf(meta, sizeof(meta), GS_PROFILE_META_PREFIX "%016llx%s%s",
	         (unsigned long long)gs_profile_trap_version(o->rm_abi, o->trap_uvm_mmap),
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
	struct taken_over t = { .trapped = { [T_IOCTL] = true, [T_SECCOMP] = true,
	                                     [T_IOURING0] = true, [T_IOURING0 + 1] = true,
	                                     [T_IOURING0 + 2] = true } };
	bool default_allows = true;

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
	} else {
		/* No base: the runtimes' default profile, so that a GPU
		 * container loses none of the refusals its runtime applies
		 * (runtime_default.c). */
		prof = gs_runtime_default_profile();
	}
	default_allows = str_eq(json_object_object_get(prof, "defaultAction"), ACT_ALLOW);
	if (o->trap_uvm_mmap) {
		t.trapped[T_MMAP] = t.trapped[T_REMAP] = true;
		t.trapped[T_MMAP2] = listed_abi_has_mmap2(true);
	}
	/* Ours first: a reader sees the traps at the top. */
	add_trap_rules(syscalls, o);
	if (merge_base_rules(json_object_object_get(prof, "syscalls"), syscalls, &t, err) < 0)
		goto fail;
	if (!default_allows)
		add_complement_rules(syscalls, o->rm_abi, &t);
	json_object_object_add(prof, "syscalls", syscalls);
	syscalls = NULL;
	set_architectures(prof, o->trap_uvm_mmap);
	set_listener(prof, o);
	return prof;
fail:
	json_object_put(syscalls);
	json_object_put(prof);
	return NULL;
}
