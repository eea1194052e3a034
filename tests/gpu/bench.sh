#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier: every issue #16 target as a ratio to native, measured in one
# session with native and sandboxed runs interleaved (native, sandboxed,
# native, ...). Figures are printed, never asserted. Writes $OUT/bench.txt
# (one line per run: FIGURE MODE VALUE) and prints the summary at the end.
#
#   OUT=/tmp/gpu-out REPS=3 tests/gpu/bench.sh
#
# Figures (target from issue #16 in brackets):
#   pair2m, pair2m_audit   cuMemAlloc+cuMemFree of 2 MiB, pairs/s, without
#                          and with --audit-log               [>= 0.85 of native]
#   pair256m               the same of 256 MiB                 [>= 0.95]
#   fill64                 PyTorch expandable_segments filling 24 GiB in
#                          64 MiB tensors, seconds             [>= 0.85 of native speed]
#   torch_init             PyTorch CUDA init, seconds          [<= 1.03 of native time]
#   start64                64 processes started at once, each cuInit +
#                          context + 21 pairs, makespan seconds: 64
#                          sandboxes against 64 native processes [<= 1.5x native time]
#   start16                16 such processes in ONE sandbox ("one") against
#                          16 sandboxes of one process ("sandbox") and 16
#                          native ones                          [one <= 1.2x sandbox]
# Total about 3-4 minutes on an H100 with REPS=3.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
B=${GPUSANDBOX:-build/gpusandbox-static}
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
REPS=${REPS:-3}
SB=("$B" --mem 120g --)
SB_AUDIT=("$B" --mem 120g --audit-log "$OUT/bench-audit.log" --)
TXT="$OUT/bench.txt"
. tests/gpu/bench_common.sh
bench_start || exit 1

for _ in $(seq "$REPS"); do
	for mode in native sandbox audit; do
		case $mode in
		native)  pre=() ;;
		sandbox) pre=("${SB[@]}") ;;
		audit)   pre=("${SB_AUDIT[@]}"); rm -f "$OUT/bench-audit.log" ;;
		esac
		log "pair2m $mode $("${pre[@]}" "$MEMALLOC" 2 3000 | field pairs_per_s)"
		[ "$mode" = audit ] && continue
		log "pair256m $mode $("${pre[@]}" "$MEMALLOC" 256 1000 | field pairs_per_s)"
		log "fill64 $mode $(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True "${pre[@]}" "$PY" tests/gpu/bench_torch.py fill64 | field fill_s)"
		log "torch_init $mode $("${pre[@]}" "$PY" tests/gpu/bench_torch.py init | field init_s)"
		log "start64 $mode $(at_once 64 "${pre[@]}" "$MEMALLOC" 2 1)"
		log "start16 $mode $(at_once 16 "${pre[@]}" "$MEMALLOC" 2 1)"
	done
	# 16 processes in one sandbox: its supervisor serves them all.
	t0=$(now)
	# shellcheck disable=SC2016 # expanded by the inner shell
	"${SB[@]}" bash -c 'for i in $(seq 16); do "$1" 2 1 > /dev/null & done; wait' _ "$MEMALLOC"
	log "start16 one $(echo "$(now) $t0" | awk '{ printf "%.4f", $1 - $2 }')"
done

"$PY" - "$TXT" <<'PYEOF'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    fig, mode, v = (line.split() + ["", "", ""])[:3]
    try:
        x = float(v)
    except ValueError:
        continue  # a failed run ("fail") or no figure: left out, and shown as n/a
    vals.setdefault((fig, mode), []).append(x)
med = {k: statistics.median(v) for k, v in vals.items()}
# (figure, mode, against, higher_is_better, target, what)
rows = [
    ("pair2m", "sandbox", "native", True, ">= 0.85", "2 MiB pair, pairs/s"),
    ("pair2m", "audit", "native", True, ">= 0.85", "2 MiB pair with --audit-log"),
    ("pair256m", "sandbox", "native", True, ">= 0.95", "256 MiB pair, pairs/s"),
    ("fill64", "sandbox", "native", False, ">= 0.85", "expandable fill 24 GiB / 64 MiB (speed)"),
    ("torch_init", "sandbox", "native", None, "<= 1.03", "PyTorch init (time, sandbox/native)"),
    ("start64", "sandbox", "native", None, "<= 1.5", "64 at once (makespan, sandbox/native)"),
    ("start16", "one", "sandbox", None, "<= 1.2", "16 in one sandbox / 16 sandboxes (time)"),
    ("start16", "sandbox", "native", None, "-", "16 sandboxes / 16 native (time)"),
]
print(f"{'figure':44s} {'ratio':>7s}  target   medians (n)")
for fig, mode, ref, higher, target, what in rows:
    a, b = med.get((fig, mode)), med.get((fig, ref))
    if a is None or b is None or a == 0 or b == 0:
        print(f"{what:44s} {'n/a':>7s}  {target}")
        continue
    if higher is True:
        r = a / b          # throughput: fraction of native
    elif higher is False:
        r = b / a          # time: native time / sandboxed time = fraction of native speed
    else:
        r = a / b          # time ratio, lower is better
    print(f"{what:44s} {r:7.3f}  {target:8s} {mode}={a:.4g} {ref}={b:.4g} (n={len(vals[(fig, mode)])})")
PYEOF
