#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/agent/walk.sh [CASE...] - issue #28's "done means", per runtime: a
# GPU node set up as docs/kubernetes.md and deploy/ say, the fake driver in
# place of a GPU, and a pod's container started by runc, crun, podman or
# containerd (with `ctr`, and through its CRI plugin as the kubelet drives
# it, with runc and with crun) is held to the quota its annotations ask for
# and shows up in `gpusandbox status` and in node_exporter's output with
# its pod's labels.
#
# The node (tests/agent/deploy_node.py): deploy/policies.yaml's policies
# (default.policy: mem = 16g), the profiles the agent DaemonSet's init
# container writes (its script as written, the kubelet's seccomp root moved
# into the case's folder), the keeper and the agent started with their
# DaemonSets' commands (paths moved likewise: keeper, status socket,
# --metrics-file in node_exporter's textfile folder, audit rotation), and
# Debian's prometheus-node-exporter reading that folder as docs/kubernetes.md
# tells an operator to run it. The container's profile is the example pod's
# localhostProfile, gpusandbox/gpu.json; its annotations are a pod's, as a
# CRI runtime copies them into the OCI config: the pod's name, namespace
# and container name (CRI-O's io.kubernetes.pod.* for runc, crun and podman;
# containerd's io.kubernetes.cri.* for containerd) and gpusandbox.io/mem.
# R is the way the container is started:
#   runc, crun    a bundle, `R run`
#   podman        podman run --annotation (runc underneath)
#   containerd    containerd 1.6, CRI plugin off: `ctr run --annotation`
#                 (runc underneath), the annotations written straight
#                 into the OCI config
#   cri, cri-crun containerd 1.6's CRI plugin, spoken to over its socket
#                 as the kubelet does (tests/agent/cri/cri.py: a pod
#                 sandbox, its container with the Localhost profile's
#                 path) with runc, or crun (the runtime's BinaryName),
#                 underneath; the images made from the busybox root and
#                 imported (tests/agent/cri/oci_image.py). The pod's
#                 gpusandbox.io/mem reaches the container only through
#                 the pod_annotations line docs/kubernetes.md gives;
#                 containerd itself writes the io.kubernetes.cri.* names.
#                 Which runtime ran is read from its state in the shim's
#                 runtime root (runc's state.json, crun's status)
# Every quota is judged by the FAKE DRIVER's account (GS_FAKE_STATS).
#
#   walk-R        gpusandbox.io/mem=512m:
#                 tests/agent's holder takes 2 chunks of 256 MiB, and while
#                 it holds them `gpusandbox status --format json` (the
#                 DaemonSet's status socket) lists the one sandbox with the
#                 pod's name, namespace, uid and container name, quota
#                 512 MiB and the
#                 512 MiB the fake holds; node_exporter's /metrics (scraped
#                 over HTTP) has gpusandbox_sandbox_info with the pod's
#                 labels and the sandbox's memory quota and use, the
#                 collector took the file (node_textfile_scrape_error 0) and
#                 exports every sample of it. Then the holder asks 2 chunks
#                 more: both refused with NO_MEMORY, the fake's peak stays
#                 at 512 MiB. The container's audit log is the DaemonSet's
#                 audit folder's POD_NAMESPACE_CONTAINER-ID.jsonl, its start
#                 record's quota 512 MiB, and `gpusandbox audit verify` on
#                 the folder (as the DaemonSet's comment says) passes
#   default-R     the same pod without gpusandbox.io/mem: the node's
#                 default (16g) holds, the holder gets its 2 chunks more
#                 (the fake's peak 1 GiB) — the 512 MiB above is the
#                 annotation's doing, passed through R
#   overbound-R   gpusandbox.io/mem=32g, above the node policy's 16g: the
#                 container is refused before any allocation reaches the
#                 fake, the agent's log says which annotation and why (a
#                 request may only lower the node's limit: refused, not
#                 clamped, docs/kubernetes.md)
#   nofilter-cri  containerd's runtime without the pod_annotations line:
#                 the pod asks 512m, but the annotation never reaches the
#                 container, which gets the node's default (the fake's
#                 peak 1 GiB, no request named) — why docs/kubernetes.md
#                 asks for that line
#
# R is skipped (said so) when it is not installed (the cri ones need
# protoc and Debian's python3-grpcio, python3-protobuf: scripts/
# install-deps.sh tests); without runc, busybox-static, jq, python3-yaml
# or node_exporter the tier exits 125 (SKIP).
# Prints PASS/FAIL per case and "N passed, M failed" last. GS_AGENT_KEEP=1
# keeps the work folder (/tmp/gs-walk.*).
set -u
cd "$(dirname "$0")/../.." || exit 2
ROOT=$(pwd)
GS=${GPUSANDBOX:-$ROOT/build/gpusandbox}
HOLDER=$ROOT/build/tests/agent/holder
WITH_FAKE=$ROOT/tests/fakedrv/with-fake-nvidia
NODE_PY=$ROOT/tests/agent/deploy_node.py
SCRAPE=$ROOT/tests/metrics/scrape.py
CRI=$ROOT/tests/agent/cri/cri.py
CRI_IMAGE=localhost/gs-walk:1   # the pod's sandbox and container image (imported)
CRI_SANDBOX_CMD=(/bin/sleep 3600)  # the image's entrypoint: the sandbox's process
SKIP=125
CHUNK=$((256 << 20))
ASKED=512m              # walk-R's gpusandbox.io/mem
ASKED_BYTES=$((2 * CHUNK))
OVER=32g                # overbound-R's: above default.policy's mem = 16g
HELD_FIRST=2            # the holder's chunks before it waits
HELD_THEN=2             # and after
CASE_TIMEOUT=90
WAIT_STEPS=250          # x 0.02 s: 5 s
. tests/agent/lib.sh
METRICS_STEPS=750       # x 0.02 s: the metrics file is rewritten every second
SCRAPE_DEADLINE_S=30
FAKE_VIDMEM=16g
POD_NS=ml
POD_CONTAINER=cuda

