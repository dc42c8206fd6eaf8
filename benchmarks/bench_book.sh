#!/usr/bin/env bash
# The whole book against an old commit, in one run: `make nbval` (every chapter executed by nbval,
# two workers) of OLD and of this tree, back to back on the same machine, and the ratio.
#
#   bash benchmarks/bench_book.sh [OLD_COMMIT]      (default e719718, where issue 30 was measured)
#
# OLD is cloned into a temporary folder and gets its own virtual environment (`make data`, about a
# minute from pip's cache); this tree's `.venv` is used as it is. Both read the UCI files from
# DIRICHLET_DATA_DIR. The ratio is meaningful on a quiet machine only: run nothing else meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-e719718}
here=$(pwd)
: "${DIRICHLET_DATA_DIR:?set DIRICHLET_DATA_DIR to the folder of the UCI files}"
export DIRICHLET_DATA_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$here" "$tmp/old"
git -C "$tmp/old" checkout -q "$old"
make -C "$tmp/old" --no-print-directory data >/dev/null
make --no-print-directory data >/dev/null

seconds() {  # wall-clock seconds of `make nbval` in folder $1
  local start end
  start=$(date +%s.%N)
  make -C "$1" --no-print-directory nbval >"$tmp/log" 2>&1 || { tail -20 "$tmp/log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}
t_old=$(seconds "$tmp/old")
t_new=$(seconds "$here")
echo "make nbval, old commit $(git -C "$tmp/old" rev-parse --short HEAD): ${t_old} s"
echo "make nbval, this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with changes')): ${t_new} s"
python3 -c "print(f'ratio new / old: {$t_new / $t_old:.2f}  (issue 30 asks for at most 0.60)')"
