/* SPDX-License-Identifier: MIT */
/*
 * quota.h - the limits a sandbox enforces and how they are parsed.
 */
#ifndef GPUSANDBOX_QUOTA_H
#define GPUSANDBOX_QUOTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nvrm/groups.h" /* enum gs_engine: video.* caps are kept per engine */

#define GS_MAX_GPUS 64u
#define GS_QUOTA_UNLIMITED UINT64_MAX

#define GS_COUNT_UNLIMITED UINT32_MAX
/* The word a count takes for "no limit" (--channels unlimited). */
#define GS_COUNT_UNLIMITED_WORD "unlimited"

/*
 * Channels and channel groups are capped by default (issue #17 item 13).
 * The driver allocates video memory inside RM for each channel group and
 * channel (context buffers, instance blocks) that no RM memory object
 * names, so --mem cannot charge it: about 6 MiB per CUDA context on an
 * H100 (docs/gpu-results/2026-11-23-h100-held-after-free), where a context
 * makes 4 groups and 20 channels (the H200 audit logs of 2026-11-21).
 * Counting is exact where an estimate is not (the amount depends on the
 * chip's engines, the driver and preemption settings), so the caps bound
 * that memory instead: 32 contexts' worth, about 200 MiB, and leave the
 * hardware pool that every tenant of a GPU shares. SECURITY.md says so.
 */
#define GS_DEFAULT_CHANNEL_GROUPS 128u
#define GS_DEFAULT_CHANNELS       640u
#define GS_SM_UNLIMITED 100u   /* a 100 % share is no cap */
#define GS_SM_PERIOD_DEFAULT_MS 20u
#define GS_SM_PERIOD_MIN_MS 5u
#define GS_SM_PERIOD_MAX_MS 1000u
#define GS_GPU_UUID_MAX 64   /* "GPU-" and 36 characters, with room */
/* gs_quota.mem_gpu[g] when the GPU has no value of its own. */
#define GS_MEM_GPU_UNSET 0u

/* What the sandbox does with managed (UVM) memory, which RM never sees:
 * cudaMallocManaged maps /dev/nvidia-uvm, and UVM then takes GPU pages on
 * fault or migration (SECURITY.md, "Managed (UVM) memory"). */
enum gs_managed {
	GS_MANAGED_ALLOW_UNACCOUNTED = 0,  /* the default: allowed, not counted */
	GS_MANAGED_DENY,                   /* no managed ranges at all */
};

/* What the sandbox does with CUDA's NV50_THIRD_PARTY_P2P object and the
 * two per-allocation registration controls CUDA sends on it for every
 * cuMemAlloc (NV503C_CTRL_CMD_REGISTER_VIDMEM and UNREGISTER_VIDMEM):
 * perform them; answer the controls NV_OK without the driver, which saves
 * a driver call and a dup of the workload's fd per control; or none: no
 * object, so no controls (two traps fewer per cuMemAlloc + cuMemFree).
 * answer and none leave the sandbox's memory unregistered for third-party
 * P2P (GPUDirect RDMA, P2P tokens; docs/security/p2p-registration.md,
 * docs/perf.md). The default, auto, is perform where the policy allows
 * the p2p group (the sandbox shares memory beyond itself) and none
 * elsewhere (gs_p2p_register_effective). */
enum gs_p2p_register {
	GS_P2P_REGISTER_AUTO = 0,
	GS_P2P_REGISTER_PERFORM,
	GS_P2P_REGISTER_ANSWER,
	/* No third-party P2P object: its RM_ALLOC is answered
	 * NV_ERR_NOT_SUPPORTED, as a driver without the class answers, and
	 * CUDA then makes no registration controls at all. */
	GS_P2P_REGISTER_NONE,
};

/* Imports of memory through an export fd made outside the sandbox
 * (docs/security/fd-export.md): refused (own, the default), or allowed
 * with the imported memory charged to the importer (foreign). */
enum gs_fd_import {
	GS_FD_IMPORT_OWN = 0,
	GS_FD_IMPORT_FOREIGN,
};

/* What --sm's percentage means (supervisor/compute/plan.h). */
enum gs_sm_mode {
	GS_SM_MODE_CAP = 0,    /* a hard cap: never more than the share */
	GS_SM_MODE_GUARANTEE,  /* at least the share; time others leave idle is lent */
};

/*
 * The count kinds: a quota kind is a row of the table in quota.c
 * (gs_quota_kind_row), and everything that sets, judges, counts or shows a
 * limit loops over the rows (docs/hacking.md, "A quota kind"). The order
 * is the table's: --help, --check and the start record list them so, and
 * a call that counts against two kinds (a channel outside any group) is
 * judged on the first one first. Video memory is not a row: it is bytes,
 * per GPU, with a per-GPU key (gs_quota_mem).
 */
