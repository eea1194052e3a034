#!/bin/sh
# SPDX-License-Identifier: MIT
# gen-rm-tables.sh - regenerate include/nvrm/v<branch>/*.def (the rows that
# differ from branch 580) from a git directory of
# NVIDIA/open-gpu-kernel-modules (a bare mirror is enough: it is read with
# git archive). Needs python3 and a C compiler; see docs/rm-tables.md.
#
#   scripts/gen-rm-tables.sh GITDIR [BRANCH:TAG ...]
#
# Without BRANCH:TAG arguments it regenerates the committed set: the newest
# tag of each branch that ../shared/reference/abi-drift.md measured.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 GITDIR [BRANCH:TAG ...]" >&2; exit 2; }
git_dir=$1; shift
[ $# -gt 0 ] || set -- 535:535.288.01 550:550.163.01 570:570.211.01 590:590.48.01 595:595.45.04
repo=$(cd "$(dirname "$0")/.." && pwd)
exec python3 "$repo/scripts/gen-rm-tables.py" --git "$git_dir" --repo "$repo" --base 580.142 "$@"
