#!/bin/bash
# GPU tier: the last check of a round: tests/gpu/round_check.sh, --gpus on a
# one-GPU host, --trace to a file, and tests/gpu/final_check.sh (--learn and
# its replay, --sm 50).
set -u
cp build/gpusandbox-static /tmp/gs
GPUSANDBOX=/tmp/gs bash tests/gpu/round_check.sh 2>&1 | grep -v "runs as root\|sealed:"
echo "== --gpus 1 on a one-GPU host"; /tmp/gs --user root --gpus 1 -- true; echo "rc=$?"
echo "== --gpus 0 --trace, nvidia-smi -L"; /tmp/gs --user root --gpus 0 --trace --trace-output $OUT/trace.txt -- nvidia-smi -L; echo "rc=$?"; head -3 $OUT/trace.txt; grep -c . $OUT/trace.txt
echo "== --learn then replay (PyTorch training)"; GPUSANDBOX=/tmp/gs bash tests/gpu/final_check.sh 2>&1 | grep -v "runs as root\|sealed:" | head -12
