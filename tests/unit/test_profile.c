/* SPDX-License-Identifier: MIT */
/*
 * test_profile.c - `gpusandbox profile`'s JSON against the command line's
 * own filter: the profile, printed and parsed back, must trap per ABI the
 * very escapes that filter.c's filter traps (read from libseccomp's
 * pseudo-filter of that filter, not from the table both use), refuse new
 * listeners with EBUSY, list every ABI, and carry the trap set's version.
 * A base profile is merged so that every ioctl number is either trapped or
 * allowed by exactly one rule (libseccomp lets an overlapping ALLOW swallow
 * a NOTIFY), and bases that cannot be merged that way are refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/profile.h"
#include "agent/runtime_default.h"
#include "arch.h"
#include "check.h"
#include "filter.h"
#include "rm_decode.h"

#define N_NR 256
#define PFC_MAX (1 << 20)
#define NOTIFY_PFC "action 0x7fc00000"   /* SECCOMP_RET_USER_NOTIF */
#define MAX_ARCHES 8
/* How the pseudo-filter writes the request's low byte test: "$a1.lo32 &
 * 0x000000ff == N" on 64-bit ABIs, "$a1 & 0x000000ff == N" on 32-bit. */
#define IOCTL_NR_TEST "& 0x000000ff == "

struct traps {
	unsigned n_arches;
	bool notify[MAX_ARCHES][N_NR];
	bool listener_refused[MAX_ARCHES];
};

/* Per arch section of the pseudo-filter: ioctl numbers whose action is
 * NOTIFY, and whether the seccomp EBUSY rule is there. */
static void read_filter_traps(const struct gs_rm_abi *abi, struct traps *t)
{
	struct gs_filter_opts fo = { .trap_uvm_mmap = false, .rm_abi = abi };
	struct gs_error err = { 0 };
	int fd = memfd_create("pfc", 0);
	char *pfc = calloc(1, PFC_MAX), *line, *save = NULL;
	int pending = -1, arch = -1;

	memset(t, 0, sizeof(*t));
	CHECK(fd >= 0 && pfc && gs_filter_dump(fd, &fo, &err) == 0);
	CHECK(pread(fd, pfc, PFC_MAX - 1, 0) > 0);
	for (line = strtok_r(pfc, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned nr;
		const char *p;
		if (strstr(line, "# filter for arch ")) {
			arch = (int)t->n_arches++;
			CHECK(t->n_arches <= MAX_ARCHES);
		} else if ((p = strstr(line, IOCTL_NR_TEST)) && strstr(line, "$a1") &&
		           sscanf(p + strlen(IOCTL_NR_TEST), "%u", &nr) == 1) {
			pending = (int)nr;
		} else if (strstr(line, NOTIFY_PFC) && pending >= 0 && arch >= 0 && pending < N_NR) {
			t->notify[arch][pending] = true;
			pending = -1;
		} else if (strstr(line, "action ERRNO(16)") && arch >= 0) {
			t->listener_refused[arch] = true;
		}
	}
	close(fd);
	free(pfc);
}

static const char *str_of(json_object *o, const char *key)
{
	json_object *v = json_object_object_get(o, key);
	return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
}

/* The profile's ioctl rules by number: notify[nr], allow_rules[nr]. */
static void read_profile_ioctls(json_object *prof, bool notify[N_NR], unsigned allows[N_NR],
                                bool *listener_refused)
{
	json_object *rules = json_object_object_get(prof, "syscalls");

	memset(notify, 0, N_NR * sizeof(bool));
	memset(allows, 0, N_NR * sizeof(unsigned));
	*listener_refused = false;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i);
		json_object *names = json_object_object_get(r, "names");
		json_object *args = json_object_object_get(r, "args");
		const char *name = json_object_get_string(json_object_array_get_idx(names, 0));
		const char *action = str_of(r, "action");
		if (strcmp(name, "seccomp") == 0 && strcmp(action, "SCMP_ACT_ERRNO") == 0) {
			json_object *a0 = json_object_array_get_idx(args, 0), *a1 = json_object_array_get_idx(args, 1);
			*listener_refused = json_object_get_int(json_object_object_get(r, "errnoRet")) == EBUSY &&
			        json_object_get_uint64(json_object_object_get(a0, "value")) == 0xffffffffu &&
			        json_object_get_uint64(json_object_object_get(a0, "valueTwo")) == 1 &&
			        json_object_get_uint64(json_object_object_get(a1, "value")) == 8 &&
			        json_object_get_uint64(json_object_object_get(a1, "valueTwo")) == 8;
		}
		if (strcmp(name, "ioctl") != 0)
			continue;
		CHECK(json_object_array_length(names) == 1 && json_object_array_length(args) == 1);
		json_object *a = json_object_array_get_idx(args, 0);
		uint64_t nr = json_object_get_uint64(json_object_object_get(a, "valueTwo"));
		CHECK(json_object_get_int(json_object_object_get(a, "index")) == 1);
		CHECK(json_object_get_uint64(json_object_object_get(a, "value")) == 0xff);
		CHECK(strcmp(str_of(a, "op"), "SCMP_CMP_MASKED_EQ") == 0);
		CHECK(nr < N_NR);
		if (nr >= N_NR)
			continue;
		if (strcmp(action, "SCMP_ACT_NOTIFY") == 0)
			notify[nr] = true;
		else if (strcmp(action, "SCMP_ACT_ALLOW") == 0)
			allows[nr]++;
	}
}

