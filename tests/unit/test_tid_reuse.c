/* SPDX-License-Identifier: MIT */
/*
 * A second pidfd_getfd after the fetch stage's NOTIF_ID_VALID must not act
 * on a reused tid (issue #17 item 13).
 *
 * Task A is trapped in a real seccomp user notification holding a file at
 * TARGET_FD; the supervisor's pidfd cache has a pidfd for it. A is then
 * killed and reaped, and its tid given to task B (clone3 with set_tid,
 * which root may do: the test plays a pid-cycling attacker deterministically),
 * which holds another file at the same fd number. The baseline is
 * dup_workload_fd by tid, as REGISTER_FD and the GPU-node borrowing used it
 * after the only check: it reaches B's file. dup_trapped_fd (exec_common.c)
 * and the private table's borrow (exec_escape_private, private_table.c)
 * check the notification again and take nothing (the latter makes no call).
 *
 * The answer's write-back comes after the driver ran the call, so after
 * every check: written by tid, it would land in B. It goes through the
 * trapped task's /proc/TID/mem, opened while the tid named A (the
 * executor opens it before the fetch's ID_VALID), which still holds A's
 * address space, gone with A: B's bytes stay as they were. The baseline
 * is process_vm_writev by tid, as the write-back was made before.
 *
 * Late open (issue #31): a call whose answer may write nothing opens
 * /proc/TID/mem only at its first write (answer_mem, exec_common.c), after
 * the driver ran, so possibly after the reuse; it then proves the file by
 * an ID_VALID made after the open. While A waits, a late open writes into
 * A; after the reuse, the open names B, the check fails and the file is
 * closed unwritten. The baseline is the same open by tid without the check
 * after it: it writes into B.
 * A kept answer file taken unlooked (round 12: open_answer_mem) proves a
 * fetch's reads by its one look at A's pidfd after them: alive while A
 * waits; after the reuse the look finds A exited, the file is let go, and
 * the ID_VALID the fetch falls back to fails (the baseline: a read by tid
 * then reaches B).
 * A look through /proc made by the worker's kept /proc/TID directory
 * (proc_dir.c, issue #31) while the tid named A answers for B after the
 * reuse, as a look by path does: the kept directory is bound to A, whose
 * lookups fail once A is gone (the baseline: a lookup through it), and
 * the look is made again by path.
 * Needs root; says SKIP where clone3's set_tid is not available.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/trap_child.h"
#include "check.h"
#include "exec_int.h"
#include "mm_keep.h"
#include "proc_dir.h"

/* The fd number both tasks hold their file at, and their files' names. */
#define TARGET_FD 100
/* A parameter block for a private-table call that is never made. */
#define PRIVATE_CALL_BYTES 64
#define NAME_A "trapped-task"
#define NAME_B "reused-tid"

/* The bytes an answer is written over: at the same address in A and B
 * (both are forks of this process). */
#define VICTIM_BYTES 16
static char victim[VICTIM_BYTES] = "untouched";
static const char answer_bytes[VICTIM_BYTES] = "the answer";

/* A file named name at TARGET_FD. */
static int hold_named_file(const char *name)
{
	int fd = memfd_create(name, 0);

	return fd < 0 || dup2(fd, TARGET_FD) < 0 ? -1 : 0;
}

/* Task A: a file at TARGET_FD, a listener sent to the parent, then the
 * trapped call, where it waits until killed. */
static void trapped_task(int sock)
{
	if (hold_named_file(NAME_A) < 0)
		_exit(1);
	trap_child_and_wait(sock);
}

/* Task B, made with A's tid: its own file at TARGET_FD, then a byte to
 * say it is ready; then, for each byte on ask, its victim bytes on ready,
 * until killed. */
static pid_t task_with_tid(pid_t tid, int ready, int ask)
{
	struct clone_args args = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&tid,
	                           .set_tid_size = 1 };
	long pid = syscall(SYS_clone3, &args, sizeof(args));

	if (pid == 0) {
		char ok = hold_named_file(NAME_B) == 0 ? 'y' : 'n', q;
		if (write(ready, &ok, 1) != 1)
			_exit(1);
		while (read(ask, &q, 1) == 1)
			if (write(ready, victim, sizeof(victim)) != (ssize_t)sizeof(victim))
				_exit(1);
		_exit(0);
	}
	return (pid_t)pid;
}

/* B's victim bytes as B reads them, into out. */
static bool victim_of_b(int ask, int ready, char out[VICTIM_BYTES])
{
	return write(ask, "?", 1) == 1 && read(ready, out, VICTIM_BYTES) == VICTIM_BYTES;
}

/* The name of the file our fd is open on contains want. */
static bool names(int fd, const char *want)
{
	char link[64], path[256];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = '\0';
	return strstr(path, want) != NULL;
}

