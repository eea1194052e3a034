#!/bin/sh
# SPDX-License-Identifier: MIT
# scripts/install-test-pkgs.sh PKG... - installs Debian packages that only a
# test tier needs (not the build), when missing. Each such tier calls it
# for its own packages, so that the tier runs on a machine set up before
# it existed; scripts/install-deps.sh installs the same list (TEST_PKGS).
# Exit 0 when every package is there afterwards.
set -eu
missing=""
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-test-pkgs: installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
