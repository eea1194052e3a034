#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/agent/deploy_node.py DEPLOY_DIR GPUSANDBOX NODE - a GPU node as
deploy/ makes it, with the node's paths moved under NODE (tests/agent/
walk.sh runs the result under the fake driver):

  - the ConfigMap's policies (deploy/policies.yaml) written to
    NODE/etc-policies, as the DaemonSet mounts them;
  - the agent DaemonSet's init container's script run as written, its
    paths moved: it writes the profiles into NODE/seccomp/gpusandbox, where
    the kubelet's seccomp root would hold them;
  - the keeper's and the agent's container commands, paths moved, written
    one argument a line to NODE/keeper.cmd and NODE/agent.cmd (the binary
    in place of "gpusandbox"), and the paths the agent was given to
    NODE/paths.env (socket, status socket, metrics file, audit folder).

Nothing is invented here: a flag the DaemonSet drops, or a path it moves,
is what the node gets. Exit 0 once everything is written, 1 with the cause.
"""
import glob
import os
import subprocess
import sys

import yaml

# The node's paths the manifests use, and where each goes under NODE.
MOVES = (
    ("/var/lib/kubelet/seccomp", "seccomp"),
    ("/etc/gpusandbox/policies", "etc-policies"),
    ("/run/gpusandbox", "run"),
    ("/var/log/gpusandbox", "log"),
    ("/var/lib/node_exporter/textfile_collector", "textfile"),
)


def load(deploy):
    docs = []
    for f in sorted(glob.glob(os.path.join(deploy, "*.yaml"))):
        with open(f) as fh:
            docs += [d for d in yaml.safe_load_all(fh) if d]
    return docs


def moved(text, node, gs):
    for path, sub in MOVES:
        text = text.replace(path, os.path.join(node, sub))
    return text.replace("gpusandbox profile", gs + " profile")


def command(container, node, gs):
    return [gs if a == "gpusandbox" else moved(a, node, gs) for a in container["command"]]


def opt(cmd, flag):
    return cmd[cmd.index(flag) + 1] if flag in cmd else ""


def main():
    deploy, gs, node = sys.argv[1], sys.argv[2], sys.argv[3]
    docs = load(deploy)
    ds = {d["metadata"]["name"]: d for d in docs if d["kind"] == "DaemonSet"}
    cm = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "gpusandbox-policies"][0]
    agent_pod = ds["gpusandbox-agent"]["spec"]["template"]["spec"]
    keeper = ds["gpusandbox-keeper"]["spec"]["template"]["spec"]["containers"][0]
    agent = agent_pod["containers"][0]
    for _, sub in MOVES:
        os.makedirs(os.path.join(node, sub), exist_ok=True)
    for name, text in cm["data"].items():
        with open(os.path.join(node, "etc-policies", name), "w") as fh:
            fh.write(text)
    init = agent_pod["initContainers"][0]["command"]
    r = subprocess.run(["/bin/sh", "-ec", moved(init[-1], node, gs)], capture_output=True, text=True)
    if r.returncode != 0:
        print("the init container's script failed: %s" % r.stderr[-400:])
        return 1
    acmd = command(agent, node, gs)
    for name, cmd in (("keeper", command(keeper, node, gs)), ("agent", acmd)):
        with open(os.path.join(node, name + ".cmd"), "w") as fh:
            fh.write("".join(a + "\n" for a in cmd))
    with open(os.path.join(node, "paths.env"), "w") as fh:
        for var, flag in (("NODE_SOCK", "--socket"), ("NODE_STATUS", "--status-socket"),
                          ("NODE_METRICS", "--metrics-file"), ("NODE_AUDIT", "--audit-dir")):
            fh.write("%s='%s'\n" % (var, opt(acmd, flag)))
        fh.write("NODE_SECCOMP='%s'\n" % os.path.join(node, "seccomp"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
