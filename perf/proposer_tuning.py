"""Tuning figures of the dice and coin proposers at default parameters (never a reported accuracy).

Runs one proposer call per image (no verify loop) on the *tuning* images: the
in-style scenes (``benchmarks.synthetic.generate``) and their harder variants
(``benchmarks.synthetic._tuning``: any face colour, large pips, metals on wood,
cloth, gradients and scikit-image textures, JPEG), seeds ``--seed`` to
``--seed + --n - 1`` (the tuning range is 0-999). An image is

* *withheld* when the proposal has unexplained regions or problems, or an
  element fails the field schema (``pips``/``radius_px`` is ``None``);
* *exact* when it is decided and the count (and pip sum) equal the truth;
* *wrong* when it is decided and they do not.

    .venv/bin/python perf/proposer_tuning.py --n 200 [--show-wrong]
"""

from __future__ import annotations

import argparse
import collections
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic import generate
from groundeval.benchmarks.synthetic._tuning import coins_scene, dice_scene
from groundeval.grounding._protocol import Proposal
from groundeval.grounding.proposers import opencv_circles, opencv_contours, opencv_dice
from groundeval.grounding.proposers._cv import CVProposer
from groundeval.programs._model import GroundSpec

Truth = dict[str, Any]
Source = Callable[[int], Iterator[tuple[str, np.ndarray, Truth]]]


def outcome(proposal: Proposal, truth: Truth, field: str) -> str:
    """``withheld``, ``exact`` or ``wrong`` for one image."""
    if proposal.unexplained or proposal.problems:
        return "withheld"
    values = [e.fields.get(field) for e in proposal.elements]
    if any(v is None for v in values) or not values:
        return "withheld"
    if len(values) != truth["count"]:
        return "wrong"
    if field == "pips" and sum(int(v) for v in values) != truth["pip_sum"]:
        return "wrong"
    return "exact"


def in_style(scene: str) -> Source:
    def items(seed: int) -> Iterator[tuple[str, np.ndarray, Truth]]:
        for level in ("clean", "moderate", "hard"):
            s = generate(scene, level, seed)
            yield level, s.image_bgr, s.truth

    return items


def variants(scene: str) -> Source:
    def items(seed: int) -> Iterator[tuple[str, np.ndarray, Truth]]:
        s = dice_scene(seed) if scene == "dice" else coins_scene(seed)
        yield s.truth["table"], s.image_bgr, s.truth

    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma list of row names to run")
    parser.add_argument("--show-wrong", action="store_true")
    args = parser.parse_args()
    rows: list[tuple[str, Source, CVProposer, str]] = [
        ("dice in-style", in_style("dice"), opencv_dice.DiceProposer(), "pips"),
        ("dice variants", variants("dice"), opencv_dice.DiceProposer(), "pips"),
        ("coins in-style", in_style("coins"), opencv_contours.ContoursProposer(), "radius_px"),
        ("coins variants", variants("coins"), opencv_contours.ContoursProposer(), "radius_px"),
        ("coins variants/circles", variants("coins"), opencv_circles.CirclesProposer(),
         "radius_px"),
    ]  # fmt: skip
    only = set(filter(None, args.only.split(",")))
    print(f"TUNING figures, seeds {args.seed}-{args.seed + args.n - 1}, one call, defaults")
    print(f"{'set':<24}{'group':<10}{'n':>5}{'exact':>8}{'withheld':>10}{'wrong':>8}{'ms':>7}")
    for name, source, proposer, field in rows:
        if only and name not in only:
            continue
        table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        spent: list[float] = []
        wrong: list[str] = []
        for seed in range(args.seed, args.seed + args.n):
            for group, image, truth in source(seed):
                spec = GroundSpec(helper="boxes", proposer=proposer.name)
                t0 = time.perf_counter()
                proposal = proposer.run(image, spec)
                spent.append(time.perf_counter() - t0)
                verdict = outcome(proposal, truth, field)
                table[group][verdict] += 1
                table["ALL"][verdict] += 1
                if verdict == "wrong":
                    got = [e.fields.get(field) for e in proposal.elements]
                    wrong.append(f"  {name} {group} seed {seed}: truth {truth['count']}, got {got}")
        ms = float(np.median(spent)) * 1000
        for group, c in sorted(table.items()):
            n = sum(c.values())
            print(
                f"{name:<24}{group:<10}{n:>5}{c['exact'] / n:>8.1%}{c['withheld'] / n:>10.1%}"
                f"{c['wrong'] / n:>8.1%}{ms:>7.1f}"
            )
        if args.show_wrong:
            print("\n".join(wrong))


if __name__ == "__main__":
    main()