# ---- inside one with-fake-nvidia: one case --------------------------------



# The pod's annotations as runtime $RT's CRI runtime writes them, plus
# gpusandbox.io/mem when $1 is not empty: one KEY=VALUE a line.
annotations() {
	local pod=pod-$RT
	if [ "$RT" = containerd ]; then
		printf '%s\n' "io.kubernetes.cri.sandbox-name=$pod" "io.kubernetes.cri.sandbox-namespace=$POD_NS" \
			"io.kubernetes.cri.sandbox-uid=uid-$pod" "io.kubernetes.cri.container-name=$POD_CONTAINER" \
			"io.kubernetes.cri.container-type=container"
	else
		printf '%s\n' "io.kubernetes.pod.name=$pod" "io.kubernetes.pod.namespace=$POD_NS" \
			"io.kubernetes.pod.uid=uid-$pod" "io.kubernetes.container.name=$POD_CONTAINER"
	fi
	[ -n "$1" ] && echo "gpusandbox.io/mem=$1"
}

# The node's keeper and agent, with their DaemonSets' commands.
start_node() {
	python3 "$NODE_PY" "$ROOT/deploy" "$GS" "$D/node" >"$D/node.out" 2>&1 ||
		{ echo "deploy_node: $(tail -1 "$D/node.out")" >"$D/rc"; return 1; }
	# shellcheck source=/dev/null # written by deploy_node.py
	. "$D/node/paths.env"
	local kcmd acmd
	mapfile -t kcmd <"$D/node/keeper.cmd"
	mapfile -t acmd <"$D/node/agent.cmd"
	"${kcmd[@]}" 2>>"$D/keeper.err" &
	KEEPER=$!
	wait_for -S "$D/node/run/keeper.sock" || { echo "the keeper did not listen" >"$D/rc"; return 1; }
	"${acmd[@]}" 2>>"$D/agent.err" &
	AGENT=$!
	wait_for -S "$NODE_STATUS" || { echo "the agent did not listen: $(tail -1 "$D/agent.err")" >"$D/rc"; return 1; }
	# node_exporter as docs/kubernetes.md runs it, on a free local port.
	local port
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$(dirname "$NODE_METRICS")" --web.listen-address="127.0.0.1:$port" \
		>"$D/ne.log" 2>&1 &
	NE=$!
	NE_URL=http://127.0.0.1:$port/metrics
	# Answering before the container starts: the scrape while the holder
	# waits (30 s at most, tests/agent/holder.c) is then one request.
	python3 -c 'import sys, time, urllib.request
end = time.monotonic() + float(sys.argv[2])
while True:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=2).read()
        break
    except OSError:
        if time.monotonic() > end:
            sys.exit(1)
        time.sleep(0.1)' "$NE_URL" "$SCRAPE_DEADLINE_S" ||
		{ echo "node_exporter did not answer: $(tail -1 "$D/ne.log")" >"$D/rc"; return 1; }
	P=$NODE_SECCOMP/gpusandbox/gpu.json
}

