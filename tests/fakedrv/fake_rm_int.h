/* SPDX-License-Identifier: MIT */
/*
 * fake_rm_int.h - the fake RM's internal model, shared by fake_rm.c (objects,
 * allocation, free, dup, dispatch) and fake_ctrl.c (RM_CONTROL, stats).
 * Everything here is used with fake_st.lock held.
 */
#ifndef GPUSANDBOX_FAKE_RM_INT_H
#define GPUSANDBOX_FAKE_RM_INT_H

/* The RM gpuId of fake GPU g (not equal to its minor, on purpose). */
#define FAKE_GPU_ID(g) (0x100u * ((unsigned)(g) + 1u))
/* Its UUID: FAKE_GPU_UUID_FMT (fake_rm.h). */

#include <pthread.h>

#include "fake_rm.h"
#include "nvuvm_abi.h"
#include "rm_tables.h"

enum obj_kind {
	K_OTHER = 0,
	K_DEVICE,
	K_SUBDEVICE,
	K_VIDMEM,
	K_SYSMEM,
	K_VIRTUAL,
	K_CHANNEL_GROUP,
	K_CHANNEL,
	K_ENGINE,   /* a video engine object (NVDEC, NVENC, NVJPG, OFA) */
	K_SEMSURF,  /* a semaphore surface (fake_semsurf.c) */
};
/* The memory objects one semaphore surface keeps (fake_semsurf.c). */
#define FAKE_SEMSURF_KEPT 2u

/* Video engines the fake counts, for the policy's video.* caps. */
enum fake_engine { FE_NVDEC, FE_NVENC, FE_NVJPG, FE_OFA, FE_N };
_Static_assert(FE_N == FAKE_ENGINE_KINDS, "fake_config.engines has one per kind");
/* The most instances of each kind a GPU's list can name (fake_engines.c). */
extern const unsigned fake_engine_max[FE_N];
/* GET_ENGINES_V2 on a subdevice of gpu, params our copy (fake_engines.c). */
nv_status_t fake_engines_control(int gpu, const struct nvos54 *ctl, void *params);

/* The underlying object. RM_DUP_OBJECT makes a second handle on the same
 * one, so the resources it holds go back only when refs reaches zero. */
struct res {
	unsigned      refs;
	enum obj_kind kind;
	int           gpu;       /* -1: not tied to a GPU */
	uint64_t      bytes;     /* rounded size of memory objects */
	bool          disabled;  /* FIFO_DISABLE_CHANNELS state of a channel */
	bool          scheduled; /* GPFIFO_SCHEDULE state of a channel group */
	int           engine;    /* enum fake_engine of a K_ENGINE */
	bool          own_group; /* a channel outside any group: RM made it one */
	/* A channel's channel group, on which the channel holds a reference:
	 * a channel belongs to its TSG for life (kchannelConstruct keeps
	 * pKernelChannelGroupApi, kernel_channel.c, 580.95.05), and UVM's
	 * registration finds the TSG it dups from the channel alone, whatever
	 * handle names the channel (fake_uvm_chan.c). */
	struct res   *group;
	/* A lone channel's channel group, which RM makes for it under the
	 * channel's device with a handle of its own (fake_chgrp.c): the
	 * channel holds a reference on it. rm_internal marks that group. */
	struct res   *internal_group;
	bool          rm_internal;
	/* A semaphore surface's memory, dup'ed into the driver's own client
	 * for the surface's life (fake_semsurf.c): a reference on each. */
	struct res   *kept[FAKE_SEMSURF_KEPT];
	unsigned      seen;      /* stats pass that counted it last */
};

/* An RsResourceRef's share policies (fake_share.c): none of its own
 * until an RM_SHARE edits them; until then, the nearest edited ancestor's
 * apply, or the driver's default. */
#define FAKE_SHARE_MAX 8u
struct share_policy {
	uint16_t    type;
	nv_handle_t target;
	uint32_t    mask;
};
struct share_list {
	bool                modified;
	uint8_t             n;
	struct share_policy p[FAKE_SHARE_MAX];
};