/* Printed and parsed back: what a runtime reads. */
static json_object *round_trip(json_object *prof)
{
	json_object *back = json_tokener_parse(json_object_to_json_string(prof));
	json_object_put(prof);
	CHECK(back != NULL);
	return back;
}

/* Does a rule name the system call (with this action, unless NULL)? */
static bool names_rule(json_object *prof, const char *name, const char *action)
{
	json_object *rules = json_object_object_get(prof, "syscalls");

	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i), *names = json_object_object_get(r, "names");
		for (size_t j = 0; j < json_object_array_length(names); j++)
			if (strcmp(json_object_get_string(json_object_array_get_idx(names, j)), name) == 0 &&
			    (!action || strcmp(str_of(r, "action"), action) == 0))
				return true;
	}
	return false;
}

static void test_plain(const struct gs_rm_abi *abi)
{
	struct gs_profile_opts o = { .rm_abi = abi, .listener_path = "/run/gs/agent.sock" };
	struct gs_error err = { 0 };
	struct traps t;
	bool notify[N_NR], refused;
	unsigned allows[N_NR];
	char meta[64];
	json_object *prof = round_trip(gs_profile_build(&o, &err));

	read_filter_traps(abi, &t);
	read_profile_ioctls(prof, notify, allows, &refused);
	CHECK(t.n_arches == gs_abi_count());
	CHECK(refused);
	for (unsigned a = 0; a < t.n_arches; a++) {
		CHECK(t.listener_refused[a]);
		CHECK(memcmp(t.notify[a], notify, sizeof(notify)) == 0);
	}
	size_t n = 0;
	rm_trapped_escapes(abi, &n);
	unsigned count = 0, uvm_bytes = 0;
	for (unsigned nr = 0; nr < N_NR; nr++) {
		count += notify[nr];
		uvm_bytes += gs_filter_is_uvm_byte(abi, nr);
	}
	/* The RM escapes, and the low bytes of UVM's performed calls. */
	CHECK(uvm_bytes > 0 && count == n + uvm_bytes && n > 0);
	/* No base: the runtimes' default profile (runtime_default.c), every
	 * ioctl number trapped or allowed back by exactly one rule. */
	CHECK(strcmp(str_of(prof, "defaultAction"), "SCMP_ACT_ERRNO") == 0);
	CHECK(json_object_get_int(json_object_object_get(prof, "defaultErrnoRet")) == EPERM);
	for (unsigned nr = 0; nr < N_NR; nr++)
		CHECK((notify[nr] && allows[nr] == 0) || (!notify[nr] && allows[nr] == 1));
	CHECK(names_rule(prof, "read", "SCMP_ACT_ALLOW") && names_rule(prof, "clone3", "SCMP_ACT_ERRNO"));
	CHECK(!names_rule(prof, "add_key", NULL) && !names_rule(prof, "keyctl", NULL) &&
	      !names_rule(prof, "bpf", NULL) && !names_rule(prof, "unshare", NULL));
	CHECK(json_object_array_length(json_object_object_get(prof, "architectures")) == gs_abi_count());
	CHECK(strcmp(json_object_get_string(json_object_array_get_idx(
	                     json_object_object_get(prof, "architectures"), 0)), "SCMP_ARCH_X86_64") == 0);
	CHECK(strcmp(str_of(prof, "listenerPath"), "/run/gs/agent.sock") == 0);
	snprintf(meta, sizeof(meta), GS_PROFILE_META_PREFIX "%016llx",
	         (unsigned long long)gs_profile_trap_version(abi, false));
	CHECK(strcmp(str_of(prof, "listenerMetadata"), meta) == 0);
	CHECK(json_object_object_get(prof, "flags") == NULL);
	json_object_put(prof);

	o.wait_killable = true;
	o.policy_name = "team-a";
	prof = round_trip(gs_profile_build(&o, &err));
	CHECK(strcmp(json_object_get_string(json_object_array_get_idx(json_object_object_get(prof, "flags"), 0)),
	             "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV") == 0);
	CHECK(strstr(str_of(prof, "listenerMetadata"), ";policy=team-a") != NULL);
	json_object_put(prof);
}

