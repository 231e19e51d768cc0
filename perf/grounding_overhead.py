"""Local cost of one grounded question, relative to the unavoidable image work.

For every offline proposer: the time for propose + draw + verify + write the
overlay and the state file + run the check, divided by the time to decode the
image and encode one overlay PNG (what any grader that shows its evidence must
spend). Median of ``--runs`` repetitions (default 20) per proposer and image.

    .venv/bin/python perf/grounding_overhead.py [--runs 20] [--size 640x480] [--checks-only]

A second table times each CV proposer's self-check (residue, clutter, support):
``run(checks=True)`` over ``run(checks=False)``, medians, on its in-style scene
and a harder tuning variant (goal: at most 1.5); for ``opencv.dice`` also on a bare
table, where "no dice" is the claim and every look runs; for ``yolo.coins`` (the
network's own time is its cost) also on a probe-style sweep, where the coin-sized Hough
look runs.

Images come from ``groundeval.benchmarks.synthetic.generate`` when it exists,
otherwise from a small built-in drawing of coins and dice.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from groundeval.grounding._draw import draw_marks
from groundeval.grounding._images import decode_image
from groundeval.grounding._loop import GroundingTarget, encode_png, run_grounding
from groundeval.grounding._protocol import get_proposer, proposer_names
from groundeval.programs._checks import run_check
from groundeval.programs._model import GroundSpec
from groundeval.state import Provenance

HELPERS = {"opencv.lines": "line", "opencv.color_region": "boundary", "ocr": "text"}
"""Helper kind per proposer (anything else grounds boxes)."""
SCENES = {"ocr": "bars", "opencv.lines": "compass", "opencv.color_region": "sun",
          "opencv.dice": "dice", "yolo.dice": "dice"}  # fmt: skip
"""Synthetic scene per proposer (anything else uses coins)."""
ROWS: list[tuple[str, str, dict[str, Any]]] = [
    ("yolo.dice (.onnx)", "yolo.dice", {}),
    ("yolo.dice (.pt)", "yolo.dice", {"weights": "dice_yolov8n.pt"}),
    ("yolo.coins (.onnx)", "yolo.coins", {}),
    ("yolo.coins (.pt)", "yolo.coins", {"weights": "coins_yolov8n.pt"}),
]
"""Learned proposers need weights: one row per weights file (.pt needs the yolo extra)."""
NEEDS_WEIGHTS = {"yolo", "yolo.dice", "yolo.coins", "yoloworld", "sam", "fastsam"}


def builtin_image(scene: str, size_wh: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A plain drawing when the synthetic benchmark is not available."""
    width, height = size_wh
    rng = np.random.default_rng(seed)
    img = np.full((height, width, 3), (45, 100, 50), np.uint8)
    for _ in range(6):
        x, y = int(rng.integers(60, width - 60)), int(rng.integers(60, height - 60))
        if scene == "dice":
            cv2.rectangle(img, (x - 30, y - 30), (x + 30, y + 30), (245, 245, 245), -1)
            for dx, dy in [(-15, -15), (0, 0), (15, 15)]:
                cv2.circle(img, (x + dx, y + dy), 6, (20, 20, 20), -1)
        else:
            cv2.circle(img, (x, y), 30, (170, 190, 200), -1)
    cv2.putText(img, "Q3 42", (20, height - 20), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2)
    return img


def scene_image(proposer: str, size_wh: tuple[int, int]) -> tuple[np.ndarray, str]:
    """An image suited to the proposer, and where it came from."""
    scene = SCENES.get(proposer, "coins")
    try:
        from groundeval.benchmarks.synthetic import generate  # type: ignore[attr-defined]

        return generate(scene, "clean", 0).image_bgr, f"synthetic {scene}"
    except (ImportError, AttributeError, KeyError, ValueError):
        return builtin_image(scene, size_wh), f"built-in {scene}"


def median_ms(samples: list[float]) -> float:
    """Median of seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def measure(
    proposer: str, image_bgr: np.ndarray, runs: int, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Time the baseline and one grounded question ``runs`` times each."""
    png = encode_png(image_bgr)
    helper = HELPERS.get(proposer, "boxes")
    spec = GroundSpec(helper=helper, proposer=proposer, budget=1, params=params or {})  # type: ignore[arg-type]
    part = decode_image(png, Path("perf.png")).part
    baseline, grounded, propose, draw = [], [], [], []
    loop = asyncio.new_event_loop()
    status = ""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for i in range(runs):
            t0 = time.perf_counter()
            decoded = decode_image(png, Path("perf.png"))
            encode_png(decoded.bgr)
            baseline.append(time.perf_counter() - t0)

            t0 = time.perf_counter()
            state = loop.run_until_complete(
                run_grounding(
                    image_bgr=decoded.bgr, image=part, spec=spec, ask="perf", item_id=f"i{i}",
                    question_id="q", provenance=Provenance(toolkit_version="perf"),
                    overlays=GroundingTarget(folder, "overlays"),
                )
            )  # fmt: skip
            (folder / f"i{i}.json").write_text(state.model_dump_json())
            run_check("len(elements) >= 0", state)
            grounded.append(time.perf_counter() - t0)
            status = f"{state.status} ({len(state.elements)} el.)"

            t0 = time.perf_counter()
            elements = loop.run_until_complete(_propose_only(proposer, spec, decoded)).elements
            propose.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            encode_png(draw_marks(decoded.bgr, elements, spec.helper))
            draw.append(time.perf_counter() - t0)
    loop.close()
    base = median_ms(baseline)
    return {
        "baseline_ms": base,
        "grounded_ms": median_ms(grounded),
        "propose_ms": median_ms(propose),
        "draw_encode_ms": median_ms(draw),
        "ratio": median_ms(grounded) / base,
        "status": status,
    }