int main(void)
{
	static struct gs_session sb;
	struct gs_scratch scratch = { 0 };
	int sv[2], ready[2], ask[2];

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(ready) < 0 || pipe(ask) < 0)
		return 1;
	pid_t a = fork();
	if (a == 0)
		trapped_task(sv[1]);
	int listener = fdpass_recv(sv[0]);
	CHECK(listener >= 0);
	if (gs_scratch_init(&scratch, &(struct gs_error){ 0 }) < 0)
		return 1;
	scratch.listener = listener;
	CHECK(ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, scratch.req) == 0);
	gs_pidfd_cache_init(&sb.pidfds);
	/* The target is a plain file, not the driver's: dups of it are taken
	 * as the uvm_ctlfd baselines take them (any file), not parked
	 * (workload.h), for what is tested here is whose fd it is. */
	sb.uvm_ctlfd_test = GS_UVM_CTLFD_UNCHECKED;
	struct call c = { .sb = &sb, .scratch = &scratch, .tid = (pid_t)scratch.req->pid, .dup = -1,
	                  .mem = GS_TASK_MEM_CLOSED };
	/* As the executor does: the address space first, then ID_VALID. */
	CHECK(task_mem_open(c.tid, &c.mem) == 0);
	CHECK(c.tid == a && notif_still_valid(&c));
	note_fetch_valid(&c);
	CHECK(c.mem_proven);
	c.argp = (uintptr_t)victim;
	c.size = VICTIM_BYTES;

	/* While A waits, the write-back reaches A. */
	char seen[VICTIM_BYTES] = { 0 };
	CHECK(mem_write(&c.mem, c.argp, "A's answer", sizeof("A's answer")) == 0);
	CHECK(mem_read(c.tid, c.argp, seen, sizeof(seen)) == 0 && strcmp(seen, "A's answer") == 0);

	/* A late open while A waits: opened, proven, written into A. */
	struct call late = { .sb = &sb, .scratch = &scratch, .tid = c.tid, .dup = -1,
	                     .mem = GS_TASK_MEM_CLOSED, .argp = c.argp };
	CHECK(mem_write(answer_mem(&late), late.argp, "A's late", sizeof("A's late")) == 0);
	CHECK(late.mem.fd >= 0 && late.mem_proven);
	CHECK(mem_read(c.tid, c.argp, seen, sizeof(seen)) == 0 && strcmp(seen, "A's late") == 0);
	/* The next late call starts closed, as each call does. */
	task_mem_close(&late.mem);
	late.mem_proven = false;

	/* While A waits: the tid names it, both ways. */
	int fd = dup_trapped_fd(&c, TARGET_FD);
	CHECK(fd >= 0 && names(fd, NAME_A));
	close(fd);
	/* The private table's check passes too: A holds no GPU node, so a
	 * call wanting one is not made (not "gone"). */
	uint8_t params[PRIVATE_CALL_BYTES] = { 0 };
	int rc_ioctl = -1;
	CHECK(gs_private_table_start(&(struct gs_error){ 0 }) == 0);
	c.dup = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHECK(exec_escape_private(&c, NV_ESC_RM_ALLOC, sizeof(params), params, true, &rc_ioctl) ==
	      GS_PRIVATE_NO_NODES);

	/* A kept answer file of A's (mm_keep.h), as a worker keeps it after
	 * an answered call, then taken unlooked by a call that always writes
	 * (open_answer_mem): while A waits, the fetch's proof is that file's
	 * look, which finds A alive (the slot proven for the notification),
	 * and no ID_VALID. */
	struct gs_task_mem kept_a = GS_TASK_MEM_CLOSED;
	CHECK(task_mem_open(c.tid, &kept_a) == 0 && kept_a.pidfd >= 0);
	gs_mm_keep_put(&scratch.mms, &sb, c.tid, scratch.req->id, &kept_a);
	struct call kept = { .sb = &sb, .scratch = &scratch, .tid = c.tid, .dup = -1,
	                     .mem = GS_TASK_MEM_CLOSED, .argp = c.argp };
	CHECK(take_kept_mem_unlooked(&kept) && kept.mem.kept && !kept.mem_proven);
	CHECK(fetch_reads_proven(&kept) && kept.mem_proven && scratch.mms.proven_tid == c.tid);
	task_mem_close(&kept.mem);
	kept.mem_proven = false;

	/* A look at A's file through the kept directory, and a directory of
	 * A's of our own for the baseline. */
	char rel[32], dir_a[32];
	struct statx sx_a, sx_b, sx_path;
	snprintf(rel, sizeof(rel), "fd/%d", TARGET_FD);
	snprintf(dir_a, sizeof(dir_a), "/proc/%d", (int)c.tid);
	int a_dir = open(dir_a, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(a_dir >= 0 && gs_task_statx(c.tid, rel, STATX_INO, &sx_a) == 0);

	/* A dies; B gets its tid. */
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);
	pid_t b = task_with_tid(c.tid, ready[1], ask[0]);
	char ok = 0;
	if (b < 0) {
		printf("SKIP test_tid_reuse: clone3 set_tid: %s\n", strerror(errno));
		return 0;
	}
	CHECK(read(ready[0], &ok, 1) == 1 && ok == 'y' && b == c.tid);

	/* The kept directory answers for B now, as the path does: B's file,
	 * not A's and not an error. Baseline: A's directory finds nothing. */
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)c.tid, rel);
	CHECK(gs_task_statx(c.tid, rel, STATX_INO, &sx_b) == 0 &&
	      statx(AT_FDCWD, path, 0, STATX_INO, &sx_path) == 0);
	CHECK(sx_b.stx_ino == sx_path.stx_ino && sx_b.stx_ino != sx_a.stx_ino);
	CHECK(statx(a_dir, rel, 0, STATX_INO, &sx_path) < 0 && (errno == ESRCH || errno == ENOENT));
	close(a_dir);

	/* Baseline: by tid alone, the cached pidfd's task is gone and a
	 * fresh one names B. */
	fd = dup_workload_fd_any(&sb.pidfds, c.tid, TARGET_FD);
	CHECK(fd >= 0 && names(fd, NAME_B));
	if (fd >= 0)
		close(fd);
	/* The fix: the notification is checked again, and nothing is taken. */
	CHECK(!notif_still_valid(&c));
	errno = 0;
	CHECK(dup_trapped_fd(&c, TARGET_FD) < 0 && errno == ESRCH);
	CHECK(exec_escape_private(&c, NV_ESC_RM_ALLOC, sizeof(params), params, false, &rc_ioctl) ==
	      GS_PRIVATE_TASK_GONE);
	close(c.dup);

	/* A's kept file taken unlooked after the reuse: reads by tid now
	 * reach B (the baseline: B's bytes, not A's answer), and the fetch's
	 * proof rejects them: the look finds A exited and lets the file go,
	 * and the ID_VALID that follows fails.
	 * The call is a later notification's (another id: A's slot was
	 * proven for A's own).
	 */
	uint64_t a_id = scratch.req->id;
	scratch.req->id = a_id + 1;
	CHECK(take_kept_mem_unlooked(&kept) && kept.mem.kept && !kept.mem_proven);
	CHECK(mem_read(c.tid, c.argp, seen, sizeof(seen)) == 0 && strcmp(seen, "untouched") == 0);
	CHECK(!fetch_reads_proven(&kept) && kept.mem.fd == -1 && !kept.mem_proven);
	CHECK(!take_kept_mem_unlooked(&kept));
	scratch.req->id = a_id;

	/* The answer, once the driver is done: through A's address space it
	 * reaches nothing, and the write-back says so. */
	struct answer ans = answer_executed(&c, 0, NULL, 0, answer_bytes, VICTIM_BYTES, 0, NV_OK);
	CHECK(ans.kind == ANSWER_VALUE && ans.error == EFAULT);
	CHECK(victim_of_b(ask[1], ready[0], seen) && strcmp(seen, "untouched") == 0);
	/* The late open after the reuse: /proc/TID/mem now names B, the
	 * ID_VALID after the open fails, the file is closed unwritten. */
	late.size = VICTIM_BYTES;
	ans = answer_executed(&late, 0, NULL, 0, answer_bytes, VICTIM_BYTES, 0, NV_OK);
	CHECK(ans.kind == ANSWER_VALUE && ans.error == EFAULT);
	CHECK(late.mem.fd == -1 && !late.mem_proven);
	CHECK(victim_of_b(ask[1], ready[0], seen) && strcmp(seen, "untouched") == 0);
	/* Baseline: the same open without its check writes into B. */
	struct gs_task_mem unchecked = GS_TASK_MEM_CLOSED;
	CHECK(task_mem_open(late.tid, &unchecked) == 0);
	CHECK(mem_write(&unchecked, (uintptr_t)victim, "late open", sizeof("late open")) == 0);
	CHECK(victim_of_b(ask[1], ready[0], seen) && strcmp(seen, "late open") == 0);
	task_mem_close(&unchecked);
	/* Baseline: by tid, the same bytes land in B. */
	struct iovec local = { (void *)answer_bytes, VICTIM_BYTES };
	struct iovec remote = { victim, VICTIM_BYTES };
	CHECK(process_vm_writev(c.tid, &local, 1, &remote, 1, 0) == VICTIM_BYTES);
	CHECK(victim_of_b(ask[1], ready[0], seen) && strcmp(seen, "the answer") == 0);
	task_mem_close(&c.mem);

	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	gs_pidfd_cache_fini(&sb.pidfds);
	return check_summary();
}
