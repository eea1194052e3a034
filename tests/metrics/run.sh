#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/metrics/run.sh [NAME...] - --metrics-file (issue #15): the
# Prometheus text exposition, checked strictly by check_prom.py (which is
# first shown to reject each kind of malformed file), and its values
# against the fake driver's own account (its stats file), read while the
# workload runs and after it ends.
#
# Builds nothing: run `make` first. Output: PASS/FAIL per case, then
# "N passed, M failed". Environment: GPUSANDBOX, WITH_FAKE, GS_METRICS_KEEP.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
FAKE_VIDMEM=16g
CHECK=tests/metrics/check_prom.py
HOLDER=build/tests/agent/holder
CHUNK=$((256 << 20))

. tests/lib/harness.sh
harness_tmpdir "${GS_METRICS_KEEP:-}" gs-metrics

# name | what it shows
TESTS=(
	"checker|check_prom.py rejects each malformed exposition and accepts a good one"
	"live|refreshed while the workload runs; memory against the fake's account"
	"end|at exit: peak, refusals by reason and decisions against the program's and the fake's counts"
	"channels|channel counts and quota against the fake's"
	"bad-path|a metrics file that cannot be written is an error before anything runs"
	"share|--sm 50: the target, and the achieved share the audit summary gives"
	"node-exporter|Debian's prometheus-node-exporter serves the file of a run refused on two GPUs"
)

# ---- the checker can fail ----------------------------------------------------------
# name | file text (printf format) | phrase of the rejection
BAD=(
	'no-type|# HELP gpusandbox_x_bytes x\ngpusandbox_x_bytes 1\n|before its HELP and TYPE'
	'no-newline|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes 1|newline'
	'bad-escape|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes{a="\\t"} 1\n|bad escape'
	'open-quote|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes{a="b} 1\n|not closed'
	'twice|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes{a="b"} 1\ngpusandbox_x_bytes{a="b"} 2\n|twice'
	'counter-name|# HELP gpusandbox_x x\n# TYPE gpusandbox_x counter\ngpusandbox_x 1\n|does not end in _total'
	'gauge-total|# HELP gpusandbox_x_total x\n# TYPE gpusandbox_x_total gauge\ngpusandbox_x_total 1\n|ends in _total'
	'negative|# HELP gpusandbox_x_total x\n# TYPE gpusandbox_x_total counter\ngpusandbox_x_total -1\n|counter'
	'split|# HELP gpusandbox_a_bytes a\n# TYPE gpusandbox_a_bytes gauge\n# HELP gpusandbox_b_bytes b\n# TYPE gpusandbox_b_bytes gauge\ngpusandbox_a_bytes 1\ngpusandbox_b_bytes 1\ngpusandbox_a_bytes{x="y"} 1\n|not together'
	'prefix|# HELP node_x_bytes x\n# TYPE node_x_bytes gauge\nnode_x_bytes 1\n|prefix'
	'bad-type|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes number\n|bad type'
	'value|# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes one\n|bad value'
)
if selected checker "$@"; then
	why=""
	for b in "${BAD[@]}"; do
		IFS='|' read -r name text phrase <<<"$b"
		# shellcheck disable=SC2059 # the table's text is the format
		printf "$text" >"$tmp/bad-$name.prom"
		out=$(python3 "$CHECK" "$tmp/bad-$name.prom")
		[ $? = 1 ] && grep -qF -- "$phrase" <<<"$out" || why="$why $name($out)"
	done
	printf '# HELP gpusandbox_x_bytes x\n# TYPE gpusandbox_x_bytes gauge\ngpusandbox_x_bytes{a="q\\"\\\\\\n"} 1\n' \
		>"$tmp/good.prom"
	python3 "$CHECK" "$tmp/good.prom" >/dev/null || why="$why good-rejected"
	[ -z "$why" ] && pass checker || fail checker "$why"
fi

harness_probe_or_skip "$@"

# ---- a run under the fake: holder takes 2 chunks of 256 MiB, waits, then
# asks 6 more under --mem 1g (2 fit, 4 are refused) -----------------------------------
run_holder() {
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
		"$1" --user root --mem 1g --audit-log "$2/audit.jsonl" --metrics-file "$2/m.prom" -- \
			"$3" 2 "$2/go" 6 >"$2/holder.out" 2>"$2/gs.err" &
		gs=$!
		i=0
		while [ ! -e "$2/go.ready" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i + 1)); done
		cp "$GS_FAKE_STATS" "$2/stats-mid"
		# The file is rewritten every second: wait for one that shows the
		# two chunks (up to 5 s), while the workload still holds them.
		i=0
		until grep -q "^gpusandbox_memory_used_bytes{.*} $4\$" "$2/m.prom" 2>/dev/null || [ $i -ge 250 ]; do
			sleep 0.02; i=$((i + 1))
		done
		cp "$2/m.prom" "$2/m-mid.prom"
		cp "$GS_FAKE_STATS" "$2/stats-mid2"
		touch "$2/go"
		wait $gs
		echo "rc=$?" >"$2/rc"
		cp "$GS_FAKE_STATS" "$2/stats-end"' sh "$GPUSANDBOX" "$tmp" "$HOLDER" "$((2 * CHUNK))"
}
if selected live "$@" || selected end "$@"; then
	run_holder