async def _propose_only(proposer: str, spec: GroundSpec, decoded: Any) -> Any:
    from groundeval.grounding._protocol import Feedback, ProposeRequest

    request = ProposeRequest(decoded.bgr, decoded.part, spec, "perf", Feedback())
    return await get_proposer(proposer).propose(request)


def self_check_ratio(proposer: str, image: np.ndarray, runs: int) -> tuple[float, float]:
    """Median ms of one proposal without and with the self-check."""
    from groundeval.grounding.proposers._cv import CVProposer

    p = get_proposer(proposer)
    if not isinstance(p, CVProposer):
        raise TypeError(f"{proposer} is not a CV proposer")
    spec = GroundSpec(helper=HELPERS.get(proposer, "boxes"), proposer=proposer)  # type: ignore[arg-type]
    bare, checked = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        p.run(image, spec, checks=False)
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        p.run(image, spec)
        checked.append(time.perf_counter() - t0)
    return median_ms(bare), median_ms(checked)


def print_self_checks(runs: int) -> None:
    """One row per CV proposer and image: proposer alone, with self-check, ratio."""
    from groundeval.benchmarks.synthetic import probe
    from groundeval.benchmarks.synthetic._tuning import coins_scene, dice_scene

    print(f"\nself-check overhead, median of {runs} runs (goal: ratio <= 1.5)")
    print(f"{'proposer':<22}{'image':<22}{'alone ms':>10}{'checked ms':>12}{'ratio':>7}")
    cases = [
        ("opencv.dice", "dice clean 0", generate_image("dice", 0)),
        ("opencv.dice", "tuning dice 0", dice_scene(0).image_bgr),
        ("opencv.dice", "no die (felt)", plain_table((480, 640))),
        ("opencv.contours", "coins clean 0", generate_image("coins", 0)),
        ("opencv.contours", "tuning coins 0", coins_scene(0).image_bgr),
        ("opencv.circles", "coins clean 0", generate_image("coins", 0)),
        ("opencv.blobs", "coins clean 0", generate_image("coins", 0)),
        ("yolo.coins", "coins clean 0", generate_image("coins", 0)),
        ("yolo.coins", "probe coins 7", probe.generate("coins", 7).image_bgr),
        ("opencv.lines", "compass clean 0", generate_image("compass", 0)),
        ("opencv.color_region", "sun clean 0", generate_image("sun", 0)),
    ]
    for proposer, label, image in cases:
        alone, checked = self_check_ratio(proposer, image, runs)
        print(f"{proposer:<22}{label:<22}{alone:>10.2f}{checked:>12.2f}{checked / alone:>7.2f}")


def plain_table(shape_hw: tuple[int, int], seed: int = 0) -> np.ndarray:
    """A green felt with sensor noise and nothing on it: "no dice" is checked hardest."""
    rng = np.random.default_rng(seed)
    felt = np.full((*shape_hw, 3), (45, 100, 50), np.float32)
    felt += rng.normal(0.0, 4.0, felt.shape).astype(np.float32)
    return np.clip(felt, 0, 255).astype(np.uint8)


def generate_image(scene: str, seed: int) -> np.ndarray:
    """An in-style synthetic image."""
    from groundeval.benchmarks.synthetic import generate

    return generate(scene, "clean", seed).image_bgr


def main() -> None:
    """Print one table row per offline proposer."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--size", default="640x480", help="built-in image size WxH")
    parser.add_argument("--checks-only", action="store_true", help="only the self-check table")
    args = parser.parse_args()
    if args.checks_only:
        print_self_checks(args.runs)
        return
    size = tuple(int(v) for v in args.size.lower().split("x"))
    names = [
        (n, n, {})
        for n in proposer_names()
        if n != "judge" and n not in NEEDS_WEIGHTS and not n.startswith("test.")
    ]
    header = (f"{'proposer':<22}{'image':<20}{'size':>10}{'base ms':>9}{'ground ms':>11}"
              f"{'propose':>9}{'draw+png':>10}{'ratio':>7}  status")  # fmt: skip
    print(f"median of {args.runs} runs; ratio = grounded question / (decode + encode one PNG)")
    print(header)
    print("-" * len(header))
    for name, proposer, params in [*names, *ROWS]:
        image, source = scene_image(proposer, (size[0], size[1]))
        h, w = image.shape[:2]
        try:
            row = measure(proposer, image, args.runs, params)
        except Exception as exc:  # a broken proposer is a row, not the end of the table
            print(f"{name:<22}{source:<20}{w:>5}x{h:<4} failed: {type(exc).__name__}: {exc}")
            continue
        print(
            f"{name:<22}{source:<20}{w:>5}x{h:<4}{row['baseline_ms']:>9.2f}{row['grounded_ms']:>11.2f}"
            f"{row['propose_ms']:>9.2f}{row['draw_encode_ms']:>10.2f}{row['ratio']:>7.2f}  "
            f"{row['status']}"
        )
    print_self_checks(args.runs)


if __name__ == "__main__":
    main()
