"""Moved to :mod:`groundeval.programs.stats` (the run summary needs it); kept for old imports."""

from groundeval.programs.stats import *  # noqa: F403
from groundeval.programs.stats import __all__ as __all__
