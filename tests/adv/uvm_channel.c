/* SPDX-License-Identifier: MIT */
/*
 * uvm_channel - channel and channel-group quotas against UVM's channel
 * registrations (issue #17, item 4). UVM_REGISTER_CHANNEL has RM dup the
 * channel's group (TSG) into UVM's client and retain the channel's ID and
 * instance block (nv_gpu_ops.c nvGpuOpsRetainChannel, 580.95.05) until
 * UVM_UNREGISTER_CHANNEL or the UVM file's last close, so after RM_FREE of
 * the workload's handles the GPU still holds both. Run with --channels 8
 * --channel-groups 4 (tests/adv/run.sh passes them).
 *
 * argv[1]:
 * free:  ROUNDS times: a channel group, a channel under it, REGISTER it,
 *        RM_FREE the group's handle. Without gpusandbox the driver ends
 *        up holding ROUNDS groups (> 4).
 * lone:  the same with channels straight under the device (RM makes a
 *        group for each), freeing the channel.
 * flow:  CUDA's order: register, UVM_UNREGISTER_CHANNEL, free; every step
 *        must succeed under the quota.
 * race:  per round two groups with a channel each (A, B); a thread keeps
 *        flipping the register struct's hChannel between A and B while
 *        this one registers through it RACE_TRIES times; then both groups
 *        are freed, nothing unregistered.
 * swap:  SWAP_ROUNDS rounds of free's, each registering through an fd
 *        number a thread keeps pointing at the first UVM file and then
 *        at a fresh one opened for the round (and kept open). The kernel
 *        resolves the number again after the supervisor's CONTINUE: a
 *        registration that lands in a file the supervisor never looked
 *        at is one it cannot unregister. With the caller's fd table held
 *        still (quiesce) none does; without (GPUSANDBOX_TEST_NO_QUIESCE,
 *        the baseline) about half do.
 * stall: the fake answers the first registration STALL_LATE_MS late
 *        (--register-late-ms: the retain at once, the record at the
 *        end), longer than the supervisor waits for a caller to leave a
 *        continued ioctl; meanwhile a child frees the channel's group.
 *        The supervisor must not take the channel for unregistered
 *        before the registration has returned: once it has, a free of
 *        another group makes it settle. Prints child_free= and
 *        groups_end= (the fake's live groups before the UVM file closes).
 * overlap: one process's slow registration must not hold up another
 *        process *        (issue #16): the fake answers the registration LATE_MS late
 *        (run.sh passes --register-late-ms LATE_MS); once the registering
 *        process is inside it, another process of the sandbox makes
 *        QUICK_PAIRS 2 MiB allocations and frees. Prints overlapped=1
 *        when they all returned before the registration did, and
 *        served_while_late= (the fake's count of calls it served while
 *        the late answer was pending). The registered group is freed.
 * clone: the same late registration; the other process makes a clone
 *        with CLONE_FILES (a new sharer of an fd table, the kind the
 *        hold of a continued caller's table must not let run, quiesce.h)
 *        and prints clone_while_late= (the fake's pending late answers
 *        when the clone returned: 1 while the registration was still in
 *        the driver).
 *
 * The verdict on the quota comes from the fake driver (its
 * channel_groups_peak, checked by run.sh). Read live after each round:
 * fake_groups_max= fake_channels_max=; before the UVM file is closed:
 * registered_end= (the fake's uvm_channels_registered). Also prints each
 * round's statuses, rounds= alloc_ok= reg_ok= (flow: flow_ok=, race:
 * flips=) and SUMMARY.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "adv.h"
#include "nvuvm_abi.h"
#include "../lib/uuid_text.h"

#define HOPPER_CHANNEL_GPFIFO_A 0xc86fu
#define TSG_PARAMS     20
#define CHANNEL_PARAMS 368
/* More than --channel-groups 4 and --channels 8 allow at once... */
#define ROUNDS         8
/* ...and twice as many groups in the race, within the fake's pool. */
#define RACE_TRIES     64
/* Enough for the baseline's wins (about half the rounds) to pass the
 * cap of 4 many times over, within the fake's pool of 64. */
#define SWAP_ROUNDS    48
/* The child's free comes after the supervisor stopped waiting for the
 * registering caller (GS_QUIESCE_CALLER_MS, 5000 ms) and before the
 * fake's late answer (run.sh passes --register-late-ms STALL_LATE_MS). */
