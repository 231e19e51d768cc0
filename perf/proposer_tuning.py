"""Tuning figures of the dice and coin proposers at default parameters (never a reported accuracy).

Runs one proposer call per image (no verify loop) on the *tuning* images: the
in-style scenes (``benchmarks.synthetic.generate``) and their harder variants
(``benchmarks.synthetic._tuning``: any face colour, large pips, metals on wood,
cloth, gradients and scikit-image textures, JPEG), and dice of a fourth style drawn
for tuning only (``benchmarks.synthetic.tuningdice``: rounded, bevelled and see-through
faces, oblique views, felt, wood, tiles, paper, marble and photographs; by ``opencv.dice``,
``yolo.dice`` and both agreeing), seeds ``--seed`` to
``--seed + --n - 1`` (the tuning range is 0-999). An image is

* *withheld* when the proposal has unexplained regions or problems, or an
  element fails the field schema (``pips``/``radius_px`` is ``None``);
* *exact* when it is decided and the count (and pip sum) equal the truth;
* *wrong* when it is decided and they do not.

    .venv/bin/python perf/proposer_tuning.py --n 200 [--show-wrong]

``--outstyle-seeds A:B`` instead scores out-of-style scenes (``benchmarks/synthetic/outstyle``)
of seeds A to B-1, which must lie below ``outstyle.REPORT_SEED0`` (the reported range is never
tuned on): every question goes through the real verify loop (offline verifier, the program's
budget) at default parameters, and right / wrong / withheld per question and the share of
images with every question right (exact) are printed per proposer.

    nice -n 10 .venv/bin/python perf/proposer_tuning.py --outstyle-seeds 1000:1120 --jobs 2
"""

from __future__ import annotations

import argparse
import collections
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic import generate, tuningdice
from groundeval.benchmarks.synthetic._tuning import coins_scene, dice_scene
from groundeval.grounding._protocol import Proposal
from groundeval.grounding.proposers import opencv_circles, opencv_contours, opencv_dice, yolo_dice
from groundeval.grounding.proposers._cv import CVProposer
from groundeval.programs._model import GroundSpec

Truth = dict[str, Any]
Source = Callable[[int], Iterator[tuple[str, np.ndarray, Truth]]]


def outcome(proposal: Proposal, truth: Truth, field: str) -> str:
    """``withheld``, ``exact`` or ``wrong`` for one image."""
    if proposal.unexplained or proposal.problems:
        return "withheld"
    values = [e.fields.get(field) for e in proposal.elements]
    if any(v is None for v in values):
        return "withheld"
    if len(values) != truth["count"]:  # none found, nothing unexplained: "none" decided
        return "wrong"
    if field == "pips" and sum(int(v) for v in values) != truth["pip_sum"]:
        return "wrong"
    return "exact"


class Agreement(CVProposer):
    """Two dice proposers, decided only when both decide the same pips (a tuning figure).

    The consensus verifier's rule without the loop, and looser: the pips are compared as
    sorted lists, not die by die over boxes matched by IoU.
    """

    name = "opencv.dice+yolo.dice"

    def __init__(self) -> None:
        self.pair = (opencv_dice.DiceProposer(), yolo_dice.YoloDiceProposer())

    def run(self, image_bgr: np.ndarray, spec: GroundSpec, *args: Any, **kw: Any) -> Proposal:
        """The first proposal when both decide alike, else one with a problem."""
        first, second = (p.run(image_bgr, spec.model_copy(update={"proposer": p.name}))
                         for p in self.pair)  # fmt: skip
        pips = [sorted(e.fields.get("pips") or 0 for e in q.elements) for q in (first, second)]
        decided = all(not (q.unexplained or q.problems) for q in (first, second))
        if decided and pips[0] == pips[1]:
            return first
        return Proposal(elements=first.elements, problems=["the two proposers disagree"])


def in_style(scene: str) -> Source:
    def items(seed: int) -> Iterator[tuple[str, np.ndarray, Truth]]:
        for level in ("clean", "moderate", "hard"):
            s = generate(scene, level, seed)
            yield level, s.image_bgr, s.truth

    return items


def tuning_dice(seed: int) -> Iterator[tuple[str, np.ndarray, Truth]]:
    """The fourth style (``benchmarks/synthetic/tuningdice``), tuning only; grouped by table."""
    s = tuningdice.generate(seed)
    yield s.truth["table"].split("-")[0], s.image_bgr, s.truth


def variants(scene: str) -> Source:
    def items(seed: int) -> Iterator[tuple[str, np.ndarray, Truth]]:
        s = dice_scene(seed) if scene == "dice" else coins_scene(seed)
        yield s.truth["table"], s.image_bgr, s.truth

    return items


OUTSTYLE_PATHS: dict[str, list[str]] = {
    "dice": ["opencv.dice", "yolo.dice"],
    "coins": ["opencv.contours", "opencv.circles", "opencv.blobs", "yolo.coins"],
    "rows": ["opencv.contours"],
    "bars": ["ocr"],
    "compass": ["opencv.lines"],
    "sun": ["opencv.color_region"],
}
"""Proposers scored per out-of-style scene kind (``--outstyle-scenes`` picks the kinds)."""


