"""Tests of lib.mechanisms.protocol: the mechanism base class, the release spec, the registry, and the
acceptance test of issue 10 (a new mechanism is one class, and every grid and command has it)."""

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.mechanisms.noise import (ClassicalGaussianMechanism, GaussianMechanism, LaplaceMechanism, SmoothedEstimate,
                           Uniform)
from lib.experiments import run
from lib.experiments.cli import main
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism, ExactCurveDirichlet
from lib.mechanisms.gohari.mechanism import GohariMechanism
from lib.models.naive_bayes import model_spec, release_parameters
from lib.mechanisms.protocol import (ApproximateDP, Guarantee, Mechanism, ModelCalibration, NotPrivate, PureDP, ReleaseSpec,
                          RenyiDP, ZeroConcentratedDP, get, names, register, unregister)

#: Every class the library registers, by name.
REGISTERED = {"dirichlet": DirichletMechanism, "dirichlet_exact": ExactCurveDirichlet, "gohari": GohariMechanism, "gaussian": GaussianMechanism,
              "laplace": LaplaceMechanism, "gaussian_classical": ClassicalGaussianMechanism,
              "mle": SmoothedEstimate, "random": Uniform}
#: Three releases: a class prior of 2 cells, then tables of 3 x 4 and 3 x 4 cells.
SPEC = ReleaseSpec(((1, 2), (3, 4), (3, 4)), 500, (0,))


# ----------------------------------------------------------------------------- the registry

def test_registry_names_and_lookup():
    assert set(REGISTERED) <= set(names())
    for name in set(names()) - set(REGISTERED):  # other modules' mechanisms, none from the core
        assert get(name).name == name and get(name).__module__ not in (
            "lib.mechanisms.dirichlet.mechanism", "lib.mechanisms.noise.mechanism", "lib.mechanisms.noise.estimates")
    for name, cls in REGISTERED.items():
        assert get(name) is cls and cls.name == name and cls.label
        assert get(cls) is cls  # a class passes through
    with pytest.raises(ValueError, match=r"mechanism must be one of \(.*'dirichlet'.*; got 'svm'"):
        get("svm")
    with pytest.raises(ValueError, match="mechanism must be one of"):
        get(None)
    assert {"dirichlet", "gohari", "gaussian", "laplace", "gaussian_classical"} <= set(names(notion=ApproximateDP))
    with pytest.raises(ValueError, match="notion must be a guarantee type"):
        names(notion="rdp")


def test_names_by_the_type_of_target():
    assert not {"gohari", "gaussian_classical", "mle", "random"} & set(names(notion=RenyiDP))
    assert {"dirichlet", "gaussian", "laplace"} <= set(names(notion=RenyiDP))
    assert {"mle", "random"} <= set(names(notion=NotPrivate))
    assert {"laplace", "random"} <= set(names(notion=PureDP))
    for name in names():
        assert all(isinstance(n, type) and issubclass(n, Guarantee) for n in get(name).notions)


def test_register_and_unregister():
    class Toy(Uniform):
        name = "toy_register"

    try:
        assert register(Toy) is Toy  # usable as a decorator
        assert get("toy_register") is Toy and names()[-1] == "toy_register"
    finally:
        unregister("toy_register")
    assert "toy_register" not in names()
    unregister("toy_register")  # removing a missing name is not an error

    class Nameless(Uniform):
        name = ""

    for bad in (Nameless, object, Uniform(), "random"):
        with pytest.raises(ValueError, match="only Mechanism subclasses with a name"):
            register(bad)


# ----------------------------------------------------------------------------- the base class

def test_configured_is_a_same_named_unregistered_variant():
    variant = GaussianMechanism.configured(clip_floor=1.0)
    assert issubclass(variant, GaussianMechanism) and variant is not GaussianMechanism
    assert variant.name == "gaussian" and variant.clip_floor == 1.0
    assert GaussianMechanism.clip_floor != 1.0 and get("gaussian") is GaussianMechanism
    assert all(m.floor == 1.0 for m in variant.calibrate(RenyiDP(5.0, 1.0), SPEC).releases)
    assert SmoothedEstimate.configured(smoothing=0.5).calibrate(NotPrivate(), SPEC).releases[1].smoothing == 0.5
    with pytest.raises(ValueError, match=r"no setting\(s\) \['floor'\]"):
        GaussianMechanism.configured(floor=1.0)  # an instance attribute, not a class setting
    with pytest.raises(ValueError, match="no setting"):
        GaussianMechanism.configured(release=None)  # methods are not settings


