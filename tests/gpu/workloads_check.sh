#!/bin/bash
# SPDX-License-Identifier: MIT
# GPU tier (issue #29): real workloads at the edges. Prints what it saw.
#  1. memory shared between processes through a POSIX fd (ipc_fd_share.c):
#     natively; exporter and importer in one sandbox; in two sandboxes
#     (refused by default; allowed and charged to the importer under the
#     policy fd-import = foreign); nvidia-smi's device total read while
#     the importer holds, against the quota (--mem 3g each);
#  3. nvidia-smi inside a sandbox: the default view, -q, --query-gpu,
#     --query-compute-apps and dmon -c 1, each with an audit log whose
#     refusals are listed (gpusandbox audit denials), while another
#     tenant (a second sandbox) holds memory: its pid must not show;
#     then each view natively and under the default policy: its
#     refusals and its N/A fields.
# Usage: tests/gpu/workloads_check.sh [OUTDIR]   (build first: make static)
cd "$(dirname "$0")/../.." || exit 2
set -u
B=${GPUSANDBOX:-build/gpusandbox-static}
OUT=${1:-/tmp/workloads}
mkdir -p "$OUT"
nvcc -O2 -o /tmp/ipc_fd_share tests/gpu/ipc_fd_share.c -lcuda || exit 1
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1) $(uname -r)"
used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1; }
IDLE=$(used)
echo "idle_used_mib=$IDLE"

# One exchange under MODE: native, one (both processes in one sandbox
# under --mem 3g) or two (each in its own sandbox, --mem 3g). The exporter
# makes 1 GiB; the importer asks for up to 8 GiB more and holds 8 s; the
# device total is read after 5 s.
exchange() {
	local mode=$1 sock=/tmp/ipc_$1.sock q="--user root --mem 3g"
	local imp="/tmp/ipc_fd_share import $sock 8192 8" exp="/tmp/ipc_fd_share export $sock 1024"
	rm -f "$sock"
	case $mode in
	native) (timeout 60 $imp > "$OUT/$mode.import" 2>&1 &) ; timeout 60 $exp > "$OUT/$mode.export" 2>&1 ;;
	one) (timeout 60 "$B" $q --audit-log "$OUT/$mode.audit.jsonl" -- bash -c \
		"$imp > $OUT/$mode.import 2>&1 & $exp > $OUT/$mode.export 2>&1; wait" > "$OUT/$mode.sandbox" 2>&1 &) ;;
	two) (timeout 60 "$B" $q --audit-log "$OUT/$mode.imp.audit.jsonl" -- $imp > "$OUT/$mode.import" 2>&1 &)
	     timeout 60 "$B" $q --audit-log "$OUT/$mode.exp.audit.jsonl" -- $exp > "$OUT/$mode.export" 2>&1 ;;
	# The importer's policy lets the other sandbox's memory in, charged.
	two_foreign) printf 'fd-import = foreign\n' > "$OUT/foreign.policy"
	     (timeout 60 "$B" $q --policy "$OUT/foreign.policy" --audit-log "$OUT/$mode.imp.audit.jsonl" -- $imp \
		> "$OUT/$mode.import" 2>&1 &)
	     timeout 60 "$B" $q --audit-log "$OUT/$mode.exp.audit.jsonl" -- $exp > "$OUT/$mode.export" 2>&1 ;;
	esac
	sleep 6
	echo "== $mode: device used $(( $(used) - IDLE )) MiB above idle while the importer holds"
	sleep 6
	echo "export: $(tr '\n' ' ' < "$OUT/$mode.export")"
	echo "import: $(tr '\n' ' ' < "$OUT/$mode.import" | cut -c1-600)"
	for a in "$OUT/$mode".*audit.jsonl; do
		[ -f "$a" ] && echo "denials $(basename "$a"): $("$B" audit denials "$a" 2>&1 | head -12 | tr '\n' '|')"
	done
}
for m in native one two two_foreign; do exchange $m; done

echo "== nvidia-smi in a sandbox while another tenant holds 2 GiB"
(timeout 40 "$B" --user root --mem 4g -- python3 -c 'import ctypes,time
c=ctypes.CDLL("libcuda.so.1"); c.cuInit(0); d=ctypes.c_int(); c.cuDeviceGet(ctypes.byref(d),0)
x=ctypes.c_void_p(); c.cuDevicePrimaryCtxRetain(ctypes.byref(x),d); c.cuCtxSetCurrent(x)
p=ctypes.c_uint64(); print("tenant alloc", c.cuMemAlloc_v2(ctypes.byref(p), 2<<30), flush=True); time.sleep(30)' > "$OUT/tenant.out" 2>&1 &)
sleep 8
echo "native compute-apps: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' '|')"
i=0
for args in "" "-q" "--query-gpu=name,memory.used,memory.total,utilization.gpu --format=csv" \
	"--query-compute-apps=pid,process_name,used_memory --format=csv" "dmon -c 1"; do
	i=$((i + 1))
	# shellcheck disable=SC2086 # args are words
	timeout 60 "$B" --user root --mem 3g --audit-log "$OUT/smi$i.audit.jsonl" -- nvidia-smi $args > "$OUT/smi$i.out" 2>&1
	echo "-- nvidia-smi $args: rc=$? lines=$(wc -l < "$OUT/smi$i.out")"
	grep -iE "MiB|pid|No running|Failed|Unknown|error|insufficient" "$OUT/smi$i.out" | head -12
	echo "denials: $("$B" audit denials "$OUT/smi$i.audit.jsonl" 2>&1 | head -20 | tr '\n' '|')"
done
# N/A fields and refusals per view: natively and under the default policy.
refused() { sed -n 's/^gpusandbox: \([0-9]*\) calls\{0,1\} refused.*/\1/p' "$1" | tail -1 | grep . || echo 0; }
i=0
for args in "" "-q" "dmon -c 1"; do
	i=$((i + 1))
	# shellcheck disable=SC2086 # args are words
	timeout 60 nvidia-smi $args > "$OUT/na$i.native" 2>&1
	# shellcheck disable=SC2086 # args are words
	timeout 60 "$B" --user root --mem 3g --audit-log "$OUT/na$i.default.jsonl" -- nvidia-smi $args \
		> "$OUT/na$i.default" 2>&1
	echo "-- nvidia-smi $args: N/A native $(grep -c 'N/A' "$OUT/na$i.native")," \
		"default $(grep -c 'N/A' "$OUT/na$i.default") (refused $(refused "$OUT/na$i.default"))"
	for pol in default; do
		echo "   $pol denials (count x object): $("$B" audit denials --format csv "$OUT/na$i.$pol.jsonl" 2>&1 |
			awk -F, 'NR > 1 { gsub(/"/, "", $5); printf "%sx%s ", $1, $5 }')"
	done
done
wait
