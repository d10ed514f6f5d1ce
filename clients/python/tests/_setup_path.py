"""Puts the package under test (clients/python) first on sys.path, whatever the working directory:
``python3 -m unittest discover -s clients/python/tests`` from the repository root works as well as
``python3 -m unittest discover -s tests`` from clients/python."""

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[1])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)
