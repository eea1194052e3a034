#!/bin/sh
# Installs the Debian packages gpusandbox needs, and no more than asked:
#
#   scripts/install-deps.sh          building, and the demo on the fake driver
#   scripts/install-deps.sh tests    that, and what the test tiers use
#
# Idempotent: skips apt entirely when every package is already present.
set -eu

# Building gpusandbox and the fake driver (FUSE), which the demo runs.
# libdw-dev: the call stacks of refused calls are symbolized with libdw.
BUILD_PKGS="build-essential pkg-config libseccomp-dev libcap-dev libjson-c-dev libdw-dev libfuse3-dev fuse3"
# The test tiers (scripts/check.sh):
# python3, jq: most tiers read JSON and the fake's stats with them;
# python3-yaml: tests/deploy and tests/agent/walk.sh read deploy/'s manifests;
# man-db: tests/cli/install.sh renders the installed man pages with man(1).
# e2fsprogs: chattr, for the test harnesses' cleanup of an audit log a
# killed supervisor left append-only (tests/lib/harness.sh).
TEST_PKGS="python3 python3-yaml jq man-db e2fsprogs"
# runc, crun, busybox-static: tests/agent/run.sh (and operator.sh,
# walk.sh) runs containers under `gpusandbox agent` with both runtimes, on
# a busybox rootfs; podman: the same through podman (--rootfs, runc
# underneath).
CONTAINER_PKGS="runc crun podman busybox-static"
# chromium: tests/audit-review/run.sh renders `gpusandbox audit plot`'s SVG
# to PNG headless, to check what a reviewer sees.
BROWSER_PKGS="chromium"
# npm, where the machine has no node of its own: tests/deploy's offline
# schema validator and CEL evaluator (kubernetes-models, @bufbuild/cel,
# pinned in tests/deploy/package-lock.json).
NODE_PKGS="npm"
# Tools of single tiers, each also installed by its own tier through
# scripts/install-test-pkgs.sh when run alone:
# debootstrap: tests/deploy/image.sh builds deploy/Containerfile's root;
# prometheus-node-exporter: tests/metrics and tests/agent/walk.sh read the
# metrics file with it;
# containerd: tests/agent's *-containerd cases, run.sh's and walk.sh's
# (ctr run, runc underneath);
# python3-grpcio, python3-protobuf, protobuf-compiler: walk.sh's *-cri
# cases speak the CRI to containerd's CRI plugin (tests/agent/cri/cri.py).
TIER_PKGS="debootstrap prometheus-node-exporter containerd python3-grpcio python3-protobuf protobuf-compiler"

case "${1:-}" in
"") pkgs=$BUILD_PKGS; tests=no ;;
tests)
	pkgs="$BUILD_PKGS $TEST_PKGS $CONTAINER_PKGS $BROWSER_PKGS $TIER_PKGS"
	command -v npm >/dev/null || pkgs="$pkgs $NODE_PKGS"
	tests=yes ;;
*) echo "usage: $0 [tests]" >&2; exit 2 ;;
esac

install_node_modules() {
	[ "$tests" = yes ] || return 0
	command -v npm >/dev/null || return 0
	deploy_tests="$(dirname "$0")/../tests/deploy"
	[ -d "$deploy_tests/node_modules/kubernetes-models" ] && [ -d "$deploy_tests/node_modules/@bufbuild/cel" ] &&
		return 0
	(cd "$deploy_tests" && npm ci --no-audit --no-fund --silent) ||
		echo "install-deps: npm ci in tests/deploy failed: its schema checks will be skipped" >&2
}

missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	SUDO=""
	[ "$(id -u)" -eq 0 ] || SUDO="sudo"
	echo "install-deps: installing:$missing" >&2
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
install_node_modules
