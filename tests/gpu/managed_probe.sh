#!/bin/bash
# Research probe for the managed-memory policy: host UVM settings, what
# managed and pageable (HMM) memory take on the GPU, and the mmap calls
# libcuda and PyTorch make (through tests/gpu/mmap_log.c). Writes to $OUT.
set -u
OUT=${OUT:-/tmp/managed-probe}
mkdir -p "$OUT"
cd "$(dirname "$0")/../.."
{
	date -u; uname -r; cat /proc/driver/nvidia/version
	for p in uvm_disable_hmm uvm_enable_va_space_mm uvm_ats_mode uvm_perf_pma_batch_nonpinned_order; do
		printf '%s=' "$p"; cat /sys/module/nvidia_uvm/parameters/$p 2>&1
	done
	nvidia-smi -q | grep -i -E "addressing|product name|driver version"
} > "$OUT/host.txt" 2>&1
nvcc -O2 -o /tmp/uvm_probe tests/gpu/uvm_probe.cu >> "$OUT/host.txt" 2>&1
gcc -O2 -shared -fPIC -o /tmp/mmap_log.so tests/gpu/mmap_log.c -ldl >> "$OUT/host.txt" 2>&1
for m in plain managed hmm; do
	echo "== $m" >> "$OUT/probe.txt"
	MMAP_LOG=$OUT/mmap-$m.log LD_PRELOAD=/tmp/mmap_log.so timeout 120 /tmp/uvm_probe $m 4096 >> "$OUT/probe.txt" 2>&1
	echo "rc $?" >> "$OUT/probe.txt"
done
MMAP_LOG=$OUT/mmap-torch.log LD_PRELOAD=/tmp/mmap_log.so timeout 300 python3 tests/gpu/torch_train.py > "$OUT/torch.txt" 2>&1
echo "rc $?" >> "$OUT/torch.txt"
python3 - "$OUT" > "$OUT/summary.txt" 2>&1 <<'PY'
import glob, re, sys
for name in sorted(glob.glob(sys.argv[1] + "/mmap-*.log")):
    rows = [dict(kv.split("=", 1) for kv in l.split()[1:]) for l in open(name)]
    nv = [r for r in rows if r["file"].startswith("/dev/nvidia")]
    uvm = [r for r in rows if r["file"].startswith("/dev/nvidia-uvm")]
    cand = [r for r in rows if not int(r["flags"], 16) & 0x20 and int(r["flags"], 16) & 0xf in (1, 3)
            and int(r["prot"], 16) & 2 and int(r["off"], 16) != 0]
    print(f"== {name}: {len(rows)} mmaps, {len(nv)} on /dev/nvidia*, {len(uvm)} on nvidia-uvm, "
          f"{len(cand)} shared+writable+file+offset!=0")
    for r in cand[:20]:
        print("  cand", " ".join(f"{k}={v}" for k, v in r.items()))
    for r in uvm[:10]:
        print("  uvm ", " ".join(f"{k}={v}" for k, v in r.items()))
PY
cat "$OUT/host.txt" "$OUT/probe.txt" "$OUT/summary.txt"
