#!/bin/bash
# SPDX-License-Identifier: MIT
#
# GPU tier (issue #29 item 2, in containers): libnvcuvid decoders and
# nvJPEG hardware handles in an OCI container under `gpusandbox agent`
# (tests/gpu/agent_container.sh), whose later clients on a control file the
# agent makes by injection where the container's filter waits killably
# (`gpusandbox profile --wait-killable`, a runtime that takes it: crun).
# Prints each run's summary lines and the agent's lines about injections.
# Nothing is asserted: the figures go to docs/gpu-results.
#
#   RUNTIME=/usr/bin/crun tests/gpu/agent_video.sh
set -u
cd "$(dirname "$0")/../.." || exit 2
RUNTIME=${RUNTIME:-$(command -v crun)}
[ -n "$RUNTIME" ] || { echo "$0: crun is needed (RUNTIME=...)" >&2; exit 2; }
VIDEO='allow = compute, memory, monitoring, video'
# In the repository: agent_container.sh binds it into the container.
nvcc -O2 -o build/nvdec_sessions tests/gpu/nvdec_sessions.c -lcuda -ldl || exit 1
nvcc -O2 -o build/nvjpg_engines tests/gpu/nvjpg_engines.cu -lnvjpeg || exit 1
run() { # name, then agent_container.sh's options up to and with the command
	local name=$1 out
	shift
	out=$(tests/gpu/agent_container.sh --runtime "$RUNTIME" --wait-killable --mem 8g "$@" 2>&1)
	echo "== $name (rc=$?)"
	grep -E '^(created|recreated|decode|jpeg_bytes|handle|ok|after_destroy)=' <<<"$out" | tr '\n' ' '
	echo
	grep -oE 'second client[^"]*|video engine quota exceeded[^"]*|calls kept during injections=[0-9]+|second clients on this listener are refused' \
		<<<"$out" | sort | uniq -c
}
echo "# $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader) runtime=$RUNTIME"
run nvdec-nocap --policy-line "$VIDEO" -- "$(pwd)/build/nvdec_sessions" 4
run nvdec-cap2 --policy-line "$VIDEO" --policy-line 'video.decoders = 2' -- "$(pwd)/build/nvdec_sessions" 4
run nvjpg-nocap --policy-line "$VIDEO" -- "$(pwd)/build/nvjpg_engines" 3
run nvjpg-cap1 --policy-line "$VIDEO" --policy-line 'video.jpeg = 1' -- "$(pwd)/build/nvjpg_engines" 3
