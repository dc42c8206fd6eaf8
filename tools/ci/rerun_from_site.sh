#!/usr/bin/env bash
# Rerun a chapter from what the built site ships, as a reader would (the `make rerun-check` step).
#
# 1. The source archive (rerun/*.tar.gz): unpack it in a fresh folder, install what `make lab`
#    installs (its own .venv from its requirements.txt), execute one chapter there and compare its
#    outputs with the ones the site shows (tools/ci/same_outputs.py, nbval's substitutions).
# 2. One downloaded chapter (the site's _sources/ copy, whose imports name the installed package)
#    with the wheel (rerun/*.whl) in a fresh virtual environment: the same comparison.
#
# Usage: tools/ci/rerun_from_site.sh [SITE] [CHAPTER]   (defaults: _build/html, 02_algorithm1)
set -euo pipefail
site=$(cd "${1:-_build/html}" && pwd)
chapter=${2:-02_algorithm1}
python=${PYTHON:-python3}
archive=$(ls "$site"/rerun/*.tar.gz)
wheel=$(ls "$site"/rerun/*.whl)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
shown="$site/_sources/notebooks/$chapter.ipynb"

echo "== 1. the source archive: $(basename "$archive")"
tar -xzf "$archive" -C "$work"
src=$(ls -d "$work"/*/)
src=${src%/}
# The archive carries no virtual environment, build or data: what the reader unpacks is the source.
test ! -e "$src/.venv" && test ! -e "$src/_build"
make -C "$src" --no-print-directory .venv/.installed >"$work/install.log" 2>&1 || { tail -20 "$work/install.log"; exit 1; }
cp "$src/notebooks/$chapter.ipynb" "$work/stored.ipynb"
(cd "$src" && .venv/bin/python tools/book/execute_notebook.py "notebooks/$chapter.ipynb")
"$src/.venv/bin/python" "$src/tools/ci/same_outputs.py" "$work/stored.ipynb" "$src/notebooks/$chapter.ipynb"

echo "== 2. one downloaded chapter and the wheel: $(basename "$wheel")"
"$python" -m venv "$work/reader"
# The book's pins for what the chapters extra names, so that the reader's numbers are the book's.
pins=$(grep -E '^(nbconvert|ipykernel|numpy|scipy|pandas|matplotlib|sympy|mpmath|tqdm|python-calamine|scikit-learn|dp-accounting|opendp|duckdb|pyarrow)==' "$src/requirements.txt")
myst_nb=$("$src/.venv/bin/python" -m pip list --format=freeze 2>/dev/null | grep -i '^myst-nb==')
# shellcheck disable=SC2086
"$work/reader/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel[chapters]" $pins "$myst_nb"
mkdir "$work/download"
cp "$shown" "$work/download/$chapter.ipynb"
! grep -qE '"(import lib|from lib[ .])' "$work/download/$chapter.ipynb"
(cd "$work/download" && "$work/reader/bin/jupyter" nbconvert --to notebook --execute --inplace "$chapter.ipynb" >/dev/null 2>&1)
"$src/.venv/bin/python" "$src/tools/ci/same_outputs.py" "$shown" "$work/download/$chapter.ipynb"
echo "rerun from the site: both passed"
