/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest.c - checks that gs-fakedrv behaves like the driver it fakes.
 *
 * Run inside with-fake-nvidia (run-selftest.sh does it). Every check reads
 * the fake's own account from $GS_FAKE_STATS, the same way sandbox tests do.
 * Expects the fake started with --vidmem 4g --gpus 1 --channels 64.
 * Prints "ok"/"FAIL" per check and ends with "N passed, M failed".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_rm.h"

#define GIB (1ull << 30)
#define MIB (1ull << 20)
#define EXPECT_VIDMEM   (4 * GIB)
#define EXPECT_CHANNELS 64u
/* How long to wait for an asynchronous FUSE release to show in the stats. */
#define RELEASE_WAIT_MS 2000
#define POLL_STEP_MS    10
/* Location "PCI" (sysmem) in NVOS32 attr bits 26:25. */
#define ATTR_LOCATION_PCI (1u << NVOS32_ATTR_LOCATION_SHIFT)
/* A control nobody implements: the fake must accept and ignore it. */
#define UNKNOWN_CTRL_CMD  0x20800110u
#define UNKNOWN_CLASS     0xc639u
#define UVM_TEST_PARAMS   16u
/* A UVM command the fake does not model (uvm_ioctl.h). */
#define UVM_SET_PREFERRED_LOCATION 42u
#define CHECK_VERSION_SIZE 72u
/* An owner tag, as CUDA puts the client handle there. */
#define TEST_OWNER        0x5e1f7e57u

static int passed, failed;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%s - ", ok ? "ok" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (ok)
		passed++;
	else
		failed++;
	fflush(stdout);
}

/* ---- stats -------------------------------------------------------------- */

static int64_t stat_get(const char *key)
{
	const char *path = getenv("GS_FAKE_STATS");
	char line[256], k[128];
	unsigned long long v;
	int64_t out = -1;
	FILE *f = path ? fopen(path, "r") : NULL;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %llu", k, &v) == 2 && strcmp(k, key) == 0)
			out = (int64_t)v;
	fclose(f);
	return out;
}

/* Releases reach the fake asynchronously; poll briefly for a value. */
static int64_t stat_wait(const char *key, int64_t want)
{
	int64_t v = stat_get(key);
	for (int ms = 0; v != want && ms < RELEASE_WAIT_MS; ms += POLL_STEP_MS) {
		struct timespec ts = { 0, POLL_STEP_MS * 1000000L };
		nanosleep(&ts, NULL);
		v = stat_get(key);
	}
	return v;
}

/* ---- raw calls ---------------------------------------------------------- */

static int nv_ioctl(int fd, uint32_t nr, void *arg, size_t size)
{
	return ioctl(fd, NV_IOC_WORD(nr, size), arg);
}

/* NVOS64 alloc with paramsSize 0, as CUDA does. */
static nv_status_t alloc64(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
			   uint32_t cls, void *params)
{
	struct nvos64 a = { .h_root = hc, .h_object_parent = hp, .h_object_new = *hn,
			    .h_class = cls, .p_alloc_parms = (uintptr_t)params };
	if (nv_ioctl(fd, NV_ESC_RM_ALLOC, &a, sizeof(a)) != 0)
		return NV_ERR_GENERIC;
	*hn = a.h_object_new;
	return a.status;
}

static nv_status_t alloc21(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
			   uint32_t cls, void *params)
{
	struct nvos21 a = { .h_root = hc, .h_object_parent = hp, .h_object_new = *hn,
			    .h_class = cls, .p_alloc_parms = (uintptr_t)params };
	if (nv_ioctl(fd, NV_ESC_RM_ALLOC, &a, sizeof(a)) != 0)
		return NV_ERR_GENERIC;
	*hn = a.h_object_new;
	return a.status;
}

static nv_status_t rm_free(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t h)
{
	struct nvos00 f = { .h_root = hc, .h_object_parent = hp, .h_object_old = h };
	if (nv_ioctl(fd, NV_ESC_RM_FREE, &f, sizeof(f)) != 0)
		return NV_ERR_GENERIC;
	return f.status;
}

