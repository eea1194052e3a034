/* SPDX-License-Identifier: MIT */
/* adv.c - helpers shared by the adversarial quota tests (see adv.h). */
#define _GNU_SOURCE
#include "adv.h"
#include "nvuvm_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Poll period while waiting for the fake driver to settle. */
#define ADV_POLL_US 10000

void adv_count(struct adv_tally *t, rmc_status_t st)
{
	if (st == NV_OK)
		t->ok++;
	else if (st == NV_ERR_NO_MEMORY)
		t->nomem++;
	else
		t->other++;
}

void adv_add(struct adv_tally *into, const struct adv_tally *t)
{
	into->ok += t->ok;
	into->nomem += t->nomem;
	into->other += t->other;
}

void adv_print_summary(const struct adv_tally *t)
{
	printf("SUMMARY ok=%d nomem=%d other=%d\n", t->ok, t->nomem, t->other);
	fflush(stdout);
}

void adv_session_or_die(struct rmc_session *s, int fd, const char *who)
{
	rmc_status_t st = rmc_session_open(s, fd);

	if (st != NV_OK) {
		printf("%s: setup failed: %s\n", who, rmc_status_str(st));
		fflush(stdout);
		exit(ADV_EXIT_SETUP);
	}
}

rmc_status_t adv_alloc_rm(struct rmc_session *s, const struct rmc_how *how,
			  nv_handle_t h, uint64_t size)
{
	return rmc_alloc_vidmem(s->fd, how, s->client, s->device, h, size);
}

rmc_status_t adv_free_rm(struct rmc_session *s, const struct rmc_how *how, nv_handle_t h)
{
	return rmc_free(s->fd, how, s->client, s->device, h);
}

#define READY_POLLS 1200
#define READY_POLL_US 50000

int adv_ready_then_wait(const char *file)
{
	char done[PATH_MAX];
	FILE *f;

	if (snprintf(done, sizeof(done), "%s.done", file) >= (int)sizeof(done) || !(f = fopen(file, "w")))
		return -1;
	fclose(f);
	for (int i = 0; i < READY_POLLS && access(done, F_OK) != 0; i++)
		usleep(READY_POLL_US);
	return 0;
}

void adv_publish_pair(const char *path, unsigned a, unsigned b)
{
	char tmp[PATH_MAX];
	FILE *f;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp) || !(f = fopen(tmp, "w")))
		return;
	fprintf(f, "%x %x\n", a, b);
	fclose(f);
	(void)rename(tmp, path);
}

int adv_wait_pair(const char *path, unsigned *a, unsigned *b, int steps)
{
	for (int i = 0; i < steps; i++) {
		FILE *f = fopen(path, "r");
		if (f) {
			int n = fscanf(f, "%x %x", a, b);
			fclose(f);
			if (n == 2)
				return 0;
		}
		usleep(ADV_PAIR_POLL_US);
	}
	return -1;
}

int adv_hold_chunks(struct rmc_session *s, int max, struct adv_tally *t)
{
	int ok = 0;

	for (int i = 0; i < max; i++) {
		rmc_status_t st = adv_alloc_rm(s, NULL, rmc_next_handle(s), ADV_CHUNK);
		adv_count(t, st);
		if (st != NV_OK)
			break;
		ok++;
	}
	return ok;
}

void adv_fill(struct rmc_session *s, const struct rmc_how *how, adv_alloc_fn alloc,
	      adv_free_fn free_fn, uint64_t chunk, const char *label, struct adv_fill *f)
{
	nv_handle_t h;
	rmc_status_t st = NV_OK;

	f->stop = NV_OK;
	f->refree = f->realloc = NV_ERR_GENERIC;
	while (f->held < ADV_MAX_CHUNKS) {
		h = rmc_next_handle(s);
		st = alloc(s, how, h, chunk);
		adv_count(&f->tally, st);
		if (st != NV_OK)
			break;
		f->h[f->held++] = h;
	}
	f->stop = st;
	printf("%s: held=%d (%llu MiB) stop=0x%x (%s)\n", label, f->held,
	       (unsigned long long)(f->held * chunk / RMC_MIB), st, rmc_status_str(st));

	if (f->held > 0) {
		h = f->h[f->held - 1];
		f->refree = free_fn(s, how, h);
		if (f->refree == NV_OK) {
			f->held--;
			h = rmc_next_handle(s);
			f->realloc = alloc(s, how, h, chunk);
			adv_count(&f->tally, f->realloc);
			if (f->realloc == NV_OK)
				f->h[f->held++] = h;
		}
		/* Two printf calls: rmc_status_str shares one buffer. */
		printf("%s: free_one=0x%x (%s)", label, f->refree, rmc_status_str(f->refree));
		printf(" realloc=0x%x (%s)\n", f->realloc, rmc_status_str(f->realloc));
	}
	fflush(stdout);
}

