"""``python -m lib.experiments``: see :mod:`lib.experiments.cli`."""

import sys

from .cli import main

sys.exit(main())