/* A Docker-like base: refuse by default, ioctl allowed among others. */
static void test_base_merge(const struct gs_rm_abi *abi)
{
	static const char base_text[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":[\"SCMP_ARCH_X86_64\"],"
		"\"syscalls\":[{\"names\":[\"read\",\"ioctl\",\"write\",\"seccomp\"],\"action\":\"SCMP_ACT_ALLOW\"},"
		"{\"names\":[\"ptrace\"],\"action\":\"SCMP_ACT_ERRNO\"}]}";
	struct gs_profile_opts o = { .rm_abi = abi, .listener_path = "/s" };
	struct gs_error err = { 0 };
	bool notify[N_NR], refused;
	unsigned allows[N_NR];
	json_object *prof;

	o.base = json_tokener_parse(base_text);
	prof = round_trip(gs_profile_build(&o, &err));
	json_object_put(o.base);
	read_profile_ioctls(prof, notify, allows, &refused);
	CHECK(refused);
	for (unsigned nr = 0; nr < N_NR; nr++)
		CHECK((notify[nr] && allows[nr] == 0) || (!notify[nr] && allows[nr] == 1));
	CHECK(strcmp(str_of(prof, "defaultAction"), "SCMP_ACT_ERRNO") == 0);
	CHECK(json_object_array_length(json_object_object_get(prof, "architectures")) == gs_abi_count());
	/* read and write kept, ioctl and seccomp moved out of the rule. */
	const char *s = json_object_to_json_string_ext(prof, JSON_C_TO_STRING_PLAIN);
	CHECK(strstr(s, "\"names\":[\"read\",\"write\"]") != NULL);
	CHECK(strstr(s, "\"ptrace\"") != NULL);
	json_object_put(prof);

	/* A conditional ioctl rule, or a listener of its own: refused. */
	o.base = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"ioctl\"],"
	                            "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":1,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}");
	CHECK(gs_profile_build(&o, &err) == NULL);
	json_object_put(o.base);
	o.base = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"openat\"],"
	                            "\"action\":\"SCMP_ACT_NOTIFY\"}]}");
	CHECK(gs_profile_build(&o, &err) == NULL);
	json_object_put(o.base);
	o.base = json_tokener_parse("[1]");
	CHECK(gs_profile_build(&o, &err) == NULL);
	json_object_put(o.base);
}

/* Does one OCI rule's args all hold for mmap(.., prot, flags, .., off)? */
static bool args_hold(json_object *args, const uint64_t v[6])
{
	for (size_t i = 0; args && i < json_object_array_length(args); i++) {
		json_object *a = json_object_array_get_idx(args, i);
		unsigned idx = (unsigned)json_object_get_int(json_object_object_get(a, "index"));
		uint64_t value = json_object_get_uint64(json_object_object_get(a, "value"));
		uint64_t two = json_object_get_uint64(json_object_object_get(a, "valueTwo"));
		const char *op = str_of(a, "op");
		bool ok = strcmp(op, "SCMP_CMP_MASKED_EQ") == 0 ? (v[idx] & value) == two :
		          strcmp(op, "SCMP_CMP_NE") == 0        ? v[idx] != value :
		          strcmp(op, "SCMP_CMP_EQ") == 0        ? v[idx] == value : false;
		if (!ok)
			return false;
	}
	return true;
}

/* How many rules of each action match mmap with these args. */
static void match_mmap(json_object *prof, const char *name, const uint64_t v[6], unsigned *notify,
                       unsigned *allow)
{
	json_object *rules = json_object_object_get(prof, "syscalls");

	*notify = *allow = 0;
	for (size_t i = 0; i < json_object_array_length(rules); i++) {
		json_object *r = json_object_array_get_idx(rules, i), *names = json_object_object_get(r, "names");
		bool named = false;
		for (size_t j = 0; j < json_object_array_length(names); j++)
			named |= strcmp(json_object_get_string(json_object_array_get_idx(names, j)), name) == 0;
		if (!named || !args_hold(json_object_object_get(r, "args"), v))
			continue;
		*notify += strcmp(str_of(r, "action"), "SCMP_ACT_NOTIFY") == 0;
		*allow += strcmp(str_of(r, "action"), "SCMP_ACT_ALLOW") == 0;
	}
}