#define STALL_FREE_AFTER_MS 5600
#define STALL_LATE_MS       7000
/* overlap and clone: run.sh's --register-late-ms, and how long after the
 * registering process said it is about to register the other one starts
 * (the call's way to the fake). */
#define LATE_MS             1000
#define OTHER_START_US      300000u
#define QUICK_PAIRS         20
#define PAIR_BYTES          (2ull << 20)
#define CARDS          32
#define H_GROUP0 0x5c00e000u
#define H_CHAN0  0x5c00e100u
#define H_GROUPB 0x5c00e200u
#define H_CHANB  0x5c00e300u
#define UVM_BRANCH_DEFAULT 580

struct result {
	int rounds, alloc_ok, reg_ok, flow_ok;
	uint64_t groups_max, channels_max;
	unsigned long flips;
};

static uint8_t group_params[TSG_PARAMS];
static uint8_t chan_params[CHANNEL_PARAMS];
static uint8_t gpu_uuid[UVM_UUID_BYTES];

/* The first GPU's UUID as a UVM caller learns it: CARD_INFO's gpu_id,
 * then GET_UUID_FROM_GPU_ID. */
static int first_gpu_uuid(struct rmc_session *s)
{
	struct nv_card_info cards[CARDS];
	struct nv0000_uuid_from_gpu_id_params u;

	memset(cards, 0, sizeof(cards));
	memset(&u, 0, sizeof(u));
	if (syscall(SYS_ioctl, s->fd, NV_IOC_WORD(NV_ESC_CARD_INFO, sizeof(cards)), cards) != 0 ||
	    !cards[0].valid)
		return -1;
	u.gpu_id = cards[0].gpu_id;
	if (rmc_control(s->fd, NULL, s->client, s->client, NV0000_CTRL_CMD_GPU_GET_UUID_FROM_GPU_ID, &u,
	                sizeof(u)) != NV_OK)
		return -1;
	u.gpu_uuid[sizeof(u.gpu_uuid) - 1] = 0;
	return uuid_from_text((const char *)u.gpu_uuid, gpu_uuid);
}

static int open_uvm(void)
{
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	struct uvm_initialize_params init = { .rm_status = NV_ERR_GENERIC };

	if (fd < 0 || syscall(SYS_ioctl, fd, UVM_INITIALIZE, &init) != 0 || init.rm_status != NV_OK) {
		printf("uvm_channel: UVM setup failed\n");
		fflush(stdout);
		exit(ADV_EXIT_SETUP);
	}
	return fd;
}

static void fill_register(volatile struct uvm_register_channel_params *p, int ctl, nv_handle_t hc,
                          nv_handle_t hch)
{
	memset((void *)p, 0, sizeof(*p));
	memcpy((void *)p->gpu_uuid, gpu_uuid, UVM_UUID_BYTES);
	p->rm_ctrl_fd = ctl;
	p->h_client = hc;
	p->h_channel = hch;
	p->rm_status = NV_ERR_GENERIC;  /* an untouched struct shows */
}

static rmc_status_t issue(int uvm, uint32_t cmd, volatile void *p, volatile nv_status_t *status)
{
	if (syscall(SYS_ioctl, uvm, cmd, (void *)p) != 0)
		return RMC_SYSERR(errno);
	return *status;
}

static rmc_status_t register_channel(int uvm, struct rmc_session *s, nv_handle_t hch)
{
	struct uvm_register_channel_params p;
	fill_register(&p, s->fd, s->client, hch);
	return issue(uvm, UVM_REGISTER_CHANNEL, &p, &p.rm_status);
}

/* The played branch's form (GS_FAKE_DRIVER_VERSION, as the fake's). */
static rmc_status_t unregister_channel(int uvm, struct rmc_session *s, nv_handle_t hch)
{
	const char *v = getenv("GS_FAKE_DRIVER_VERSION");
	int branch = v ? atoi(v) : UVM_BRANCH_DEFAULT;

	if (branch >= UVM_UNREGISTER_CHANNEL_SHORT_BRANCH) {
		struct uvm_unregister_channel_params_590 p = { s->client, hch, NV_ERR_GENERIC };
		return issue(uvm, UVM_UNREGISTER_CHANNEL, &p, &p.rm_status);
	}
	struct uvm_unregister_channel_params p = { .h_client = s->client, .h_channel = hch,
	                                           .rm_status = NV_ERR_GENERIC };
	memcpy(p.gpu_uuid, gpu_uuid, UVM_UUID_BYTES);
	return issue(uvm, UVM_UNREGISTER_CHANNEL, &p, &p.rm_status);
}

