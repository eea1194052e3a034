#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/agent/walk_check.py STATUS_JSON SCRAPE_PAGE FAKE_STATS POD NAMESPACE
CONTAINER_NAME CONTAINER_ID QUOTA HELD POD_UID - tests/agent/walk.sh's view
of one pod's container while it holds HELD bytes on GPU 0:

  - `gpusandbox status --format json`: exactly one sandbox, the container
    CONTAINER_ID, with the pod's name, namespace, uid and container name,
    GPU 0's quota QUOTA and use HELD;
  - node_exporter's page (what it served over HTTP): one
    gpusandbox_sandbox_info sample of value 1 with the labels pod,
    namespace, container_name and container, and the same sandbox id as
    the status; that sandbox's gpusandbox_memory_quota_bytes and
    gpusandbox_memory_used_bytes on GPU 0 are QUOTA and HELD;
  - the fake driver's own account (its stats file, read at the same
    moment): GPU 0's vidmem_used is HELD, so the status and the page speak
    of memory the driver holds, not of the agent's word alone.

Prints nothing and exits 0 when all hold; otherwise prints each problem on
one line (walk.sh shows them) and exits 1."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "metrics"))
from scrape import parse_samples  # noqa: E402


def fake_stat(path, key):
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 2 and parts[0] == key:
                return int(parts[1])
    return None


def main():
    status_path, page_path, stats_path, pod, ns, cname, cid = sys.argv[1:8]
    quota, held, uid = int(sys.argv[8]), int(sys.argv[9]), sys.argv[10]
    problems = []
    with open(status_path) as f:
        status = json.load(f)
    boxes = status.get("sandboxes", [])
    if len(boxes) != 1:
        problems.append("status lists %d sandboxes, want 1" % len(boxes))
        print("; ".join(problems))
        return 1
    box = boxes[0]
    got = (box.get("container"), box.get("pod"), box.get("namespace"), box.get("pod_uid"), box.get("container_name"))
    if got != (cid, pod, ns, uid, cname):
        problems.append("status names %s, want %s" % (got, (cid, pod, ns, uid, cname)))
    gpu0 = [g for g in box.get("gpus", []) if g.get("gpu") == 0]
    if not gpu0 or (gpu0[0].get("quota"), gpu0[0].get("used")) != (quota, held):
        problems.append("status GPU 0 %s, want quota %d used %d" % (gpu0, quota, held))

    with open(page_path) as f:
        samples = parse_samples(f.read())
    infos = [(dict(labels), v) for (name, labels), v in samples if name == "gpusandbox_sandbox_info"]
    want = {"pod": pod, "namespace": ns, "container_name": cname, "container": cid, "sandbox": box.get("sandbox")}
    if [(d, v) for d, v in infos] != [(want, 1.0)]:
        problems.append("node_exporter's gpusandbox_sandbox_info %s, want one %s 1" % (infos, want))

    def gauge(name):
        vals = [v for (n, labels), v in samples
                if n == name and dict(labels).get("sandbox") == box.get("sandbox") and dict(labels).get("gpu") == "0"]
        return vals[0] if len(vals) == 1 else vals

    for name, value in (("gpusandbox_memory_quota_bytes", quota), ("gpusandbox_memory_used_bytes", held)):
        if gauge(name) != float(value):
            problems.append("node_exporter's %s{sandbox=%s,gpu=0} %s, want %d" % (name, box.get("sandbox"),
                                                                                   gauge(name), value))
    fake = fake_stat(stats_path, "gpu0.vidmem_used")
    if fake != held:
        problems.append("the fake holds %s on GPU 0, want %d" % (fake, held))
    if problems:
        print("; ".join(problems))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
