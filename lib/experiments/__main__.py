"""``python -m lib.experiments``: see :mod:`lib.experiments.cli`."""

import sys

from lib.experiments.cli import main

sys.exit(main())
