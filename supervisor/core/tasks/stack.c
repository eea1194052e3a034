/* SPDX-License-Identifier: MIT */
/*
 * stack.c - the user-space call stack of a refused thread (stack.h).
 *
 * The supervisor reads, without stopping the thread (it is blocked in its
 * seccomp notification): its stack pointer and pc from /proc/TID/syscall,
 * and up to GS_STACK_WINDOW bytes of its stack from there with
 * process_vm_readv. A child of the supervisor then unwinds that copy with
 * libdw, by the CFI of the binaries the thread has mapped (opened
 * read-only in the workload's root), and names each frame; the child
 * closes every descriptor but its pipe, enters the workload's root
 * (chroot), runs under a seccomp filter that leaves it reading files and
 * writing that pipe, and is killed past GS_STACK_TIMEOUT_MS. Nothing here is decided
 * upon: the frames are the workload's data, recorded as text.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "detached.h"
#include "gpusandbox.h"
#include "stack.h"

#define PATH_BUF 64
#define SYSCALL_BUF 256

#ifndef GS_HAVE_LIBDW

bool gs_stack_available(void)
{
	return false;
}

void gs_stack_read(pid_t tid, struct gs_stack *out)
{
	(void)tid;
	memset(out, 0, sizeof(*out));
	out->error = "gpusandbox was built without libdw";
}

#else

#include <elfutils/libdwfl.h>
#include <seccomp.h>
#include <sys/stat.h>

/* The stack copied for the child: enough for GS_STACK_MAX_FRAMES frames
 * of ordinary code; a frame past it ends the stack early. */
#define GS_STACK_WINDOW (64u * 1024u)
/* /proc/TID/syscall: the number, six arguments, then sp and pc. */
#define SYSCALL_FIELDS 9
#define SYSCALL_SP 7
#define SYSCALL_PC 8
/* The child's CPU time: the timeout kills it sooner, this is a backstop. */
#define CHILD_CPU_SECONDS 1
/* Descriptors closed one by one where close_range(2) is missing (5.9). */
#define GS_STACK_MAX_FD 4096

/* The stack pointer's DWARF register number. */
#if defined(__x86_64__)
#define DWARF_SP 7  /* rsp */
#define DWARF_FP 6  /* rbp: not in /proc/TID/syscall, guessed (guess_frame) */
#elif defined(__aarch64__)
#define DWARF_SP 31 /* sp */
#endif

enum stack_err { STACK_OK, STACK_NOT_BLOCKED, STACK_UNREADABLE, STACK_NO_FRAMES, STACK_CHILD,
                 STACK_TIMEOUT, STACK_ARCH };
static const char *const stack_err_text[] = {
	[STACK_OK] = NULL,
	[STACK_NOT_BLOCKED] = "the thread was not blocked in its call",
	[STACK_UNREADABLE] = "the thread's stack could not be read",
	[STACK_NO_FRAMES] = "no frame could be unwound",
	[STACK_CHILD] = "the unwinder failed",
	[STACK_TIMEOUT] = "unwinding took too long",
	[STACK_ARCH] = "no unwinder for this architecture",
};

/* What the child sends back: fixed size, one atomic write. */
struct stack_msg {
	uint32_t n, truncated, err;
	char     frame[GS_STACK_MAX_FRAMES][GS_STACK_FRAME_TEXT];
};
_Static_assert(sizeof(struct stack_msg) <= PIPE_BUF, "the child's answer is one atomic write");

/* The copy the child unwinds. */
struct unwind {
	pid_t    tid;
	uint64_t sp, pc;
	uint8_t  window[GS_STACK_WINDOW];
	size_t   window_len;
	bool     thread_given;
	uint64_t fp_guess;  /* 0: rbp unknown */
	Dwfl    *dwfl;
	struct stack_msg msg;
};

bool gs_stack_available(void)
{
	return true;
}