fi

# value NAME LABELS-REGEX FILE: the sample's value (first match).
value() { sed -n "s/^$1{$2} \([0-9.e+]*\)\$/\1/p" "$3" | head -1; }

if selected live "$@"; then
	used=$(value gpusandbox_memory_used_bytes 'sandbox="[0-9a-f]*",gpu="0"' "$tmp/m-mid.prom")
	fake=$(awk '$1 == "gpu0.vidmem_used" { print $2 }' "$tmp/stats-mid2")
	chk=$(python3 "$CHECK" "$tmp/m-mid.prom")
	if [ "$used" = $((2 * CHUNK)) ] && [ "$fake" = "$used" ] && [[ $chk == ok* ]]; then
		pass live
	else
		fail live "used=$used fake=$fake check: $chk $(tail -c 200 "$tmp/gs.err")"
	fi
fi

if selected end "$@"; then
	m=$tmp/m.prom
	phase2=$(grep '^then ' "$tmp/holder.out")
	refused=$(sed -n 's/.* refused=\([0-9]*\) .*/\1/p' <<<"$phase2")
	fpeak=$(awk '$1 == "gpu0.vidmem_peak" { print $2 }' "$tmp/stats-end")
	fused=$(awk '$1 == "gpu0.vidmem_used" { print $2 }' "$tmp/stats-end")
	sid=$(sed -n '1s/.*"sandbox":"\([0-9a-f]*\)".*/\1/p' "$tmp/audit.jsonl")
	peak=$(value gpusandbox_memory_peak_bytes "sandbox=\"$sid\",gpu=\"0\"" "$m")
	used=$(value gpusandbox_memory_used_bytes "sandbox=\"$sid\",gpu=\"0\"" "$m")
	quota=$(value gpusandbox_memory_quota_bytes "sandbox=\"$sid\",gpu=\"0\"" "$m")
	nref=$(value gpusandbox_refusals_total "sandbox=\"$sid\",gpu=\"0\",outcome=\"quota\",reason=\"video memory quota exceeded\"" "$m")
	denied=$(value gpusandbox_decisions_total "sandbox=\"$sid\",verdict=\"denied\"" "$m")
	supp=$(grep -o '"event":"suppressed".*"count":[0-9]*' "$tmp/audit.jsonl" | sed 's/.*"count"://' | awk '{ n += $1 } END { print n + 0 }')
	msupp=$(value gpusandbox_audit_records_suppressed_total "sandbox=\"$sid\"" "$m")
	chk=$(python3 "$CHECK" "$m")
	if [ "$(cat "$tmp/rc")" = rc=0 ] && [ -n "$refused" ] && [ "$refused" -gt 0 ] &&
		[ "$nref" = "$refused" ] && [ "$denied" = "$refused" ] && [ "$peak" = "$fpeak" ] &&
		[ "$peak" = $((4 * CHUNK)) ] && [ "$used" = "$fused" ] && [ "$quota" = $((4 * CHUNK)) ] &&
		[ "${msupp:-x}" = "${supp:-0}" ] && [[ $chk == ok* ]] && [ ! -e "$m.tmp" ]; then
		pass end
	else
		fail end "holder: '$phase2' refusals=$nref denied=$denied peak=$peak/$fpeak used=$used/$fused" \
			"quota=$quota suppressed=$msupp/$supp check: $chk $(tail -c 200 "$tmp/gs.err")"
	fi
fi

# ---- channels: the adversarial program asks for channels past --channels 2 -----------
if selected channels "$@"; then
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" -- sh -c '
		"$1" --user root --channels 2 --metrics-file "$2/c.prom" -- "$3" >"$2/ch.out" 2>"$2/ch.err"
		cp "$GS_FAKE_STATS" "$2/ch-stats"' sh "$GPUSANDBOX" "$tmp" build/tests/adv/channels
	cpeak=$(value gpusandbox_channels_peak 'sandbox="[0-9a-f]*"' "$tmp/c.prom")
	cquota=$(value gpusandbox_channels_quota 'sandbox="[0-9a-f]*"' "$tmp/c.prom")
	fpeak=$(awk '$1 == "gpu0.channels_peak" { print $2 }' "$tmp/ch-stats")
	nref=$(value gpusandbox_refusals_total 'sandbox="[0-9a-f]*",outcome="quota",reason="channel quota exceeded"' \
		"$tmp/c.prom")
	chk=$(python3 "$CHECK" "$tmp/c.prom")
	if [ "$cpeak" = 2 ] && [ "$fpeak" = 2 ] && [ "$cquota" = 2 ] && [ -n "$nref" ] && [ "$nref" -gt 0 ] &&
		[[ $chk == ok* ]]; then
		pass channels
	else
		fail channels "peak=$cpeak fake=$fpeak quota=$cquota refusals=$nref check: $chk"
	fi
