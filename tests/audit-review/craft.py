#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/audit-review/craft.py KIND OUT [ARG]: audit logs made to hurt the
review tool (issue #32), for run.sh, the fuzz corpus and bench.sh.

Records are chained as the supervisor chains them (audit.c): each line's
"hash" is the SHA-256 of its text before ',"hash":' closed with '}', its
"prev" the hash of its sandbox's record before, "seq" counting from 0.

KIND:
  bidi       a workload's thread names with right-to-left letters and
             bidi controls (U+061C, U+2067) in decision records
  many N     N sandboxes, each one allocation on one of two GPUs
  huge       usage and quota near 2^64 (the plot's y axis)
  overflow   allocations whose sum passes 2^63 (usage's running total)
  overlong   a valid, chained record longer than 4 MiB (its command)
  size BYTES a realistic log of about BYTES: 64 sandboxes of allocations,
             releases, refusals and usage records, each chain sealed
"""
import hashlib
import json
import sys

ZERO = '0' * 64
MIB = 1 << 20
GIB = 1 << 30
LINE_MAX = 4 * MIB


class Log:
    def __init__(self, out):
        self.out = out
        self.prev = {}
        self.seq = {}

    def put(self, sandbox, event, t, **fields):
        seq = self.seq.get(sandbox, 0)
        rec = dict(time='2026-11-24T10:%02d:%02d.%06dZ' % (t // 60 % 60, t % 60, seq % 1000000),
                   sandbox=sandbox, seq=seq, event=event, **fields)
        rec['prev'] = self.prev.get(sandbox, ZERO)
        body = json.dumps(rec, ensure_ascii=False, separators=(',', ':'))[:-1]
        h = hashlib.sha256((body + '}').encode()).hexdigest()
        self.out.write((body + ',"hash":"%s"}\n' % h).encode())
        self.prev[sandbox] = h
        self.seq[sandbox] = seq + 1

    def seal(self, sandbox, t):
        self.put(sandbox, 'seal', t, records=self.seq.get(sandbox, 0))


def alloc(log, sb, t, pid, comm, gpu, before, size, quota, verdict='allow'):
    after = before + size if verdict == 'allow' else before
    log.put(sb, 'decision', t, pid=pid, tid=pid, comm=comm, device=gpu, call='RM_ALLOC',
            class_name='NV01_MEMORY_LOCAL_USER', size=size, verdict=verdict,
            outcome='ok' if verdict == 'allow' else 'quota', resource='vidmem',
            usage_before=before, usage_after=after, quota=quota)
    return after


def start(log, sb, t=0, command=None):
    log.put(sb, 'start', t, schema=3, command=command or ['python3', 'train.py'],
            policy={'mem': GIB})


def bidi(log):
    start(log, 'bidi')
    # U+05D0 U+05D1 (Hebrew), U+061C (the Arabic letter mark), U+2067
    # (a right-to-left isolate), U+0627 (Arabic), U+1E900 (Adlam).
    for i, comm in enumerate(['\u05d0\u05d1', 'w\u061c', '\u2067x', 'y\u0627', '\U0001e900']):
        alloc(log, 'bidi', 1 + i, 100 + i, comm, 0, 0, MIB, GIB)
    log.seal('bidi', 9)


def many(log, n):
    for s in range(int(n)):
        sb = 'sb%05d' % s
        start(log, sb)
        alloc(log, sb, 1, 7, 'p', s % 2, 0, MIB, GIB)
        log.seal(sb, 2)


def huge(log):
    start(log, 'huge')
    top = (1 << 64) - 1000
    alloc(log, 'huge', 1, 7, 'p', 0, 0, top, top)
    log.seal('huge', 2)


def overflow(log):
    start(log, 'ovf')
    big = (1 << 62) + 5
    for i in range(3):   # three of 2^62: the total passes 2^63
        alloc(log, 'ovf', 1 + i, 7, 'p', 0, 0, big, GIB)
    log.seal('ovf', 9)


def overlong(log):
    start(log, 'long', command=['A' * (LINE_MAX + MIB)])
    alloc(log, 'long', 1, 7, 'p', 0, 0, MIB, GIB)
    log.seal('long', 2)


def size(log, nbytes):
    """About nbytes of ordinary records: what a long run writes."""
    nbytes, sandboxes, t = int(nbytes), 64, 0
    for s in range(sandboxes):
        start(log, 'run%04d' % s)
    used = [0] * sandboxes
    while log.out.tell() < nbytes:
        t += 1
        for s in range(sandboxes):
            sb = 'run%04d' % s
            if used[s] + 64 * MIB > GIB:
                alloc(log, sb, t, 1000 + s, 'python3', s % 8, used[s], 64 * MIB, GIB, 'deny')
                log.put(sb, 'decision', t, pid=1000 + s, tid=1000 + s, comm='python3', device=s % 8,
                        call='RM_FREE', verdict='release', outcome='released', resource='vidmem',
                        usage_before=used[s], usage_after=0, quota=GIB)
                used[s] = 0
            else:
                used[s] = alloc(log, sb, t, 1000 + s, 'python3', s % 8, used[s], 64 * MIB, GIB)
            if t % 16 == 0:
                log.put(sb, 'usage', t, device=s % 8, resource='vidmem', used=used[s], peak=used[s],
                        quota=GIB)
    for s in range(sandboxes):
        log.put('run%04d' % s, 'summary', t, exit_status=0, peak={str(s % 8): GIB})
        log.seal('run%04d' % s, t)


def main():
    kinds = {'bidi': bidi, 'many': many, 'huge': huge, 'overflow': overflow,
             'overlong': overlong, 'size': size}
    if len(sys.argv) < 3 or sys.argv[1] not in kinds:
        sys.exit(__doc__)
    with open(sys.argv[2], 'wb') as out:
        kinds[sys.argv[1]](Log(out), *sys.argv[3:])


if __name__ == '__main__':
    main()
