#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs every CI tier of gpusandbox's tests. Installs what it needs first.
# Builds with WERROR=1 (a warning is a CI failure). Ends with one line "N passed, M failed[, K skipped]".
set -u
cd "$(dirname "$0")/.." || exit 2
./scripts/install-deps.sh tests || { echo "check: could not install dependencies" >&2; exit 2; }
make -s -j"$(nproc)" WERROR=1 all tests || exit 2
exec ./tests/run-tests.sh
