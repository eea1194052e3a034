#!/bin/sh
# Installs the Debian packages gpusandbox needs to build and test.
# man-db: tests/cli/install.sh renders the installed man pages with man(1).
# Idempotent: skips apt entirely when every package is already present.
set -eu
# runc, crun, busybox-static, jq: tests/agent/run.sh runs containers under
# `gpusandbox agent` with both runtimes, on a busybox rootfs.
# chromium: tests/audit-review/run.sh renders `gpusandbox audit plot`'s SVG
# to PNG headless, to check what a reviewer sees.
# libdw-dev: the call stacks of refused calls are symbolized with libdw.
PKGS="build-essential pkg-config libseccomp-dev libcap-dev libjson-c-dev libdw-dev libfuse3-dev fuse3 python3 man-db runc crun busybox-static jq chromium"
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
