"""A long row of discs whose size is either kept or steadily grown, with one break or none.

Long-range consistency: the prompt asks for many elements sharing one attribute
(all the same size) or following a sequence (growing left to right). Wrong
images break it at one element far along the row, where generators drift. Discs
are found with ``opencv.contours`` and judged by the ``consistent`` check.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, count_word, gate, hard, verdict
from groundeval.programs import GroundSpec, NamedCheck, Program

SAME_TOLERANCE = 0.08
"""Radii within 8 % of the median count as the same size."""


def _radii(rng: np.random.Generator, n: int, mode: str, broken: bool) -> list[float]:
    if mode == "same":
        base = float(rng.uniform(15, 19))
        radii = [base] * n
        if broken:
            k = int(rng.integers(n // 2, n))
            radii[k] = base * float(rng.choice([0.7, 1.3]))
        return radii
    radii = [12.0 + 1.3 * i for i in range(n)]
    if broken:
        k = int(rng.integers(n // 2, n - 1))
        radii[k], radii[k + 1] = radii[k + 1], radii[k]
    return radii


def program_for(scene_id: str, difficulty: str, n: int, mode: str) -> Program:
    """All the same size, or growing left to right."""
    spec = GroundSpec(
        helper="boxes",
        target="each disc in the row",
        proposer="opencv.contours",
        params={"min_area_px": 150.0},
        budget=2,
        min_count=2,
    )
    args: dict[str, Any]
    if mode == "same":
        claim = f"{count_word(n)} discs in a row, all exactly the same size"
        ask = "Are all discs the same size?"
        args = {
            "field": "radius_px",
            "mode": "same",
            "tolerance": SAME_TOLERANCE,
            "relative": True,
        }
    else:
        claim = f"{count_word(n)} discs in a row, each one a little larger than the one on its left"
        ask = "Does every disc grow from left to right?"
        args = {"field": "radius_px", "mode": "increasing", "order_by": "x"}
    return Program(
        id=scene_id,
        prompt=claim[0].upper() + claim[1:] + ".",
        tags={"scene": "rows", "difficulty": difficulty, "axis": "long_range"},
        gates=[gate("g1", "Is there a row of discs?", spec, "count(elements) >= 2")],
        hard=[
            hard("h1", ask, NamedCheck(name="consistent", args=args), uses="g1", weight=2.0),
            hard("h2", f"Are there {count_word(n)} discs?", f"count(elements) == {n}", uses="g1"),
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """A row of 8-11 discs; the program asks for one shared size or a steady growth."""
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = tuple(int(v) for v in rng.integers(20, 60, 3))
    n = int(rng.integers(8, 12))
    mode = "same" if rng.random() < 0.5 else "increasing"
    broken = rng.random() < 0.45
    radii = _radii(rng, n, mode, broken)
    gap = (w - 40) / n
    y0 = h / 2 + float(rng.uniform(-60, 60))
    slope = float(rng.uniform(-0.15, 0.15))
    colour = (int(rng.integers(190, 240)), int(rng.integers(190, 240)), int(rng.integers(190, 240)))
    discs = []
    for i, r in enumerate(radii):
        x = 20 + gap * (i + 0.5)
        y = y0 + slope * (x - w / 2)
        cv2.circle(img, (round(x * 16), round(y * 16)), round(r * 16), colour, -1, cv2.LINE_AA, 4)
        discs.append({"center_px": [round(x, 2), round(y, 2)], "radius_px": round(r, 2)})
    if difficulty == "hard":
        for _ in range(int(rng.integers(2, 5))):
            p = (int(rng.integers(0, w)), int(rng.choice([int(rng.integers(0, 80)), h - 40])))
            cv2.line(img, p, (p[0] + 60, p[1] + 10), (90, 90, 90), 2, cv2.LINE_AA)
    img = fx.degrade(img, difficulty, rng)
    program = program_for(scene_id, difficulty, n, mode)
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(not broken),
        f"{scene_id}/h2": "pass",
    }
    truth = {"mode": mode, "broken": broken, "discs": discs, "answers": answers}
    return Scene(scene_id, "rows", difficulty, seed, img, truth, [program])