struct obj {
	nv_handle_t h;
	nv_handle_t parent;  /* the client handle for top-level objects */
	uint32_t    cls;
	bool        dup;     /* made by RM_DUP_OBJECT */
	bool        doomed;  /* marked during a subtree free */
	struct res *res;
	struct share_list share;  /* of this handle, not of the memory behind it */
};

/* A client's share of a GPU's busy time (fake_busy.c): while several
 * clients can run, the GPU time-slices between them, each getting an
 * equal part, as the hardware scheduler does between runnable groups. */
struct client_busy {
	bool     running;   /* a channel of it could run at the last refresh */
	uint64_t tail_to;   /* no longer runnable: its work drains until then */
	uint64_t busy_ns;   /* its part of the GPU's busy time so far */
};

struct client {
	nv_handle_t h;
	uint64_t    file;    /* the open file it is bound to */
	pid_t       tgid;    /* creator, for GPU_GET_PID_INFO and dup policy */
	uid_t       euid;    /* creator's, with tgid its security token */
	uint32_t    next_handle;
	struct obj *objs;
	size_t      n, cap;
	struct client_busy busy[FAKE_MAX_GPUS];
	struct share_list share;  /* the client object's own (fake_share.c) */
};

/* Busy-time model (fake_busy.c). */
#define FAKE_SAMPLE_MS 100u
/* On the test's clock (--clock) the first sample starts this long after
 * the first refresh. RM's sampling runs on a timer of its own, at a phase
 * no client's calls set; here the first refresh comes at one of the
 * supervisor's wake-ups, which on the test's clock lie on a lattice of
 * its 50 ms polls (IDLE_POLL_MS, compute_share.c), so every sample would
 * close at the very instant a poll reads it, where no sample can lie
 * inside a window by the idle rule's guard (tests/sm/multi.sh guar-idle:
 * never any evidence). Half a poll away, samples are read 25 ms old. */
#define FAKE_SAMPLE_PHASE_MS 25u
#define FAKE_SAMPLE_PIDS 8u
struct fake_sample {
	uint64_t ts;
	uint32_t util;   /* 0.01 % */
	uint32_t pid;
};
struct busy_model {
	bool     runnable;
	pid_t    pid;             /* creator of the client last seen runnable */
	uint64_t acc_ns;          /* busy time folded in so far */
	uint64_t run_since;       /* runnable: since when */
	uint64_t tail_from, tail_to; /* not runnable: work still draining */
	uint64_t slot_start, slot_busy;
	struct fake_sample ring[NV2080_CTRL_PERF_GPUMON_SAMPLE_COUNT_PERFMON_UTIL];
	unsigned tracker;
	/* The processes that could run at the last refresh: a sample names
	 * one of them in turn (time-slicing), RM naming the one on the
	 * engine when it takes the sample. */
	pid_t    pids[FAKE_SAMPLE_PIDS];
	unsigned npids;
	uint64_t samples_taken;
	uint64_t shares_at;       /* per-client shares integrated up to here */
	uint64_t overlap_ns;      /* time two or more clients had channels enabled at once */
};

struct gpu_acct {
	uint64_t total, used, peak;
	unsigned ch_live, ch_peak, grp_live, grp_peak;
	unsigned eng_live[FE_N], eng_peak[FE_N];
	uint64_t next_offset;
	/* FIFO_DISABLE_CHANNELS calls, and channels destroyed while off. */
	uint64_t disable_calls, enable_calls, freed_while_disabled;
	struct busy_model busy;
};

