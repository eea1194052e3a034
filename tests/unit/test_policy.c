/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for the policy language and the allowlist: parser results and
 * exact diagnostics from data tables, class and control verdicts from a
 * table (call -> verdict/status), and the consistency of the group tables.
 * They need neither root nor FUSE.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "groups.h"
#include "policy.h"
#include "rm_tables.h"
#include "suggest.h"

/* The tables under test: the newest driver branch gpusandbox knows. */
#define RM_ABI gs_rm_abi_default()

#define GiB (1ull << 30)
#define MiB (1ull << 20)
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* ---- good files ------------------------------------------------------------ */

static void test_good_files(void)
{
	static const struct {
		const char *text;
		uint64_t    mem, mem_gpu1;
		uint32_t    channels, groups, active, sm, period;
		uint32_t    decoders, jpeg;
		uint32_t    group_mask;
		uint32_t    n_classes, n_controls;
		uint64_t    visible;
		const char *audit;
	} cases[] = {
		{ "", GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET, GS_DEFAULT_CHANNELS, GS_DEFAULT_CHANNEL_GROUPS,
		  GS_COUNT_UNLIMITED, GS_SM_UNLIMITED, GS_SM_PERIOD_DEFAULT_MS, GS_COUNT_UNLIMITED,
		  GS_COUNT_UNLIMITED, GS_GROUPS_DEFAULT, 0, 0, 0, NULL },
		{ "# only a comment\n\n   \t\n", GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET,
		  GS_DEFAULT_CHANNELS, GS_DEFAULT_CHANNEL_GROUPS, GS_COUNT_UNLIMITED, GS_SM_UNLIMITED,
		  GS_SM_PERIOD_DEFAULT_MS, GS_COUNT_UNLIMITED, GS_COUNT_UNLIMITED, GS_GROUPS_DEFAULT,
		  0, 0, 0, NULL },
		{ "mem = 4g\ngpu.1.mem = 512m # the small one\nchannels=8\nchannel-groups = 2\n"
		  "active-channel-groups = 1\nsm = 50%\nsm-period = 20ms\ngpus = 0,1\n"
		  "audit-log = /tmp/a b.jsonl\r\n",
		  4 * GiB, 512 * MiB, 8, 2, 1, 50, 20, GS_COUNT_UNLIMITED, GS_COUNT_UNLIMITED,
		  GS_GROUPS_DEFAULT, 0, 0, 3, "/tmp/a b.jsonl" },
		{ "allow = compute memory,video\nvideo.decoders = 2\nvideo.jpeg = 0\n",
		  GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET, GS_DEFAULT_CHANNELS, GS_DEFAULT_CHANNEL_GROUPS,
		  GS_COUNT_UNLIMITED, GS_SM_UNLIMITED, GS_SM_PERIOD_DEFAULT_MS, 2, 0,
		  GS_GROUP_BIT(GS_GROUP_COMPUTE) | GS_GROUP_BIT(GS_GROUP_MEMORY) |
		  GS_GROUP_BIT(GS_GROUP_VIDEO), 0, 0, 0, NULL },
		{ "allow = none\nallow.class = 0x0 NV01_DEVICE_0, 0xc86f\n"
		  "allow.class = 0x40\nallow.control = 0x20801303 NV2080_CTRL_CMD_GPU_GET_NAME_STRING\n",
		  GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET, GS_DEFAULT_CHANNELS, GS_DEFAULT_CHANNEL_GROUPS,
		  GS_COUNT_UNLIMITED, GS_SM_UNLIMITED, GS_SM_PERIOD_DEFAULT_MS, GS_COUNT_UNLIMITED,
		  GS_COUNT_UNLIMITED, 0, 4, 2, 0, NULL },
		/* A bit-15 control in no table: opaque to the CPU-side driver,
		 * nameable by number on any branch (issue #11). */
		{ "allow.control = 0x2080be81\n",
		  GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET, GS_DEFAULT_CHANNELS, GS_DEFAULT_CHANNEL_GROUPS,
		  GS_COUNT_UNLIMITED, GS_SM_UNLIMITED, GS_SM_PERIOD_DEFAULT_MS, GS_COUNT_UNLIMITED,
		  GS_COUNT_UNLIMITED, GS_GROUPS_DEFAULT, 0, 1, 0, NULL },
		/* The default channel caps are lifted by name. */
		{ "channels = unlimited\nchannel-groups = UNLIMITED\n", GS_QUOTA_UNLIMITED, GS_MEM_GPU_UNSET,
		  GS_COUNT_UNLIMITED, GS_COUNT_UNLIMITED, GS_COUNT_UNLIMITED, GS_SM_UNLIMITED,
		  GS_SM_PERIOD_DEFAULT_MS, GS_COUNT_UNLIMITED, GS_COUNT_UNLIMITED, GS_GROUPS_DEFAULT,
		  0, 0, 0, NULL },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct gs_policy p;
		char diag[GS_POLICY_DIAG_MAX];
		int rc;

		gs_policy_init(&p);
		rc = gs_policy_parse("t.policy", cases[i].text, strlen(cases[i].text), &p, diag,
		                     sizeof(diag));
		CHECK(rc == 0);
		if (rc != 0) {
			fprintf(stderr, "case %zu: %s", i, diag);
			continue;
		}
		CHECK(p.quota.mem_per_gpu == cases[i].mem);
		CHECK(p.quota.mem_gpu[1] == cases[i].mem_gpu1);
		CHECK(p.quota.mem_gpu[0] == GS_MEM_GPU_UNSET);
		CHECK(gs_quota_mem(&p.quota, 1) ==
		      (cases[i].mem_gpu1 != GS_MEM_GPU_UNSET ? cases[i].mem_gpu1 : cases[i].mem));
		CHECK(gs_quota_mem(&p.quota, 0) == cases[i].mem);
		CHECK(p.quota.channels == cases[i].channels);
		CHECK(p.quota.channel_groups == cases[i].groups);
		CHECK(p.quota.active_channel_groups == cases[i].active);
		CHECK(p.quota.sm_percent == cases[i].sm);
		CHECK(p.quota.sm_period_ms == cases[i].period);
		CHECK(p.quota.engines[GS_ENGINE_NVDEC] == cases[i].decoders);
		CHECK(p.quota.engines[GS_ENGINE_NVJPG] == cases[i].jpeg);
		CHECK(p.quota.engines[GS_ENGINE_NVENC] == GS_COUNT_UNLIMITED);
		CHECK(p.rules.groups == cases[i].group_mask);
		CHECK(p.rules.n_classes == cases[i].n_classes);
		CHECK(p.rules.n_controls == cases[i].n_controls);
		CHECK(p.quota.visible_set == (cases[i].visible != 0));
		CHECK(p.quota.visible == cases[i].visible);
		CHECK(p.has_audit_log == (cases[i].audit != NULL));
		if (cases[i].audit)
			CHECK(strcmp(p.audit_log, cases[i].audit) == 0);
	}
}

