"""Execute notebooks in place, deterministically (the `make notebooks` step).

Like ``jupyter nbconvert --to notebook --execute --inplace``, with two settings
the command line cannot give: no timing metadata, and stream outputs of a cell
merged into one (a kernel may flush a cell's prints as one chunk or as several,
which would make re-executions differ byte for byte although nbval, which merges
streams itself, accepts both).

Usage: ``python tools/book/execute_notebook.py NOTEBOOK.ipynb [...]``
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor


def execute(path: Path, timeout: int = 1200) -> None:
    """Run every cell of ``path`` with its folder as working directory; write it back."""
    notebook = nbformat.read(path, as_version=4)
    client = ExecutePreprocessor(timeout=timeout, record_timing=False,
                                 coalesce_streams=True, kernel_name="python3")
    client.preprocess(notebook, {"metadata": {"path": str(path.parent)}})
    nbformat.write(notebook, path)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for name in sys.argv[1:]:
        execute(Path(name))