/* sp and pc of a thread blocked in a system call ("running" otherwise). */
static int read_syscall_regs(pid_t tid, uint64_t *sp, uint64_t *pc)
{
	char path[PATH_BUF], buf[SYSCALL_BUF], *p = buf, *end;
	uint64_t v[SYSCALL_FIELDS];

	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)tid);
	if (gs_read_text(path, buf, sizeof(buf)) < 0)
		return -1;
	for (unsigned i = 0; i < SYSCALL_FIELDS; i++, p = end) {
		errno = 0;
		v[i] = strtoull(p, &end, 0);
		if (end == p || errno)
			return -1;
	}
	*sp = v[SYSCALL_SP];
	*pc = v[SYSCALL_PC];
	return 0;
}

/* Copies the stack from sp up, as far as it is mapped (a short read stops
 * at the mapping's end). */
static int copy_stack(struct unwind *u)
{
	struct iovec local = { u->window, sizeof(u->window) };
	struct iovec remote = { (void *)(uintptr_t)u->sp, sizeof(u->window) };
	ssize_t n;

	for (size_t len = sizeof(u->window); len >= sizeof(uint64_t); len /= 2) {
		local.iov_len = remote.iov_len = len;
		n = process_vm_readv(u->tid, &local, 1, &remote, 1, 0);
		if (n > 0) {
			u->window_len = (size_t)n;
			return 0;
		}
	}
	return -1;
}

/* ---- the child --------------------------------------------------------------- */

/* Where the workload's files are: "" once the child is in the workload's
 * root (chroot), else "/proc/TID/root". */
static char child_root[PATH_BUF];

/* The workload's binaries, as it sees them (its root), opened read-only
 * and only if regular files: a FIFO would block the unwinder. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
                    char **file_name, Elf **elfp)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	(void)mod, (void)userdata, (void)base, (void)elfp;
	if (name[0] != '/' || snprintf(path, sizeof(path), "%s%s", child_root, name) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	*file_name = strdup(path);
	return fd;
}

/* Separate debug info is not looked for: the supervisor's own files are
 * not the workload's. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                        const char *file_name, const char *debuglink, GElf_Word crc, char **out)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink,
	(void)crc, (void)out;
	return -1;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	struct unwind *u = arg;

	(void)dwfl;
	if (u->thread_given)
		return 0;
	u->thread_given = true;
	*thread_arg = u;
	return u->tid;
}

/* Only the copied window can be read: the thread runs on meanwhile. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct unwind *u = arg;

	(void)dwfl;
	if (addr < u->sp || addr - u->sp > u->window_len - sizeof(*result))
		return false;
	memcpy(result, u->window + (addr - u->sp), sizeof(*result));
	return true;
}

/* sp and pc are known; the frame pointer is not (it is not in
 * /proc/TID/syscall), so CFI that needs it stops there. */
static bool initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Word sp = u->sp;

	if (!dwfl_thread_state_registers(thread, DWARF_SP, 1, &sp))
		return false;
#ifdef DWARF_FP
	Dwarf_Word fp = u->fp_guess;
	if (fp && !dwfl_thread_state_registers(thread, DWARF_FP, 1, &fp))
		return false;
#endif
	dwfl_thread_state_register_pc(thread, u->pc);
	return true;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "?";
}

/* "level3+0x12 (stack_chain.c:21)", "ioctl+0xb (libc.so.6)" or an address. */
static void describe(struct unwind *u, Dwarf_Addr pc, bool activation, char *out)
{
	const Dwarf_Addr at = activation ? pc : pc - 1; /* inside the call */
	Dwfl_Module *mod = dwfl_addrmodule(u->dwfl, at);
	const char *mname = mod ? dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL) : NULL;
	const char *name = NULL, *src = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	int line = 0;

	if (mod) {
		Dwfl_Line *l = dwfl_module_getsrc(mod, at);
		name = dwfl_module_addrinfo(mod, at, &off, &sym, NULL, NULL, NULL);
		src = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	}
	off += activation ? 0 : 1;
	if (name && src)
		snprintf(out, GS_STACK_FRAME_TEXT, "%s+0x%llx (%s:%d)", name, (unsigned long long)off,
		         base_name(src), line);
	else if (name)
		snprintf(out, GS_STACK_FRAME_TEXT, "%s+0x%llx (%s)", name, (unsigned long long)off,
		         base_name(mname));
	else
		snprintf(out, GS_STACK_FRAME_TEXT, "0x%llx (%s)", (unsigned long long)pc,
		         mod ? base_name(mname) : "?");
}

