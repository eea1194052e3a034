/* SPDX-License-Identifier: MIT */
/*
 * runtime_default.c - the container runtimes' default seccomp profile, as
 * the base `gpusandbox profile` merges its traps onto when no --base is
 * given (runtime_default.h).
 *
 * The facts (which system calls, with which arguments) are those of the
 * default profile Docker, moby and containerd's CRI apply ("RuntimeDefault"):
 * github.com/moby/profiles/seccomp v0.2.3, default.json, as vendored by
 * moby/moby at b985e23. That profile is conditional: some rules hold only
 * for an architecture, a kernel version or a capability in the container's
 * bounding set ("includes"/"excludes"), which Docker and podman resolve per
 * container and containerd resolves in Go. A Localhost profile given to
 * containerd is read as a plain OCI linux.seccomp object, in which such
 * conditions do not exist (they would be ignored and every conditional
 * ALLOW would hold). So the profile is written here resolved, for:
 *  - this build's architecture (the x86 rules on x86-64, the ARM ones on
 *    aarch64);
 *  - a kernel of 4.8 or later (every kernel gpusandbox runs on);
 *  - a container whose bounding set has none of the capabilities the
 *    conditional rules name (CAP_SYS_ADMIN, CAP_SYS_PTRACE, CAP_SYS_CHROOT,
 *    CAP_SYS_MODULE, ...): the agent refuses a container holding
 *    CAP_SYS_ADMIN anyway (the driver would trust it), and a system call
 *    another capability unlocks stays refused here (a container that needs
 *    one is given its runtime's own profile through --base, which keeps the
 *    conditions for runtimes that resolve them).
 * Unlisted system calls fail with EPERM (defaultErrnoRet 1), clone3 with
 * ENOSYS so that the C library falls back to clone, whose namespace flags
 * are refused. Nothing here is trapped: profile.c takes the names it traps
 * (ioctl, seccomp, mmap, mmap2, remap_file_pages) out of these rules and
 * allows back what it does not trap, as for any base whose default refuses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "runtime_default.h"

#define ACT_ALLOW "SCMP_ACT_ALLOW"
#define ACT_ERRNO "SCMP_ACT_ERRNO"
/* default.json: "defaultErrnoRet": 1. */
#define DEFAULT_ERRNO EPERM
/* CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
 * CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET, default.json's
 * 2114060288: clone is allowed only with none of them. */
#define CLONE_NAMESPACE_FLAGS 0x7e020000ull
/* socket(2)'s families refused: AF_ALG's 38 and AF_VSOCK's 40
 * (default.json allows < 38, == 39 and > 40). */
#define AF_REFUSED_LOW 38u
#define AF_BETWEEN 39u
#define AF_REFUSED_HIGH 40u
/* personality(2) values default.json allows: PER_LINUX, PER_LINUX32,
 * UNAME26, UNAME26 | PER_LINUX32, and 0xffffffff (the query). */
static const uint64_t personalities[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffffull };

