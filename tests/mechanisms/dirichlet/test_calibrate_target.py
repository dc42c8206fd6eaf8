"""``lib.calibrate`` (Lines 1-2 of Algorithm 1) refuses a privacy target and names the route that
takes one: a mechanism's ``calibrate(target, spec)``."""

from __future__ import annotations

import pytest

import lib
from lib.mechanisms.dirichlet.mechanism import DirichletMechanism
from lib.mechanisms.protocol import ReleaseSpec
from lib.mechanisms.registry import get
from lib.privacy.guarantees import ApproximateDP, RenyiDP


@pytest.mark.parametrize("target", [RenyiDP(5, 1.0), ApproximateDP(1.0, 1e-5)])
def test_a_guarantee_is_refused_with_the_route_that_takes_it(target):
    with pytest.raises(TypeError) as error:
        lib.calibrate(target, 5)
    message = str(error.value)
    assert isinstance(error.value, ValueError)  # ArgumentTypeError is both
    assert message.startswith("epsilon of calibrate")
    assert "DirichletMechanism.calibrate(target, spec)" in message
    assert 'lib.mechanisms.registry.get("dirichlet").calibrate(target, spec)' in message


def test_the_named_route_calibrates_the_refused_target():
    """The route the message names takes the target that was refused (both spellings give one
    calibration), and Lines 1-2 at a level and an order still give a positive scale."""
    import numpy as np

    counts = np.array([119, 74, 618, 272, 13, 187])
    spec = ReleaseSpec.of([counts], n_total=int(counts.sum()))
    target = RenyiDP(5, 1.0)
    via_class = DirichletMechanism.calibrate(target, spec)
    via_registry = get("dirichlet").calibrate(target, spec)
    assert via_class.guarantee == via_registry.guarantee
    assert via_class.releases[0].r == via_registry.releases[0].r > 0
    assert lib.calibrate(1.0, 5).r > 0
