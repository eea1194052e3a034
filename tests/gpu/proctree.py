"""The pids of a process tree, read from /proc (for the NVML monitors)."""
import os


def tree(root):
    """root and every process below it, to a fixed point (children may be
    listed before their parents)."""
    pids = {root}
    changed = True
    while changed:
        changed = False
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) in pids:
                continue
            try:
                with open(f"/proc/{p}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid in pids:
                pids.add(int(p))
                changed = True
    return pids
