"""Learned vs classical dice proposers on held-out synthetic scenes, per difficulty.

For every held-out dice scene (seeds 0..N-1; the shipped detector was trained on
seeds 900000+) each proposer grounds the scene's boxes through the real verify
loop (offline verifier, the scene's budget and field schema), then the scene's
own checks decide the count question (h1) and the pip-sum question (h2). Each
decision is right or wrong against the generator's truth, or withheld (budget
spent, or a check that cannot be evaluated, e.g. a pip sum over boxes that
carry no pips). Also reports the median proposer time per image.

    .venv/bin/python perf/detector_accuracy.py [--n 100] [--threads N]
    .venv/bin/python perf/detector_accuracy.py --style out --n 40   # out-of-style dice
    .venv/bin/python perf/detector_accuracy.py --weights-dir /tmp/new  # candidate weights

``--style out`` grades the out-of-style dice (``benchmarks/synthetic/outstyle``,
seeds 700000 up: a renderer the detector never saw) instead of the in-style
ones. ``--weights-dir`` grades ``dice_yolov8n.onnx`` / ``.pt`` from that folder
(trusted for .pt like ``--models-dir``) instead of the shipped ones.

Proposers: ``opencv.dice``; ``yolo`` (the detector alone, no pips);
``yolo.dice`` through ``.onnx``; and through ``.pt`` when ultralytics is installed.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import statistics
import time
from collections import Counter
from pathlib import Path
from typing import Any

from groundeval.benchmarks.synthetic._common import Scene
from groundeval.grounding._loop import run_grounding
from groundeval.grounding.models.train_dice import dice_scene
from groundeval.grounding.proposers import opencv_dice, yolo, yolo_dice  # noqa: F401
from groundeval.grounding.proposers._onnx import WeightsError
from groundeval.judges._protocol import ImagePart
from groundeval.programs._checks import CheckError, run_check
from groundeval.state import Provenance

DIFFICULTIES = ("clean", "moderate", "hard")


def variants(threads: int | None, folder: str | None = None) -> dict[str, dict[str, Any]]:
    """Proposer name and params (None: keep the scene's pip field schema) per row."""
    onnx = f"{folder}/dice_yolov8n.onnx" if folder else "dice_yolov8n.onnx"
    pt = f"{folder}/dice_yolov8n.pt" if folder else "dice_yolov8n.pt"
    rows: dict[str, dict[str, Any]] = {
        "opencv.dice": {"proposer": "opencv.dice", "params": {}},
        "yolo (detector alone)": {
            "proposer": "yolo",
            "params": {"weights": onnx, "threads": threads},
            "drop_fields": True,
        },
        "yolo.dice .onnx": {
            "proposer": "yolo.dice",
            "params": {"weights": onnx, "threads": threads},
        },
    }
    if importlib.util.find_spec("ultralytics") is not None:
        rows["yolo.dice .pt"] = {
            "proposer": "yolo.dice",
            "params": {"weights": pt, "threads": threads},
        }
    return rows


def scenes(style: str, n: int) -> list[tuple[str, Scene]]:
    """(group, scene) pairs: in-style per difficulty (seeds 0..n-1) or out-of-style."""
    if style == "out":
        from groundeval.benchmarks.synthetic import outstyle

        seeds = range(outstyle.REPORT_SEED0, outstyle.REPORT_SEED0 + n)
        return [("outstyle", outstyle.generate("dice", s)) for s in seeds]
    return [(d, dice_scene(d, s)) for d in DIFFICULTIES for s in range(n)]


def decide(check: str, state: Any) -> str:
    """Outcome of one check over one state: pass, fail or withheld."""
    if state.status != "grounded":
        return "withheld"
    try:
        return "pass" if run_check(check, state).score >= 1.0 else "fail"
    except CheckError:
        return "withheld"


async def grade(scene: Scene, row: dict[str, Any]) -> tuple[dict[str, str], float]:
    """Ground the scene with one proposer; decide h1 and h2; return outcomes and seconds."""
    program = scene.programs[0]
    base = program.gates[0].ground
    assert base is not None
    update: dict[str, Any] = {"proposer": row["proposer"], "params": row["params"]}
    if row.get("drop_fields"):
        update["fields"] = {}
    spec = base.model_copy(update=update)
    h, w = scene.image_bgr.shape[:2]
    image = ImagePart(data=scene.id.encode(), mime="image/png", size_wh=(w, h))
    t0 = time.perf_counter()
    state = await run_grounding(
        image_bgr=scene.image_bgr, image=image, spec=spec, ask=program.gates[0].ask,
        item_id=scene.id, question_id="g1", provenance=Provenance(toolkit_version="perf"),
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    outcomes = {}
    for q in program.hard:
        got = decide(str(q.check), state)
        truth = scene.truth["answers"][f"{program.id}/{q.id}"]
        outcomes[q.id] = got if got == "withheld" else ("right" if got == truth else "wrong")
    return outcomes, seconds


def main() -> None:
    """Print one table per question kind: right / wrong / withheld shares per difficulty."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100, help="scenes per difficulty")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--style", choices=["in", "out"], default="in")
    parser.add_argument("--weights-dir", default=None, help="grade the weights in this folder")
    args = parser.parse_args()
    if args.weights_dir:
        yolo.set_models_dir(args.weights_dir)
    rows = variants(args.threads, args.weights_dir and str(Path(args.weights_dir).resolve()))
    tallies: dict[tuple[str, str, str], Counter[str]] = {}
    times: dict[str, list[float]] = {name: [] for name in rows}
    groups = ["outstyle"] if args.style == "out" else list(DIFFICULTIES)
    for difficulty, scene in scenes(args.style, args.n):
        for name, row in rows.items():
            try:
                outcomes, seconds = asyncio.run(grade(scene, row))
            except WeightsError as exc:
                raise SystemExit(str(exc)) from exc
            times[name].append(seconds)
            for qid, outcome in outcomes.items():
                tallies.setdefault((name, qid, difficulty), Counter())[outcome] += 1
    print(f"{args.n} held-out dice scenes per group; shares right / wrong / withheld")
    for qid, label in (("h1", "count question (h1)"), ("h2", "pip-sum question (h2)")):
        print(f"\n{label}")
        print(f"{'proposer':<24}" + "".join(f"{d:>22}" for d in groups))
        for name in rows:
            cells = []
            for d in groups:
                c = tallies[(name, qid, d)]
                n = sum(c.values())
                cells.append(
                    f"{c['right'] / n:6.0%} {c['wrong'] / n:6.0%} {c['withheld'] / n:6.0%}"
                )
            print(f"{name:<24}" + "".join(f"{cell:>22}" for cell in cells))
    print("\nmedian grounding time per image (propose + verify, up to the budget)")
    for name, samples in times.items():
        print(f"{name:<24}{statistics.median(samples) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()