def test_a_renyi_target_is_split_equally_and_the_whole_is_stated():
    for name in ("dirichlet", "gaussian", "laplace"):
        cal = get(name).calibrate(RenyiDP(5.0, 0.6), SPEC)
        assert isinstance(cal, ModelCalibration) and cal.mechanism == name and cal.attained
        assert cal.parameters == {"lam": 5.0, "epsilon_release": pytest.approx(0.2, rel=1e-15)}
        assert len(cal.releases) == 3 and len({id(m) for m in cal.releases}) == 1  # one shared object
        assert cal.releases[0].epsilon == pytest.approx(0.2, rel=1e-15) and cal.releases[0].lam == 5.0
        assert cal.releases[0].guarantee == RenyiDP(5.0, 0.6).split(3)
        assert cal.guarantee.lam == 5.0 and cal.guarantee.epsilon == pytest.approx(0.6, rel=1e-15)
    with pytest.raises(ValueError, match="epsilon"):
        get("dirichlet").calibrate(RenyiDP(5.0, 0.0), SPEC)
    for bad in ((0.5, 1.0), ([1.0, 2.0], 5.0)):
        with pytest.raises((ValueError, TypeError)):
            RenyiDP(*bad)


def test_release_key_decides_which_releases_share_an_object():
    built = []

    class PerDomain(Uniform):
        name = "per_domain"

        @classmethod
        def release_key(cls, spec, index):
            return spec.shapes[index][1]

        @classmethod
        def _pure_release(cls, target, spec, index):
            built.append(index)
            return cls()

    cal = PerDomain.calibrate(PureDP(1.0), SPEC)
    assert built == [0, 1]  # one object per distinct domain size, built at its first release
    assert cal.releases[1] is cal.releases[2] and cal.releases[0] is not cal.releases[1]
    mle = SmoothedEstimate.calibrate(NotPrivate(), SPEC).releases  # the prior apart, unsmoothed
    assert [m.smoothing for m in mle] == [0.0, 0.1, 0.1] and mle[1] is mle[2]


def test_a_class_without_calibrations_refuses():
    class Bare(Mechanism):
        name = "bare"
        notions = ()

    for target in (RenyiDP(5.0, 1.0), ApproximateDP(1.0, 1e-5), PureDP(1.0), NotPrivate()):
        with pytest.raises(ValueError, match=f"'bare' mechanism cannot meet a {type(target).__name__} target; "
                                             "it meets nothing"):
            Bare.calibrate(target, SPEC)
    with pytest.raises(ValueError, match="target must be a privacy guarantee"):
        get("dirichlet").calibrate(1.0, SPEC)
    with pytest.raises(ValueError, match="cannot meet a ZeroConcentratedDP target; it meets RenyiDP, ApproximateDP"):
        get("dirichlet").calibrate(ZeroConcentratedDP(1.0), SPEC)
    with pytest.raises(ValueError, match="targets must all be of one type"):
        get("dirichlet").calibrate_many([RenyiDP(5.0, 1.0), ApproximateDP(1.0, 1e-5)], SPEC)
    with pytest.raises(TypeError, match="must define release"):
        Bare().release(np.ones(2))
    with pytest.raises(TypeError, match="must define guarantee"):
        _ = Bare().guarantee
    for name in ("gohari", "gaussian_classical"):
        with pytest.raises(ValueError, match="cannot meet a RenyiDP target; it meets ApproximateDP"):
            get(name).calibrate(RenyiDP(5.0, 1.0), SPEC)


def test_release_spec():
    spec = ReleaseSpec.of([np.ones(2), np.ones((3, 4)), np.zeros((3, 4))], 500)
    assert spec.shapes == SPEC.shapes and spec.n_total == 500 and spec.priors == ()
    assert spec.n_releases == 3 and spec.domain_sizes == (2, 4, 4)
    assert model_spec([4, 4], 2, 500)._replace(shapes=SPEC.shapes) == SPEC
    for bad in ([np.ones(1)], [np.ones((2, 2, 2))]):
        with pytest.raises(ValueError, match="d >= 2"):
            ReleaseSpec.of(bad, 10)
    with pytest.raises(ValueError, match="n_total"):
        ReleaseSpec.of([np.ones(2)], 0)


