/* SPDX-License-Identifier: MIT */
/*
 * test_verdict.c - the verdict stage by table rows, in the style of
 * libseccomp's .tests: each row is rules, limits, usage and a call record,
 * and the verdict it must give (kind, RM status, reason, whether a release
 * of closed files could lift it, the bytes charged). A second pass checks
 * that the verdict is pure: the same row twice gives the same verdict and
 * leaves its inputs as they were. Then a few decode rows: the call record
 * made from a top-level struct and its params. The checks of memory handed
 * beyond its client (UVM maps, --p2p-register, export and import fds) are
 * in test_verdict_sharing.c; main here runs them too.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "decode.h"
#include "ledger.h"
#include "test_verdict.h"
#include "verdict.h"
#include "nvrm/rm_abi.h"

#define UNL UINT32_MAX           /* a count left unlimited */
#define MEM_UNL GS_QUOTA_UNLIMITED

#define CLS_UNKNOWN 0x1234u      /* in no table */
/* A command number no table has (not bit 15), and a bit-15 one. */
#define CMD_UNKNOWN 0x20807e01u
#define CMD_UNKNOWN_GSS 0x2080be81u  /* bit 15, not 14: anyone may send it */
#define CMD_ADMIN_GSS   0x2080c001u  /* bits 15:14 set: the driver asks for an admin */
#define CLS_CHANNEL 0xa06fu      /* KEPLER_CHANNEL_GPFIFO_A */
#define CLS_NVDEC   0xb8b0u      /* NVB8B0_VIDEO_DECODER (GH100) */
#define PSIZE_VIDMEM 128u        /* sizeof(NV_MEMORY_ALLOCATION_PARAMS) */
#define PSIZE_CHANNEL 368u

enum rules_kind { RULES_DEFAULT, RULES_ALL, RULES_NONE, RULES_UNKNOWN_LISTED,
                  RULES_CTRL_UNKNOWN_LISTED };

struct limits {
	uint64_t mem, mem_gpu1;
	uint32_t channels, channel_groups, nvdec;
	uint32_t clients;  /* --clients, or NO_CAP */
};

struct row {
	const char        *name;
	enum rules_kind    rules;
	struct limits      limits;
	struct gs_usage    usage;
	struct gs_rm_call  call;
	/* expected */
	enum gs_verdict    verdict;
	nv_status_t        status;
	const char        *reason;
	bool               needs_reconcile;
	uint64_t           charge;
};

/* A row without --clients (0 is no valid value of it). */
#define NO_CAP 0u
#define NO_LIMITS { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }
#define IDLE { .gpu = LEDGER_NO_GPU }
#define ON_FREE_CONTROL_FILE { .on_control_file = true, .file_known = true, .gpu = LEDGER_NO_GPU }
#define GPU0(used) { .client_bound = true, .gpu = 0, .mem_used = (used) }

#define CALL(cls, k) .escape = NV_ESC_RM_ALLOC, .nvos64 = true, .h_client = 0xc1, \
	.h_parent = 0xd0, .h_object = 0xe0, .h_class = (cls), .class_known = true, .kind = (k), \
	.params_copied = true, .rights_copied = true
#define CLIENT { CALL(NV01_ROOT_CLIENT, RM_CLASS_CLIENT), .creates_client = true }
#define VIDMEM(sz) { CALL(NV01_MEMORY_LOCAL_USER, RM_CLASS_VIDMEM), .has_params = true, \
	.params_size = PSIZE_VIDMEM, .has_size = true, .size = (sz) }
#define CHANNEL { CALL(CLS_CHANNEL, RM_CLASS_CHANNEL), .has_params = true, \
	.params_size = PSIZE_CHANNEL }
#define GROUP { CALL(KEPLER_CHANNEL_GROUP_A, RM_CLASS_CHANNEL_GROUP), .has_params = true, \
	.params_size = 20 }
#define NVDEC { CALL(CLS_NVDEC, RM_CLASS_ENGINE) }
#define ALLOC_OBJECT(cls, k) .escape = NV_ESC_RM_ALLOC_OBJECT, .h_client = 0xc1, \
	.h_parent = 0xd0, .h_object = 0xe0, .h_class = (cls), .class_known = true, .kind = (k), \
	.params_copied = true, .rights_copied = true
#define VIDHEAP_VIDMEM(sz) { .escape = NV_ESC_RM_VID_HEAP_CONTROL, \
	.function = NVOS32_FUNCTION_ALLOC_SIZE, .h_client = 0xc1, .h_parent = 0xd0, \
	.h_class = NV01_MEMORY_LOCAL_USER, .class_known = true, .kind = RM_CLASS_VIDMEM, \
	.params_copied = true, .rights_copied = true, .has_size = true, .size = (sz) }

#define ALLOW GS_VERDICT_ALLOW, NV_OK, NULL
#define REFUSE(st, why) GS_VERDICT_REFUSE, st, why
#define DENY(st, why) GS_VERDICT_DENY, st, why