stop_node() {
	local p
	# The CRI's pod (its sandbox's process), as the kubelet removes it.
	[ -s "$D/pod.id" ] && "$CRI" "$D/containerd.sock" remove "$(cat "$D/pod.id")" "$(cat "$D/cid" 2>/dev/null)" \
		>>"$D/err" 2>&1 && rm -f "$D/pod.id"
	for p in ${NE:-} ${AGENT:-} ${CONTAINERD:-} ${KEEPER:-}; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	NE='' AGENT='' CONTAINERD='' KEEPER=''
}

# runc and crun: a bundle on the busybox root, the fake's nodes as the
# container's /dev/nvidia*, the profile, the annotations; started in the
# background (it runs until the holder is released).
start_oci() {
	mkdir -p "$D/bundle"
	(cd "$D/bundle" && "$RT" spec) || return 1
	jq --argjson args "$1" --argjson ann "$(annotations "$2" | jq -R 'split("=") | { (.[0]): (.[1:] | join("=")) }' | jq -s add)" \
		--argjson sc "$(cat "$P")" --arg m "$GS_FAKE_MOUNT" --arg root "$ROOTFS" --arg tmp "$D/ctmp" '
		.process.terminal = false | .process.args = $args | .annotations = $ann |
		.root = { path: $root, readonly: true } |
		.mounts += [ { destination: "/tmp", type: "bind", source: $tmp, options: ["rbind", "rw"] } ] +
		           [ "nvidiactl", "nvidia0", "nvidia-uvm" |
		             { destination: ("/dev/" + .), type: "bind", source: ($m + "/" + .), options: ["bind"] } ] |
		.linux.seccomp = $sc' "$D/bundle/config.json" >"$D/config.new" && mv "$D/config.new" "$D/bundle/config.json" ||
		return 1
	(cd "$D/bundle" && exec timeout 60 "$RT" --root "$D/state" run "$CID") >"$D/out" 2>"$D/err" </dev/null &
	CT=$!
}

# podman (runc underneath) with --annotation; its container id (the OCI
# state's) from --cidfile.
start_podman() {
	local a=() kv args
	while read -r kv; do a+=(--annotation "$kv"); done < <(annotations "$2")
	mapfile -t args < <(jq -r '.[]' <<<"$1")
	timeout 60 podman --root "$D/storage" --runroot "$D/run" --runtime runc --cgroup-manager=cgroupfs \
		--events-backend=file run --rm --network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096 \
		--cidfile "$D/cid" -v "$D/ctmp:/tmp" -v "$GS_FAKE_MOUNT/nvidiactl:/dev/nvidiactl" \
		-v "$GS_FAKE_MOUNT/nvidia0:/dev/nvidia0" -v "$GS_FAKE_MOUNT/nvidia-uvm:/dev/nvidia-uvm" \
		--security-opt "seccomp=$P" "${a[@]}" --rootfs "$ROOTFS" "${args[@]}" \
		>"$D/out" 2>"$D/err" </dev/null &
	CT=$!
}