/* ---- bad files and their exact diagnostics ------------------------------------------ */

/* run-as.*: the strings as written, resolved later by the launcher. */
static void test_run_as(void)
{
	static const char text[] = "run-as.user = nobody\nrun-as.group = 65534\nrun-as.groups = video, 7\n";
	struct gs_policy p;
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(&p);
	CHECK(p.user[0] == '\0' && p.group[0] == '\0' && p.groups[0] == '\0');
	CHECK(gs_policy_parse("t.policy", text, strlen(text), &p, diag, sizeof(diag)) == 0);
	CHECK(strcmp(p.user, "nobody") == 0 && strcmp(p.group, "65534") == 0);
	CHECK(strcmp(p.groups, "video, 7") == 0);
}

/* A policy file's text parsed into p, freshly initialised; 0 when it parsed. */
static int parse_text(const char *text, struct gs_policy *p)
{
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(p);
	return gs_policy_parse("t.policy", text, strlen(text), p, diag, sizeof(diag));
}

/* managed: the default and both spellings, in the file and on the command line. */
static void test_managed(void)
{
	static const struct {
		const char     *text;
		enum gs_managed want;
	} cases[] = {
		{ "", GS_MANAGED_ALLOW_UNACCOUNTED },
		{ "managed = deny\n", GS_MANAGED_DENY },
		{ "managed=allow-unaccounted # the default\n", GS_MANAGED_ALLOW_UNACCOUNTED },
	};
	enum gs_managed m = GS_MANAGED_DENY;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct gs_policy p;
		CHECK(parse_text(cases[i].text, &p) == 0);
		CHECK(p.quota.managed == cases[i].want);
	}
	/* The command line's parser takes the same words and no others. */
	CHECK(gs_parse_managed("allow-unaccounted", &m) == 0 && m == GS_MANAGED_ALLOW_UNACCOUNTED);
	CHECK(gs_parse_managed("deny", &m) == 0 && m == GS_MANAGED_DENY);
	CHECK(gs_parse_managed("Deny", &m) < 0 && gs_parse_managed("", &m) < 0);
	CHECK(strcmp(gs_managed_name(GS_MANAGED_DENY), "deny") == 0);
}

/* p2p-register: auto by default (perform under a policy that allows the
 * p2p group, none elsewhere), perform, answer or none when asked, nothing
 * else. */