static int on_frame(Dwfl_Frame *frame, void *arg)
{
	struct unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation))
		return DWARF_CB_ABORT;
	if (u->msg.n == GS_STACK_MAX_FRAMES) {
		u->msg.truncated = 1;
		return DWARF_CB_ABORT;
	}
	describe(u, pc, activation, u->msg.frame[u->msg.n++]);
	return DWARF_CB_OK;
}

/* Where CFI stopped (code without it, or a frame that needs the frame
 * pointer): the frame pointer chain, if one can be found in the copy. A
 * candidate is a word pointing further up the stack, beside a return
 * address the modules know, whose own link looks the same. */
static bool looks_like_frame(struct unwind *u, uint64_t fp)
{
	Dwarf_Word next, ret;

	return memory_read(u->dwfl, fp, &next, u) && memory_read(u->dwfl, fp + 8, &ret, u) &&
	       next > fp && (next & 7) == 0 && dwfl_addrmodule(u->dwfl, ret - 1) != NULL;
}

/* One CFI walk from the thread's sp and pc (and u->fp_guess). */
static void walk_cfi(struct unwind *u)
{
	memset(&u->msg, 0, sizeof(u->msg));
	u->msg.err = STACK_CHILD;
	u->thread_given = false;
	(void)dwfl_getthread_frames(u->dwfl, u->tid, on_frame, u);
}

/* A system call wrapper built with frame pointers (Ubuntu 24.04's glibc
 * ioctl: push rbp; mov rbp, rsp; sub rsp, 0x50) has CFI that finds its
 * caller through rbp, which /proc/TID/syscall does not give, and its
 * caller (libcuda) keeps no frame chain for walk_frame_pointers. So try
 * rbp at each of the first slots above sp that sit below a return
 * address into a module, and keep the walk that goes furthest: a stale
 * return address left in the wrapper's frame gives a short or broken
 * walk. Only what is recorded depends on it. */
#define FP_GUESS_SPAN  512u
#define FP_GUESS_TRIES 8u
static void guess_frame(struct unwind *u)
{
#ifdef DWARF_FP
	struct stack_msg best = u->msg;
	unsigned tries = 0;

	for (uint64_t a = u->sp; a + 16 <= u->sp + u->window_len && a < u->sp + FP_GUESS_SPAN &&
	                         tries < FP_GUESS_TRIES; a += 8) {
		Dwarf_Word ret;
		if (!memory_read(u->dwfl, a + 8, &ret, u) || ret < 2 || !dwfl_addrmodule(u->dwfl, ret - 1))
			continue;
		tries++;
		u->fp_guess = a;
		walk_cfi(u);
		if (u->msg.n > best.n)
			best = u->msg;
	}
	u->fp_guess = 0;
	u->msg = best;
#else
	(void)u;
#endif
}

static void walk_frame_pointers(struct unwind *u)
{
	uint64_t fp = 0;
	Dwarf_Word next, ret;

	for (uint64_t a = u->sp; a + 16 <= u->sp + u->window_len && !fp; a += 8) {
		Dwarf_Word w;
		if (memory_read(u->dwfl, a, &w, u) && looks_like_frame(u, a) &&
		    (!memory_read(u->dwfl, w, &next, u) || looks_like_frame(u, w)))
			fp = a;
	}
	while (fp && u->msg.n < GS_STACK_MAX_FRAMES && memory_read(u->dwfl, fp + 8, &ret, u) &&
	       dwfl_addrmodule(u->dwfl, ret - 1)) {
		describe(u, ret, false, u->msg.frame[u->msg.n++]);
		if (!memory_read(u->dwfl, fp, &next, u) || next <= fp)
			break;
		fp = next;
	}
	if (u->msg.n == GS_STACK_MAX_FRAMES && fp && memory_read(u->dwfl, fp + 8, &ret, u) && ret)
		u->msg.truncated = 1;
}