static const struct row rows[] = {
	{ "FINN-serialized params", RULES_DEFAULT, NO_LIMITS, IDLE,
	  { CALL(NV01_DEVICE_0, RM_CLASS_DEVICE), .finn_serialized = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "FINN-serialized alloc params are not allowed"), false, 0 },
	{ "class in no table", RULES_DEFAULT, NO_LIMITS, IDLE,
	  { CALL(CLS_UNKNOWN, RM_CLASS_OTHER), .class_known = false },
	  REFUSE(NV_ERR_INVALID_CLASS, "class unknown to gpusandbox"), false, 0 },
	{ "known class, no group allowed", RULES_NONE, NO_LIMITS, IDLE, CHANNEL,
	  REFUSE(NV_ERR_INVALID_CLASS, "class not allowed by the policy"), false, 0 },
	{ "client through XFER", RULES_DEFAULT, NO_LIMITS, ON_FREE_CONTROL_FILE,
	  { CALL(NV01_ROOT_CLIENT, RM_CLASS_CLIENT), .creates_client = true, .via_xfer = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "client allocation through XFER cannot be continued safely"),
	  false, 0 },
	{ "client outside the control file", RULES_DEFAULT, NO_LIMITS, IDLE, CLIENT,
	  REFUSE(NV_ERR_NOT_SUPPORTED, "client allocation outside the control file"), false, 0 },
	{ "client on a file the ledger cannot identify", RULES_DEFAULT, NO_LIMITS,
	  { .on_control_file = true, .gpu = LEDGER_NO_GPU }, CLIENT,
	  REFUSE(NV_ERR_NOT_SUPPORTED, "cannot identify the open file (kcmp, epoll)"), false, 0 },
	{ "second client on one control file", RULES_DEFAULT, NO_LIMITS,
	  { .on_control_file = true, .file_known = true, .file_has_client = true,
	    .gpu = LEDGER_NO_GPU }, CLIENT,
	  REFUSE(NV_ERR_NOT_SUPPORTED, "one client per open control file: open /dev/nvidiactl again"),
	  false, 0 },
	{ "second client on one control file, made by injection", RULES_DEFAULT, NO_LIMITS,
	  { .on_control_file = true, .file_known = true, .file_has_client = true, .may_inject = true,
	    .gpu = LEDGER_NO_GPU }, CLIENT,
	  GS_VERDICT_CONTINUE, NV_OK, "client allocation runs in the workload's context", false, 0 },
	{ "second client by injection, at --clients", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, UNL, 2 },
	  { .on_control_file = true, .file_known = true, .file_has_client = true, .may_inject = true,
	    .gpu = LEDGER_NO_GPU, .count[GS_QK_CLIENTS] = 2 }, CLIENT,
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "client quota exceeded"), true, 0 },
	{ "first client on a control file", RULES_DEFAULT, NO_LIMITS, ON_FREE_CONTROL_FILE, CLIENT,
	  GS_VERDICT_CONTINUE, NV_OK, "client allocation runs in the workload's context", false, 0 },
	{ "client under --clients", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, UNL, 2 },
	  { .on_control_file = true, .file_known = true, .gpu = LEDGER_NO_GPU,
	    .count[GS_QK_CLIENTS] = 1 }, CLIENT,
	  GS_VERDICT_CONTINUE, NV_OK, "client allocation runs in the workload's context", false, 0 },
	{ "client at --clients", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, UNL, 2 },
	  { .on_control_file = true, .file_known = true, .gpu = LEDGER_NO_GPU,
	    .count[GS_QK_CLIENTS] = 2 }, CLIENT,
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "client quota exceeded"), true, 0 },
	{ "client without --clients: not counted", RULES_DEFAULT, NO_LIMITS,
	  { .on_control_file = true, .file_known = true, .gpu = LEDGER_NO_GPU,
	    .count[GS_QK_CLIENTS] = UINT32_MAX }, CLIENT,
	  GS_VERDICT_CONTINUE, NV_OK, "client allocation runs in the workload's context", false, 0 },
	{ "second client on one control file, at --clients", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, UNL, 1 },
	  { .on_control_file = true, .file_known = true, .file_has_client = true,
	    .gpu = LEDGER_NO_GPU, .count[GS_QK_CLIENTS] = 1 }, CLIENT,
	  REFUSE(NV_ERR_NOT_SUPPORTED, "one client per open control file: open /dev/nvidiactl again"),
	  false, 0 },
	{ "class bound to the calling process", RULES_ALL, NO_LIMITS, IDLE,
	  { CALL(NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, RM_CLASS_PROCESS_BOUND), .has_params = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "class bound to the calling process"), false, 0 },
	{ "listed unknown class with params", RULES_UNKNOWN_LISTED, NO_LIMITS, IDLE,
	  { CALL(CLS_UNKNOWN, RM_CLASS_OTHER), .class_known = false, .has_params = true },
	  REFUSE(NV_ERR_INVALID_CLASS, "class unknown to gpusandbox: its params cannot be copied"),
	  false, 0 },
	{ "listed unknown class without params", RULES_UNKNOWN_LISTED, NO_LIMITS, IDLE,
	  { CALL(CLS_UNKNOWN, RM_CLASS_OTHER), .class_known = false }, ALLOW, false, 0 },
	{ "params larger than the driver allows", RULES_ALL, NO_LIMITS, IDLE,
	  { CALL(CLS_CHANNEL, RM_CLASS_CHANNEL), .has_params = true,
	    .params_size = NV_RMAPI_MAX_PARAMS_SIZE + 1 },
	  REFUSE(NV_ERR_INVALID_ARGUMENT, "class params larger than the driver allows"), false, 0 },
	{ "params not readable", RULES_DEFAULT, NO_LIMITS, IDLE,
	  { CALL(CLS_CHANNEL, RM_CLASS_CHANNEL), .has_params = true, .params_size = PSIZE_CHANNEL,
	    .params_copied = false },
	  REFUSE(NV_ERR_INVALID_ARGUMENT, "alloc params are not readable"), false, 0 },
	{ "rights not readable", RULES_DEFAULT, NO_LIMITS, IDLE,
	  { CALL(CLS_CHANNEL, RM_CLASS_CHANNEL), .has_rights = true, .rights_copied = false },
	  REFUSE(NV_ERR_INVALID_ARGUMENT, "access rights are not readable"), false, 0 },
	{ "video memory without params", RULES_DEFAULT, NO_LIMITS, GPU0(0),
	  { CALL(NV01_MEMORY_LOCAL_USER, RM_CLASS_VIDMEM) },
	  REFUSE(NV_ERR_INVALID_ARGUMENT, "video memory allocation without params"), false, 0 },
	{ "video memory, client cannot be bound", RULES_DEFAULT, NO_LIMITS,
	  { .gpu = 0 }, VIDMEM(MIB),
	  REFUSE(NV_ERR_NO_MEMORY, "supervisor out of memory"), false, 0 },
	{ "video memory under an unknown parent", RULES_DEFAULT, NO_LIMITS,
	  { .client_bound = true, .gpu = LEDGER_NO_GPU }, VIDMEM(MIB),
	  REFUSE(NV_ERR_INVALID_OBJECT_PARENT,
	         "video memory under a parent that is not a known device"), false, 0 },
	{ "video memory, GPU index out of range", RULES_DEFAULT, NO_LIMITS,
	  { .client_bound = true, .gpu = GS_MAX_GPUS }, VIDMEM(MIB),
	  REFUSE(NV_ERR_INVALID_OBJECT_PARENT,
	         "video memory under a parent that is not a known device"), false, 0 },
	{ "video memory, no quota", RULES_DEFAULT, NO_LIMITS, GPU0(0), VIDMEM(1),
	  ALLOW, false, 2 * MIB },
	{ "video memory, no quota, size saturates", RULES_DEFAULT, NO_LIMITS, GPU0(0),
	  VIDMEM(UINT64_MAX - 1), ALLOW, false, UINT64_MAX },
	{ "video memory rounded to the granule", RULES_DEFAULT,
	  { 64 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(0), VIDMEM(MIB + 1),
	  ALLOW, false, 2 * MIB },
	{ "video memory fills the quota exactly", RULES_DEFAULT,
	  { 4 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(2 * MIB), VIDMEM(2 * MIB),
	  ALLOW, false, 2 * MIB },
	{ "video memory one granule over", RULES_DEFAULT,
	  { 4 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(4 * MIB), VIDMEM(1),
	  DENY(NV_ERR_NO_MEMORY, "video memory quota exceeded"), true, 2 * MIB },
	{ "video memory larger than the quota", RULES_DEFAULT,
	  { 4 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(0), VIDMEM(UINT64_MAX),
	  DENY(NV_ERR_NO_MEMORY, "video memory quota exceeded"), true, UINT64_MAX },
	{ "video memory, the GPU's own quota wins", RULES_DEFAULT,
	  { MEM_UNL, 2 * MIB, UNL, UNL, UNL, NO_CAP }, { .client_bound = true, .gpu = 1, .mem_used = 0 },
	  VIDMEM(3 * MIB), DENY(NV_ERR_NO_MEMORY, "video memory quota exceeded"), true, 4 * MIB },
	{ "channel under the cap", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, 2, UNL, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channels = 1 }, CHANNEL, ALLOW, false, 0 },
	{ "channel at the cap", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, 2, UNL, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channels = 2 }, CHANNEL,
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "channel quota exceeded"), true, 0 },
	{ "channel group at the cap", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, UNL, 1, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channel_groups = 1 }, GROUP,
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "channel group quota exceeded"), true, 0 },
	{ "channel group cap does not count channels", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, 1, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channels = 9, .parent_is_group = true }, CHANNEL, ALLOW, false, 0 },
	{ "channel in a group, group cap full", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, 1, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channel_groups = 1, .parent_is_group = true }, CHANNEL, ALLOW,
	  false, 0 },
	{ "lone channel brings RM's group: group cap full", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, 1, UNL, NO_CAP }, { .gpu = LEDGER_NO_GPU, .channel_groups = 1 },
	  CHANNEL, DENY(NV_ERR_INSUFFICIENT_RESOURCES, "channel group quota exceeded"), true, 0 },
	{ "lone channel under both caps", RULES_DEFAULT, { MEM_UNL, GS_MEM_GPU_UNSET, 2, 2, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channels = 1, .channel_groups = 1 }, CHANNEL, ALLOW, false, 0 },
	{ "video decoder, cap 0", RULES_ALL, { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, 0, NO_CAP }, IDLE,
	  NVDEC, DENY(NV_ERR_INSUFFICIENT_RESOURCES, "video engine quota exceeded"), true, 0 },
	{ "VID_HEAP ALLOC_SIZE over the quota", RULES_DEFAULT,
	  { 4 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(4 * MIB), VIDHEAP_VIDMEM(MIB),
	  DENY(NV_ERR_NO_MEMORY, "video memory quota exceeded"), true, 2 * MIB },
	{ "VID_HEAP ALLOC_SIZE within the quota", RULES_DEFAULT,
	  { 4 * MIB, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, GPU0(0), VIDHEAP_VIDMEM(MIB),
	  ALLOW, false, 2 * MIB },
	{ "VID_HEAP ALLOC_SIZE of system memory is not charged", RULES_DEFAULT,
	  { 0, GS_MEM_GPU_UNSET, UNL, UNL, UNL, NO_CAP }, IDLE,
	  { .escape = NV_ESC_RM_VID_HEAP_CONTROL, .function = NVOS32_FUNCTION_ALLOC_SIZE,
	    .h_class = NV01_MEMORY_SYSTEM, .class_known = true, .kind = RM_CLASS_SYSMEM,
	    .params_copied = true, .rights_copied = true, .has_size = true, .size = MIB },
	  ALLOW, false, 0 },
	{ "VID_HEAP FREE", RULES_NONE, NO_LIMITS, IDLE,
	  { .escape = NV_ESC_RM_VID_HEAP_CONTROL, .function = NVOS32_FUNCTION_FREE,
	    .params_copied = true, .rights_copied = true }, ALLOW, false, 0 },
	{ "VID_HEAP ALLOC_OS_DESCRIPTOR", RULES_ALL, NO_LIMITS, IDLE,
	  { .escape = NV_ESC_RM_VID_HEAP_CONTROL, .function = NVOS32_FUNCTION_ALLOC_OS_DESCRIPTOR,
	    .params_copied = true, .rights_copied = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "VID_HEAP_CONTROL function not supported by gpusandbox"),
	  false, 0 },
	{ "VID_HEAP video memory, no group allowed", RULES_NONE, NO_LIMITS, GPU0(0),
	  VIDHEAP_VIDMEM(MIB), REFUSE(NV_ERR_INVALID_CLASS, "class not allowed by the policy"),
	  false, 0 },
	{ "client through RM_ALLOC_OBJECT", RULES_DEFAULT, NO_LIMITS, ON_FREE_CONTROL_FILE,
	  { ALLOC_OBJECT(NV01_ROOT_CLIENT, RM_CLASS_CLIENT), .creates_client = true },
	  REFUSE(NV_ERR_INVALID_CLASS, "class not allowed through RM_ALLOC_OBJECT"), false, 0 },
	{ "video memory through RM_ALLOC_OBJECT", RULES_DEFAULT, NO_LIMITS, GPU0(0),
	  { ALLOC_OBJECT(NV01_MEMORY_LOCAL_USER, RM_CLASS_VIDMEM) },
	  REFUSE(NV_ERR_INVALID_CLASS, "class not allowed through RM_ALLOC_OBJECT"), false, 0 },
	{ "process-bound class through RM_ALLOC_OBJECT", RULES_ALL, NO_LIMITS, IDLE,
	  { ALLOC_OBJECT(NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, RM_CLASS_PROCESS_BOUND) },
	  REFUSE(NV_ERR_INVALID_CLASS, "class not allowed through RM_ALLOC_OBJECT"), false, 0 },
	{ "RM_ALLOC_OBJECT of a class outside every group", RULES_NONE, NO_LIMITS, IDLE,
	  { ALLOC_OBJECT(CLS_CHANNEL, RM_CLASS_CHANNEL) },
	  REFUSE(NV_ERR_INVALID_CLASS, "class not allowed by the policy"), false, 0 },
	{ "video decoder through RM_ALLOC_OBJECT at the cap", RULES_ALL,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, 1, NO_CAP }, { .gpu = LEDGER_NO_GPU, .count[GS_QK_VIDEO_DECODERS] = 1 },
	  { ALLOC_OBJECT(CLS_NVDEC, RM_CLASS_ENGINE) },
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "video engine quota exceeded"), true, 0 },
	{ "channel through RM_ALLOC_OBJECT: no cap here, the driver requires its params", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, 0, 0, UNL, NO_CAP }, IDLE,
	  { ALLOC_OBJECT(CLS_CHANNEL, RM_CLASS_CHANNEL) }, ALLOW, false, 0 },
	{ "video decoder under the cap", RULES_ALL, { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, 2, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .count[GS_QK_VIDEO_DECODERS] = 1 }, NVDEC, ALLOW, false, 0 },
	/* Sessions (exec_engines.c): an object that joins a session its
	 * client holds adds none, even at the cap; one that opens a session
	 * (its client's objects fill whole sessions) is judged by the cap. */
	{ "video decoder joining a held session at the cap", RULES_ALL,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, 2, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .count[GS_QK_VIDEO_DECODERS] = 2, .engine_joins_session = true },
	  NVDEC, ALLOW, false, 0 },
	{ "video decoder opening a session at the cap", RULES_ALL,
	  { MEM_UNL, GS_MEM_GPU_UNSET, UNL, UNL, 2, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .count[GS_QK_VIDEO_DECODERS] = 2 },
	  NVDEC, DENY(NV_ERR_INSUFFICIENT_RESOURCES, "video engine quota exceeded"), true, 0 },
	{ "channel: engine_joins_session is not read", RULES_DEFAULT,
	  { MEM_UNL, GS_MEM_GPU_UNSET, 1, UNL, UNL, NO_CAP },
	  { .gpu = LEDGER_NO_GPU, .channels = 1, .parent_is_group = true, .engine_joins_session = true },
	  CHANNEL, DENY(NV_ERR_INSUFFICIENT_RESOURCES, "channel quota exceeded"), true, 0 },
};

