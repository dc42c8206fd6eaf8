#!/usr/bin/env bash
# The whole book against its fixed cost, in one run: `make nbval` (every chapter executed by nbval,
# two workers, in the Makefile's order) against the same nbval run over one-cell notebooks, one per
# chapter, that hold only that chapter's imports and one myst_nb glue() call: the cost of starting
# every chapter's kernel, importing what it imports and gluing, which no chapter can avoid. The
# ratio says how much of `make nbval` is the chapters' own work (1 is the limit).
#
#   bash benchmarks/bench_book.sh [CHAPTER.ipynb ...]   (about as long as `make nbval`, plus a minute)
#
# With chapters given, only those (`make nbval NBVAL_ORDER=...`): e.g. the two shortest for a quick run.
# Both runs read the UCI files from DIRICHLET_DATA_DIR and use this tree's `.venv`. The ratio is
# meaningful on a quiet machine only: run nothing else meanwhile.
set -euo pipefail
cd "$(dirname "$0")/.."
here=$(pwd)
: "${DIRICHLET_DATA_DIR:?set DIRICHLET_DATA_DIR to the folder of the UCI files}"
export DIRICHLET_DATA_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make --no-print-directory data >/dev/null

# One notebook per chapter, in the Makefile's nbval order, holding the chapter's import statements.
if [ $# -gt 0 ]; then
  order="$*"
else
  order=$(make --no-print-directory -s -f Makefile -f - print-nbval-order <<'EOF'
print-nbval-order:
	@echo $(NBVAL_ORDER)
EOF
  )
fi
.venv/bin/python - "$tmp" $order <<'EOF'
import ast, sys
from pathlib import Path

import nbformat

out = Path(sys.argv[1])
for path in sys.argv[2:]:
    nb = nbformat.read(path, as_version=4)
    imports = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        try:
            tree = ast.parse(cell.source)
        except SyntaxError:  # a cell with IPython syntax: its imports are not read
            continue
        imports += [ast.get_source_segment(cell.source, node) for node in tree.body
                    if isinstance(node, (ast.Import, ast.ImportFrom))]
    source = "\n".join(dict.fromkeys(imports + ["from myst_nb import glue",
                                                 "glue('fixed_cost', 1.0, display=False)"]))
    fixed = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)], metadata=nb.metadata)
    nbformat.write(fixed, out / Path(path).name)
EOF
fixed_files=$(for f in $order; do printf '%s ' "$tmp/$(basename "$f")"; done)

seconds() {  # wall-clock seconds of the command "$@", its output kept in $tmp/log
  local start end
  start=$(date +%s.%N)
  "$@" >"$tmp/log" 2>&1 || { tail -20 "$tmp/log"; exit 1; }
  end=$(date +%s.%N)
  python3 -c "print(f'{$end - $start:.1f}')"
}
# shellcheck disable=SC2086  # the file lists are split on purpose
fixed() {
  env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH="$here" \
    .venv/bin/python -m pytest -q -p no:cacheprovider --nbval-lax $fixed_files -n 2 --dist loadfile --no-loadscope-reorder
}
seconds fixed >/dev/null  # a first, untimed run: byte-compiled caches and the disk cache warm for both
t_fixed=$(seconds fixed)
t_book=$(seconds make --no-print-directory nbval NBVAL_ORDER="$order")
n=$(echo $order | wc -w)
echo "fixed cost: $n kernels started, each chapter's imports and one glue(): ${t_fixed} s"
echo "make nbval ($n chapters), this tree ($(git rev-parse --short HEAD)$(git diff --quiet || echo ', with changes')): ${t_book} s"
python3 -c "print(f'ratio make nbval / fixed cost: {$t_book / $t_fixed:.2f}  (1 is the limit)')"