/* The child may read files and its window, write its pipe and exit;
 * anything else fails with EPERM. */
static int confine(int wfd)
{
	static const int allowed[] = {
		SCMP_SYS(read), SCMP_SYS(pread64), SCMP_SYS(close), SCMP_SYS(fstat),
		SCMP_SYS(newfstatat), SCMP_SYS(statx), SCMP_SYS(lseek), SCMP_SYS(mmap),
		SCMP_SYS(munmap), SCMP_SYS(mremap), SCMP_SYS(mprotect), SCMP_SYS(brk),
		SCMP_SYS(madvise), SCMP_SYS(futex), SCMP_SYS(getpid), SCMP_SYS(gettid),
		SCMP_SYS(readlink), SCMP_SYS(readlinkat), SCMP_SYS(rt_sigprocmask),
		SCMP_SYS(exit), SCMP_SYS(exit_group), SCMP_SYS(getdents64), SCMP_SYS(fcntl),
	};
	scmp_filter_ctx f = seccomp_init(SCMP_ACT_ERRNO(EPERM));
	int rc = f ? 0 : -1;
	const scmp_datum_t ro_mask = O_ACCMODE | O_CREAT | O_TRUNC | O_APPEND;

	for (size_t i = 0; rc == 0 && i < sizeof(allowed) / sizeof(allowed[0]); i++)
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, allowed[i], 0);
	if (rc == 0)
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(openat), 1,
		                      SCMP_A2(SCMP_CMP_MASKED_EQ, ro_mask, O_RDONLY));
	if (rc == 0)
		rc = seccomp_rule_add(f, SCMP_ACT_ALLOW, SCMP_SYS(write), 1,
		                      SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)wfd));
	if (rc == 0)
		rc = seccomp_load(f);
	if (f)
		seccomp_release(f);
	return rc;
}

/* The child holds nothing of the supervisor's but its pipe, and sees only
 * the workload's files: a bug in parsing a hostile ELF then reaches no
 * more than the workload already has. The maps are read first, from the
 * supervisor's /proc. Without CAP_SYS_CHROOT the files are reached
 * through /proc/TID/root instead. */
static void enter_workload_root(struct unwind *u, int wfd)
{
	char root[PATH_BUF];

	if (syscall(SYS_close_range, 0, wfd - 1, 0) < 0 || syscall(SYS_close_range, wfd + 1, ~0u, 0) < 0)
		for (int fd = 0; fd < GS_STACK_MAX_FD; fd++)
			if (fd != wfd)
				(void)close(fd);
	snprintf(root, sizeof(root), "/proc/%d/root", (int)u->tid);
	if (chdir(root) == 0 && chroot(".") == 0 && chdir("/") == 0)
		child_root[0] = '\0';
	else
		snprintf(child_root, sizeof(child_root), "%s", root);
}

static _Noreturn void unwind_child(struct unwind *u, int wfd)
{
	static const Dwfl_Callbacks callbacks = {
		.find_elf = find_elf, .find_debuginfo = no_debuginfo,
	};
	static const Dwfl_Thread_Callbacks thread_callbacks = {
		.next_thread = next_thread, .memory_read = memory_read,
		.set_initial_registers = initial_registers,
	};
	const struct rlimit cpu = { CHILD_CPU_SECONDS, CHILD_CPU_SECONDS };

	memset(&u->msg, 0, sizeof(u->msg));
	u->msg.err = STACK_CHILD;
	(void)setrlimit(RLIMIT_CPU, &cpu);
	(void)prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	if ((u->dwfl = dwfl_begin(&callbacks)) && dwfl_linux_proc_report(u->dwfl, u->tid) == 0 &&
	    (enter_workload_root(u, wfd), confine(wfd) == 0) && dwfl_report_end(u->dwfl, NULL, NULL) == 0 &&
	    dwfl_attach_state(u->dwfl, NULL, u->tid, &thread_callbacks, u)) {
		walk_cfi(u);
		/* CFI gave the syscall's wrapper at most: guess its rbp, then
		 * try the frame pointers. */
		if (u->msg.n <= 2 && !u->msg.truncated)
			guess_frame(u);
		if (u->msg.n <= 2 && !u->msg.truncated)
			walk_frame_pointers(u);
		u->msg.err = u->msg.n ? STACK_OK : STACK_NO_FRAMES;
	}
	(void)!write(wfd, &u->msg, sizeof(u->msg));
	_exit(0);
}