static void rules_of(enum rules_kind k, struct gs_rules *r)
{
	gs_rules_default(r);
	if (k == RULES_ALL)
		r->groups = ~0u;
	else if (k == RULES_NONE)
		r->groups = 0;
	else if (k == RULES_UNKNOWN_LISTED)
		r->classes[r->n_classes++] = CLS_UNKNOWN;
	else if (k == RULES_CTRL_UNKNOWN_LISTED) {
		r->controls[r->n_controls++] = CMD_UNKNOWN;
		r->controls[r->n_controls++] = CMD_UNKNOWN_GSS;
		r->controls[r->n_controls++] = CMD_ADMIN_GSS;
	}
}

static void limits_of(const struct limits *l, struct gs_quota *q)
{
	gs_quota_init(q);
	q->mem_per_gpu = l->mem;
	q->mem_gpu[1] = l->mem_gpu1;
	q->channels = l->channels;
	q->channel_groups = l->channel_groups;
	q->engines[GS_ENGINE_NVDEC] = l->nvdec;
	q->count[GS_QK_CLIENTS] = l->clients == NO_CAP ? GS_COUNT_UNLIMITED : l->clients;
}

static void check_row(const struct row *r)
{
	struct gs_rules rules;
	struct gs_quota q;
	struct gs_rm_call call, want;

	decoded(&call, &r->call);
	decoded(&want, &r->call);
	struct gs_usage usage = r->usage;

	rules_of(r->rules, &rules);
	limits_of(&r->limits, &q);
	struct gs_call_verdict v = gs_verdict_of(&rules, &q, &usage, &call);
	bool ok = v.verdict == r->verdict && v.status == r->status && same_text(v.reason, r->reason) &&
	          v.needs_reconcile == r->needs_reconcile && v.charge == r->charge;
	if (!ok)
		fprintf(stderr, "row \"%s\": got %s 0x%x \"%s\" reconcile=%d charge=%llu\n", r->name,
		        gs_verdict_name(v.verdict), v.status, v.reason ? v.reason : "",
		        v.needs_reconcile, (unsigned long long)v.charge);
	CHECK(ok);
	/* A client continued on a file that has one is made by injection,
	 * never from the workload's struct; a first one is continued. */
	if (v.verdict == GS_VERDICT_CONTINUE)
		CHECK(v.inject == usage.file_has_client);
	/* Pure: the same answer again, and the inputs untouched. */
	struct gs_call_verdict again = gs_verdict_of(&rules, &q, &usage, &call);
	CHECK(again.verdict == v.verdict && again.status == v.status && again.reason == v.reason &&
	      again.charge == v.charge);
	CHECK(memcmp(&call, &want, sizeof(call)) == 0);
	CHECK(memcmp(&usage, &r->usage, sizeof(usage)) == 0);
}

