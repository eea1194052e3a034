#!/bin/bash
# SPDX-License-Identifier: MIT
# Installation and the build with a distribution's flags:
#   build-distro-flags  `make CFLAGS='-O2 -D_FORTIFY_SOURCE=3'` into a scratch
#                       BUILD folder builds (with WERROR=1: no fortify
#                       redefinition warning) and keeps the include paths;
#                       without a level of its own the build uses 2; that
#                       build is also made without libdw (GS_NO_LIBDW=1):
#                       it runs, and --version says it has no call stacks
#   install-files       `make install DESTDIR=... PREFIX=/usr` writes exactly
#                       the binary, the man pages, the example policies and
#                       both completions
#   install-man         `man gpusandbox` finds the installed page through
#                       MANPATH (as --help's last line promises), and
#                       `man -l` renders gpusandbox.policy(5); `man
#                       gpusandbox-audit` finds the review tool's page
#   completion-*        the bash completion loads in bash and offers every
#                       long option of --help; the zsh one lists the same
#   uninstall-clean     `make uninstall` leaves no file behind
#   release-no-switches no GPUSANDBOX_TEST_* switch (include/test_switch.h)
#                       is in build/gpusandbox, the installed binary or the
#                       distribution-flags build: a release binary must not
#                       let its environment turn a defence off;
#                       switches-in-test-build: the same look finds every
#                       switch the source reads in the test build
#                       (build/switches/gpusandbox), so it is one that sees
#                       them where they are
# Builds into its own temporary folders; needs make and a compiler.
set -u
cd "$(dirname "$0")/../.." || exit 2
B=${GPUSANDBOX:-build/gpusandbox}
S=${GPUSANDBOX_SWITCHED:-build/switches/gpusandbox}
T=$(mktemp -d "${TMPDIR:-/tmp}/gs-install.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
passed=0 failed=0
ok()  { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

[ -x "$B" ] || { echo "FAIL build: $B missing (run make)"; echo "0 passed, 1 failed"; exit 1; }

# --- the build with a distribution's CFLAGS ---
lines=$(make -n BUILD="$T/dry" CFLAGS='-O2 -D_FORTIFY_SOURCE=3' all | grep -E ' -c -o .*main\.o ')
if [[ $lines == *-Iinclude* && $lines == *-Isupervisor* && $lines == *-D_FORTIFY_SOURCE=3* &&
	$lines != *-D_FORTIFY_SOURCE=2* && $lines != *-Werror* ]]; then ok "build-flags-line"; else
	bad "build-flags-line" "$lines"; fi
lines=$(make -n BUILD="$T/dry" all | grep -E ' -c -o .*main\.o ')
[[ $lines == *"-U_FORTIFY_SOURCE -D_FORTIFY_SOURCE=2"* ]] && ok "build-default-fortify" ||
	bad "build-default-fortify" "$lines"
if make -s -j2 BUILD="$T/distro" CFLAGS='-O2 -D_FORTIFY_SOURCE=3' WERROR=1 GS_NO_LIBDW=1 all \
	>"$T/build.log" 2>&1 && "$T/distro/gpusandbox" -- true &&
	"$T/distro/gpusandbox" --version | grep -qx 'call stacks of refusals (--audit-stacks, libdw): no (built without libdw)' &&
	! ldd "$T/distro/gpusandbox" | grep -q libdw; then ok "build-distro-flags"; else
	bad "build-distro-flags" "$(tail -c 600 "$T/build.log")"; fi

# `make` alone builds the program (not a test driver).
goal=$(make -pn 2>/dev/null | sed -n 's/^\.DEFAULT_GOAL := //p' | head -1)
[ "$goal" = all ] && ok "make-default-goal" || bad "make-default-goal" "make builds '$goal'"

# --- install ---
D=$T/root
if ! make -s install DESTDIR="$D" PREFIX=/usr >"$T/install.log" 2>&1; then
	bad "install" "$(tail -c 600 "$T/install.log")"
else
	ok "install"
fi
(cd "$D" && find . -type f | sort) >"$T/files"
{
	echo ./usr/bin/gpusandbox
	for p in policy/*.policy; do echo "./usr/share/gpusandbox/policy/$(basename "$p")"; done
	echo ./usr/share/bash-completion/completions/gpusandbox
	echo ./usr/share/man/man1/gpusandbox.1
	echo ./usr/share/man/man1/gpusandbox-audit.1
	echo ./usr/share/man/man5/gpusandbox.policy.5
	echo ./usr/share/zsh/site-functions/_gpusandbox
} | sort >"$T/want"
cmp -s "$T/files" "$T/want" && ok "install-files" || bad "install-files" "$(diff "$T/want" "$T/files" | tr '\n' ' ')"
[ -x "$D/usr/bin/gpusandbox" ] && "$D/usr/bin/gpusandbox" --version | grep -q '^gpusandbox [0-9]' &&
	ok "install-binary-runs" || bad "install-binary-runs" "installed binary does not run"

# --- the test switches: in the test build only ---
# switch_names FILE: the GPUSANDBOX_TEST_* names in FILE's bytes, sorted.
switch_names() { grep -aoE 'GPUSANDBOX_TEST_[A-Z0-9_]+' "$1" | sort -u; }
# Every switch the source reads: gs_test_switch's argument is the full
# name as a literal (in the .c files: the header's example is none).
want_switches=$(grep -rhoE --include='*.c' 'gs_test_switch\("GPUSANDBOX_TEST_[A-Z0-9_]+"' include arch policy supervisor |
	grep -oE 'GPUSANDBOX_TEST_[A-Z0-9_]+' | sort -u)
found=
for f in "$B" "$D/usr/bin/gpusandbox" "$T/distro/gpusandbox"; do
	[ -f "$f" ] || continue # a failed build or install: its own case fails
	n=$(switch_names "$f")
	[ -z "$n" ] || found="$found $f: $(echo $n);"
done
[ -z "$found" ] && ok "release-no-switches" || bad "release-no-switches" "$found"
if [ ! -x "$S" ]; then
	bad "switches-in-test-build" "$S missing (make tests)"
elif [ -n "$want_switches" ] && [ "$(switch_names "$S")" = "$want_switches" ]; then
	ok "switches-in-test-build"
else
	bad "switches-in-test-build" "source: $(echo $want_switches) $S: $(echo $(switch_names "$S"))"
fi

# `man gpusandbox` as a user would type it, the page found through MANPATH.
if MANPATH="$D/usr/share/man" MANPAGER=cat MANWIDTH=80 man gpusandbox 2>"$T/man.err" |
	grep -q 'run a command under enforced NVIDIA GPU memory quotas' &&
	MANPAGER=cat MANWIDTH=80 man -l "$D/usr/share/man/man5/gpusandbox.policy.5" 2>>"$T/man.err" |
	grep -q 'mem' &&
	MANPATH="$D/usr/share/man" MANPAGER=cat MANWIDTH=80 man gpusandbox-audit 2>>"$T/man.err" |
	grep -q 'review gpusandbox audit logs'; then ok "install-man"; else
	bad "install-man" "$(head -c 300 "$T/man.err")"; fi
# groff warnings (bad macros, lines it cannot set) in either page.
if MANWIDTH=80 man --warnings -l man/gpusandbox.1 man/gpusandbox.policy.5 man/gpusandbox-audit.1 2>&1 >/dev/null |
	grep -v '^$' >"$T/manwarn"; [ -s "$T/manwarn" ]; then bad "man-no-warnings" "$(head -c 300 "$T/manwarn")"
else ok "man-no-warnings"; fi

# --- completions ---
help_opts=$("$B" --help | sed -nE 's/^  (-h, )?(--[a-z][a-z0-9-]*).*/\2/p' | sort -u)
bash_opts=$(PATH="$D/usr/bin:$PATH" bash -c '
	source "$1" || exit 1
	COMP_WORDS=(gpusandbox --); COMP_CWORD=1; _gpusandbox
	printf "%s\n" "${COMPREPLY[@]}"' sh "$D/usr/share/bash-completion/completions/gpusandbox" |
	grep -v '^--$' | sort -u)
[ -n "$help_opts" ] && [ "$bash_opts" = "$help_opts" ] && ok "completion-bash-options" ||
	bad "completion-bash-options" "bash: $(echo $bash_opts) help: $(echo $help_opts)"
vals=$(PATH="$D/usr/bin:$PATH" bash -c '
	source "$1"; COMP_WORDS=(gpusandbox --trace-time ""); COMP_CWORD=2; _gpusandbox
	echo "${COMPREPLY[*]}"' sh "$D/usr/share/bash-completion/completions/gpusandbox")
[ "$vals" = "clock epoch relative" ] && ok "completion-bash-values" || bad "completion-bash-values" "$vals"
first=$(PATH="$D/usr/bin:$PATH" bash -c '
	source "$1"; COMP_WORDS=(gpusandbox li); COMP_CWORD=1; _gpusandbox
	printf "%s\n" "${COMPREPLY[@]}"' sh "$D/usr/share/bash-completion/completions/gpusandbox")
grep -qx list-groups <<<"$first" && ok "completion-bash-subcommand" || bad "completion-bash-subcommand" "$first"
zsh_opts=$(grep -oE -- "(^|[ '{,)*])--[a-z][a-z0-9-]*" "$D/usr/share/zsh/site-functions/_gpusandbox" |
	grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
[ "$zsh_opts" = "$help_opts" ] && ok "completion-zsh-options" ||
	bad "completion-zsh-options" "zsh: $(echo $zsh_opts) help: $(echo $help_opts)"
if command -v zsh >/dev/null; then
	zsh -n "$D/usr/share/zsh/site-functions/_gpusandbox" && ok "completion-zsh-syntax" ||
		bad "completion-zsh-syntax" "zsh -n failed"
fi

# --- uninstall ---
make -s uninstall DESTDIR="$D" PREFIX=/usr >"$T/uninstall.log" 2>&1 || bad "uninstall" "$(cat "$T/uninstall.log")"
left=$(cd "$D" && find . -type f)
[ -z "$left" ] && [ ! -e "$D/usr/share/gpusandbox" ] && ok "uninstall-clean" ||
	bad "uninstall-clean" "left: $left $(ls -d "$D/usr/share/gpusandbox" 2>/dev/null)"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