# containerd 1.6 (a daemon of the case's own, the CRI plugin off) and
# `ctr run --seccomp-profile` (runc underneath): `--annotation` writes the
# OCI config's annotations, where containerd's CRI plugin copies a pod's
# (those its runtime's pod_annotations lets through, docs/kubernetes.md).
start_ctr() {
	printf 'version = 2\nroot = "%s"\nstate = "%s"\n[grpc]\n  address = "%s"\n[plugins."io.containerd.grpc.v1.cri"]\n  disable = true\n' \
		"$D/croot" "$D/cstate" "$D/containerd.sock" >"$D/containerd.toml"
	containerd --config "$D/containerd.toml" >"$D/containerd.log" 2>&1 &
	CONTAINERD=$!
	wait_for -S "$D/containerd.sock" || { echo "containerd did not start: $(tail -1 "$D/containerd.log")" >"$D/rc"; return 1; }
	local a=() kv n args
	while read -r kv; do a+=(--annotation "$kv"); done < <(annotations "$2")
	mapfile -t args < <(jq -r '.[]' <<<"$1")
	for n in nvidiactl nvidia0 nvidia-uvm; do
		a+=(--mount "type=bind,src=$GS_FAKE_MOUNT/$n,dst=/dev/$n,options=rbind:rw")
	done
	timeout 60 ctr --address "$D/containerd.sock" run --rm --runc-root "$D/runtime-root" --rootfs \
		--seccomp --seccomp-profile "$P" \
		--mount "type=bind,src=$D/ctmp,dst=/tmp,options=rbind:rw" "${a[@]}" "$ROOTFS" "$CID" \
		"${args[@]}" >"$D/out" 2>"$D/err" </dev/null &
	CT=$!
}

# containerd 1.6's CRI plugin, spoken to as the kubelet does
# (tests/agent/cri/cri.py): a pod sandbox on the host's network (no CNI
# here) and its container, the images made from the busybox root
# (tests/agent/cri/oci_image.py) and imported. The pod's gpusandbox.io/*
# annotations reach the container's OCI config only through the runtime's
# pod_annotations, as docs/kubernetes.md says to configure it; the pod's
# names become containerd's io.kubernetes.cri.* annotations. Its OOM score
# is left as is (restrict_oom_score_adj): root here lacks CAP_SYS_RESOURCE.
start_cri() {
	local filter='pod_annotations = ["gpusandbox.io/*"]' binary=runc
	[ "${CASE%%-*}" = nofilter ] && filter=
	[ "$RT" = cri-crun ] && binary=crun
	cat >"$D/containerd.toml" <<-EOF
	version = 2
	root = "$D/croot"
	state = "$D/cstate"
	[grpc]
	  address = "$D/containerd.sock"
	[plugins."io.containerd.grpc.v1.cri"]
	  sandbox_image = "$CRI_IMAGE"
	  restrict_oom_score_adj = true
	  [plugins."io.containerd.grpc.v1.cri".cni]
	    bin_dir = "$D/cni/bin"
	    conf_dir = "$D/cni/conf"
	  [plugins."io.containerd.grpc.v1.cri".containerd]
	    snapshotter = "native"
	    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
	      runtime_type = "io.containerd.runc.v2"
	      $filter
	      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
	        BinaryName = "$binary"
	        Root = "$D/runtime-root"
	EOF
	containerd --config "$D/containerd.toml" >"$D/containerd.log" 2>&1 &
	CONTAINERD=$!
	wait_for -S "$D/containerd.sock" || { echo "containerd did not start: $(tail -1 "$D/containerd.log")" >"$D/rc"; return 1; }
	ctr --address "$D/containerd.sock" -n k8s.io image import "$CRI_IMAGE_TAR" >"$D/import.out" 2>&1 ||
		{ echo "ctr image import: $(tail -1 "$D/import.out")" >"$D/rc"; return 1; }
	local ann='{}'
	[ -n "$2" ] && ann=$(jq -nc --arg m "$2" '{ "gpusandbox.io/mem": $m }')
	mkdir -p "$D/logs"
	jq -n --arg pod "pod-$RT" --arg ns "$POD_NS" --arg cn "$POD_CONTAINER" --argjson ann "$ann" \
		--arg image "$CRI_IMAGE" --argjson cmd "$1" --arg sc "$P" --arg logs "$D/logs" \
		--arg tmp "$D/ctmp" --arg m "$GS_FAKE_MOUNT" '{
		pod: { name: $pod, namespace: $ns, uid: ("uid-" + $pod), annotations: $ann },
		container: { name: $cn, image: $image, command: $cmd, seccomp: $sc, log_dir: $logs,
			mounts: ([[$tmp, "/tmp"]] + [ "nvidiactl", "nvidia0", "nvidia-uvm" | [($m + "/" + .), ("/dev/" + .)] ]) } }' \
		>"$D/cri-spec.json"
	"$CRI" "$D/containerd.sock" start "$D/cri-spec.json" "$D" >"$D/err" 2>&1 || return 1
	cp "$D/container.id" "$D/cid"
}