static void test_p2p_register(void)
{
	static const struct {
		const char          *text;
		enum gs_p2p_register want, effective;
	} cases[] = {
		{ "", GS_P2P_REGISTER_AUTO, GS_P2P_REGISTER_NONE },
		{ "allow = compute, memory, p2p\n", GS_P2P_REGISTER_AUTO, GS_P2P_REGISTER_PERFORM },
		{ "p2p-register = answer\n", GS_P2P_REGISTER_ANSWER, GS_P2P_REGISTER_ANSWER },
		{ "p2p-register=perform\n", GS_P2P_REGISTER_PERFORM, GS_P2P_REGISTER_PERFORM },
		{ "allow = compute, memory, p2p\np2p-register = none\n", GS_P2P_REGISTER_NONE,
		  GS_P2P_REGISTER_NONE },
	};
	enum gs_p2p_register m = GS_P2P_REGISTER_ANSWER;

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct gs_policy p;
		CHECK(parse_text(cases[i].text, &p) == 0);
		CHECK(p.quota.p2p_register == cases[i].want);
		CHECK(gs_p2p_register_effective(p.quota.p2p_register, &p.rules) == cases[i].effective);
	}
	CHECK(gs_p2p_register_effective(GS_P2P_REGISTER_AUTO, gs_rules_builtin()) == GS_P2P_REGISTER_NONE);
	CHECK(gs_parse_p2p_register("perform", &m) == 0 && m == GS_P2P_REGISTER_PERFORM);
	CHECK(gs_parse_p2p_register("answer", &m) == 0 && m == GS_P2P_REGISTER_ANSWER);
	CHECK(gs_parse_p2p_register("none", &m) == 0 && m == GS_P2P_REGISTER_NONE);
	CHECK(gs_parse_p2p_register("auto", &m) == 0 && m == GS_P2P_REGISTER_AUTO);
	CHECK(gs_parse_p2p_register("Answer", &m) < 0 && gs_parse_p2p_register("", &m) < 0 &&
	      gs_parse_p2p_register("skip", &m) < 0);
	CHECK(strcmp(gs_p2p_register_name(GS_P2P_REGISTER_ANSWER), "answer") == 0);
	CHECK(strcmp(gs_p2p_register_name(GS_P2P_REGISTER_PERFORM), "perform") == 0);
}

/* files and objects (issue #32): unbounded by default, a positive count
 * or unlimited when set, nothing else. */
static void test_tenant_bounds(void)
{
	struct gs_policy p;

	CHECK(parse_text("", &p) == 0);
	CHECK(p.quota.files == GS_COUNT_UNLIMITED && p.quota.objects == GS_COUNT_UNLIMITED);
	CHECK(parse_text("files = 8\nobjects = 100\n", &p) == 0);
	CHECK(p.quota.files == 8 && p.quota.objects == 100);
	CHECK(parse_text("files = unlimited\nobjects=unlimited\n", &p) == 0);
	CHECK(p.quota.files == GS_COUNT_UNLIMITED && p.quota.objects == GS_COUNT_UNLIMITED);
	CHECK(parse_text("files = 0\n", &p) < 0);
	CHECK(parse_text("objects = many\n", &p) < 0);
	CHECK(parse_text("files = 1\nfiles = 2\n", &p) < 0);
}

/* fd-import: own by default, foreign when asked, nothing else. */
static void test_fd_import(void)
{
	struct gs_policy p;
	enum gs_fd_import m = GS_FD_IMPORT_FOREIGN;

	CHECK(parse_text("", &p) == 0 && p.quota.fd_import == GS_FD_IMPORT_OWN);
	CHECK(parse_text("fd-import = foreign\n", &p) == 0 && p.quota.fd_import == GS_FD_IMPORT_FOREIGN);
	CHECK(parse_text("fd-import = any\n", &p) != 0);
	CHECK(gs_parse_fd_import("own", &m) == 0 && m == GS_FD_IMPORT_OWN);
	CHECK(gs_parse_fd_import("Foreign", &m) < 0 && gs_parse_fd_import("", &m) < 0);
	CHECK(strcmp(gs_fd_import_name(GS_FD_IMPORT_FOREIGN), "foreign") == 0);
}

