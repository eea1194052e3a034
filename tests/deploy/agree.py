#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/deploy/agree.py DEPLOY_DIR GPUSANDBOX WORKDIR - do deploy/'s
manifests agree with the binary? Run under with-fake-nvidia (the agent and
`gpusandbox profile` need a driver). Prints PASS/FAIL per check.

  paths     the agent's --socket is the init container's --listener; the
            seccomp root is mounted where the init container writes, and is
            the kubelet's; the example pod's localhostProfile is a file the
            init container writes and the admission policy's pattern admits
  image     both containers run the same image, tagged with the binary's
            version (the profile's trap set is then the agent's)
  profiles  the init container's script, run with the node's paths moved
            into WORKDIR: it writes gpu.json and NAME.json per policy, with
            the socket as listenerPath and ";policy=NAME" in the metadata
  agent     the agent container's command, paths moved into WORKDIR and the
            ConfigMap's policies written there: the binary accepts it and
            listens, and the trap set it announces is the one in every
            profile the init container wrote
  probes    the agent's startup, readiness and liveness probes (each an exec
            of `gpusandbox status --quiet` on its --status-socket, moved):
            exit 0 while the agent serves, non-zero once it has stopped
  keeper    the keeper's DaemonSet (its own, OnDelete) listens where the
            agent's --keeper points, in the same host folder; the agent's
            DaemonSet rolls; the keeper's command starts
  json      the documents as JSON (for the schema validator), to WORKDIR/docs.json