start_container() {  # start_container ARGS_JSON MEM_ANNOTATION(or "")
	mkdir -p "$D/ctmp"
	case "$RT" in
	runc|crun) start_oci "$@" ;;
	podman) start_podman "$@" ;;
	containerd) start_ctr "$@" ;;
	cri|cri-crun) start_cri "$@" ;;
	esac
}

# Waits for the container's end; its exit status in $D/rc.
wait_container() {
	if [ "${RT%-crun}" = cri ]; then
		"$CRI" "$D/containerd.sock" wait "$(cat "$D/cid")" 60 >"$D/rc" 2>>"$D/err"
		# The CRI's container log ("TIME STREAM TAG line") as its output.
		sed -E 's/^[^ ]+ (stdout|stderr) [FP] //' "$D/logs/$POD_CONTAINER.log" >"$D/out" 2>/dev/null
		return
	fi
	wait "$CT"
	echo $? >"$D/rc"
	case "$RT" in runc|crun) "$RT" --root "$D/state" delete -f "$CID" >/dev/null 2>&1 ;; esac
}

# While the holder holds its first chunks: the status, node_exporter's
# page, the fake's account; then the holder goes on.
observe() {
	local i
	wait_for -e "$D/ctmp/go.ready" || wait_for -e "$D/ctmp/go.ready" ||
		{ echo "the holder never got ready" >"$D/observe.err"; return 1; }
	for ((i = 0; i < METRICS_STEPS; i++)); do
		grep -q '^gpusandbox_sandbox_info{' "$NODE_METRICS" 2>/dev/null &&
			grep -q "^gpusandbox_memory_used_bytes{.*} $((HELD_FIRST * CHUNK))\$" "$NODE_METRICS" && break
		sleep 0.02
	done
	cp "$NODE_METRICS" "$D/metrics-mid.prom"
	"$GS" status --socket "$NODE_STATUS" --format json >"$D/status.json" 2>"$D/status.err"
	echo $? >"$D/status.rc"
	python3 "$SCRAPE" --file-only "$NE_URL" "$SCRAPE_DEADLINE_S" "$D/metrics-mid.prom" "$D/scrape.txt" \
		>"$D/scrape.out" 2>&1
	echo $? >"$D/scrape.rc"
	cp "$GS_FAKE_STATS" "$D/stats-mid"
	# Which OCI runtime containerd's shim ran (runc's state.json or crun's
	# status in the container's folder of the runtime's root).
	[ -d "$D/runtime-root" ] && (cd "$D/runtime-root" && find . -type f) >"$D/runtime-root.files"
	[ -s "$D/cid" ] && cp "$D/cid" "$D/container.id" || echo "$CID" >"$D/container.id"
}

