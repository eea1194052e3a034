/* SPDX-License-Identifier: MIT */
/*
 * verdict.h - the verdict stage: what to do with a decoded call, as a pure
 * function of the rules, the limits, a usage snapshot and the call record.
 * It writes nothing, reaps nothing, asks nothing of the driver: the
 * executor reconciles the ledger before it (explicitly, at most once more
 * when a verdict says a release could lift a refusal), and acts after it.
 */
#ifndef GPUSANDBOX_VERDICT_H
#define GPUSANDBOX_VERDICT_H

#include <stdbool.h>
#include <stdint.h>

#include "audit.h"
#include "call.h"
#include "uvm_call.h"
#include "driver.h"
#include "groups.h"
#include "quota.h"

/* The driver hands out video memory in 2 MiB granules for the allocations
 * CUDA makes (design.md 1.2). The quota pre-check rounds the request up to
 * that, so a call that passes cannot push the driver's usage past the quota
 * even for an instant; the post-check covers larger rounding. */
#define VIDMEM_GRANULE (2ull << 20)

/* What the ledger and the open file said, taken just before the verdict. */
struct gs_usage {
	/* The call's open file (a client is created only on a control file
	 * that has none). */
	bool     on_control_file;
	bool     file_known;        /* the ledger could identify the file */
	bool     file_has_client;
	/* A second client on the file can be made by its caller from a page
	 * of ours (exec_inject.c): x86-64, a runner that can hand the
	 * listener on, the filter's WAIT_KILLABLE_RECV. */
	bool     may_inject;
	/* The file is new and the sandbox knows its bound of control files
	 * already (gs_quota.files, LEDGER_FILES_FULL). */
	bool     files_full;
	/* RM objects the sandbox holds now (ledger_live_objects): a call
	 * that makes one is refused at gs_quota.objects. */
	uint32_t objects;
	/* Video memory: the client could be bound for a charge, the GPU the
	 * parent hangs under (LEDGER_NO_GPU if none) and its usage. */
	bool     client_bound;
	int      gpu;
	uint64_t mem_used;
	/* The live count of each quota kind the call counts against
	 * (gs_call_count_events), by enum gs_quota_kind; the others are not
	 * taken. The names are the same numbers. */
	union {
		uint32_t count[GS_QK_N];
		struct {
			uint32_t channels, channel_groups;
			/* GPFIFO_SCHEDULE: how many groups are scheduled. */
			uint32_t scheduled_groups;
		};
	};
	/* A video engine object: its group (its client, or for NVJPG its
	 * GPU) holds objects of the kind on that GPU that do not fill whole
	 * sessions, so it joins one and adds no session (exec_engines.c);
	 * count[] holds the sessions. */
	bool     engine_joins_session;
	/* A channel's parent is a channel group: otherwise RM makes one for
	 * the channel, which counts against --channel-groups. */
	bool     parent_is_group;
	/* RM_CONTROL: the driver accepted the client from this sandbox. */
	bool     client_seen;
	/* GPFIFO_SCHEDULE: its object is a group of the hardware's (a channel
	 * group, or a channel outside any, which RM put in a group of its
	 * own); whether that group is scheduled already (how many are: in
	 * count). */
	bool     target_is_group, target_scheduled;
	/* RM_DUP_OBJECT: the source client is one of this sandbox's, and the
	 * open file it lives on is still open (else the driver has freed it
	 * and its handle may name a foreign client). */
	bool     src_client_ours, src_client_alive;
	/* RM_DUP_OBJECT: the source is a video engine object of the sandbox. */
	bool     src_is_engine;
	/* REGISTER_VIDMEM / UNREGISTER_VIDMEM under --p2p-register answer:
	 * the control's object is an NV50_THIRD_PARTY_P2P the ledger holds
	 * under its client; that client lives on the very file the call came
	 * on (RM's client check, made by kcmp against its release watch); the
	 * memory the params name is video memory of that client on the P2P
	 * object's GPU, of memory_bytes. */
	bool     p2p_object, p2p_client_on_file, p2p_memory_vidmem;
	uint64_t p2p_memory_bytes;
};

