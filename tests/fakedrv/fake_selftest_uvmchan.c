/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest_uvmchan.c - the self-test of UVM_REGISTER_CHANNEL and
 * UVM_UNREGISTER_CHANNEL (fake_uvm_chan.c): a registration keeps the
 * channel and its group counted after RM_FREE of their handles, until
 * UVM_UNREGISTER_CHANNEL or the UVM file's last close. The unregister
 * struct is the played branch's (GS_FAKE_DRIVER_VERSION: 590 on, the short
 * form). And UVM_REGISTER_GPU (fake_uvm_gpu.c): the caller must hold the
 * GPU's node, told by the file, not its path.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_selftest.h"
#include "nvuvm_abi.h"
#include "../lib/uuid_text.h"

/* A GPU UUID no fake GPU has (16 raw bytes of it). */
#define UUID_NOT_A_GPU 0x11
/* A handle that names nothing in the client. */
#define H_NOTHING 0x5c0ffee0u

/* GPU 0's UUID, as a UVM caller learns it: CARD_INFO's gpu_id, then
 * GET_UUID_FROM_GPU_ID. */
static int gpu0_uuid(int fd, nv_handle_t hc, uint8_t out[UVM_UUID_BYTES])
{
	struct nv_card_info card[2];
	struct nv0000_uuid_from_gpu_id_params u;

	memset(card, 0, sizeof(card));
	memset(&u, 0, sizeof(u));
	if (nv_ioctl(fd, NV_ESC_CARD_INFO, card, sizeof(card)) != 0 || !card[0].valid)
		return -1;
	u.gpu_id = card[0].gpu_id;
	if (control(fd, hc, hc, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, 0, &u, sizeof(u)) != NV_OK)
		return -1;
	u.gpu_uuid[sizeof(u.gpu_uuid) - 1] = 0;
	return uuid_from_text((const char *)u.gpu_uuid, out);
}

static nv_status_t reg(int ufd, const uint8_t *uuid, int ctl, nv_handle_t hc, nv_handle_t hch)
{
	struct uvm_register_channel_params p = { .rm_ctrl_fd = ctl, .h_client = hc, .h_channel = hch };
	memcpy(p.gpu_uuid, uuid, UVM_UUID_BYTES);
	return uvm_call(ufd, UVM_REGISTER_CHANNEL, &p, offsetof(typeof(p), rm_status));
}

/* The played branch's form; the 580 form's UUID is never read, so a
 * wrong one is passed on purpose. */
static nv_status_t unreg(int ufd, nv_handle_t hc, nv_handle_t hch)
{
	if (driver_branch() >= UVM_UNREGISTER_CHANNEL_SHORT_BRANCH) {
		struct uvm_unregister_channel_params_590 p = { .h_client = hc, .h_channel = hch };
		return uvm_call(ufd, UVM_UNREGISTER_CHANNEL, &p, offsetof(typeof(p), rm_status));
	}
	struct uvm_unregister_channel_params p = { .h_client = hc, .h_channel = hch };
	memset(p.gpu_uuid, UUID_NOT_A_GPU, sizeof(p.gpu_uuid));
	return uvm_call(ufd, UVM_UNREGISTER_CHANNEL, &p, offsetof(typeof(p), rm_status));
}

static nv_status_t alloc_group(int fd, nv_handle_t hc, nv_handle_t hdev, nv_handle_t *h)
{
	uint8_t params[NV_CHANNEL_GROUP_ALLOC_PARAMS_SIZE] = { 0 };
	*h = 0;
	return alloc64(fd, hc, hdev, h, KEPLER_CHANNEL_GROUP_A, params);
}

static nv_status_t alloc_channel(int fd, nv_handle_t hc, nv_handle_t parent, nv_handle_t *h)
{
	uint8_t params[NV_CHANNEL_ALLOC_PARAMS_SIZE] = { 0 };
	*h = 0;
	return alloc64(fd, hc, parent, h, HOPPER_CHANNEL_GPFIFO_A, params);
}

static bool live_is(int64_t groups, int64_t channels)
{
	return stat_get("gpu0.channel_groups_live") == groups && stat_get("gpu0.channels_live") == channels;
}

