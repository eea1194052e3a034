"""Summarises tests/gpu/systrace.sh's raw trace: the supervisor's system
calls per trapped call kind. Usage: systrace_summary.py TRACE [MIN_CALLS]

TRACE is tracefs's text output of raw_syscalls:sys_enter and sys_exit
(trace_clock mono) for the supervisor and its workload. The supervisor's
workers are the tasks that receive seccomp notifications; every other
task is the workload's. A notification is the span from a worker's
SECCOMP_IOCTL_NOTIF_RECV returning to its SEND; its kind is the
first driver call the worker made for it (seccomp stops a trapped
call before the sys_enter tracepoint, so the workload's word is not in
the trace). Per kind
with at least MIN_CALLS (default 100) calls, before the answer and after
it (from the SEND's return to the next receive), each system call's
count and mean time a call, and the time between them: the worker's
user space (with each system call's way in and out of the kernel), in
all and before each system call. Prints figures only.
"""
import collections
import re
import sys

NAMES = {
    0: "read", 1: "write", 3: "close", 5: "fstat", 7: "poll", 9: "mmap", 14: "rt_sigprocmask", 28: "madvise",
    11: "munmap", 16: "ioctl", 17: "pread64", 18: "pwrite64", 39: "getpid",
    72: "fcntl", 89: "readlink", 117: "setresuid", 119: "setresgid",
    186: "gettid", 202: "futex", 217: "getdents64", 228: "clock_gettime",
    257: "openat", 262: "newfstatat", 267: "readlinkat", 271: "ppoll",
    310: "process_vm_readv", 311: "process_vm_writev", 312: "kcmp",
    332: "statx", 424: "pidfd_send_signal", 434: "pidfd_open",
    438: "pidfd_getfd",
}
SYS_IOCTL = 16
# SECCOMP_IOCTL_NOTIF_*: _IOWR('!', 0..3, ...) as the kernel's uapi has them
# (ID_VALID's direction was _IOR before Linux 5.17).
RECV = 0xc0502100
SEND = 0xc0182101
SECCOMP = {RECV: "RECV", SEND: "SEND", 0x40082102: "ID_VALID",
           0x80082102: "ID_VALID", 0x40182103: "ADDFD"}
NV_IOCTL_MAGIC = 0x46
UVM_MAX_CMD = 0x1000
US = 1e6

LINE = re.compile(r"^\s*(.*)-(\d+)\s+\[\d+\].*?\s([\d.]+): sys_(enter|exit): NR (-?\d+) (.*)$")


def kind_of(cmd):
    """The trapped ioctl word's kind: an RM escape by its number, a UVM
    command by its value."""
    if (cmd >> 8) & 0xff == NV_IOCTL_MAGIC:
        return "rm  0x%02x" % (cmd & 0xff)
    if cmd < UVM_MAX_CMD:
        return "uvm 0x%02x" % cmd
    return "other 0x%x" % cmd


def label(nr, args):
    name = NAMES.get(nr, "sys_%d" % nr)
    if nr != SYS_IOCTL:
        return name
    cmd = args[1]
    if cmd in SECCOMP:
        return SECCOMP[cmd]
    return "ioctl (driver: %s)" % kind_of(cmd)


def parse(path):
    events = []
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            comm, tid, ts, what, nr, rest = m.groups()
            args = []
            if what == "enter":
                args = [int(x, 16) for x in rest.strip("() \n").split(", ")]
            events.append((float(ts), int(tid), what, int(nr), args))
    return events


class Notification:
    """One notification's system calls, by phase, as (label, seconds)."""

    def __init__(self, start):
        self.phase = "before"
        self.start = start
        self.last_exit = start
        self.rows = {"before": [], "after": []}
        self.span = {"before": 0.0, "after": 0.0}

    def gap_to(self, ts, nxt):
        self.rows[self.phase].append(("(user space) -> " + nxt, ts - self.last_exit))

    def kind(self):
        """The call's kind: the first driver call the worker made for it
        (a trapped call the supervisor performs makes its own first; the
        workload's word is not in the trace, since seccomp stops a
        trapped call before the sys_enter tracepoint)."""
        for lab, _ in self.rows["before"]:
            if lab.startswith("ioctl (driver"):
                return lab[len("ioctl (driver: "):-1]
        return "(no driver call)"


def main():
    events = parse(sys.argv[1])
    min_calls = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    workers = {tid for _, tid, what, nr, args in events
               if what == "enter" and nr == SYS_IOCTL and args[1] == RECV}
    calls = collections.Counter()
    sums = collections.defaultdict(lambda: collections.defaultdict(lambda: [0, 0.0]))
    spans = collections.defaultdict(float)
    open_call = {}                # tid -> (ts, nr, args) entered
    current = {}                  # tid -> its Notification

    def close(n):
        k = n.kind()
        calls[k] += 1
        for phase in ("before", "after"):
            spans[(k, phase)] += n.span[phase]
            for lab, t in n.rows[phase]:
                s = sums[(k, phase)][lab]
                s[0] += not lab.startswith("(user space)")
                if lab.startswith("(user space)"):
                    sums[(k, phase)]["(user space, all)"][1] += t
                s[1] += t

    for ts, tid, what, nr, args in events:
        if tid not in workers:
            continue
        n = current.get(tid)
        if what == "enter":
            open_call[tid] = (ts, nr, args)
            if not n:
                continue
            n.gap_to(ts, label(nr, args))
            if nr == SYS_IOCTL and args[1] == RECV and n.phase == "after":
                n.span["after"] = ts - n.start
                close(n)
                current[tid] = None
            elif nr == SYS_IOCTL and args[1] == SEND and n.phase == "before":
                n.span["before"] = ts - n.start
                n.phase, n.start = "after", ts
            continue
        entered = open_call.pop(tid, None)
        if entered is None or entered[1] != nr:
            continue
        lab = label(nr, entered[2])
        if lab == "RECV":
            current[tid] = Notification(ts)
            continue
        if n:
            n.rows[n.phase].append((lab, ts - entered[0]))
            n.last_exit = ts
    print("# supervisor workers: %d; notifications: %d" % (len(workers), sum(calls.values())))
    print("# per call, mean: count and us of each system call; (user space): the"
          " time between them, in all and before each; 'after' runs from the SEND's entry to the next RECV")
    for kind, n in calls.most_common():
        if n < min_calls:
            continue
        print("\n%s  calls=%d" % (kind, n))
        for phase in ("before", "after"):
            rows = sums.get((kind, phase), {})
            print("  %-6s %7.2f us" % (phase, spans[(kind, phase)] / n * US))
            for lab, (cnt, t) in sorted(rows.items(), key=lambda r: -r[1][1]):
                if t / n * US >= 0.005:
                    print("    %-34s %5.2f x %6.2f us" % (lab, cnt / n, t / n * US))


if __name__ == "__main__":
    main()
