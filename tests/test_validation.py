"""lib.validation, the one place every argument of the library is checked: strings, booleans and
complex numbers are not numbers (issue 11, class 4).

Every real argument goes through ``lib.validation``; the error is an ``ArgumentTypeError``, a
TypeError that is also a ValueError (callers that catch ValueError keep working), and it names the
argument.
"""

from fractions import Fraction

import numpy as np
import pytest

from lib.privacy.guarantees import ApproximateDP, RenyiDP
from lib import (
    DirichletMechanism,
    GaussianMechanism,
    LaplaceMechanism,
    PrivateNaiveBayes,
    calibrate,
    dp_to_rdp,
    expected_kl_loss,
    fixed_order,
    min_order,
    random_neighbours,
    rdp_to_dp,
    trigamma,
)
from lib import validation
from lib.mechanisms.noise import calibration as noise_calibration
from lib.mechanisms.noise import clip_and_normalise, laplace_scale
from lib.mechanisms.gohari import gohari_calibrate
from lib.mechanisms.gohari.mechanism import GohariMechanism
from lib.models.naive_bayes import model_spec
from lib.mechanisms.protocol import ReleaseSpec

BAD_REALS = ["1", b"1", True, np.True_, 1 + 0j, 1 + 1j, np.complex128(1), None,
             ["1", "2"], [True, False], np.array([1 + 0j, 2]), [1.0, None]]


CALLS = {
    "DirichletMechanism epsilon": (lambda v: DirichletMechanism(v, 2.0), "epsilon"),
    "DirichletMechanism lam": (lambda v: DirichletMechanism(1.0, v), "lam"),
    "calibrate epsilon": (lambda v: calibrate(v, 2.0), "epsilon"),
    "calibrate l2_sq": (lambda v: calibrate(1.0, 2.0, l2_sq=v), "l2_sq"),
    "GaussianMechanism epsilon": (lambda v: GaussianMechanism(v, 2.0), "epsilon"),
    "LaplaceMechanism floor": (lambda v: LaplaceMechanism(1.0, 2.0, floor=v), "floor"),
    "laplace_scale epsilon": (lambda v: laplace_scale(v, 2.0), "epsilon"),
    "rdp_to_dp delta": (lambda v: rdp_to_dp(1.0, 2.0, v), "delta"),
    "dp_to_rdp epsilon_hat": (lambda v: dp_to_rdp(v, 2.0, 1e-5), "epsilon_hat"),
    "min_order epsilon_hat": (lambda v: min_order(v, 1e-5), "epsilon_hat"),
    "analytic_gaussian_sigma sensitivity": (lambda v: noise_calibration.analytic_gaussian_sigma(1.0, 1e-5, v), "sensitivity"),
    "gohari_calibrate epsilon_hat": (lambda v: gohari_calibrate(v, 1e-5, lam=5, n_total=100, d=3), "epsilon_hat"),
    "trigamma x": (lambda v: trigamma(v), "x"),
    "expected_kl_loss r": (lambda v: expected_kl_loss([1.0, 2.0], v, 1.0), "r"),
    "release counts": (lambda v: DirichletMechanism(1.0, 2.0).release(v, rng=0), "counts"),
    "clip_and_normalise noisy_counts": (lambda v: clip_and_normalise(v), "noisy_counts"),
    "PrivateNaiveBayes epsilon": (lambda v: PrivateNaiveBayes("dirichlet", privacy=RenyiDP(5.0, v)).fit(
        np.array([[0, 1], [1, 0]]), np.array([0, 1])), "epsilon"),
}


@pytest.mark.parametrize("bad", BAD_REALS, ids=repr)
@pytest.mark.parametrize("call", list(CALLS), ids=str)
def test_non_real_arguments_raise_a_type_error_naming_the_argument(call, bad):
    func, name = CALLS[call]
    if call == "PrivateNaiveBayes epsilon" and bad is None:
        return  # None means "not given" there (a ValueError says it is required)
    with pytest.raises(TypeError) as err:
        func(bad)
    assert str(err.value).startswith(name)
    assert isinstance(err.value, ValueError)  # backwards compatible with `except ValueError`


BAD_INTEGERS = [2.0, np.float64(2.0), "2", True, np.True_, 2 + 0j, None]


INTEGER_CALLS = {
    "dp_to_rdp n_releases": (lambda v: dp_to_rdp(1.0, 2.0, 1e-5, n_releases=v), "n_releases"),
    "fixed_order n_releases": (lambda v: fixed_order(1.0, 1e-5, n_releases=v), "n_releases"),
    "Guarantee.split m": (lambda v: RenyiDP(5.0, 1.0).split(v), "m"),
    "random_neighbours n_pairs": (lambda v: random_neighbours(v, 3, max_count=5, rng=0), "n_pairs"),
    "random_neighbours max_count": (lambda v: random_neighbours(2, 3, max_count=v, rng=0), "max_count"),
    "model_spec n_total": (lambda v: model_spec([2, 2], 2, v), "n_total"),
    "ReleaseSpec.of n_total": (lambda v: ReleaseSpec.of([np.ones(2)], v), "n_total"),
    "gohari d": (lambda v: gohari_calibrate(1.0, 1e-5, lam=5, n_total=100, d=v), "d"),
    "rng": (lambda v: DirichletMechanism(1.0, 2.0).release([1, 2], rng=v), "rng"),
}


@pytest.mark.parametrize("bad", BAD_INTEGERS, ids=repr)
@pytest.mark.parametrize("call", list(INTEGER_CALLS), ids=str)
def test_non_integer_counts_of_things_raise_a_type_error(call, bad):
    func, name = INTEGER_CALLS[call]
    if call == "rng" and bad is None:
        return  # None is a valid rng (fresh entropy)
    with pytest.raises(TypeError) as err:
        func(bad)
    assert str(err.value).startswith(name)


def test_gohari_mechanism_reports_a_type_error_instead_of_not_attained():
    spec = ReleaseSpec(((1, 3),), 100)
    with pytest.raises(TypeError, match="epsilon"):
        GohariMechanism.calibrate(ApproximateDP("1", 1e-5), spec)   # the target itself refuses a string


@pytest.mark.parametrize("good", [2, np.int32(2), np.float32(2.0), Fraction(2, 1), np.array(2.0), [2.0]])
def test_real_numbers_of_every_numeric_type_are_still_accepted(good):
    out = validation.positive(good, "x")
    assert out.dtype == float and float(np.ravel(out)[0]) == 2.0


def test_a_float_array_passes_without_a_copy():
    x = np.arange(1.0, 5.0)
    assert validation.positive(x, "x") is x


def test_release_parameters_refuses_string_counts():
    from lib.models.naive_bayes import model_spec as spec_of, release_parameters
    cal = DirichletMechanism.calibrate(RenyiDP(5.0, 1.0), spec_of([2], 2, 3))
    with pytest.raises(TypeError, match="class_counts"):
        release_parameters(["1", "2"], [np.ones((2, 2))], cal, rng=0)  # silently parsed before