/* The first verdict (on the call alone) never objects to what the whole
 * verdict allows, and agrees with every refusal it can see. */
static void check_call_only(const struct row *r)
{
	struct gs_rules rules;
	struct gs_quota q;

	rules_of(r->rules, &rules);
	limits_of(&r->limits, &q);
	struct gs_rm_call call;

	decoded(&call, &r->call);
	struct gs_call_verdict first = gs_verdict_of_call(&rules, &call);
	struct gs_call_verdict whole = gs_verdict_of(&rules, &q, &r->usage, &call);
	bool first_objects = first.verdict == GS_VERDICT_REFUSE || first.verdict == GS_VERDICT_DENY;
	CHECK(!first_objects || (whole.verdict == first.verdict && whole.reason == first.reason));
}

/* RM_CONTROL rows: the clauses before the params are copied. */
struct control_row {
	const char       *name;
	enum rules_kind   rules;
	bool              client_seen;
	struct gs_rm_call call;
	enum gs_verdict   verdict;
	nv_status_t       status;
	const char       *reason;
	bool              by_allowlist;
};

#define CMD_FB_INFO_V2 NV2080_CTRL_CMD_FB_GET_INFO_V2

static const struct control_row control_rows[] = {
	{ "unknown control allowed by number, with params", RULES_CTRL_UNKNOWN_LISTED, true,
	  { CONTROL(CMD_UNKNOWN), .ctrl_known = false },
	  REFUSE(NV_ERR_NOT_SUPPORTED,
	         "control unknown on this driver branch: its params cannot be checked"), false },
	{ "unknown control allowed by number, without params", RULES_CTRL_UNKNOWN_LISTED, true,
	  { CONTROL(CMD_UNKNOWN), .ctrl_known = false, .has_params = false, .params_size = 0 },
	  ALLOW, false },
	{ "unknown bit-15 control allowed by number: opaque bytes", RULES_CTRL_UNKNOWN_LISTED, true,
	  { CONTROL(CMD_UNKNOWN_GSS), .ctrl_known = false, .gss_legacy = true }, ALLOW, false },
	{ "administrator-only bit-15 control, even allowed by number", RULES_CTRL_UNKNOWN_LISTED, true,
	  { CONTROL(CMD_ADMIN_GSS), .ctrl_known = false, .gss_legacy = true },
	  REFUSE(NV_ERR_INSUFFICIENT_PERMISSIONS, "administrator-only legacy control"), false },
	{ "allowed control", RULES_DEFAULT, false, { CONTROL(CMD_FB_INFO_V2) }, ALLOW, false },
	{ "FINN-serialized control", RULES_DEFAULT, false,
	  { CONTROL(CMD_FB_INFO_V2), .finn_serialized = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "FINN-serialized control params are not allowed"), false },
	{ "FIFO_DISABLE_CHANNELS, whatever the policy", RULES_ALL, true,
	  { CONTROL(NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS) },
	  REFUSE(NV_ERR_INSUFFICIENT_PERMISSIONS,
	         "FIFO_DISABLE_CHANNELS is reserved to the supervisor"), false },
	{ "control outside every allowed group", RULES_NONE, true, { CONTROL(CMD_FB_INFO_V2) },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "control not allowed by the policy"), true },
	{ "control in no table", RULES_DEFAULT, true, { CONTROL(0x12345678u) },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "control unknown to gpusandbox"), true },
	{ "legacy GSS control on an unseen client", RULES_DEFAULT, false,
	  { CONTROL(CMD_FB_INFO_V2), .gss_legacy = true },
	  REFUSE(NV_ERR_INVALID_CLIENT, "legacy control on a client not seen in this sandbox"),
	  false },
	{ "legacy GSS control on a client of the sandbox", RULES_DEFAULT, true,
	  { CONTROL(CMD_FB_INFO_V2), .gss_legacy = true }, ALLOW, false },
	{ "control with unrelocatable pointers", RULES_DEFAULT, true,
	  { CONTROL(CMD_FB_INFO_V2), .unrelocatable = true },
	  REFUSE(NV_ERR_NOT_SUPPORTED, "control with pointers gpusandbox cannot relocate"), false },
	{ "control params over the driver's limit", RULES_DEFAULT, true,
	  { CONTROL(CMD_FB_INFO_V2), .params_size = NV_RMAPI_MAX_PARAMS_SIZE + 1 },
	  REFUSE(NV_ERR_INVALID_ARGUMENT, "control params larger than the driver allows"), false },
	{ "control the supervisor reads, of another size than the driver's", RULES_DEFAULT, true,
	  { CONTROL(CMD_FB_INFO_V2), .params_size = 436, .params_size_wrong = true },
	  REFUSE(NV_ERR_INVALID_PARAM_STRUCT, "control params of another size than the running driver's"),
	  false },
};

