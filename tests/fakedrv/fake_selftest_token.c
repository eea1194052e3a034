/* SPDX-License-Identifier: MIT */
/*
 * fake_selftest_token.c - the security token of an RS_SHARE_TYPE_OS_
 * SECURITY_TOKEN policy (fake_share.c), which --uvm-map as-user relies on
 * (own_rm.h, gs_own_rm_share_token).
 *
 * The driver's facts (580.95.05): a client's token is the euid and the
 * process of the thread that made it (osGetSecurityToken, os.c); two
 * tokens match when either is equal (osValidateClientTokens); for a
 * kernel client's dup, as UVM's of the memory it maps, the calling
 * thread's token is taken, for a user client's, that client's own
 * (cliresShareCallback, client_resource.c).
 *
 * An owner process of uid OWNER_UID makes a client and memory and shares
 * its client by token (other_start_as); other processes, each with an effective uid of
 * its own (setresuid on the thread, as the supervisor does), map it
 * through UVM and dup it into a client of their own.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fake_selftest.h"

#define OWNER_UID   47021u
#define STRANGER_UID 47022u
#define MAP_BYTES   (2ull << 20)  /* of the owner's 64 MiB */
#define RANGE_BASE  (1ull << 41)
#define RANGE_BYTES (64ull << 20)

/* The owner: a process of OWNER_UID with a client and memory, its client
 * shared by token when share is set. */
static void owner_start(struct other *o, bool share)
{
	const struct rs_share_policy token = { .access_mask = RS_ACCESS_DUP_OBJECT_BIT,
	                                       .type = RS_SHARE_TYPE_OS_SECURITY_TOKEN,
	                                       .action = RS_SHARE_ACTION_FLAG_COMPOSE };

	other_start_as(o, OWNER_UID, share ? &token : NULL, true);
}

/* What another process of euid gets: its UVM map of the owner's memory
 * (kernel dup: its thread's token), and its dup into a client it made
 * with that euid (user dup: its client's token). Run in a child so that
 * this process keeps its own uid. Returns the two statuses as
 * map << 8 | dup, or -1. */
static int try_as(const struct other *o, uid_t euid)
{
	int p[2];

	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		int r[2] = { -1, -1 };
		if (selftest_set_euid(euid)) {
			int fd = open_ctl(), ufd = open_uvm();
			nv_handle_t hdev, hc = make_client(fd, &hdev), hd = 0;
			if (uvm_create(ufd, RANGE_BASE, RANGE_BYTES) == NV_OK)
				r[0] = (int)uvm_map(ufd, RANGE_BASE, MAP_BYTES, o->hc, o->hm);
			r[1] = (int)dup_obj(fd, hc, hdev, &hd, o->hc, o->hm);
			(void)uvm_free(ufd, RANGE_BASE, RANGE_BYTES);
			close(ufd);
			close(fd);
		}
		_exit(write(p[1], r, sizeof(r)) == sizeof(r) ? 0 : 1);
	}
	int r[2] = { -1, -1 }, st;

	close(p[1]);
	if (read(p[0], r, sizeof(r)) != sizeof(r))
		r[0] = r[1] = -1;
	close(p[0]);
	waitpid(pid, &st, 0);
	return r[0] < 0 || r[1] < 0 ? -1 : (r[0] << 8) | r[1];
}

#define BOTH(map, dup) ((int)(map) << 8 | (int)(dup))

void token_checks(void)
{
	const int refused = BOTH(NV_ERR_INSUFFICIENT_PERMISSIONS, NV_ERR_INSUFFICIENT_PERMISSIONS);
	struct other o;

	owner_start(&o, false);
	check(o.hc && try_as(&o, OWNER_UID) == refused,
	      "token: unshared, a process of the owner's uid may neither map nor dup (the PID default)");
	check(other_stop(&o), "token: the owner ends");

	owner_start(&o, true);
	check(o.hc && stat_get("share_token_policies") == 1, "token: the owner's client shared by token");
	check(try_as(&o, OWNER_UID) == BOTH(NV_OK, NV_OK),
	      "token: then a thread of the owner's euid maps it and a client of that euid dups it");
	check(try_as(&o, STRANGER_UID) == refused, "token: another euid may neither map nor dup it");
	check(try_as(&o, 0) == refused, "token: root's neither (the token is not a privilege)");
	check(other_stop(&o) && stat_wait("clients_live", 0) == 0 && stat_wait("gpu0.vidmem_used", 0) == 0,
	      "token: all closed, nothing held");
}