inside() {
	CASE=$1 RT=$2 D=$3 ROOTFS=$4
	CID=gs-$CASE AGENT='' KEEPER='' NE='' CONTAINERD='' CT=''
	trap stop_node EXIT
	case "$RT" in crun|cri-crun) crun_hybrid_workaround || { echo "crun workaround failed" >"$D/rc"; return; } ;; esac
	start_node || return
	local i cmd='["/bin/holder", "'$HELD_FIRST'", "/tmp/go", "'$HELD_THEN'"]'
	case "$CASE" in
	walk-*|default-*|nofilter-*)
		local mem=$ASKED
		[ "${CASE%%-*}" = default ] && mem=
		start_container "$cmd" "$mem" || { echo "the container did not start" >"$D/rc"; return; }
		observe
		: >"$D/ctmp/go"
		wait_container ;;
	overbound-*)
		start_container "$cmd" "$OVER" || { echo "the container did not start" >"$D/rc"; return; }
		wait_container ;;
	esac
	# Teardown: the sandbox's end in the agent's log, before the agent stops.
	for ((i = 0; i < WAIT_STEPS; i++)); do
		[ "$(grep -c ': sandbox [0-9a-f]*, init pid' "$D/agent.err")" = "$(grep -c 'torn down' "$D/agent.err")" ] && break
		sleep 0.02
	done
	stop_node
	cp "$D/out" "$D/container.out" 2>/dev/null
}

if [ "${1:-}" = --inside ]; then
	shift
	inside "$@"
	exit 0
fi

# ---- outside: set up, run the cases, judge ---------------------------------

skip() { echo "agent-walk: SKIP: $*"; exit "$SKIP"; }
[ "$(id -u)" = 0 ] || skip "needs root (runtimes, FUSE fake driver)"
command -v jq >/dev/null || skip "jq is not installed (scripts/install-deps.sh)"
command -v runc >/dev/null || skip "runc is not installed (scripts/install-deps.sh)"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed (scripts/install-deps.sh)"
BUSYBOX=$(command -v busybox)
if [ -z "$BUSYBOX" ] || readelf -l "$BUSYBOX" 2>/dev/null | grep -q INTERP; then
	skip "busybox-static is not installed (scripts/install-deps.sh)"
fi
# Only the test tiers' (scripts/install-deps.sh tests installs them too).
scripts/install-test-pkgs.sh prometheus-node-exporter containerd >/dev/null 2>&1 ||
	echo "agent-walk: prometheus-node-exporter or containerd could not be installed (scripts/install-test-pkgs.sh)"
command -v prometheus-node-exporter >/dev/null || skip "prometheus-node-exporter is not installed (scripts/install-deps.sh tests)"
for f in "$GS" "$HOLDER"; do
	[ -x "$f" ] || { echo "agent-walk: $f is not built (make all tests)"; exit 2; }
done
RUNTIMES=runc
command -v crun >/dev/null && RUNTIMES="$RUNTIMES crun" || echo "agent-walk: crun is not installed: its cases are skipped"
command -v podman >/dev/null && RUNTIMES="$RUNTIMES podman" || echo "agent-walk: podman is not installed: its cases are skipped"
command -v containerd >/dev/null && command -v ctr >/dev/null && RUNTIMES="$RUNTIMES containerd" ||
	echo "agent-walk: containerd (or ctr) is not installed: its cases are skipped"
