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
#      (kubernetes-models 4.5.1 from npm), with broken copies that must be
#      refused;
#   3. cel.cjs: the admission policy's CEL evaluated (@bufbuild/cel 0.6.1
#      from npm, cel_eval.cjs) against 22 pods made from
#      deploy/example-pod.yaml, each admitted, refused by the validation it
#      must fail, or not matched; cel_quota.cjs: deploy/quota-policy.yaml's
#      against 14 HAMi-style pods;
#   4. doc_manifests.py and cel_docs.cjs: docs/kubernetes.md's manifests for
#      several pods on one GPU parse, deploy/'s policies admit their pods,
#      and their own CEL (a DRA device selector) evaluates.
# 2 and 3 need node and tests/deploy/node_modules (installed by
# scripts/install-deps.sh where npm exists); without them they are
# skipped, and said so.
# Not checked here: Kubernetes' own CEL environment (type checking, cost
# limits), unknown fields (the schema validator allows them), and the
# manifests on a cluster.
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

node_check() {  # node_check NAME SCRIPT MODULE
	if ! command -v node >/dev/null || [ ! -d "tests/deploy/node_modules/$3" ]; then
		echo "deploy: SKIP $1: node or tests/deploy/node_modules/$3 (npm ci in tests/deploy) missing"
		return
	fi
	[ -s "$tmp/docs.json" ] || return
	(cd tests/deploy && node "$2" "$tmp/docs.json") >"$tmp/$1.out" 2>&1
	grep -E '^(PASS|FAIL) ' "$tmp/$1.out"
	passed=$((passed + $(grep -c '^PASS ' "$tmp/$1.out")))
	failed=$((failed + $(grep -c '^FAIL ' "$tmp/$1.out")))
	grep -q ' passed, 0 failed$' "$tmp/$1.out" || [ "$(grep -c '^FAIL ' "$tmp/$1.out")" -gt 0 ] ||
		{ echo "FAIL $1: $(tail -3 "$tmp/$1.out" | tr '\n' ' ')"; failed=$((failed + 1)); }
}
node_check schema validate.cjs kubernetes-models
node_check cel cel.cjs @bufbuild/cel
node_check cel-quota cel_quota.cjs @bufbuild/cel
# docs/kubernetes.md's manifests for several pods on one GPU: they parse,
# then (with node) deploy/'s policies admit them and their CEL evaluates.
python3 tests/deploy/doc_manifests.py docs/kubernetes.md "$tmp/doc-docs.json" >"$tmp/doc.out" 2>&1
grep -E '^(PASS|FAIL) ' "$tmp/doc.out"
passed=$((passed + $(grep -c '^PASS ' "$tmp/doc.out")))
failed=$((failed + $(grep -c '^FAIL ' "$tmp/doc.out")))
if command -v node >/dev/null && [ -d tests/deploy/node_modules/@bufbuild/cel ] && [ -s "$tmp/docs.json" ]; then
	(cd tests/deploy && node cel_docs.cjs "$tmp/docs.json" "$tmp/doc-docs.json") >"$tmp/cel-docs.out" 2>&1
	grep -E '^(PASS|FAIL) ' "$tmp/cel-docs.out"
	passed=$((passed + $(grep -c '^PASS ' "$tmp/cel-docs.out")))
	failed=$((failed + $(grep -c '^FAIL ' "$tmp/cel-docs.out")))
	grep -q ' passed, 0 failed$' "$tmp/cel-docs.out" || [ "$(grep -c '^FAIL ' "$tmp/cel-docs.out")" -gt 0 ] ||
		{ echo "FAIL cel-docs: $(tail -3 "$tmp/cel-docs.out" | tr '\n' ' ')"; failed=$((failed + 1)); }
else
	echo "deploy: SKIP cel-docs: node or tests/deploy/node_modules/@bufbuild/cel missing"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