/* The refusals: none takes anything. */
static void check_refusals(int fd, int ufd, const uint8_t *uuid, nv_handle_t hc, nv_handle_t hdev,
			   nv_handle_t hch)
{
	uint8_t bad[UVM_UUID_BYTES];
	memset(bad, UUID_NOT_A_GPU, sizeof(bad));
	check(reg(ufd, uuid, fd, hc, hch) == NV_ERR_INVALID_CHANNEL,
	      "uvm channel: the same (hClient, hChannel) again -> INVALID_CHANNEL");
	check(reg(ufd, uuid, fd, hc, hdev) == NV_ERR_INVALID_OBJECT_HANDLE &&
	      reg(ufd, uuid, fd, hc, H_NOTHING) == NV_ERR_INVALID_OBJECT_HANDLE,
	      "uvm channel: a device or no object as hChannel -> INVALID_OBJECT_HANDLE");
	check(reg(ufd, bad, fd, hc, hch) == NV_ERR_INVALID_DEVICE,
	      "uvm channel: a UUID of no GPU -> INVALID_DEVICE");
	check(reg(ufd, uuid, fd, H_NOTHING, hch) == NV_ERR_INVALID_CLIENT,
	      "uvm channel: an unknown hClient -> INVALID_CLIENT");
	check(stat_get("uvm_channels_registered") == 1, "uvm channel: refusals register nothing");
}

/* Group and channel, registered, the group's handle freed: both stay
 * until the unregister. */
static void check_unregister(int fd, int ufd, const uint8_t *uuid, nv_handle_t hc, nv_handle_t hdev)
{
	int64_t g0 = stat_get("gpu0.channel_groups_live"), c0 = stat_get("gpu0.channels_live");
	int64_t regs0 = stat_get("uvm_channel_registrations");
	nv_handle_t hg, hch;

	check(alloc_group(fd, hc, hdev, &hg) == NV_OK && alloc_channel(fd, hc, hg, &hch) == NV_OK &&
	      reg(ufd, uuid, fd, hc, hch) == NV_OK && stat_get("uvm_channels_registered") == 1 &&
	      stat_get("uvm_channel_registrations") == regs0 + 1,
	      "uvm channel: a channel of a group registers (GPU 0's UUID from RM)");
	check_refusals(fd, ufd, uuid, hc, hdev, hch);
	check(rm_free(fd, hc, hdev, hg) == NV_OK && live_is(g0 + 1, c0 + 1),
	      "uvm channel: RM_FREE of the group leaves the group and channel live");
	check(unreg(ufd, hc, hch) == NV_OK && live_is(g0, c0) && stat_get("uvm_channels_registered") == 0,
	      "uvm channel: UNREGISTER_CHANNEL (%s form) releases them",
	      driver_branch() >= UVM_UNREGISTER_CHANNEL_SHORT_BRANCH ? "590" : "580");
	check(unreg(ufd, hc, hch) == NV_ERR_INVALID_CHANNEL, "uvm channel: unregister again -> INVALID_CHANNEL");
}

/* A lone channel (RM's own group inside it), registered, freed: held
 * until the UVM file's last close. */
static void check_close(int fd, const uint8_t *uuid, nv_handle_t hc, nv_handle_t hdev)
{
	int ufd = open_uvm();
	int64_t g0 = stat_get("gpu0.channel_groups_live"), c0 = stat_get("gpu0.channels_live");
	nv_handle_t hch;

	check(alloc_channel(fd, hc, hdev, &hch) == NV_OK && live_is(g0 + 1, c0 + 1) &&
	      reg(ufd, uuid, fd, hc, hch) == NV_OK && rm_free(fd, hc, hdev, hch) == NV_OK &&
	      live_is(g0 + 1, c0 + 1),
	      "uvm channel: a lone channel registered and freed stays live with its group");
	close(ufd);
	check(stat_wait("uvm_channels_registered", 0) == 0 && stat_wait("gpu0.channels_live", c0) == c0 &&
	      stat_wait("gpu0.channel_groups_live", g0) == g0,
	      "uvm channel: closing the UVM file releases them");
}

void uvm_chan_checks(void)
{
	int fd = open_ctl();
	nv_handle_t hdev, hc = make_client(fd, &hdev);
	uint8_t uuid[UVM_UUID_BYTES];
	int ufd = open_uvm();

	check(gpu0_uuid(fd, hc, uuid) == 0, "uvm channel: GPU 0's UUID from CARD_INFO and GET_UUID_FROM_GPU_ID");
	check_unregister(fd, ufd, uuid, hc, hdev);
	close(ufd);
	check_close(fd, uuid, hc, hdev);
	close(fd);
	check(stat_wait("clients_live", 0) == 0 && stat_wait("gpu0.channels_live", 0) == 0 &&
	      stat_wait("gpu0.channel_groups_live", 0) == 0, "uvm channel: all closed, nothing held");
}

/* ---- UVM_REGISTER_GPU (fake_uvm_gpu.c) ---- */

/* What the child saw, in order. */
enum { REG_NO_NODE, REG_NULL_AT_NODE, REG_NODE, REG_TWICE, REG_NOT_A_GPU, REG_STEPS };
#define REG_OUT_FD 3   /* the child's pipe to the parent */