# The CRI client's: Debian's grpc and protobuf for Debian's python3, protoc.
scripts/install-test-pkgs.sh python3-grpcio python3-protobuf protobuf-compiler >/dev/null 2>&1
if case " $RUNTIMES " in *" containerd "*) true ;; *) false ;; esac && command -v protoc >/dev/null &&
	/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null; then
	RUNTIMES="$RUNTIMES cri"
	case " $RUNTIMES " in *" crun "*) RUNTIMES="$RUNTIMES cri-crun" ;; esac
else
	echo "agent-walk: containerd, protoc or Debian's python3-grpcio is missing: the *-cri cases are skipped"
fi

tmp=$(mktemp -d /tmp/gs-walk.XXXXXX)
# An agent stopped with a container's log open may leave it append-only
# (supervisor/audit/audit_guard.h): the flags come off before the removal.
trap '[ -n "${GS_AGENT_KEEP:-}" ] || { command -v chattr >/dev/null && find "$tmp" -name "*.jsonl*" -type f -exec chattr -f -a {} + 2>/dev/null; rm -rf "$tmp"; }' EXIT
ROOTFS=$tmp/rootfs
mkdir -p "$ROOTFS"/bin "$ROOTFS"/dev "$ROOTFS"/proc "$ROOTFS"/sys "$ROOTFS"/tmp "$ROOTFS"/etc
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
for a in sh sleep cat echo; do ln -s busybox "$ROOTFS/bin/$a"; done
cp "$HOLDER" "$ROOTFS/bin/"
CRI_IMAGE_TAR=$tmp/image.tar
case " $RUNTIMES " in *" cri "*)
	python3 "$ROOT/tests/agent/cri/oci_image.py" "$ROOTFS" "$CRI_IMAGE" "$CRI_IMAGE_TAR" "${CRI_SANDBOX_CMD[@]}" ||
		{ echo "agent-walk: the CRI cases' image could not be made"; exit 2; } ;;
esac
export CRI_IMAGE_TAR

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() {
	echo "FAIL $1: $2"
	for f in err agent.err observe.err; do [ -s "$dir/$f" ] && sed 's/^/    /' "$dir/$f" | tail -5; done
	failed=$((failed + 1))
}
st() { awk -v k="$2" '$1 == k { print $2 }' "$1" 2>/dev/null; }

run_case() {  # run_case NAME RUNTIME
	dir=$tmp/$1
	mkdir -p "$dir"
	GS_FAKE_STATS_OUT=$dir/stats timeout "$CASE_TIMEOUT" "$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- \
		"$0" --inside "$1" "$2" "$dir" "$ROOTFS" >"$dir/harness.out" 2>&1
	local rc=$?
	[ "$rc" = "$SKIP" ] && { echo "agent-walk: SKIP: $(tail -1 "$dir/harness.out")"; exit "$SKIP"; }
	[ -s "$dir/stats" ] || { fail "$1" "no stats from the fake (harness exit $rc)"; return 1; }
	return 0
}

# The holder's two phases as its output says them ("first ok=N ...").
phase() { grep "^$1 " "$dir/container.out" 2>/dev/null | head -1; }

# walk-R: the fake's peak, the holder's phases, the status and the scrape.
judge_walk() {  # judge_walk RUNTIME QUOTA_BYTES PEAK_BYTES THEN_LINE
	local rt=$1 quota=$2 peak=$3 then=$4 fpeak
	fpeak=$(st "$dir/stats" gpu0.vidmem_peak)
	[ "$(cat "$dir/rc" 2>/dev/null)" = 0 ] && [ "$fpeak" = "$peak" ] &&
		[ "$(phase first)" = "first ok=$HELD_FIRST refused=0 first_refusal=none" ] &&
		[ "$(phase "then")" = "$then" ] ||
		{ why="rc=$(cat "$dir/rc" 2>/dev/null) fake peak $fpeak (want $peak): $(tr '\n' ' ' 2>/dev/null <"$dir/container.out")"; return; }
	[ "$(cat "$dir/status.rc")" = 0 ] && [ "$(cat "$dir/scrape.rc")" = 0 ] ||
		{ why="status rc $(cat "$dir/status.rc"): $(head -c 300 "$dir/status.err"); scrape: $(head -5 "$dir/scrape.out")"; return; }
	why=$(python3 "$ROOT/tests/agent/walk_check.py" "$dir/status.json" "$dir/scrape.txt" "$dir/stats-mid" \
		"pod-$rt" "$POD_NS" "$POD_CONTAINER" "$(cat "$dir/container.id")" "$quota" "$((HELD_FIRST * CHUNK))" \
		"uid-pod-$rt")
}

