"""The experiment layer: data, preprocessing, the grid, its analysis, plotting and the command line.

Everything here reads files, builds pandas frames or draws figures; the numeric
core of :mod:`lib` (mechanisms, divergences, accounting, models) imports none
of it.

* :mod:`lib.experiments.data`: checksum-verified loaders of the eight UCI datasets of Table 1;
* :mod:`lib.experiments.preprocessing`: the seeded split and the encoding of Section 5.1, Table 1;
* :mod:`lib.experiments.networks`: the three Bayesian networks of Section 5.2 and Figure 6;
* :mod:`lib.experiments.grid`: one grid, model x privacy notion x mechanism x budget x repeat;
* :mod:`lib.experiments.analysis`: summaries, wide tables, two-mechanism comparisons;
* :mod:`lib.experiments.plotting`: the book's figure style and the experiment figures;
* :mod:`lib.experiments.cli`: ``python -m lib.experiments run ...``.
"""

from .analysis import compare, pivot, summarise
from .grid import NaiveBayesTask, NetworkTask, cell_seed, evaluate, run

__all__ = ["cell_seed", "compare", "evaluate", "NaiveBayesTask", "NetworkTask", "pivot", "run", "summarise"]
