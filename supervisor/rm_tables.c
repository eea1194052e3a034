/* SPDX-License-Identifier: MIT */
/*
 * rm_tables.c - facts about RM classes, controls and escapes (driver 580).
 *
 * Everything here is our own data: class ids, control numbers, names, sizes
 * and offsets are facts read from open-gpu-kernel-modules at tag 580.142
 * (commit 1a5075f8) by compiling the SDK headers with gcc/clang on x86_64
 * (sizeof/offsetof) and by reading the driver's own tables. No NVIDIA code
 * or header text is reproduced. docs/rm-tables.md says where each fact came
 * from and what could not be determined.
 *
 * All three tables are sorted by key and searched with bsearch(); the unit
 * test (tests/unit/test_rm_tables.c) checks order and uniqueness.
 */
#include <stdlib.h>

#include "nvrm_abi.h"
#include "rm_tables.h"

/* ------------------------------------------------------------------------ */
/* Classes                                                                  */
/* ------------------------------------------------------------------------ */

/*
 * One row per RS_ENTRY in src/nvidia/src/kernel/rmapi/resource_list.h at
 * 580.142 (209 classes, all of them, so that any class the driver accepts has
 * a known copy size). The size is what rmapiGetClassAllocParamSize() makes the
 * driver copy from pAllocParms: sizeof the class's alloc param struct, never
 * the caller's paramsSize. "required" is RS_REQUIRED: a NULL pAllocParms is
 * refused. For optional classes (RS_OPTIONAL) the driver copies the full size
 * when the pointer is non-NULL and nothing when it is NULL; for RS_NONE
 * classes it copies nothing (size 0).
 *
 * The kind drives the ledger: only VIDMEM is charged. NV_MEMORY_EXTENDED_USER
 * (0x42, EGM) is CPU-attached memory on Grace systems and is left OTHER on
 * purpose (rm-abi.md 5: GET_PID_INFO does not count it either); a policy that
 * wants to charge it must do so explicitly.
 *
 * Rows marked "priv alloc" need CAP_SYS_ADMIN in the caller (the supervisor
 * never has it while executing), "kernel alloc" ones are refused to any user
 * caller. Rows with "CALLING process" / "CALLER fd table" are process-bound:
 * the driver resolves something in the caller's address space or fd table,
 * so they must never be executed by the supervisor on the workload's behalf.
 */