static rmc_status_t alloc_group(struct rmc_session *s, nv_handle_t h)
{
	return rmc_alloc(s->fd, NULL, s->client, s->device, &h, KEPLER_CHANNEL_GROUP_A, group_params, 0);
}

static rmc_status_t alloc_channel(struct rmc_session *s, nv_handle_t parent, nv_handle_t h)
{
	return rmc_alloc(s->fd, NULL, s->client, parent, &h, HOPPER_CHANNEL_GPFIFO_A, chan_params, 0);
}

/* A group with a channel in it, or (group 0) a lone channel. */
static rmc_status_t alloc_pair(struct rmc_session *s, nv_handle_t group, nv_handle_t chan)
{
	rmc_status_t st = group ? alloc_group(s, group) : NV_OK;
	if (st == NV_OK)
		st = alloc_channel(s, group ? group : s->device, chan);
	return st;
}

/* What the driver holds now, folded into the maxima. */
static void note_fake(struct result *r)
{
	uint64_t g, c;

	if (rmc_fake_stat("gpu0.channel_groups_live", &g) == 0 && g > r->groups_max)
		r->groups_max = g;
	if (rmc_fake_stat("gpu0.channels_live", &c) == 0 && c > r->channels_max)
		r->channels_max = c;
}

/* free, lone and flow: one channel a round. */
static void one_round(struct rmc_session *s, int uvm, const char *mode, int i, struct result *r)
{
	bool lone = !strcmp(mode, "lone"), flow = !strcmp(mode, "flow");
	nv_handle_t group = lone ? 0 : H_GROUP0 + (nv_handle_t)i, chan = H_CHAN0 + (nv_handle_t)i;
	rmc_status_t reg = RMC_SYSERR(0), unreg = NV_OK, fr = RMC_SYSERR(0);
	rmc_status_t a = alloc_pair(s, group, chan);

	if (a == NV_OK) {
		r->alloc_ok++;
		reg = register_channel(uvm, s, chan);
		r->reg_ok += reg == NV_OK;
		if (flow && reg == NV_OK)
			unreg = unregister_channel(uvm, s, chan);
		fr = rmc_free(s->fd, NULL, s->client, s->device, lone ? chan : group);
	}
	r->flow_ok += flow && a == NV_OK && reg == NV_OK && unreg == NV_OK && fr == NV_OK;
	printf("round=%d alloc=%s", i, rmc_status_str(a));
	printf(" register=%s", rmc_status_str(reg));
	if (flow)
		printf(" unregister=%s", rmc_status_str(unreg));
	printf(" free=%s\n", rmc_status_str(fr));
	note_fake(r);
}

/* ---- race ---- */

struct flipper {
	volatile struct uvm_register_channel_params *p;
	nv_handle_t a, b;
	atomic_bool stop;
	unsigned long flips;
};

static void *flip(void *arg)
{
	struct flipper *f = arg;

	while (!atomic_load_explicit(&f->stop, memory_order_relaxed)) {
		f->p->h_channel = f->a;
		f->p->h_channel = f->b;
		f->flips++;
	}
	return NULL;
}

static void race_round(struct rmc_session *s, int uvm, int i, struct result *r)
{
	static volatile struct uvm_register_channel_params p;
	nv_handle_t ga = H_GROUP0 + (nv_handle_t)i, gb = H_GROUPB + (nv_handle_t)i;
	nv_handle_t ca = H_CHAN0 + (nv_handle_t)i, cb = H_CHANB + (nv_handle_t)i;
	rmc_status_t a = alloc_pair(s, ga, ca), b = alloc_pair(s, gb, cb);
	struct flipper f = { .p = &p, .a = ca, .b = cb };
	pthread_t t;
	int ok = 0;

	if (a == NV_OK && b == NV_OK) {
		r->alloc_ok++;
		fill_register(&p, s->fd, s->client, ca);
		if (pthread_create(&t, NULL, flip, &f) == 0) {
			for (int k = 0; k < RACE_TRIES; k++) {
				p.rm_status = NV_ERR_GENERIC;
				ok += issue(uvm, UVM_REGISTER_CHANNEL, &p, &p.rm_status) == NV_OK;
			}
			atomic_store(&f.stop, true);
			pthread_join(t, NULL);
		}
	}
	r->reg_ok += ok;
	r->flips += f.flips;
	(void)rmc_free(s->fd, NULL, s->client, s->device, ga);
	(void)rmc_free(s->fd, NULL, s->client, s->device, gb);
	printf("round=%d alloc=%s,%s registered=%d\n", i, rmc_status_str(a), rmc_status_str(b), ok);
	note_fake(r);
}

