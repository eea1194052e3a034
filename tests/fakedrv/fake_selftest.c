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
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_rm.h"
#include "fake_selftest.h"
#include "nvuvm_abi.h"

/* Generated handles tried for RM's group of a lone channel. */
#define INTERNAL_GROUP_TRIES 4096u  /* past the pool-filling channels of this client */
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

void check(int ok, const char *fmt, ...)
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

int64_t stat_get(const char *key)
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
int64_t stat_wait(const char *key, int64_t want)
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

int nv_ioctl(int fd, uint32_t nr, void *arg, size_t size)
{
	return ioctl(fd, NV_IOC_WORD(nr, size), arg);
}

/* NVOS64 alloc with paramsSize 0, as CUDA does. */
nv_status_t alloc64(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
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

nv_status_t rm_free(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t h)
{
	struct nvos00 f = { .h_root = hc, .h_object_parent = hp, .h_object_old = h };
	if (nv_ioctl(fd, NV_ESC_RM_FREE, &f, sizeof(f)) != 0)
		return NV_ERR_GENERIC;
	return f.status;
}

nv_status_t control(int fd, nv_handle_t hc, nv_handle_t ho, uint32_t cmd,
			   uint32_t flags, void *params, uint32_t size)
{
	struct nvos54 c = { .h_client = hc, .h_object = ho, .cmd = cmd, .flags = flags,
			    .params = (uintptr_t)params, .params_size = size };
	if (nv_ioctl(fd, NV_ESC_RM_CONTROL, &c, sizeof(c)) != 0)
		return NV_ERR_GENERIC;
	return c.status;
}

nv_status_t dup_obj(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
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

nv_status_t alloc_vidmem(int fd, nv_handle_t hc, nv_handle_t hp, nv_handle_t *hn,
				uint64_t size)
{
	struct nv_memory_allocation_params p = vidmem_params(size);
	return alloc64(fd, hc, hp, hn, NV01_MEMORY_LOCAL_USER, &p);
}

int open_ctl(void)
{
	int fd = open("/dev/nvidiactl", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("open /dev/nvidiactl");
		exit(1);
	}
	return fd;
}

/* ---- UVM external mappings (fake_uvm.c) --------------------------------- */

int driver_branch(void)
{
	const char *v = getenv("GS_FAKE_DRIVER_VERSION");
	return v ? atoi(v) : 580;
}

uint32_t uvm_max_gpus(void)
{
	return driver_branch() >= UVM_BIG_GPU_ARRAY_BRANCH ? UVM_MAX_GPUS_570 : UVM_MAX_GPUS_535;
}

/* A UVM call: rmStatus preset to GENERIC, so an untouched struct shows. */
nv_status_t uvm_call(int ufd, uint32_t cmd, void *p, size_t status_off)
{
	nv_status_t st = NV_ERR_GENERIC;
	memcpy((uint8_t *)p + status_off, &st, sizeof(st));
	if (ioctl(ufd, cmd, p) != 0)
		return NV_ERR_GENERIC;
	memcpy(&st, (uint8_t *)p + status_off, sizeof(st));
	return st;
}

nv_status_t uvm_create(int ufd, uint64_t base, uint64_t len)
{
	struct uvm_create_external_range_params p = { .base = base, .length = len };
	return uvm_call(ufd, UVM_CREATE_EXTERNAL_RANGE, &p, offsetof(typeof(p), rm_status));
}

/* 580 and before: {base, length}; 590 on: {base}. */
nv_status_t uvm_free(int ufd, uint64_t base, uint64_t len)
{
	if (driver_branch() >= UVM_FREE_BASE_ONLY_BRANCH) {
		struct uvm_free_params_590 p = { .base = base };
		return uvm_call(ufd, UVM_FREE, &p, offsetof(typeof(p), rm_status));
	}
	struct uvm_free_params p = { .base = base, .length = len };
	return uvm_call(ufd, UVM_FREE, &p, offsetof(typeof(p), rm_status));
}

/* Map [base, base+len) of (hc, hm) at offset off on `count` GPUs, the
 * first being gpu, the next ones gpu+1... */
nv_status_t uvm_map_n(int ufd, uint64_t base, uint64_t len, uint64_t off, nv_handle_t hc,
		      nv_handle_t hm, int gpu, uint64_t count)
{
	uint32_t max = uvm_max_gpus();
	uint8_t *buf = calloc(1, UVM_MAP_EXTERNAL_SIZE(max));
	struct uvm_map_external_head *h = (void *)buf;
	struct uvm_gpu_mapping_attrs *a = (void *)(buf + sizeof(*h));
	struct uvm_map_external_tail *t = (void *)(buf + UVM_MAP_EXTERNAL_TAIL_OFF(max));

	*h = (struct uvm_map_external_head){ .base = base, .length = len, .offset = off };
	for (uint64_t i = 0; i < count && i < max; i++)
		memset(a[i].gpu_uuid, gpu + (int)i, sizeof(a[i].gpu_uuid));
	*t = (struct uvm_map_external_tail){ .gpu_count = count, .rm_ctrl_fd = -1,
					     .h_client = hc, .h_memory = hm };
	nv_status_t st = uvm_call(ufd, UVM_MAP_EXTERNAL_ALLOCATION, buf,
				  UVM_MAP_EXTERNAL_TAIL_OFF(max) + offsetof(struct uvm_map_external_tail, rm_status));
	free(buf);
	return st;
}

nv_status_t uvm_map(int ufd, uint64_t base, uint64_t len, nv_handle_t hc, nv_handle_t hm)
{
	return uvm_map_n(ufd, base, len, 0, hc, hm, UVM_GPU_A, 1);
}

int open_uvm(void)
{
	int ufd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	struct uvm_initialize_params init = { 0 };
	if (ufd < 0 || uvm_call(ufd, UVM_INITIALIZE, &init, offsetof(typeof(init), rm_status)) != NV_OK) {
		perror("open /dev/nvidia-uvm");
		exit(1);
	}
	return ufd;
}

/* A client and a device on GPU 0 through ctl file fd. */
nv_handle_t make_client(int fd, nv_handle_t *hdev)
{
	nv_handle_t hc = 0;
	struct nv0080_alloc_params dp = { .device_id = 0 };
	*hdev = 0;
	if (alloc64(fd, 0, 0, &hc, NV01_ROOT, NULL) != NV_OK ||
	    alloc64(fd, hc, hc, hdev, NV01_DEVICE_0, &dp) != NV_OK) {
		fprintf(stderr, "fake_selftest: cannot make a client and device\n");
		exit(1);
	}
	return hc;
}

bool selftest_set_euid(uid_t euid)
{
	return syscall(SYS_setresuid, (uid_t)-1, euid, (uid_t)-1) == 0;
}

void other_start_as(struct other *o, uid_t euid, const struct rs_share_policy *pol, bool whole_client)
{
	int up[2], go[2];
	if (pipe(up) || pipe(go))
		exit(1);
	o->pid = fork();
	if (o->pid == 0) {
		close(up[0]);
		close(go[1]);  /* or its own copy keeps the read below waiting */
		if (euid != (uid_t)-1 && !selftest_set_euid(euid))
			_exit(1);
		int cfd = open_ctl();
		nv_handle_t hdev, hm = 0, h[2];
		h[0] = make_client(cfd, &hdev);
		if (alloc_vidmem(cfd, h[0], hdev, &hm, UVM_MAP_BYTES) != NV_OK)
			_exit(1);
		h[1] = hm;
		struct nvos57 q = { .h_client = h[0], .h_object = whole_client ? h[0] : hm };
		if (pol)
			q.policy = *pol;
		if (pol && (nv_ioctl(cfd, NV_ESC_RM_SHARE, &q, sizeof(q)) || q.status != NV_OK))
			_exit(1);
		char c;
		_exit(write(up[1], h, sizeof(h)) == sizeof(h) && read(go[0], &c, 1) >= 0 ? 0 : 1);
	}
	nv_handle_t h[2] = { 0, 0 };
	close(up[1]);
	close(go[0]);
	if (read(up[0], h, sizeof(h)) != sizeof(h))
		h[0] = h[1] = 0;
	close(up[0]);
	o->go = go[1];
	o->hc = h[0];
	o->hm = h[1];
}

/* A process of its own making a client and 64 MiB, alive until told,
 * shared with our client share_to (0: not shared). */
void other_start(struct other *o, nv_handle_t share_to, bool whole_client)
{
	const struct rs_share_policy pol = { .target = share_to, .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
	                                     .type = RS_SHARE_TYPE_CLIENT,
	                                     .action = whole_client ? RS_SHARE_ACTION_FLAG_COMPOSE : 0 };

	other_start_as(o, (uid_t)-1, share_to ? &pol : NULL, whole_client);
}

bool other_stop(struct other *o)
{
	int st = 0;
	close(o->go);
	return waitpid(o->pid, &st, 0) == o->pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static nv_status_t share_with(int fd, nv_handle_t hc, nv_handle_t ho, nv_handle_t target, uint8_t action)
{
	struct nvos57 q = { .h_client = hc, .h_object = ho,
			    .policy = { .target = target, .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
					.type = RS_SHARE_TYPE_CLIENT, .action = action } };
	return nv_ioctl(fd, NV_ESC_RM_SHARE, &q, sizeof(q)) ? NV_ERR_GENERIC : q.status;
}

/* Share policies are the handle's, start empty unless composed, and are
 * inherited from the nearest edited ancestor (fake_share.c). */
/* RM's group of a lone channel by its generated handle (the first under
 * which a channel can be made, as a workload would guess it), with that
 * second channel made as hsecond. 0: none. */
static nv_handle_t find_internal_group(int fd, nv_handle_t hc, void *chp, nv_handle_t hsecond)
{
	for (nv_handle_t k = 0; k < INTERNAL_GROUP_TRIES; k++) {
		nv_handle_t h = FAKE_OBJECT_HANDLE_BASE + k, hn = hsecond;
		if (alloc64(fd, hc, h, &hn, HOPPER_CHANNEL_GPFIFO_A, chp) == NV_OK)
			return h;
	}
	return 0;
}

/* RM's own channel group of a lone channel (fake_chgrp.c, after
 * kernel_channel.c at 580.95.05): a handle of the client, freed with the
 * channel and freeing it, a parent for a second channel, and scheduling
 * it turns the lone channel back on. */
static void internal_group_checks(int fd, nv_handle_t hc, nv_handle_t hdev, nv_handle_t hsub, void *chp)
{
	const nv_handle_t hlone = 0x5e000001u, hsecond = 0x5e000002u;
	nv_handle_t h = hlone;

	uint32_t told = 0xffffffffu;
	memset((uint8_t *)chp + NV_CHANNEL_ALLOC_PARAMS_PHYS_GROUP_OFF, 0xff, sizeof(told));
	check(alloc64(fd, hc, hdev, &h, HOPPER_CHANNEL_GPFIFO_A, chp) == NV_OK, "a lone channel");
	memcpy(&told, (uint8_t *)chp + NV_CHANNEL_ALLOC_PARAMS_PHYS_GROUP_OFF, sizeof(told));
	check(told == 0, "its params do not tell RM's group (hPhysChannelGroup 0x%x)", told);
	nv_handle_t hg = find_internal_group(fd, hc, chp, hsecond);
	check(hg != 0 && stat_get("gpu0.channels_live") == 2 && stat_get("gpu0.channel_groups_live") == 1,
	      "a second channel under RM's group of a lone channel (0x%x), no group more", hg);
	check(rm_free(fd, hc, hdev, hlone) == NV_OK && stat_get("gpu0.channels_live") == 0 &&
	      stat_get("gpu0.channel_groups_live") == 0, "freeing the lone channel frees RM's group and "
	      "the channel under it");
	h = hlone;
	check(alloc64(fd, hc, hdev, &h, HOPPER_CHANNEL_GPFIFO_A, chp) == NV_OK, "a lone channel again");
	hg = find_internal_group(fd, hc, chp, hsecond);
	struct nv2080_fifo_disable_channels dc = { .b_disable = 1, .num_channels = 1 };
	dc.h_client_list[0] = hc;
	dc.h_channel_list[0] = hlone;
	struct nva06c_gpfifo_schedule_params sch = { .enable = 1 };
	check(hg && control(fd, hc, hsub, NV2080_CTRL_CMD_FIFO_DISABLE_CHANNELS, 0, &dc, sizeof(dc)) == NV_OK &&
	      stat_get("gpu0.channels_disabled") == 1 &&
	      control(fd, hc, hg, NVA06C_CTRL_CMD_GPFIFO_SCHEDULE, 0, &sch, sizeof(sch)) == NV_OK &&
	      stat_get("gpu0.channels_disabled") == 0, "scheduling RM's group turns its lone channel on");
	check(rm_free(fd, hc, hdev, hg) == NV_OK && stat_get("gpu0.channels_live") == 0 &&
	      stat_get("gpu0.channel_groups_live") == 0, "freeing RM's group frees its lone channel");
}

/* NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY is a share of the
 * client object (fake_share.c): composed, it adds to the list its
 * objects inherit; without COMPOSE it replaces that list. mem never had
 * a list of its own. */
static void inherited_share_checks(int fd, nv_handle_t hc, nv_handle_t mem)
{
	struct rs_share_policy pid_only = { .access_mask = RS_ACCESS_DUP_OBJECT_BIT, .type = RS_SHARE_TYPE_PID };
	int ufd = open_uvm();

	check(share_with(fd, hc, hc, 0xc1d0beefu, RS_SHARE_ACTION_FLAG_COMPOSE) == NV_OK &&
	      stat_get("share_client_object_policies") == 1 && stat_get("share_object_policies") == 1,
	      "share: a CLIENT policy on a client object is counted as the client's");
	check(control(fd, hc, hc, NV0000_CTRL_CMD_CLIENT_SET_INHERITED_SHARE_POLICY, 0, &pid_only,
	              sizeof(pid_only)) == NV_OK && stat_get("share_client_object_policies") == 0,
	      "share: SET_INHERITED_SHARE_POLICY without COMPOSE replaces the client's list");
	check(uvm_create(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, 2 * MIB, hc, mem) == NV_OK &&
	      uvm_free(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK,
	      "share: ... and the memory inheriting it is still the owner's process's to map");
	close(ufd);
}

static void share_checks(void)
{
	int fa = open_ctl(), fb = open_ctl(), ufd = open_uvm();
	nv_handle_t da, db, ca = make_client(fa, &da), cb = make_client(fb, &db);
	nv_handle_t m[3] = { 0, 0, 0 }, d[3] = { 0, 0, 0 };

	for (int i = 0; i < 3; i++)
		check(alloc_vidmem(fa, ca, da, &m[i], 2 * MIB) == NV_OK, "share: memory %d of client A", i);
	check(dup_obj(fb, cb, db, &d[0], ca, m[0]) == NV_OK,
	      "share: by default a second client of the same process dups A's memory");
	check(share_with(fa, ca, m[1], 0xc1d0beefu, 0) == NV_OK &&
	      dup_obj(fb, cb, db, &d[1], ca, m[1]) == NV_ERR_INSUFFICIENT_PERMISSIONS,
	      "share: a CLIENT policy without COMPOSE replaces the default: the same process's dup -> 0x1b");
	check(uvm_create(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, 2 * MIB, ca, m[1]) == NV_ERR_INSUFFICIENT_PERMISSIONS,
	      "share: ... and UVM, which dups as the calling process, cannot map it either");
	check(share_with(fa, ca, m[2], 0xc1d0beefu, RS_SHARE_ACTION_FLAG_COMPOSE) == NV_OK &&
	      dup_obj(fb, cb, db, &d[2], ca, m[2]) == NV_OK &&
	      uvm_map(ufd, UVM_RANGE_BASE, 2 * MIB, ca, m[2]) == NV_OK,
	      "share: with COMPOSE the default stays: the same process dups and maps it");
	check(share_with(fa, ca, m[2], 0xc1d0beefu, RS_SHARE_ACTION_FLAG_COMPOSE | RS_SHARE_ACTION_FLAG_REVOKE) == NV_OK &&
	      dup_obj(fb, cb, db, &d[1], ca, m[2]) == NV_OK, "share: revoking one policy keeps the others");
	inherited_share_checks(fa, ca, m[0]);

	struct other o;
	nv_handle_t dx = 0;
	other_start(&o, ca, true);
	check(o.hc && dup_obj(fa, ca, da, &dx, o.hc, o.hm) == NV_OK,
	      "share: a policy on another process's client object is inherited by its memory");
	check(other_stop(&o), "share: the other process ends");
	check(uvm_free(ufd, UVM_RANGE_BASE, UVM_RANGE_BYTES) == NV_OK, "share: the range freed");
	close(ufd);
	close(fa);
	close(fb);
	check(stat_wait("clients_live", 0) == 0 && stat_wait("gpu0.vidmem_used", 0) == 0,
	      "share: all closed, nothing held");
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
	internal_group_checks(fd, hc, hdev, hsub, chp);
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

	uvm_checks();
	uvm_chan_checks();
	uvm_gpu_checks();
	semsurf_checks();
	engine_checks();
	token_checks();
	share_checks();

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