static nv_status_t reg_gpu(int ufd, const uint8_t *uuid)
{
	struct uvm_register_gpu_params p = { .rm_ctrl_fd = -1 };
	memcpy(p.gpu_uuid, uuid, UVM_UUID_BYTES);
	return uvm_call(ufd, UVM_REGISTER_GPU, &p, offsetof(typeof(p), rm_status));
}

/* In a child holding no fd of ours but its pipe: a registration without
 * GPU 0's node; with /dev/null bound over /dev/nvidia0 (in a mount
 * namespace of its own) and opened there, whose link reads the node's
 * path; with the node; twice; and of no GPU. */
static void reg_gpu_child(const uint8_t *uuid, int out)
{
	nv_status_t st[REG_STEPS] = { 0 };
	uint8_t none[UVM_UUID_BYTES];

	memset(none, UUID_NOT_A_GPU, sizeof(none));
	if (dup2(out, REG_OUT_FD) < 0 || syscall(SYS_close_range, REG_OUT_FD + 1u, ~0u, 0u) != 0)
		_exit(2);
	int ufd = open_uvm();
	st[REG_NO_NODE] = reg_gpu(ufd, uuid);
	if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
	    mount("/dev/null", "/dev/nvidia0", NULL, MS_BIND, NULL) != 0)
		_exit(3);
	int null_fd = open("/dev/nvidia0", O_RDWR | O_CLOEXEC);
	st[REG_NULL_AT_NODE] = null_fd < 0 ? NV_ERR_GENERIC : reg_gpu(ufd, uuid);
	/* The node itself, from the fake's own mount. */
	char node[PATH_MAX];
	const char *mnt = getenv("GS_FAKE_MOUNT");
	if (!mnt || snprintf(node, sizeof(node), "%s/nvidia0", mnt) >= (int)sizeof(node) ||
	    open(node, O_RDWR | O_CLOEXEC) < 0)
		_exit(4);
	st[REG_NODE] = reg_gpu(ufd, uuid);
	st[REG_TWICE] = reg_gpu(ufd, uuid);
	st[REG_NOT_A_GPU] = reg_gpu(ufd, none);
	_exit(write(REG_OUT_FD, st, sizeof(st)) == sizeof(st) ? 0 : 5);
}

void uvm_gpu_checks(void)
{
	int fd = open_ctl();
	nv_handle_t hdev, hc = make_client(fd, &hdev);
	uint8_t uuid[UVM_UUID_BYTES];
	nv_status_t st[REG_STEPS] = { 0 };
	int p[2], status = -1;

	check(gpu0_uuid(fd, hc, uuid) == 0 && pipe(p) == 0, "uvm gpu: GPU 0's UUID, and a pipe");
	pid_t pid = fork();
	if (pid == 0)
		reg_gpu_child(uuid, p[1]);
	close(p[1]);
	bool got = read(p[0], st, sizeof(st)) == sizeof(st);
	close(p[0]);
	waitpid(pid, &status, 0);
	check(got && WIFEXITED(status) && WEXITSTATUS(status) == 0, "uvm gpu: the child ran every step (status 0x%x)",
	      (unsigned)status);
	check(st[REG_NO_NODE] == NV_ERR_INSUFFICIENT_PERMISSIONS,
	      "uvm gpu: without GPU 0's node -> INSUFFICIENT_PERMISSIONS (0x%x)", st[REG_NO_NODE]);
	check(st[REG_NULL_AT_NODE] == NV_ERR_INSUFFICIENT_PERMISSIONS,
	      "uvm gpu: /dev/null bound over /dev/nvidia0 is not the node (0x%x)", st[REG_NULL_AT_NODE]);
	check(st[REG_NODE] == NV_OK && st[REG_TWICE] == NV_ERR_INVALID_DEVICE,
	      "uvm gpu: with the node NV_OK, again INVALID_DEVICE (0x%x, 0x%x)", st[REG_NODE], st[REG_TWICE]);
	check(st[REG_NOT_A_GPU] == NV_ERR_GPU_UUID_NOT_FOUND, "uvm gpu: no such GPU -> GPU_UUID_NOT_FOUND (0x%x)",
	      st[REG_NOT_A_GPU]);
	check(stat_wait("gpu0.uvm_registered", 0) == 0 && stat_get("gpu0.uvm_registered_peak") >= 1,
	      "uvm gpu: the registration went with the child's UVM file (peak %lld)",
	      (long long)stat_get("gpu0.uvm_registered_peak"));
	close(fd);
	check(stat_wait("clients_live", 0) == 0, "uvm gpu: all closed");
}