void adv_fill_release(struct rmc_session *s, const struct rmc_how *how, adv_free_fn free_fn,
		      struct adv_fill *f)
{
	while (f->held > 0)
		(void)free_fn(s, how, f->h[--f->held]);
}

int adv_wait_fake_idle(int timeout_ms)
{
	uint64_t used;
	int waited_us = 0;

	while (waited_us < timeout_ms * 1000) {
		if (rmc_fake_stat("gpu0.vidmem_used", &used) < 0)
			return -1;
		if (used == 0)
			return 0;
		usleep(ADV_POLL_US);
		waited_us += ADV_POLL_US;
	}
	return -1;
}

void adv_race_allocs(int fd, volatile struct nvos64 *call, nv_handle_t client, nv_handle_t base,
		     uint64_t params, int tries, int *ok, int *refused)
{
	*ok = *refused = 0;
	for (int i = 0; i < tries; i++) {
		call->h_root = client;
		call->h_object_new = base + (nv_handle_t)i;
		call->p_alloc_parms = params;
		call->status = 0;
		if (syscall(SYS_ioctl, fd, NV_IOC_WORD(NV_ESC_RM_ALLOC, sizeof(*call)), (void *)call) < 0)
			continue;
		if (call->status == NV_OK)
			(*ok)++;
		else if (call->status == NV_ERR_INSUFFICIENT_RESOURCES)
			(*refused)++;
	}
}

int adv_send_fd(int sock, int fd, const void *msg, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &mh, 0) == (ssize_t)len ? 0 : -1;
}

int adv_recv_fd(int sock, void *msg, size_t len)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int fd = -1;

	if (recvmsg(sock, &mh, MSG_CMSG_CLOEXEC) != (ssize_t)len)
		return -1;
	cm = CMSG_FIRSTHDR(&mh);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

struct uvm_map_external_tail *adv_uvm_tail(struct adv_uvm_map *m)
{
	return (struct uvm_map_external_tail *)(m->bytes + UVM_MAP_EXTERNAL_TAIL_OFF(ADV_UVM_MAX_GPUS));
}

void adv_uvm_fill_map(struct adv_uvm_map *m, int ctl, nv_handle_t client, nv_handle_t mem,
		      uint64_t len)
{
	struct uvm_map_external_head head = { .base = ADV_UVM_RANGE_BASE, .length = len };
	struct uvm_gpu_mapping_attrs gpu = { .gpu_uuid = { 0x11 } };

	memset(m, 0, sizeof(*m));
	memcpy(m->bytes, &head, sizeof(head));
	memcpy(m->bytes + sizeof(head), &gpu, sizeof(gpu));
	*adv_uvm_tail(m) = (struct uvm_map_external_tail){ .gpu_count = 1, .rm_ctrl_fd = ctl,
	                                                   .h_client = client, .h_memory = mem,
	                                                   .rm_status = NV_ERR_GENERIC };
}

int adv_uvm_with_range(uint64_t len, const char *who)
{
	int fd = open("/dev/nvidia-uvm", O_RDWR | O_CLOEXEC);
	struct uvm_initialize_params init = { 0 };
	struct uvm_create_external_range_params range = { .base = ADV_UVM_RANGE_BASE, .length = len };

	if (fd < 0 || syscall(SYS_ioctl, fd, UVM_INITIALIZE, &init) < 0 ||
	    syscall(SYS_ioctl, fd, UVM_CREATE_EXTERNAL_RANGE, &range) < 0 || range.rm_status != NV_OK) {
		printf("%s: UVM setup failed (range status 0x%x)\n", who, range.rm_status);
		fflush(stdout);
		exit(ADV_EXIT_SETUP);
	}
	return fd;
}

rmc_status_t adv_uvm_map(int uvm, struct adv_uvm_map *m)
{
	if (syscall(SYS_ioctl, uvm, UVM_MAP_EXTERNAL_ALLOCATION, m->bytes) < 0)
		return RMC_SYSERR(errno);
	return adv_uvm_tail(m)->rm_status;
}