/* ---- swap ---- */

struct swapper {
	int number, first;
	_Atomic int fresh;
	atomic_bool stop;
	unsigned long swaps;
};

static void *swap_files(void *arg)
{
	struct swapper *w = arg;

	while (!atomic_load_explicit(&w->stop, memory_order_relaxed)) {
		(void)dup2(w->swaps & 1u ? atomic_load(&w->fresh) : w->first, w->number);
		w->swaps++;
	}
	return NULL;
}

/* free's rounds, registered through a number another thread keeps
 * pointing at the first UVM file and the round's fresh one. */
static void swap_rounds(struct rmc_session *s, int uvm, struct result *r)
{
	struct swapper w = { .first = uvm, .fresh = uvm };
	pthread_t t;

	w.number = dup(uvm);
	r->rounds = SWAP_ROUNDS;
	if (w.number < 0 || pthread_create(&t, NULL, swap_files, &w) != 0) {
		printf("swap: setup failed\n");
		return;
	}
	for (int i = 0; i < SWAP_ROUNDS; i++) {
		int fresh = open_uvm();
		if (fresh >= 0)
			atomic_store(&w.fresh, fresh);
		one_round(s, w.number, "free", i, r);
	}
	atomic_store(&w.stop, true);
	pthread_join(t, NULL);
	r->flips = w.swaps;
	/* Every file stays open: the fake's count is read before any
	 * closes (main). */
}

/* ---- stall ---- */

static void stall_round(struct rmc_session *s, int uvm, struct result *r)
{
	rmc_status_t a = alloc_pair(s, H_GROUP0, H_CHAN0), child = RMC_SYSERR(0);
	int status = 0;

	r->rounds = 1;
	if (a != NV_OK) {
		printf("stall: alloc=%s\n", rmc_status_str(a));
		return;
	}
	r->alloc_ok = 1;
	fflush(stdout);
	pid_t q = fork();
	if (q == 0) {
		usleep(STALL_FREE_AFTER_MS * 1000u);
		_exit(rmc_free(s->fd, NULL, s->client, s->device, H_GROUP0) == NV_OK ? 0 : 1);
	}
	rmc_status_t reg = register_channel(uvm, s, H_CHAN0);
	r->reg_ok = reg == NV_OK;
	if (q > 0 && waitpid(q, &status, 0) == q && WIFEXITED(status))
		child = WEXITSTATUS(status) == 0 ? NV_OK : NV_ERR_GENERIC;
	/* A free that succeeds: the supervisor settles what it listed. */
	if (alloc_group(s, H_GROUPB) == NV_OK)
		(void)rmc_free(s->fd, NULL, s->client, s->device, H_GROUPB);
	uint64_t groups = UINT64_MAX;
	(void)rmc_fake_stat("gpu0.channel_groups_live", &groups);
	printf("stall: register=%s child_free=%s groups_end=%llu\n", rmc_status_str(reg), rmc_status_str(child),
	       (unsigned long long)groups);
	note_fake(r);
}

/* ---- overlap and clone ---- */

struct flags {
	atomic_int in_register, register_done;
};

/* overlap's other process: its own client, QUICK_PAIRS pairs. */
static int quick_pairs(struct flags *fl)
{
	struct rmc_session q;
	rmc_status_t st = rmc_session_open(&q, -1);
	int done = 0;

	int before = atomic_load(&fl->register_done);
	if (st == NV_OK)
		st = rmc_vidmem_pairs(&q, QUICK_PAIRS, PAIR_BYTES, &done);
	int overlapped = !before && !atomic_load(&fl->register_done);
	printf("overlap: quick=%s pairs=%d overlapped=%d\n", rmc_status_str(st), done, overlapped);
	return st == NV_OK ? 0 : 1;
}