"""
import glob, json, os, re, signal, subprocess, sys, time
import yaml

deploy, gs, work = sys.argv[1], sys.argv[2], sys.argv[3]
docs = []
for f in sorted(glob.glob(os.path.join(deploy, "*.yaml"))):
    with open(f) as fh:
        for d in yaml.safe_load_all(fh):
            if d:
                docs.append((os.path.basename(f), d))
by_kind = {}
for f, d in docs:
    by_kind.setdefault(d["kind"], []).append(d)
passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS %s" % name)
    else:
        failed += 1
        print("FAIL %s: %s" % (name, why))


def opt(cmd, flag):
    return cmd[cmd.index(flag) + 1] if flag in cmd else None


ds = [d for d in by_kind["DaemonSet"] if d["metadata"]["name"] == "gpusandbox-agent"][0]
kds = [d for d in by_kind["DaemonSet"] if d["metadata"]["name"] == "gpusandbox-keeper"]
keeper = kds[0]["spec"]["template"]["spec"]["containers"][0] if kds else {"command": [], "image": "", "volumeMounts": []}
kvols = {v["name"]: v for v in kds[0]["spec"]["template"]["spec"]["volumes"]} if kds else {}
pod = ds["spec"]["template"]["spec"]
agent = pod["containers"][0]
init = pod["initContainers"][0]
script = init["command"][-1]
vols = {v["name"]: v for v in pod["volumes"]}
SECCOMP_ROOT = "/var/lib/kubelet/seccomp"
# Where node_exporter's textfile collector reads (docs/kubernetes.md).
METRICS_DIR = "/var/lib/node_exporter/textfile_collector"

# paths
sock = opt(agent["command"], "--socket")
listeners = set(re.findall(r"--listener (\S+)", script))
check("paths-socket", sock and listeners == {sock}, "agent --socket %s, init --listener %s" % (sock, listeners))
sock_vol = [m for m in agent["volumeMounts"] if sock.startswith(m["mountPath"] + "/")]
check("paths-socket-host", len(sock_vol) == 1 and vols[sock_vol[0]["name"]]["hostPath"]["path"] == sock_vol[0]["mountPath"],
      "the socket's directory must be the same path on the host (the runtime connects there)")
seccomp_mount = [m for m in init["volumeMounts"] if m["name"] == "seccomp-root"]
check("paths-seccomp-root", seccomp_mount and seccomp_mount[0]["mountPath"] == SECCOMP_ROOT and
      vols["seccomp-root"]["hostPath"]["path"] == SECCOMP_ROOT and ("dir=%s/gpusandbox" % SECCOMP_ROOT) in script,
      "the init container must write under the kubelet's %s" % SECCOMP_ROOT)
metrics_path = opt(agent["command"], "--metrics-file") or ""
metrics_mount = [m for m in agent["volumeMounts"] if m["mountPath"] == os.path.dirname(metrics_path)]
check("paths-metrics", metrics_path.startswith(METRICS_DIR + "/") and len(metrics_mount) == 1 and
      vols[metrics_mount[0]["name"]]["hostPath"]["path"] == METRICS_DIR,
      "agent --metrics-file %s must be in the node's %s, mounted at the same path" % (metrics_path, METRICS_DIR))
vap = by_kind["ValidatingAdmissionPolicy"][0]
pattern = re.search(r"matches\('([^']*)'\)", json.dumps(vap["spec"]["validations"][0]["expression"]).replace('\\\\', '\\'))
ex = by_kind["Pod"][0]["spec"]["securityContext"]["seccompProfile"]
check("paths-example-profile", pattern and ex["type"] == "Localhost" and
      re.fullmatch(pattern.group(1).lstrip("^").rstrip("$"), ex["localhostProfile"]) and
      ex["localhostProfile"] == "gpusandbox/gpu.json",
      "example localhostProfile %s, pattern %s" % (ex.get("localhostProfile"), pattern and pattern.group(1)))
for bad in ("gpusandbox/../x.json", "other/gpu.json", "gpusandbox/.hidden.json", "gpusandbox/a/b.json"):
    check("paths-pattern-refuses %s" % bad, not re.fullmatch(pattern.group(1).lstrip("^").rstrip("$"), bad), "admitted")
# keeper: the agent's --keeper is the keeper's --socket, in a folder that
# is the same host path for both (the agent connects there); the keeper
# is in a DaemonSet of its own (an agent pod's restart or upgrade must not
# take it), and the agent's may then roll.
ksock = opt(keeper["command"], "--socket")
check("keeper-socket", kds and ksock and opt(agent["command"], "--keeper") == ksock,
      "agent --keeper %s, keeper --socket %s" % (opt(agent["command"], "--keeper"), ksock))
kmount = [m for m in keeper["volumeMounts"] if ksock and ksock.startswith(m["mountPath"] + "/")]
check("keeper-socket-host", len(kmount) == 1 and kvols[kmount[0]["name"]]["hostPath"]["path"] ==
      kmount[0]["mountPath"] and kmount[0]["mountPath"] == sock_vol[0]["mountPath"],
      "the keeper's socket folder must be the agent's, on the host")
check("keeper-own-daemonset", kds and kds[0]["spec"]["updateStrategy"]["type"] == "OnDelete" and
      ds["spec"]["updateStrategy"]["type"] == "RollingUpdate",
      "the keeper is replaced only on delete; the agent rolls")
binding = by_kind["ValidatingAdmissionPolicyBinding"][0]
check("paths-binding", binding["spec"]["policyName"] == vap["metadata"]["name"], "binding names another policy")

# image
version = subprocess.run([gs, "--version"], capture_output=True, text=True).stdout.split()[1]
images = {agent["image"], init["image"], keeper["image"]}
check("image", len(images) == 1 and images.pop().endswith(":" + version),
      "images %s, binary %s" % ({agent["image"], init["image"], keeper["image"]}, version))

# profiles: the init script with the node's paths moved into work
node = os.path.join(work, "node")
pol_dir = os.path.join(node, "etc-policies")
os.makedirs(pol_dir, exist_ok=True)
cm = by_kind["ConfigMap"][0]
for name, text in cm["data"].items():
    with open(os.path.join(pol_dir, name), "w") as fh:
        fh.write(text)
moved = (script.replace(SECCOMP_ROOT, os.path.join(node, "seccomp"))
         .replace("/etc/gpusandbox/policies", pol_dir).replace("gpusandbox profile", gs + " profile"))
r = subprocess.run(["/bin/sh", "-ec", moved], capture_output=True, text=True)
out = os.path.join(node, "seccomp", "gpusandbox")
written = sorted(os.listdir(out)) if os.path.isdir(out) else []
want = sorted(["gpu.json"] + [n[:-len(".policy")] + ".json" for n in cm["data"] if n != "default.policy"])
check("profiles-written", r.returncode == 0 and written == want, "rc=%d wrote %s want %s %s" % (r.returncode, written, want, r.stderr[-300:]))
metas = {}
for f in written:
    with open(os.path.join(out, f)) as fh:
        p = json.load(fh)
    metas[f] = p.get("listenerMetadata", "")
    name = f[:-len(".json")]
    check("profiles-%s" % f, p.get("listenerPath") == sock and metas[f].startswith("gpusandbox;traps=") and
          (name == "gpu") == (";policy=" not in metas[f]) and (name == "gpu" or metas[f].endswith(";policy=" + name)),
          "listenerPath %s metadata %s" % (p.get("listenerPath"), metas[f]))

# keeper, then agent: their commands, moved, start and listen (the agent
# needs its keeper), with the profiles' trap set
wksock = os.path.join(work, "keeper.sock")
kcmd = [gs if a == "gpusandbox" else a.replace(ksock or "-", wksock) for a in keeper["command"]]
kerr = open(os.path.join(work, "keeper.err"), "w+")
kproc = subprocess.Popen(kcmd, stderr=kerr)
for _ in range(250):
    if os.path.exists(wksock):
        break
    time.sleep(0.02)
check("keeper-starts", os.path.exists(wksock), "the keeper's command did not listen")
cmd = [gs if a == "gpusandbox" else a for a in agent["command"]]
wsock = os.path.join(work, "agent.sock")
ssock = opt(agent["command"], "--status-socket")
wssock = os.path.join(work, "status.sock")
cmd = [a.replace(sock, wsock).replace("/etc/gpusandbox/policies", pol_dir).replace(ksock or "-", wksock)
       .replace(ssock or "-", wssock).replace("/var/log/gpusandbox", work).replace(METRICS_DIR, work) for a in cmd]
err = open(os.path.join(work, "agent.err"), "w+")
proc = subprocess.Popen(cmd, stderr=err)
for _ in range(250):
    if os.path.exists(wsock):
        break
    time.sleep(0.02)
listening = os.path.exists(wsock)
# The metrics file of an idle agent: written before it serves anything.
metrics_file = os.path.join(work, os.path.basename(opt(agent["command"], "--metrics-file") or "-"))
for _ in range(250):
    if os.path.exists(metrics_file):
        break
    time.sleep(0.02)
metrics_text = open(metrics_file).read() if os.path.exists(metrics_file) else ""

PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def probe_rcs():
    """Each probe's exec command, its status socket moved: exit statuses."""
    rcs = {}
    for name in PROBES:
        pcmd = agent.get(name, {}).get("exec", {}).get("command", [])
        pcmd = [gs if a == "gpusandbox" else a.replace(ssock or "-", wssock) for a in pcmd]
        rcs[name] = subprocess.run(pcmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   timeout=20).returncode if pcmd else None
    return rcs