static void check_control_row(const struct control_row *r)
{
	struct gs_rules rules;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU, .client_seen = r->client_seen };

	struct gs_rm_call call;

	decoded(&call, &r->call);
	rules_of(r->rules, &rules);
	struct gs_call_verdict v = gs_verdict_of_control(&rules, &u, &call);
	bool ok = v.verdict == r->verdict && v.status == r->status && same_text(v.reason, r->reason) &&
	          v.by_allowlist == r->by_allowlist;
	if (!ok)
		fprintf(stderr, "control row \"%s\": got %s 0x%x \"%s\"\n", r->name,
		        gs_verdict_name(v.verdict), v.status, v.reason ? v.reason : "");
	CHECK(ok);
}

/* RM_CONTROL rows on the copied params: --active-channel-groups. */
struct schedule_row {
	const char       *name;
	uint32_t          limit;          /* active_channel_groups */
	struct gs_usage   usage;
	struct gs_rm_call call;
	enum gs_verdict   verdict;
	nv_status_t       status;
	const char       *reason;
	bool              needs_reconcile;
};

#define SCHEDULE(cmd_) { CONTROL(cmd_), .params_size = 3, .schedules = true }
#define GROUPS(n) { .gpu = LEDGER_NO_GPU, .target_is_group = true, .scheduled_groups = (n) }

static const struct schedule_row schedule_rows[] = {
	{ "first group under the limit", 2, GROUPS(0), SCHEDULE(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
	  ALLOW, false },
	{ "one more group at the limit", 2, GROUPS(2), SCHEDULE(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "active channel group limit reached"), true },
	{ "a group scheduled already, at the limit", 2,
	  { .gpu = LEDGER_NO_GPU, .target_is_group = true, .target_scheduled = true,
	    .scheduled_groups = 2 }, SCHEDULE(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE), ALLOW, false },
	{ "a lone channel is its own group", 1, GROUPS(1), SCHEDULE(NVA06F_CTRL_CMD_GPFIFO_SCHEDULE),
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "active channel group limit reached"), true },
	{ "a channel inside a group adds none", 1, { .gpu = LEDGER_NO_GPU, .scheduled_groups = 1 },
	  SCHEDULE(NVA06F_CTRL_CMD_GPFIFO_SCHEDULE), ALLOW, false },
	{ "disabling is never refused", 0, GROUPS(5),
	  { CONTROL(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE), .params_size = 3 }, ALLOW, false },
	{ "limit 0 refuses the first", 0, GROUPS(0), SCHEDULE(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE),
	  DENY(NV_ERR_INSUFFICIENT_RESOURCES, "active channel group limit reached"), true },
	{ "unlimited", UNL, GROUPS(UNL - 1), SCHEDULE(NVA06C_CTRL_CMD_GPFIFO_SCHEDULE), ALLOW, false },
};

static void check_schedule_row(const struct schedule_row *r)
{
	struct gs_quota q;
	struct gs_rm_call call;
	struct gs_usage u = r->usage;

	gs_quota_init(&q);
	q.active_channel_groups = r->limit;
	decoded(&call, &r->call);
	struct gs_call_verdict v = gs_verdict_of_control_params(&q, &u, &call);
	bool ok = v.verdict == r->verdict && v.status == r->status && same_text(v.reason, r->reason) &&
	          v.needs_reconcile == r->needs_reconcile;
	if (!ok)
		fprintf(stderr, "schedule row \"%s\": got %s 0x%x \"%s\"\n", r->name,
		        gs_verdict_name(v.verdict), v.status, v.reason ? v.reason : "");
	CHECK(ok);
	/* A refusal names the count it was checked against. */
	CHECK(v.verdict != GS_VERDICT_DENY ||
	      (same_text(v.resource, "scheduled_channel_groups") && v.count == u.scheduled_groups &&
	       v.limit == r->limit));
	CHECK(memcmp(&u, &r->usage, sizeof(u)) == 0);
}

/* Escape rows: the escape as trapped or as XFER carries it, decoded from
 * the number and size (gs_decode_escape), then gs_verdict_of_escape. */
struct escape_row {
	const char     *name;
	uint32_t        nr, size;
	bool            in_xfer;
	enum gs_verdict verdict;
	const char     *reason;
};

#define ESC_UNKNOWN 0x7fu        /* in no table */

static const struct escape_row escape_rows[] = {
	{ "RM_ALLOC, NVOS64", NV_ESC_RM_ALLOC, 48, false, GS_VERDICT_ALLOW, NULL },
	{ "RM_ALLOC through XFER", NV_ESC_RM_ALLOC, 32, true, GS_VERDICT_ALLOW, NULL },
	{ "RM_FREE of another size", NV_ESC_RM_FREE, 20, false, GS_VERDICT_REFUSE,
	  "escape with a size the driver does not accept" },
	{ "RM_FREE through XFER, oversized", NV_ESC_RM_FREE, NV_ABSOLUTE_MAX_IOCTL_SIZE + 1, true,
	  GS_VERDICT_REFUSE, "escape with a size the driver does not accept" },
	{ "unknown escape", ESC_UNKNOWN, 16, false, GS_VERDICT_REFUSE, "escape unknown to gpusandbox" },
	{ "unknown escape through XFER", ESC_UNKNOWN, 16, true, GS_VERDICT_REFUSE,
	  "escape unknown to gpusandbox" },
	{ "escape the driver does not handle", NV_ESC_RM_CONFIG_GET, 16, false, GS_VERDICT_REFUSE,
	  "escape the driver does not handle" },
	{ "XFER inside XFER", NV_ESC_IOCTL_XFER_CMD, 16, true, GS_VERDICT_REFUSE,
	  "XFER inside XFER, which the driver refuses" },
	{ "a continued escape through XFER", NV_ESC_RM_MAP_MEMORY, 56, true, GS_VERDICT_REFUSE,
	  "escape cannot be performed by the supervisor and XFER cannot be continued" },
	{ "REGISTER_FD", NV_ESC_REGISTER_FD, 4, false, GS_VERDICT_ALLOW, NULL },
};

