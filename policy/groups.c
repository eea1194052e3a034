/* SPDX-License-Identifier: MIT */
/*
 * groups.c - which group each RM class and control belongs to.
 *
 * Membership is a fact about what a class or control is for, read from the
 * driver's class and control tables (580.142; docs/rm-tables.md). Which
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
 * Both tables are sorted by number and searched with bsearch(); the unit
 * test checks order, uniqueness and that every class named here is one
 * gpusandbox can copy the params of (supervisor/rm_tables.c).
 */
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "rm_tables.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

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
		"where they are video memory)" },
	[GS_GROUP_MONITORING] = { "monitoring",
		"queries of the GPU's processes and MIG monitor sessions made by NVML "
		"on behalf of PyTorch, and the read-only telemetry queries nvidia-smi "
		"and JAX make: InfoROM versions, temperature, P-state, persistence "
		"mode, bus and NVLink capabilities, and which values the driver keeps "
		"fresh in the shared telemetry page (traced)" },
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
		"peer-to-peer mappings, fabric (NVLink/IMEX) memory and export or "
		"import of objects as file descriptors: ways to share memory with "
		"processes outside the sandbox" },
	[GS_GROUP_DEBUG] = { "debug",
		"profilers, performance counters, debugger memory and register "
		"access, crash dumps, test objects" },
	[GS_GROUP_PRIVILEGED] = { "privileged",
		"classes and controls the driver reserves to CAP_SYS_ADMIN or to "
		"the kernel, display channels, vGPU host objects, MPS and MIG "
		"partitions; the supervisor never holds that privilege when it "
		"performs a call, so allowing them only changes the refusal's source" },
};

#define M(key_, grp_) { (key_), GS_GROUP_##grp_, GS_ENGINE_NONE, GS_GROUP_NONE }
/* A member two groups need; the first is the one audit records name. */
#define M2(key_, grp_, also_) { (key_), GS_GROUP_##grp_, GS_ENGINE_NONE, GS_GROUP_##also_ }
#define E(key_, eng_) { (key_), GS_GROUP_VIDEO, GS_ENGINE_##eng_, GS_GROUP_NONE }