#: Issue 41, release specs: the inputs it names (d = 1, d = 2.5, zero rows, n_total -5 and NaN, an empty
#: spec) and their neighbours, each refused where the spec is made, with the field it names.
HOSTILE_SPECS = {
    "d = 1": ((((1, 1),), 100), ValueError, r"spec.shapes\[0\] d must be an integer in \[2, inf\); got 1"),
    "d = 0": ((((1, 0),), 100), ValueError, r"spec.shapes\[0\] d must be an integer in \[2"),
    "d = 2.5": ((((1, 2.5),), 100), TypeError, r"spec.shapes\[0\] d must be an integer .* float 2.5"),
    "d = 2.0": ((((1, 2.0),), 100), TypeError, r"spec.shapes\[0\] d must be an integer"),
    "d = True": ((((1, True),), 100), TypeError, r"spec.shapes\[0\] d must be an integer"),
    "d = '3'": ((((1, "3"),), 100), TypeError, r"spec.shapes\[0\] d must be an integer"),
    "zero rows": ((((0, 3),), 100), ValueError, r"spec.shapes\[0\] rows must be an integer in \[1, inf\); got 0"),
    "negative rows": ((((2, 3), (-1, 3)), 100), ValueError, r"spec.shapes\[1\] rows must be an integer in \[1"),
    "rows = 1.5": ((((1.5, 3),), 100), TypeError, r"spec.shapes\[0\] rows must be an integer"),
    "n_total -5": ((((1, 2),), -5), ValueError, r"spec.n_total must be an integer in \[1, 9007199254740992\]; got -5"),
    "n_total 0": ((((1, 2),), 0), ValueError, r"spec.n_total must be an integer in \[1"),
    "n_total NaN": ((((1, 2),), float("nan")), TypeError, r"spec.n_total must be an integer .* float nan"),
    "n_total inf": ((((1, 2),), float("inf")), TypeError, r"spec.n_total must be an integer"),
    "n_total 100.0": ((((1, 2),), 100.0), TypeError, r"spec.n_total must be an integer"),
    "n_total 10**400": ((((1, 2),), 10**400), ValueError, r"spec.n_total must be an integer in \[1, 9007199254740992\]"),
    "n_total None": ((((1, 2),), None), TypeError, r"spec.n_total must be an integer"),
    "empty spec": (((), 100), ValueError, r"spec.shapes must hold at least one \(rows, d\) pair"),
    "shapes None": ((None, 100), TypeError, r"spec.shapes must be a sequence of \(rows, d\) pairs; got NoneType"),
    "shapes string": (("12", 100), TypeError, r"spec.shapes must be a sequence"),
    "shapes array": ((np.array([[1, 2]]), 100), TypeError, r"spec.shapes must be a sequence"),
    "a triple": ((((1, 2, 3),), 100), TypeError, r"spec.shapes\[0\] must be a pair \(rows, d\)"),
    "a bare d": (((2,), 100), TypeError, r"spec.shapes\[0\] must be a pair \(rows, d\)"),
    "prior out of range": ((((1, 2),), 10, (1,)), ValueError, r"spec.priors must be an integer in \[0, 0\]; got 1"),
    "negative prior": ((((1, 2), (2, 2)), 10, (-1,)), ValueError, r"spec.priors must be an integer in \[0, 1\]"),
    "repeated prior": ((((1, 2), (2, 2)), 10, (0, 0)), ValueError, r"spec.priors must list distinct releases"),
    "priors an int": ((((1, 2),), 10, 0), TypeError, r"spec.priors must be a sequence of release indices"),
}


@pytest.mark.parametrize("case", HOSTILE_SPECS)
def test_a_release_spec_is_checked_where_it_is_made(case):
    args, error, match = HOSTILE_SPECS[case]
    with pytest.raises(error, match=match):
        ReleaseSpec(*args)
    if error is TypeError:  # an ArgumentTypeError, also a ValueError
        with pytest.raises(ValueError):
            ReleaseSpec(*args)


@pytest.mark.parametrize("args", [(((1, 2),), 1), (((1, 2),), 2**53), ([[5, 7], (1, 2)], np.int64(9), [1]),
                                  ((((np.int64(3), np.int32(4)),)), 10)])
def test_the_neighbours_of_hostile_specs_are_accepted_and_normalised(args):
    spec = ReleaseSpec(*args)
    assert all(type(rows) is int and type(d) is int for rows, d in spec.shapes)
    assert type(spec.n_total) is int and isinstance(spec.shapes, tuple) and isinstance(spec.priors, tuple)
    assert spec._replace() == spec
    with pytest.raises(ValueError, match=r"spec.shapes\[0\] d must be"):
        spec._replace(shapes=((1, 1),))


TARGETS = {RenyiDP: RenyiDP(5.0, 1.0), ApproximateDP: ApproximateDP(1.0, 1e-5), PureDP: PureDP(1.0),
           ZeroConcentratedDP: ZeroConcentratedDP(0.5), NotPrivate: NotPrivate()}