enum gs_quota_kind {
	GS_QK_CHANNELS,
	GS_QK_CHANNEL_GROUPS,
	GS_QK_ACTIVE_CHANNEL_GROUPS,
	GS_QK_ENGINE_FIRST,  /* one row per enum gs_engine, in its order */
	GS_QK_VIDEO_DECODERS = GS_QK_ENGINE_FIRST + GS_ENGINE_NVDEC,
	GS_QK_VIDEO_ENCODERS = GS_QK_ENGINE_FIRST + GS_ENGINE_NVENC,
	GS_QK_VIDEO_JPEG = GS_QK_ENGINE_FIRST + GS_ENGINE_NVJPG,
	GS_QK_VIDEO_OFA = GS_QK_ENGINE_FIRST + GS_ENGINE_OFA,
	GS_QK_CLIENTS = GS_QK_ENGINE_FIRST + GS_ENGINE_N,
	GS_QK_N
};

/* What adds one to a kind's count: the events the verdict stage tells
 * apart (gs_call_count_events, verdict.c). */
enum gs_count_event {
	GS_COUNT_ON_GROUPED_CHANNEL = 1u << 0, /* a channel under a channel group */
	GS_COUNT_ON_LONE_CHANNEL = 1u << 1,    /* a channel outside any: RM makes a group for it */
	GS_COUNT_ON_GROUP = 1u << 2,           /* a channel group */
	GS_COUNT_ON_SCHEDULE = 1u << 3,        /* GPFIFO_SCHEDULE enabling an unscheduled group */
	GS_COUNT_ON_ENGINE = 1u << 4,          /* a video engine object of the row's engine */
	GS_COUNT_ON_CLIENT = 1u << 5,          /* an RM client, on a control file */
};

enum gs_quota_kind_flag {
	GS_QK_ZERO_OK = 1u << 0,       /* 0 is a cap (none at all), not an error */
	GS_QK_VIDEO_CAP = 1u << 1,     /* one of the "video caps": the start record's "engines" */
	/* Counted, judged and recorded only under a cap: counting costs a
	 * walk, and an uncapped kind adds nothing to the records. */
	GS_QK_COUNT_IF_CAPPED = 1u << 2,
};

/* How the supervisor counts a kind (count_of_kind, exec_policy.c). */
enum gs_count_source {
	GS_COUNTED_BY_LEDGER = 0,  /* the ledger's count[kind], kept as objects come and go */
	/* sessions of the row's engine, counted when asked: per (client,
	 * GPU), its objects over the GPU's engine instances, rounded up
	 * (supervisor/core/pipeline/exec_engines.c) */
	GS_COUNTED_ENGINE_SESSIONS,
	GS_COUNTED_CLIENT_FILES,   /* control files holding a client, counted when asked */
};

/* One quota kind. */
struct gs_quota_kind_row {
	const char *key;        /* policy key ("channel-groups", "video.jpeg") */
	const char *option;     /* the option without "--", or NULL: policy file only */
	const char *record_key; /* in the start record's policy ("channel_groups") */
	const char *resource;   /* decisions name it so (audit, --trace, refusals) */
	const char *refusal;    /* the reason a refusal gives */
	const char *help;       /* --help's text, lines from its column 21 (test_quota_kinds) */
	uint32_t    dflt;       /* the limit when not set */
	unsigned    counts_on;  /* enum gs_count_event: what adds one */
	enum gs_count_source counted_by;
	enum gs_engine engine;  /* GS_COUNT_ON_ENGINE: which engine, else GS_ENGINE_NONE */
	unsigned    flags;      /* enum gs_quota_kind_flag */
};

/* The row of kind k (0 <= k < GS_QK_N); the table has one per kind. */
const struct gs_quota_kind_row *gs_quota_kind_row(enum gs_quota_kind k);
/* The kind whose policy key, option or resource is name; -1 if none. */
int gs_quota_kind_by_key(const char *key);
int gs_quota_kind_by_option(const char *option);
int gs_quota_kind_by_resource(const char *resource);
/* The kind of engine e's cap. */
static inline enum gs_quota_kind gs_quota_kind_of_engine(enum gs_engine e)
{
	return (enum gs_quota_kind)(GS_QK_ENGINE_FIRST + (int)e);
}
/* Parses a count for kind k: 1.. or "unlimited", and 0 where the row
 * allows it. */
int gs_parse_kind_count(enum gs_quota_kind k, const char *s, uint32_t *out);

