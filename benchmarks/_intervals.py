"""Moved to :mod:`groundeval.programs.intervals` (run summaries need it); kept for old imports."""

from groundeval.programs.intervals import *  # noqa: F403
from groundeval.programs.intervals import __all__ as __all__