@pytest.mark.parametrize("not_a_spec", [None, [((1, 2),), 100], (((1, 2),), 100), {"shapes": ((1, 2),)}, "spec"])
@pytest.mark.parametrize("name", [n for n in names() if get(n).notions])
def test_every_calibration_refuses_what_is_not_a_spec(name, not_a_spec):
    cls = get(name)
    target = TARGETS[cls.notions[0]]
    with pytest.raises(TypeError, match=r"spec must be a lib.mechanisms.protocol.ReleaseSpec"):
        cls.calibrate(target, not_a_spec)
    with pytest.raises(TypeError, match=r"spec must be a lib.mechanisms.protocol.ReleaseSpec"):
        cls.calibrate_many([target], not_a_spec)


# ----------------------------------------------------------------------------- guarantees

def test_guarantee_of_every_registered_class():
    dirichlet = DirichletMechanism._renyi_release(RenyiDP(5.0, 0.5), SPEC, 0)
    assert dirichlet.guarantee == RenyiDP(5.0, 0.5)  # at the calibrated order only (no curve)
    # from (r, alpha): Algorithm 1 at the order and level that give them (Theorem 1)
    stated = DirichletMechanism.from_concentration(0.5, 9.0).guarantee
    again = DirichletMechanism(stated.epsilon, stated.lam)
    assert stated.lam == 5.0 and (again.r, again.alpha) == (pytest.approx(0.5, rel=1e-12), pytest.approx(9.0, rel=1e-12))
    assert DirichletMechanism.from_concentration(0.5, 0.9).guarantee == NotPrivate()
    given = DirichletMechanism.from_concentration(0.5, 9.0, ApproximateDP(1.0, 1e-6))
    assert given.guarantee == ApproximateDP(1.0, 1e-6)
    with pytest.raises(ValueError, match="guarantee must be a Guarantee"):
        DirichletMechanism.from_concentration(0.5, 9.0, 1.0)
    gauss = GaussianMechanism._renyi_release(RenyiDP(5.0, 0.5), SPEC, 0).guarantee
    assert isinstance(gauss, RenyiDP) and (gauss.lam, gauss.epsilon) == (5.0, 0.5)
    # the closed form lam * 2 / (2 sigma^2) at every order: the calibrated level at lam = 5
    assert gauss.curve(5.0) == pytest.approx(0.5, rel=1e-14)
    assert gauss.curve(10.0) == pytest.approx(1.0, rel=1e-14)
    laplace = LaplaceMechanism._renyi_release(RenyiDP(5.0, 0.5), SPEC, 0)
    assert laplace.guarantee == RenyiDP(5.0, 0.5) and laplace.guarantee.curve(5.0) == pytest.approx(0.5, rel=1e-12)
    assert laplace.pure_epsilon == pytest.approx(2.0 / laplace.scale, rel=1e-15)
    # RDP at any order is at most the pure-DP level (Mironov 2017, Prop. 3)
    assert laplace.guarantee.curve(50.0) <= laplace.pure_epsilon
    assert LaplaceMechanism.from_scale(4.0).guarantee == PureDP(0.5)
    classical = ClassicalGaussianMechanism.calibrate(ApproximateDP(0.5, 1e-5), SPEC)
    assert all(isinstance(m, ClassicalGaussianMechanism) for m in classical.releases)
    sigma = classical.parameters["sigma"]
    # one release of a sigma without an order: rho-zCDP, rho = 2 / (2 sigma^2); the whole is the target
    assert isinstance(classical.releases[0].guarantee, ZeroConcentratedDP)
    assert classical.releases[0].guarantee.rho == pytest.approx(1 / sigma**2, rel=1e-14)
    assert classical.releases[0].guarantee.curve(3.0) == pytest.approx(3.0 / sigma**2, rel=1e-14)
    assert classical.guarantee == ApproximateDP(0.5, 1e-5)
    pure = LaplaceMechanism.calibrate(PureDP(0.6), SPEC)
    assert pure.releases[0].scale == 2 / 0.2 and pure.guarantee.epsilon == pytest.approx(0.6, rel=1e-15)
    assert SmoothedEstimate().guarantee == NotPrivate() and not SmoothedEstimate.private
    assert Uniform().guarantee == PureDP(0.0) and not Uniform.private
    # Gohari et al.'s per-release (eps_hat/m, delta/m): checked in test_approximate_dp.py
    assert GohariMechanism._calibrate_approximate.__func__ is not Mechanism._calibrate_approximate.__func__
    assert ApproximateDP(0.1, 1e-6) == ApproximateDP(0.1, 1e-6)
    with pytest.raises(AttributeError):
        PureDP(1.0).epsilon = 2.0  # frozen