# The probes ask the agent's --status-socket: they pass while it serves,
# and fail once it has stopped.
for _ in range(250):
    if os.path.exists(wssock):
        break
    time.sleep(0.02)
serving = probe_rcs()
proc.send_signal(signal.SIGTERM)
rc = proc.wait(timeout=10)
stopped = probe_rcs()
for name in PROBES:
    check("probe-%s" % name, ssock and serving[name] == 0 and stopped[name] not in (0, None),
          "status socket %s: exit %s while serving, %s once stopped" % (ssock, serving[name], stopped[name]))
kproc.send_signal(signal.SIGTERM)
kproc.wait(timeout=10)
err.seek(0)
log = err.read()
traps = re.search(r"traps=([0-9a-f]{16}), with managed = deny ([0-9a-f]{16})", log)
check("agent-starts", listening and rc == 0, "rc=%s: %s" % (rc, log[-300:]))
check("agent-metrics-idle", "\ngpusandbox_up 1\n" in metrics_text and "\ngpusandbox_sandboxes 0\n" in metrics_text,
      "the idle agent's %s: %r" % (metrics_file, metrics_text[:200]))
# Its failures to start reach the pod's status.
for name, c in (("agent", agent), ("keeper", keeper)):
    check("termination-message %s" % name, c.get("terminationMessagePolicy") == "FallbackToLogsOnError",
          "%s: terminationMessagePolicy %s" % (name, c.get("terminationMessagePolicy")))


def denies_managed(profile_file):
    name = "default" if profile_file == "gpu.json" else profile_file[:-len(".json")]
    text = cm["data"][name + ".policy"]
    return re.search(r"^\s*managed\s*=\s*deny\s*$", text, re.M) is not None


for f, m in metas.items():
    want = traps and traps.group(2 if denies_managed(f) else 1)
    check("agent-trap-set %s" % f, want and m.startswith("gpusandbox;traps=" + want),
          "agent announced %s, profile %s" % (traps and traps.group(0), m))
check("agent-trap-set-managed", any(denies_managed(f) for f in metas), "no policy with managed = deny is exercised")

with open(os.path.join(work, "docs.json"), "w") as fh:
    json.dump([{"file": f, "doc": d} for f, d in docs], fh)
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
