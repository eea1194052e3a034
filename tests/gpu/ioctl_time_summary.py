"""Compares tests/gpu/ioctl_time.c's records of runs made natively and under
gpusandbox. Usage: ioctl_time_summary.py DIR_A DIR_B [NAME_A NAME_B]

Each DIR holds one subdirectory per run (r1, r2, ...), each with the
PID.txt files of that run's processes. Per (kind, value) the mean per run
of the count and of the time inside ioctl, and the difference B - A; rows
sorted by that difference, the largest first. Prints figures only.
"""
import collections
import os
import sys


def load_runs(top):
    runs = []
    for run in sorted(os.listdir(top)):
        d = os.path.join(top, run)
        if not os.path.isdir(d):
            continue
        rows = collections.defaultdict(lambda: [0, 0, 0])
        wall = calls = 0
        for name in os.listdir(d):
            with open(os.path.join(d, name)) as f:
                for line in f:
                    p = line.split()
                    if p[0] == "#":
                        wall = max(wall, int(p[2]))
                        calls += int(p[4])
                        continue
                    r = rows[(p[0], p[1])]
                    r[0] += int(p[2])
                    r[1] += int(p[3])
                    r[2] = max(r[2], int(p[4]))
        runs.append((rows, wall, calls))
    return runs


def means(runs):
    n = len(runs) or 1
    out = collections.defaultdict(lambda: [0.0, 0.0, 0])
    for rows, _, _ in runs:
        for k, (c, t, m) in rows.items():
            out[k][0] += c / n
            out[k][1] += t / n
            out[k][2] = max(out[k][2], m)
    return out


def main():
    a_dir, b_dir = sys.argv[1], sys.argv[2]
    na, nb = (sys.argv[3], sys.argv[4]) if len(sys.argv) > 4 else ("A", "B")
    ra, rb = load_runs(a_dir), load_runs(b_dir)
    ma, mb = means(ra), means(rb)
    for name, runs in ((na, ra), (nb, rb)):
        walls = sorted(w / 1e6 for _, w, _ in runs)
        calls = sorted(c / 1e6 for _, _, c in runs)
        print(f"{name}: {len(runs)} runs, wall ms {walls}, inside ioctl ms {[round(c, 1) for c in calls]}")
    keys = set(ma) | set(mb)
    rows = []
    for k in keys:
        ca, ta, _ = ma.get(k, (0, 0, 0))
        cb, tb, xb = mb.get(k, (0, 0, 0))
        rows.append((tb - ta, k, ca, ta, cb, tb, xb))
    rows.sort(reverse=True)
    print(f"{'kind':8} {'value':>10} {'n ' + na:>8} {'n ' + nb:>8} {'us/call ' + na:>14} "
          f"{'us/call ' + nb:>14} {'ms ' + na:>9} {'ms ' + nb:>9} {'delta ms':>9}")
    tot = [0.0, 0.0]
    for d, k, ca, ta, cb, tb, xb in rows:
        tot[0] += ta
        tot[1] += tb
    for d, k, ca, ta, cb, tb, xb in rows[:40]:
        ua = ta / ca / 1e3 if ca else 0
        ub = tb / cb / 1e3 if cb else 0
        print(f"{k[0]:8} {k[1]:>10} {ca:8.1f} {cb:8.1f} {ua:14.1f} {ub:14.1f} "
              f"{ta / 1e6:9.2f} {tb / 1e6:9.2f} {d / 1e6:9.2f}")
    print(f"all kinds: {na} {tot[0] / 1e6:.1f} ms, {nb} {tot[1] / 1e6:.1f} ms inside ioctl per run")


if __name__ == "__main__":
    main()
