#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/audit-review/run.sh [NAME...] - `gpusandbox audit VIEW` as a user
# runs it (issue #15), on the logs of real GPU runs in logs/ (PROVENANCE.md)
# and on synthetic ones made from them here: several sandboxes in one
# file, a log cut short, an edited one, and hostile lines.
#
# - golden: each view in each format against golden/ (refresh with
#   GS_REVIEW_UPDATE=1, then read the diff);
# - filters: each filter's count against an independent count by
#   python3's json module over the same files;
# - exit statuses: 0 found, 1 nothing matched, 2 usage, 3 unreadable,
#   4 --fail-on deny with a refusal, 5 lines skipped;
# - schema 3 (the audit level's usage records, call stacks of refusals);
# - this build's own log: retry_loop (tests/adv) twice on the fake driver
#   into one log; denials must count what the program saw refused;
# - hostile input: no crash, FILE:LINE for each bad line, no terminal
#   escape in the output, CSV cells that a spreadsheet will not run;
# - crafted logs (issue #32, made by craft.py): bidi text escaped, every
#   sandbox named by plot, figures near 2^64 without wrap or NaN, extreme
#   --since/--until, one line limit and one verdict for verify and the
#   views; each judged by the output's bytes or the exit status, and each
#   shown failing on its input first (the baseline);
# - plot: the SVG rendered to PNG by headless Chromium and checked by
#   png_check.py for the quota line and the refusal marks, and the same
#   check shown failing on the SVG without each of them.
#
# Builds nothing: run `make` first. Output: PASS/FAIL per case, then
# "N passed, M failed". Environment: GPUSANDBOX, WITH_FAKE, GS_REVIEW_KEEP,
# GS_REVIEW_UPDATE, CHROMIUM.
set -u

cd "$(dirname "$0")/../.." || exit 2

GPUSANDBOX=${GPUSANDBOX:-build/gpusandbox}
WITH_FAKE=${WITH_FAKE:-tests/fakedrv/with-fake-nvidia}
HERE=tests/audit-review
LOGS=$HERE/logs
GOLDEN=$HERE/golden
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || echo chromium)}
CHROMIUM_TIMEOUT=60
PANEL_W=800
PANEL_H=300

. tests/lib/harness.sh
harness_tmpdir "${GS_REVIEW_KEEP:-}" gs-review
passed=0 failed=0
want=("$@")