/* Classes, sorted. "traced" marks the ones seen in shared/traces. */
static const struct gs_member class_members[] = {
	M(0x0000, COMPUTE),  /* NV01_ROOT, traced */
	M(0x0001, COMPUTE),  /* NV01_ROOT_NON_PRIV */
	/* NV01_CONTEXT_DMA: graphics, and nvJPEG's hardware decode (H200). */
	M2(0x0002, GRAPHICS, VIDEO),
	M(0x0005, COMPUTE),  /* NV01_EVENT */
	M(0x000f, P2P),      /* FABRIC_MANAGER_SESSION */
	M(0x003e, MEMORY),   /* NV01_MEMORY_SYSTEM, traced */
	M(0x003f, PRIVILEGED), /* NV01_MEMORY_LOCAL_PRIVILEGED */
	M(0x0040, MEMORY),   /* NV01_MEMORY_LOCAL_USER, traced */
	M(0x0041, COMPUTE),  /* NV01_ROOT_CLIENT */
	M(0x0042, MEMORY),   /* NV_MEMORY_EXTENDED_USER (EGM) */
	M(0x0050, PRIVILEGED), /* NV_CE_UTILS */
	M(0x0070, MEMORY),   /* NV01_MEMORY_VIRTUAL */
	M(0x0071, MEMORY),   /* OS descriptor: refused anyway, process-bound */
	M(0x0073, GRAPHICS), /* NV04_DISPLAY_COMMON */
	M(0x0076, PRIVILEGED), /* framebuffer console, kernel only */
	M(0x0078, PRIVILEGED), /* kernel callback event */
	M(0x0079, COMPUTE),  /* NV01_EVENT_OS_EVENT, traced */
	M(0x007d, DEBUG),    /* NV04_SOFTWARE_TEST */
	M(0x007e, PRIVILEGED), /* kernel callback event */
	M(0x0080, COMPUTE),  /* NV01_DEVICE_0, traced */
	M(0x0081, PRIVILEGED), M(0x0082, PRIVILEGED), M(0x0083, PRIVILEGED), /* memory lists */
	M(0x0090, GRAPHICS), /* KERNEL_GRAPHICS_CONTEXT */
	M(0x0092, PRIVILEGED), /* RG line callback, kernel only */
	M(0x00b1, MEMORY),   /* NV01_MEMORY_HW_RESOURCES */
	M(0x00c2, PRIVILEGED), /* NV01_MEMORY_LOCAL_PHYSICAL */
	M(0x00c3, MEMORY),   /* NV01_MEMORY_SYNCPOINT */
	M(0x00da, MEMORY),   /* NV_SEMAPHORE_SURFACE */
	M(0x00db, DEBUG),    /* NV40_DEBUG_BUFFER */
	M(0x00de, COMPUTE),  /* RM_USER_SHARED_DATA, traced */
	M(0x00e0, P2P),      /* NV_MEMORY_EXPORT */
	M(0x00f1, P2P),      /* NV_IMEX_SESSION */
	M(0x00f3, P2P),      /* NV01_MEMORY_FLA */
	M(0x00f8, P2P), M(0x00f9, P2P), M(0x00fb, P2P), M(0x00fd, P2P), /* fabric memory */
	M(0x00fe, MEMORY),   /* NV_MEMORY_MAPPER */
	M(0x0100, DEBUG), M(0x0101, DEBUG), /* lock test objects */
	M(0x2080, COMPUTE),  /* NV20_SUBDEVICE_0, traced */
	M(0x2081, COMPUTE),  /* NV2081_BINAPI, traced */
	M(0x2082, PRIVILEGED), /* NV2082_BINAPI_PRIVILEGED */
	M(0x208f, DEBUG),    /* NV20_SUBDEVICE_DIAG */
	M(0x30f1, GRAPHICS), /* NV30_GSYNC */
	M(0x503b, P2P),      /* NV50_P2P */
	M(0x503c, COMPUTE),  /* NV50_THIRD_PARTY_P2P, traced (cuMemAlloc) */
	M(0x50a0, MEMORY),   /* NV50_MEMORY_VIRTUAL, traced */
	M(0x83de, COMPUTE),  /* GT200_DEBUGGER, traced: every CUDA context makes one */
	M(0x844c, DEBUG),    /* G84_PERFBUFFER */
	M(0x900e, PRIVILEGED), /* MPS_COMPUTE: work would run outside the sandbox */
	M(0x9010, PRIVILEGED), /* vblank callback, kernel only */
	M(0x902d, GRAPHICS), /* FERMI_TWOD_A */
	M(0x9067, COMPUTE),  /* FERMI_CONTEXT_SHARE_A, traced */
	M(0x906f, COMPUTE),  /* GF100_CHANNEL_GPFIFO */
	M(0x9072, GRAPHICS), M(0x9074, GRAPHICS), M(0x9096, GRAPHICS),
	M(0x90cc, DEBUG),    /* GF100_PROFILER */
	M(0x90cd, DEBUG),    /* NV_EVENT_BUFFER */
	M(0x90ce, MEMORY),   /* NV01_MEMORY_DEVICELESS */
	M(0x90e6, COMPUTE),  /* GF100_SUBDEVICE_MASTER, traced */
	M(0x90ec, GRAPHICS), /* HDA codec */
	M(0x90f1, COMPUTE),  /* FERMI_VASPACE_A, traced */
	M(0xa06c, COMPUTE),  /* KEPLER_CHANNEL_GROUP_A, traced */
	M(0xa06f, COMPUTE),  /* KEPLER_CHANNEL_GPFIFO_A */
	M(0xa080, PRIVILEGED), M(0xa081, PRIVILEGED), M(0xa084, PRIVILEGED), /* vGPU */
	E(0xa0bc, NONE),     /* NVENC_SW_SESSION: a session record, no engine */
	M(0xa0bd, GRAPHICS), /* NVFBC_SW_SESSION */
	M(0xa140, GRAPHICS), /* KEPLER_INLINE_TO_MEMORY_B */
	M(0xa16f, COMPUTE),  /* KEPLER_CHANNEL_GPFIFO_B */
	M(0xb06f, COMPUTE),  /* MAXWELL_CHANNEL_GPFIFO_A */
	M(0xb0b5, COMPUTE),  /* MAXWELL_DMA_COPY_A */
	M(0xb1cc, DEBUG), M(0xb2cc, DEBUG), /* Maxwell profilers */
	E(0xb4b7, NVENC),    /* TU117 */
	E(0xb8b0, NVDEC), E(0xb8d1, NVJPG), E(0xb8fa, OFA), /* GH100 */
	M(0xc06f, COMPUTE),  /* PASCAL_CHANNEL_GPFIFO_A */
	M(0xc076, PRIVILEGED), /* GP100_UVM_SW */
	M(0xc0b5, COMPUTE),  /* PASCAL_DMA_COPY_A */
	M(0xc361, COMPUTE),  /* VOLTA_USERMODE_A */
	M(0xc365, DEBUG),    /* access counter buffer */
	M(0xc369, PRIVILEGED), /* MMU fault buffer, kernel only */
	M(0xc36f, COMPUTE),  /* VOLTA_CHANNEL_GPFIFO_A */
	M(0xc371, PRIVILEGED), M(0xc372, PRIVILEGED),
	M(0xc461, COMPUTE),  /* TURING_USERMODE_A */
	M(0xc46f, COMPUTE),  /* TURING_CHANNEL_GPFIFO_A */
	E(0xc4b0, NVDEC), E(0xc4b7, NVENC), /* TU10x */
	E(0xc4d1, NVJPG),    /* GA100 */
	M(0xc561, COMPUTE),  /* AMPERE_USERMODE_A */
	M(0xc56f, COMPUTE),  /* AMPERE_CHANNEL_GPFIFO_A */
	M(0xc570, PRIVILEGED), M(0xc573, PRIVILEGED), M(0xc574, PRIVILEGED),
	M(0xc57a, PRIVILEGED), M(0xc57b, PRIVILEGED), M(0xc57d, PRIVILEGED), M(0xc57e, PRIVILEGED),
	M(0xc597, GRAPHICS), /* TURING_A */
	M(0xc5b5, COMPUTE),  /* TURING_DMA_COPY_A */
	M(0xc5c0, COMPUTE),  /* TURING_COMPUTE_A */
	M(0xc637, PRIVILEGED), M(0xc638, PRIVILEGED), /* MIG partitions, caller's fd */
	M(0xc639, MONITORING), /* AMPERE_SMC_CONFIG_SESSION, traced (NVML) */
	M(0xc640, MONITORING), /* AMPERE_SMC_MONITOR_SESSION, traced (NVML) */
	M(0xc661, COMPUTE),  /* HOPPER_USERMODE_A, traced */
	M(0xc670, PRIVILEGED), M(0xc671, PRIVILEGED), M(0xc673, PRIVILEGED),
	M(0xc67a, PRIVILEGED), M(0xc67b, PRIVILEGED), M(0xc67d, PRIVILEGED), M(0xc67e, PRIVILEGED),
	M(0xc697, GRAPHICS), /* AMPERE_A */
	E(0xc6b0, NVDEC),    /* GA100 */
	M(0xc6b5, COMPUTE),  /* AMPERE_DMA_COPY_A */
	M(0xc6c0, COMPUTE),  /* AMPERE_COMPUTE_A */
	E(0xc6fa, OFA),      /* GA100 */
	M(0xc761, COMPUTE),  /* BLACKWELL_USERMODE_A */
	M(0xc763, DEBUG),    /* vidmem access bit buffer */
	M(0xc770, PRIVILEGED), M(0xc771, PRIVILEGED), M(0xc773, PRIVILEGED),
	M(0xc77d, PRIVILEGED), M(0xc77f, PRIVILEGED),
	M(0xc797, GRAPHICS), /* AMPERE_B */
	E(0xc7b0, NVDEC),    /* GA10x */
	M(0xc7b5, COMPUTE),  /* AMPERE_DMA_COPY_B */
	E(0xc7b7, NVENC),    /* GA10x */
	M(0xc7c0, COMPUTE),  /* AMPERE_COMPUTE_B */
	E(0xc7fa, OFA),      /* GA10x */
	M(0xc863, DEBUG),    /* Hopper vidmem access bit buffer */
	M(0xc86f, COMPUTE),  /* HOPPER_CHANNEL_GPFIFO_A, traced */
	M(0xc8b5, COMPUTE),  /* HOPPER_DMA_COPY_A, traced */
	M(0xc96f, COMPUTE),  /* BLACKWELL_CHANNEL_GPFIFO_A */
	M(0xc970, PRIVILEGED), M(0xc971, PRIVILEGED), M(0xc973, PRIVILEGED),
	M(0xc97a, PRIVILEGED), M(0xc97b, PRIVILEGED), M(0xc97d, PRIVILEGED), M(0xc97e, PRIVILEGED),
	M(0xc997, GRAPHICS), /* ADA_A */
	E(0xc9b0, NVDEC),    /* AD10x */
	M(0xc9b5, COMPUTE),  /* BLACKWELL_DMA_COPY_A */
	E(0xc9b7, NVENC),    /* AD10x */
	M(0xc9c0, COMPUTE),  /* ADA_COMPUTE_A */
	E(0xc9d1, NVJPG), E(0xc9fa, OFA), /* AD10x */
	M(0xca6f, COMPUTE),  /* BLACKWELL_CHANNEL_GPFIFO_B */
	M(0xca70, PRIVILEGED), M(0xca71, PRIVILEGED), M(0xca73, PRIVILEGED),
	M(0xca7a, PRIVILEGED), M(0xca7b, PRIVILEGED), M(0xca7d, PRIVILEGED), M(0xca7e, PRIVILEGED),
	M(0xcab5, COMPUTE),  /* BLACKWELL_DMA_COPY_B */
	M(0xcb33, COMPUTE),  /* NV_CONFIDENTIAL_COMPUTE, traced */
	M(0xcb70, PRIVILEGED), M(0xcb71, PRIVILEGED), M(0xcb73, PRIVILEGED),
	M(0xcb7a, PRIVILEGED), M(0xcb7b, PRIVILEGED), M(0xcb7d, PRIVILEGED), M(0xcb7e, PRIVILEGED),
	M(0xcb97, GRAPHICS), /* HOPPER_A */
	M(0xcbc0, COMPUTE),  /* HOPPER_COMPUTE_A, traced */
	M(0xcbca, DEBUG),    /* NV_COUNTER_COLLECTION_UNIT */
	M(0xcc70, PRIVILEGED), M(0xcc71, PRIVILEGED), M(0xcc73, PRIVILEGED),
	M(0xcc7a, PRIVILEGED), M(0xcc7b, PRIVILEGED), M(0xcc7d, PRIVILEGED), M(0xcc7e, PRIVILEGED),
	M(0xcd40, GRAPHICS), /* BLACKWELL_INLINE_TO_MEMORY_A */
	M(0xcd97, GRAPHICS), /* BLACKWELL_A */
	E(0xcdb0, NVDEC),    /* GB10x */
	M(0xcdc0, COMPUTE),  /* BLACKWELL_COMPUTE_A */
	E(0xcdd1, NVJPG), E(0xcdfa, OFA), /* GB10x */
	M(0xce97, GRAPHICS), /* BLACKWELL_B */
	E(0xceb0, NVDEC), E(0xceb7, NVENC), /* GB10B */
	M(0xcec0, COMPUTE),  /* BLACKWELL_COMPUTE_B */
	E(0xced0, NVJPG), E(0xcefa, OFA), /* GB10B, GB20B */
	E(0xcfb0, NVDEC), E(0xcfb7, NVENC), E(0xcfd1, NVJPG), E(0xcffa, OFA), /* GB20x */
	E(0xd1b0, NVDEC), E(0xd1b7, NVENC), E(0xd1fa, OFA), /* GB20B/GB20C */
};

