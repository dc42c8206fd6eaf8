"""One cell of a grid: its seed, and how a grid's frame is laid out for each type of target.

Every (dataset, mechanism, budget) cell draws its noise from its own
``numpy.random.SeedSequence`` (:func:`cell_seed`), keyed by the seed and by the
names and value (not the positions), so a result does not depend on which other
cells are run or in which order. :data:`LAYOUTS` gives, per type of target, the
column of the swept budget and the target's other parameters.
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

import numpy as np

from lib.mechanisms.protocol import Mechanism, get
from lib.privacy.guarantees import ApproximateDP, Guarantee, RenyiDP


class Layout(NamedTuple):
    """How the frame of a grid of one type of target is laid out.

    Attributes
    ----------
    budget : str
        The column of the swept level.
    fixed : tuple of str
        The target's other parameters, shown as columns after it.
    attained : bool
        Whether the frame has an ``attained`` column (a target a mechanism may miss).
    """

    budget: str
    fixed: tuple
    attained: bool


#: The layout of each type of target a grid runs.
LAYOUTS = {RenyiDP: Layout("epsilon", (), False), ApproximateDP: Layout("epsilon_hat", ("delta",), True)}


def layout(target: Guarantee) -> Layout:
    """The :class:`Layout` of a grid of ``target``; a ValueError for a type no grid runs."""
    if not isinstance(target, Guarantee) or type(target) not in LAYOUTS:
        raise ValueError(f"target must be of type {' or '.join(t.__name__ for t in LAYOUTS)} "
                         f"(e.g. RenyiDP(5.0, 1.0)); got {target!r:.80}")
    return LAYOUTS[type(target)]


def runs_under(mechanism: str | type[Mechanism], target: Guarantee) -> bool:
    """Whether a grid of ``target`` runs ``mechanism``: it meets the type, or is a non-private reference."""
    cls = get(mechanism)
    return not cls.private or type(target) in cls.notions


def _key(text: str) -> int:
    return zlib.crc32(text.encode())


def budget_key(epsilon: float) -> str:
    """The budget as a seed key: ``epsilon`` to 12 significant digits.

    A budget grid such as ``np.logspace(-3, 1, 10)`` is computed with ``power``,
    whose last bit differs between CPUs (numpy's AVX-512 kernel gives
    ``0x1.eb18f59ead9cap-5`` for the fifth point, libm ``...9cbp-5``). Keyed by
    the exact value, one CPU drew the whole cell from another random stream; to
    12 digits both are ``0.0599484250319``. (A value within an ulp of a 12-digit
    rounding boundary would still split; ``tests/experiments/test_grid.py`` checks that
    the book's grids are far from one.)
    """
    return format(float(epsilon), ".12g")


def cell_seed(seed: int, dataset: str, model: str, epsilon: float) -> np.random.SeedSequence:
    """The seed sequence of one (dataset, model, epsilon) cell of a grid (budget by :func:`budget_key`)."""
    return np.random.SeedSequence(seed, spawn_key=(_key(dataset), _key(model), _key(budget_key(epsilon))))
