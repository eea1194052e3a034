#!/bin/bash
# SPDX-License-Identifier: MIT
#
# tests/deploy/image.sh - the image deploy/Containerfile describes runs the
# binary it is given. No registry is reachable here, so the image's root
# file system is made from Debian's own packages, as the Containerfile
# makes it:
#   - debootstrap --variant=minbase bookworm: what debian:12-slim is built
#     from (Essential and Priority: required packages, apt);
#   - plus the packages of the Containerfile's `apt-get install` line, read
#     from the Containerfile itself (so this test follows it), with their
#     dependencies and without recommends, as that line installs them;
#   - build/gpusandbox copied to /usr/bin/gpusandbox, as its COPY does.
# The root is cached in $GS_IMAGE_CACHE (default /var/cache/gpusandbox-tests)
# under a key of the suite and the package list: a new list builds a new
# root (minutes, from the Debian mirror), an unchanged one reuses it.
# Then, in the root (chroot, tests/deploy/in-image):
#   version   `gpusandbox --version` runs: the loader finds every library
#             the binary links (objdump -p's NEEDED);
#   agent     the agent smoke test: tests/agent/run.sh's quota-runc with
#             the image's gpusandbox as agent and profile writer (a runc
#             container's calls under the fake driver, the fake's peak
#             within the quota, the audit log's refusal symbolized by the
#             image's libdw).
# GS_IMAGE_CONTAINERFILE: another Containerfile to test (e.g. the one of
# 8b5caf6, which lacks libdw1: version fails).
set -u
cd "$(dirname "$0")/../.." || exit 2
SKIP=125
GS=build/gpusandbox
CF=${GS_IMAGE_CONTAINERFILE:-deploy/Containerfile}
CACHE=${GS_IMAGE_CACHE:-/var/cache/gpusandbox-tests}
MIRROR=${GS_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
skip() { echo "image: SKIP: $*"; exit "$SKIP"; }
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot)"
[ -x "$GS" ] || { echo "image: $GS is not built"; exit 2; }
scripts/install-test-pkgs.sh debootstrap || skip "debootstrap could not be installed"

passed=0 failed=0
pass() { echo "PASS $1"; passed=$((passed + 1)); }
fail() { echo "FAIL $1: $2"; failed=$((failed + 1)); }
finish() { echo "$passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

# The base must be what debootstrap makes here: Debian 12.
grep -qE '^FROM debian:12(-slim)?$' "$CF" ||
	{ fail base "$CF: FROM is not debian:12-slim; this test builds bookworm roots"; finish; }
# The apt-get install line's package names: continuation lines joined,
# options and the words of the command left out.
pkgs=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$CF" | grep -o 'apt-get install[^&]*' |
	tr -s ' \t' '\n' | grep -vE '^(-.*|apt-get|install|)$' | sort -u | paste -sd, -)
[ -n "$pkgs" ] || { fail packages "$CF: no apt-get install line"; finish; }
key=$(printf '%s %s minbase %s\n' "$SUITE" "$MIRROR" "$pkgs" | sha256sum | cut -c1-16)
root=$CACHE/image-root-$key
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
if [ ! -e "$root/.complete" ]; then
	echo "image: building the root for $pkgs (debootstrap $SUITE from $MIRROR)"
	rm -rf "$root"
	mkdir -p "$CACHE/debs"
	debootstrap --cache-dir="$CACHE/debs" --variant=minbase --include="$pkgs" "$SUITE" "$root" "$MIRROR" >"$CACHE/debootstrap-$key.log" 2>&1 ||
		{ rm -rf "$root"; skip "debootstrap failed (no Debian mirror?): $(tail -1 "$CACHE/debootstrap-$key.log")"; }
	# What the Containerfile's line removes, and what a container
	# image has no use for.
	rm -rf "$root/var/lib/apt/lists/"* "$root/var/cache/apt/archives/"*.deb
	: >"$root/.complete"
fi
install -m 0755 "$GS" "$root/usr/bin/gpusandbox"
export GS_IMAGE_ROOT=$root

out=$(tests/deploy/in-image --version 2>&1)
if [ $? = 0 ] && printf '%s\n' "$out" | grep -q '^gpusandbox '; then
	pass version
else
	fail version "gpusandbox --version in the image ($pkgs): $(printf '%s\n' "$out" | tail -1)"
	finish
fi

agent_out=$(GPUSANDBOX=$PWD/tests/deploy/in-image tests/agent/run.sh quota-runc 2>&1)
rc=$?
if [ "$rc" = "$SKIP" ]; then
	echo "image: SKIP agent: $(printf '%s\n' "$agent_out" | tail -1)"
elif [ "$rc" = 0 ] && printf '%s\n' "$agent_out" | grep -q '^PASS quota-runc$'; then
	pass agent
else
	fail agent "tests/agent quota-runc with the image's gpusandbox: $(printf '%s\n' "$agent_out" | grep -E '^(FAIL|agent:)|^    ' | head -8)"
fi
finish