/* Controls, sorted. Unmarked compute and monitoring rows are traced
 * (shared/traces). Rows marked "smi" are traced: nvidia-smi, H200
 * 580.159.04, 2026-11-21; rows marked "JAX" are traced: JAX, H200
 * 580.159.04, 2026-11-21 (both run under the default policy, the calls
 * read back from the audit log). */
static const struct gs_member control_members[] = {
	M(0x00000101, COMPUTE), M(0x00000127, P2P), M(0x00000130, PRIVILEGED),
	M(0x0000013a, COMPUTE), M(0x000001f0, COMPUTE), M(0x00000201, COMPUTE),
	M(0x00000202, COMPUTE), M(0x00000205, COMPUTE), M(0x00000214, COMPUTE),
	M(0x00000215, COMPUTE), M(0x0000021b, COMPUTE),
	M(0x00000275, COMPUTE), /* GET_UUID_FROM_GPU_ID, nvJPEG (H200) */
	M(0x00000279, COMPUTE),
	M(0x0000027b, COMPUTE), M(0x00000283, PRIVILEGED), M(0x00000288, COMPUTE),
	M(0x00000289, COMPUTE), M(0x00000602, DEBUG), M(0x00000a04, COMPUTE),
	M(0x00000d01, COMPUTE), M(0x00000d04, COMPUTE),
	/* Export and import of objects as fds (OS_UNIX_*). */
	M(0x00003d05, P2P), M(0x00003d06, P2P), M(0x00003d08, P2P),
	M(0x00003d0a, P2P), M(0x00003d0b, P2P), M(0x00003d0c, P2P),
	M(0x00730120, PRIVILEGED), M(0x0073136a, GRAPHICS), M(0x00731381, GRAPHICS),
	M(0x00800201, COMPUTE), /* CLASSLIST V1, nvJPEG (H200) */
	M(0x00800280, COMPUTE),
	M(0x00800288, MONITORING), /* QUERY_SW_STATE_PERSISTENCE, smi */
	M(0x00800289, COMPUTE), M(0x00800292, COMPUTE),
	/* GR and FIFO caps V2: read-only, nvJPEG (H200). */
	M(0x00801109, COMPUTE),
	M(0x00801307, COMPUTE), M(0x00801402, COMPUTE), M(0x0080170d, COMPUTE),
	M(0x00801713, COMPUTE),
	M(0x00801909, COMPUTE),
	M(0x00801b01, VIDEO), M(0x00801b02, VIDEO), /* MSENC caps, not traced */
	M(0x00801c01, VIDEO), M(0x00801c02, VIDEO), /* BSP caps, not traced */
	M(0x00801f02, VIDEO),   /* NVJPG caps, nvJPEG (H200) */
	/* RUSD REQUEST_DATA_POLL, smi: which telemetry the driver keeps fresh
	 * in the read-only shared page (the same mask the 0xde alloc takes). */
	M(0x00de0001, MONITORING),
	M(0x00e00101, P2P), M(0x00fd0104, P2P),
	M(0x20800102, COMPUTE), M(0x20800110, COMPUTE), M(0x20800111, COMPUTE),
	M(0x20800119, COMPUTE), M(0x20800122, DEBUG), M(0x2080012f, COMPUTE),
	M(0x20800130, PRIVILEGED), M(0x20800131, COMPUTE),
	M(0x20800133, MONITORING), /* ECC configuration (current, default), smi */
	M(0x20800145, COMPUTE),
	M(0x20800146, COMPUTE), M(0x2080014a, COMPUTE),
	/* InfoROM object version and InfoROM ECC support, smi */
	M(0x2080014b, MONITORING), M(0x20800157, MONITORING),
	M(0x2080016e, VIDEO),   /* NVENC session info, not traced */
	M(0x20800170, COMPUTE),
	M(0x2080018d, MONITORING), M(0x2080018e, MONITORING), /* GPU_GET_PIDS, GET_PID_INFO */
	M(0x20800195, COMPUTE), M(0x208001a3, COMPUTE), M(0x208001e8, DEBUG),
	M(0x20800406, COMPUTE),
	M(0x20800513, MONITORING), /* THERMAL_SYSTEM_EXECUTE_V2, smi */
	M(0x20800610, PRIVILEGED),
	M(0x20800803, PRIVILEGED), M(0x20800806, PRIVILEGED),
	M(0x2080110c, PRIVILEGED),
	M(0x20801201, COMPUTE), M(0x20801210, COMPUTE), M(0x20801218, COMPUTE),
	M(0x2080121b, COMPUTE), M(0x20801227, COMPUTE), M(0x20801228, COMPUTE),
	M(0x2080122a, COMPUTE), M(0x2080122b, COMPUTE), M(0x20801230, COMPUTE),
	/* FB_GET_INFO V1: not traced; the driver turns it into the traced V2
	 * query, and the supervisor rewrites both the same way. */
	M(0x20801301, COMPUTE),
	M(0x20801303, COMPUTE),
	M(0x20801357, MONITORING), /* DRAM encryption InfoROM support, smi */
	M(0x20801701, COMPUTE), M(0x20801801, COMPUTE),
	/* BUS_GET_INFO V1, smi and JAX: an embedded {index,data} list the
	 * supervisor relocates; the driver turns it into BUS_GET_INFO_V2. */
	M(0x20801802, MONITORING),
	M(0x20801803, COMPUTE), M(0x20801823, COMPUTE), M(0x2080182a, COMPUTE),
	M(0x2080182b, COMPUTE), M(0x2080200a, COMPUTE),
	M(0x20802068, MONITORING), /* PERF_GET_CURRENT_PSTATE, smi */
	M(0x20802204, DEBUG),
	M(0x2080220c, COMPUTE), M(0x20802210, COMPUTE), M(0x20802402, DEBUG),
	M(0x20802a0a, COMPUTE),
	M(0x20803001, MONITORING), /* NVLINK_GET_NVLINK_CAPS, JAX */
	M(0x20803002, COMPUTE), M(0x20803601, COMPUTE),
	M(0x20803801, COMPUTE),
	/* Bit-15 (legacy GSS) controls: opaque bytes to the GSP, allowed only
	 * because CUDA 13 sends exactly these while creating a context. */
	M(0x20808159, COMPUTE), M(0x20808162, COMPUTE),
	/* The video engines' own, seen before nvJPEG's hardware decode (H200). */
	M(0x20808165, VIDEO),
	M(0x20809001, COMPUTE),
	M(0x20809009, COMPUTE), M(0x20809038, COMPUTE), M(0x20809064, COMPUTE),
	M(0x2080a026, COMPUTE),
	M(0x2080a028, VIDEO),   /* before nvJPEG's hardware decode (H200) */
	M(0x2080a084, COMPUTE),
	M(0x20810108, COMPUTE),
	M(0x402c0102, PRIVILEGED), M(0x402c0105, PRIVILEGED),
	M(0x503c0102, COMPUTE), M(0x503c0104, COMPUTE), M(0x503c0105, COMPUTE),
	M(0x83de0309, COMPUTE),
	/* Debugger memory access: the one debugger control CUDA sends is
	 * above; these read and write the context's memory. */
	M(0x83de0315, DEBUG), M(0x83de0316, DEBUG), M(0x83de031a, DEBUG),
	M(0x83de031b, DEBUG), M(0x83de0326, DEBUG), M(0x83de0327, DEBUG),
	M(0x906f0101, COMPUTE), M(0x90e60102, COMPUTE),
	M(0xa06c0101, COMPUTE), M(0xa06c0103, COMPUTE), M(0xa06c0105, COMPUTE),
	/* A channel's own GPFIFO_SCHEDULE and BIND to an engine: nvJPEG's
	 * NVJPG channels have no group (H200). A scheduled channel without a
	 * group counts against --active-channel-groups like a group. */
	M(0xa06f0103, VIDEO), M(0xa06f0104, VIDEO),
	M(0xa0bc0101, VIDEO),   /* NVENC session update, not traced */
	M(0xb06f010c, DEBUG), M(0xb06f010d, DEBUG), /* engine context save/restore */
	M(0xc36f0108, COMPUTE),
	M(0xc36f010a, VIDEO),   /* own channel's token notifier index, nvJPEG (H200) */
	M(0xcb330101, COMPUTE),
};