static void check_escape_row(const struct escape_row *r)
{
	struct gs_rm_call call;

	gs_decode_escape(ABI, r->nr, r->size, r->in_xfer, &call);
	struct gs_call_verdict v = gs_verdict_of_escape(&call);
	bool ok = v.verdict == r->verdict && same_text(v.reason, r->reason) &&
	          v.errnum == (r->verdict == GS_VERDICT_REFUSE ? EINVAL : 0);
	if (!ok)
		fprintf(stderr, "escape row \"%s\": got %s \"%s\" errno %d\n", r->name,
		        gs_verdict_name(v.verdict), v.reason ? v.reason : "", v.errnum);
	CHECK(ok);
	/* Without tables: refused, whatever the escape. */
	call.abi = NULL;
	CHECK(gs_verdict_of_escape(&call).verdict == GS_VERDICT_REFUSE);
}

/* RM_FREE, RM_SHARE, RM_DUP_OBJECT and REGISTER_FD, decoded from their
 * structs, and their verdicts. */
static void check_handle_calls(void)
{
	struct gs_rm_call c;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };

	struct nvos00 fr = { .h_root = 0xc1, .h_object_parent = 0xc1, .h_object_old = 0xc1 };
	gs_decode_free(ABI, &fr, false, &c);
	CHECK(c.escape == NV_ESC_RM_FREE && c.frees_client && c.h_client == 0xc1 && c.h_object == 0xc1);
	CHECK(gs_verdict_of_handle_call(&c).verdict == GS_VERDICT_ALLOW);
	fr.h_object_old = 0xe0;
	gs_decode_free(ABI, &fr, true, &c);
	CHECK(!c.frees_client && c.h_object == 0xe0 && c.via_xfer);
	c.abi = NULL;
	CHECK(gs_verdict_of_handle_call(&c).verdict == GS_VERDICT_REFUSE);

	struct nvos57 sh = { .h_client = 0xc1, .h_object = 0xe0,
	                     .policy = { .type = RS_SHARE_TYPE_ALL, .action = 1 } };
	gs_decode_share(ABI, &sh, false, &c);
	CHECK(c.escape == NV_ESC_RM_SHARE && c.h_object == 0xe0 && c.share_type == RS_SHARE_TYPE_ALL &&
	      c.share_action == 1 && gs_verdict_of_handle_call(&c).verdict == GS_VERDICT_ALLOW);

	struct nvos55 dp = { .h_client = 0xc1, .h_parent = 0xd0, .h_object = 0xe9,
	                     .h_client_src = 0xc2, .h_object_src = 0xe1 };
	gs_decode_dup(ABI, &dp, false, &c);
	CHECK(c.escape == NV_ESC_RM_DUP_OBJECT && c.h_client_src == 0xc2 && c.h_object_src == 0xe1 &&
	      c.h_object == 0xe9 && c.h_parent == 0xd0);
	/* Only from a live client of this sandbox. */
	const struct { bool ours, alive; enum gs_verdict want; } dups[] = {
		{ true, true, GS_VERDICT_ALLOW }, { false, true, GS_VERDICT_REFUSE },
		{ true, false, GS_VERDICT_REFUSE }, { false, false, GS_VERDICT_REFUSE },
	};
	for (size_t i = 0; i < sizeof(dups) / sizeof(dups[0]); i++) {
		u.src_client_ours = dups[i].ours;
		u.src_client_alive = dups[i].alive;
		struct gs_call_verdict v = gs_verdict_of_dup(&u, &c);
		CHECK(v.verdict == dups[i].want);
		CHECK(v.verdict == GS_VERDICT_ALLOW ||
		      (v.status == NV_ERR_INSUFFICIENT_PERMISSIONS && !v.errnum &&
		       same_text(v.reason, "import of an object from a client outside the sandbox")));
	}
	/* A video engine object of the sandbox: refused as the driver does
	 * (it is not copyable), so that it never changes client. */
	u.src_client_ours = u.src_client_alive = u.src_is_engine = true;
	struct gs_call_verdict ve = gs_verdict_of_dup(&u, &c);
	CHECK(ve.verdict == GS_VERDICT_REFUSE && ve.status == NV_ERR_INVALID_ARGUMENT &&
	      same_text(ve.reason, "a video engine object cannot be duplicated"));
	u.src_is_engine = false;

	struct nv_ioctl_register_fd rf = { .ctl_fd = 7 };
	gs_decode_register_fd(ABI, &rf, false, &c);
	CHECK(c.escape == NV_ESC_REGISTER_FD && c.ctl_fd == 7);
	u.on_control_file = false;
	CHECK(gs_verdict_of_register_fd(&u, &c).verdict == GS_VERDICT_ALLOW);
	u.on_control_file = true;
	struct gs_call_verdict v = gs_verdict_of_register_fd(&u, &c);
	CHECK(v.verdict == GS_VERDICT_REFUSE && v.errnum == EINVAL &&
	      same_text(v.reason, "a control file may not be linked to another"));
	/* It has no status field: even the no-tables refusal is an errno. */
	c.abi = NULL;
	u.on_control_file = false;
	v = gs_verdict_of_register_fd(&u, &c);
	CHECK(v.verdict == GS_VERDICT_REFUSE && v.errnum == EINVAL);
}

/* --gpus in the listings: the supervisor's map (gpuId -> minor) and the
 * visible set decide; an id not in the map is hidden. */
static void check_listings(void)
{
	const struct gs_gpu_entry map[] = { { 0x100, 0 }, { 0x200, 1 }, { 0x300, 2 } };
	struct gs_quota q;
	uint32_t ids[NV0000_CTRL_GPU_MAX_IDS], flags[NV0000_CTRL_GPU_MAX_IDS];

	gs_quota_init(&q);
	CHECK(gs_gpu_id_visible(&q, map, 3, 0x100) && gs_gpu_id_visible(&q, map, 3, 0x999));
	q.visible_set = true;
	q.visible = 1u << 1 | 1u << 2;
	CHECK(!gs_gpu_id_visible(&q, map, 3, 0x100) && gs_gpu_id_visible(&q, map, 3, 0x200) &&
	      !gs_gpu_id_visible(&q, map, 3, 0x999));
	for (unsigned i = 0; i < NV0000_CTRL_GPU_MAX_IDS; i++) {
		ids[i] = NV0000_CTRL_GPU_INVALID_ID;
		flags[i] = 0;
	}
	ids[0] = 0x100, flags[0] = 0xa;
	ids[1] = 0x999, flags[1] = 0xb;
	ids[2] = 0x300, flags[2] = 0xc;
	ids[3] = 0x200, flags[3] = 0xd;
	gs_filter_gpu_ids(&q, map, 3, ids, flags);
	CHECK(ids[0] == 0x300 && flags[0] == 0xc && ids[1] == 0x200 && flags[1] == 0xd);
	CHECK(ids[2] == NV0000_CTRL_GPU_INVALID_ID && flags[2] == 0 &&
	      ids[NV0000_CTRL_GPU_MAX_IDS - 1] == NV0000_CTRL_GPU_INVALID_ID);
	struct nv_card_info hidden = { .valid = 1, .minor_number = 0 };
	struct nv_card_info shown = { .valid = 1, .minor_number = 2 };
	struct nv_card_info empty = { .valid = 0, .minor_number = 0 };
	CHECK(!gs_card_visible(&q, &hidden) && gs_card_visible(&q, &shown) && gs_card_visible(&q, &empty));
}