struct fake_state {
	pthread_mutex_t  lock;
	struct fake_config cfg;
	/* The RM tables of the branch the fake plays (--driver-version): the
	 * same per-version data gpusandbox uses (include/nvrm/v<branch>/), so
	 * a class or control is absent, and a checked control has its size,
	 * as on that branch's driver. */
	const struct gs_rm_abi *abi;
	struct gpu_acct  gpu[FAKE_MAX_GPUS];
	struct client  **clients;
	size_t           nclients, cap;
	size_t           clients_peak;  /* most clients live at once */
	uint32_t         next_client;
	uint32_t         next_cid;
	uint64_t         allocs_ok, allocs_failed, frees, ioctls, uvm_ioctls, controls;
	/* --slow-control: late replies pending, and ioctls served while one
	 * was (the fake's own account of calls that overlapped). */
	uint64_t         late_pending, served_while_late;
	uint64_t         files_open, file_releases;
	uint64_t         fd_closes;    /* --count-closes */
	/* --gpu-node-check (fake_nodes.c) */
	uint64_t         device_node_grants, device_node_refusals, device_unentitled_grants;
	uint64_t         dmabuf_held;  /* memory references taken by dma-bufs */
	/* Video memory dup'ed under a device of another GPU: RM allows it
	 * outside MIG (vidmemCheckCopyPermissions, video_mem.c, 580.95.05)
	 * and refuses it across MIG instances; the fake counts it. */
	uint64_t         dups_cross_gpu;
	uint64_t         token_shares;   /* RM_SHAREs that granted an OS_SECURITY_TOKEN dup */
	uint64_t         dups_made;      /* RM_DUP_OBJECTs the fake made */
	/* Alloc params the driver read past the 580 size of their class (a
	 * branch whose struct grew: NV50_P2P is 88 bytes on 590+, 72 on 580),
	 * and how many of those tails held a non-zero byte: bytes a
	 * supervisor with 580's tables never copied. */
	uint64_t         grown_tail_reads, grown_tail_nonzero;
	/* P2P registration controls performed (fake_p2p.c), by outcome. */
	uint64_t         p2p_registered, p2p_register_failed;
	uint64_t         p2p_unregistered, p2p_unregister_failed;
	uint64_t         p2p_objects_made; /* NV50_THIRD_PARTY_P2P objects the fake made */
	/* UVM_MAP_EXTERNAL_ALLOCATION calls that succeeded (fake_uvm.c). */
	uint64_t         uvm_maps;
	/* UVM_REGISTER_CHANNEL calls that succeeded (fake_uvm_chan.c). */
	uint64_t         uvm_channel_registrations;
	/* ...of them, made by a process other than the client's creator
	 * (a supervisor's, under --uvm-map as-user: its euid let in). */
	uint64_t         uvm_channel_registrations_by_other;
	/* Memory objects live semaphore surfaces keep (fake_semsurf.c). */
	uint64_t         semsurf_kept;
	/* Objects exported to and imported from control files, and export
	 * files found released (fake_export.c). */
	uint64_t         exports_made, imports_made, export_files_released;
	/* Setters nvidia-smi sends as an administrator, performed
	 * (fake_smi.c): the fake's account of whether one got through. */
	uint64_t         compute_mode_sets, diag_config_writes;
};
extern struct fake_state fake_st;


/* fake_smi.c: nvidia-smi's classes and queries beyond the memory and
 * process reports, as on an H200 (no display engine). */
nv_status_t fake_smi_alloc_check(const struct client *c, nv_handle_t h_parent, enum obj_kind parent_kind,
                                 uint32_t cls);
bool        fake_smi_models(uint32_t cmd);
nv_status_t fake_smi_control(const struct obj *o, uint32_t cmd, void *params, uint32_t size, bool *dirty);

/* fake_semsurf.c: the checks and dups of semsurfConstruct_IMPL; on
 * success kept[] holds a reference on each memory object the surface
 * keeps. fake_semsurf_release drops them (the last copy's destructor). */
nv_status_t fake_semsurf_construct(struct client *c, enum obj_kind parent_kind, const void *params,
                                   struct res *kept[FAKE_SEMSURF_KEPT]);
void        fake_semsurf_release(struct res *r);

/* fake_busy.c */
uint64_t fake_now_ns(void);
/* The GPU's PTIMER (ns) at a CLOCK_MONOTONIC instant: samples and
 * TIMER_GET_TIME. */
