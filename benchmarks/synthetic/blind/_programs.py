"""The blind style's programs: the in-style builders themselves, one per scene kind.

The blind style is graded by exactly the questions, ground specs and checks of the
in-style suite, so it builds nothing of its own: each name here is the in-style
module's builder, fed with the facts the blind renderer drew.
"""

from __future__ import annotations

from groundeval.benchmarks.synthetic import _coins, _dice, _latent

dice = _dice.program_for
dice_math = _latent.program_for
coins = _coins.program_for
