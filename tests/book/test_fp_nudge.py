"""The second floating-point path of ``make nbval-fp`` (issue 29): ``tools/ci/fp_nudge/sitecustomize.py``.

The check is only as good as its perturbation: these tests start fresh interpreters with the
nudge switched on and verify that transcendental results really move by one ulp in the asked
direction, that exact results (integers) stay exact, and that ``out=``/``where=`` keep their
meaning. Without the variable nothing changes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import json, math
import numpy as np
import scipy.special as sc
from scipy.special import gammaln, logsumexp
x = np.array([0.3, 1.7, 12.5])
out = np.zeros(3)
np.log(x, out=out, where=np.array([True, False, True]))
print(json.dumps({
    "exp": float(np.exp(1.0)).hex(), "log": [v.hex() for v in np.log(x).tolist()],
    "exp0": float(np.exp(0.0)), "log1": float(np.log(1.0)), "pow": float(np.power(2.0, 3.0)),
    "gammaln": float(gammaln(3.5)).hex(), "gammaln2": float(gammaln(2.0)),
    "polygamma": float(sc.polygamma(1, 2.5)).hex(), "digamma": float(sc.digamma(2.5)).hex(),
    "math_log": math.log(2.0).hex(), "lse": float(logsumexp([1.0, 2.0])).hex(),
    "out": [v.hex() for v in out.tolist()], "int_exp": np.exp(np.array([1, 2])).dtype.str,
    "reduce": float(np.logaddexp.reduce(x)).hex(),
}))
"""


def probe(mode: str | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DIRICHLET_FP_NUDGE"}
    env["PYTHONPATH"] = str(ROOT / "tools" / "ci" / "fp_nudge")
    if mode is not None:
        env["DIRICHLET_FP_NUDGE"] = mode
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def plain():
    return probe(None)


def ulps(a: str, b: str) -> int:
    import numpy as np
    x, y = float.fromhex(a), float.fromhex(b)
    return int(np.sign(y - x)) * int(round(abs(y - x) / np.spacing(min(abs(x), abs(y)))))


@pytest.mark.parametrize("mode, step", [("up", 1), ("down", -1)])
def test_every_transcendental_moves_one_ulp(plain, mode, step):
    moved = probe(mode)
    for key in ("exp", "gammaln", "polygamma", "digamma", "math_log"):
        assert ulps(plain[key], moved[key]) == step, key
    assert [ulps(a, b) for a, b in zip(plain["log"], moved["log"])] == [step] * 3
    # logsumexp is built from exp and log: it moves, by a few ulps at most
    assert 1 <= abs(ulps(plain["lse"], moved["lse"])) <= 4


def test_exact_results_stay_exact_and_out_where_keep_their_meaning(plain):
    moved = probe("up")
    assert (moved["exp0"], moved["log1"], moved["pow"], moved["gammaln2"]) == (1.0, 0.0, 8.0, 0.0)
    assert moved["out"][1] == (0.0).hex()                        # where=False: untouched
    assert ulps(plain["out"][0], moved["out"][0]) == 1
    assert moved["int_exp"] == plain["int_exp"]
    assert moved["reduce"] == plain["reduce"]                    # reductions are not wrapped


def test_off_without_the_variable_and_refuses_an_unknown_mode(plain):
    import numpy as np
    assert plain["exp"] == float(np.exp(1.0)).hex()
    env = dict(os.environ, PYTHONPATH=str(ROOT / "tools" / "ci" / "fp_nudge"), DIRICHLET_FP_NUDGE="sideways")
    done = subprocess.run([sys.executable, "-c", "import numpy"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0 and "DIRICHLET_FP_NUDGE must be" in done.stderr