/* The verdict. verdict is GS_VERDICT_ALLOW, _CONTINUE (the kernel runs the
 * call in the workload), _REFUSE (not allowed) or _DENY (over a quota);
 * a refusal or denial is answered with status, as the driver fails. */
struct gs_call_verdict {
	enum gs_verdict verdict;
	nv_status_t     status;
	const char     *reason;
	const char     *group;         /* the class's policy group, or NULL */
	/* Refused by the allowlist alone: --learn may admit the class. */
	bool            by_allowlist;
	/* A quota refusal that releasing closed files may lift. */
	bool            needs_reconcile;
	/* The counted resource the call was checked against, if any. */
	const char     *resource;
	uint64_t        count, limit;
	/* Video memory: bytes the pre-check charged (the request, rounded). */
	uint64_t        charge;
	/* A refusal answered with this errno rather than an RM status: the
	 * escapes the driver itself fails that way (REGISTER_FD, an escape
	 * it does not handle or of a size it does not take). */
	int             errnum;
	/* Allowed, and answered NV_OK by the supervisor without the driver
	 * (--p2p-register answer). */
	bool            answered;
	/* A client on a control file that has one: made by the caller itself
	 * from a page of ours (exec_inject.c), never continued. */
	bool            inject;
};

/* What a call adds one to (enum gs_count_event), and for a video engine
 * object which engine's: the quota kinds whose rows count on that are the
 * ones it is judged against (and whose counts take_usage takes). Pure. */
struct gs_count_events {
	unsigned       events;
	enum gs_engine engine;
};
struct gs_count_events gs_call_count_events(const struct gs_rm_call *call, const struct gs_usage *usage);
/* Does kind k count on these events? */
bool gs_kind_counts_on(enum gs_quota_kind k, struct gs_count_events ev);
/* Is kind k counted under these limits (GS_QK_COUNT_IF_CAPPED)? */
bool gs_kind_counted(const struct gs_quota *limits, enum gs_quota_kind k);


uint64_t gs_round_up(uint64_t v, uint64_t to);

/* Would charging bytes on top of used exceed quota q? Pure. */
bool gs_over_quota(uint64_t q, uint64_t used, uint64_t bytes);

/* The clauses that need only the call (checked before its params are
 * copied or the ledger is touched). */
struct gs_call_verdict gs_verdict_of_call(const struct gs_rules *rules,
                                          const struct gs_rm_call *call);

/* The verdict on an RM_CONTROL before its params are copied: the clauses
 * on the call and on whether its client was seen. The executor then
 * copies the params and relocates their lists, or refuses as the driver
 * would when they cannot be read. */
struct gs_call_verdict gs_verdict_of_control(const struct gs_rules *rules,
                                             const struct gs_usage *usage,
                                             const struct gs_rm_call *call);

/* The verdict on an RM_CONTROL once its params are copied and decoded
 * (gs_decode_control_params): --active-channel-groups. */
struct gs_call_verdict gs_verdict_of_control_params(const struct gs_quota *limits,
                                                    const struct gs_usage *usage,
                                                    const struct gs_rm_call *call);

/* --p2p-register answer, on a REGISTER_VIDMEM or UNREGISTER_VIDMEM that
 * passed gs_verdict_of_control and whose params were copied: answered
 * (answered set) when the usage and params prove everything the driver
 * checks before registering; otherwise allowed without answered: the
 * call is performed as under perform, and the driver's own error is the
 * workload's answer. Never a refusal: the policy's clauses are
 * gs_verdict_of_control's. */
struct gs_call_verdict gs_verdict_of_p2p_answer(const struct gs_usage *usage,
                                                const struct gs_rm_call *call);

/* An escape as trapped, or as XFER carries it (gs_decode_escape): refused
 * with -EINVAL, the driver's own answer, when gpusandbox does not know it,
 * the driver does not handle it or not at that size, or when XFER carries
 * one that cannot be performed by the supervisor (XFER again, or one that
 * must be continued: the inner number sits in memory the workload can
 * change). ALLOW: go on to the escape's own stages. */
struct gs_call_verdict gs_verdict_of_escape(const struct gs_rm_call *call);

/* RM_FREE, RM_SHARE: nothing to refuse but a call without tables. */
struct gs_call_verdict gs_verdict_of_handle_call(const struct gs_rm_call *call);