static nv_status_t control(int fd, nv_handle_t hc, nv_handle_t ho, uint32_t cmd,
			   uint32_t flags, void *params, uint32_t size)
{
	struct nvos54 c = { .h_client = hc, .h_object = ho, .cmd = cmd, .flags = flags,
			    .params = (uintptr_t)params, .params_size = size };
	if (nv_ioctl(fd, NV_ESC_RM_CONTROL, &c, sizeof(c)) != 0)
		return NV_ERR_GENERIC;
	return c.status;
}

static nv_status_t dup_obj(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
			   nv_handle_t hcs, nv_handle_t hos)
{
	struct nvos55 d = { .h_client = hc, .h_parent = hp, .h_object = *hn,
			    .h_client_src = hcs, .h_object_src = hos };
	if (nv_ioctl(fd, NV_ESC_RM_DUP_OBJECT, &d, sizeof(d)) != 0)
		return NV_ERR_GENERIC;
	*hn = d.h_object;
	return d.status;
}

static struct nv_memory_allocation_params vidmem_params(uint64_t size)
{
	struct nv_memory_allocation_params p;
	memset(&p, 0, sizeof(p));
	p.owner = TEST_OWNER;
	p.size = size;
	return p;
}

static nv_status_t alloc_vidmem(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
				uint64_t size)
{
	struct nv_memory_allocation_params p = vidmem_params(size);
	return alloc64(fd, hc, hp, hn, NV01_MEMORY_LOCAL_USER, &p);
}

static int open_ctl(void)
{
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("open /dev/nvidiactl");
		exit(1);
	}
	return fd;
}

/* ---- the checks --------------------------------------------------------- */

