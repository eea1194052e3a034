/* SPDX-License-Identifier: MIT */
/*
 * test_private_table.c - a device allocation the supervisor performs meets
 * only the trapped task's GPU nodes, whatever another thread of the
 * supervisor holds (supervisor/core/tasks/private_table.c).
 *
 * Run under tests/fakedrv/with-fake-nvidia --gpus 2 --gpu-node-check: the
 * fake models the driver's nv_is_gpu_accessible (tests/fakedrv/
 * fake_nodes.c: the calling thread's fd table must hold the GPU's node).
 * This process plays the supervisor: its main thread holds /dev/nvidia0
 * open for the whole test, as an agent worker holding another container's
 * GPU-node dup would. Two tasks are trapped in seccomp user notifications:
 * T holds no GPU node, T0 holds its own /dev/nvidia0. Through
 * exec_escape_private, as the executor makes it:
 *   - T's NV01_DEVICE_0 on GPU 0 is refused by the fake
 *     (INSUFFICIENT_PERMISSIONS, device_node_refusals + 1), nothing borrowed;
 *   - T0's is granted (device_node_grants + 1), its node borrowed;
 *   - our fd table is as it was (nothing borrowed stays).
 * With GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC (run-tests.sh's baseline
 * tier) the call is made in our shared table, as before any defence, and
 * T's device is GRANTED: the main thread's node vouched for it. Which of
 * the two outcomes is expected follows that switch; the fake's stats file
 * is the judge, with the status it wrote into the parameters.
 *
 * What a call through a private table costs: tests/bench/privtablebench.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/trap_child.h"
#include "check.h"
#include "exec_int.h"
#include "rm_own.h"

#define CTL_PATH "/dev/nvidiactl"
#define GPU0_PATH "/dev/nvidia0"
#define H_DEVICE 0xde000001u
#define STAT_LINE 128
#define SHARED_SWITCH "GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC"

struct trapped {
	pid_t             pid;
	int               listener;
	struct gs_scratch scratch;
};

/* A child holding nothing of ours (and /dev/nvidia0 of its own when
 * with_node), trapped in TRAPPED_NR until killed. */
static bool trap_task(struct trapped *t, bool with_node)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	t->pid = fork();
	if (t->pid == 0) {
		/* Only the socket is ours: no inherited GPU node. */
		if (dup2(sv[1], STDERR_FILENO + 1) < 0)
			_exit(1);
		syscall(SYS_close_range, STDERR_FILENO + 2, ~0u, 0);
		if (with_node && open(GPU0_PATH, O_RDWR) < 0)
			_exit(1);
		trap_child_and_wait(STDERR_FILENO + 1);
	}
	close(sv[1]);
	t->listener = fdpass_recv(sv[0]);
	close(sv[0]);
	if (t->listener < 0 || gs_scratch_init(&t->scratch, &(struct gs_error){ 0 }) < 0)
		return false;
	t->scratch.listener = t->listener;
	return ioctl(t->listener, SECCOMP_IOCTL_NOTIF_RECV, t->scratch.req) == 0 &&
	       (pid_t)t->scratch.req->pid == t->pid;
}

static void untrap(struct trapped *t)
{
	kill(t->pid, SIGKILL);
	waitpid(t->pid, NULL, 0);
	close(t->listener);
}

/* A value from the fake's stats file ("key value" lines), -1 if absent. */
static long long fake_stat(const char *key)
{
	const char *path = getenv("GS_FAKE_STATS");
	char line[STAT_LINE], k[STAT_LINE];
	long long v, found = -1;
	FILE *f = path ? fopen(path, "r") : NULL;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", k, &v) == 2 && strcmp(k, key) == 0)
			found = v;
	if (f)
		fclose(f);
	return found;
}

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* NV01_DEVICE_0 on GPU 0 under client, made for task t through our ctl
 * file: the status the fake wrote, or the outcome's failure as -1. */
static long device_for(struct trapped *t, int ctl, nv_handle_t client)
{
	struct nv0080_alloc_params p = { .device_id = 0 };
	struct nvos21 a = { .h_root = client, .h_object_parent = client, .h_object_new = H_DEVICE,
	                    .h_class = NV01_DEVICE_0, .p_alloc_parms = (uintptr_t)&p,
	                    .params_size = sizeof(p) };
	struct call c = { .scratch = &t->scratch, .tid = t->pid, .dup = ctl };
	int rc = -1;

	if (exec_escape_private(&c, NV_ESC_RM_ALLOC, sizeof(a), &a, false, &rc) !=
	        GS_PRIVATE_PERFORMED || rc != 0)
		return -1;
	if (a.status == NV_OK)
		(void)rm_own_free(ctl, client, client, H_DEVICE);
	return (long)a.status;
}

int main(void)
{
	const bool shared = getenv(SHARED_SWITCH) != NULL;
	struct trapped t = { 0 }, t0 = { 0 };
	nv_handle_t client = 0;

	if (!getenv("GS_FAKE_STATS")) {
		printf("SKIP test_private_table: run it under with-fake-nvidia --gpu-node-check\n");
		return 125;
	}
	CHECK(trap_task(&t, false) && trap_task(&t0, true));
	CHECK(gs_private_table_start(&(struct gs_error){ 0 }) == 0);
	int ctl = open(CTL_PATH, O_RDWR | O_CLOEXEC);
	CHECK(ctl >= 0 && rm_own_alloc(ctl, 0, 0, &client, NV01_ROOT_CLIENT, &client, 0) == NV_OK);
	/* The node another thread of the supervisor holds meanwhile. */
	int held = open(GPU0_PATH, O_RDWR | O_CLOEXEC);
	CHECK(held >= 0);
	unsigned fds_before = open_fds();
	long long refused0 = fake_stat("device_node_refusals");
	long long granted0 = fake_stat("device_node_grants");
	CHECK(refused0 >= 0 && granted0 >= 0);

	long st = device_for(&t, ctl, client);
	if (shared) {
		/* Baseline: the main thread's node vouched for T. */
		CHECK(st == NV_OK && fake_stat("device_node_grants") == granted0 + 1);
		printf("baseline: T's device on GPU 0 granted (status 0x%lx)\n", (unsigned long)st);
	} else {
		CHECK(st == NV_ERR_INSUFFICIENT_PERMISSIONS);
		CHECK(fake_stat("device_node_refusals") == refused0 + 1);
		CHECK(fake_stat("device_node_grants") == granted0);
		/* T0 holds its own node: borrowed, granted. */
		CHECK(device_for(&t0, ctl, client) == NV_OK);
		CHECK(fake_stat("device_node_grants") == granted0 + 1);
	}
	CHECK(open_fds() == fds_before);
	untrap(&t);
	untrap(&t0);
	return check_summary();
}