#define C(cls_, name_, size_, req_, kind_) \
	{ (cls_), (name_), (size_), (req_), RM_CLASS_##kind_ }

static const struct rm_class_info class_table[] = {
	C(0x0000, "NV01_ROOT",                                 4, false, CLIENT),
	C(0x0001, "NV01_ROOT_NON_PRIV",                        4, false, CLIENT),
	C(0x0002, "NV01_CONTEXT_DMA",                         32, true , OTHER),
	C(0x0004, "NV01_TIMER",                                0, false, OTHER),
	C(0x0005, "NV01_EVENT",                               24, true , EVENT),
	C(0x000f, "FABRIC_MANAGER_SESSION",                   16, true , PROCESS_BOUND), /* capability fd from the CALLER fd table */
	C(0x0020, "NV0020_GPU_MANAGEMENT",                     4, false, OTHER),
	C(0x003e, "NV01_MEMORY_SYSTEM",                      128, true , SYSMEM),
	C(0x003f, "NV01_MEMORY_LOCAL_PRIVILEGED",              0, false, OTHER), /* no params */
	C(0x0040, "NV01_MEMORY_LOCAL_USER",                  128, true , VIDMEM),
	C(0x0041, "NV01_ROOT_CLIENT",                          4, false, CLIENT),
	C(0x0042, "NV_MEMORY_EXTENDED_USER",                 128, true , OTHER), /* EGM: CPU-attached memory, not FB; not in GET_PID_INFO */
	C(0x0050, "NV_CE_UTILS",                              24, true , OTHER), /* priv alloc */
	C(0x0060, "NV0060_SYNC_GPU_BOOST",                     4, true , OTHER),
	C(0x0070, "NV01_MEMORY_VIRTUAL",                      24, true , VIRTUAL),
	C(0x0071, "NV01_MEMORY_SYSTEM_OS_DESCRIPTOR",         40, true , PROCESS_BOUND), /* pins pages of the CALLING process */
	C(0x0073, "NV04_DISPLAY_COMMON",                       0, false, OTHER),
	C(0x0076, "NV01_MEMORY_FRAMEBUFFER_CONSOLE",           0, false, OTHER), /* kernel alloc */
	C(0x0078, "NV01_EVENT_KERNEL_CALLBACK",               24, true , EVENT),
	C(0x0079, "NV01_EVENT_OS_EVENT",                      24, true , EVENT), /* params.data is an fd-like OS event handle (value) */
	C(0x007d, "NV04_SOFTWARE_TEST",                        0, false, OTHER),
	C(0x007e, "NV01_EVENT_KERNEL_CALLBACK_EX",            24, true , EVENT),
	C(0x0080, "NV01_DEVICE_0",                            56, false, DEVICE),
	C(0x0081, "NV01_MEMORY_LIST_SYSTEM",                 152, true , PROCESS_BOUND), /* priv alloc; alloc params carry a page-list pointer */
	C(0x0082, "NV01_MEMORY_LIST_FBMEM",                  152, true , PROCESS_BOUND), /* priv alloc; alloc params carry a page-list pointer */
	C(0x0083, "NV01_MEMORY_LIST_OBJECT",                 152, true , PROCESS_BOUND), /* priv alloc; alloc params carry a page-list pointer */
	C(0x0090, "KERNEL_GRAPHICS_CONTEXT",                   0, false, OTHER),
	C(0x0092, "NV0092_RG_LINE_CALLBACK",                  32, true , OTHER), /* kernel alloc */
	C(0x00b1, "NV01_MEMORY_HW_RESOURCES",                120, true , OTHER),
	C(0x00c2, "NV01_MEMORY_LOCAL_PHYSICAL",               24, true , OTHER), /* priv alloc; physical vidmem, admin only */
	C(0x00c3, "NV01_MEMORY_SYNCPOINT",                     4, true , OTHER),
	C(0x00da, "NV_SEMAPHORE_SURFACE",                     16, true , OTHER),
	C(0x00db, "NV40_DEBUG_BUFFER",                         8, true , OTHER),
	C(0x00de, "RM_USER_SHARED_DATA",                       8, true , OTHER),
	C(0x00e0, "NV_MEMORY_EXPORT",                        244, true , OTHER),
	C(0x00f1, "NV_IMEX_SESSION",                          32, true , PROCESS_BOUND), /* capability fd from the CALLER fd table */
	C(0x00f3, "NV01_MEMORY_FLA",                          56, true , OTHER),
	C(0x00f8, "NV_MEMORY_FABRIC",                         48, true , OTHER),
	C(0x00f9, "NV_MEMORY_FABRIC_IMPORT_V2",               64, true , OTHER),
	C(0x00fb, "NV_MEMORY_FABRIC_IMPORTED_REF",            32, true , OTHER),
	C(0x00fd, "NV_MEMORY_MULTICAST_FABRIC",               80, true , OTHER),
	C(0x00fe, "NV_MEMORY_MAPPER",                         24, true , OTHER),
	C(0x0100, "LOCK_STRESS_OBJECT",                        0, false, OTHER),
	C(0x0101, "LOCK_TEST_RELAXED_DUP_OBJECT",              0, false, OTHER),
	C(0x2080, "NV20_SUBDEVICE_0",                          4, false, SUBDEVICE),
	C(0x2081, "NV2081_BINAPI",                             4, false, OTHER),
	C(0x2082, "NV2082_BINAPI_PRIVILEGED",                  4, false, OTHER), /* priv alloc */
	C(0x208f, "NV20_SUBDEVICE_DIAG",                       0, false, OTHER),
	C(0x30f1, "NV30_GSYNC",                                4, true , OTHER),
	C(0x402c, "NV40_I2C",                                  0, false, OTHER),
	C(0x503b, "NV50_P2P",                                 72, true , OTHER),
	C(0x503c, "NV50_THIRD_PARTY_P2P",                      4, false, OTHER),
	C(0x5080, "NV50_DEFERRED_API_CLASS",                   1, false, OTHER),
	C(0x50a0, "NV50_MEMORY_VIRTUAL",                     128, true , VIRTUAL),
	C(0x83de, "GT200_DEBUGGER",                           12, true , OTHER),
	C(0x844c, "G84_PERFBUFFER",                            0, false, OTHER),
	C(0x900e, "MPS_COMPUTE",                               0, false, OTHER),
	C(0x9010, "NV9010_VBLANK_CALLBACK",                   32, true , OTHER), /* kernel alloc */
	C(0x902d, "FERMI_TWOD_A",                             16, false, OTHER),
	C(0x9067, "FERMI_CONTEXT_SHARE_A",                    12, true , OTHER),
	C(0x906f, "GF100_CHANNEL_GPFIFO",                    368, true , CHANNEL),
	C(0x9072, "GF100_DISP_SW",                            12, true , OTHER),
	C(0x9074, "GF100_TIMED_SEMAPHORE_SW",                  0, false, OTHER),
	C(0x9096, "GF100_ZBC_CLEAR",                           0, false, OTHER),
	C(0x90cc, "GF100_PROFILER",                            0, false, OTHER),
	C(0x90cd, "NV_EVENT_BUFFER",                          72, true , PROCESS_BOUND), /* maps buffers into the CALLING process */
	C(0x90ce, "NV01_MEMORY_DEVICELESS",                  128, true , SYSMEM), /* deviceless sysmem */
	C(0x90e6, "GF100_SUBDEVICE_MASTER",                    0, false, OTHER),
	C(0x90e7, "GF100_SUBDEVICE_INFOROM",                   0, false, OTHER),
	C(0x90ec, "GF100_HDACODEC",                            0, false, OTHER),
	C(0x90f1, "FERMI_VASPACE_A",                          56, true , OTHER),
	C(0xa06c, "KEPLER_CHANNEL_GROUP_A",                   20, true , CHANNEL_GROUP),
	C(0xa06f, "KEPLER_CHANNEL_GPFIFO_A",                 368, true , CHANNEL),
	C(0xa080, "KEPLER_DEVICE_VGPU",                        0, false, OTHER),
	C(0xa081, "NVA081_VGPU_CONFIG",                        0, false, OTHER),
	C(0xa084, "NVA084_KERNEL_HOST_VGPU_DEVICE",           88, true , OTHER),
	C(0xa0bc, "NVENC_SW_SESSION",                         20, true , OTHER),
	C(0xa0bd, "NVFBC_SW_SESSION",                         20, true , OTHER),
	C(0xa140, "KEPLER_INLINE_TO_MEMORY_B",                16, false, OTHER),
	C(0xa16f, "KEPLER_CHANNEL_GPFIFO_B",                 368, true , CHANNEL),
	C(0xb06f, "MAXWELL_CHANNEL_GPFIFO_A",                368, true , CHANNEL),
	C(0xb0b5, "MAXWELL_DMA_COPY_A",                        8, false, OTHER),
	C(0xb1cc, "MAXWELL_PROFILER_CONTEXT",                  4, true , OTHER),
	C(0xb2cc, "MAXWELL_PROFILER_DEVICE",                   8, true , OTHER),
	C(0xb4b7, "NVB4B7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xb8b0, "NVB8B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xb8d1, "NVB8D1_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xb8fa, "NVB8FA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xc06f, "PASCAL_CHANNEL_GPFIFO_A",                 368, true , CHANNEL),
	C(0xc076, "GP100_UVM_SW",                              0, false, OTHER), /* priv alloc */
	C(0xc0b5, "PASCAL_DMA_COPY_A",                         8, false, OTHER),
	C(0xc361, "VOLTA_USERMODE_A",                          0, false, OTHER),
	C(0xc365, "ACCESS_COUNTER_NOTIFY_BUFFER",              4, true , OTHER),
	C(0xc369, "MMU_FAULT_BUFFER",                          0, false, OTHER), /* kernel alloc */
	C(0xc36f, "VOLTA_CHANNEL_GPFIFO_A",                  368, true , CHANNEL),
	C(0xc371, "NVC371_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xc372, "NVC372_DISPLAY_SW",                         0, false, OTHER), /* priv alloc */
	C(0xc461, "TURING_USERMODE_A",                         0, false, OTHER),
	C(0xc46f, "TURING_CHANNEL_GPFIFO_A",                 368, true , CHANNEL),
	C(0xc4b0, "NVC4B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xc4b7, "NVC4B7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xc4d1, "NVC4D1_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xc561, "AMPERE_USERMODE_A",                         0, false, OTHER),
	C(0xc56f, "AMPERE_CHANNEL_GPFIFO_A",                 368, true , CHANNEL),
	C(0xc570, "NVC570_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xc573, "NVC573_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xc574, "UVM_CHANNEL_RETAINER",                      8, true , OTHER), /* kernel alloc */
	C(0xc57a, "NVC57A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xc57b, "NVC57B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xc57d, "NVC57D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xc57e, "NVC57E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xc597, "TURING_A",                                 16, false, OTHER),
	C(0xc5b5, "TURING_DMA_COPY_A",                         8, false, OTHER),
	C(0xc5c0, "TURING_COMPUTE_A",                         16, false, OTHER),
	C(0xc637, "AMPERE_SMC_PARTITION_REF",                 16, true , PROCESS_BOUND), /* capability fd from the CALLER fd table */
	C(0xc638, "AMPERE_SMC_EXEC_PARTITION_REF",            16, true , PROCESS_BOUND), /* capability fd from the CALLER fd table */
	C(0xc639, "AMPERE_SMC_CONFIG_SESSION",                 8, true , OTHER),
	C(0xc640, "AMPERE_SMC_MONITOR_SESSION",                8, true , OTHER),
	C(0xc661, "HOPPER_USERMODE_A",                         2, false, OTHER),
	C(0xc670, "NVC670_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xc671, "NVC671_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xc673, "NVC673_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xc67a, "NVC67A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xc67b, "NVC67B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xc67d, "NVC67D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xc67e, "NVC67E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xc697, "AMPERE_A",                                 16, false, OTHER),
	C(0xc6b0, "NVC6B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xc6b5, "AMPERE_DMA_COPY_A",                         8, false, OTHER),
	C(0xc6c0, "AMPERE_COMPUTE_A",                         16, false, OTHER),
	C(0xc6fa, "NVC6FA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xc761, "BLACKWELL_USERMODE_A",                      2, false, OTHER),
	C(0xc763, "MMU_VIDMEM_ACCESS_BIT_BUFFER",            528, true , OTHER),
	C(0xc770, "NVC770_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xc771, "NVC771_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xc773, "NVC773_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xc77d, "NVC77D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xc77f, "NVC77F_ANY_CHANNEL_DMA",                   40, true , OTHER), /* priv alloc */
	C(0xc797, "AMPERE_B",                                 16, false, OTHER),
	C(0xc7b0, "NVC7B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xc7b5, "AMPERE_DMA_COPY_B",                         8, false, OTHER),
	C(0xc7b7, "NVC7B7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xc7c0, "AMPERE_COMPUTE_B",                         16, false, OTHER),
	C(0xc7fa, "NVC7FA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xc863, "HOPPER_MMU_VIDMEM_ACCESS_BIT_BUFFER",     528, true , OTHER),
	C(0xc86f, "HOPPER_CHANNEL_GPFIFO_A",                 368, true , CHANNEL),
	C(0xc8b5, "HOPPER_DMA_COPY_A",                         8, false, OTHER),
	C(0xc96f, "BLACKWELL_CHANNEL_GPFIFO_A",              368, true , CHANNEL),
	C(0xc970, "NVC970_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xc971, "NVC971_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xc973, "NVC973_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xc97a, "NVC97A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xc97b, "NVC97B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xc97d, "NVC97D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xc97e, "NVC97E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xc997, "ADA_A",                                    16, false, OTHER),
	C(0xc9b0, "NVC9B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xc9b5, "BLACKWELL_DMA_COPY_A",                      8, false, OTHER),
	C(0xc9b7, "NVC9B7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xc9c0, "ADA_COMPUTE_A",                            16, false, OTHER),
	C(0xc9d1, "NVC9D1_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xc9fa, "NVC9FA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xca6f, "BLACKWELL_CHANNEL_GPFIFO_B",              368, true , CHANNEL),
	C(0xca70, "NVCA70_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xca71, "NVCA71_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xca73, "NVCA73_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xca7a, "NVCA7A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xca7b, "NVCA7B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xca7d, "NVCA7D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xca7e, "NVCA7E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xcab5, "BLACKWELL_DMA_COPY_B",                      8, false, OTHER),
	C(0xcb33, "NV_CONFIDENTIAL_COMPUTE",                   4, false, OTHER),
	C(0xcb70, "NVCB70_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xcb71, "NVCB71_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xcb73, "NVCB73_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xcb7a, "NVCB7A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xcb7b, "NVCB7B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xcb7d, "NVCB7D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xcb7e, "NVCB7E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xcb97, "HOPPER_A",                                 16, false, OTHER),
	C(0xcba2, "HOPPER_SEC2_WORK_LAUNCH_A",                 0, false, OTHER),
	C(0xcbc0, "HOPPER_COMPUTE_A",                         16, false, OTHER),
	C(0xcbca, "NV_COUNTER_COLLECTION_UNIT",                0, false, OTHER),
	C(0xcc70, "NVCC70_DISPLAY",                            0, false, OTHER), /* priv alloc */
	C(0xcc71, "NVCC71_DISP_SF_USER",                       0, false, OTHER), /* priv alloc */
	C(0xcc73, "NVCC73_DISP_CAPABILITIES",                  0, false, OTHER), /* priv alloc */
	C(0xcc7a, "NVCC7A_CURSOR_IMM_CHANNEL_PIO",            16, true , OTHER), /* priv alloc */
	C(0xcc7b, "NVCC7B_WINDOW_IMM_CHANNEL_DMA",            40, true , OTHER), /* priv alloc */
	C(0xcc7d, "NVCC7D_CORE_CHANNEL_DMA",                  40, true , OTHER), /* priv alloc */
	C(0xcc7e, "NVCC7E_WINDOW_CHANNEL_DMA",                40, true , OTHER), /* priv alloc */
	C(0xcd40, "BLACKWELL_INLINE_TO_MEMORY_A",             16, false, OTHER),
	C(0xcd97, "BLACKWELL_A",                              16, false, OTHER),
	C(0xcdb0, "NVCDB0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xcdc0, "BLACKWELL_COMPUTE_A",                      16, false, OTHER),
	C(0xcdd1, "NVCDD1_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xcdfa, "NVCDFA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xce97, "BLACKWELL_B",                              16, false, OTHER),
	C(0xceb0, "NVCEB0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xceb7, "NVCEB7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xcec0, "BLACKWELL_COMPUTE_B",                      16, false, OTHER),
	C(0xced0, "NVCED0_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xcefa, "NVCEFA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xcfb0, "NVCFB0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xcfb7, "NVCFB7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xcfd1, "NVCFD1_VIDEO_NVJPG",                       12, false, ENGINE),
	C(0xcffa, "NVCFFA_VIDEO_OFA",                         12, false, ENGINE),
	C(0xd1b0, "NVD1B0_VIDEO_DECODER",                     12, false, ENGINE),
	C(0xd1b7, "NVD1B7_VIDEO_ENCODER",                     12, false, ENGINE),
	C(0xd1fa, "NVD1FA_VIDEO_OFA",                         12, false, ENGINE),
};

#undef C

/* ------------------------------------------------------------------------ */
/* Controls                                                                 */
/* ------------------------------------------------------------------------ */

/*
 * Embedded-pointer descriptions. Sources (580.142):
 *  - src/nvidia/src/kernel/rmapi/embedded_param_copy.c, embeddedParamCopyIn():
 *    a switch on the command that makes the driver copy a user buffer behind
 *    a pointer inside the params. It runs from serverControlApiCopyIn()
 *    (control.c) for every user RM_CONTROL whose paramsSize equals the
 *    struct size, BEFORE the handler lookup, so it applies even to commands
 *    that have no exported handler in this build (e.g. BIOS_GET_NBSI). The
 *    driver's bound is RMAPI_PARAM_COPY_MAX_PARAMS_SIZE (1 MiB) per buffer,
 *    except for five commands that disable the check (noted "no driver cap");
 *    for those the 1 MiB in max_count is our own bound.
 *  - src/nvidia/interface/deprecated/rmapi_deprecated_control.c: eight V1
 *    controls are converted to their V2 form; the converter copies the V1
 *    struct with ITS OWN size (whatever paramsSize says) and the list behind
 *    the pointer, bounded by the V2 array (max_count below); a zero count
 *    means no copy at all. This path is taken before the normal one.
 *
 * Rules the relocating caller must keep, because the driver checks them:
 * a NULL pointer must stay NULL and a non-NULL one non-NULL (count != 0 with
 * NULL, or count == 0 with non-NULL, is refused with INVALID_ARGUMENT by
 * rmapiParamsAcquire); the buffer is count * elem_size bytes. Direction is
 * given in the row comment: "out" buffers are not read by the driver (and
 * "zeroed" ones are zero-filled by it), "in" buffers are not written back.
 */
#define EMB(ptr_, cnt_, esz_, max_) \
	{ (ptr_), (cnt_), (esz_), (max_), 0 }
#define EMB_FIXED(ptr_, esz_, n_) \
	{ (ptr_), RM_EMBEDDED_FIXED_COUNT, (esz_), (n_), (n_) }

/*
 * Sizes are the exported method's paramSize (src/nvidia/generated/g_*_nvoc.c,
 * sizeof the params type, compiled): for a known command the driver refuses
 * any other paramsSize (control.c, _rmapiRmControl). 0 means "no params" for
 * exported commands that take none (ACQUIRE/RELEASE_COMPUTE_MODE_RESERVATION,
 * RC watchdog), and "variable" for the opaque paths: commands with bit 15 set
 * go to GSP as paramsSize opaque bytes (rmapi_gss_legacy_control.c) and
 * NV2081 BinaryApi forwards paramsSize bytes (binary_api.c); neither has a
 * public name or struct in 580.142, so the row carries a generic name and the
 * size seen in the traces as a comment.
 *
 * Contents: every control in the shared/traces files, every embedded-pointer
 * control, the deprecated V1 controls and their V2 forms, the controls named
 * in rm-abi.md 5, the controls listed in unreloc_table below, and the
 * read-only queries nvidia-smi and JAX sent on an H200 (580.159.04,
 * 2026-11-21) that the driver exports as non-privileged with flat params
 * (docs/policy-evidence.md). The GSS-legacy and BinaryApi commands those
 * runs also sent (0x2080852e, 0x2080a097, 0x2080a612, 0x2080a618,
 * 0x20810110) are left out: their structs and what GSP does with them are
 * not in the open source.
 */
static const struct rm_ctrl_info ctrl_table[] = {
	/* Three output strings of sizeOfStrings@0 bytes each; CUDA sends it at
	 * start-up. Bounded by our own 1 MiB limit (no driver bound). */
	{ 0x00000101, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION", 40, 3,
	  { EMB(8, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE), EMB(16, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE),
	    EMB(24, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE) } },
	{ 0x00000127, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS", 176, 0, { { 0 } } }, /* UNRELOC: count = gpuCount^2 */
	{ 0x00000130, "NV0000_CTRL_CMD_SYSTEM_EXECUTE_ACPI_METHOD", 40, 0, { { 0 } } }, /* UNRELOC: u16 counts */
	{ 0x0000013a, "NV0000_CTRL_CMD_SYSTEM_GET_P2P_CAPS_MATRIX", 1352, 0, { { 0 } } },
	{ 0x0000013e, "NV0000_CTRL_CMD_SYSTEM_GET_BUILD_VERSION_V2", 1032, 0, { { 0 } } },
	{ 0x000001f0, "NV0000_CTRL_CMD_SYSTEM_GET_FEATURES", 4, 0, { { 0 } } },
	{ 0x00000201, "NV0000_CTRL_CMD_GPU_GET_ATTACHED_IDS", 128, 0, { { 0 } } },
	{ 0x00000202, "NV0000_CTRL_CMD_GPU_GET_ID_INFO", 40, 0, { { 0 } } },
	{ 0x00000205, "NV0000_CTRL_CMD_GPU_GET_ID_INFO_V2", 32, 0, { { 0 } } },
	{ 0x00000214, "NV0000_CTRL_CMD_GPU_GET_PROBED_IDS", 384, 0, { { 0 } } },
	{ 0x00000215, "NV0000_CTRL_CMD_GPU_ATTACH_IDS", 132, 0, { { 0 } } },
	{ 0x0000021b, "NV0000_CTRL_CMD_GPU_GET_PCI_INFO", 12, 0, { { 0 } } },
	/* gpuId -> UUID; nvJPEG's hardware backend asks it (H200, 2026-11-21). */
	{ 0x00000275, "NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID", 268, 0, { { 0 } } },
	{ 0x00000279, "NV0000_CTRL_CMD_GPU_QUERY_DRAIN_STATE", 12, 0, { { 0 } } },
	{ 0x0000027b, "NV0000_CTRL_CMD_GPU_GET_MEMOP_ENABLE", 4, 0, { { 0 } } },
	{ 0x00000283, "NV0000_CTRL_CMD_IDLE_CHANNELS", 48, 0, { { 0 } } }, /* UNRELOC: 3 pointers */
	{ 0x00000288, "NV0000_CTRL_CMD_GPU_GET_ACTIVE_DEVICE_IDS", 3076, 0, { { 0 } } },
	{ 0x00000289, "NV0000_CTRL_CMD_GPU_ASYNC_ATTACH_ID", 4, 0, { { 0 } } },
	{ 0x00000602, "NV0000_CTRL_CMD_NVD_GET_DUMP", 16, 1, { EMB(0, 12, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x00000a04, "NV0000_CTRL_CMD_SYNC_GPU_BOOST_GROUP_INFO", 2244, 0, { { 0 } } },
	{ 0x00000d01, "NV0000_CTRL_CMD_CLIENT_GET_ADDR_SPACE_TYPE", 12, 0, { { 0 } } },
	{ 0x00000d04, "NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY", 12, 0, { { 0 } } },
	{ 0x00003d05, "NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECT_TO_FD", 24, 0, { { 0 } } },
	{ 0x00003d06, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECT_FROM_FD", 20, 0, { { 0 } } },
	{ 0x00003d08, "NV0000_CTRL_CMD_OS_UNIX_GET_EXPORT_OBJECT_INFO", 80, 0, { { 0 } } },
	{ 0x00003d0a, "NV0000_CTRL_CMD_OS_UNIX_CREATE_EXPORT_OBJECT_FD", 76, 0, { { 0 } } },
	{ 0x00003d0b, "NV0000_CTRL_CMD_OS_UNIX_EXPORT_OBJECTS_TO_FD", 2128, 0, { { 0 } } },
	{ 0x00003d0c, "NV0000_CTRL_CMD_OS_UNIX_IMPORT_OBJECTS_FROM_FD", 652, 0, { { 0 } } },
	{ 0x00410110, "NV0041_CTRL_CMD_GET_SURFACE_INFO", 16, 1, { EMB(8, 0, 8, 131072) } }, /* in/out */
	{ 0x00730120, "NV0073_CTRL_CMD_SYSTEM_EXECUTE_ACPI_METHOD", 40, 0, { { 0 } } }, /* UNRELOC: u16 counts */
	{ 0x0073136a, "NV0073_CTRL_CMD_DP_SET_MSA_PROPERTIES", 64, 1, { EMB_FIXED(56, 26, 1) } }, /* deprecated V1; optional (NULL allowed) in/out */
	{ 0x00731381, "NV0073_CTRL_CMD_DP_SET_MSA_PROPERTIES_V2", 80, 0, { { 0 } } },
	{ 0x00800201, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST", 16, 1, { EMB(8, 0, 4, 262144) } }, /* in/out */
	{ 0x00800280, "NV0080_CTRL_CMD_GPU_GET_NUM_SUBDEVICES", 4, 0, { { 0 } } },
	{ 0x00800288, "NV0080_CTRL_CMD_GPU_QUERY_SW_STATE_PERSISTENCE", 4, 0, { { 0 } } },
	{ 0x00800289, "NV0080_CTRL_CMD_GPU_GET_VIRTUALIZATION_MODE", 8, 0, { { 0 } } },
	{ 0x00800292, "NV0080_CTRL_CMD_GPU_GET_CLASSLIST_V2", 804, 0, { { 0 } } },
	{ 0x00801102, "NV0080_CTRL_CMD_GR_GET_CAPS", 16, 1, { EMB(8, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x00801104, "NV0080_CTRL_CMD_GR_GET_INFO", 16, 1, { EMB(8, 0, 8, 131072) } }, /* in/out */
	/* capsTbl[23], route info {flags, u64 route} at 24, bCapsPopulated at 40:
	 * flat. nvJPEG's hardware backend asks it (H200, 2026-11-21). */
	{ 0x00801109, "NV0080_CTRL_CMD_GR_GET_CAPS_V2", 48, 0, { { 0 } } },
	{ 0x00801110, "NV0080_CTRL_CMD_GR_GET_INFO_V2", 488, 0, { { 0 } } },
	{ 0x00801301, "NV0080_CTRL_CMD_FB_GET_CAPS", 16, 1, { EMB(8, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x00801307, "NV0080_CTRL_CMD_FB_GET_CAPS_V2", 3, 0, { { 0 } } },
	{ 0x00801401, "NV0080_CTRL_CMD_HOST_GET_CAPS", 16, 1, { EMB(8, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x00801402, "NV0080_CTRL_CMD_HOST_GET_CAPS_V2", 3, 0, { { 0 } } },
	{ 0x00801701, "NV0080_CTRL_CMD_FIFO_GET_CAPS", 16, 1, { EMB(8, 0, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x0080170d, "NV0080_CTRL_CMD_FIFO_GET_CHANNELLIST", 24, 2, { EMB(8, 0, 4, 262144), EMB(16, 0, 4, 262144) } }, /* [0] in only, [1] in/out */
	/* capsTbl[2]; nvJPEG's hardware backend (H200, 2026-11-21). */
	{ 0x00801713, "NV0080_CTRL_CMD_FIFO_GET_CAPS_V2", 2, 0, { { 0 } } },
	{ 0x0080180f, "NV0080_CTRL_CMD_DMA_UPDATE_PDE_2", 64, 1, { EMB_FIXED(48, 16, 1) } }, /* out, one dual PDE */
	{ 0x00801909, "NV0080_CTRL_CMD_PERF_CUDA_LIMIT_SET_CONTROL", 1, 0, { { 0 } } },
	{ 0x00801b01, "NV0080_CTRL_CMD_MSENC_GET_CAPS", 16, 1, { EMB(8, 0, 1, 5) } }, /* deprecated V1; count must be exactly 5 */
	{ 0x00801b02, "NV0080_CTRL_CMD_MSENC_GET_CAPS_V2", 12, 0, { { 0 } } },
	{ 0x00801c01, "NV0080_CTRL_CMD_BSP_GET_CAPS", 24, 1, { EMB(8, 0, 1, 8) } }, /* deprecated V1; count must be exactly 8 */
	{ 0x00801c02, "NV0080_CTRL_CMD_BSP_GET_CAPS_V2", 12, 0, { { 0 } } },
	/* capsTbl[9], instanceId at 12; nvJPEG's hardware backend (H200). */
	{ 0x00801f02, "NV0080_CTRL_CMD_NVJPG_GET_CAPS_V2", 16, 0, { { 0 } } },
	{ 0x00de0001, "NV00DE_CTRL_CMD_REQUEST_DATA_POLL", 8, 0, { { 0 } } }, /* same mask as the 0xde alloc params */
	{ 0x00e00101, "NV00E0_CTRL_CMD_EXPORT_MEM", 1048, 0, { { 0 } } },
	{ 0x00fd0104, "NV00FD_CTRL_CMD_ATTACH_GPU", 16, 0, { { 0 } } },
	{ 0x20800101, "NV2080_CTRL_CMD_GPU_GET_INFO", 16, 1, { EMB(8, 0, 8, 70) } }, /* deprecated V1 -> GPU_GET_INFO_V2 */
	{ 0x20800102, "NV2080_CTRL_CMD_GPU_GET_INFO_V2", 564, 0, { { 0 } } },
	{ 0x20800110, "NV2080_CTRL_CMD_GPU_GET_NAME_STRING", 132, 0, { { 0 } } },
	{ 0x20800111, "NV2080_CTRL_CMD_GPU_GET_SHORT_NAME_STRING", 64, 0, { { 0 } } },
	{ 0x20800119, "NV2080_CTRL_CMD_GPU_GET_SIMULATION_INFO", 4, 0, { { 0 } } },
	{ 0x20800122, "NV2080_CTRL_CMD_GPU_EXEC_REG_OPS", 48, 1, { EMB(24, 20, 32, 32768) } }, /* in/out */
	{ 0x20800123, "NV2080_CTRL_CMD_GPU_GET_ENGINES", 16, 1, { EMB(8, 0, 4, 262144) } }, /* in/out */
	{ 0x20800124, "NV2080_CTRL_CMD_GPU_GET_ENGINE_CLASSLIST", 16, 1, { EMB(8, 4, 4, 262144) } }, /* in/out */
	{ 0x2080012f, "NV2080_CTRL_CMD_GPU_QUERY_ECC_STATUS", 1464, 0, { { 0 } } },
	{ 0x20800130, "NV2080_CTRL_CMD_GPU_SET_COMPUTE_MODE_RULES", 8, 0, { { 0 } } },
	{ 0x20800131, "NV2080_CTRL_CMD_GPU_QUERY_COMPUTE_MODE_RULES", 4, 0, { { 0 } } },
	{ 0x20800133, "NV2080_CTRL_CMD_GPU_QUERY_ECC_CONFIGURATION", 8, 0, { { 0 } } }, /* nvidia-smi */
	{ 0x20800145, "NV2080_CTRL_CMD_GPU_ACQUIRE_COMPUTE_MODE_RESERVATION", 0, 0, { { 0 } } },
	{ 0x20800146, "NV2080_CTRL_CMD_GPU_RELEASE_COMPUTE_MODE_RESERVATION", 0, 0, { { 0 } } },
	{ 0x2080014a, "NV2080_CTRL_CMD_GPU_GET_GID_INFO", 268, 0, { { 0 } } },
	{ 0x2080014b, "NV2080_CTRL_CMD_GPU_GET_INFOROM_OBJECT_VERSION", 5, 0, { { 0 } } },
	{ 0x20800157, "NV2080_CTRL_CMD_GPU_QUERY_INFOROM_ECC_SUPPORT", 0, 0, { { 0 } } }, /* no params */
	{ 0x2080016e, "NV2080_CTRL_GPU_GET_NVENC_SW_SESSION_INFO", 16, 1, { EMB(8, 0, 32, 32768) } }, /* out */
	{ 0x20800170, "NV2080_CTRL_CMD_GPU_GET_ENGINES_V2", 340, 0, { { 0 } } },
	{ 0x2080018d, "NV2080_CTRL_CMD_GPU_GET_PIDS", 3812, 0, { { 0 } } },
	{ 0x2080018e, "NV2080_CTRL_CMD_GPU_GET_PID_INFO", 14408, 0, { { 0 } } },
	{ 0x20800195, "NV2080_CTRL_CMD_GPU_GET_COMPUTE_POLICY_CONFIG", 260, 0, { { 0 } } },
	{ 0x208001a3, "NV2080_CTRL_CMD_GET_GPU_FABRIC_PROBE_INFO", 56, 0, { { 0 } } },
	{ 0x208001e8, "NV2080_CTRL_CMD_GPU_RPC_GSP_TEST", 32, 1, { EMB(24, 4, 4, 262144) } }, /* in/out */
	{ 0x20800406, "NV2080_CTRL_CMD_TIMER_GET_GPU_CPU_TIME_CORRELATION_INFO", 264, 0, { { 0 } } },
	{ 0x20800513, "NV2080_CTRL_CMD_THERMAL_SYSTEM_EXECUTE_V2", 1432, 0, { { 0 } } }, /* 32 fixed-size instructions */
	{ 0x20800610, "NV2080_CTRL_CMD_I2C_ACCESS", 40, 1, { EMB(16, 28, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* in/out */
	{ 0x20800802, "NV2080_CTRL_CMD_BIOS_GET_INFO", 16, 1, { EMB(8, 0, 8, 15) } }, /* deprecated V1 (converter wins over embedded copy); max = V2 array */
	{ 0x20800803, "NV2080_CTRL_CMD_BIOS_GET_NBSI", 1064, 1, { EMB(1048, 1056, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x20800806, "NV2080_CTRL_CMD_BIOS_GET_NBSI_OBJ", 40, 1, { EMB(16, 24, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x20800810, "NV2080_CTRL_CMD_BIOS_GET_INFO_V2", 124, 0, { { 0 } } },
	{ 0x2080110b, "NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS", 536, 0, { { 0 } } },
	{ 0x2080110c, "NV2080_CTRL_CMD_FIFO_GET_CHANNEL_MEM_INFO", 112, 0, { { 0 } } },
	{ 0x20801201, "NV2080_CTRL_CMD_GR_GET_INFO", 32, 1, { EMB(8, 0, 8, 131072) } }, /* in/out */
	{ 0x20801210, "NV2080_CTRL_CMD_GR_SET_CTXSW_PREEMPTION_MODE", 32, 0, { { 0 } } },
	{ 0x20801218, "NV2080_CTRL_CMD_GR_GET_CTX_BUFFER_SIZE", 16, 0, { { 0 } } },
	{ 0x2080121b, "NV2080_CTRL_CMD_GR_GET_GLOBAL_SM_ORDER", 9240, 0, { { 0 } } },
	{ 0x20801227, "NV2080_CTRL_CMD_GR_GET_CAPS_V2", 48, 0, { { 0 } } },
	{ 0x20801228, "NV2080_CTRL_CMD_GR_GET_INFO_V2", 488, 0, { { 0 } } },
	{ 0x2080122a, "NV2080_CTRL_CMD_GR_GET_GPC_MASK", 24, 0, { { 0 } } },
	{ 0x2080122b, "NV2080_CTRL_CMD_GR_GET_TPC_MASK", 24, 0, { { 0 } } },
	{ 0x20801230, "NV2080_CTRL_CMD_GR_GET_SM_ISSUE_RATE_MODIFIER", 32, 0, { { 0 } } },
	{ 0x20801301, "NV2080_CTRL_CMD_FB_GET_INFO", 16, 1, { EMB(8, 0, 8, 128) } }, /* deprecated V1 -> FB_GET_INFO_V2 */
	{ 0x20801303, "NV2080_CTRL_CMD_FB_GET_INFO_V2", 1028, 0, { { 0 } } },
	{ 0x20801336, "NV2080_CTRL_CMD_FB_GET_AMAP_CONF", 0, 0, { { 0 } } }, /* UNRELOC: amaplib builds only */
	{ 0x20801349, "NV2080_CTRL_CMD_FB_GET_CLIENT_ALLOCATION_INFO", 32, 0, { { 0 } } }, /* UNRELOC: handler writes 2 user pointers directly */
	{ 0x20801357, "NV2080_CTRL_CMD_FB_QUERY_DRAM_ENCRYPTION_INFOROM_SUPPORT", 4, 0, { { 0 } } },
	{ 0x20801701, "NV2080_CTRL_CMD_MC_GET_ARCH_INFO", 16, 0, { { 0 } } },
	{ 0x20801801, "NV2080_CTRL_CMD_BUS_GET_PCI_INFO", 16, 0, { { 0 } } },
	{ 0x20801802, "NV2080_CTRL_CMD_BUS_GET_INFO", 16, 1, { EMB(8, 0, 8, 52) } }, /* deprecated V1 -> BUS_GET_INFO_V2 */
	{ 0x20801803, "NV2080_CTRL_CMD_BUS_GET_PCI_BAR_INFO", 200, 0, { { 0 } } },
	{ 0x20801823, "NV2080_CTRL_CMD_BUS_GET_INFO_V2", 420, 0, { { 0 } } },
	{ 0x2080182a, "NV2080_CTRL_CMD_BUS_GET_PCIE_SUPPORTED_GPU_ATOMICS", 112, 0, { { 0 } } },
	{ 0x2080182b, "NV2080_CTRL_CMD_BUS_GET_C2C_INFO", 28, 0, { { 0 } } },
	{ 0x2080200a, "NV2080_CTRL_CMD_PERF_BOOST", 8, 0, { { 0 } } },
	{ 0x20802068, "NV2080_CTRL_CMD_PERF_GET_CURRENT_PSTATE", 4, 0, { { 0 } } },
	{ 0x20802204, "NV2080_CTRL_CMD_RC_READ_VIRTUAL_MEM", 32, 1, { EMB(16, 24, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x2080220c, "NV2080_CTRL_CMD_RC_RELEASE_WATCHDOG_REQUESTS", 0, 0, { { 0 } } },
	{ 0x20802210, "NV2080_CTRL_CMD_RC_SOFT_DISABLE_WATCHDOG", 0, 0, { { 0 } } },
	{ 0x20802402, "NV2080_CTRL_CMD_NVD_GET_DUMP", 16, 1, { EMB(0, 12, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x20802a01, "NV2080_CTRL_CMD_CE_GET_CAPS", 16, 1, { EMB(8, 4, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed */
	{ 0x20802a0a, "NV2080_CTRL_CMD_CE_GET_ALL_CAPS", 136, 0, { { 0 } } },
	{ 0x20803001, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_CAPS", 48, 0, { { 0 } } },
	{ 0x20803002, "NV2080_CTRL_CMD_NVLINK_GET_NVLINK_STATUS", 13344, 0, { { 0 } } },
	{ 0x20803601, "NV2080_CTRL_CMD_GSP_GET_FEATURES", 72, 0, { { 0 } } },
	{ 0x20803801, "NV2080_CTRL_CMD_GRMGR_GET_GR_FS_INFO", 1928, 0, { { 0 } } },
	{ 0x20808159, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[332] */
	{ 0x20808162, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[1] */
	/* Sent by nvJPEG's hardware backend before it uses an NVJPG engine,
	 * and by NVENC session setup (H200 trace, 2026-11-21). */
	{ 0x20808165, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, psz 1 */
	{ 0x20809001, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[8] */
	{ 0x20809009, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[8] */
	{ 0x20809038, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[4] */
	{ 0x20809064, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[520] */
	{ 0x2080a026, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[532] */
	{ 0x2080a028, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP; nvJPEG hw */
	{ 0x2080a084, "NV2080_CTRL_GSS_LEGACY", 0, 0, { { 0 } } }, /* bit 15: opaque to GSP, trace psz=[4] */
	{ 0x20810108, "NV2081_BINAPI_CTRL", 0, 0, { { 0 } } }, /* BinaryApi forwards opaque bytes, trace psz=[992] */
	{ 0x402c0102, "NV402C_CTRL_CMD_I2C_INDEXED", 32, 1, { EMB(24, 16, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* in/out */
	{ 0x402c0105, "NV402C_CTRL_CMD_I2C_TRANSACTION", 96, 0, { { 0 } } }, /* UNRELOC: pointer offset depends on transType */
	{ 0x503c0102, "NV503C_CTRL_CMD_REGISTER_VA_SPACE", 16, 0, { { 0 } } },
	{ 0x503c0104, "NV503C_CTRL_CMD_REGISTER_VIDMEM", 32, 0, { { 0 } } },
	{ 0x503c0105, "NV503C_CTRL_CMD_UNREGISTER_VIDMEM", 4, 0, { { 0 } } },
	{ 0x83de0309, "NV83DE_CTRL_CMD_DEBUG_SET_EXCEPTION_MASK", 4, 0, { { 0 } } },
	{ 0x83de0315, "NV83DE_CTRL_CMD_DEBUG_READ_MEMORY", 24, 1, { EMB(16, 4, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed; driver has no size cap, ours is 1 MiB */
	{ 0x83de0316, "NV83DE_CTRL_CMD_DEBUG_WRITE_MEMORY", 24, 1, { EMB(16, 4, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* in; driver has no size cap, ours is 1 MiB */
	{ 0x83de031a, "NV83DE_CTRL_CMD_READ_SURFACE", 1544, 0, { { 0 } } }, /* UNRELOC: pointer per op */
	{ 0x83de031b, "NV83DE_CTRL_CMD_WRITE_SURFACE", 1544, 0, { { 0 } } }, /* UNRELOC: pointer per op */
	{ 0x83de0326, "NV83DE_CTRL_CMD_DEBUG_READ_BATCH_MEMORY", 3616, 1, { EMB(0, 8, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out, zeroed; no driver cap */
	{ 0x83de0327, "NV83DE_CTRL_CMD_DEBUG_WRITE_BATCH_MEMORY", 3616, 1, { EMB(0, 8, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* in; no driver cap */
	{ 0x906f0101, "NV906F_CTRL_GET_CLASS_ENGINEID", 16, 0, { { 0 } } },
	{ 0x906f0102, "NV906F_CTRL_CMD_RESET_CHANNEL", 16, 0, { { 0 } } },
	{ 0x90e60102, "NV90E6_CTRL_CMD_MASTER_GET_VIRTUAL_FUNCTION_ERROR_CONT_INTR_MASK", 8, 0, { { 0 } } },
	{ 0xa06c0101, "NVA06C_CTRL_CMD_GPFIFO_SCHEDULE", 3, 0, { { 0 } } },
	{ 0xa06c0102, "NVA06C_CTRL_CMD_BIND", 4, 0, { { 0 } } },
	{ 0xa06c0103, "NVA06C_CTRL_CMD_SET_TIMESLICE", 8, 0, { { 0 } } },
	{ 0xa06c0104, "NVA06C_CTRL_CMD_GET_TIMESLICE", 8, 0, { { 0 } } },
	{ 0xa06c0105, "NVA06C_CTRL_CMD_PREEMPT", 8, 0, { { 0 } } },
	{ 0xa06c0106, "NVA06C_CTRL_CMD_GET_INFO", 4, 0, { { 0 } } },
	{ 0xa06c0107, "NVA06C_CTRL_CMD_SET_INTERLEAVE_LEVEL", 4, 0, { { 0 } } },
	{ 0xa06c0110, "NVA06C_CTRL_CMD_MAKE_REALTIME", 1, 0, { { 0 } } },
	{ 0xa06f0103, "NVA06F_CTRL_CMD_GPFIFO_SCHEDULE", 3, 0, { { 0 } } },
	/* {engineType}: binds the caller's channel to an engine; nvJPEG's
	 * hardware backend binds its channels to NVJPG (H200, 2026-11-21). */
	{ 0xa06f0104, "NVA06F_CTRL_CMD_BIND", 4, 0, { { 0 } } },
	{ 0xa06f0109, "NVA06F_CTRL_CMD_SET_INTERLEAVE_LEVEL", 4, 0, { { 0 } } },
	{ 0xa06f0111, "NVA06F_CTRL_CMD_RESTART_RUNLIST", 2, 0, { { 0 } } },
	{ 0xa06f0112, "NVA06F_CTRL_CMD_STOP_CHANNEL", 1, 0, { { 0 } } },
	{ 0xa0bc0101, "NVA0BC_CTRL_CMD_NVENC_SW_SESSION_UPDATE_INFO", 32, 1, { EMB(24, 16, 16, 65536) } }, /* in/out */
	{ 0xb06f010c, "NVB06F_CTRL_CMD_GET_ENGINE_CTX_DATA", 16, 1, { EMB(8, 4, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* out; no driver cap */
	{ 0xb06f010d, "NVB06F_CTRL_CMD_MIGRATE_ENGINE_CTX_DATA", 16, 1, { EMB(8, 4, 1, NV_RMAPI_MAX_PARAMS_SIZE) } }, /* in/out; no driver cap */
	{ 0xc36f0108, "NVC36F_CTRL_CMD_GPFIFO_GET_WORK_SUBMIT_TOKEN", 4, 0, { { 0 } } },
	{ 0xc36f010a, "NVC36F_CTRL_CMD_GPFIFO_SET_WORK_SUBMIT_TOKEN_NOTIF_INDEX", 4, 0, { { 0 } } },
	{ 0xcb330101, "NV_CONF_COMPUTE_CTRL_CMD_SYSTEM_GET_CAPABILITIES", 6, 0, { { 0 } } },
};

#undef EMB
#undef EMB_FIXED

/*
 * Controls the supervisor must never execute from its own process, because
 * the driver dereferences user pointers (or resolves file descriptors) that
 * ctrl_table cannot describe for relocation:
 */
struct rm_unreloc {
	uint32_t    cmd;
	const char *why;
};

static const struct rm_unreloc unreloc_table[] = {
	/* embeddedParamCopyIn: two out buffers of gpuCount*gpuCount u32 */
	{ 0x00000127, "GET_P2P_CAPS: count is gpuCount squared" },
	/* embeddedParamCopyIn: inData/outData with 16-bit sizes */
	{ 0x00000130, "EXECUTE_ACPI_METHOD: u16 counts" },
	/* RmIdleChannels (kernel_idle_channels.c) copies three handle lists */
	{ 0x00000283, "IDLE_CHANNELS: 3 pointers" },
	/* os.c: fds resolved in the CALLER's fd table (nv_get_file_private) */
	{ 0x00003d05, "OS_UNIX_EXPORT_OBJECT_TO_FD: caller fd" },
	{ 0x00003d06, "OS_UNIX_IMPORT_OBJECT_FROM_FD: caller fd" },
	{ 0x00003d08, "OS_UNIX_GET_EXPORT_OBJECT_INFO: caller fd" },
	{ 0x00003d0a, "OS_UNIX_CREATE_EXPORT_OBJECT_FD: caller fd" },
	{ 0x00003d0b, "OS_UNIX_EXPORT_OBJECTS_TO_FD: caller fd" },
	{ 0x00003d0c, "OS_UNIX_IMPORT_OBJECTS_FROM_FD: caller fd" },
	{ 0x00730120, "NV0073 EXECUTE_ACPI_METHOD: u16 counts" },
	/* escape.c RmGetDeviceFd: devDescriptor fd, params fetched twice */
	{ 0x00e00101, "EXPORT_MEM: caller fd, double fetch" },
	{ 0x00fd0104, "ATTACH_GPU: caller fd, double fetch" },
	/* only in builds with USE_AMAPLIB; two optional pointers */
	{ 0x20801336, "FB_GET_AMAP_CONF: amaplib pointers" },
	/* mem_mgr_ctrl.c copies to pAllocInfo/pClientInfo directly; not
	 * exported at 580.142 but the handler exists */
	{ 0x20801349, "FB_GET_CLIENT_ALLOCATION_INFO: direct user copy" },
	/* pointer location depends on transType (union) */
	{ 0x402c0105, "I2C_TRANSACTION: union-dependent pointer" },
	/* kernel_sm_debugger_session_ctrl.c: a user pointer in every op */
	{ 0x83de031a, "READ_SURFACE: pointer per op" },
	{ 0x83de031b, "WRITE_SURFACE: pointer per op" },
};

/* ------------------------------------------------------------------------ */
/* Lookups                                                                  */
/* ------------------------------------------------------------------------ */

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Every table starts with a uint32_t key, so one comparator serves all. */
static int cmp_u32_key(const void *key, const void *elem)
{
	uint32_t a = *(const uint32_t *)key;
	uint32_t b = *(const uint32_t *)elem;

	return (a > b) - (a < b);
}

const struct rm_class_info *rm_class_lookup(uint32_t cls)
{
	return bsearch(&cls, class_table, ARRAY_LEN(class_table),
		       sizeof(class_table[0]), cmp_u32_key);
}

const struct rm_ctrl_info *rm_ctrl_lookup(uint32_t cmd)
{
	return bsearch(&cmd, ctrl_table, ARRAY_LEN(ctrl_table),
		       sizeof(ctrl_table[0]), cmp_u32_key);
}

bool rm_ctrl_has_unrelocatable_pointers(uint32_t cmd)
{
	const struct rm_ctrl_info *ci;

	if (bsearch(&cmd, unreloc_table, ARRAY_LEN(unreloc_table),
		    sizeof(unreloc_table[0]), cmp_u32_key))
		return true;
	/* Defensive: a row that claims more pointers than the struct can
	 * hold cannot be relocated completely. */
	ci = rm_ctrl_lookup(cmd);
	return ci && ci->n_embedded > RM_EMBEDDED_MAX_PTRS;
}

size_t rm_class_table_size(void)
{
	return ARRAY_LEN(class_table);
}

const struct rm_class_info *rm_class_table_at(size_t i)
{
	return i < ARRAY_LEN(class_table) ? &class_table[i] : NULL;
}

size_t rm_ctrl_table_size(void)
{
	return ARRAY_LEN(ctrl_table);
}

const struct rm_ctrl_info *rm_ctrl_table_at(size_t i)
{
	return i < ARRAY_LEN(ctrl_table) ? &ctrl_table[i] : NULL;
}