int main(void)
{
	if (!getenv("GS_FAKE_STATS")) {
		fprintf(stderr, "fake_selftest: run me under with-fake-nvidia\n");
		return 2;
	}
	check(stat_get("gpu0.vidmem_total") == (int64_t)EXPECT_VIDMEM, "stats: gpu0.vidmem_total is 4 GiB");

	int fd = open_ctl();
	check(stat_get("files_open") == 1, "stats: files_open counts the open nvidiactl");

	/* The supervisor watches each open file with epoll. */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	check(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0, "epoll_ctl(ADD) on nvidiactl succeeds");
	check(epoll_wait(ep, &ev, 1, 0) == 0, "an idle nvidiactl reports no events");
	close(ep);

	/* Client: RM picks the handle and forces the class to 0x41. */
	struct nvos64 ca = { .h_class = NV01_ROOT };
	check(nv_ioctl(fd, NV_ESC_RM_ALLOC, &ca, sizeof(ca)) == 0 && ca.status == NV_OK &&
	      ca.h_object_new != 0, "client alloc (hRoot 0) gives a handle");
	check(ca.h_class == NV01_ROOT_CLIENT, "client class copied back as 0x41");
	nv_handle_t hc = ca.h_object_new;
	check(stat_get("clients_live") == 1, "stats: clients_live 1");

	nv_handle_t hdev = 0xd0000001u, hsub = 0xd0000002u, hmem = 0xd0000003u;
	struct nv0080_alloc_params dp = { .device_id = 0 };
	check(alloc64(fd, hc, hc, &hdev, NV01_DEVICE_0, &dp) == NV_OK, "device 0x80 deviceId 0");
	nv_handle_t hbad = 0;
	dp.device_id = 1;
	check(alloc64(fd, hc, hc, &hbad, NV01_DEVICE_0, &dp) == NV_ERR_INVALID_ARGUMENT,
	      "device with deviceId past the GPU count -> INVALID_ARGUMENT");
	struct nv2080_alloc_params sp = { 0 };
	check(alloc64(fd, hc, hdev, &hsub, NV20_SUBDEVICE_0, &sp) == NV_OK, "subdevice 0x2080");

	struct nv_memory_allocation_params mp = vidmem_params(GIB);
	check(alloc64(fd, hc, hsub, &hmem, NV01_MEMORY_LOCAL_USER, &mp) == NV_OK,
	      "0x40 vidmem 1 GiB (NVOS64, paramsSize 0)");
	check(mp.size == GIB && mp.limit == GIB - 1, "nested OUT: size and limit written back");
	check(stat_get("gpu0.vidmem_used") == (int64_t)GIB, "stats: gpu0.vidmem_used == 1 GiB");

	nv_handle_t hsmall = 0;
	mp = vidmem_params(MIB + 1);
	check(alloc64(fd, hc, hdev, &hsmall, NV01_MEMORY_LOCAL_USER, &mp) == NV_OK &&
	      mp.size == 2 * MIB && hsmall != 0, "odd size rounds up to 2 MiB; fake picks a handle");
	check(stat_get("gpu0.vidmem_used") == (int64_t)(GIB + 2 * MIB), "stats: rounded size charged");
	check(rm_free(fd, hc, hdev, hsmall) == NV_OK, "free the 2 MiB allocation");

	int64_t failed_before = stat_get("allocs_failed");
	nv_handle_t hbig = 0;
	check(alloc_vidmem(fd, hc, hdev, &hbig, EXPECT_VIDMEM - GIB + 2 * MIB) == NV_ERR_NO_MEMORY,
	      "vidmem beyond what is free -> NV_ERR_NO_MEMORY (0x51)");
	check(stat_get("gpu0.vidmem_used") == (int64_t)GIB, "a refused alloc charges nothing");
	check(stat_get("allocs_failed") == failed_before + 1, "stats: allocs_failed counts it");
	hbig = 0;
	check(alloc_vidmem(fd, hc, hdev, &hbig, EXPECT_VIDMEM - GIB) == NV_OK &&
	      stat_get("gpu0.vidmem_used") == (int64_t)EXPECT_VIDMEM, "exactly what is free fits");
	check(rm_free(fd, hc, hc, hbig) == NV_OK &&
	      stat_get("gpu0.vidmem_peak") == (int64_t)EXPECT_VIDMEM, "stats: vidmem_peak keeps the high-water mark");

	/* Argument checks of the memory class. */
	hbad = 0;
	mp = vidmem_params(GIB);
	mp.attr = ATTR_LOCATION_PCI;
	check(alloc64(fd, hc, hdev, &hbad, NV01_MEMORY_LOCAL_USER, &mp) == NV_ERR_INVALID_ARGUMENT,
	      "0x40 with location PCI -> INVALID_ARGUMENT");
	mp = vidmem_params(GIB);
	mp.flags = NVOS32_ALLOC_FLAGS_VIRTUAL;
	check(alloc64(fd, hc, hdev, &hbad, NV01_MEMORY_LOCAL_USER, &mp) == NV_ERR_INVALID_ARGUMENT,
	      "0x40 with VIRTUAL flag -> INVALID_ARGUMENT");
	check(alloc_vidmem(fd, hc, hdev, &hbad, 0) == NV_ERR_INVALID_ARGUMENT, "0x40 size 0 -> INVALID_ARGUMENT");
	check(alloc64(fd, hc, hdev, &hbad, NV01_MEMORY_LOCAL_USER, NULL) == NV_ERR_INVALID_ARGUMENT,
	      "0x40 without params -> INVALID_ARGUMENT");
	check(alloc_vidmem(fd, hc, 0xdeadbeefu, &hbad, GIB) == NV_ERR_INVALID_OBJECT_PARENT,
	      "unknown parent -> INVALID_OBJECT_PARENT");
	nv_handle_t hdupe = hmem;
	check(alloc_vidmem(fd, hc, hdev, &hdupe, 2 * MIB) == NV_ERR_INSUFFICIENT_RESOURCES,
	      "handle already in use -> INSUFFICIENT_RESOURCES");
	check(alloc_vidmem(fd, 0xc1d0ffffu, hdev, &hbad, 2 * MIB) == NV_ERR_INVALID_CLIENT,
	      "unknown client -> INVALID_CLIENT");
	struct nv_memory_allocation_params sysp = vidmem_params(64 * MIB);
	sysp.attr = ATTR_LOCATION_PCI;
	nv_handle_t hsys = 0, hvirt = 0;
	check(alloc64(fd, hc, hdev, &hsys, NV01_MEMORY_SYSTEM, &sysp) == NV_OK, "0x3e sysmem alloc");
	struct nv_memory_allocation_params vp = vidmem_params(GIB);
	check(alloc64(fd, hc, hdev, &hvirt, NV50_MEMORY_VIRTUAL, &vp) == NV_OK, "0x50a0 virtual alloc");
	check(stat_get("gpu0.vidmem_used") == (int64_t)GIB, "sysmem and VA reservations charge no vidmem");

	/* NVOS21 is the same call with the status at 28. */
	nv_handle_t h21 = 0;
	mp = vidmem_params(4 * MIB);
	check(alloc21(fd, hc, hdev, &h21, NV01_MEMORY_LOCAL_USER, &mp) == NV_OK &&
	      stat_get("gpu0.vidmem_used") == (int64_t)(GIB + 4 * MIB), "NVOS21 alloc of 0x40");
	check(rm_free(fd, hc, hdev, h21) == NV_OK, "free it");
	struct { struct nvos64 a; uint8_t extra[8]; } odd = { .a = { .h_root = hc } };
	check(ioctl(fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(odd)), &odd) == -1 && errno == EINVAL,
	      "RM_ALLOC of a size other than 32/48 -> -EINVAL");

	/* Forged request words: the driver keys on nr and size only. */
	nv_handle_t hforge = 0;
	mp = vidmem_params(2 * MIB);
	struct nvos64 fa = { .h_root = hc, .h_object_parent = hdev, .h_class = NV01_MEMORY_LOCAL_USER,
			     .p_alloc_parms = (uintptr_t)&mp, .status = NV_ERR_GENERIC };
	check(ioctl(fd, 0x0030002Bu, &fa) == 0 && fa.status == NV_OK && fa.h_object_new != 0,
	      "RM_ALLOC through a word with no direction bits (0x0030002B)");
	hforge = fa.h_object_new;
	check(rm_free(fd, hc, hdev, hforge) == NV_OK, "free it");
	memset(&fa, 0, sizeof(fa));
	fa.h_class = NV01_ROOT;
	fa.status = NV_ERR_GENERIC;
	check(ioctl(fd, 0x80307A2Bu, &fa) == 0 && fa.status == NV_OK &&
	      rm_free(fd, fa.h_object_new, fa.h_object_new, fa.h_object_new) == NV_OK,
	      "client alloc through a read-only 'z' word (0x80307A2B)");

	/* Controls. */
	struct nv2080_fb_get_info_v2_params fb;
	memset(&fb, 0, sizeof(fb));
	fb.list_size = 3;
	fb.list[0].index = NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE;
	fb.list[1].index = NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE;
	fb.list[2].index = NV2080_CTRL_FB_INFO_INDEX_HEAP_SIZE;
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_FB_GET_INFO_V2, 0, &fb, sizeof(fb)) == NV_OK &&
	      fb.list[0].data == EXPECT_VIDMEM / 1024 && fb.list[2].data == EXPECT_VIDMEM / 1024 &&
	      fb.list[1].data == (EXPECT_VIDMEM - GIB) / 1024, "FB_GET_INFO_V2: total and free in KiB");
	struct nv2080_fb_info_entry l1[2] = { { NV2080_CTRL_FB_INFO_INDEX_TOTAL_RAM_SIZE, 0 },
					 { NV2080_CTRL_FB_INFO_INDEX_HEAP_FREE, 0 } };
	struct nv2080_fb_get_info_v1_params v1 = { .list_size = 2, .list = (uintptr_t)l1 };
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_FB_GET_INFO, 0, &v1, sizeof(v1)) == NV_OK &&
	      l1[0].data == EXPECT_VIDMEM / 1024 && l1[1].data == (EXPECT_VIDMEM - GIB) / 1024,
	      "FB_GET_INFO (V1) fills the list behind its pointer");
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_FB_GET_INFO_V2, 0, (void *)16, sizeof(fb)) ==
	      NV_ERR_INVALID_ADDRESS, "control params at a bad address -> INVALID_ADDRESS");
	struct nv2080_gpu_get_pid_info *pi = calloc(1, sizeof(*pi));
	pi->count = 1;
	pi->list[0].pid = (uint32_t)getpid();
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_GPU_GET_PID_INFO, 0, pi, sizeof(*pi)) == NV_OK &&
	      pi->list[0].result == NV_OK && pi->list[0].mem_private == GIB,
	      "GPU_GET_PID_INFO: our pid holds 1 GiB");
	free(pi);
	uint32_t junk = 0x1234;
	check(control(fd, hc, hsub, UNKNOWN_CTRL_CMD, 0, &junk, sizeof(junk)) == NV_OK && junk == 0x1234,
	      "unknown control: NV_OK, params untouched");
	check(control(fd, hc, hsub, UNKNOWN_CTRL_CMD | NV_CTRL_GSS_LEGACY_MASK, 0, &junk, sizeof(junk)) ==
	      NV_ERR_NOT_SUPPORTED, "control with bit 15 -> NOT_SUPPORTED");
	check(control(fd, hc, hsub, UNKNOWN_CTRL_CMD, NVOS54_FLAGS_FINN_SERIALIZED, &junk, sizeof(junk)) ==
	      NV_ERR_NOT_SUPPORTED, "FINN-serialized control -> NOT_SUPPORTED");

	/* VID_HEAP_CONTROL: the second vidmem path. */
	struct nvos32 vh;
	memset(&vh, 0, sizeof(vh));
	vh.h_root = hc;
	vh.h_object_parent = hdev;
	vh.function = NVOS32_FUNCTION_ALLOC_SIZE;
	vh.data.alloc_size.owner = TEST_OWNER;
	vh.data.alloc_size.size = 64 * MIB;
	check(nv_ioctl(fd, NV_ESC_RM_VID_HEAP_CONTROL, &vh, sizeof(vh)) == 0 && vh.status == NV_OK &&
	      vh.data.alloc_size.h_memory != 0 && vh.data.alloc_size.size == 64 * MIB,
	      "VID_HEAP_CONTROL ALLOC_SIZE 64 MiB vidmem");
	check(stat_get("gpu0.vidmem_used") == (int64_t)(GIB + 64 * MIB), "stats: VID_HEAP alloc charged");
	nv_handle_t hvh = vh.data.alloc_size.h_memory;
	memset(&vh, 0, sizeof(vh));
	vh.h_root = hc;
	vh.h_object_parent = hdev;
	vh.function = NVOS32_FUNCTION_INFO;
	check(nv_ioctl(fd, NV_ESC_RM_VID_HEAP_CONTROL, &vh, sizeof(vh)) == 0 && vh.status == NV_OK &&
	      vh.total == EXPECT_VIDMEM && vh.free == EXPECT_VIDMEM - GIB - 64 * MIB,
	      "VID_HEAP_CONTROL INFO: total and free");
	memset(&vh, 0, sizeof(vh));
	vh.h_root = hc;
	vh.h_object_parent = hdev;
	vh.function = NVOS32_FUNCTION_FREE;
	vh.data.free.h_memory = hvh;
	check(nv_ioctl(fd, NV_ESC_RM_VID_HEAP_CONTROL, &vh, sizeof(vh)) == 0 && vh.status == NV_OK &&
	      stat_get("gpu0.vidmem_used") == (int64_t)GIB, "VID_HEAP_CONTROL FREE releases it");

	/* DUP: one allocation, two handles. */
	nv_handle_t hdup = 0;
	check(dup_obj(fd, hc, hdev, &hdup, hc, hmem) == NV_OK && hdup != 0, "DUP_OBJECT of the 1 GiB memory");
	check(stat_get("gpu0.vidmem_used") == (int64_t)GIB, "a dup charges nothing more");
	check(rm_free(fd, hc, hsub, hmem) == NV_OK && stat_get("gpu0.vidmem_used") == (int64_t)GIB,
	      "freeing the original keeps the memory while the dup lives");
	check(rm_free(fd, hc, hdev, hdup) == NV_OK && stat_get("gpu0.vidmem_used") == 0,
	      "freeing the last handle releases it");
	check(rm_free(fd, hc, hdev, hdup) == NV_ERR_OBJECT_NOT_FOUND, "double free -> OBJECT_NOT_FOUND");

	/* XFER: the real argument behind a pointer. */
	nv_handle_t hx = 0;
	mp = vidmem_params(256 * MIB);
	struct nvos64 xa = { .h_root = hc, .h_object_parent = hdev, .h_class = NV01_MEMORY_LOCAL_USER,
			     .p_alloc_parms = (uintptr_t)&mp, .status = NV_ERR_GENERIC };
	struct nv_ioctl_xfer x = { .cmd = NV_ESC_RM_ALLOC, .size = sizeof(xa), .ptr = (uintptr_t)&xa };
	check(nv_ioctl(fd, NV_ESC_IOCTL_XFER_CMD, &x, sizeof(x)) == 0 && xa.status == NV_OK &&
	      xa.h_object_new != 0 && mp.size == 256 * MIB, "XFER-wrapped RM_ALLOC of 256 MiB");
	hx = xa.h_object_new;
	check(stat_get("gpu0.vidmem_used") == (int64_t)(256 * MIB), "stats: XFER alloc charged");
	struct nvos00 xf = { .h_root = hc, .h_object_parent = hdev, .h_object_old = hx };
	x = (struct nv_ioctl_xfer){ .cmd = NV_ESC_RM_FREE, .size = sizeof(xf), .ptr = (uintptr_t)&xf };
	check(nv_ioctl(fd, NV_ESC_IOCTL_XFER_CMD, &x, sizeof(x)) == 0 && xf.status == NV_OK &&
	      stat_get("gpu0.vidmem_used") == 0, "XFER-wrapped RM_FREE");
	x = (struct nv_ioctl_xfer){ .cmd = NV_ESC_IOCTL_XFER_CMD, .size = sizeof(x), .ptr = (uintptr_t)&x };
	check(nv_ioctl(fd, NV_ESC_IOCTL_XFER_CMD, &x, sizeof(x)) == -1 && errno == EINVAL,
	      "nested XFER -> -EINVAL");

	/* Channels: a group, channels until the pool runs dry. */
	uint8_t cgp[NV_CHANNEL_GROUP_ALLOC_PARAMS_SIZE] = { 0 };
	uint8_t chp[NV_CHANNEL_ALLOC_PARAMS_SIZE] = { 0 };
	nv_handle_t htsg = 0;
	check(alloc64(fd, hc, hdev, &htsg, KEPLER_CHANNEL_GROUP_A, cgp) == NV_OK, "channel group 0xa06c");
	nv_handle_t hch[EXPECT_CHANNELS];
	unsigned nch = 0;
	for (; nch < EXPECT_CHANNELS; nch++) {
		hch[nch] = 0;
		if (alloc64(fd, hc, htsg, &hch[nch], HOPPER_CHANNEL_GPFIFO_A, chp) != NV_OK)
			break;
	}
	check(nch == EXPECT_CHANNELS && stat_get("gpu0.channels_live") == EXPECT_CHANNELS,
	      "%u channels 0xc86f fill the pool", EXPECT_CHANNELS);
	nv_handle_t hextra = 0;
	check(alloc64(fd, hc, htsg, &hextra, HOPPER_CHANNEL_GPFIFO_A, chp) == NV_ERR_INSUFFICIENT_RESOURCES,
	      "one more channel -> INSUFFICIENT_RESOURCES");
	struct nva06c_gpfifo_schedule_params sch = { .enable = 1 };
	check(control(fd, hc, htsg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, 0, &sch, sizeof(sch)) == NV_OK &&
	      stat_get("gpu0.channel_groups_scheduled") == 1, "GPFIFO_SCHEDULE recorded");
	struct nv2080_fifo_disable_channels dc;
	memset(&dc, 0, sizeof(dc));
	dc.b_disable = 1;
	dc.num_channels = 2;
	dc.h_client_list[0] = dc.h_client_list[1] = hc;
	dc.h_channel_list[0] = hch[0];
	dc.h_channel_list[1] = hch[1];
	check(control(fd, hc, hsub, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, 0, &dc, sizeof(dc)) == NV_OK &&
	      stat_get("gpu0.channels_disabled") == 2, "FIFO_DISABLE_CHANNELS recorded");
	check(rm_free(fd, hc, hdev, htsg) == NV_OK && stat_get("gpu0.channels_live") == 0 &&
	      stat_get("gpu0.channel_groups_live") == 0 && stat_get("gpu0.channels_peak") == EXPECT_CHANNELS,
	      "freeing the group frees its channels (subtree)");

	/* A channel straight under the device gets a group RM makes for it
	 * (kernel_channel.c), freed with it; a dup keeps a group alive. */
	nv_handle_t hlone = 0;
	check(alloc64(fd, hc, hdev, &hlone, HOPPER_CHANNEL_GPFIFO_A, chp) == NV_OK &&
	      stat_get("gpu0.channel_groups_live") == 1, "a lone channel brings its own group");
	check(rm_free(fd, hc, hdev, hlone) == NV_OK && stat_get("gpu0.channel_groups_live") == 0,
	      "the lone channel's group goes with it");
	nv_handle_t hg2 = 0, hg2dup = 0;
	check(alloc64(fd, hc, hdev, &hg2, KEPLER_CHANNEL_GROUP_A, cgp) == NV_OK &&
	      dup_obj(fd, hc, hdev, &hg2dup, hc, hg2) == NV_OK && rm_free(fd, hc, hdev, hg2) == NV_OK &&
	      stat_get("gpu0.channel_groups_live") == 1, "a dup keeps the group after its handle is freed");
	check(control(fd, hc, hg2dup, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, 0, &sch, sizeof(sch)) == NV_OK &&
	      stat_get("gpu0.channel_groups_scheduled") == 1, "scheduling through the dup counts once");
	check(rm_free(fd, hc, hdev, hg2dup) == NV_OK && stat_get("gpu0.channel_groups_live") == 0,
	      "the group goes with its last handle");

	/* Legacy RM_ALLOC_OBJECT. */
	struct nvos05 ao = { .h_root = hc, .h_object_parent = hdev, .h_class = NV01_MEMORY_LOCAL_USER };
	check(nv_ioctl(fd, NV_ESC_RM_ALLOC_OBJECT, &ao, sizeof(ao)) == 0 && ao.status == NV_ERR_INVALID_ARGUMENT,
	      "RM_ALLOC_OBJECT of a memory class -> INVALID_ARGUMENT");
	ao = (struct nvos05){ .h_root = hc, .h_object_parent = hdev, .h_class = UNKNOWN_CLASS };
	check(nv_ioctl(fd, NV_ESC_RM_ALLOC_OBJECT, &ao, sizeof(ao)) == 0 && ao.status == NV_OK &&
	      ao.h_object_new != 0, "RM_ALLOC_OBJECT of a param-less class");

	/* Freeing the device takes everything under it. */
	nv_handle_t hm2 = 0;
	check(alloc_vidmem(fd, hc, hsub, &hm2, 512 * MIB) == NV_OK, "512 MiB under the subdevice");
	check(rm_free(fd, hc, hc, hdev) == NV_OK && stat_get("gpu0.vidmem_used") == 0 &&
	      stat_get("objects_live") == 0, "freeing the device frees its subtree; used back to 0");

	/* Clients belong to the open file. */
	hdev = 0xd0000011u;
	dp.device_id = 0;
	check(alloc64(fd, hc, hc, &hdev, NV01_DEVICE_0, &dp) == NV_OK, "a new device");
	nv_handle_t hkeep = 0;
	check(alloc_vidmem(fd, hc, hdev, &hkeep, GIB) == NV_OK, "1 GiB to be freed by close()");
	int fd2 = open_ctl();
	nv_handle_t hc2 = 0;
	check(alloc64(fd2, 0, 0, &hc2, NV01_ROOT, NULL) == NV_OK && hc2 != hc, "second file: its own client");
	check(control(fd2, hc, hc, UNKNOWN_CTRL_CMD, 0, NULL, 0) == NV_ERR_INVALID_CLIENT,
	      "control on the first file's client via another file -> INVALID_CLIENT");
	hbad = 0;
	check(alloc_vidmem(fd2, hc, hdev, &hbad, 2 * MIB) == NV_ERR_INVALID_CLIENT,
	      "alloc on the first file's client via another file -> INVALID_CLIENT");
	check(rm_free(fd2, hc, hc, hc) == NV_ERR_INVALID_CLIENT, "free of it via another file -> INVALID_CLIENT");
	int fdd = dup(fd);
	check(control(fdd, hc, hc, UNKNOWN_CTRL_CMD, 0, NULL, 0) == NV_OK, "a dup of the same open file may use it");

	/* Another process through the same open file, from its own memory:
	 * what a supervisor holding a pidfd_getfd copy does. */
	pid_t child = fork();
	if (child == 0) {
		nv_handle_t h = 0;
		_exit(alloc_vidmem(fdd, hc, hdev, &h, 128 * MIB) == NV_OK ? 0 : 1);
	}
	int wst = 0;
	waitpid(child, &wst, 0);
	check(WIFEXITED(wst) && WEXITSTATUS(wst) == 0 &&
	      stat_get("gpu0.vidmem_used") == (int64_t)(GIB + 128 * MIB),
	      "another process allocates on the client through the same open file");

	/* Device fds take only event allocs, not ctl escapes. */
	int gfd = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	uint32_t cj = 0;
	check(gfd >= 0 && control(gfd, hc, hc, UNKNOWN_CTRL_CMD, 0, &cj, sizeof(cj)) == NV_ERR_GENERIC &&
	      errno == EINVAL, "RM_CONTROL on /dev/nvidia0 -> -EINVAL");
	struct nv_card_info card[2];
	memset(card, 0xa5, sizeof(card));
	check(nv_ioctl(fd, NV_ESC_CARD_INFO, card, sizeof(card)) == 0 && card[0].valid == 1 &&
	      card[0].minor_number == 0 && card[0].gpu_id != 0 && card[1].valid == 0,
	      "CARD_INFO lists the one GPU (minor 0) and clears the rest");
	uint8_t raw[CHECK_VERSION_SIZE];
	memset(raw, 0xa5, sizeof(raw));
	check(nv_ioctl(fd, NV_ESC_STATUS_CODE, raw, sizeof(raw)) == 0 && raw[0] == 0xa5 &&
	      raw[CHECK_VERSION_SIZE - 1] == 0xa5, "other escapes (STATUS_CODE) return 0, buffer untouched");
	/* The version query, as the driver answers it (fake_rm.c). */
	const char *want = getenv("GS_FAKE_DRIVER_VERSION");
	struct nv_ioctl_rm_api_version ver = { .cmd = NV_RM_API_VERSION_CMD_QUERY };
	check(want && nv_ioctl(fd, NV_ESC_CHECK_VERSION_STR, &ver, sizeof(ver)) == 0 &&
	      ver.reply == NV_RM_API_VERSION_REPLY_RECOGNIZED && strcmp(ver.version_string, want) == 0,
	      "CHECK_VERSION_STR (query) answers the configured version");
	struct nv_ioctl_rm_api_version strict = { .cmd = 0, .version_string = "1.0" };
	check(nv_ioctl(fd, NV_ESC_CHECK_VERSION_STR, &strict, sizeof(strict)) != 0 && errno == EINVAL,
	      "CHECK_VERSION_STR (strict) of another version: -EINVAL");
	check(nv_ioctl(fd, NV_ESC_CHECK_VERSION_STR, &ver, sizeof(ver) - 1) != 0 && errno == EINVAL,
	      "CHECK_VERSION_STR of the wrong size: -EINVAL");
	check(gfd >= 0 && nv_ioctl(gfd, NV_ESC_CHECK_VERSION_STR, &ver, sizeof(ver)) != 0 &&
	      errno == EINVAL, "CHECK_VERSION_STR on a GPU node: -EINVAL (control device only)");
	close(gfd);

	/* UVM: INITIALIZE answers NV_OK in the struct; a command the fake
	 * does not model returns 0 and changes nothing (fake_uvm.c models
	 * the external mappings, checked in uvm_checks()). */
	int ufd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	struct uvm_initialize_params uinit = { .rm_status = NV_ERR_GENERIC };
	uint8_t up[UVM_TEST_PARAMS];
	memset(up, 0xa5, sizeof(up));
	check(ufd >= 0 && ioctl(ufd, UVM_INITIALIZE, &uinit) == 0 && uinit.rm_status == NV_OK &&
	      ioctl(ufd, UVM_SET_PREFERRED_LOCATION, up) == 0 && up[0] == 0xa5 &&
	      up[UVM_TEST_PARAMS - 1] == 0xa5, "UVM_INITIALIZE: NV_OK; an unmodelled UVM ioctl: 0, untouched");
	close(ufd);

	/* Closing every reference of a file frees its clients. */
	close(fd);
	check(stat_get("clients_live") == 2, "one reference still open: clients stay");
	close(fdd);
	check(stat_wait("clients_live", 1) == 1 && stat_wait("gpu0.vidmem_used", 0) == 0,
	      "last close frees the file's clients and their memory");
	close(fd2);
	check(stat_wait("clients_live", 0) == 0 && stat_wait("objects_live", 0) == 0 &&
	      stat_wait("files_open", 0) == 0, "all closed: no clients, objects or open files");

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