struct gs_quota {
	/* Bytes of video memory per GPU; GS_QUOTA_UNLIMITED when not set. */
	uint64_t mem_per_gpu;
	/* The count limits, one per row of the quota kind table (enum
	 * gs_quota_kind, gs_quota_kind_row): each is its row's default until
	 * set, GS_COUNT_UNLIMITED when set to "unlimited". The names are the
	 * same numbers for the code that reads one kind. */
	union {
		uint32_t count[GS_QK_N];
		struct {
			/* Live GPFIFO channels and channel groups (TSGs). */
			uint32_t channels;
			uint32_t channel_groups;
			/* Channel groups scheduled (GPFIFO_SCHEDULE enabled) at once. */
			uint32_t active_channel_groups;
			/* Live video engine sessions (NVDEC, NVENC, NVJPG, OFA),
			 * by enum gs_engine: per client and GPU, its objects
			 * over the GPU's engines of the kind, rounded up
			 * (exec_engines.c). 0 is a valid cap: none at all. */
			uint32_t engines[GS_ENGINE_N];
		};
	};
	/* --sm: the workload's share of GPU time on each of its GPUs, in
	 * percent (1..100); GS_SM_UNLIMITED when not set. sm_period_ms is the
	 * duty-cycle period (compute_share.c explains the trade-off). */
	uint32_t sm_percent;
	uint32_t sm_period_ms;
	enum gs_sm_mode sm_mode;   /* --sm-mode, policy key sm-mode */
	/* GPUs the workload may see and use, by RM device instance (the
	 * nvidia-smi index); all when visible_set is false. */
	bool     visible_set;
	uint64_t visible;      /* bit per /dev/nvidiaN minor */
	/* GPUs named by UUID, resolved to minors at start-up
	 * (gs_resolve_gpu_uuids). */
	uint32_t n_uuids;
	char     uuids[GS_MAX_GPUS][GS_GPU_UUID_MAX];
	/* The /dev/nvidiaN minor each of uuids resolved to (metrics label
	 * the GPU with its UUID where it is known this way). */
	uint32_t uuid_minor[GS_MAX_GPUS];
	/* Per-GPU video memory (policy key gpu.N.mem), by RM device instance;
	 * GS_MEM_GPU_UNSET where mem_per_gpu applies. */
	uint64_t mem_gpu[GS_MAX_GPUS];
	/* Managed memory: --managed, policy key managed. */
	enum gs_managed managed;
	/* --p2p-register, policy key p2p-register. */
	enum gs_p2p_register p2p_register;
	/* Policy key files: control files the sandbox may have the
	 * supervisor know at once (each costs the supervisor a descriptor,
	 * its release watch: ledger_file_of). GS_COUNT_UNLIMITED by
	 * default; the agent gives its containers a bound
	 * (agent_limits.h), since one process serves them all. */
	uint32_t files;
	/* Policy key objects: RM objects the sandbox may hold at once, as
	 * the ledger counts them (each costs the supervisor memory: an
	 * entry; the agent's is shared by every container). The same
	 * default and agent bound as files. */
	uint32_t objects;
	/* Policy key fd-import. */
	enum gs_fd_import fd_import;
};

