#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier (issue #31: "a container's pair through the agent within 5 % of
# the command line's"): the 2 MiB cuMemAlloc/cuMemFree pair natively, under
# the command line (with --audit-log, as the agent always audits) and in a
# runc container under `gpusandbox agent` (tests/gpu/agent_container.sh),
# rounds interleaved with the order rotated. Figures are printed, never
# asserted.
#
#   GS=build/gpusandbox-static RUNTIME=/path/to/runc REPS=5 OUT=/tmp/gpu-out \
#   tests/gpu/agent_pair_ab.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
GS=${GS:-build/gpusandbox-static}
REPS=${REPS:-5}
PAIRS=${PAIRS:-3000}
TXT="$OUT/agent_pair_ab.txt"
# In the repository: agent_container.sh binds it into the container.
MEMALLOC=build/bench_memalloc
nvcc -O2 -o "$MEMALLOC" tests/gpu/bench_memalloc.c -lcuda || exit 1
log() { echo "$*" | tee -a "$TXT"; }
log "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) gs=$GS reps=$REPS pairs=$PAIRS"

# CONFIGS (default "native cli agent"): also agentk, the agent with a
# keeper (as deployed: one share per client), and the --uvm-map as-user
# pair: clias, the command line as AS_USER_UID; agentas, a container in a
# user namespace of its own (uid 0 in it the host's AS_USER_UID) under an
# agent with a keeper and --uvm-map as-user.
AS_USER_UID=${AS_USER_UID:-47011}
run_one() {
	case $1 in
	native) "$MEMALLOC" 2 "$PAIRS" ;;
	cli) "$GS" --mem 4g --audit-log "$OUT/cli-$2.jsonl" -- "$MEMALLOC" 2 "$PAIRS" 2>/dev/null ;;
	clias) "$GS" --user "$AS_USER_UID" --group "$AS_USER_UID" --uvm-map as-user --mem 4g \
		--audit-log "$OUT/clias-$2.jsonl" -- "$MEMALLOC" 2 "$PAIRS" 2>/dev/null ;;
	agent) GS=$(realpath "$GS") tests/gpu/agent_container.sh --mem 4g -- "$(pwd)/$MEMALLOC" 2 "$PAIRS" \
		2>"$OUT/agent-$2.err" ;;
	agentk) GS=$(realpath "$GS") tests/gpu/agent_container.sh --keeper --mem 4g -- "$(pwd)/$MEMALLOC" 2 "$PAIRS" \
		2>"$OUT/agentk-$2.err" ;;
	agentas) GS=$(realpath "$GS") tests/gpu/agent_container.sh --keeper --userns "$AS_USER_UID" --mem 4g -- \
		"$(pwd)/$MEMALLOC" 2 "$PAIRS" 2>"$OUT/agentas-$2.err" ;;
	esac
}
read -r -a configs <<<"${CONFIGS:-native cli agent}"
k=${#configs[@]}
for r in $(seq "$REPS"); do
	for i in $(seq 0 $((k - 1))); do
		cfg=${configs[$(((i + r) % k))]}
		log "round=$r cfg=$cfg $(run_one "$cfg" "$r" | grep -o 'pairs_per_s=[0-9.]*' | tail -1)"
	done
done
python3 - "$TXT" <<'PY' | tee -a "$TXT"
import sys, re, statistics as st, collections
d = collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m = re.match(r"round=(\d+) cfg=(\S+) pairs_per_s=([0-9.]+)", l)
    if m:
        d[m.group(2)][int(m.group(1))] = float(m.group(3))
for c, runs in d.items():
    rn = [runs[r] / d["native"][r] for r in runs if r in d.get("native", {})]
    line = f"{c:7s} us/pair {1e6 / st.median(runs.values()):7.1f}  to native {st.median(rn):.3f} [{min(rn):.3f}-{max(rn):.3f}]"
    base = "clias" if c == "agentas" else "cli"
    if c.startswith("agent") and base in d:
        rc = [runs[r] / d[base][r] for r in runs if r in d[base]]
        line += f"  to the command line ({base}) {st.median(rc):.3f} [{min(rc):.3f}-{max(rc):.3f}]"
    print(line)
PY