static void check_decode(void)
{
	struct nvos64 top = { .h_root = 0xc1, .h_object_parent = 0xd0, .h_object_new = 0xe0,
	                      .h_class = NV01_MEMORY_LOCAL_USER, .p_alloc_parms = 0x1000,
	                      .p_rights_requested = 0x2000 };
	struct nv_memory_allocation_params mp = { .size = 3 * MIB };
	struct gs_rm_call c;

	CHECK(gs_decode_alloc_top(ABI, &top, sizeof(top), false, &c) == 0);
	CHECK(c.kind == RM_CLASS_VIDMEM && c.class_known && c.nvos64 && c.has_params &&
	      c.has_rights && c.params_size == sizeof(mp) && !c.finn_serialized);
	CHECK(c.h_client == 0xc1 && c.h_parent == 0xd0 && c.h_object == 0xe0);
	gs_decode_alloc_params(&c, &mp, sizeof(mp), true);
	CHECK(c.params_copied && c.rights_copied && c.has_size && c.size == 3 * MIB);
	gs_decode_alloc_params(&c, NULL, 0, false);
	CHECK(!c.params_copied && !c.rights_copied);

	top.flags = NVOS64_FLAGS_FINN_SERIALIZED;
	CHECK(gs_decode_alloc_top(ABI, &top, sizeof(top), false, &c) == 0 && c.finn_serialized);

	/* A client is continued and a process-bound class refused: nothing
	 * of theirs is copied. */
	top.flags = 0;
	top.h_class = NV01_ROOT_CLIENT;
	CHECK(gs_decode_alloc_top(ABI, &top, sizeof(top), true, &c) == 0 && c.creates_client &&
	      c.via_xfer && c.params_size == 0);
	top.h_class = NV01_MEMORY_SYSTEM_OS_DESCRIPTOR;
	CHECK(gs_decode_alloc_top(ABI, &top, sizeof(top), false, &c) == 0 &&
	      c.kind == RM_CLASS_PROCESS_BOUND && c.params_size == 0);

	/* NVOS21 has no rights and no flags; a device's params name it. */
	struct nvos21 t21 = { .h_root = 1, .h_class = NV01_DEVICE_0, .p_alloc_parms = 0x1000 };
	struct nv0080_alloc_params dp = { .device_id = 3 };
	CHECK(gs_decode_alloc_top(ABI, &t21, sizeof(t21), false, &c) == 0 && !c.nvos64 &&
	      !c.has_rights && c.kind == RM_CLASS_DEVICE);
	gs_decode_alloc_params(&c, &dp, c.params_size, false);
	CHECK(c.device_instance == 3 && c.rights_copied);
	CHECK(gs_decode_alloc_top(ABI, &t21, 7, false, &c) < 0);

	/* VID_HEAP_CONTROL ALLOC_SIZE: video memory, and EGM charged like it
	 * whatever the driver makes of the bit (issue #17 item 7); system
	 * memory and virtual reservations are not charged. */
	struct nvos32 vh = { .h_root = 0xc1, .h_object_parent = 0xd0,
	                     .function = NVOS32_FUNCTION_ALLOC_SIZE };
	vh.data.alloc_size.size = 5 * MIB;
	vh.data.alloc_size.h_memory = 0xe1;
	gs_decode_vid_heap(ABI, &vh, false, &c);
	CHECK(c.escape == NV_ESC_RM_VID_HEAP_CONTROL && c.kind == RM_CLASS_VIDMEM &&
	      c.h_class == NV01_MEMORY_LOCAL_USER && c.has_size && c.size == 5 * MIB &&
	      c.h_object == 0xe1 && c.params_copied && c.rights_copied);
	vh.data.alloc_size.attr2 = NVOS32_ATTR2_USE_EGM;
	gs_decode_vid_heap(ABI, &vh, false, &c);
	CHECK(c.kind == RM_CLASS_VIDMEM && c.h_class == NV01_MEMORY_LOCAL_USER);
	vh.data.alloc_size.attr2 = 0;
	vh.data.alloc_size.attr = 1u << NVOS32_ATTR_LOCATION_SHIFT;
	gs_decode_vid_heap(ABI, &vh, false, &c);
	CHECK(c.kind == RM_CLASS_SYSMEM && c.h_class == NV01_MEMORY_SYSTEM);
	vh.data.alloc_size.flags = NVOS32_ALLOC_FLAGS_VIRTUAL;
	gs_decode_vid_heap(ABI, &vh, false, &c);
	CHECK(c.kind == RM_CLASS_SYSMEM);
	vh.function = NVOS32_FUNCTION_FREE;
	vh.data.free.h_memory = 0xe2;
	gs_decode_vid_heap(ABI, &vh, false, &c);
	CHECK(c.function == NVOS32_FUNCTION_FREE && c.h_object == 0xe2 && !c.has_size);

	/* RM_CONTROL: the command's facts come from the ABI table. */
	struct nvos54 ct = { .h_client = 0xc1, .h_object = 0xd0, .cmd = CMD_FB_INFO_V2,
	                     .params = 0x1000, .params_size = 1028 };
	CHECK(gs_decode_control(ABI, &ct, false, &c) == rm_ctrl_lookup(ABI, CMD_FB_INFO_V2));
	CHECK(c.escape == NV_ESC_RM_CONTROL && c.cmd == CMD_FB_INFO_V2 && c.has_params &&
	      c.params_size == 1028 && !c.gss_legacy && !c.finn_serialized &&
	      c.unrelocatable == rm_ctrl_has_unrelocatable_pointers(ABI, CMD_FB_INFO_V2));
	CHECK(!c.params_size_wrong);
	/* A control the supervisor reads or rewrites must have the running
	 * branch's size: FB_GET_INFO_V2 is 436 bytes on 535, 1028 on 580. */
	const struct gs_rm_abi *v535 = gs_rm_abi_by_branch("535");
	ct.params_size = 436;
	(void)gs_decode_control(ABI, &ct, false, &c);
	CHECK(c.params_size_wrong);
	(void)gs_decode_control(v535, &ct, false, &c);
	CHECK(!c.params_size_wrong);
	ct.params_size = 1028;
	(void)gs_decode_control(v535, &ct, false, &c);
	CHECK(c.params_size_wrong);
	/* A control it does not read keeps the driver's own check. */
	struct nvos54 other = { .h_client = 0xc1, .h_object = 0xd0, .cmd = NV2080_CTRL_CMD_GR_GET_INFO_V2,
	                        .params = 0x1000, .params_size = 7 };
	(void)gs_decode_control(v535, &other, false, &c);
	CHECK(!c.params_size_wrong);
	ct.flags = NVOS54_FLAGS_FINN_SERIALIZED;
	ct.cmd |= NV_CTRL_GSS_LEGACY_MASK;
	(void)gs_decode_control(ABI, &ct, true, &c);
	CHECK(c.finn_serialized && c.gss_legacy && c.via_xfer);

	/* GPFIFO_SCHEDULE's params: enable is the first byte, on either
	 * object; nothing else schedules. */
	struct nvos54 sched = { .h_client = 0xc1, .h_object = 0xd0,
	                        .cmd = NVA06F_CTRL_CMD_GPFIFO_SCHEDULE, .params = 0x1000,
	                        .params_size = 3 };
	struct nva06c_gpfifo_schedule_params sp = { .enable = 1 };
	(void)gs_decode_control(ABI, &sched, false, &c);
	gs_decode_control_params(&c, &sp, sizeof(sp));
	CHECK(c.schedules);
	gs_decode_control_params(&c, NULL, 0);
	CHECK(!c.schedules);
	sp.enable = 0;
	gs_decode_control_params(&c, &sp, sizeof(sp));
	CHECK(!c.schedules);
	sp.enable = 1;
	(void)gs_decode_control(ABI, &ct, false, &c);
	gs_decode_control_params(&c, &sp, sizeof(sp));
	CHECK(!c.schedules);
}