/* The names and the rows are the same numbers. */
#define GS_QUOTA_NAME_IS_ROW(name, k) \
	_Static_assert(offsetof(struct gs_quota, name) == offsetof(struct gs_quota, count[k]), \
	               #name " is not the row " #k)
GS_QUOTA_NAME_IS_ROW(channels, GS_QK_CHANNELS);
GS_QUOTA_NAME_IS_ROW(channel_groups, GS_QK_CHANNEL_GROUPS);
GS_QUOTA_NAME_IS_ROW(active_channel_groups, GS_QK_ACTIVE_CHANNEL_GROUPS);
GS_QUOTA_NAME_IS_ROW(engines[GS_ENGINE_NVDEC], GS_QK_VIDEO_DECODERS);
GS_QUOTA_NAME_IS_ROW(engines[GS_ENGINE_OFA], GS_QK_VIDEO_OFA);

/* The smallest video memory quota accepted (--mem, mem =, gpu.N.mem =).
 * A CUDA context takes its own buffers from the quota before the program
 * allocates anything: on the H200 with driver 580 that is 0x420000 +
 * 14 x 2 MiB + 0x44c6880 + 0x19c80000 bytes, about 513 MiB (the class-0x40
 * allocations of tests/replay/traces/h200-580-cuda-driver-api.trace up to
 * cuCtxCreate; NVML saw 612 MiB for a PyTorch context, docs/gpu-results).
 * Even the buffers that do not grow with the GPU's size come to 101 MiB,
 * so no quota under 64 MiB can hold a context on any GPU, while the number
 * people mean in MiB and write in bytes (HAMi's gpumem 3000, --mem 4096)
 * always falls under it. */
#define GS_MEM_MIN (64ull << 20)

/* The video memory quota of one GPU: its own value, else mem_per_gpu. */
static inline uint64_t gs_quota_mem(const struct gs_quota *q, int gpu)
{
	if (gpu >= 0 && (unsigned)gpu < GS_MAX_GPUS && q->mem_gpu[gpu] != GS_MEM_GPU_UNSET)
		return q->mem_gpu[gpu];
	return q->mem_per_gpu;
}

/* Parses a video memory quota: a size as gs_parse_size reads it, at least
 * GS_MEM_MIN. Returns 0, or -1 with why set to a sentence that says what is
 * wrong and, for a number that is probably in the wrong unit, the unit
 * meant ("did you mean 4096m?"). */
int gs_parse_mem_quota(const char *s, uint64_t *out, char *why, size_t len);

/* True when any GPU has a memory quota. */
bool gs_quota_has_mem(const struct gs_quota *q);

/* Is the GPU with this /dev/nvidiaN minor (nvidia-smi's index) visible in
 * the sandbox? Per-GPU values (mem_gpu) are keyed by the same minor. */
static inline bool gs_gpu_visible(const struct gs_quota *q, uint32_t minor)
{
	return !q->visible_set || (minor < GS_MAX_GPUS && (q->visible >> minor) & 1u);
}

/* Parses "0,2,GPU-5d1e..." into q->visible and q->uuids, or "all" (every
 * GPU: no list). Returns 0, or -1 with *why set. Whether the GPUs exist is
 * checked at start against the driver (gs_driver_check_gpus). */
#define GS_GPUS_ALL "all"
int gs_parse_gpus(const char *s, struct gs_quota *q, const char **why);

void gs_quota_init(struct gs_quota *q);

/* Parses SIZE: a plain byte count or a number with a binary suffix k, m, g,
 * t (upper or lower case, optional trailing "b"/"ib"). Rejects zero,
 * negative numbers, garbage and overflow. Returns 0 or -1. */
int gs_parse_size(const char *s, uint64_t *out);

/* Parses a positive decimal count (1..GS_COUNT_UNLIMITED-1), or
 * "unlimited" (GS_COUNT_UNLIMITED). */
int gs_parse_count(const char *s, uint32_t *out);

/* Parses a count that may be 0 (0..GS_COUNT_UNLIMITED-1), or "unlimited". */
int gs_parse_count0(const char *s, uint32_t *out);

/* Parses a percentage 1..100 ("50" or "50%"). */
int gs_parse_percent(const char *s, uint32_t *out);

/* Parses a duty-cycle period in milliseconds (GS_SM_PERIOD_MIN_MS ..
 * GS_SM_PERIOD_MAX_MS), "ms" suffix optional. */
int gs_parse_period_ms(const char *s, uint32_t *out);

/* Parses "deny" or "allow-unaccounted". */
int gs_parse_managed(const char *s, enum gs_managed *out);
/* "cap" or "guarantee". */
int gs_parse_sm_mode(const char *s, enum gs_sm_mode *out);
const char *gs_sm_mode_name(enum gs_sm_mode m);

/* The policy-file spelling of a managed-memory mode. */
const char *gs_managed_name(enum gs_managed m);
/* "perform" or "answer", and back. */
int gs_parse_p2p_register(const char *s, enum gs_p2p_register *out);
const char *gs_p2p_register_name(enum gs_p2p_register m);
/* "own" or "foreign", and back. */
int gs_parse_fd_import(const char *s, enum gs_fd_import *out);
const char *gs_fd_import_name(enum gs_fd_import m);

/* --uvm-map, of gpusandbox run and of the agent: how UVM's external maps
 * are made (own_rm.h). Not a limit of the policy but the deployment's
 * word (a uid of the sandbox's own), named here with the other modes. */
enum gs_uvm_map_mode {
	GS_UVM_MAP_DUP = 0,    /* through the supervisor's own client */
	GS_UVM_MAP_AS_USER,    /* as the workload's uid, after a token share */
};
/* "dup" or "as-user", and back. */
int gs_parse_uvm_map_mode(const char *s, enum gs_uvm_map_mode *out);
const char *gs_uvm_map_mode_name(enum gs_uvm_map_mode m);

/* A size as the user writes it for --mem or mem = ("4g", "512m"; bytes
 * when not a whole number of KiB). */
const char *gs_option_size(uint64_t bytes, char *buf, size_t len);

/* Formats bytes for humans ("4.00 GiB"). */
const char *gs_format_size(uint64_t bytes, char *buf, unsigned len);
/* The GPUs q names, as a gpus = line takes them: the ordinals (when
 * visible_set), then the UUIDs, comma-separated; nothing else. */
void gs_print_gpus(FILE *f, const struct gs_quota *q);

/* The policy key of a video engine's cap ("video.decoders"), the name the
 * audit log, --check, --learn and the verdicts use for it; NULL for none. */
const char *gs_engine_key(enum gs_engine e);

#endif
