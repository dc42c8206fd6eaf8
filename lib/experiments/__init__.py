"""The experiment layer: data, preprocessing, the grid, its analysis, plotting and the command line.

Everything here reads files, builds pandas frames or draws figures; the numeric
core of :mod:`lib` (mechanisms, divergences, accounting, models) imports none
of it.

* :mod:`lib.experiments.datasets`: one entry per dataset (files and checksums, parser, label,
  public schema, public ranges, excluded columns, the paper's Table 1 row); the modules below
  read it, so a new dataset is one entry;
* :mod:`lib.experiments.data`: finding, downloading, verifying and loading the files;
* :mod:`lib.experiments.schema`: the public domains and classes, and the encoding they fix;
* :mod:`lib.experiments.public_bounds`: the public ranges of the numerical attributes;
* :mod:`lib.experiments.preprocessing`: the seeded split and the encoding of Section 5.1, Table 1;
* :mod:`lib.experiments.networks`: the three Bayesian networks of Section 5.2 and Figure 6;
* :mod:`lib.experiments.engine`: the one task engine, task x target x mechanism x budget x repeat x split;
* :mod:`lib.experiments.prepared`: :class:`~lib.experiments.prepared.Prepared`, the one type of prepared data;
* :mod:`lib.experiments.cells`: a grid cell's seed and the layout of a grid's frame per type of target;
* :mod:`lib.experiments.tasks`: the tasks of the engine, one module each, in an explicit registry;
* :mod:`lib.experiments.defaults`: the one table of the figures' defaults;
* :mod:`lib.experiments.verdicts`: every comparison the chapters make, each a typed verdict;
* :mod:`lib.experiments.analysis`: summaries and wide tables;
* :mod:`lib.experiments.plotting`: the book's figure style and the experiment figures;
* :mod:`lib.experiments.cli`: ``python -m lib.experiments run ...``;
* :mod:`lib.experiments.approximate_dp`: the approximate-DP measurements of chapter 9;
* :mod:`lib.experiments.hellinger`: the smoothed-Hellinger experiments of chapter 12.
"""

import importlib

#: The names of the package, each imported from its module on first use (module ``__getattr__``,
#: PEP 562): ``import lib.experiments`` (and ``python -m lib.experiments run --help``) does not
#: import pandas, the data loaders or the engine until a name of theirs is used.
_LAZY = {"pivot": "analysis", "summarise": "analysis", "cell_seed": "engine", "evaluate": "engine", "run": "engine"}

__all__ = ["cell_seed", "evaluate", "pivot", "run", "summarise"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
