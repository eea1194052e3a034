/* SPDX-License-Identifier: MIT */
/*
 * groups.c - the policy groups of RM classes and controls, and the
 * allowlist's verdicts.
 *
 * Membership is a fact about what a class or control is for, kept in its
 * row of the RM ABI layer (include/nvrm/classes.def, controls.def; read from
 * the driver's class and control tables, docs/rm-tables.md). Which
 * groups are allowed by default is a decision, and it rests on traces:
 * docs/policy-evidence.md lists every class and control that PyTorch 2.11
 * and a CUDA driver-API program used on an H200 (shared/traces), and the
 * compute, memory and monitoring groups hold exactly those, plus, for
 * compute, the classes that play the same role (channel, copy engine,
 * compute engine, doorbell page) on the other chip generations the driver
 * supports, and, for monitoring, the read-only queries nvidia-smi and JAX
 * sent on an H200 (580.159.04, 2026-11-21) that the driver exports as
 * non-privileged with flat params (the rest of what they sent stays
 * refused; policy-evidence.md says why). Classes and controls that fit no
 * group are left out on purpose: they can be allowed one by one
 * (allow.class, allow.control).
 *
 * The unit tests check that every member is a row gpusandbox can copy
 * the params of.
 */
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "rm_tables.h"


struct group_info {
	const char *name;
	const char *help;
};

static const struct group_info groups[GS_GROUP_N] = {
	[GS_GROUP_COMPUTE] = { "compute",
		"what a CUDA context needs: clients, devices, subdevices, VA spaces, "
		"channel groups, channels, copy and compute engines, doorbell pages, "
		"events, and the controls CUDA sends while creating a context and "
		"allocating (traced: PyTorch 2.11, CUDA 13 driver API, H200)" },
	[GS_GROUP_MEMORY] = { "memory",
		"video memory, system memory and VA reservations (charged to --mem "
		"where they are video memory), and memory shared between the "
		"sandbox's own processes through export fds (CUDA's POSIX-fd "
		"handles; an import from another sandbox's file is refused)" },
	[GS_GROUP_MONITORING] = { "monitoring",
		"queries of the GPU's processes and MIG monitor sessions made by NVML "
		"on behalf of PyTorch, and the read-only telemetry queries nvidia-smi "
		"and JAX make: board, VBIOS and InfoROM versions and InfoROM check, "
		"temperature, P-state, persistence mode, accounting state, PCIe "
		"counters, bus and NVLink capabilities, retired pages and ECC repair "
		"state, video session statistics, and which values the driver keeps "
		"fresh in the shared telemetry page; the display and diagnostics "
		"objects nvidia-smi allocates, whose other controls stay refused; and "
		"nvidia-smi's power, clock, perf and thermal commands that GSP's "
		"firmware answers, which the driver answers an unprivileged user "
		"as it answers root (traced)" },
	[GS_GROUP_VIDEO] = { "video",
		"NVDEC, NVENC, NVJPG and OFA engines of every chip generation from "
		"Turing to Blackwell, the NVENC software session and their caps "
		"controls, and what nvJPEG's hardware decoder needs for its engine "
		"channels (context DMA, channel bind and scheduling); capped by "
		"video.* keys" },
	[GS_GROUP_GRAPHICS] = { "graphics",
		"3D, 2D and inline-to-memory classes, display helpers, frame capture "
		"(NvFBC) and G-Sync" },
	[GS_GROUP_P2P] = { "p2p",
		"peer-to-peer mappings, fabric (NVLink/IMEX) memory and the "
		"single-object export or import of objects as file descriptors: "
		"ways to share memory with processes outside the sandbox" },
	[GS_GROUP_DEBUG] = { "debug",
		"profilers, performance counters, debugger memory and register "
		"access, crash dumps, test objects" },
	[GS_GROUP_PRIVILEGED] = { "privileged",
		"classes and controls the driver reserves to CAP_SYS_ADMIN or to "
		"the kernel, display channels, vGPU host objects, MPS and MIG "
		"partitions; the supervisor never holds that privilege when it "
		"performs a call, so allowing them only changes the refusal's source" },
};

void gs_rules_default(struct gs_rules *r)
{
	memset(r, 0, sizeof(*r));
	r->groups = GS_GROUPS_DEFAULT;
}

const struct gs_rules *gs_rules_builtin(void)
{
	static const struct gs_rules builtin = { .groups = GS_GROUPS_DEFAULT };
	return &builtin;
}

enum gs_p2p_register gs_p2p_register_effective(enum gs_p2p_register m, const struct gs_rules *r)
{
	if (m != GS_P2P_REGISTER_AUTO)
		return m;
	return r && (r->groups & GS_GROUP_BIT(GS_GROUP_P2P)) ? GS_P2P_REGISTER_PERFORM : GS_P2P_REGISTER_NONE;
}

const char *gs_group_name(enum gs_group g)
{
	return (unsigned)g < GS_GROUP_N ? groups[g].name : "none";
}

const char *gs_group_help(enum gs_group g)
{
	return (unsigned)g < GS_GROUP_N ? groups[g].help : "";
}

enum gs_group gs_group_find(const char *name, size_t len)
{
	for (unsigned g = 0; g < GS_GROUP_N; g++)
		if (strlen(groups[g].name) == len && memcmp(groups[g].name, name, len) == 0)
			return (enum gs_group)g;
	return GS_GROUP_NONE;
}

