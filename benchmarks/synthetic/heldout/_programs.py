"""The held-out style's programs: the in-style builders themselves, one per scene kind.

The held-out style must be graded by exactly the questions, ground specs and checks
of the in-style suite, so it builds nothing of its own: each name here is the
in-style module's builder, fed with the facts the held-out renderer drew.
"""

from __future__ import annotations

from groundeval.benchmarks.synthetic import (
    _bars,
    _clock,
    _coins,
    _compass,
    _dice,
    _latent,
    _reflection,
    _rows,
    _shadows,
    _sun,
)

dice = _dice.program_for
dice_math = _latent.program_for
coins = _coins.program_for
bars = _bars.program_for
compass = _compass.program_for
sun = _sun.program_for
shadows = _shadows.program_for
rows = _rows.program_for
reflection = _reflection.program_for
clock = _clock.clock_program
clock_world = _clock.world_program
clock_counterfactual = _clock.counterfactual_program
