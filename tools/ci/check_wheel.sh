#!/usr/bin/env bash
# Build the wheel from a clean checkout, install it with its extras in a fresh virtual environment
# outside the repository, and run there what an outside user runs: the README's library snippet,
# the command line (--help, --version) and a scikit-learn Pipeline + cross_val_score on a DataFrame
# with string categories. Exit status 0 only if all of it works.
#
#   tools/ci/check_wheel.sh              # the committed HEAD (a clean clone)
#   CHECK_WHEEL_SOURCE=worktree tools/ci/check_wheel.sh   # the working tree's tracked and new files
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
base_python=${PYTHON:-$("$root/.venv/bin/python" -c 'import sys; print(sys._base_executable)' 2>/dev/null || command -v python3)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check_wheel.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

# 1. a clean source tree: a clone of HEAD, or (CHECK_WHEEL_SOURCE=worktree) the files git would commit
if [ "${CHECK_WHEEL_SOURCE:-head}" = worktree ]; then
  mkdir "$tmp/src"
  (cd "$root" && git ls-files -z --cached --others --exclude-standard \
     | tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$tmp/src"
  test -f "$tmp/src/pyproject.toml"
else
  git clone --quiet --no-local "$root" "$tmp/src"
fi
echo "check_wheel: source $(cd "$tmp/src" && git rev-parse --short HEAD 2>/dev/null || echo worktree)"

# 2. the wheel (setuptools from the build requirements, in an isolated build environment)
"$base_python" -m venv "$tmp/build"
"$tmp/build/bin/python" -m pip install --quiet --disable-pip-version-check build==1.6.1
"$tmp/build/bin/python" -m build --wheel --outdir "$tmp/dist" "$tmp/src" >/dev/null
wheel=$(ls "$tmp"/dist/*.whl)
echo "check_wheel: built $(basename "$wheel")"
"$tmp/build/bin/python" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
need = ["lib/__init__.py", "lib/_version.py", "lib/models/counts.py", "lib/experiments/__init__.py",
        "lib/experiments/cli.py", "lib/experiments/__main__.py"]
missing = [n for n in need if n not in names]
assert not missing, f"the wheel lacks {missing}"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel"
meta = next(zipfile.ZipFile(sys.argv[1]).read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
assert "License-Expression: MIT" in meta, "no SPDX licence expression"
for extra in ("experiments", "counts", "sklearn"):
    assert f"Provides-Extra: {extra}" in meta, extra
assert not [n for n in names if n.startswith(("tests/", "notebooks/", "tools/", "book/"))]
print(f"check_wheel: {len(names)} files; lib.experiments, LICENSE, SPDX licence and extras present")
PY

# 3. a fresh environment outside the repository, the wheel with its extras (versions of requirements.txt)
grep -v '^-e' "$root/requirements.txt" > "$tmp/constraints.txt"
"$base_python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$tmp/constraints.txt" \
  "${wheel}[experiments,counts,sklearn,interop]"
cd "$tmp"   # nothing of the repository on sys.path

# 4. what an outside user runs
"$tmp/venv/bin/python" - "$root/README.md" <<'PY'
import re, sys
import lib
assert "site-packages" in lib.__file__, lib.__file__
print("check_wheel: lib", lib.__version__, "from", lib.__file__)
readme = open(sys.argv[1]).read()
section = readme.split("## Using the mechanism", 1)[1]
snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
exec(compile(snippet, "README.md", "exec"), {})
print("check_wheel: the README's library snippet ran")
section = readme.split("## Composing releases", 1)[1]
for snippet in re.findall(r"```python\n(.*?)```", section, re.S):   # dp-accounting, then OpenDP
    exec(compile(snippet, "README.md", "exec"), {})
print("check_wheel: the README's dp-accounting and OpenDP snippets ran")
PY
"$tmp/venv/bin/dirichlet-experiments" --version
"$tmp/venv/bin/dirichlet-experiments" run --help >/dev/null
"$tmp/venv/bin/python" -m lib.experiments --version >/dev/null
t0=$(date +%s%N); "$tmp/venv/bin/dirichlet-experiments" run --help >/dev/null; t1=$(date +%s%N)
echo "check_wheel: dirichlet-experiments run --help took $(( (t1 - t0) / 1000000 )) ms"
"$tmp/venv/bin/python" - <<'PY'
import numpy as np, pandas as pd
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from lib import PrivateNaiveBayes
from lib.privacy.guarantees import RenyiDP

rng = np.random.default_rng(0)
y = rng.integers(2, size=600)
X = pd.DataFrame({"colour": np.where(rng.random(600) < 0.8, np.where(y == 1, "red", "blue"), "green"),
                  "size": np.where(rng.random(600) < 0.7, np.where(y == 1, "XL", "S"), "M")})
labels = np.array(["no", "yes"])[y]
model = PrivateNaiveBayes("dirichlet", RenyiDP(5.0, 4.0), categories=[["red", "green", "blue"], ["S", "M", "XL"]],
                          classes=["no", "yes"])
scores = cross_val_score(make_pipeline(FunctionTransformer(lambda df: df[["colour", "size"]]), model), X, labels, cv=3)
assert scores.min() > 0.7, scores
print("check_wheel: Pipeline + cross_val_score on string categories:", np.round(scores, 3).tolist())
PY
echo "check_wheel: all checks passed in $(( $(date +%s) - start )) s"