enum gs_group gs_class_group(const struct gs_rm_abi *abi, uint32_t cls)
{
	const struct rm_class_info *ci = rm_class_row(abi, cls);
	return ci ? (enum gs_group)ci->group : GS_GROUP_NONE;
}

enum gs_group gs_control_group(const struct gs_rm_abi *abi, uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_row(abi, cmd);
	return ci ? (enum gs_group)ci->group : GS_GROUP_NONE;
}

enum gs_engine gs_class_engine(const struct gs_rm_abi *abi, uint32_t cls)
{
	const struct rm_class_info *ci = rm_class_row(abi, cls);
	return ci ? (enum gs_engine)ci->engine : GS_ENGINE_NONE;
}

static bool listed(const uint32_t *v, uint32_t n, uint32_t key)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i] == key)
			return true;
	return false;
}

/* One verdict shape for classes and controls: explicit entries first, then
 * the group; what is in neither is refused with the driver's own status
 * for "this GPU does not do that". */
static bool group_allowed(uint32_t groups_allowed, unsigned g)
{
	return g != GS_GROUP_NONE && (groups_allowed & GS_GROUP_BIT(g));
}

/* The groups of one row, and whether this driver version knows it (can
 * copy its parameters). */
struct member {
	unsigned group, also;
	bool     known;
};

static struct gs_rule_verdict verdict(uint32_t groups_allowed, bool explicit, struct member m,
                                      nv_status_t refusal, const char *what_unknown,
                                      const char *what_refused)
{
	struct gs_rule_verdict v = { .allowed = true, .status = NV_OK };

	v.group = m.group == GS_GROUP_NONE ? NULL : gs_group_name((enum gs_group)m.group);
	/* A group admits only members the running driver branch has: on
	 * another branch a number may be absent or another control's (0x20801357
	 * is FB_GET_STATUS on 570). An explicit entry names the number itself
	 * and stays the operator's decision. */
	if (explicit || (m.known && (group_allowed(groups_allowed, m.group) ||
	                             group_allowed(groups_allowed, m.also))))
		return v;
	v.allowed = false;
	v.status = refusal;
	v.reason = !m.known ? what_unknown : what_refused;
	return v;
}

struct gs_rule_verdict gs_rules_class(const struct gs_rm_abi *abi, const struct gs_rules *r,
                                      uint32_t cls)
{
	const struct rm_class_info *ci = rm_class_row(abi, cls);
	struct member m = { GS_GROUP_NONE, GS_GROUP_NONE, false };

	if (ci)
		m = (struct member){ ci->group, ci->also, ci->known };
	return verdict(r->groups, listed(r->classes, r->n_classes, cls), m, NV_ERR_INVALID_CLASS,
	               "class unknown to gpusandbox", "class not allowed by the policy");
}

struct gs_rule_verdict gs_rules_control(const struct gs_rm_abi *abi, const struct gs_rules *r,
                                        uint32_t cmd)
{
	const struct rm_ctrl_info *ci = rm_ctrl_row(abi, cmd);
	struct member m = { GS_GROUP_NONE, GS_GROUP_NONE, false };

	if (ci)
		m = (struct member){ ci->group, ci->also, ci->known };
	return verdict(r->groups, listed(r->controls, r->n_controls, cmd), m, NV_ERR_NOT_SUPPORTED,
	               "control unknown to gpusandbox", "control not allowed by the policy");
}

static const char *engine_name(int8_t e)
{
	static const char *const names[GS_ENGINE_N] = { "nvdec", "nvenc", "nvjpg", "ofa" };
	return e >= 0 && e < GS_ENGINE_N ? names[e] : NULL;
}

#define WRAP_COLUMNS 76
#define HELP_INDENT "  "

/* Prints text word-wrapped, each line indented. */
static void print_wrapped(FILE *f, const char *text)
{
	const char *p = text;
	size_t col = 0;

	fputs(HELP_INDENT, f);
	while (*p) {
		size_t w = strcspn(p, " ");
		if (col && col + 1 + w > WRAP_COLUMNS - strlen(HELP_INDENT)) {
			fputs("\n" HELP_INDENT, f);
			col = 0;
		} else if (col) {
			fputc(' ', f);
			col++;
		}
		fwrite(p, 1, w, f);
		col += w;
		p += w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', f);
}

void gs_groups_print(FILE *f, const struct gs_rm_abi *abi, uint32_t default_groups)
{
	for (unsigned g = 0; g < GS_GROUP_N; g++) {
		unsigned col = 0;

		fprintf(f, "%s%s\n", groups[g].name,
		        (default_groups & GS_GROUP_BIT(g)) ? " (default)" : "");
		print_wrapped(f, groups[g].help);
		fprintf(f, "  classes:");
		for (size_t i = 0; i < rm_class_table_size(abi); i++) {
			const struct rm_class_info *ci = rm_class_table_at(abi, i);
			const char *eng = engine_name(ci->engine);
			if (ci->group != g && ci->also != g)
				continue;
			fprintf(f, "%s0x%04x %s%s%s", col++ % 2 ? "  " : "\n    ", ci->cls,
			        ci->name, eng ? " " : "", eng ? eng : "");
		}
		fprintf(f, "\n  controls:");
		col = 0;
		for (size_t i = 0; i < rm_ctrl_table_size(abi); i++) {
			const struct rm_ctrl_info *ci = rm_ctrl_table_at(abi, i);
			if (ci->group != g && ci->also != g)
				continue;
			fprintf(f, "\n    0x%08x %s", ci->cmd, ci->name);
			col++;
		}
		fprintf(f, "%s\n\n", col ? "" : " none");
	}
}