static bool lists_arch(json_object *prof, const char *arch)
{
	json_object *a = json_object_object_get(prof, "architectures");

	for (size_t i = 0; i < json_object_array_length(a); i++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(a, i)), arch) == 0)
			return true;
	return false;
}

/* managed = deny: the UVM shape is trapped (the filter's shape: PROT_WRITE,
 * a shared type without MAP_ANONYMOUS, offset not 0), nothing else; i386
 * (whose old mmap hides its arguments) is not listed, even when a base
 * lists it; and merged onto a refusing base that allowed mmap, every mmap
 * is matched by the trap alone, or by ALLOW rules and no trap (an ALLOW
 * that overlapped the trap would swallow it in libseccomp). */
static void test_managed(const struct gs_rm_abi *abi)
{
	static const uint64_t prots[] = { 0, PROT_READ, PROT_WRITE, PROT_READ | PROT_WRITE | PROT_EXEC };
	static const uint64_t offs[] = { 0, 4096 };
	struct gs_profile_opts o = { .rm_abi = abi, .listener_path = "/s", .trap_uvm_mmap = true };
	struct gs_error err = { 0 };
	json_object *plain, *merged, *deflt = round_trip(gs_profile_build(&o, &err));

	/* plain: onto an allow-all base (what 8b5caf6 wrote without one). */
	o.base = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ALLOW\"}");
	plain = round_trip(gs_profile_build(&o, &err));
	json_object_put(o.base);
	o.base = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"architectures\":"
	                            "[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],\"syscalls\":"
	                            "[{\"names\":[\"mmap\",\"remap_file_pages\",\"read\"],\"action\":\"SCMP_ACT_ALLOW\"}]}");
	merged = round_trip(gs_profile_build(&o, &err));
	json_object_put(o.base);
	CHECK(gs_profile_trap_version(abi, true) != gs_profile_trap_version(abi, false));
	for (int m = 0; m < 2; m++) {
		json_object *p = m ? merged : plain;
		CHECK(lists_arch(p, "SCMP_ARCH_X86_64") && lists_arch(p, "SCMP_ARCH_X32") &&
		      !lists_arch(p, "SCMP_ARCH_X86"));
		CHECK(strstr(json_object_to_json_string(p), "\"mmap2\"") == NULL);
	}
	for (size_t pi = 0; pi < sizeof(prots) / sizeof(prots[0]); pi++)
		for (uint64_t fl = 0; fl <= (GS_FILTER_MMAP_TYPE_MASK | MAP_FIXED); fl++)
			for (size_t oi = 0; oi < sizeof(offs) / sizeof(offs[0]); oi++) {
				uint64_t v[6] = { 0, 4096, prots[pi], fl, 3, offs[oi] };
				unsigned type = fl & MAP_TYPE, n, a;
				bool uvm = (prots[pi] & PROT_WRITE) && !(fl & MAP_ANONYMOUS) && offs[oi] != 0 &&
				           (type == MAP_SHARED || type == MAP_SHARED_VALIDATE);
				match_mmap(plain, "mmap", v, &n, &a);
				CHECK(n == (uvm ? 1u : 0u) && a == 0);
				match_mmap(merged, "mmap", v, &n, &a);
				CHECK(n == (uvm ? 1u : 0u) && (uvm ? a == 0 : a >= 1));
				match_mmap(deflt, "mmap", v, &n, &a);
				CHECK(n == (uvm ? 1u : 0u) && (uvm ? a == 0 : a >= 1));
			}
	/* remap_file_pages is trapped whole, and the base's ALLOW is gone. */
	uint64_t any[6] = { 0 };
	unsigned n, a;
	match_mmap(merged, "remap_file_pages", any, &n, &a);
	CHECK(n == 1 && a == 0);
	json_object_put(plain);
	json_object_put(merged);
	json_object_put(deflt);
}

/* podman's and Docker's format: an "archMap" is kept (podman refuses a
 * profile with both it and "architectures"), the native entry lists every
 * ABI the profile covers, and under managed = deny none lists x86. A rule
 * naming a trapped call under a condition (caps) is not taken over. */