/* clone's other process: a clone that shares its fd table. */
static int clone_sharer(void)
{
	long pid = syscall(SYS_clone, (unsigned long)(CLONE_FILES | SIGCHLD), 0, NULL, NULL, 0);
	uint64_t late = UINT64_MAX;

	if (pid == 0)
		_exit(0);
	int err = pid < 0 ? errno : 0;
	(void)rmc_fake_stat("late_pending", &late);
	if (pid > 0)
		(void)waitpid((pid_t)pid, NULL, 0);
	printf("clone: clone=%s clone_while_late=%llu\n", err ? strerror(err) : "ok", (unsigned long long)late);
	return err ? 1 : 0;
}

static void late_round(struct rmc_session *s, int uvm, bool clone, struct result *r)
{
	struct flags *fl = mmap(NULL, sizeof(*fl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	rmc_status_t a = alloc_pair(s, H_GROUP0, H_CHAN0);
	uint64_t served = UINT64_MAX;
	int status = 0;

	r->rounds = 1;
	if (fl == MAP_FAILED || a != NV_OK) {
		printf("late: setup failed: alloc=%s\n", rmc_status_str(a));
		return;
	}
	r->alloc_ok = 1;
	fflush(stdout);
	pid_t other = fork();
	if (other == 0) {
		while (!atomic_load(&fl->in_register))
			usleep(1000);
		usleep(OTHER_START_US);
		int rc = clone ? clone_sharer() : quick_pairs(fl);
		fflush(stdout);
		_exit(rc);
	}
	atomic_store(&fl->in_register, 1);
	rmc_status_t reg = register_channel(uvm, s, H_CHAN0);
	atomic_store(&fl->register_done, 1);
	r->reg_ok = reg == NV_OK;
	bool other_ok = other > 0 && waitpid(other, &status, 0) == other && WIFEXITED(status) &&
	                WEXITSTATUS(status) == 0;
	(void)rmc_fake_stat("served_while_late", &served);
	(void)rmc_free(s->fd, NULL, s->client, s->device, H_GROUP0);
	printf("late: register=%s other_ok=%d served_while_late=%llu\n", rmc_status_str(reg), other_ok,
	       (unsigned long long)served);
	note_fake(r);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct rmc_session s;
	struct result r = { .rounds = ROUNDS };
	struct adv_tally t = { 0 };
	uint64_t registered = UINT64_MAX;

	if (strcmp(mode, "free") && strcmp(mode, "lone") && strcmp(mode, "flow") && strcmp(mode, "race") &&
	    strcmp(mode, "swap") && strcmp(mode, "stall") && strcmp(mode, "overlap") && strcmp(mode, "clone")) {
		fprintf(stderr, "usage: uvm_channel free|lone|flow|race|swap|stall|overlap|clone\n");
		return ADV_EXIT_SETUP;
	}
	adv_session_or_die(&s, -1, "uvm_channel");
	if (first_gpu_uuid(&s) < 0) {
		printf("uvm_channel: no GPU UUID\n");
		return ADV_EXIT_SETUP;
	}
	int uvm = open_uvm();
	bool late = !strcmp(mode, "overlap") || !strcmp(mode, "clone");
	bool many = strcmp(mode, "swap") && strcmp(mode, "stall") && !late;
	if (late)
		late_round(&s, uvm, !strcmp(mode, "clone"), &r);
	if (!strcmp(mode, "swap"))
		swap_rounds(&s, uvm, &r);
	if (!strcmp(mode, "stall"))
		stall_round(&s, uvm, &r);
	for (int i = 0; i < ROUNDS && many; i++) {
		if (!strcmp(mode, "race"))
			race_round(&s, uvm, i, &r);
		else
			one_round(&s, uvm, mode, i, &r);
	}
	/* Before the UVM file goes (its last close unregisters all). */
	if (rmc_fake_stat("uvm_channels_registered", &registered) < 0)
		registered = UINT64_MAX;
	printf("rounds=%d alloc_ok=%d reg_ok=%d flow_ok=%d flips=%lu\n", r.rounds, r.alloc_ok, r.reg_ok,
	       r.flow_ok, r.flips);
	printf("fake_groups_max=%llu fake_channels_max=%llu registered_end=%llu\n",
	       (unsigned long long)r.groups_max, (unsigned long long)r.channels_max,
	       (unsigned long long)registered);
	close(uvm);
	adv_print_summary(&t);
	return 0;
}
