#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier: issue #16's start-up figures for two builds, interleaved in one
# session (native, A, B, native, ...). Figures are printed, never asserted.
#
#   OLD=build/gpusandbox-static-old NEW=build/gpusandbox-static REPS=3 \
#   OUT=/tmp/gpu-out tests/gpu/start_ab.sh
#
# Per round and build (bench.sh's programs and targets):
#   start16 sandbox  16 processes at once, each in a sandbox of its own
#                    (cuInit + context + 21 pairs: bench_memalloc 2 1)
#   start16 one      the same 16 processes in ONE sandbox  [one <= 1.2x sandbox]
#   torch_init       PyTorch CUDA init, seconds            [<= 1.03 of native]
# and, natively, start16 native and torch_init native. At the end, one
# "one" run of each build with GPUSANDBOX_PROFILE=1 (its stderr: where
# the supervisor's time went, quiesces included) into $OUT/profile-*.txt.
set -u
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
OLD=${OLD:-build/gpusandbox-static-old}
NEW=${NEW:-build/gpusandbox-static}
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$PY" ] || PY=python3
REPS=${REPS:-3}
TXT="$OUT/start_ab.txt"
. tests/gpu/bench_common.sh
bench_start || exit 1
log "# old=$OLD new=$NEW"

# 16 processes in one sandbox of build $1.
one16() {
	local b=$1 t0 rc
	t0=$(now)
	# shellcheck disable=SC2016 # expanded by the inner shell
	"$b" --mem 120g -- bash -c 'for i in $(seq 16); do "$1" 2 1 > /dev/null & done; wait' _ "$MEMALLOC"
	rc=$?
	[ "$rc" = 0 ] || { echo "fail"; return; }
	echo "$(now) $t0" | awk '{ printf "%.4f", $1 - $2 }'
}

for _ in $(seq "$REPS"); do
	log "start16 native $(at_once 16 "$MEMALLOC" 2 1)"
	log "torch_init native $("$PY" tests/gpu/bench_torch.py init | field init_s)"
	for which in old new; do
		b=$OLD; [ "$which" = new ] && b=$NEW
		log "start16 sandbox-$which $(at_once 16 "$b" --mem 120g -- "$MEMALLOC" 2 1)"
		log "start16 one-$which $(one16 "$b")"
		log "torch_init $which $("$b" --mem 120g -- "$PY" tests/gpu/bench_torch.py init | field init_s)"
	done
done
for which in old new; do
	b=$OLD; [ "$which" = new ] && b=$NEW
	GPUSANDBOX_PROFILE=1 one16 "$b" 2> "$OUT/profile-$which.txt" > /dev/null
done

"$PY" - "$TXT" <<'PYEOF'
import statistics, sys
vals = {}
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("#") or len(f) != 3 or f[2] == "fail":
        continue
    vals.setdefault((f[0], f[1]), []).append(float(f[2]))
med = {k: statistics.median(v) for k, v in vals.items()}
for which in ("old", "new"):
    one, sb = med.get(("start16", "one-" + which)), med.get(("start16", "sandbox-" + which))
    ini, nat = med.get(("torch_init", which)), med.get(("torch_init", "native"))
    if one and sb:
        print(f"{which}: start16 one {one:.3f} s / sandboxes {sb:.3f} s = {one / sb:.3f} (target <= 1.2); "
              f"native {med.get(('start16', 'native'), 0):.3f} s")
    if ini and nat:
        print(f"{which}: torch_init {ini:.4f} s / native {nat:.4f} s = {ini / nat:.3f} (target <= 1.03)")
PYEOF
