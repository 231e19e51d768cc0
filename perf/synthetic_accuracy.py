"""Accuracy of offline grading against the synthetic benchmark's exact truth.

For every scene and difficulty, generates ``--n`` items, grounds each question
with its program's proposer through the real verify loop (``run_grounding``,
offline verifier), runs the program's check and compares the outcome with the
truth. Prints the share of decisions right, wrong and withheld (errors apart).

    .venv/bin/python perf/synthetic_accuracy.py --n 200
    .venv/bin/python perf/synthetic_accuracy.py --scenes dice --swap opencv.dice=yolo.dice

``--swap OLD=NEW`` grades with proposer NEW wherever a program names OLD (e.g. the
learned ``yolo.dice`` against the classical ``opencv.dice``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import time

from groundeval.benchmarks.synthetic import DIFFICULTIES, SCENES, encode_png, generate
from groundeval.grounding._loop import run_grounding
from groundeval.grounding.proposers import ocr  # noqa: F401  (registers every built-in)
from groundeval.judges._protocol import ImagePart
from groundeval.programs._checks import CheckError, run_check
from groundeval.state import Provenance, StateFile

PROVENANCE = Provenance(toolkit_version="perf")


async def grade(
    scene: str, difficulty: str, seed: int, swap: dict[str, str]
) -> list[tuple[str, str, str]]:
    """(question key, outcome, truth) for every question of one generated item."""
    s = generate(scene, difficulty, seed)
    h, w = s.image_bgr.shape[:2]
    image = ImagePart(encode_png(s.image_bgr), "image/png", (w, h))
    rows = []
    for program in s.programs:
        states: dict[str, StateFile] = {}
        for q in program.questions:
            source = program.state_source(q)
            if source is None:
                continue
            if source not in states:
                spec = program.question(source).ground
                assert spec is not None
                if spec.proposer in swap:
                    spec = spec.model_copy(update={"proposer": swap[spec.proposer], "params": {}})
                states[source] = await run_grounding(
                    image_bgr=s.image_bgr,
                    image=image,
                    spec=spec,
                    ask=q.ask,
                    item_id=s.id,
                    question_id=source,
                    provenance=PROVENANCE,
                )
            state = states[source]
            if state.status != "grounded":
                outcome = "withheld"
            else:
                try:
                    outcome = "pass" if run_check(q.check, state).score >= 1.0 else "fail"
                except CheckError:
                    outcome = "error"
            key = f"{program.id}/{q.id}"
            rows.append((key, outcome, s.truth["answers"][key]))
    return rows


def judge_row(outcome: str, truth: str) -> str:
    if outcome in ("withheld", "error"):
        return outcome
    return "right" if outcome == truth else "wrong"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="items per scene and difficulty")
    parser.add_argument("--seed", type=int, default=0, help="first seed")
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--difficulties", default=",".join(DIFFICULTIES))
    parser.add_argument("--json", action="store_true", help="print the table as JSON too")
    parser.add_argument("--show-wrong", action="store_true", help="list every wrong decision")
    parser.add_argument("--swap", action="append", default=[], help="OLD=NEW proposer")
    args = parser.parse_args()
    swap = dict(pair.split("=", 1) for pair in args.swap)
    if swap:
        print("proposers swapped: " + ", ".join(f"{a} -> {b}" for a, b in swap.items()))
    table: dict[tuple[str, str], collections.Counter[str]] = {}
    wrong: list[str] = []
    started = time.perf_counter()
    header = (
        f"{'scene':<10}{'difficulty':<11}{'decisions':>10}{'right':>9}{'wrong':>9}"
        f"{'withheld':>10}{'error':>8}"
    )
    print(header, flush=True)
    for scene in args.scenes.split(","):
        for level in args.difficulties.split(","):
            counts: collections.Counter[str] = collections.Counter()
            for seed in range(args.seed, args.seed + args.n):
                for key, outcome, truth in await grade(scene, level, seed, swap):
                    verdict = judge_row(outcome, truth)
                    counts[verdict] += 1
                    if verdict == "wrong":
                        wrong.append(f"{key}: said {outcome}, truth {truth}")
            table[(scene, level)] = counts
            print(_line(scene, level, counts), flush=True)
    for level in args.difficulties.split(","):
        total: collections.Counter[str] = collections.Counter()
        for (_, lv), counts in list(table.items()):
            if lv == level:
                total.update(counts)
        table[("ALL", level)] = total
        print(_line("ALL", level, total))
    print(f"\n{args.n} items per scene and difficulty, {time.perf_counter() - started:.0f} s")
    if args.show_wrong:
        print("\n".join(wrong))
    if args.json:
        print(json.dumps({f"{s}/{lv}": _shares(c) for (s, lv), c in table.items()}, indent=2))


def _shares(counts: collections.Counter[str]) -> dict[str, float]:
    n = sum(counts.values()) or 1
    return {k: round(counts[k] / n, 4) for k in ("right", "wrong", "withheld", "error")}


def _line(scene: str, level: str, counts: collections.Counter[str]) -> str:
    shares = _shares(counts)
    return (
        f"{scene:<10}{level:<11}{sum(counts.values()):>10}"
        + "".join(f"{shares[k]:>9.2%}" for k in ("right", "wrong"))
        + f"{shares['withheld']:>10.2%}{shares['error']:>8.2%}"
    )


if __name__ == "__main__":
    asyncio.run(main())