uint64_t fake_ptimer_ns(uint64_t mono);
/* Re-evaluates which GPUs can run work; call after any change. */
void     fake_busy_refresh(void);
uint64_t fake_busy_ms(unsigned gpu);
/* A client's part of the GPU's busy time (time-sliced), in ms. */
uint64_t fake_client_busy_ms(const struct client *c, unsigned gpu);
/* Fills UTIL_SAMPLES_V2 params (the played branch's layout, facts.def). */
void     fake_busy_samples(unsigned gpu, uint8_t *p);

/* fake_rm.c */
/* Does the played branch lack this class or control that another branch
 * has? The driver then answers INVALID_CLASS / NOT_SUPPORTED. */
bool     fake_class_absent(uint32_t cls);
bool     fake_ctrl_absent(uint32_t cmd);
/* The played branch's params size of a control the fake checks. */
uint32_t fake_ctrl_size(uint32_t cmd);
/* Does VID_HEAP_CONTROL honour NVOS32_ATTR2_USE_EGM on the played branch? */
bool     fake_vidheap_honours_egm(void);
/* The process (tgid) of the thread FUSE reports. */
pid_t    fake_tgid_of(pid_t tid);
/* Drop one reference on an underlying object; the last one releases what
 * it holds (video memory, channels...). */
void     fake_res_put(struct res *r);
struct client *fake_find_client(nv_handle_t h);
struct obj *fake_find_obj(struct client *c, nv_handle_t h);
/* A free slot for one more object of c (NULL: no memory), and a handle
 * as RM generates it (clientGenResourceHandle). */
struct obj *fake_add_obj(struct client *c);
nv_handle_t fake_pick_handle(struct client *c);

/* RM's own channel group of a lone channel (fake_chgrp.c). */
nv_status_t fake_chgrp_make_internal(struct client *c, struct res *channel, nv_handle_t h_device);
/* Is o freed with a handle being freed (the lone channel and its group go
 * together, whichever is freed)? */
bool        fake_chgrp_tied_to_doomed(const struct client *c, const struct obj *o);
/* Scheduling group g turns on its channels (by parent, or RM's group's
 * lone channel). */
void        fake_chgrp_enable_channels(struct client *c, nv_handle_t h_group, const struct res *g);
nv_status_t fake_get_client(const struct fake_caller *who, nv_handle_t h, struct client **out);
/* --gpu-node-check: may the caller make a device on GPU gpu (fake_nodes.c)?
 * client_tgid: the process that made the client, for the stats. */
nv_status_t fake_check_gpu_node(const struct fake_caller *who, pid_t client_tgid, int gpu);
/* Does thread (or process) pid hold an open file of the fake's GPU node
 * nvidia<gpu>, by the file's identity (fake_nodes.c)? */
bool        fake_holds_gpu_node(pid_t pid, int gpu);

/* fake_share.c */
/* May a client of process tgid, named dst (0: a kernel client, as UVM's),
 * whose token (or, for a kernel client, whose calling thread's) is euid
 * and tgid,
 * dup so of src under src's share policies? */
bool fake_share_allows(struct client *src, const struct obj *so, pid_t tgid, uid_t euid, nv_handle_t dst);
bool fake_share_allows_dup(struct client *src, const struct obj *so, const struct client *dst);
/* Live CLIENT policies that grant a dup, in every list (stats). */
unsigned fake_share_client_policies(void);
/* The same, on objects other than clients / on client objects. */
unsigned fake_share_object_policies(void);
unsigned fake_share_client_object_policies(void);
/* Live OS_SECURITY_TOKEN policies that grant a dup, in every list. */
unsigned fake_share_token_policies(void);
nv_status_t fake_share_inherited(struct client *c, const struct rs_share_policy *pol);
int  fake_esc_share(const struct fake_caller *who, void *buf, size_t size);
int  fake_esc_export_dmabuf(const struct fake_caller *who, void *buf, size_t size);

/* fake_p2p.c */
bool        fake_p2p_is_registration(uint32_t cmd);
/* REGISTER_VIDMEM or UNREGISTER_VIDMEM on object o of client c. */
nv_status_t fake_p2p_control(struct client *c, struct obj *o, uint32_t cmd, const void *params,
                             uint32_t params_size);