/* A group admits only members the running branch has; an explicit entry
 * names the number and still allows it. */
static void check_branch_members(void)
{
	const struct gs_rm_abi *v570 = gs_rm_abi_by_branch("570"), *v580 = gs_rm_abi_by_branch("580");
	const uint32_t reused = NV2080_CTRL_CMD_FB_QUERY_DRAM_ENCRYPTION_INFOROM_SUPPORT;
	struct gs_rules rules;

	rules_of(RULES_ALL, &rules);
	CHECK(gs_rules_control(v580, &rules, reused).allowed);
	struct gs_rule_verdict v = gs_rules_control(v570, &rules, reused);
	CHECK(!v.allowed && v.status == NV_ERR_NOT_SUPPORTED &&
	      same_text(v.reason, "control unknown to gpusandbox"));
	/* Blackwell's channel class is not on 535: refused as unknown. */
	v = gs_rules_class(gs_rm_abi_by_branch("535"), &rules, BLACKWELL_CHANNEL_GPFIFO_A);
	CHECK(!v.allowed && v.status == NV_ERR_INVALID_CLASS &&
	      same_text(v.reason, "class unknown to gpusandbox"));
	CHECK(gs_rules_class(v570, &rules, BLACKWELL_CHANNEL_GPFIFO_A).allowed);
	rules.groups = 0;
	rules.controls[rules.n_controls++] = reused;
	CHECK(gs_rules_control(v570, &rules, reused).allowed);
}

/* A call without driver tables is refused, whatever it is: the verdict
 * cannot know the class's group or engine, so it fails closed. */
static void check_no_tables(void)
{
	struct gs_rules rules;
	struct gs_quota q;
	struct gs_usage u = { .gpu = LEDGER_NO_GPU };

	rules_of(rows[0].rules, &rules);
	limits_of(&rows[0].limits, &q);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct gs_rm_call call = rows[i].call;
		call.abi = NULL;
		CHECK(gs_verdict_of(&rules, &q, &rows[i].usage, &call).verdict == GS_VERDICT_REFUSE);
	}
	for (size_t i = 0; i < sizeof(control_rows) / sizeof(control_rows[0]); i++) {
		struct gs_rm_call call = control_rows[i].call;
		call.abi = NULL;
		CHECK(gs_verdict_of_control(&rules, &u, &call).verdict == GS_VERDICT_REFUSE);
	}
}

/* Issue #32's bounds: a client on a new control file past the sandbox's
 * bound of files, and any call that makes an object at its bound of
 * objects (a dup too, through gs_verdict_object_clause), are denied the
 * way the driver refuses an exhausted handle space; one under passes. */
static void check_tenant_bounds(void)
{
	static const struct gs_rm_call client = CLIENT, vidmem = VIDMEM(MIB), channel = CHANNEL,
	                               heap = VIDHEAP_VIDMEM(MIB);
	struct gs_rm_call call;
	struct gs_rules rules;
	struct gs_quota q;
	struct gs_call_verdict v;

	rules_of(RULES_DEFAULT, &rules);
	gs_quota_init(&q);
	q.objects = 3;
	struct gs_usage full_files = { .on_control_file = true, .files_full = true, .gpu = LEDGER_NO_GPU };
	decoded(&call, &client);
	v = gs_verdict_of(&rules, &q, &full_files, &call);
	CHECK(v.verdict == GS_VERDICT_DENY && v.status == NV_ERR_INSUFFICIENT_RESOURCES &&
	      same_text(v.reason, "control file limit reached (policy key files)"));
	const struct gs_rm_call *makers[] = { &client, &vidmem, &channel, &heap };
	for (size_t i = 0; i < sizeof(makers) / sizeof(makers[0]); i++) {
		struct gs_usage at = { .on_control_file = true, .file_known = true, .client_bound = true,
		                       .gpu = 0, .objects = 3 };
		decoded(&call, makers[i]);
		v = gs_verdict_of(&rules, &q, &at, &call);
		CHECK(v.verdict == GS_VERDICT_DENY && v.status == NV_ERR_INSUFFICIENT_RESOURCES &&
		      same_text(v.reason, "object limit reached (policy key objects)"));
		at.objects = 2;
		v = gs_verdict_of(&rules, &q, &at, &call);
		CHECK(v.verdict == GS_VERDICT_ALLOW || v.verdict == GS_VERDICT_CONTINUE);
	}
	struct gs_usage dup_at = { .objects = 3, .gpu = LEDGER_NO_GPU };
	v = gs_verdict_object_clause((struct gs_call_verdict){ .verdict = GS_VERDICT_ALLOW }, &q, &dup_at);
	CHECK(v.verdict == GS_VERDICT_DENY && v.status == NV_ERR_INSUFFICIENT_RESOURCES);
	q.objects = GS_COUNT_UNLIMITED;
	dup_at.objects = UINT32_MAX - 1;
	v = gs_verdict_object_clause((struct gs_call_verdict){ .verdict = GS_VERDICT_ALLOW }, &q, &dup_at);
	CHECK(v.verdict == GS_VERDICT_ALLOW);
}

int main(void)
{
	check_tenant_bounds();
	check_no_tables();
	check_uvm_rows();
	check_branch_members();
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		check_row(&rows[i]);
		check_call_only(&rows[i]);
	}
	for (size_t i = 0; i < sizeof(control_rows) / sizeof(control_rows[0]); i++)
		check_control_row(&control_rows[i]);
	for (size_t i = 0; i < sizeof(schedule_rows) / sizeof(schedule_rows[0]); i++)
		check_schedule_row(&schedule_rows[i]);
	for (size_t i = 0; i < sizeof(escape_rows) / sizeof(escape_rows[0]); i++)
		check_escape_row(&escape_rows[i]);
	check_p2p_rows();
	check_handle_calls();
	check_listings();
	check_decode();
	check_decode_p2p();
	check_fd_export();
	sharing_add_counts(&check_passed, &check_failed);
	return check_summary();
}
