#!/usr/bin/env bash
# Build the wheel from a clean checkout, install it with its extras in a fresh virtual environment
# outside the repository, beside PyPI's distribution `lib` and with a `lib/` folder of the user's own
# in the working directory, and run there what an outside user runs under the import name
# dirichlet_mechanism: the library snippets of PACKAGE.md (the wheel's description) and of the
# README (its `lib` read as dirichlet_mechanism), the command line (--help, --version) and a
# scikit-learn Pipeline + cross_val_score on a DataFrame with string categories. Exit status 0 only if
# all of it works.
#
#   tools/ci/check_wheel.sh              # the committed HEAD (a clean clone)
#   CHECK_WHEEL_SOURCE=worktree tools/ci/check_wheel.sh   # the working tree's tracked and new files
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
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
import ast, re, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
names = wheel.namelist()
need = ["dirichlet_mechanism/__init__.py", "dirichlet_mechanism/_version.py", "dirichlet_mechanism/py.typed",
        "dirichlet_mechanism/models/counts.py", "dirichlet_mechanism/models/naive_bayes/binning.py",
        "dirichlet_mechanism/experiments/__init__.py", "dirichlet_mechanism/experiments/cli.py",
        "dirichlet_mechanism/experiments/__main__.py",
        "dirichlet_mechanism/experiments/hellinger_audits.json"]   # chapter 12 reads it (load_audits)
missing = [n for n in need if n not in names]
assert not missing, f"the wheel lacks {missing}"
assert not [n for n in names if n.startswith("lib/")], "the wheel installs a package lib"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "no LICENSE in the wheel"
# no module of the wheel imports lib, or names a lib module in a string (importlib, registries)
for n in names:
    if n.endswith(".py"):
        for node in ast.walk(ast.parse(wheel.read(n).decode(), n)):
            mods = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                    [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else
                    [node.value] if isinstance(node, ast.Constant) and isinstance(node.value, str)
                    and re.fullmatch(r"lib(\.\w+)+", node.value) else [])
            bad = [m for m in mods if m == "lib" or m.startswith("lib.")]
            assert not bad, f"{n}:{node.lineno} refers to {bad}"
info = {n.rsplit("/", 1)[1]: wheel.read(n).decode() for n in names if ".dist-info/" in n}
meta = info["METADATA"]
assert "License-Expression: MIT" in meta, "no SPDX licence expression"
for extra in ("experiments", "counts", "sklearn", "spark", "interop"):
    assert f"Provides-Extra: {extra}" in meta, extra
assert "Project-URL: Paper, https://openreview.net/forum?id=lmr2WwlaFc" in meta
assert "# dirichlet-mechanism-book" in meta and "make book" not in meta, "the description is not PACKAGE.md"
assert "dirichlet_mechanism.experiments.cli:entry_point" in info["entry_points.txt"], info["entry_points.txt"]
assert re.search(r"dp-accounting<0\.7,>=0\.6|dp-accounting>=0\.6,<0\.7", meta), "no upper bound on dp-accounting"
assert not [n for n in names if n.startswith(("tests/", "notebooks/", "tools/", "book/"))]
print(f"check_wheel: {len(names)} files under dirichlet_mechanism/; py.typed, LICENSE, SPDX licence, extras, "
      "URL and description present; no module refers to lib")
PY

# 3. a fresh environment outside the repository: the wheel with its extras (versions of requirements.txt),
#    and PyPI's distribution `lib`, which installs a package of that name
grep -v '^-e' "$root/requirements.txt" > "$tmp/constraints.txt"
"$base_python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$tmp/constraints.txt" \
  "${wheel}[experiments,counts,sklearn,interop]"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "lib==4.0.0"
# a user's project with a lib/ folder of its own, the working directory of every check below
mkdir -p "$tmp/project/lib"
echo 'USERS_OWN_LIB = True' > "$tmp/project/lib/__init__.py"
cd "$tmp/project"

# 4. what an outside user runs
"$tmp/venv/bin/python" - "$root/README.md" "$root/PACKAGE.md" <<'PY'
import re, sys
from importlib import metadata
import lib
assert getattr(lib, "USERS_OWN_LIB", False), f"import lib is not the user's own folder: {lib.__file__}"
assert "lib/__init__.py" in [str(f) for f in metadata.files("lib")], "PyPI's lib is not installed beside it"
import dirichlet_mechanism
assert "site-packages" in dirichlet_mechanism.__file__, dirichlet_mechanism.__file__
print("check_wheel: dirichlet_mechanism", dirichlet_mechanism.__version__, "from", dirichlet_mechanism.__file__,
      "beside PyPI's lib and a local lib/ folder")


def as_installed(code):
    """A README snippet with the repository's name of the package read as the installed one."""
    code = re.sub(r"(?<![\w.])lib(?=\.[A-Za-z_])", "dirichlet_mechanism", code)
    code = re.sub(r"(?<![\w.])from lib import\b", "from dirichlet_mechanism import", code)
    return re.sub(r"(?<![\w.])import lib(?![\w.])", "import dirichlet_mechanism", code)


readme, package = open(sys.argv[1]).read(), open(sys.argv[2]).read()
snippets = re.findall(r"```python\n(.*?)```", package, re.S)
assert len(snippets) >= 3 and all("from lib" not in s for s in snippets)
for snippet in snippets:
    exec(compile(snippet, "PACKAGE.md", "exec"), {})
print(f"check_wheel: the {len(snippets)} snippets of PACKAGE.md ran")
section = readme.split("## Using the mechanism", 1)[1]
snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
exec(compile(as_installed(snippet), "README.md", "exec"), {})
print("check_wheel: the README's library snippet ran as dirichlet_mechanism")
section = readme.split("## Composing releases", 1)[1]
for snippet in re.findall(r"```python\n(.*?)```", section, re.S):   # dp-accounting, then OpenDP
    exec(compile(as_installed(snippet), "README.md", "exec"), {})
print("check_wheel: the README's dp-accounting and OpenDP snippets ran as dirichlet_mechanism")
PY
"$tmp/venv/bin/dirichlet-experiments" --version
"$tmp/venv/bin/dirichlet-experiments" run --help >/dev/null
"$tmp/venv/bin/python" -m dirichlet_mechanism.experiments --version >/dev/null
# the stored summaries of the full-size Hellinger audits that chapter 12 reads ship as package data
"$tmp/venv/bin/python" -c 'from dirichlet_mechanism.experiments import hellinger as hx; assert set(hx.load_audits()) == set(hx.RUNS)'
t0=$(date +%s%N); "$tmp/venv/bin/dirichlet-experiments" run --help >/dev/null; t1=$(date +%s%N)
echo "check_wheel: dirichlet-experiments run --help took $(( (t1 - t0) / 1000000 )) ms"
"$tmp/venv/bin/python" - <<'PY'
import numpy as np, pandas as pd
from sklearn.model_selection import cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from dirichlet_mechanism import PrivateNaiveBayes
from dirichlet_mechanism.privacy.guarantees import RenyiDP

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
