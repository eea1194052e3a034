/* SPDX-License-Identifier: MIT */
/*
 * fake_rm.h - a fake NVIDIA Resource Manager for tests without a GPU.
 *
 * The model is deliberately small: handles, parents, a fixed amount of video
 * memory per GPU, finite channel pools, RM_FREE of whole subtrees and clients
 * bound to the open file that created them. It keeps its own account of what
 * it actually allocated so that quota tests can assert from the driver's side
 * rather than trusting the supervisor's word (design.md section 4).
 *
 * Everything here is declared by us from facts in shared/reference/rm-abi.md;
 * include/nvrm_abi.h and include/nvuvm_abi.h have the structs, this header
 * adds only what the fake needs beyond them.
 */
#ifndef GPUSANDBOX_FAKE_RM_H
#define GPUSANDBOX_FAKE_RM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "nvrm_abi.h"
#include "test_clock.h"

/* ---- limits of the fake ------------------------------------------------ */
#define FAKE_MAX_GPUS            2u     /* nvidia0, nvidia1 */
#define FAKE_DEFAULT_VIDMEM      (16ull << 30)
#define FAKE_DEFAULT_CHANNELS    64u
/* The version the fake answers CHECK_VERSION_STR with (--driver-version). */
#define FAKE_DEFAULT_DRIVER_VERSION "580.95.05"
/* Real RM rounds these allocations to the 2 MiB page granularity
 * (design.md 1.2), so the ledger must see rounded sizes too. */
#define FAKE_VIDMEM_ALIGN        (2ull << 20)
#define FAKE_KIB                 1024ull

/* Handles the fake picks itself. 0xc1d00000 mirrors what the real driver
 * hands out for clients (see traces/); 0xcaf00000 is RM's base for handles
 * it generates for objects. */
#define FAKE_CLIENT_HANDLE_BASE  0xc1d00000u
/* Fake GPU g's UUID, as RM prints them (ASCII, "GPU-" prefix); a test
 * outside the sandbox knows it as one knows nvidia-smi's list. */
#define FAKE_GPU_UUID_FMT "GPU-00000000-0000-0000-0000-%012u"
#define FAKE_OBJECT_HANDLE_BASE  0xcaf00000u

/* ---- status codes not in nvrm_abi.h ------------------------------------ */
#define NV_ERR_INVALID_ADDRESS   0x0000001Eu

/* ---- escapes: exact sizes the driver insists on (rm-abi.md 1.2) -------- */
#define NV_ESC_SIZE_NVOS21       32u
#define NV_ESC_SIZE_NVOS64       48u
#define NV_ESC_SIZE_NVOS00       16u
#define NV_ESC_SIZE_NVOS54       32u
#define NV_ESC_SIZE_NVOS05       20u
#define NV_ESC_SIZE_NVOS55       28u
#define NV_ESC_SIZE_NVOS32       184u
#define NV_ESC_SIZE_XFER         16u

/* ---- classes not named in nvrm_abi.h ----------------------------------- */
#define NV01_EVENT                    0x0005u
#define NV01_EVENT_KERNEL_CALLBACK    0x0078u
#define NV01_EVENT_OS_EVENT           0x0079u
#define NV01_EVENT_KERNEL_CALLBACK_EX 0x007eu
#define VOLTA_CHANNEL_GPFIFO_A        0xc36fu
#define TURING_CHANNEL_GPFIFO_A       0xc46fu
#define AMPERE_CHANNEL_GPFIFO_A       0xc56fu
#define HOPPER_CHANNEL_GPFIFO_A       0xc86fu
#define BLACKWELL_CHANNEL_GPFIFO_A    0xc96fu
#define BLACKWELL_CHANNEL_GPFIFO_B    0xca6fu

/* Nested alloc params sizes from the driver's class table (rm-abi.md 3). */
#define NV_MEMORY_ALLOCATION_PARAMS_SIZE   128u
#define NV0080_ALLOC_PARAMS_SIZE           56u
#define NV2080_ALLOC_PARAMS_SIZE           4u
#define NV_CHANNEL_GROUP_ALLOC_PARAMS_SIZE 20u
#define NV_CHANNEL_ALLOC_PARAMS_SIZE       368u
/* NV_CHANNEL_ALLOC_PARAMS.cid: the channel id RM returns. */
#define NV_CHANNEL_ALLOC_PARAMS_CID_OFF    132u
/* NV_CHANNEL_ALLOC_PARAMS.hPhysChannelGroup and internalFlags, after the
 * four 24-byte NV_MEMORY_DESC_PARAMS (alloc_channel.h, 580.95.05): RM
 * zeroes both before the params go back (kchannelConstruct_IMPL's
 * cleanup, kernel_channel.c), so its own group's handle is never told. */