# ----------------------------------------------------------------------------- acceptance of issue 10

class AddOne(Mechanism):
    """Toy: the smoothed estimate (f + 1)/sum(f + 1) of every vector (no privacy)."""

    name, label, private = "add_one", "Add-one", False
    guarantee = NotPrivate()

    def release(self, counts, rng=None):
        s = np.asarray(counts, dtype=float) + 1.0
        return s / s.sum(axis=-1, keepdims=True)

    notions = (NotPrivate,)


@pytest.fixture
def add_one():
    register(AddOne)
    try:
        yield AddOne
    finally:
        unregister(AddOne.name)


@pytest.mark.parametrize("privacy", [RenyiDP(5.0, 1.0), ApproximateDP(1.0, 1e-5)])
def test_a_new_mechanism_runs_in_every_grid(add_one, splits, networks, privacy):
    budgets = np.array([0.1, 1.0])
    x = "epsilon" if isinstance(privacy, RenyiDP) else "epsilon_hat"
    nb = run("naive-bayes", ["add_one", "dirichlet"], budgets, target=privacy, data=splits, n_repeats=2,
             progress=False)
    bn = run("bayesian-network", ["add_one"], budgets, target=privacy, data=networks, n_repeats=2,
             progress=False)
    for res, metric in ((nb, "cross_entropy"), (bn, "log_likelihood")):
        toy = res[res.model == "add_one"]
        assert len(toy) == 2 * 2 * 2 and np.isfinite(toy[metric]).all()
        assert sorted(set(toy[x])) == list(budgets)
        assert (toy.groupby("dataset")[metric].nunique() == 1).all()  # no noise, the same at every budget
    # the grid scored exactly (f + 1)/sum(f + 1): the smoothed estimate with pseudo-count 1 everywhere
    from lib.experiments.tasks import NaiveBayes as NaiveBayesTask

    task = NaiveBayesTask(splits["one"])
    ones = [SmoothedEstimate(1.0)] * task.spec.n_releases
    want = task.score([release_parameters(*task.counts, ones)])["cross_entropy"][0]
    got = nb[(nb.model == "add_one") & (nb.dataset == "one")].cross_entropy
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.needs_data
@pytest.mark.parametrize("model", ["naive-bayes", "bayesian-network"])
@pytest.mark.parametrize("privacy", ["rdp", "dp"])
def test_a_new_mechanism_runs_from_the_command_line(add_one, tmp_path, capsys, model, privacy):
    out = tmp_path / "out"
    assert main(["run", "--model", model, "--privacy", privacy, "--out", str(out), "--datasets",
                 "germancredit", "--mechanisms", "add_one", "mle", "--n-epsilons", "2", "--n-repeats", "2",
                 "--no-progress"]) == 0
    stem = f"{model.replace('-', '_')}_{privacy}"
    assert sorted(p.name for p in out.iterdir()) == [f"{stem}.csv", f"{stem}.json"]  # no temporary file left
    res = pd.read_csv(out / f"{stem}.csv")
    assert set(res.model) == {"add_one", "mle"} and set(res.dataset) == {"GermanCredit"}
    assert len(res) == 2 * 2 * 2
    record = json.loads((out / f"{stem}.json").read_text())
    assert record["mechanisms"] == ["add_one", "mle"] and record["rows"] == len(res)
    assert record["datasets"] == ["GermanCredit"] and record["privacy"] == privacy
    assert f"wrote {len(res)} rows" in capsys.readouterr().out


def _on_simplex(y):
    assert np.all(np.isfinite(y)) and np.all(y > 0)
    # a sum of d doubles each rounded once: a few units of 1e-16
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=0, atol=1e-12)


MECHANISMS = [DirichletMechanism(1.0, 2.0), GaussianMechanism(1.0, 2.0), LaplaceMechanism(1.0, 2.0)]


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
@settings(max_examples=40, deadline=None)
@given(exponent=st.floats(0, 307.5), d=st.integers(2, 6), seed=st.integers(0, 2**32 - 1))
def test_release_of_counts_up_to_the_double_range_is_on_the_simplex(mech, exponent, d, seed):
    counts = np.random.default_rng(seed).uniform(0, 1, size=(3, d)) * 10.0**exponent
    _on_simplex(mech.release(counts, rng=seed))


@pytest.mark.parametrize("mech", MECHANISMS, ids=lambda m: type(m).__name__)
def test_the_reported_examples(mech):
    y = mech.release([1e308, 1e308], rng=0)  # all zeros (Dirichlet) or NaN before the fix
    _on_simplex(y)
