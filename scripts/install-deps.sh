#!/bin/sh
# Installs the Debian packages gpusandbox needs to build and test.
# man-db: tests/cli/install.sh renders the installed man pages with man(1).
# Idempotent: skips apt entirely when every package is already present.
set -eu
# runc, crun, busybox-static, jq: tests/agent/run.sh runs containers under
# `gpusandbox agent` with both runtimes, on a busybox rootfs; podman: the
# same through podman (--rootfs, runc underneath).
# chromium: tests/audit-review/run.sh renders `gpusandbox audit plot`'s SVG
# to PNG headless, to check what a reviewer sees.
# libdw-dev: the call stacks of refused calls are symbolized with libdw.
# python3-yaml: tests/deploy reads deploy/'s manifests.
PKGS="build-essential pkg-config libseccomp-dev libcap-dev libjson-c-dev libdw-dev libfuse3-dev fuse3 python3 python3-yaml man-db runc crun podman busybox-static jq chromium"
# Test-only packages, each installed also by its own tier through
# scripts/install-test-pkgs.sh (a tier split may move them there alone):
# debootstrap: tests/deploy/image.sh builds deploy/Containerfile's root;
# prometheus-node-exporter: tests/metrics reads the metrics file with it;
# containerd: tests/agent's *-containerd cases (ctr run, runc underneath).
TEST_PKGS="debootstrap prometheus-node-exporter containerd"
# tests/deploy's offline schema validator and CEL evaluator
# (kubernetes-models, @bufbuild/cel, pinned in tests/deploy/package-lock.json),
# where npm is on the machine; without them that tier skips those parts and
# says so.
install_node_modules() {
	command -v npm >/dev/null || return 0
	deploy_tests="$(dirname "$0")/../tests/deploy"
	[ -d "$deploy_tests/node_modules/kubernetes-models" ] && [ -d "$deploy_tests/node_modules/@bufbuild/cel" ] &&
		return 0
	(cd "$deploy_tests" && npm ci --no-audit --no-fund --silent) ||
		echo "install-deps: npm ci in tests/deploy failed: its schema checks will be skipped" >&2
}
missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
for p in $TEST_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && { install_node_modules; exit 0; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
install_node_modules