#undef M
#undef E

static int cmp_member(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key;
	uint32_t b = ((const struct gs_member *)elem)->key;

	return (a > b) - (a < b);
}

static const struct gs_member *find(const struct gs_member *t, size_t n, uint32_t key)
{
	return bsearch(&key, t, n, sizeof(*t), cmp_member);
}

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

enum gs_group gs_class_group(uint32_t cls)
{
	const struct gs_member *m = find(class_members, ARRAY_LEN(class_members), cls);
	return m ? (enum gs_group)m->group : GS_GROUP_NONE;
}

enum gs_group gs_control_group(uint32_t cmd)
{
	const struct gs_member *m = find(control_members, ARRAY_LEN(control_members), cmd);
	return m ? (enum gs_group)m->group : GS_GROUP_NONE;
}

enum gs_engine gs_class_engine(uint32_t cls)
{
	const struct gs_member *m = find(class_members, ARRAY_LEN(class_members), cls);
	return m ? (enum gs_engine)m->engine : GS_ENGINE_NONE;
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

static struct gs_rule_verdict verdict(uint32_t groups_allowed, bool explicit,
                                      const struct gs_member *m, bool known, nv_status_t refusal,
                                      const char *what_unknown, const char *what_refused)
{
	struct gs_rule_verdict v = { .allowed = true, .status = NV_OK };
	enum gs_group g = m ? (enum gs_group)m->group : GS_GROUP_NONE;

	v.group = g == GS_GROUP_NONE ? NULL : gs_group_name(g);
	if (explicit || (m && (group_allowed(groups_allowed, m->group) ||
	                       group_allowed(groups_allowed, m->also))))
		return v;
	v.allowed = false;
	v.status = refusal;
	v.reason = (g == GS_GROUP_NONE && !known) ? what_unknown : what_refused;
	return v;
}

struct gs_rule_verdict gs_rules_class(const struct gs_rules *r, uint32_t cls)
{
	return verdict(r->groups, listed(r->classes, r->n_classes, cls),
	               find(class_members, ARRAY_LEN(class_members), cls),
	               rm_class_lookup(cls) != NULL, NV_ERR_INVALID_CLASS,
	               "class unknown to gpusandbox", "class not allowed by the policy");
}

struct gs_rule_verdict gs_rules_control(const struct gs_rules *r, uint32_t cmd)
{
	return verdict(r->groups, listed(r->controls, r->n_controls, cmd),
	               find(control_members, ARRAY_LEN(control_members), cmd),
	               rm_ctrl_lookup(cmd) != NULL, NV_ERR_NOT_SUPPORTED,
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

void gs_groups_print(FILE *f, uint32_t default_groups)
{
	for (unsigned g = 0; g < GS_GROUP_N; g++) {
		unsigned col = 0;

		fprintf(f, "%s%s\n", groups[g].name,
		        (default_groups & GS_GROUP_BIT(g)) ? " (default)" : "");
		print_wrapped(f, groups[g].help);
		fprintf(f, "  classes:");
		for (size_t i = 0; i < ARRAY_LEN(class_members); i++) {
			const struct gs_member *m = &class_members[i];
			const struct rm_class_info *ci = rm_class_lookup(m->key);
			if (m->group != g && m->also != g)
				continue;
			fprintf(f, "%s0x%04x %s%s%s", col++ % 2 ? "  " : "\n    ", m->key,
			        ci ? ci->name : "?", engine_name(m->engine) ? " " : "",
			        engine_name(m->engine) ? engine_name(m->engine) : "");
		}
		fprintf(f, "\n  controls:");
		col = 0;
		for (size_t i = 0; i < ARRAY_LEN(control_members); i++) {
			const struct gs_member *m = &control_members[i];
			const struct rm_ctrl_info *ci = rm_ctrl_lookup(m->key);
			if (m->group != g && m->also != g)
				continue;
			fprintf(f, "\n    0x%08x %s", m->key, ci ? ci->name : "?");
			col++;
		}
		fprintf(f, "%s\n\n", col ? "" : " none");
	}
}

size_t gs_class_members(const struct gs_member **t)
{
	*t = class_members;
	return ARRAY_LEN(class_members);
}

size_t gs_control_members(const struct gs_member **t)
{
	*t = control_members;
	return ARRAY_LEN(control_members);
}
