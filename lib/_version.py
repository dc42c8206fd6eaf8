"""The package version, read from the installed distribution's metadata (``pyproject.toml``).

Kept out of ``lib/__init__`` so that the command line can print ``--version``
without importing the numeric core.
"""

from importlib import metadata

DISTRIBUTION = "dirichlet-mechanism-book"

try:
    __version__ = metadata.version(DISTRIBUTION)
except metadata.PackageNotFoundError:  # pragma: no cover - a source tree that was never installed
    __version__ = "0+unknown"