def seed_range(text: str) -> range:
    """``A:B`` as ``range(A, B)``; B must not reach the reported out-of-style seeds."""
    from groundeval.benchmarks.synthetic.outstyle import REPORT_SEED0

    first, _, last = text.partition(":")
    seeds = range(int(first), int(last))
    if not seeds or seeds.start < 0:
        raise SystemExit(f"--outstyle-seeds {text!r}: want A:B with 0 <= A < B")
    if seeds.stop > REPORT_SEED0:
        raise SystemExit(
            f"--outstyle-seeds {text!r}: seeds from {REPORT_SEED0} up are the reported range; "
            "tune below it"
        )
    return seeds


def grade_outstyle(task: tuple[str, int, str]) -> tuple[list[str], list[str]]:
    """Verdicts (right / wrong / withheld / error) of one out-of-style item's questions.

    Graded exactly as ``perf/synthetic_accuracy.py`` grades its out-of-style items (one
    grading loop for tuning and reporting), plus a note for each wrong decision.
    """
    from synthetic_accuracy import Task, grade, verdict  # perf/ is on sys.path

    from groundeval.benchmarks.synthetic.outstyle import DIFFICULTY

    scene, seed, path = task
    rows = grade(Task("out", scene, DIFFICULTY, seed, path))
    verdicts = [verdict(outcome, truth) for _, outcome, truth in rows]
    notes = [
        f"  {path} {scene} seed {seed} {key}: said {outcome}, truth {truth}"
        for (key, outcome, truth), v in zip(rows, verdicts, strict=True)
        if v == "wrong"
    ]
    return verdicts, notes


def run_outstyle(seeds: range, scenes: list[str], jobs: int, show_wrong: bool) -> None:
    """Right / wrong / withheld per question and exact images, per scene kind and proposer."""
    tasks = [(scene, seed, path) for scene in scenes for path in OUTSTYLE_PATHS[scene]
             for seed in seeds]  # fmt: skip
    print(f"TUNING figures, out-of-style seeds {seeds.start}-{seeds.stop - 1} (below the "
          "reported range), verify loop, defaults")  # fmt: skip
    print(f"{'scene':<9}{'proposer':<22}{'images':>7}{'right':>7}{'wrong':>7}{'withh.':>7}"
          f"{'error':>7}{'wrong/dec':>10}{'exact':>8}")  # fmt: skip
    counts: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    notes: list[str] = []
    with ProcessPoolExecutor(max_workers=max(1, jobs), initializer=_one_thread) as pool:
        for (scene, _, path), (verdicts, wrong) in zip(
            tasks, pool.map(grade_outstyle, tasks, chunksize=2), strict=True
        ):
            c = counts[(scene, path)]
            c.update(verdicts)
            c["images"] += 1
            c["exact"] += all(v == "right" for v in verdicts)
            notes.extend(wrong)
    for (scene, path), c in counts.items():
        decided = c["right"] + c["wrong"]
        print(
            f"{scene:<9}{path:<22}{c['images']:>7}{c['right']:>7}{c['wrong']:>7}"
            f"{c['withheld']:>7}{c['error']:>7}{c['wrong'] / max(decided, 1):>10.1%}"
            f"{c['exact'] / max(c['images'], 1):>8.0%}"
        )
    if show_wrong:
        print("\n".join(notes))


def _one_thread() -> None:
    os.environ.setdefault("GROUNDEVAL_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="comma list of row names to run")
    parser.add_argument("--show-wrong", action="store_true")
    parser.add_argument(
        "--outstyle-seeds", default="", help="A:B: score out-of-style seeds A..B-1 (B <= 700000)"
    )
    parser.add_argument("--outstyle-scenes", default="dice,coins", help="comma list of kinds")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (out-of-style)")
    args = parser.parse_args()
    if args.outstyle_seeds:
        scenes = [k for k in args.outstyle_scenes.split(",") if k]
        unknown = sorted(set(scenes) - set(OUTSTYLE_PATHS))
        if unknown:
            raise SystemExit(f"--outstyle-scenes: unknown {unknown}; known {list(OUTSTYLE_PATHS)}")
        run_outstyle(seed_range(args.outstyle_seeds), scenes, args.jobs, args.show_wrong)
        return
    rows: list[tuple[str, Source, CVProposer, str]] = [
        ("dice in-style", in_style("dice"), opencv_dice.DiceProposer(), "pips"),
        ("dice variants", variants("dice"), opencv_dice.DiceProposer(), "pips"),
        ("dice tuningdice", tuning_dice, opencv_dice.DiceProposer(), "pips"),
        ("dice tuningdice/yolo", tuning_dice, yolo_dice.YoloDiceProposer(), "pips"),
        ("dice tuningdice/agree", tuning_dice, Agreement(), "pips"),
        ("coins in-style", in_style("coins"), opencv_contours.ContoursProposer(), "radius_px"),
        ("coins variants", variants("coins"), opencv_contours.ContoursProposer(), "radius_px"),
        ("coins in-style/circles", in_style("coins"), opencv_circles.CirclesProposer(),
         "radius_px"),
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