fi

if selected bad-path "$@"; then
	"$GPUSANDBOX" --metrics-file "$tmp/no/such/dir/m.prom" -- sh -c "touch $tmp/ran" \
		>/dev/null 2>"$tmp/bad.err"
	rc=$?
	[ "$rc" = 125 ] && [ ! -e "$tmp/ran" ] && grep -q -- "--metrics-file" "$tmp/bad.err" &&
		pass bad-path || fail bad-path "exit $rc: $(cat "$tmp/bad.err")"
fi

# ---- the compute share: sm_workload under --sm 50 (tests/sm's program) -------------
if selected share "$@"; then
	"$WITH_FAKE" --vidmem "$FAKE_VIDMEM" --busy-lag-ms 1 -- "$GPUSANDBOX" --user root --sm 50 \
		--audit-log "$tmp/sm.jsonl" --metrics-file "$tmp/sm.prom" -- build/tests/sm/sm_workload steady 3500 2500 \
		>"$tmp/sm.out" 2>"$tmp/sm.err"
	rc=$?
	target=$(value gpusandbox_compute_share_target_ratio 'sandbox="[0-9a-f]*"' "$tmp/sm.prom")
	ach=$(value gpusandbox_compute_share_achieved_ratio 'sandbox="[0-9a-f]*",gpu="0"' "$tmp/sm.prom")
	want=$(grep '"event":"summary"' "$tmp/sm.jsonl" | grep -oE '"achieved_share":[0-9.]+' | cut -d: -f2)
	chk=$(python3 "$CHECK" "$tmp/sm.prom")
	# The achieved share is absent from both until a busy window closed
	# (a loaded machine may give none); where there is one, they agree.
	if [ "$rc" = 0 ] && [ "$target" = 0.5000 ] && [ "$ach" = "$want" ] &&
		grep -q '"event":"summary"' "$tmp/sm.jsonl" && [[ $chk == ok* ]]; then
		pass share
	else
		fail share "exit $rc target=$target achieved=$ach summary=$want check: $chk $(tail -c 200 "$tmp/sm.err")"
	fi
fi

# ---- node_exporter: the file as its documented consumer reads it ----------------------
# A run on two GPUs refused for one reason on each (tests/adv's per_gpu on GPU
# 1, named by its UUID, static_raw on GPU 0, --mem 1g), its file in a directory Debian's
# prometheus-node-exporter's textfile collector reads (the tier installs
# the package); scrape.py scrapes it on a 127.0.0.1 port (bounded by
# SCRAPE_DEADLINE_S) and checks what it exports against the file. The
# agent's gpusandbox_sandbox_info with a pod's labels (containers started
# by runc, crun, podman and containerd with a pod's annotations) through
# the same node_exporter: tests/agent/walk.sh.
SCRAPE_DEADLINE_S=30
GPU1_UUID=GPU-00000000-0000-0000-0000-000000000001
node_exporter_case() {
	local d=$tmp/ne port ne chk
	mkdir -p "$d/textfile"
	scripts/install-test-pkgs.sh prometheus-node-exporter >"$d/install.out" 2>&1 ||
		{ echo "SKIP node-exporter: prometheus-node-exporter could not be installed"; return; }
	# GPU 1 named by the UUID the fake gives it: its samples carry it.
	"$WITH_FAKE" --gpus 2 --vidmem "$FAKE_VIDMEM" -- "$GPUSANDBOX" --user root --mem 1g --gpus "0,$GPU1_UUID" \
		--metrics-file "$d/textfile/gpusandbox.prom" -- \
		sh -c '"$1" >/dev/null; "$2" >/dev/null' sh build/tests/adv/per_gpu build/tests/adv/static_raw \
		>"$d/gs.out" 2>"$d/gs.err"
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	prometheus-node-exporter --collector.disable-defaults --collector.textfile \
		--collector.textfile.directory="$d/textfile" --web.listen-address="127.0.0.1:$port" \
		>"$d/ne.log" 2>&1 &
	ne=$!
	chk=$(python3 tests/metrics/scrape.py "http://127.0.0.1:$port/metrics" "$SCRAPE_DEADLINE_S" \
		"$d/textfile/gpusandbox.prom" "$d/scrape.txt" 2>&1)
	kill "$ne" 2>/dev/null
	wait "$ne" 2>/dev/null
	if [[ $chk == ok* ]] && ! grep -q "collected before" "$d/ne.log" &&
		grep -q "^gpusandbox_refusals_total{gpu=\"1\",outcome=\"quota\",.*uuid=\"$GPU1_UUID\"} [1-9]" "$d/scrape.txt"; then
		pass node-exporter
	else
		fail node-exporter "$(head -5 <<<"$chk") $(grep -m1 "collected before" "$d/ne.log") $(grep refusals_total "$d/scrape.txt")"
	fi
}
selected node-exporter "$@" && node_exporter_case

harness_summary
