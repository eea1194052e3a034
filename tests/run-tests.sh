#!/bin/bash
# SPDX-License-Identifier: MIT
# Runs the test tiers that need no GPU and adds up their "N passed, M failed"
# lines. A tier that cannot run here (no root or /dev/fuse) is reported as
# skipped with its reason; a tier that fails to report counts as a failure.
set -u
cd "$(dirname "$0")/.." || exit 2
passed=0 failed=0 skipped=0

run_tier() {
	local name=$1; shift
	local out rc line p f
	echo "=== $name: $*"
	out=$("$@" 2>&1); rc=$?
	printf '%s\n' "$out" | grep -vE '^PASS ' | tail -n 40
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ "$rc" -eq 125 ]; then
		echo "--- $name: SKIPPED (cannot run here)"
		skipped=$((skipped + 1))
		return
	fi
	if [ -z "$line" ]; then
		echo "--- $name: no summary line (exit $rc)"
		failed=$((failed + 1))
		return
	fi
	p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "--- $name: exit $rc with no failure counted"
		failed=$((failed + 1))
	fi
	echo "--- $name: $line"
}

run_tier layers scripts/check-layers.sh
run_tier layers-checker tests/layers/run.sh
run_tier gpu-results-refs python3 scripts/check-gpu-results-refs.py
run_tier unit-rm-tables build/tests/unit/test_rm_tables
run_tier unit-core build/tests/unit/test_core
run_tier unit-policy build/tests/unit/test_policy
run_tier unit-learn build/tests/unit/test_learn
run_tier unit-listener build/tests/unit/test_listener
run_tier unit-recv-probe build/tests/unit/test_recv_probe
run_tier unit-verdict build/tests/unit/test_verdict
run_tier unit-engine-sessions build/tests/unit/test_engine_sessions
run_tier unit-taskset build/tests/unit/test_taskset
run_tier unit-quiesce build/tests/unit/test_quiesce
run_tier unit-host-pids build/tests/unit/test_host_pids
run_tier unit-sharers build/tests/unit/test_sharers
run_tier unit-dupcache build/tests/unit/test_dupcache
run_tier unit-inject build/tests/unit/test_inject
run_tier unit-mm-keep build/tests/unit/test_mm_keep
run_tier unit-uvm-maps build/tests/unit/test_uvm_maps
run_tier unit-uvm-channels build/tests/unit/test_uvm_channels
# Under the fake driver (its GPU-node check); the baseline makes the same
# device allocation in the shared table and must see it granted (a test
# switch: test_private_table is linked with the test build's objects,
# UNIT_SWITCHED in the Makefile).
run_tier unit-private-table tests/fakedrv/with-fake-nvidia --gpus 2 --gpu-node-check -- \
	build/tests/unit/test_private_table
run_tier unit-private-table-baseline env GPUSANDBOX_TEST_SHARED_TABLE_DEVICE_ALLOC=1 \
	tests/fakedrv/with-fake-nvidia --gpus 2 --gpu-node-check -- build/tests/unit/test_private_table
run_tier unit-audit build/tests/unit/test_audit
run_tier unit-audit-guard build/tests/unit/test_audit_guard
run_tier unit-metrics build/tests/unit/test_metrics
run_tier unit-review build/tests/unit/test_review
run_tier unit-profile build/tests/unit/test_profile
run_tier unit-agent-conn build/tests/unit/test_agent_conn
run_tier unit-agent-state build/tests/unit/test_agent_state
run_tier unit-tid-reuse build/tests/unit/test_tid_reuse
run_tier unit-plan build/tests/unit/test_plan
run_tier unit-idle-rule build/tests/unit/test_idle_rule
run_tier unit-test-clock build/tests/unit/test_test_clock
run_tier cli tests/cli/run.sh
run_tier cli-options tests/cli/options.sh
run_tier install tests/cli/install.sh
run_tier cli-driver tests/cli/driver.sh
run_tier fake-driver tests/fakedrv/run-selftest.sh --no-build
run_tier adversarial tests/adv/run.sh
run_tier learn tests/learn/run.sh
run_tier p2p-register tests/p2p/run.sh
run_tier audit-chain tests/audit/run.sh
run_tier metrics tests/metrics/run.sh
run_tier fuzz-replay build/tests/fuzz/policy_replay tests/fuzz/corpus/policy/* policy/*.policy
run_tier fuzz-decode build/tests/fuzz/decode_replay tests/fuzz/corpus/decode/*
run_tier fuzz-verdict build/tests/fuzz/verdict_replay tests/fuzz/corpus/verdict/*
run_tier trace-golden tests/trace/run.sh
run_tier systrace-summary python3 tests/gpu/systrace_selftest.py
run_tier fuzz-ledger build/tests/fuzz/ledger_replay tests/fuzz/corpus/ledger/*
run_tier fuzz-audit-verify build/tests/fuzz/audit_verify_replay tests/fuzz/corpus/audit/*
run_tier audit-review tests/audit-review/run.sh
run_tier fuzz-audit-review build/tests/fuzz/audit_review_replay tests/fuzz/corpus/review/* tests/fuzz/corpus/audit/*
run_tier fuzz-plan build/tests/fuzz/plan_replay tests/fuzz/corpus/plan/*
[ -x tests/replay/run.sh ] && run_tier replay tests/replay/run.sh
run_tier compute-share tests/sm/run.sh
run_tier compute-share-multi tests/sm/multi.sh
run_tier compute-share-escape tests/sm/escape.sh
run_tier agent tests/agent/run.sh
run_tier agent-start tests/agent/start.sh
run_tier agent-sm tests/agent/sm.sh
run_tier agent-operator tests/agent/operator.sh
run_tier agent-walk tests/agent/walk.sh
run_tier deploy tests/deploy/run.sh
run_tier deploy-image tests/deploy/image.sh
# The size-dependent adversarial and --sm cases once per other driver branch,
# on the fake playing it (tests/versions/run.sh says which and why).
run_tier driver-branches tests/versions/run.sh

echo
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