RETRY=$LOGS/h100-retry.jsonl
ALL=("$LOGS"/*.jsonl)

# review ARGS...: runs `gpusandbox audit ARGS`, output in $out and $err,
# status in $rc.
review() {
	"$GPUSANDBOX" audit "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

# expect NAME STATUS: the last review's status.
expect_rc() {
	if [ "$rc" = "$2" ]; then pass "$1"; else fail "$1" "exit $rc, expected $2; stderr: ${err:0:300}"; fi
}

# count_records FILTER-PY LOG...: records for which the python expression
# (over the record r) holds, counted by python3's json module.
count_records() {
	local expr=$1
	shift
	python3 - "$expr" "$@" <<'EOF'
import json, sys
from datetime import datetime
expr, n = sys.argv[1], 0
def t(r):
    return datetime.strptime(r['time'], '%Y-%m-%dT%H:%M:%S.%fZ').timestamp() if 'time' in r else None
for path in sys.argv[2:]:
    for line in open(path, encoding='utf-8'):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if isinstance(r, dict) and eval(expr, {'t': t}, {'r': r}):
            n += 1
print(n)
EOF
}

# rows: data rows of the CSV in $out.
rows() { printf '%s\n' "$out" | tail -n +2 | grep -c .; }

golden_case() { # NAME EXT ARGS...
	local name=$1 ext=$2 file
	shift 2
	file=$GOLDEN/$name.$ext
	selected golden "${want[@]}" || return 0
	review "$@"
	if [ "$rc" != 0 ] && [ "$rc" != 1 ]; then
		fail "golden:$name.$ext" "exit $rc: ${err:0:300}"
	elif [ -n "${GS_REVIEW_UPDATE:-}" ]; then
		cp "$tmp/out" "$file" && pass "golden:$name.$ext (updated)"
	elif cmp -s "$tmp/out" "$file"; then
		pass "golden:$name.$ext"
	else
		fail "golden:$name.$ext" "differs: $(diff "$file" "$tmp/out" | head -n 8)"
	fi
}

# ---- golden outputs --------------------------------------------------------------
for fmt in text json csv; do
	ext=$fmt
	[ "$fmt" = text ] && ext=txt
	golden_case summary "$ext" summary --format "$fmt" "${ALL[@]}"
	golden_case denials "$ext" denials --format "$fmt" "${ALL[@]}"
	golden_case timeline-retry "$ext" timeline --format "$fmt" "$RETRY"
	golden_case usage "$ext" usage --format "$fmt" "$RETRY" "$LOGS/h200-torch-4g.jsonl"
done
golden_case plot-retry svg plot "$RETRY"

# ---- filters, against python3's count ----------------------------------------------
filter_case() { # NAME PY-EXPR FILTER-ARGS... -- LOG...
	local name=$1 expr=$2 args=() expect got
	shift 2
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	selected filters "${want[@]}" || return 0
	expect=$(count_records "$expr" "$@")
	review timeline --format csv "${args[@]}" "$@"
	got=$(rows)
	if [ "$expect" -gt 0 ] && [ "$got" = "$expect" ] && [ "$rc" = 0 ]; then
		pass "filter:$name ($got records)"
	else
		fail "filter:$name" "$got rows (exit $rc), python3 counts $expect"
	fi
}
retry_sandbox=$(head -n 1 "$RETRY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sandbox"])')
t10=$(sed -n 11p "$RETRY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
t40=$(sed -n 41p "$RETRY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')
e10=$(python3 -c "from datetime import datetime as d; print('%.6f' % d.strptime('$t10', '%Y-%m-%dT%H:%M:%S.%fZ').timestamp())" 2>/dev/null)
TZ=UTC e10=$(TZ=UTC python3 -c "import calendar,datetime as d; x=d.datetime.strptime('$t10','%Y-%m-%dT%H:%M:%S.%fZ'); print('%d.%06d' % (calendar.timegm(x.timetuple()), x.microsecond))")
start=$(head -n 1 "$RETRY" | python3 -c 'import json,sys; print(json.load(sys.stdin)["time"])')

filter_case pid "r.get('pid') == 448" --pid 448 -- "$RETRY"
# A suppressed record names neither the process nor the GPU: the reader
# takes them from the record it repeats (one, in h100-retry.jsonl).
filter_case comm "r.get('comm') == 'python3' or r['event'] == 'suppressed'" --comm python3 -- "${ALL[@]}"
filter_case gpu1 "r.get('device', r.get('gpu')) == 1" --gpu 1 -- "${ALL[@]}"
filter_case gpu0 "r.get('device', r.get('gpu')) == 0 or r['event'] == 'suppressed'" --gpu 0 -- "${ALL[@]}"
filter_case verdict-deny "r.get('verdict') == 'deny'" --verdict deny -- "${ALL[@]}"
filter_case verdict-two "r.get('verdict') in ('deny', 'refuse')" --verdict deny --verdict refuse -- "${ALL[@]}"
# Schema 1 wrote no outcome: a deny with a usage is a quota's.
filter_case outcome-quota "r.get('outcome', 'quota' if r.get('verdict') == 'deny' and 'usage_before' in r else '') == 'quota'" --verdict quota -- "$RETRY" "$LOGS/h100-dmabuf.jsonl"
filter_case sandbox-prefix "r.get('sandbox') == '$retry_sandbox'" --sandbox "${retry_sandbox:0:6}" -- "${ALL[@]}"
filter_case since-until-iso "'$t10' <= r['time'] <= '$t40'" --since "$t10" --until "$t40" -- "$RETRY"
filter_case since-epoch "r['time'] >= '$t10'" --since "@$e10" -- "$RETRY"
filter_case since-blank-iso "r['time'] >= '$t10'" --since "${t10/T/ }" -- "$RETRY"
filter_case since-start "t(r) >= t({'time': '$start'}) + 5.5" --since +5.5s -- "$RETRY"
filter_case until-now "True" --until now -- "${ALL[@]}"
filter_case pid-and-verdict "r.get('pid') == 448 and r.get('verdict') == 'deny'" --pid 448 --verdict deny -- "$RETRY"

if selected filters "${want[@]}"; then
	review timeline --since -10s "${ALL[@]}"   # every log is older than ten seconds
	expect_rc "filter:relative-to-now-matches-nothing" 1
	review summary --sandbox "$retry_sandbox" "${ALL[@]}"
	if [ "$(printf '%s\n' "$out" | grep -c '^sandbox ')" = 1 ] && [[ $out == *"$retry_sandbox"* ]]; then
		pass "filter:summary-one-sandbox"
	else
		fail "filter:summary-one-sandbox" "$out"
	fi
fi

# ---- exit statuses --------------------------------------------------------------
if selected exit "${want[@]}"; then
	review summary "$RETRY";                         expect_rc exit:found 0
	review timeline --pid 2147483647 "$RETRY";       expect_rc exit:nothing-matched 1
	[[ $err == *"nothing matched"* ]] && pass exit:nothing-says-so || fail exit:nothing-says-so "$err"
	review summary --bogus "$RETRY";                 expect_rc exit:bad-option 2
	review summary --since yesterdayish "$RETRY";    expect_rc exit:bad-time 2
	review summary --format xml "$RETRY";            expect_rc exit:bad-format 2
	review summary --gpu 64 "$RETRY";                expect_rc exit:bad-gpu 2
	review nosuchview "$RETRY";                      expect_rc exit:unknown-view 2
	review summary;                                  expect_rc exit:no-file 2
	review plot --format json "$RETRY";              expect_rc exit:plot-is-svg 2
	review summary "$tmp/missing.jsonl" "$RETRY";    expect_rc exit:unreadable 3
	[[ $out == *"$retry_sandbox"* ]] && pass exit:unreadable-reads-the-rest || fail exit:unreadable-reads-the-rest "$out"
	review denials --fail-on deny "$RETRY";          expect_rc exit:fail-on-deny 4
	review denials --fail-on deny "$LOGS/h100-cupy.jsonl"
	expect_rc exit:fail-on-deny-none-refused 1       # no refusal: denials has nothing either
	review summary --fail-on deny "$LOGS/h100-cupy.jsonl"; expect_rc exit:fail-on-deny-clean 0
	review summary --fail-on deny --verdict allow "$RETRY"; expect_rc exit:fail-on-deny-filtered 0
	review verify "$RETRY";                          expect_rc exit:verify-dispatched 0
	review verify "$LOGS/h200-jax.jsonl";            expect_rc exit:verify-schema1-unchained 1
	review --help
	if [ "$rc" = 0 ] && for v in summary denials timeline usage plot verify; do
		[[ $out == *"  $v "* ]] || exit 1; done; then
		pass exit:help-lists-views
	else
		fail exit:help-lists-views "$out"
	fi
fi

# ---- synthetic logs: many sandboxes, cut, edited, hostile ----------------------------
if selected synthetic "${want[@]}"; then
	cat "$LOGS/h100-cupy.jsonl" "$RETRY" >"$tmp/two.jsonl"
	review summary "$tmp/two.jsonl"
	if [ "$(printf '%s\n' "$out" | grep -c 'chain     intact, sealed')" = 2 ]; then
		pass synthetic:two-sandboxes-one-file
	else
		fail synthetic:two-sandboxes-one-file "$out"
	fi

	size=$(stat -c %s "$RETRY")
	head -c $((size - 100)) "$RETRY" >"$tmp/cut.jsonl"
	review summary "$tmp/cut.jsonl"
	if [ "$rc" = 5 ] && [[ $err == *"cut.jsonl:55: the last line has no end"* ]] &&
	   [[ $out == *"intact but not sealed"* ]]; then
		pass synthetic:cut-short
	else
		fail synthetic:cut-short "rc $rc; $err; $out"
	fi

	# An edited size in record 7: its hash no longer matches.
	python3 - "$RETRY" "$tmp/edited.jsonl" <<'EOF'
import sys
lines = open(sys.argv[1], 'rb').read().split(b'\n')
assert b'"size":2097152' in lines[7]
lines[7] = lines[7].replace(b'"size":2097152', b'"size":1048576', 1)
open(sys.argv[2], 'wb').write(b'\n'.join(lines))
EOF
	review summary "$tmp/edited.jsonl"
	if ! cmp -s "$RETRY" "$tmp/edited.jsonl" && [[ $out == *"chain     BROKEN: 1 record"* ]]; then
		pass synthetic:edited-record
	else
		fail synthetic:edited-record "$out"
	fi

	python3 - "$tmp/hostile.jsonl" "$RETRY" <<'EOF'
import json, sys
out, src = open(sys.argv[1], 'wb'), open(sys.argv[2], 'rb').read().splitlines()
r = json.loads(src[50])           # a deny record
def put(rec):
    out.write(json.dumps(rec, ensure_ascii=False).encode() + b'\n')
r['comm'] = '\x1b[31mevil\x1b]0;title\x07\u202edesrever'
put(r)
r2 = dict(r, comm='=cmd|calc', sandbox='hostile2', reason='+1+1')
put(r2)
put(dict(r, pid='448', device=99999, seq=-1, size='big', usage_before=[1], sandbox='types'))
out.write(b'{"sandbox":"deep","event":"x","a":' + b'[' * 1000 + b']' * 1000 + b'}\n')
out.write(b'{"sandbox":"big","event":"start","command":["' + b'A' * (5 << 20) + b'"]}\n')
out.write(b'{"sandbox":"utf8","event":"x","comm":"\xff\xfe"}\n')
out.write(b'{"sandbox":"nul","event":"decision","comm":"a\\u0000b","verdict":"deny"}\n')
out.write(b'{"sandbox":"\\u001b[2J","event":"x"}\n')
out.write(b'not json at all\n')
out.write(b'[1,2,3]\n')
out.write(b'{"sandbox":"dup","sandbox":"dup2","event":"x"}\n')
out.write(b'{"sandbox":"last","event":"decision","verdict":"deny"')   # no newline, cut
EOF
	for view in summary denials timeline usage plot; do
		for fmt in text csv json; do
			[ "$view" = plot ] && [ "$fmt" != text ] && continue
			review "$view" --format "$fmt" "$tmp/hostile.jsonl"
			if [ "$rc" != 5 ]; then   # shown, and lines were skipped
				fail "synthetic:hostile-$view-$fmt" "exit $rc, expected 5: ${err:0:300}"
			elif grep -qP '\x1b|\x07|\xe2\x80\xae' "$tmp/out"; then
				fail "synthetic:hostile-$view-$fmt" "a control reached the output"
			else
				pass "synthetic:hostile-$view-$fmt"
			fi
		done
	done
	review timeline --format csv "$tmp/hostile.jsonl"
	for where in "hostile.jsonl:4: not a JSON record" "hostile.jsonl:5: a line longer than any record" \
	             "hostile.jsonl:6: not a JSON record" "hostile.jsonl:8: no \"sandbox\" id" \
	             "hostile.jsonl:9: not a JSON record" "hostile.jsonl:12: the last line has no end"; do
		[[ $err == *"$where"* ]] && pass "synthetic:reports ${where%%:*}:${where#*:}" ||
			fail "synthetic:reports $where" "$err"
	done
	if grep -q "\"'=cmd|calc\"" "$tmp/out" && grep -q "\"'+1+1\"" "$tmp/out"; then
		pass synthetic:csv-formula-defused
	else
		fail synthetic:csv-formula-defused "$(head -c 600 "$tmp/out")"
	fi
fi

# ---- crafted logs (issue #32) ----------------------------------------------------
CRAFT=$HERE/craft.py
# bidi_in FILE: prints the characters of FILE that a terminal's bidi
# algorithm acts on (Bidi_Class R, AL, AN or an explicit one), by
# python3's unicodedata, not by the tool's own table.
bidi_in() {
	python3 - "$1" <<'EOF2'
import sys, unicodedata
bad = {'R', 'AL', 'AN', 'RLE', 'RLO', 'LRE', 'LRO', 'PDF', 'RLI', 'LRI', 'FSI', 'PDI'}
text = open(sys.argv[1], encoding='utf-8', errors='replace').read()
found = sorted({'U+%04X' % ord(c) for c in text if unicodedata.bidirectional(c) in bad or c == '\u061c'})
print(' '.join(found))
EOF2
}
if selected crafted "${want[@]}"; then
	python3 "$CRAFT" bidi "$tmp/bidi.jsonl"
	# Baseline: the check finds the characters in the log itself.
	found=$(bidi_in "$tmp/bidi.jsonl")
	[[ $found == *U+05D0*U+061C*U+2067* ]] && pass "crafted:bidi-log-holds ($found)" ||
		fail crafted:bidi-log-holds "$found"
	for view in timeline usage; do
		for fmt in text csv; do
			review "$view" --format "$fmt" "$tmp/bidi.jsonl"
			found=$(bidi_in "$tmp/out")
			if [ "$rc" = 0 ] && [ -z "$found" ] && grep -q '<U+05D0><U+05D1>' "$tmp/out"; then
				pass "crafted:bidi-escaped-$view-$fmt"
			else
				fail "crafted:bidi-escaped-$view-$fmt" "exit $rc, bidi characters: $found"
			fi
		done
	done

	# plot names every sandbox: 40 drawn (32 were), 300 with those past
	# the limit named in the SVG and on stderr.
	python3 "$CRAFT" many "$tmp/many40.jsonl" 40
	review plot "$tmp/many40.jsonl"
	[ "$rc" = 0 ] && [ "$(grep -c 'class="panel"' "$tmp/out")" = 40 ] &&
		pass crafted:plot-draws-40 || fail crafted:plot-draws-40 "exit $rc, $(grep -c 'class="panel"' "$tmp/out") panels"
	python3 "$CRAFT" many "$tmp/many300.jsonl" 300
	review plot "$tmp/many300.jsonl"
	missing=0
	for i in $(seq 0 299); do
		grep -q ">sandbox sb$(printf %05d "$i")," "$tmp/out" || missing=$((missing + 1))
	done
	if [ "$rc" = 0 ] && [ "$missing" = 0 ] && grep -q '44 panels not drawn' "$tmp/out" &&
	   [[ $err == *"44 panels not drawn"*"sb00299 GPU 1"* ]]; then
		pass crafted:plot-names-every-sandbox
	else
		fail crafted:plot-names-every-sandbox "exit $rc, $missing of 300 not named; ${err:0:200}"
	fi

	# Figures near 2^64: no NaN on the y axis; no wrapped running total.
	python3 "$CRAFT" huge "$tmp/huge.jsonl"
	review plot "$tmp/huge.jsonl"
	[ "$rc" = 0 ] && ! grep -qi 'nan' "$tmp/out" && grep -q 'TiB</text>' "$tmp/out" &&
		pass crafted:plot-axis-near-2^64 || fail crafted:plot-axis-near-2^64 "exit $rc: $(grep -m2 -i nan "$tmp/out")"
	python3 "$CRAFT" overflow "$tmp/overflow.jsonl"
	review usage --format csv "$tmp/overflow.jsonl"
	# Three allocations of 2^62+5: the process holds more than 2^63 from
	# the second on, the most a total holds (a wrapped total printed 0).
	held=$(printf '%s\n' "$out" | sed -n '3,4p' | cut -d, -f7 | sort -u)
	[ "$rc" = 0 ] && [ "$held" = 9223372036854775807 ] && pass crafted:usage-total-saturates ||
		fail crafted:usage-total-saturates "exit $rc, held $held"

	# --since/--until past what int64_t holds: as far as it goes.
	for t in "--until +1e9d" "--until 9999999999999" "--since -1e9d"; do
		# shellcheck disable=SC2086 # the option and its value
		review denials $t --fail-on deny "$RETRY"
		expect_rc "crafted:fail-on-deny $t" 4
	done

	# Skipped lines: status 5, whatever the view showed.
	{ head -n 3 "$RETRY"; echo 'not a record'; } >"$tmp/skipped.jsonl"
	review summary "$tmp/skipped.jsonl"; expect_rc crafted:skipped-line-exit-5 5
	review summary "$RETRY"; expect_rc crafted:no-skipped-line-exit-0 0

	# Under a memory limit, a view that skipped lines for want of memory
	# never exits 0 (it did: "out of memory" on stderr, status 0). The
	# limits span from too little to enough for a 20 MB log; at least one
	# must have made the view skip lines, or the case proved nothing.
	python3 "$CRAFT" size "$tmp/oom.jsonl" 20000000
	oom_runs=0 oom_bad=""
	for kib in $(seq 12000 4000 40000); do
		(ulimit -v "$kib"; exec "$GPUSANDBOX" audit timeline --format csv "$tmp/oom.jsonl") \
			>/dev/null 2>"$tmp/oom.err"
		oom_rc=$?
		grep -q 'out of memory' "$tmp/oom.err" || continue
		oom_runs=$((oom_runs + 1))
		[ "$oom_rc" = 5 ] || [ "$oom_rc" = 3 ] || oom_bad+=" ${kib}KiB:exit-$oom_rc"
	done
	if [ "$oom_runs" -gt 0 ] && [ -z "$oom_bad" ]; then
		pass "crafted:out-of-memory-never-exit-0 ($oom_runs limits skipped lines)"
	else
		fail crafted:out-of-memory-never-exit-0 "$oom_runs runs skipped lines;$oom_bad"
	fi

	# One line limit, one verdict: a valid chained record of 5 MiB.
	python3 "$CRAFT" overlong "$tmp/overlong.jsonl"
	review verify "$tmp/overlong.jsonl"
	v_rc=$rc v_err=$err
	review summary "$tmp/overlong.jsonl"
	if [ "$v_rc" = 1 ] && [[ $v_err == *"overlong.jsonl:1: a line longer than any record (4 MiB)"* ]] &&
	   [ "$rc" = 5 ] && [[ $out == *"chain     BROKEN"* ]]; then
		pass crafted:verify-and-summary-agree-on-a-5MiB-line
	else
		fail crafted:verify-and-summary-agree-on-a-5MiB-line "verify $v_rc (${v_err:0:200}), summary $rc"
	fi
	# Baseline for the chain of craft.py: the same log with a short
	# command verifies, so the 5 MiB line is what verify refuses.
	python3 "$CRAFT" bidi "$tmp/chained.jsonl"
	review verify "$tmp/chained.jsonl"; expect_rc crafted:craft-chain-verifies 0
fi

# ---- logs this build writes, on the fake driver ----------------------------------------
# Two sandboxes of retry_loop (tests/adv) under --mem 1g append to one log;
# the views must count the refusals the program itself saw refused.
fake_log=$tmp/fake.jsonl
if selected fake "${want[@]}"; then
	refused=0 made=0
	for i in 1 2; do
		"$WITH_FAKE" --vidmem 16g -- "$GPUSANDBOX" --mem 1g --label "run=$i" --audit-log "$fake_log" \
			-- build/tests/adv/retry_loop >"$tmp/fake$i.out" 2>"$tmp/fake$i.err"
		frc=$?
		[ "$frc" = 0 ] && made=$((made + 1))
		[ "$frc" = 125 ] && grep -q SKIP "$tmp/fake$i.err" && made=skip
		n=$(sed -n 's/.*refused=\([0-9]*\).*/\1/p' "$tmp/fake$i.out" | head -1)
		refused=$((refused + ${n:-0}))
	done
	if [ "$made" = skip ]; then
		echo "SKIP fake: the fake driver cannot run here"
	elif [ "$made" != 2 ] || [ "$refused" = 0 ]; then
		fail fake:make-log "runs: $made of 2, refused $refused: $(tail -c 300 "$tmp/fake1.err")"
	else
		review summary "$fake_log"
		[ "$rc" = 0 ] && [ "$(grep -c 'chain     intact, sealed' <<<"$out")" = 2 ] &&
			[[ $out == *"labels    run=1"* ]] && [[ $out == *"labels    run=2"* ]] &&
			pass fake:summary-two-sandboxes || fail fake:summary-two-sandboxes "$out"
		review denials --format csv "$fake_log"
		got=$(printf '%s\n' "$out" | sed -n 2p | cut -d, -f1)
		if [ "$got" = "$refused" ] && [[ $out == *'"option --mem '* ]] && [ "$(rows)" = 1 ]; then
			pass "fake:denials-count-as-the-program-saw ($got)"
		else
			fail fake:denials-count-as-the-program-saw "views: $got, the program: $refused; $out"
		fi
		review summary --fail-on deny "$fake_log"; expect_rc fake:fail-on-deny 4
	fi
fi

# ---- --help and gpusandbox-audit(1) name the same options ------------------------------
if selected docs "${want[@]}"; then
	help_opts=$("$GPUSANDBOX" audit --help | grep -oE -- '^  (-[a-z], )?--[a-z][a-z-]+' | grep -oE -- '--[a-z-]+' | sort -u)
	man_opts=$(sed -n '/^\.SH OPTIONS/,/^\.SH EXIT/p' man/gpusandbox-audit.1 | grep -E '^\.(B|BI|BR) ' |
		grep -oE '\\-\\-[a-z\\-]+' | sed -e 's/\\-/-/g' | sort -u)
	if [ -n "$help_opts" ] && [ "$help_opts" = "$man_opts" ]; then pass docs:help-matches-man; else
		fail docs:help-matches-man "help: $(echo $help_opts) man: $(echo $man_opts)"; fi
	for v in summary denials timeline usage plot verify; do
		grep -q "^\.B $v\$" man/gpusandbox-audit.1 && pass "docs:man-view-$v" || fail "docs:man-view-$v" "not in VIEWS"
	done
fi

# ---- schema 3 (audit levels): usage records and call stacks --------------------------
# Written here as the record level's writer lays them out (no chain: the
# views do not need one), without a summary record, so that the peak can
# only come from the usage records' "peak".
if selected schema3 "${want[@]}"; then
	python3 - "$tmp/schema3.jsonl" <<'EOF'
import json, sys
MIB = 1 << 20
out = open(sys.argv[1], 'w')
def rec(seq, t, event, **kw):
    out.write(json.dumps(dict(time='2026-11-24T10:00:%02d.000000Z' % t, sandbox='5c3a', seq=seq,
                              event=event, **kw), ensure_ascii=False) + '\n')
rec(0, 0, 'start', schema=3, level='standard', stacks=True, command=['python3', 'train.py'],
    policy={'mem': 1 << 30, 'groups': ['compute', 'memory', 'monitoring']})
for i, (used, peak) in enumerate([(100, 100), (600, 950), (700, 700)]):
    rec(1 + i, 1 + i, 'usage', device=0, resource='vidmem', used=used * MIB, peak=peak * MIB, quota=1 << 30)
rec(4, 5, 'decision', pid=77, tid=77, comm='python3', device=0, call='RM_ALLOC', class_name='NV01_MEMORY_LOCAL_USER',
    size=512 * MIB, verdict='deny', outcome='quota', resource='vidmem', usage_before=700 * MIB,
    usage_after=700 * MIB, quota=1 << 30, reason='video memory quota exceeded',
    stack=['cudaMalloc', 'at::native::empty_cuda', 'main'])
rec(5, 6, 'suppressed', pid=77, call='RM_ALLOC', verdict='deny', outcome='quota', reason='video memory quota exceeded',
    count=9, first_seq=4)
EOF
	review summary "$tmp/schema3.jsonl"
	[[ $out == *"recorded  standard, stacks"* ]] && [[ $out == *"vidmem on GPU 0: 950.00 MiB of 1.00 GiB"* ]] &&
		pass schema3:summary-level-and-peak-from-usage || fail schema3:summary-level-and-peak-from-usage "$out"
	review denials --format csv "$tmp/schema3.jsonl"
	[[ $out == *'10,"quota"'* ]] && [[ $out == *'"cudaMalloc ← at::native::empty_cuda ← main"'* ]] &&
		pass schema3:denials-stack || fail schema3:denials-stack "$out"
	review timeline --verdict deny --format json "$tmp/schema3.jsonl"
	[ "$(grep -c '"stack":"cudaMalloc ← at::native::empty_cuda ← main"' <<<"$out")" = 2 ] &&
		pass schema3:timeline-stack-also-on-the-repeats || fail schema3:timeline-stack-also-on-the-repeats "$out"
	review plot "$tmp/schema3.jsonl"
	# The usage records are the line: three steps after the start.
	points=$(grep -o 'class="usage"[^>]*points="[^"]*"' <<<"$out" | grep -o ',' | wc -l)
	[ "$rc" = 0 ] && [ "$points" -ge 8 ] && pass schema3:plot-usage-records ||
		fail schema3:plot-usage-records "exit $rc, $points points"
fi

# ---- plot: rendered by Chromium, checked in the PNG ---------------------------------
render() { # SVG PNG
	timeout "$CHROMIUM_TIMEOUT" "$CHROMIUM" --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$tmp/chromium" --window-size=$PANEL_W,$PANEL_H --screenshot="$2" \
		"file://$(realpath "$1")" >/dev/null 2>&1 && [ -s "$2" ]
}
if selected plot "${want[@]}"; then
	# The GPU log, and this build's own log when the fake driver made one.
	plot_log=$RETRY
	[ -s "$fake_log" ] && grep -q '"event":"seal"' "$fake_log" && plot_log=$fake_log
	review plot --sandbox "$(head -n 1 "$plot_log" | sed 's/.*"sandbox":"\([^"]*\)".*/\1/')" \
		-o "$tmp/plot.svg" "$plot_log"
	if [ "$rc" != 0 ] || ! grep -q 'class="quota"' "$tmp/plot.svg"; then
		fail plot:svg "exit $rc"
	elif grep -qiE '<script|href=|xlink|@import|url\(' "$tmp/plot.svg"; then
		fail plot:self-contained "a script or an external reference in the SVG"
	else
		pass plot:svg-self-contained
	fi
	grep -v 'class="quota"' "$tmp/plot.svg" >"$tmp/no-quota.svg"
	grep -v 'class="refusal"' "$tmp/plot.svg" >"$tmp/no-marks.svg"
	for case in plot:0 no-quota:1 no-marks:1; do
		name=${case%%:*} expect=${case#*:}
		if ! command -v "$CHROMIUM" >/dev/null; then
			fail "plot:render-$name" "no chromium (scripts/install-deps.sh installs it)"
			continue
		fi
		if ! render "$tmp/$name.svg" "$tmp/$name.png"; then
			fail "plot:render-$name" "chromium made no PNG"
			continue
		fi
		check=$(python3 "$HERE/png_check.py" "$tmp/$name.png")
		got=$?
		if [ "$got" = "$expect" ]; then
			pass "plot:png-check-$name of $(basename "$plot_log") (exit $got: ${check//$'\n'/; })"
		else
			fail "plot:png-check-$name" "exit $got, expected $expect: $check"
		fi
	done
fi

harness_summary