static void test_bad_files(void)
{
	static const struct {
		const char *text;
		const char *diag;
	} cases[] = {
		{ "mem = 12q\n",
		  "t.policy:1:7: error: invalid size '12q' (use bytes or k/m/g/t, e.g. 4g or 4Gi)\n"
		  " mem = 12q\n"
		  "       ^\n" },
		{ "mem = 4g\nchannels = 2\n\tmem = 8g # again\n",
		  "t.policy:3:2: error: 'mem' is defined twice\n"
		  " \tmem = 8g # again\n"
		  " \t^\n"
		  "t.policy:1:1: note: first defined here\n"
		  " mem = 4g\n"
		  " ^\n" },
		{ "gpu.1.mem = 1g\ngpu.01.mem = 2g\n",
		  "t.policy:2:1: error: 'gpu.1.mem' is defined twice\n"
		  " gpu.01.mem = 2g\n"
		  " ^\n"
		  "t.policy:1:1: note: first defined here\n"
		  " gpu.1.mem = 1g\n"
		  " ^\n" },
		{ "memory = 4g\n",
		  "t.policy:1:1: error: unknown key 'memory' (did you mean 'mem'?)\n"
		  " memory = 4g\n"
		  " ^\n" },
		{ "  mem 4g\n",
		  "t.policy:1:7: error: expected '=' after 'mem'\n"
		  "   mem 4g\n"
		  "       ^\n" },
		{ "mem =   # nothing\n",
		  "t.policy:1:6: error: missing value for 'mem'\n"
		  " mem =   # nothing\n"
		  "      ^\n" },
		{ "Mem = 1g\n",
		  "t.policy:1:1: error: expected a key (lower-case letters, digits, '.', '-')\n"
		  " Mem = 1g\n"
		  " ^\n" },
		{ "allow = compute, vidoe\n",
		  "t.policy:1:18: error: unknown group 'vidoe' (see gpusandbox --list-groups)\n"
		  " allow = compute, vidoe\n"
		  "                  ^\n" },
		{ "allow = compute memory compute\n",
		  "t.policy:1:24: error: group 'compute' is defined twice\n"
		  " allow = compute memory compute\n"
		  "                        ^\n"
		  "t.policy:1:9: note: first defined here\n"
		  " allow = compute memory compute\n"
		  "         ^\n" },
		{ "allow = none video\n",
		  "t.policy:1:14: error: 'none' cannot be combined with groups\n"
		  " allow = none video\n"
		  "              ^\n" },
		{ "allow.class = 0xc9b0\nallow.class = NVC9B0_VIDEO_DECODER\n",
		  "t.policy:2:15: error: class 0xc9b0 is defined twice\n"
		  " allow.class = NVC9B0_VIDEO_DECODER\n"
		  "               ^\n"
		  "t.policy:1:15: note: first defined here\n"
		  " allow.class = 0xc9b0\n"
		  "               ^\n" },
		{ "allow.class = 0x1234\n",
		  "t.policy:1:15: error: class 0x1234 is unknown to gpusandbox (it cannot copy its "
		  "parameters safely)\n"
		  " allow.class = 0x1234\n"
		  "               ^\n" },
		{ "allow.control = 0x20801303, 0xzz\n",
		  "t.policy:1:29: error: unknown control '0xzz' (a number like 0x20801303 or a name)\n"
		  " allow.control = 0x20801303, 0xzz\n"
		  "                             ^\n" },
		{ "allow.control = 0x2080c001\n",
		  "t.policy:1:17: error: control 0x2080c001 is unknown to gpusandbox (it cannot copy its "
		  "parameters safely)\n"
		  " allow.control = 0x2080c001\n"
		  "                 ^\n" },
		{ "allow.control = NV2080_CTRL_GSS_LEGACY\n",
		  "t.policy:1:17: error: control name 'NV2080_CTRL_GSS_LEGACY' names several; use the number\n"
		  " allow.control = NV2080_CTRL_GSS_LEGACY\n"
		  "                 ^\n" },
		{ "channels = 0\n",
		  "t.policy:1:12: error: invalid count '0' (a positive number)\n"
		  " channels = 0\n"
		  "            ^\n" },
		{ "video.decoders = -1\n",
		  "t.policy:1:18: error: invalid count '-1' (a non-negative number)\n"
		  " video.decoders = -1\n"
		  "                  ^\n" },
		{ "sm = 101\n",
		  "t.policy:1:6: error: invalid share '101' (a percentage 1..100)\n"
		  " sm = 101\n"
		  "      ^\n" },
		{ "sm-period = 2ms\n",
		  "t.policy:1:13: error: invalid period '2ms' (5..1000 ms)\n"
		  " sm-period = 2ms\n"
		  "             ^\n" },
		{ "managed = yes\n",
		  "t.policy:1:11: error: invalid managed-memory mode 'yes' (deny or allow-unaccounted)\n"
		  " managed = yes\n"
		  "           ^\n" },
		{ "p2p-register = skip\n",
		  "t.policy:1:16: error: invalid p2p-register mode 'skip' (perform or answer)\n"
		  " p2p-register = skip\n"
		  "                ^\n" },
		{ "gpus = 1,,2\n",
		  "t.policy:1:8: error: invalid GPU list '1,,2': expected a GPU index\n"
		  " gpus = 1,,2\n"
		  "        ^\n" },
		{ "gpu.64.mem = 1g\n",
		  "t.policy:1:5: error: invalid GPU index in 'gpu.64.mem' (0..63)\n"
		  " gpu.64.mem = 1g\n"
		  "     ^\n" },
		{ "mem = 1g\x01\n",
		  "t.policy:1:9: error: control character 0x01\n"
		  " mem = 1g?\n"
		  "         ^\n" },
	};
	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		struct gs_policy p;
		char diag[GS_POLICY_DIAG_MAX];
		int rc;

		gs_policy_init(&p);
		p.quota.channels = 7; /* must survive a failed parse */
		rc = gs_policy_parse("t.policy", cases[i].text, strlen(cases[i].text), &p, diag,
		                     sizeof(diag));
		CHECK(rc == -1);
		CHECK(strcmp(diag, cases[i].diag) == 0);
		if (strcmp(diag, cases[i].diag) != 0)
			fprintf(stderr, "case %zu: got:\n%swant:\n%s", i, diag, cases[i].diag);
		CHECK(p.quota.channels == 7);
		CHECK(p.quota.mem_per_gpu == GS_QUOTA_UNLIMITED);
	}
}

/* A NUL byte inside the text (the loader refuses files with one; the
 * parser must still stop at it, not read past it). */
static void test_nul_byte(void)
{
	static const char text[] = "mem = 1g\nchan\0nels = 2\n";
	struct gs_policy p;
	char diag[GS_POLICY_DIAG_MAX];

	gs_policy_init(&p);
	CHECK(gs_policy_parse("t", text, sizeof(text) - 1, &p, diag, sizeof(diag)) == -1);
	CHECK(strncmp(diag, "t:2:5: error: control character 0x00\n",
	              strlen("t:2:5: error: control character 0x00\n")) == 0);
}