/* r (a P2P object or memory) is gone: its registrations with it. */
void        fake_p2p_forget(const struct res *r);
/* Registrations held now. */
size_t      fake_p2p_live(void);

/* fake_uvm.c: mapping pieces held now (one per GPU, split pieces apart). */
size_t      fake_uvm_live(void);
/* UVM VA spaces that have GPU g registered (UVM_REGISTER_GPU), now and at
 * most at once. */
unsigned    fake_uvm_gpu_registered(unsigned g);
unsigned    fake_uvm_gpu_registered_peak(unsigned g);
/* fake_uvm_gpu.c: UVM_REGISTER_GPU, and the file's registrations gone. */
nv_status_t fake_uvm_gpu_register(pid_t caller, uint64_t file, struct uvm_register_gpu_params *p);
void        fake_uvm_gpu_release_file(uint64_t file);
/* The fake GPU a raw 16-byte UUID names, or -1 (fake_uvm_chan.c). */
int         fake_gpu_of_raw_uuid(const uint8_t *uuid);

/* fake_uvm_chan.c: UVM_REGISTER_CHANNEL / UVM_UNREGISTER_CHANNEL. */
bool        fake_uvm_chan_models(uint32_t cmd);
/* The params size of cmd on the played branch (branch as atoi'd). */
size_t      fake_uvm_chan_params_size(uint32_t cmd, int branch);
nv_status_t fake_uvm_chan_run(pid_t caller, uint64_t file, uint32_t cmd, void *params, int branch);
/* A registration in two steps, as UVM makes it: RM retains the channel
 * (its references taken), then, once UVM has its VA space lock for
 * writing, the registration is recorded (or, for a pair registered
 * already, the references dropped). Between the two, an unregister finds
 * nothing (--register-late-ms stretches that). */
struct fake_uvm_retained {
	uint64_t    file;
	nv_handle_t h_client, h_channel;
	struct res *channel, *group;
	bool        by_other;   /* the caller is not the client's creator process */
};
nv_status_t fake_uvm_chan_retain(pid_t caller, uint64_t file, const struct uvm_register_channel_params *p,
                                 struct fake_uvm_retained *out);
nv_status_t fake_uvm_chan_commit(const struct fake_uvm_retained *r);
/* The VA space of file is torn down: its registrations go. */
void        fake_uvm_chan_release_file(uint64_t file);
/* Registrations held now. */
size_t      fake_uvm_chan_live(void);

/* fake_rm.c: a new handle on r in dst under h_parent (NV_ERR_INVALID_OBJECT_PARENT
 * when dst has no such parent): *h, or one RM picks when *h is 0; and a
 * handle's subtree freed. */
nv_status_t fake_dup_res(struct client *dst, nv_handle_t h_parent, nv_handle_t *h, struct res *r, uint32_t cls);
void        fake_free_handle(struct client *c, nv_handle_t h);
/* fake_objects.c: a handle taken in c; an object's subtree (and what its
 * handles held) freed, or a whole client's; v rounded up to align (a power
 * of two). */
bool        fake_handle_in_use(struct client *c, nv_handle_t h);
void        fake_free_subtree(struct client *c, struct obj *root);
void        fake_free_client(struct client *c);
uint64_t    fake_round_up(uint64_t v, uint64_t align);
/* fake_nodes.c: is fd of thread tid one of the fake's control files? */
bool        fake_fd_is_ctl(pid_t tid, int fd);

/* fake_export.c: NV0000_CTRL_CMD_OS_UNIX_* export and import through fds. */
#define FAKE_EXPORT_FILES_MAX 64u
bool        fake_export_models(uint32_t cmd);
nv_status_t fake_export_control(const struct fake_caller *who, struct client *c, uint32_t cmd, void *params,
                                uint32_t size, bool *dirty);
/* Drops the exports of files released since (their memory with them). */
void        fake_export_sweep(void);
/* Control files holding exports now. */
unsigned    fake_export_live(void);

/* fake_ctrl.c */
int fake_esc_control(const struct fake_caller *who, void *buf, size_t size);

#endif /* GPUSANDBOX_FAKE_RM_INT_H */
