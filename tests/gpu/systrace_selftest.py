"""A check of tests/gpu/systrace_summary.py on a trace made up here: what
the GPU figures of docs/perf.md round 12 rest on. Two notifications of a
worker (tid 100) while the workload (tid 200) runs: an RM_ALLOC the
worker performs (kcmp, the driver's call, the answer's write) and a call
it only continues (no driver call). Prints PASS/FAIL lines and
"N passed, M failed"; exit 1 on a failure.
"""
import os
import subprocess
import sys
import tempfile

RECV, SEND, RM_ALLOC = 0xc0502100, 0xc0182101, 0xc030462b
SYS_IOCTL, SYS_KCMP, SYS_PWRITE, SYS_FUTEX = 16, 312, 18, 202


def line(tid, t_us, what, nr, args=None, comm="gpusandbox-sta"):
    ts = "%d.%06d" % divmod(t_us, 1000000)
    if what == "enter":
        body = "NR %d (%s)" % (nr, ", ".join("%x" % a for a in (args + [0] * 6)[:6]))
    else:
        body = "NR %d = 0" % nr
    return "  %s-%d  [001] ..... %s: sys_%s: %s\n" % (comm, tid, ts, what, body)


def call(out, tid, t0, nr, args, dur):
    out.append(line(tid, t0, "enter", nr, args))
    out.append(line(tid, t0 + dur, "exit", nr))
    return t0 + dur


def trace():
    out = []
    t = 1000
    # The workload's own calls are not counted, before a notification
    # or during one.
    t = call(out, 200, t, SYS_FUTEX, [0], 5)
    out.append(line(100, t, "enter", SYS_IOCTL, [3, RECV, 0]))
    t += 50
    out.append(line(100, t, "exit", SYS_IOCTL))       # received
    t += 1                                            # user space 1
    t = call(out, 100, t, SYS_KCMP, [1, 2, 0, 4, 3], 2)
    call(out, 200, t, SYS_FUTEX, [0], 2)              # the workload's, meanwhile
    t += 3                                            # user space 3
    t = call(out, 100, t, SYS_IOCTL, [7, RM_ALLOC, 0], 10)
    t += 1                                            # user space 1
    t = call(out, 100, t, SYS_PWRITE, [8, 0, 4], 4)
    t += 2                                            # user space 2
    t = call(out, 100, t, SYS_IOCTL, [3, SEND, 0], 1)
    t += 6                                            # after: user space 6
    out.append(line(100, t, "enter", SYS_IOCTL, [3, RECV, 0]))
    t += 40
    out.append(line(100, t, "exit", SYS_IOCTL))
    t += 2
    t = call(out, 100, t, SYS_IOCTL, [3, SEND, 0], 1)
    t += 1
    out.append(line(100, t, "enter", SYS_IOCTL, [3, RECV, 0]))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    with tempfile.NamedTemporaryFile("w", suffix=".trace", delete=False) as f:
        f.writelines(trace())
        path = f.name
    got = subprocess.run([sys.executable, os.path.join(here, "systrace_summary.py"), path, "1"],
                         capture_output=True, text=True).stdout
    os.unlink(path)
    want = [
        "# supervisor workers: 1; notifications: 2",
        "rm  0x2b  calls=1",
        "  before   23.00 us",
        "    ioctl (driver: rm  0x2b)            1.00 x  10.00 us",
        "    (user space, all)                   0.00 x   7.00 us",
        "    pwrite64                            1.00 x   4.00 us",
        "    (user space) -> ioctl (driver: rm  0x2b)  0.00 x   3.00 us",
        "    kcmp                                1.00 x   2.00 us",
        "  after     7.00 us",
        "    (user space) -> RECV                0.00 x   6.00 us",
        "    SEND                                1.00 x   1.00 us",
        "(no driver call)  calls=1",
        "  before    2.00 us",
    ]
    lines = got.splitlines()
    passed = failed = 0
    for w in want:
        if w in lines:
            passed += 1
            print("PASS systrace_summary: %s" % w.strip())
        else:
            failed += 1
            print("FAIL systrace_summary: no line %r in:\n%s" % (w, got))
    # The workload's futex is not the worker's.
    if "futex" in got:
        failed += 1
        print("FAIL systrace_summary: the workload's futex counted as the worker's")
    else:
        passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
