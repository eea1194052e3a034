#!/bin/bash
# GPU tier: dma-buf and VMM under --mem 2g, PyTorch under channel-group caps,
# and the agent with runc (PyTorch and nvidia-smi in a container). Expects
# runc, jq and their libraries in .gpucarry/ (the device has no apt).
set -u
cp build/gpusandbox-static /tmp/gs
export LD_LIBRARY_PATH=$PWD/.gpucarry/lib PATH=$PWD/.gpucarry:$PATH
echo "== dmabuf and vmm under --mem 2g (charges branch)"
nvcc -O2 -o build/held_after_free tests/gpu/held_after_free.cu -lcuda || exit 1
for mode in dmabuf vmm; do
  /tmp/gs --user root --mem 2g --audit-log $OUT/$mode.jsonl -- build/held_after_free $mode 4 2>&1 | grep -v sealed &
  pid=$!; peak=0; base=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits)
  while kill -0 $pid 2>/dev/null; do u=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits); [ $u -gt $peak ] && peak=$u; sleep 0.1; done
  echo "$mode peak_above_idle_MiB=$((peak-base))"; grep -o '"reason":"dma-buf[^"]*"' $OUT/$mode.jsonl | sort | uniq -c
done
echo "== PyTorch under --mem 4g --channel-groups 8 --active-channel-groups 8"
HOLD_S=0 /tmp/gs --user root --mem 4g --channel-groups 8 --active-channel-groups 8 --audit-log $OUT/cg.jsonl -- python3 tests/gpu/torch_quota.py 2>&1 | grep -v sealed | cut -c1-300
grep '"event":"summary"' $OUT/cg.jsonl | cut -c1-400
grep -c '"verdict":"deny"' $OUT/cg.jsonl
echo "== agent: PyTorch in a runc container, mem 4g"
GS=/tmp/gs RUNTIME=$PWD/.gpucarry/runc timeout 200 tests/gpu/agent_container.sh --mem 4g -- python3 tests/gpu/torch_quota.py 2>&1 | tail -25 | cut -c1-400
echo "== agent: nvidia-smi in a runc container"
GS=/tmp/gs RUNTIME=$PWD/.gpucarry/runc timeout 100 tests/gpu/agent_container.sh --mem 4g -- nvidia-smi --query-gpu=memory.total,memory.used --format=csv,noheader 2>&1 | tail -8 | cut -c1-300