/* RM_DUP_OBJECT: only from a live client of this sandbox. */
struct gs_call_verdict gs_verdict_of_dup(const struct gs_usage *usage, const struct gs_rm_call *call);
/* v, unless the sandbox holds its bound of RM objects (usage->objects
 * against limits->objects): then denied, NV_ERR_INSUFFICIENT_RESOURCES.
 * gs_verdict_of asks it of every call that makes an object; the executor
 * of a dup, which makes one too. */
struct gs_call_verdict gs_verdict_object_clause(struct gs_call_verdict v, const struct gs_quota *limits,
                                               const struct gs_usage *usage);

/* REGISTER_FD: a control file may not be linked to another
 * (usage->on_control_file: the call's own file). */
/* What an OS_UNIX export or import control meets (exec_fdexport.c, from
 * the ledger, the sandbox's export files and one look at the driver). */
struct gs_fd_export_facts {
	bool fd_is_control;   /* params.fd names one of the driver's control files */
	bool file_ours;       /* an export file this sandbox made (fd_exports.h) */
	bool file_set_up;     /* the driver holds export state on it already */
	bool objects_charged; /* export: every handle named is video memory this sandbox is charged for */
	bool slots_ours;      /* import: every slot in range is empty or filled through us */
	/* GPUSANDBOX_TEST_FOREIGN_IMPORT: the baseline of tests/adv fd_export,
	 * an import from another sandbox's file let through uncharged. */
	bool foreign_test;
	/* Policy fd-import = foreign: such an import is allowed, and charged
	 * to the importer after the driver made it (exec_fdexport.c). */
	bool foreign_charged;
};
/* Within one sandbox an export pins what it exports and an import is one
 * more handle on that, so both are allowed and nothing is charged twice;
 * across sandboxes the memory would leave the exporter's account and
 * never enter the importer's: an import is refused unless the policy says
 * fd-import = foreign (then charged to the importer after the driver made
 * it), an export into another's file always (docs/security/fd-export.md). */
struct gs_call_verdict gs_verdict_of_fd_export(const struct gs_fd_export_facts *f, const struct gs_rm_call *call);

struct gs_call_verdict gs_verdict_of_register_fd(const struct gs_usage *usage,
                                                 const struct gs_rm_call *call);

/* --gpus in the listings: may the workload see this gpuId (the
 * supervisor's own map, read at start, says its minor; an id not in it is
 * hidden), this card (CARD_INFO's entry, by minor)? A list keeps its
 * visible ids in order, padded with NV0000_CTRL_GPU_INVALID_ID; flags
 * (may be NULL) move with their ids. Pure. */
/* UVM_MAP_EXTERNAL_ALLOCATION, made by the supervisor from its copy
 * (exec_uvm.c): what the ledger and the caller's fd table said of the
 * client and the memory it names, taken before the verdict. */
struct gs_uvm_facts {
	bool client_ours;      /* a live client of this sandbox */
	bool client_on_fd;     /* the caller's rmCtrlFd is that client's control file */
	bool memory_known;     /* the ledger holds (client, memory) */
	bool memory_mappable;  /* known, and video or system memory (or a dup of one) */
};
/* The map's verdict: UVM's own checks first, in its order (the range,
 * then the GPU count), then ours. */
struct gs_call_verdict gs_verdict_of_uvm(const struct gs_uvm_call *u, const struct gs_uvm_facts *f);

bool gs_gpu_id_visible(const struct gs_quota *limits, const struct gs_gpu_entry *map, unsigned n,
                       uint32_t gpu_id);
bool gs_card_visible(const struct gs_quota *limits, const struct nv_card_info *card);
void gs_filter_gpu_ids(const struct gs_quota *limits, const struct gs_gpu_entry *map, unsigned n,
                       uint32_t ids[NV0000_CTRL_GPU_MAX_IDS], uint32_t *flags);

/* The whole verdict on an RM_ALLOC or a VID_HEAP_CONTROL. */
struct gs_call_verdict gs_verdict_of(const struct gs_rules *rules, const struct gs_quota *limits,
                                     const struct gs_usage *usage, const struct gs_rm_call *call);

#endif
