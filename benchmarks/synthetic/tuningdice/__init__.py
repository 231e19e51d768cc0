"""Tuning-only dice photographs in a style the dice proposer has not seen.

Used to tune (never to report) the dice-counting proposer: ``generate(seed)`` returns a
:class:`~groundeval.benchmarks.synthetic._common.Scene` with the count, pip sum and the box,
pips and face colour of every die drawn.
"""

from ._render import STYLE_VERSION, generate

__all__ = ["STYLE_VERSION", "generate"]