# The container's audit log where docs/kubernetes.md says, named by its
# pod, and the folder verifying as one.
judge_log() {  # judge_log RUNTIME
	local log
	log=$dir/node/log/pod-$1_${POD_NS}_$POD_CONTAINER-$(cat "$dir/container.id").jsonl
	[ "$(head -1 "$log" 2>/dev/null | jq -r '[.event, .quota] | join(" ")')" = "start $ASKED_BYTES" ] ||
		{ why="no log $log with the request's quota: $(ls "$dir/node/log")"; return; }
	"$GS" audit verify "$dir/node/log" >"$dir/verify.out" 2>&1 ||
		why="audit verify on the node's folder: $(tail -2 "$dir/verify.out")"
}

# Under containerd, the OCI runtime its shim ran for the container: runc
# keeps state.json in the container's folder of its root, crun status.
judge_runtime() {  # judge_runtime RUNTIME
	local want=state.json
	case "$1" in containerd|cri) ;; cri-crun) want=status ;; *) return ;; esac
	grep -q "/$(cat "$dir/container.id")/$want\$" "$dir/runtime-root.files" 2>/dev/null ||
		why="no $want of the container in the runtime's root: $(tr '\n' ' ' <"$dir/runtime-root.files" 2>/dev/null)"
}

judge() {  # judge NAME RUNTIME
	local name=$1 rt=$2 why=""
	case "$name" in
	walk-*)
		judge_walk "$rt" "$ASKED_BYTES" "$ASKED_BYTES" "then ok=0 refused=$HELD_THEN first_refusal=NO_MEMORY"
		[ -z "$why" ] && ! grep -q "gpusandbox.io/mem=$ASKED" "$dir/agent.err" && why="the agent did not name the request"
		[ -z "$why" ] && judge_log "$rt"
		[ -z "$why" ] && judge_runtime "$rt" ;;
	default-*|nofilter-*)
		judge_walk "$rt" $((16 << 30)) $(((HELD_FIRST + HELD_THEN) * CHUNK)) "then ok=$HELD_THEN refused=0 first_refusal=none"
		[ -z "$why" ] && grep -q "gpusandbox.io/mem" "$dir/agent.err" && why="the agent was handed a request" ;;
	overbound-*)
		[ "$(cat "$dir/rc" 2>/dev/null)" != 0 ] && [ "$(st "$dir/stats" allocs_ok)" = 0 ] &&
			grep -q "annotation gpusandbox.io/mem asks for 32.00 GiB on GPU 0, above the node policy's 16.00 GiB" "$dir/agent.err" ||
			why="rc=$(cat "$dir/rc" 2>/dev/null) allocs_ok=$(st "$dir/stats" allocs_ok), agent said: $(grep -m1 refused "$dir/agent.err")" ;;
	esac
	[ -z "$why" ] && pass "$name" || fail "$name" "$why"
}

want() {
	[ $# -gt 0 ] || return 0
	[ ${#SELECTED[@]} -eq 0 ] && return 0
	local s
	for s in "${SELECTED[@]}"; do [ "$s" = "$1" ] && return 0; done
	return 1
}
SELECTED=("$@")
for r in $RUNTIMES; do
	cases="walk default overbound"
	[ "$r" = cri ] && cases="$cases nofilter"
	for c in $cases; do
		want "$c-$r" && run_case "$c-$r" "$r" && judge "$c-$r" "$r"
	done
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
