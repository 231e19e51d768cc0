"""Dice whose pips must satisfy arithmetic the prompt only implies: a product and an order.

Latent reasoning: the prompt names a result ("pips multiply to 24", "rising from
left to right"), not the faces, so the grader must count and compute. The dice
are drawn by the dice scene; the faces are read by ``opencv.dice`` and the
``arithmetic`` check does the sums.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from groundeval.benchmarks.synthetic import _dice
from groundeval.benchmarks.synthetic._common import (
    Scene,
    count_word,
    gate,
    hard,
    verdict,
    wrong_int,
)
from groundeval.programs import NamedCheck, Program


def program_for(scene_id: str, difficulty: str, n: int, claim: int) -> Program:
    """Product and left-to-right order of the pips."""
    noun = "die" if n == 1 else "dice"
    return Program(
        id=scene_id,
        prompt=f"{count_word(n).capitalize()} {noun} whose pips multiply to {claim}, "
        "laid out so the pip counts rise from left to right.",
        tags={"scene": "dice_math", "difficulty": difficulty, "axis": "latent"},
        gates=[
            gate("g1", "Is there at least one die?", _dice.ground_spec(), "count(elements) >= 1")
        ],
        hard=[
            hard(
                "h1",
                f"Do the pips multiply to {claim}?",
                NamedCheck(
                    name="arithmetic", args={"op": "product", "field": "pips", "equals": claim}
                ),
                uses="g1",
                weight=2.0,
            ),
            hard(
                "h2",
                "Do the pip counts rise from left to right?",
                NamedCheck(
                    name="arithmetic", args={"op": "increasing", "field": "pips", "order_by": "x"}
                ),
                uses="g1",
            ),
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Dice; the program asks for the product of the pips and for their left-to-right order."""
    base = _dice.make(scene_id, difficulty, seed, rng)
    dice = base.truth["dice"]
    pips = [int(d["pips"]) for d in dice]
    product = math.prod(pips)
    claim = product if rng.random() < 0.6 else wrong_int(rng, product, 1, 6 ** len(pips), 4)
    by_x = [d["pips"] for d in sorted(dice, key=lambda d: d["xyxy_px"][0] + d["xyxy_px"][2])]
    rising = all(b > a for a, b in itertools.pairwise(by_x))
    program = program_for(scene_id, difficulty, len(pips), claim)
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(claim == product),
        f"{scene_id}/h2": verdict(rising),
    }
    truth = {key: value for key, value in base.truth.items() if key != "answers"} | {
        "product": product,
        "pips_left_to_right": by_x,
        "answers": answers,
    }
    return Scene(scene_id, "dice_math", difficulty, seed, base.image_bgr, truth, [program])