#define NV_CHANNEL_ALLOC_PARAMS_PHYS_GROUP_OFF 240u
#define NV_CHANNEL_ALLOC_PARAMS_INTERNAL_LEN   8u

/* ---- controls ----------------------------------------------------------- */

/* FB_GET_INFO (V1, V2) and its indices: include/nvrm_abi.h. */

/* FIFO_DISABLE_CHANNELS and the utilization samples: include/nvrm_abi.h. */

/* GPFIFO_SCHEDULE: struct nva06c_gpfifo_schedule_params, include/nvrm_abi.h. */

/* GPU_GET_PID_INFO: list of per-pid queries. */
/* GET_PID_INFO and GET_PIDS: include/nvrm_abi.h. */

/* NVOS32 ALLOC_SIZE limit field (the @112 slot after offset). */
_Static_assert(offsetof(struct nvos32, data.alloc_size.limit) == 112, "NVOS32.AllocSize.limit");

/* nv-ioctl.h: the relaxed form of CHECK_VERSION_STR. */
#define FAKE_RM_API_VERSION_CMD_RELAXED 0x31u /* '1' */

/* ---- the fake's interface ---------------------------------------------- */

/* Video engine kinds (enum fake_engine, fake_rm_int.h). */
#define FAKE_ENGINE_KINDS 4u
/* An H200's: 7 NVDEC, no NVENC, 7 NVJPG, 1 OFA (fake_engines.c). */
#define FAKE_DEFAULT_ENGINES { 7u, 0u, 7u, 1u }

struct fake_config {
	uint64_t vidmem;    /* bytes per GPU */
	unsigned gpus;
	unsigned channels;  /* pool size per GPU, for channels and for groups */
	unsigned busy_lag_ms;        /* work drains this long after a disable */
	unsigned fail_disable_after; /* >0: later FIFO disables fail (fault injection) */
	char     driver_version[NV_RM_API_VERSION_STRING_LENGTH];
	/* RM numbers device instances (NV0080 deviceId) in the order GPUs
	 * were attached, lowest free slot first (gpumgrCreateDevice ->
	 * gpumgrAllocDeviceInstance, src/nvidia/src/kernel/gpu_mgr/gpu_mgr.c
	 * at 580.142), not by minor. false: GPU g is instance g (attached in
	 * minor order); true: GPU g is instance gpus-1-g (attached last
	 * first), so that instance and minor differ. */
	bool     reverse_instances;
	/* A driver without VID_HEAP_CONTROL's EGM bit (attr2 bit 24): 535
	 * never had it and 595 dropped it, so there an ALLOC_SIZE with the
	 * bit set is placed by its location alone, as video memory (issue
	 * #17 item 7). Without this the fake is 550-590, which honours it. */
	bool     no_egm;
	/* Samples stamped on CLOCK_MONOTONIC instead of PTIMER: a driver
	 * whose sample clock TIMER_GET_TIME does not read, so that the
	 * supervisor's mapping of it must fail and fall back (tests/sm). */
	bool     untimed_samples;
	/* The test's clock (include/test_clock.h, --clock), or NULL:
	 * CLOCK_MONOTONIC. With it the busy model counts time as the
	 * supervisor's --sm thread moves it under GPUSANDBOX_TEST_SM_CLOCK. */
	gs_test_clock *clock;
	unsigned alloc_errno;        /* >0: video memory RM_ALLOCs fail with this errno */
	/* >0: the first video memory RM_ALLOC takes this long (a large
	 * allocation scrubbing its pages), so that a test can signal its
	 * caller while the call is performed. */
	unsigned alloc_sleep_ms;
	/* >0: the first UVM_MAP_EXTERNAL_ALLOCATION takes this long (UVM
	 * mapping a large allocation), so that a test can stop the agent
	 * while it performs a map (tests/agent stalestop-runc). */
	unsigned map_sleep_ms;
	/* >0: the first UVM_REGISTER_CHANNEL retains the channel at once and
	 * records the registration (and answers) this many ms later, while
	 * other requests are served, as UVM does when its VA space lock or
	 * the mm's lock is held elsewhere between the two (a test knob). */
	unsigned register_late_ms;
	bool     handle_zero;        /* a handle the fake picks is 0 while 0 is free */
	/* Semaphore surfaces (fake_semsurf.c): a GPU with 32-bit semaphores
	 * (TU10x, TU11x, GA100: hMaxSubmittedMem taken), and a driver
	 * without the limit of their memory to sysmem (a test knob). */
	bool     semaphores_32bit;
	bool     semsurf_any_memory;
	/* Count every close(2) of a descriptor of the fake's device files
	 * (FUSE's FLUSH): a test knob, not driver behaviour. Off, the first
	 * FLUSH is refused and the kernel sends no more. */
	bool     count_closes;
	/* The driver's check that a device allocation's caller holds the
	 * GPU's node (fake_nodes.c): opt-in, as the tests that predate it
	 * make devices without opening a GPU node. */
	bool     gpu_node_check;
	/* The video engine instances of each fake GPU, by enum fake_engine
	 * (NVDEC, NVENC, NVJPG, OFA), as GET_ENGINES_V2 lists them
	 * (fake_engines.c); no_engine_list: that control fails. */
	unsigned engines[FAKE_ENGINE_KINDS];
	bool     no_engine_list;
};
/* --engines LIST ("nvdec=7,nvjpg=7" or "none") into cfg; -1 if malformed. */
int fake_parse_engines(const char *s, struct fake_config *cfg);

