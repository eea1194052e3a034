#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/deploy/run.sh - deploy/'s Kubernetes manifests, offline (no cluster
# is reachable here):
#   1. agree.py: the manifests agree with the binary (socket and profile
#      paths, image tag = version, the init container's script run with the
#      node's paths moved into a temporary folder writes the profiles, the
#      agent's command starts and announces the profiles' trap set), under
#      the fake driver;
#   2. validate.cjs: each document against its kind's OpenAPI schema
#      (kubernetes-models 4.5.1 from npm, installed in tests/deploy/node_modules
#      by scripts/install-deps.sh where npm exists), with broken copies
#      that must be refused. Without node or the module this part is
#      skipped, and said so.
# Not checked here: the admission policy's CEL (no CEL compiler offline),
# unknown fields (the schema validator allows them), and the manifests on a
# cluster.
set -u
cd "$(dirname "$0")/../.." || exit 2
SKIP=125
GS=build/gpusandbox
[ "$(id -u)" = 0 ] || { echo "deploy: SKIP: needs root (the fake driver)"; exit "$SKIP"; }
python3 -c 'import yaml' 2>/dev/null || { echo "deploy: SKIP: python3-yaml is not installed (scripts/install-deps.sh)"; exit "$SKIP"; }
[ -x "$GS" ] || { echo "deploy: $GS is not built"; exit 2; }
tmp=$(mktemp -d /tmp/gs-deploy.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

tests/fakedrv/with-fake-nvidia -- python3 tests/deploy/agree.py deploy "$GS" "$tmp" >"$tmp/agree.out" 2>&1
rc=$?
[ "$rc" = "$SKIP" ] && { echo "deploy: SKIP: $(tail -1 "$tmp/agree.out")"; exit "$SKIP"; }
grep -E '^(PASS|FAIL) ' "$tmp/agree.out"
[ -s "$tmp/docs.json" ] || { echo "FAIL agree: no documents ($(tail -3 "$tmp/agree.out" | tr '\n' ' '))"; }
passed=$(grep -c '^PASS ' "$tmp/agree.out")
failed=$(grep -c '^FAIL ' "$tmp/agree.out")
[ "$rc" = 0 ] || [ "$failed" -gt 0 ] || failed=1

if ! command -v node >/dev/null || [ ! -d tests/deploy/node_modules/kubernetes-models ]; then
	echo "deploy: SKIP schema validation: node or tests/deploy/node_modules (npm ci --prefix tests/deploy) missing"
elif [ -s "$tmp/docs.json" ]; then
	(cd tests/deploy && node validate.cjs "$tmp/docs.json") >"$tmp/schema.out" 2>&1
	grep -E '^(PASS|FAIL) ' "$tmp/schema.out"
	passed=$((passed + $(grep -c '^PASS ' "$tmp/schema.out")))
	failed=$((failed + $(grep -c '^FAIL ' "$tmp/schema.out")))
	grep -q ' passed, 0 failed$' "$tmp/schema.out" || [ "$(grep -c '^FAIL ' "$tmp/schema.out")" -gt 0 ] ||
		{ echo "FAIL schema: $(tail -3 "$tmp/schema.out" | tr '\n' ' ')"; failed=$((failed + 1)); }
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
