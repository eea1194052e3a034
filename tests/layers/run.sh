#!/bin/bash
# SPDX-License-Identifier: MIT
# tests/layers/run.sh - shows that scripts/check-layers.sh fails on each
# kind of violation it exists for, and passes on the tree as it is.
# Each case runs the checker on a copy of the sources and the built objects
# with one violation planted: an upward #include, an upward symbol use, two
# files of one layer using each other in a circle, two modules (a .c and
# its .h) including each other, a source file in no
# layer. A checker that cannot fail would pass every case's baseline and
# fail here. Needs a build (make) first; no privileges.
set -u
cd "$(dirname "$0")/../.." || exit 2
BUILD=${BUILD:-build}
passed=0 failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

[ -f "$BUILD/supervisor/core/pipeline/session.o" ] ||
	{ echo "FAIL build: $BUILD/supervisor/core/pipeline/session.o missing (run make)"; echo "0 passed, 1 failed"; exit 1; }
T=$(mktemp -d) || exit 2
trap 'rm -rf "$T"' EXIT

# A fresh copy of what the checker reads: sources, Makefile, objects.
fresh_copy() {
	rm -rf "$T/tree"; mkdir -p "$T/tree/build" "$T/tree/scripts"
	cp -r include arch policy supervisor Makefile "$T/tree/"
	cp scripts/check-layers.sh "$T/tree/scripts/"
	(cd "$BUILD" && cp -r --parents include arch policy supervisor "$T/tree/build/") 2>/dev/null ||
		cp -r "$BUILD/include" "$BUILD/arch" "$BUILD/policy" "$BUILD/supervisor" "$T/tree/build/"
}

# An object of the copy, compiled from C that declares what it uses itself
# (no headers: only its symbols matter to the nm check).
plant_object() {
	local src=$1 code=$2
	mkdir -p "$T/tree/$(dirname "$src")" "$T/tree/build/$(dirname "$src")"
	printf '%s\n' "$code" > "$T/tree/$src"
	cc -c -o "$T/tree/build/${src%.c}.o" "$T/tree/$src"
}

# Baseline: the unmodified copy passes, so each failure below is the
# planted violation's.
fresh_copy
if out=$("$T/tree/scripts/check-layers.sh" build 2>&1); then ok "baseline-tree-passes"
else bad "baseline-tree-passes" "$(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"; fi

# One violation of each kind, planted in one copy (each has its own line
# in the checker's report; one run keeps the tier quick):
# - audit/ (layer 3) includes a header of core/pipeline/ (layer 7);
echo '#include "session.h"' >> "$T/tree/supervisor/audit/utf8.h"
# - compute/ (layer 8) includes a header of run/ (layer 9), found through
#   GS_INCLUDE_DIRS, not its own folder;
echo '#include "runner.h"' >> "$T/tree/supervisor/compute/sm_controller.h"
# - rm/ (layer 2) calls a function defined in run/ (layer 9);
plant_object supervisor/rm/planted.c 'void gs_session_summarize(void); void planted(void) { gs_session_summarize(); }'
# - two files of core/ledger/ use each other;
plant_object supervisor/core/ledger/ping.c 'void planted_pong(void); void planted_ping(void) { planted_pong(); }'
plant_object supervisor/core/ledger/pong.c 'void planted_ping(void); void planted_pong(void) { planted_ping(); }'
# - two modules of core/ledger/ that include each other (a file and the
#   header of another whose file includes the first's header back);
printf '#include "mod_b.h"\n' > "$T/tree/supervisor/core/ledger/mod_a.c"
printf '#include "mod_a.h"\n' > "$T/tree/supervisor/core/ledger/mod_b.h"
: > "$T/tree/supervisor/core/ledger/mod_a.h"
# - a source file directly in supervisor/, in no layer's folder.
echo 'int planted_stray;' > "$T/tree/supervisor/stray.c"
out=$("$T/tree/scripts/check-layers.sh" build 2>&1); rc=$?
[ "$rc" -ne 0 ] && ok "planted-tree-fails" || bad "planted-tree-fails" "exit 0"

# expect NAME PATTERN: the planted run's report says PATTERN.
expect_line() {
	if printf '%s\n' "$out" | grep -q -- "$2"; then ok "$1"
	else bad "$1" "no line matching '$2'"; fi
}
expect_line "upward-include" "^FAIL supervisor/audit/utf8.h includes supervisor/core/pipeline/session.h, a layer above it"
expect_line "upward-include-by-path" "^FAIL supervisor/compute/sm_controller.h includes supervisor/run/runner.h, a layer above it"
expect_line "upward-symbol" "^FAIL supervisor/rm/planted.c uses supervisor/run/runner.c, a layer above it"
expect_line "circle-in-a-layer" "^FAIL files that depend on each other in a circle"
expect_line "circle-names-its-files" "supervisor/core/ledger/p[io]ng"
expect_line "file-in-no-layer" "^FAIL supervisor/stray.c is in no layer"
expect_line "module-circle" "^FAIL modules that include each other in a circle"
expect_line "module-circle-names-its-modules" "supervisor/core/ledger/mod_[ab]"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