/* The device instance of GPU g, and the GPU of instance i (or -1). */
unsigned fake_instance_of_gpu(unsigned g);
int fake_gpu_of_instance(uint32_t i);

/* Who issues a call: the thread FUSE reports, and the open file it used. */
struct fake_caller {
	pid_t    pid;
	uint64_t file;     /* unique per open file description */
	bool     ctl;      /* nvidiactl: clients bind here, strict validation */
};

void fake_rm_init(const struct fake_config *cfg);

/* The effective uid of the thread whose request this FUSE worker serves
 * now (the request's uid; 0 outside a request): with its tgid, the
 * caller's security token (fake_share.c). */
uid_t fake_req_euid(void);
void  fake_set_req_euid(uid_t euid);

/* Run one escape. buf holds the top-level argument (size bytes, in and out).
 * Returns 0 or a negative errno for escape-level failures; RM failures are
 * reported in the struct's status field, as the driver does. */
int fake_rm_ioctl(const struct fake_caller *who, uint32_t nr, void *buf, size_t size);

/* The last reference to an open file went away: free its clients. */
void fake_rm_release_file(uint64_t file);

/* Count of open device files, for the stats. */
void fake_rm_file_opened(void);
void fake_rm_file_closed(void);
/* One close(2) of a descriptor of a device file (--count-closes). */
void fake_rm_fd_closed(void);
void fake_rm_uvm_ioctl(void);

/* /dev/nvidia-uvm's external ranges and mappings (fake_uvm.c). The VA
 * space is the open file. */
/* Does the fake model UVM command cmd? Others return 0, untouched. */
bool fake_uvm_models(uint32_t cmd);
/* Run a modelled command: the params are read from and written back to
 * the caller's memory at arg; 0 (status in rmStatus) or -EFAULT. */
int  fake_uvm_ioctl(pid_t caller, uint64_t file, uint32_t cmd, uint64_t arg);
/* The file's last reference went away: its VA space is torn down. */
void fake_uvm_release_file(uint64_t file);
/* --slow-control: a late reply starts (+1) or is sent (-1); and an ioctl
 * arrived, counted in served_while_late if one is pending. */
void fake_rm_late_reply(int delta);
/* --register-late-ms: takes the first UVM_REGISTER_CHANNEL (params at
 * addr in pid) for a late answer: the channel is retained now, and a
 * thread of its own records the registration, writes rmStatus and calls
 * reply(ctx, 0) (or an errno) later. False when the call is to be served
 * as usual. */
typedef void (*fake_late_reply_fn)(void *ctx, int err);
bool fake_uvm_register_late(pid_t pid, uint64_t file, uint64_t addr, fake_late_reply_fn reply, void *ctx);
void fake_rm_note_ioctl_overlap(void);

/* Write a consistent "key value\n" snapshot; returns bytes (may truncate). */
size_t fake_rm_format_stats(char *out, size_t cap);

/* Caller memory access (process_vm_readv/writev); 0 or -errno. */
int fake_mem_read(pid_t pid, uint64_t addr, void *dst, size_t len);
int fake_mem_write(pid_t pid, uint64_t addr, const void *src, size_t len);

/* The fake's file system is mounted at real (a path without links,
 * resolved before the mount: resolving it after would ask the fake
 * itself): learn its device, which the node check compares (fake_nodes.c). */
void fake_nodes_learn_mount(const char *real);
/* The inode number of nvidia<gpu> on the fake's file system (fake_fuse.c). */
unsigned long fake_gpu_node_ino(int gpu);
/* The inode number of nvidiactl there. */
unsigned long fake_ctl_node_ino(void);

#endif /* GPUSANDBOX_FAKE_RM_H */