/* default.json's unconditional list (its first rule), in its order. */
static const char *const allowed[] = {
	"accept", "accept4", "access", "adjtimex", "alarm", "bind", "brk", "cachestat", "capget",
	"capset", "chdir", "chmod", "chown", "chown32", "clock_adjtime", "clock_adjtime64",
	"clock_getres", "clock_getres_time64", "clock_gettime", "clock_gettime64", "clock_nanosleep",
	"clock_nanosleep_time64", "close", "close_range", "connect", "copy_file_range", "creat",
	"dup", "dup2", "dup3", "epoll_create", "epoll_create1", "epoll_ctl", "epoll_ctl_old",
	"epoll_pwait", "epoll_pwait2", "epoll_wait", "epoll_wait_old", "eventfd", "eventfd2",
	"execve", "execveat", "exit", "exit_group", "faccessat", "faccessat2", "fadvise64",
	"fadvise64_64", "fallocate", "fanotify_mark", "fchdir", "fchmod", "fchmodat", "fchmodat2",
	"fchown", "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr", "flistxattr",
	"flock", "fork", "fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs",
	"fstatfs64", "fsync", "ftruncate", "ftruncate64", "futex", "futex_requeue", "futex_time64",
	"futex_wait", "futex_waitv", "futex_wake", "futimesat", "getcpu", "getcwd", "getdents",
	"getdents64", "getegid", "getegid32", "geteuid", "geteuid32", "getgid", "getgid32",
	"getgroups", "getgroups32", "getitimer", "getpeername", "getpgid", "getpgrp", "getpid",
	"getppid", "getpriority", "getrandom", "getresgid", "getresgid32", "getresuid", "getresuid32",
	"getrlimit", "get_robust_list", "getrusage", "getsid", "getsockname", "getsockopt",
	"get_thread_area", "gettid", "gettimeofday", "getuid", "getuid32", "getxattr", "getxattrat",
	"inotify_add_watch", "inotify_init", "inotify_init1", "inotify_rm_watch", "io_cancel",
	"ioctl", "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64", "ioprio_get",
	"ioprio_set", "io_setup", "io_submit", "ipc", "kill", "landlock_add_rule",
	"landlock_create_ruleset", "landlock_restrict_self", "lchown", "lchown32", "lgetxattr",
	"link", "linkat", "listen", "listmount", "listxattr", "listxattrat", "llistxattr", "_llseek",
	"lremovexattr", "lseek", "lsetxattr", "lstat", "lstat64", "madvise", "map_shadow_stack",
	"membarrier", "memfd_create", "memfd_secret", "mincore", "mkdir", "mkdirat", "mknod",
	"mknodat", "mlock", "mlock2", "mlockall", "mmap", "mmap2", "mprotect", "mq_getsetattr",
	"mq_notify", "mq_open", "mq_timedreceive", "mq_timedreceive_time64", "mq_timedsend",
	"mq_timedsend_time64", "mq_unlink", "mremap", "mseal", "msgctl", "msgget", "msgrcv", "msgsnd",
	"msync", "munlock", "munlockall", "munmap", "name_to_handle_at", "nanosleep", "newfstatat",
	"_newselect", "open", "openat", "openat2", "pause", "pidfd_open", "pidfd_send_signal", "pipe",
	"pipe2", "pkey_alloc", "pkey_free", "pkey_mprotect", "poll", "ppoll", "ppoll_time64", "prctl",
	"pread64", "preadv", "preadv2", "prlimit64", "process_mrelease", "pselect6",
	"pselect6_time64", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readlink",
	"readlinkat", "readv", "recv", "recvfrom", "recvmmsg", "recvmmsg_time64", "recvmsg",
	"remap_file_pages", "removexattr", "removexattrat", "rename", "renameat", "renameat2",
	"restart_syscall", "riscv_hwprobe", "rmdir", "rseq", "rt_sigaction", "rt_sigpending",
	"rt_sigprocmask", "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
	"rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sched_getaffinity", "sched_getattr",
	"sched_getparam", "sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
	"sched_rr_get_interval", "sched_rr_get_interval_time64", "sched_setaffinity", "sched_setattr",
	"sched_setparam", "sched_setscheduler", "sched_yield", "seccomp", "select", "semctl",
	"semget", "semop", "semtimedop", "semtimedop_time64", "send", "sendfile", "sendfile64",
	"sendmmsg", "sendmsg", "sendto", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid",
	"setgid32", "setgroups", "setgroups32", "setitimer", "setpgid", "setpriority", "setregid",
	"setregid32", "setresgid", "setresgid32", "setresuid", "setresuid32", "setreuid",
	"setreuid32", "setrlimit", "set_robust_list", "setsid", "setsockopt", "set_thread_area",
	"set_tid_address", "setuid", "setuid32", "setxattr", "setxattrat", "shmat", "shmctl", "shmdt",
	"shmget", "shutdown", "sigaltstack", "signalfd", "signalfd4", "sigprocmask", "sigreturn",
	"socketcall", "socketpair", "splice", "stat", "stat64", "statfs", "statfs64", "statmount",
	"statx", "symlink", "symlinkat", "sync", "sync_file_range", "syncfs", "sysinfo", "tee",
	"tgkill", "time", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
	"timer_gettime64", "timer_settime", "timer_settime64", "timerfd_create", "timerfd_gettime",
	"timerfd_gettime64", "timerfd_settime", "timerfd_settime64", "times", "tkill", "truncate",
	"truncate64", "ugetrlimit", "umask", "uname", "unlink", "unlinkat", "uretprobe", "utime",
	"utimensat", "utimensat_time64", "utimes", "vfork", "vmsplice", "wait4", "waitid", "waitpid",
	"write", "writev",
};