static void test_arch_map(const struct gs_rm_abi *abi)
{
	static const char base_text[] =
		"{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"archMap\":["
		"{\"architecture\":\"SCMP_ARCH_X86_64\",\"subArchitectures\":[\"SCMP_ARCH_X86\"]},"
		"{\"architecture\":\"SCMP_ARCH_AARCH64\",\"subArchitectures\":[\"SCMP_ARCH_ARM\"]}],"
		"\"syscalls\":[{\"names\":[\"read\",\"ioctl\"],\"action\":\"SCMP_ACT_ALLOW\",\"args\":[],"
		"\"includes\":{},\"excludes\":{}}]}";
	struct gs_profile_opts o = { .rm_abi = abi, .listener_path = "/s" };
	struct gs_error err = { 0 };
	json_object *prof, *map;
	const char *s;

	for (int managed = 0; managed < 2; managed++) {
		o.trap_uvm_mmap = managed;
		o.base = json_tokener_parse(base_text);
		prof = round_trip(gs_profile_build(&o, &err));
		json_object_put(o.base);
		CHECK(prof && json_object_object_get(prof, "architectures") == NULL);
		map = json_object_object_get(prof, "archMap");
		CHECK(json_object_array_length(map) == 2);
		s = json_object_to_json_string_ext(json_object_array_get_idx(map, 0), JSON_C_TO_STRING_PLAIN);
		CHECK(strstr(s, "\"SCMP_ARCH_X32\"") != NULL);
		CHECK((strstr(s, "\"SCMP_ARCH_X86\"") != NULL) == !managed);
		CHECK(json_object_get_int(json_object_object_get(prof, "defaultErrnoRet")) == 38);
		json_object_put(prof);
	}
	o.trap_uvm_mmap = false;
	o.base = json_tokener_parse("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"syscalls\":[{\"names\":[\"ioctl\"],"
	                            "\"action\":\"SCMP_ACT_ALLOW\",\"includes\":{\"caps\":[\"CAP_SYS_ADMIN\"]}}]}");
	CHECK(gs_profile_build(&o, &err) == NULL);
	json_object_put(o.base);
}

/* The declared default's facts: what it allows and refuses. */
static void test_runtime_default(void)
{
	json_object *p = gs_runtime_default_profile();

	CHECK(gs_runtime_default_allows("read") && gs_runtime_default_allows("ioctl") &&
	      gs_runtime_default_allows("mmap") && gs_runtime_default_allows("arch_prctl"));
	CHECK(!gs_runtime_default_allows("add_key") && !gs_runtime_default_allows("keyctl") &&
	      !gs_runtime_default_allows("request_key") && !gs_runtime_default_allows("mount") &&
	      !gs_runtime_default_allows("unshare") && !gs_runtime_default_allows("kexec_load") &&
	      !gs_runtime_default_allows("init_module") && !gs_runtime_default_allows("clone3") &&
	      !gs_runtime_default_allows("io_uring_setup"));
	CHECK(strcmp(str_of(p, "defaultAction"), "SCMP_ACT_ERRNO") == 0);
	json_object_put(p);
}

static void test_names(void)
{
	CHECK(gs_profile_policy_name_ok("team-a.gpu_1"));
	CHECK(!gs_profile_policy_name_ok(""));
	CHECK(!gs_profile_policy_name_ok(".hidden"));
	CHECK(!gs_profile_policy_name_ok("../etc/x"));
	CHECK(!gs_profile_policy_name_ok("a/b"));
	CHECK(!gs_profile_policy_name_ok("a;policy=b"));
}

int main(void)
{
	const struct gs_rm_abi *abi = gs_rm_abi_default();

	CHECK(gs_abi_resolve() == 0);
	test_plain(abi);
	test_base_merge(abi);
	test_managed(abi);
	test_arch_map(abi);
	test_runtime_default();
	test_names();
	/* Another ABI's tables trap other escapes: another version. */
	for (size_t i = 0; i < gs_rm_abi_count(); i++)
		if (gs_rm_abi_at(i) != abi) {
			size_t n1 = 0, n2 = 0;
			const uint8_t *e1 = rm_trapped_escapes(abi, &n1), *e2 = rm_trapped_escapes(gs_rm_abi_at(i), &n2);
			bool same = n1 == n2 && memcmp(e1, e2, n1) == 0;
			CHECK(same == (gs_profile_trap_version(abi, false) ==
			               gs_profile_trap_version(gs_rm_abi_at(i), false)));
		}
	return check_summary();
}