/* ---- verdicts: call -> verdict/status ------------------------------------------ */

enum rules_kind { RULES_DEFAULT, RULES_VIDEO, RULES_EXPLICIT };

static void test_verdicts(void)
{
	static const struct {
		enum rules_kind rules;
		bool            control;
		uint32_t        key;
		bool            allowed;
		nv_status_t     status;
		const char     *reason;
		const char     *group;
	} cases[] = {
		/* Traced classes (PyTorch 2.11, CUDA 13, H200): allowed by default. */
		{ RULES_DEFAULT, false, 0x0000, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, false, 0x0040, true, NV_OK, NULL, "memory" },
		{ RULES_DEFAULT, false, 0x003e, true, NV_OK, NULL, "memory" },
		{ RULES_DEFAULT, false, 0x50a0, true, NV_OK, NULL, "memory" },
		{ RULES_DEFAULT, false, 0xc86f, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, false, 0xa06c, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, false, 0xcbc0, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, false, 0x83de, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, false, 0xc640, true, NV_OK, NULL, "monitoring" },
		/* Known but not in a default group. */
		{ RULES_DEFAULT, false, 0xc9b0, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "video" },
		{ RULES_DEFAULT, false, 0x00f8, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "p2p" },
		{ RULES_DEFAULT, false, 0x90cc, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "debug" },
		{ RULES_DEFAULT, false, 0xc597, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "graphics" },
		{ RULES_DEFAULT, false, 0x00c2, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "privileged" },
		{ RULES_DEFAULT, false, 0x0004, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", NULL },
		/* Unknown to gpusandbox. */
		{ RULES_DEFAULT, false, 0x1234, false, NV_ERR_INVALID_CLASS,
		  "class unknown to gpusandbox", NULL },
		{ RULES_DEFAULT, false, 0xffffffff, false, NV_ERR_INVALID_CLASS,
		  "class unknown to gpusandbox", NULL },
		/* Controls. */
		{ RULES_DEFAULT, true, 0x20801303, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, true, 0x20809038, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, true, 0x2080018e, true, NV_OK, NULL, "monitoring" },
		/* nvidia-smi and JAX (H200, 580.159.04): the read-only queries
		 * are monitoring; what writes state, is privileged or cannot be
		 * pinned down stays refused. */
		{ RULES_DEFAULT, true, 0x20801802, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20800513, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x00de0001, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20803001, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20800133, true, NV_OK, NULL, "monitoring" },
		/* GPU_DETACH_IDS: a no-op on Linux (issue #29, controls.def). */
		{ RULES_DEFAULT, true, 0x00000216, true, NV_OK, NULL, "monitoring" },
		/* nvidia-smi's default view, -q and dmon (H200, 2026-12-02):
		 * flat non-privileged queries, the V1 BIOS query and the
		 * InfoROM object's two queries. */
		{ RULES_DEFAULT, true, 0x00000b02, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20801813, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x208001b2, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20800802, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x90e70113, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, false, 0x90e7, true, NV_OK, NULL, "monitoring" },
		{ RULES_VIDEO, false, 0x90e7, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "monitoring" },
		/* BIOS_GET_INFO_V2 is not traced: still in no group */
		{ RULES_DEFAULT, true, 0x20800810, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", NULL },
		/* bit 15 (GSS legacy) and BinaryApi nvidia-smi sends, handled by
		 * closed GSP code and answered natively to an unprivileged user:
		 * in monitoring; refused where monitoring is not allowed; a bit-15
		 * number nvidia-smi was not seen to send stays unknown */
		{ RULES_DEFAULT, true, 0x20808546, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20810111, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x2080a612, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20810110, true, NV_OK, NULL, "monitoring" },
		{ RULES_EXPLICIT, true, 0x2080a618, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "monitoring" },
		{ RULES_EXPLICIT, true, 0x20810110, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "monitoring" },
		{ RULES_DEFAULT, true, 0x2080a097, false, NV_ERR_NOT_SUPPORTED,
		  "control unknown to gpusandbox", NULL },
		/* nvidia-smi's diagnostics and display objects (2026-12-02
		 * round 2): harmless handles in monitoring, their controls
		 * refused (diag's config register write is unknown, the
		 * display's ACPI method privileged); still allowed by the
		 * group they had. */
		{ RULES_DEFAULT, false, 0x208f, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, false, 0x0073, true, NV_OK, NULL, "monitoring" },
		{ RULES_VIDEO, false, 0x208f, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "monitoring" },
		{ RULES_DEFAULT, true, 0x208f0703, false, NV_ERR_NOT_SUPPORTED,
		  "control unknown to gpusandbox", NULL },
		{ RULES_DEFAULT, true, 0x00730120, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "privileged" },
		/* -q's session statistics, retired pages and ECC repair
		 * flags: flat non-privileged queries */
		{ RULES_DEFAULT, true, 0x2080016d, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x2080017b, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20801322, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20803404, true, NV_OK, NULL, "monitoring" },
		{ RULES_DEFAULT, true, 0x20803406, true, NV_OK, NULL, "monitoring" },
		/* the diagnostics object's InfoROM check, the one NV208F
		 * control in a group */
		{ RULES_DEFAULT, true, 0x208f1105, true, NV_OK, NULL, "monitoring" },
		/* the setter next to them stays refused (nvidia-smi -c) */
		{ RULES_DEFAULT, true, 0x20800130, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "privileged" },
		{ RULES_DEFAULT, true, 0x83de0315, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "debug" },
		{ RULES_DEFAULT, true, 0x2080110b, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", NULL },
		{ RULES_DEFAULT, true, 0x00003d05, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "p2p" },
		{ RULES_DEFAULT, true, 0x2080beef, false, NV_ERR_NOT_SUPPORTED,
		  "control unknown to gpusandbox", NULL },
		{ RULES_DEFAULT, true, 0x20808001, false, NV_ERR_NOT_SUPPORTED,
		  "control unknown to gpusandbox", NULL },
		/* allow = compute memory video */
		{ RULES_VIDEO, false, 0xc9b0, true, NV_OK, NULL, "video" },
		{ RULES_VIDEO, false, 0xd1fa, true, NV_OK, NULL, "video" },
		{ RULES_VIDEO, true, 0x00801c02, true, NV_OK, NULL, "video" },
		{ RULES_VIDEO, false, 0xc640, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "monitoring" },
		/* NV01_CONTEXT_DMA is graphics' and video's (nvJPEG, H200):
		 * either group allows it, the audit names graphics. */
		{ RULES_VIDEO, false, 0x0002, true, NV_OK, NULL, "graphics" },
		{ RULES_DEFAULT, false, 0x0002, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "graphics" },
		/* What nvJPEG's hardware backend asks (H200, 580.159.04). */
		{ RULES_DEFAULT, true, 0x00000275, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, true, 0x00801109, true, NV_OK, NULL, "compute" },
		{ RULES_DEFAULT, true, 0x20808165, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "video" },
		{ RULES_VIDEO, true, 0x20808165, true, NV_OK, NULL, "video" },
		{ RULES_VIDEO, true, 0x00801f02, true, NV_OK, NULL, "video" },
		/* allow = none, allow.class = 0x40, allow.control = 0x20801303 */
		{ RULES_EXPLICIT, false, 0x0040, true, NV_OK, NULL, "memory" },
		{ RULES_EXPLICIT, false, 0x003e, false, NV_ERR_INVALID_CLASS,
		  "class not allowed by the policy", "memory" },
		{ RULES_EXPLICIT, true, 0x20801303, true, NV_OK, NULL, "compute" },
		{ RULES_EXPLICIT, true, 0x20800110, false, NV_ERR_NOT_SUPPORTED,
		  "control not allowed by the policy", "compute" },
	};
	struct gs_rules r[3];

	gs_rules_default(&r[RULES_DEFAULT]);
	gs_rules_default(&r[RULES_VIDEO]);
	r[RULES_VIDEO].groups = GS_GROUP_BIT(GS_GROUP_COMPUTE) | GS_GROUP_BIT(GS_GROUP_MEMORY) |
	                        GS_GROUP_BIT(GS_GROUP_VIDEO);
	gs_rules_default(&r[RULES_EXPLICIT]);
	r[RULES_EXPLICIT].groups = 0;
	r[RULES_EXPLICIT].classes[r[RULES_EXPLICIT].n_classes++] = 0x40;
	r[RULES_EXPLICIT].controls[r[RULES_EXPLICIT].n_controls++] = 0x20801303;
	CHECK(gs_rules_builtin()->groups == GS_GROUPS_DEFAULT);

	for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
		const struct gs_rules *rr = &r[cases[i].rules];
		struct gs_rule_verdict v = cases[i].control ? gs_rules_control(RM_ABI, rr, cases[i].key)
		                                            : gs_rules_class(RM_ABI, rr, cases[i].key);
		bool ok = v.allowed == cases[i].allowed && (v.allowed || v.status == cases[i].status) &&
		          ((!v.reason && !cases[i].reason) ||
		           (v.reason && cases[i].reason && strcmp(v.reason, cases[i].reason) == 0)) &&
		          ((!v.group && !cases[i].group) ||
		           (v.group && cases[i].group && strcmp(v.group, cases[i].group) == 0));
		CHECK(ok);
		if (!ok)
			fprintf(stderr, "verdict case %zu (0x%x): allowed=%d status=0x%x reason=%s group=%s\n",
			        i, cases[i].key, v.allowed, v.status, v.reason ? v.reason : "-",
			        v.group ? v.group : "-");
	}
}

/* ---- the tables themselves -------------------------------------------------------- */

static void test_tables(void)
{
	unsigned engines[GS_ENGINE_N] = { 0 };
	size_t n_class_members = 0, n_ctrl_members = 0;

	for (size_t i = 0; i < rm_class_table_size(RM_ABI); i++) {
		const struct rm_class_info *ci = rm_class_table_at(RM_ABI, i);
		if (ci->group == GS_GROUP_NONE) {
			/* A second group without a first one is a row mistake. */
			CHECK(ci->also == GS_GROUP_NONE);
			CHECK(ci->engine == GS_ENGINE_NONE);
			continue;
		}
		n_class_members++;
		/* A group may only name classes whose params gpusandbox knows. */
		CHECK(rm_class_lookup(RM_ABI, ci->cls) == ci);
		CHECK(ci->group < GS_GROUP_N);
		CHECK(ci->also <= GS_GROUP_NONE && ci->also != ci->group);
		if (ci->engine != GS_ENGINE_NONE) {
			/* Engine classes are video, and the ledger counts them. */
			CHECK(ci->group == GS_GROUP_VIDEO);
			CHECK(ci->kind == RM_CLASS_ENGINE);
			CHECK(ci->engine >= 0 && ci->engine < GS_ENGINE_N);
			if (ci->engine >= 0 && ci->engine < GS_ENGINE_N)
				engines[ci->engine]++;
		}
		/* Every engine class has its engine. */
		if (ci->kind == RM_CLASS_ENGINE)
			CHECK(gs_class_engine(RM_ABI, ci->cls) != GS_ENGINE_NONE);
	}
	/* As many as the membership table had before it became rows. */
	CHECK(n_class_members == 203);
	/* The distinct class ids of rm-abi.md 4's table of video engines
	 * per chip (GB20B shares GB10B's NVJPG; GH100, GA100 and GB10x have
	 * no NVENC; TU10x has no NVJPG or OFA). */
	CHECK(engines[GS_ENGINE_NVDEC] == 9);
	CHECK(engines[GS_ENGINE_NVENC] == 7);
	CHECK(engines[GS_ENGINE_NVJPG] == 6);
	CHECK(engines[GS_ENGINE_OFA] == 8);
	for (size_t i = 0; i < rm_ctrl_table_size(RM_ABI); i++) {
		const struct rm_ctrl_info *ci = rm_ctrl_table_at(RM_ABI, i);
		if (ci->group == GS_GROUP_NONE) {
			CHECK(ci->also == GS_GROUP_NONE);
			continue;
		}
		n_ctrl_members++;
		CHECK(rm_ctrl_lookup(RM_ABI, ci->cmd) == ci);
		CHECK(ci->group < GS_GROUP_N);
	}
	CHECK(n_ctrl_members == 188);
	for (unsigned g = 0; g < GS_GROUP_N; g++) {
		const char *nm = gs_group_name((enum gs_group)g);
		CHECK(gs_group_find(nm, strlen(nm)) == (enum gs_group)g);
		CHECK(strlen(gs_group_help((enum gs_group)g)) > 0);
	}
	CHECK(gs_group_find("comp", 4) == GS_GROUP_NONE);
}

/* Memory quotas: the floor, the unit hint, 0 on its own. */
static void test_mem_quota(void)
{
	char why[256];
	uint64_t v = 0;

	CHECK(gs_parse_mem_quota("64m", &v, why, sizeof(why)) == 0 && v == GS_MEM_MIN);
	CHECK(gs_parse_mem_quota("4g", &v, why, sizeof(why)) == 0 && v == 4ull << 30);
	/* Kubernetes' binary quantities (a pod's gpusandbox.io/mem: 4Gi). */
	CHECK(gs_parse_mem_quota("4Gi", &v, why, sizeof(why)) == 0 && v == 4ull << 30);
	CHECK(gs_parse_mem_quota("512Mi", &v, why, sizeof(why)) == 0 && v == 512ull << 20);
	CHECK(gs_parse_mem_quota("1Ti", &v, why, sizeof(why)) == 0 && v == 1ull << 40);
	CHECK(gs_parse_mem_quota("4Gx", &v, why, sizeof(why)) < 0 && gs_parse_mem_quota("4iG", &v, why, sizeof(why)) < 0);
	CHECK(gs_parse_mem_quota("67108864", &v, why, sizeof(why)) == 0 && v == GS_MEM_MIN);
	v = 7;
	CHECK(gs_parse_mem_quota("67108863", &v, why, sizeof(why)) < 0 && v == 7);
	CHECK(gs_parse_mem_quota("4096", &v, why, sizeof(why)) < 0 && strstr(why, "did you mean 4096m?"));
	CHECK(gs_parse_mem_quota("3000k", &v, why, sizeof(why)) < 0 && strstr(why, "did you mean 3000m?"));
	/* 32m is MiB already: no unit to suggest. */
	CHECK(gs_parse_mem_quota("32m", &v, why, sizeof(why)) < 0 && !strstr(why, "did you mean"));
	CHECK(gs_parse_mem_quota("0", &v, why, sizeof(why)) < 0 && strstr(why, "quota of 0"));
	CHECK(gs_parse_mem_quota("000", &v, why, sizeof(why)) < 0 && strstr(why, "quota of 0"));
	CHECK(gs_parse_mem_quota("0g", &v, why, sizeof(why)) < 0 && strstr(why, "quota of 0"));
	CHECK(gs_parse_mem_quota("0x", &v, why, sizeof(why)) < 0 && strstr(why, "invalid size '0x'"));
	CHECK(gs_parse_mem_quota("12q", &v, why, sizeof(why)) < 0 && strstr(why, "invalid size '12q'"));
	CHECK(gs_parse_mem_quota("", &v, why, sizeof(why)) < 0);
	CHECK(gs_parse_mem_quota("4096", &v, why, 8) < 0 && strlen(why) < 8);
}

static const char *word_at(size_t i, const void *ctx)
{
	return ((const char *const *)ctx)[i];
}

static void test_suggest(void)
{
	static const char *const words[] = { "mem", "channels", "channel-groups", "sm", "sm-period" };
	const size_t n = sizeof(words) / sizeof(words[0]);

	CHECK(gs_edit_distance("", "") == 0);
	CHECK(gs_edit_distance("kitten", "sitting") == 3);
	CHECK(gs_edit_distance("abc", "") == 3);
	CHECK(strcmp(gs_suggest("channles", n, word_at, words), "channels") == 0);
	CHECK(strcmp(gs_suggest("men", n, word_at, words), "mem") == 0);
	CHECK(strcmp(gs_suggest("memory", n, word_at, words), "mem") == 0);
	CHECK(strcmp(gs_suggest("sm-perod", n, word_at, words), "sm-period") == 0);
	CHECK(gs_suggest("xyzzy", n, word_at, words) == NULL);
	CHECK(gs_suggest("", n, word_at, words) == NULL || strlen(gs_suggest("", n, word_at, words)) <= 2);
}

/* ---- the quota kinds' table ----------------------------------------------------- */

/* --help puts a kind's text from column 21 of an 80-column terminal. */
#define HELP_LINE_MAX (80 - 21 - 1)

static void check_help_lines(const char *help)
{
	for (const char *line = help; *line;) {
		size_t len = strcspn(line, "\n");
		CHECK(len > 0 && len <= HELP_LINE_MAX);
		line += len + (line[len] == '\n');
	}
}

/* One kind's limit set from a policy line: a count, and 0 only where
 * the row says 0 is a cap. */
static void check_kind_key(enum gs_quota_kind k, const struct gs_quota_kind_row *row)
{
	char text[128], diag[GS_POLICY_DIAG_MAX];
	struct gs_policy p;

	snprintf(text, sizeof(text), "%s = 3\n", row->key);
	gs_policy_init(&p);
	CHECK(p.quota.count[k] == row->dflt);
	CHECK(gs_policy_parse("t.policy", text, strlen(text), &p, diag, sizeof(diag)) == 0);
	CHECK(p.quota.count[k] == 3);
	snprintf(text, sizeof(text), "%s = 0\n", row->key);
	gs_policy_init(&p);
	CHECK((gs_policy_parse("t.policy", text, strlen(text), &p, diag, sizeof(diag)) == 0) ==
	      !!(row->flags & GS_QK_ZERO_OK));
}

/* Every row is complete and found by each of its names; the named
 * accessors of struct gs_quota are their rows' numbers. */
static void test_quota_kinds(void)
{
	struct gs_quota q;

	for (int k = 0; k < GS_QK_N; k++) {
		const struct gs_quota_kind_row *row = gs_quota_kind_row((enum gs_quota_kind)k);
		CHECK(row->key && row->record_key && row->resource && row->refusal);
		CHECK(row->counts_on != 0);
		CHECK(gs_quota_kind_by_key(row->key) == k);
		CHECK(gs_quota_kind_by_resource(row->resource) == k);
		CHECK(!row->option || gs_quota_kind_by_option(row->option) == k);
		/* An option has its --help text; a policy-only kind has none. */
		CHECK(!row->option == !row->help);
		if (row->help)
			check_help_lines(row->help);
		CHECK(!(row->counts_on & GS_COUNT_ON_ENGINE) == (row->engine == GS_ENGINE_NONE));
		CHECK(row->engine == GS_ENGINE_NONE || (int)gs_quota_kind_of_engine(row->engine) == k);
		CHECK(row->engine == GS_ENGINE_NONE || strcmp(gs_engine_key(row->engine), row->key) == 0);
		check_kind_key((enum gs_quota_kind)k, row);
	}
	CHECK(gs_quota_kind_by_key("mem") < 0 && gs_quota_kind_by_resource("vidmem") < 0);
	gs_quota_init(&q);
	q.count[GS_QK_CHANNEL_GROUPS] = 5;
	q.count[GS_QK_VIDEO_JPEG] = 0;
	CHECK(q.channel_groups == 5 && q.engines[GS_ENGINE_NVJPG] == 0);
	CHECK(q.channels == GS_DEFAULT_CHANNELS && q.active_channel_groups == GS_COUNT_UNLIMITED);
}

int main(void)
{
	test_mem_quota();
	test_suggest();
	test_good_files();
	test_managed();
	test_p2p_register();
	test_tenant_bounds();
	test_fd_import();
	test_run_as();
	test_bad_files();
	test_nul_byte();
	test_verdicts();
	test_tables();
	test_quota_kinds();
	return check_summary();
}