/* Its arch-conditional rules for this build's architecture, and its
 * minKernel 4.8 rule. */
static const char *const allowed_here[] = {
#if defined(__x86_64__)
	"arch_prctl", "modify_ldt",
#elif defined(__aarch64__)
	"arm_fadvise64_64", "arm_sync_file_range", "sync_file_range2", "breakpoint", "cacheflush", "set_tls",
#endif
	"process_vm_readv", "process_vm_writev", "ptrace",
};

static json_object *names_array(const char *const *names, size_t n)
{
	json_object *a = json_object_new_array();

	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_string(names[i]));
	return a;
}

static json_object *one_rule(const char *name, const char *action, json_object *args)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "names", names_array(&name, 1));
	json_object_object_add(r, "action", json_object_new_string(action));
	json_object_object_add(r, "args", args);
	return r;
}

static json_object *arg(unsigned index, uint64_t value, uint64_t value_two, const char *op)
{
	json_object *a = json_object_new_object();

	json_object_object_add(a, "index", json_object_new_int((int)index));
	json_object_object_add(a, "value", json_object_new_uint64(value));
	json_object_object_add(a, "valueTwo", json_object_new_uint64(value_two));
	json_object_object_add(a, "op", json_object_new_string(op));
	return a;
}

static json_object *args1(json_object *a)
{
	json_object *args = json_object_new_array();

	json_object_array_add(args, a);
	return args;
}

static void add_list(json_object *syscalls, const char *const *names, size_t n)
{
	json_object *r = json_object_new_object();

	json_object_object_add(r, "names", names_array(names, n));
	json_object_object_add(r, "action", json_object_new_string(ACT_ALLOW));
	json_object_object_add(r, "args", json_object_new_array());
	json_object_array_add(syscalls, r);
}

static void add_argument_rules(json_object *syscalls)
{
	json_object *clone3;

	json_object_array_add(syscalls, one_rule("socket", ACT_ALLOW, args1(arg(0, AF_REFUSED_LOW, 0, "SCMP_CMP_LT"))));
	json_object_array_add(syscalls, one_rule("socket", ACT_ALLOW, args1(arg(0, AF_BETWEEN, 0, "SCMP_CMP_EQ"))));
	json_object_array_add(syscalls, one_rule("socket", ACT_ALLOW, args1(arg(0, AF_REFUSED_HIGH, 0, "SCMP_CMP_GT"))));
	for (size_t i = 0; i < sizeof(personalities) / sizeof(personalities[0]); i++)
		json_object_array_add(syscalls, one_rule("personality", ACT_ALLOW,
		                                         args1(arg(0, personalities[i], 0, "SCMP_CMP_EQ"))));
	json_object_array_add(syscalls, one_rule("clone", ACT_ALLOW,
	                                         args1(arg(0, CLONE_NAMESPACE_FLAGS, 0, "SCMP_CMP_MASKED_EQ"))));
	clone3 = one_rule("clone3", ACT_ERRNO, json_object_new_array());
	json_object_object_add(clone3, "errnoRet", json_object_new_int(ENOSYS));
	json_object_array_add(syscalls, clone3);
}

json_object *gs_runtime_default_profile(void)
{
	json_object *prof = json_object_new_object(), *syscalls = json_object_new_array();

	json_object_object_add(prof, "defaultAction", json_object_new_string(ACT_ERRNO));
	json_object_object_add(prof, "defaultErrnoRet", json_object_new_int(DEFAULT_ERRNO));
	add_list(syscalls, allowed, sizeof(allowed) / sizeof(allowed[0]));
	add_list(syscalls, allowed_here, sizeof(allowed_here) / sizeof(allowed_here[0]));
	add_argument_rules(syscalls);
	json_object_object_add(prof, "syscalls", syscalls);
	return prof;
}

bool gs_runtime_default_allows(const char *name)
{
	for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (strcmp(allowed[i], name) == 0)
			return true;
	for (size_t i = 0; i < sizeof(allowed_here) / sizeof(allowed_here[0]); i++)
		if (strcmp(allowed_here[i], name) == 0)
			return true;
	return false;
}