/* ---- the supervisor's side ------------------------------------------------------ */

static void *reap_in_thread(void *arg)
{
	pid_t child = (pid_t)(intptr_t)arg;

	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	return NULL;
}

/* The child copied our fd table, dups parked there included (workload.h):
 * its exit closes them, and the close of a FUSE file the workload serves
 * waits for the server. So the child is reaped at once only when it is
 * gone already, else by a detached thread of its own, which nobody waits
 * for (found by uvm_ctlfd race: a map held 5 s by a refusal's stack). */
static void reap_child(pid_t child)
{
	if (waitpid(child, NULL, WNOHANG) != 0)
		return;
	if (gs_spawn_detached(reap_in_thread, (void *)(intptr_t)child) != 0)
		(void)reap_in_thread((void *)(intptr_t)child);
}

/* The child's answer within the time left, or an error code. */
static uint32_t await_child(pid_t child, int rfd, struct stack_msg *msg)
{
	struct pollfd p = { rfd, POLLIN, 0 };
	ssize_t n = 0;

	if (poll(&p, 1, GS_STACK_TIMEOUT_MS) == 1)
		n = read(rfd, msg, sizeof(*msg));
	kill(child, SIGKILL);
	reap_child(child);
	if (n == 0 && p.revents == 0)
		return STACK_TIMEOUT;
	if (n != (ssize_t)sizeof(*msg) || msg->err >= sizeof(stack_err_text) / sizeof(stack_err_text[0]))
		return STACK_CHILD;
	return msg->err;
}

static void stack_from_msg(struct gs_stack *out, const struct stack_msg *msg)
{
	out->n = msg->n < GS_STACK_MAX_FRAMES ? msg->n : GS_STACK_MAX_FRAMES;
	out->truncated = msg->truncated != 0;
	for (unsigned i = 0; i < out->n; i++) {
		memcpy(out->frame[i], msg->frame[i], GS_STACK_FRAME_TEXT);
		out->frame[i][GS_STACK_FRAME_TEXT - 1] = '\0';
	}
}

/* The unwinding child of one copied stack: its answer, within
 * GS_STACK_TIMEOUT_MS. */
static uint32_t unwind_copy(struct unwind *u, struct gs_stack *out)
{
	struct stack_msg msg;
	uint32_t err;
	int pfd[2];
	pid_t child;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return STACK_CHILD;
	child = fork();
	if (child == 0) {
		close(pfd[0]);
		unwind_child(u, pfd[1]);
	}
	close(pfd[1]);
	err = child < 0 ? STACK_CHILD : await_child(child, pfd[0], &msg);
	close(pfd[0]);
	if (err == STACK_OK)
		stack_from_msg(out, &msg);
	return err;
}

void gs_stack_read(pid_t tid, struct gs_stack *out)
{
	uint32_t err = STACK_ARCH;

	memset(out, 0, sizeof(*out));
#ifdef DWARF_SP
	/* Its own copy per call (64 KiB), not one shared under a lock: the
	 * copy is a read of the workload's memory at the stack pointer it
	 * chose, which it can stall (a page of a FUSE file it serves), and
	 * one stalled read must hold up no other sandbox's refusals (the
	 * agent's containers each have workers of their own). */
	struct unwind *u = calloc(1, sizeof(*u));

	if (u)
		u->tid = tid;
	if (!u)
		err = STACK_CHILD;
	else if (read_syscall_regs(tid, &u->sp, &u->pc) < 0)
		err = STACK_NOT_BLOCKED;
	else if (copy_stack(u) < 0)
		err = STACK_UNREADABLE;
	else
		err = unwind_copy(u, out);
	free(u);
#else
	(void)tid;
#endif
	out->error = stack_err_text[err];
}

#endif
