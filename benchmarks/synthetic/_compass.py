"""A compass dial whose needle points at one of its letters (4 or 8 of them)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, gate, hard, verdict
from groundeval.programs import GroundSpec, Program

FONT = cv2.FONT_HERSHEY_SIMPLEX
LETTERS_4 = ("N", "E", "S", "W")
LETTERS_8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
MAX_OFFSET_DEG = 8.0
"""How far the needle may miss its letter's exact direction."""


def _point(cx: float, cy: float, bearing_deg: float, dist: float) -> np.ndarray:
    """Compass bearing (0 = up, clockwise) to an image point."""
    a = np.deg2rad(bearing_deg)
    return np.array([cx + dist * np.sin(a), cy - dist * np.cos(a)])


def bearing_check(letter_bearing: float, half_sector: float) -> str:
    """Expression: the single ray's bearing lies within the letter's sector."""
    return (
        f"count(elements) == 1 and all(abs((e.bearing_deg - {letter_bearing:g} + 540) % 360 - 180)"
        f" < {half_sector:g} for e in elements)"
    )


def program_for(scene_id: str, difficulty: str, letters: list[str], asked: int) -> Program:
    """Does the needle point at a letter."""
    step = 360.0 / len(letters)
    spec = GroundSpec(
        helper="line",
        target="the needle, from its tail to its tip",
        proposer="opencv.lines",
        budget=2,
        min_count=1,
        max_count=1,
        fields={"bearing_deg": {"type": "number", "minimum": 0, "maximum": 360}},
    )
    letter = letters[asked]
    return Program(
        id=scene_id,
        prompt=f"A compass with the letters {', '.join(letters)} whose needle points at {letter}.",
        tags={"scene": "compass", "difficulty": difficulty, "axis": "spatial"},
        gates=[gate("g1", "Does the compass have a needle?", spec, "count(elements) == 1")],
        hard=[
            hard(
                "h1",
                f"Does the needle point at {letter}?",
                bearing_check(asked * step, step / 2),
                uses="g1",
            )
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Compass; the program asks whether the needle points at a given letter."""
    w, h = fx.SIZE_WH
    bg = tuple(int(v) for v in rng.integers(60, 140, 3))
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = bg
    letters = LETTERS_8 if rng.random() < 0.5 else LETTERS_4
    step = 360.0 / len(letters)
    radius = float(rng.uniform(170, 205))
    cx = w / 2 + float(rng.uniform(-40, 40))
    cy = h / 2 + float(rng.uniform(-12, 12))
    if difficulty == "hard":
        for _ in range(int(rng.integers(4, 9))):
            p1 = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            p2 = (p1[0] + int(rng.integers(-150, 150)), p1[1] + int(rng.integers(-150, 150)))
            cv2.line(img, p1, p2, fx.random_colour(rng), int(rng.integers(2, 5)), cv2.LINE_AA)
    c16 = (round(cx * 16), round(cy * 16))
    cv2.circle(img, c16, round(radius * 16), (235, 235, 230), -1, cv2.LINE_AA, 4)
    cv2.circle(img, c16, round(radius * 16), (40, 40, 40), 4, cv2.LINE_AA, 4)
    if difficulty != "clean":
        for k in range(36):
            a = k * 10.0
            inner, outer = _point(cx, cy, a, radius * 0.93), _point(cx, cy, a, radius * 0.99)
            cv2.line(
                img,
                tuple(np.round(inner).astype(int)),
                tuple(np.round(outer).astype(int)),
                (60, 60, 60),
                2,
                cv2.LINE_AA,
            )
    letter_boxes = {}
    for i, letter in enumerate(letters):
        scale = 0.9 if len(letter) == 1 else 0.65
        (tw, th), _ = cv2.getTextSize(letter, FONT, scale, 2)
        p = _point(cx, cy, i * step, radius * 0.8)
        org = (round(p[0] - tw / 2), round(p[1] + th / 2))
        cv2.putText(img, letter, org, FONT, scale, (30, 30, 30), 2, cv2.LINE_AA)
        letter_boxes[letter] = [
            float(org[0]),
            float(org[1] - th),
            float(org[0] + tw),
            float(org[1]),
        ]
    target = int(rng.integers(0, len(letters)))
    bearing = (target * step + float(rng.uniform(-MAX_OFFSET_DEG, MAX_OFFSET_DEG))) % 360
    tip = _point(cx, cy, bearing, radius * 0.62)
    tail = _point(cx, cy, bearing + 180, radius * 0.22)
    half = radius * 0.045
    left = _point(cx, cy, bearing - 90, half)
    right = _point(cx, cy, bearing + 90, half)
    needle_colour = (30, 30, 170) if rng.random() < 0.5 else (35, 35, 35)
    poly = np.array([tip, left, tail, right])
    cv2.fillPoly(img, [np.round(poly * 16).astype(np.int32)], needle_colour, cv2.LINE_AA, 4)
    cv2.circle(img, c16, round(half * 0.8 * 16), (200, 200, 200), -1, cv2.LINE_AA, 4)
    occluders: list[dict[str, Any]] = []
    if difficulty == "hard" and rng.random() < 0.6:
        a = float(rng.uniform(0, 360))
        p = _point(cx, cy, a, radius * 1.02)
        r = int(rng.integers(25, 45))
        cv2.circle(
            img,
            tuple(np.round(p).astype(int)),
            r,
            fx.random_colour(rng, saturated=False),
            -1,
            cv2.LINE_AA,
        )
        occluders.append(
            {"center_px": [round(float(p[0]), 2), round(float(p[1]), 2)], "radius_px": r}
        )
    truth_needle = {"tail_px": tail, "tip_px": tip}
    if difficulty != "clean":
        matrix = fx.rotation_matrix(float(rng.uniform(-2.0, 2.0)))
        img = fx.rotate(img, matrix)
        angle = -float(np.rad2deg(np.arctan2(matrix[1, 0], matrix[0, 0])))
        bearing = (bearing - angle) % 360
        truth_needle = {k: fx.move_points(v, matrix)[0] for k, v in truth_needle.items()}
        cx, cy = (float(v) for v in fx.move_points([[cx, cy]], matrix)[0])
    img = fx.degrade(img, difficulty, rng)

    asked = int(rng.integers(0, len(letters))) if rng.random() < 0.4 else target
    program = program_for(scene_id, difficulty, list(letters), asked)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(asked == target)}
    truth = {
        "letters": list(letters),
        "letter_boxes_px": letter_boxes,
        "target": letters[target],
        "bearing_deg": round(bearing, 3),
        "center_px": [round(float(cx), 2), round(float(cy), 2)],
        "radius_px": round(radius, 2),
        "needle_px": [
            [round(float(v), 2) for v in truth_needle["tail_px"]],
            [round(float(v), 2) for v in truth_needle["tip_px"]],
        ],
        "occluders": occluders,
        "answers": answers,
    }
    return Scene(scene_id, "compass", difficulty, seed, img, truth, [program])
