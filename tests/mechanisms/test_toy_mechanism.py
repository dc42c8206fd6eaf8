"""A new mechanism is one small class: registered, it runs through every model, both notions, the grid and the CLI.

The toy is a Laplace mechanism written against the protocol alone (lib.mechanisms.protocol): it
meets a Renyi DP share per release (``_renyi_release``); its (eps_hat, delta) calibration is the
protocol's default, through Renyi DP at a searched order. (Mixed naive Bayes takes moment
mechanisms for its numerical attributes and releases its categorical tables itself: it takes no
histogram mechanism, so the toy does not run there.)
"""

from __future__ import annotations

import inspect
import json

import numpy as np
import pandas as pd
import pytest

from lib.experiments import run
from lib.experiments.cli import main
from lib.experiments.engine import DP_TARGET, RDP_TARGET
from lib.mechanisms.noise import clip_and_normalise, laplace_scale
from lib.mechanisms.protocol import Mechanism, get, names, register, unregister
from lib.models.bayesian_network import count_tables, network_guarantee, network_spec, release_tables
from lib.models.naive_bayes import PrivateNaiveBayes
from lib.privacy.accounting import rdp_to_dp
from lib.privacy.guarantees import ApproximateDP, RenyiDP


class Toy(Mechanism):
    """Laplace noise of scale b with (lam, eps)-RDP at l1-sensitivity 2, clipped and normalised."""

    name, label = "toy", "Toy"

    def __init__(self, target):
        self.target, self.scale = target, float(laplace_scale(target.epsilon, target.lam, 2.0))

    @property
    def guarantee(self):
        return self.target

    @classmethod
    def _renyi_release(cls, target, spec, index):
        return cls(target)

    def release(self, counts, rng=None):
        counts = np.asarray(counts, dtype=float)
        return clip_and_normalise(counts + np.random.default_rng(rng).laplace(0.0, self.scale, counts.shape))


@pytest.fixture
def toy():
    register(Toy)
    try:
        yield Toy
    finally:
        unregister(Toy.name)


def test_the_toy_is_under_20_lines():
    assert len(inspect.getsource(Toy).splitlines()) < 20


@pytest.mark.parametrize("target", [RenyiDP(5.0, 2.0), ApproximateDP(2.0, 1e-5)])
def test_the_toy_in_naive_bayes_and_a_network(toy, target, splits, networks):
    split = splits["one"]
    model = PrivateNaiveBayes("toy", target, random_state=0).fit(split.X_train, split.y_train, schema=split)
    proba = model.predict_proba(split.X_test)
    assert np.allclose(proba.sum(axis=1), 1) and model.predict(split.X_test).shape == split.y_test.shape
    g = model.guarantee_
    if isinstance(target, RenyiDP):   # K + 1 shares of the one split compose to the target
        assert g.lam == 5.0 and g.epsilon == pytest.approx(2.0, rel=1e-14)
        assert all(m.guarantee == target.split(len(split.n_values) + 1) for m in model.calibration_.releases)
    else:   # the protocol's default: Renyi DP at one order, converted by eq. (14)
        assert g == target
        composed = RenyiDP(model.calibration_.releases[0].target.lam,
                           sum(m.guarantee.epsilon for m in model.calibration_.releases))
        assert rdp_to_dp(composed.epsilon, composed.lam, target.delta) <= target.epsilon * (1 + 1e-9)
    net = networks["one"]
    spec = network_spec(net.n_values, net.parents, net.train.shape[0])
    cal = get("toy").calibrate(target, spec)
    logs = release_tables(count_tables(net.train, net.n_values, net.parents), cal, n_draws=2, rng=1)
    assert all(np.isfinite(t).all() for t in logs)
    assert network_guarantee(cal, len(net.n_values)) == cal.guarantee


@pytest.mark.parametrize("privacy", [RDP_TARGET, DP_TARGET])
def test_the_toy_in_every_grid(toy, splits, networks, privacy):
    budgets = np.array([0.5, 4.0])
    assert "toy" in names(notion=RenyiDP) and "toy" in names(notion=ApproximateDP)
    nb = run("naive-bayes", ["toy", "mle"], budgets, target=privacy, data=splits, n_repeats=2, progress=False)
    bn = run("bayesian-network", ["toy"], budgets, target=privacy, data=networks, n_repeats=2, progress=False)
    for res, metric in ((nb, "cross_entropy"), (bn, "log_likelihood")):
        mine = res[res.model == "toy"]
        assert len(mine) == 2 * 2 * 2 and np.isfinite(mine[metric]).all()


@pytest.mark.needs_data
@pytest.mark.parametrize("model", ["naive-bayes", "bayesian-network"])
@pytest.mark.parametrize("privacy", ["rdp", "dp"])
def test_the_toy_from_the_command_line(toy, tmp_path, model, privacy):
    out = tmp_path / "out"
    assert main(["run", "--model", model, "--privacy", privacy, "--out", str(out), "--datasets", "germancredit",
                 "--mechanisms", "toy", "--n-epsilons", "2", "--n-repeats", "2", "--no-progress"]) == 0
    stem = f"{model.replace('-', '_')}_{privacy}"
    res = pd.read_csv(out / f"{stem}.csv")
    assert set(res.model) == {"toy"} and len(res) == 2 * 2
    assert json.loads((out / f"{stem}.json").read_text())["mechanisms"] == ["toy"]
