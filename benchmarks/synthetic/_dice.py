"""Dice with pips on a coloured table."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import (
    Scene,
    count_word,
    gate,
    hard,
    verdict,
    wrong_int,
)
from groundeval.programs import GroundSpec, Program

TABLES: dict[str, tuple[int, int, int]] = {
    "green": (45, 115, 40),
    "blue": (140, 80, 30),
    "red": (40, 40, 150),
    "brown": (35, 70, 120),
    "grey": (80, 80, 80),
}
PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(0.27, 0.27), (0.73, 0.73)],
    3: [(0.27, 0.27), (0.5, 0.5), (0.73, 0.73)],
    4: [(0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)],
    5: [(0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)],
    6: [(0.27, 0.25), (0.73, 0.25), (0.27, 0.5), (0.73, 0.5), (0.27, 0.75), (0.73, 0.75)],
}
PIP_RADIUS = 0.085
"""Pip radius as a share of the die side."""


def _place(rng: np.random.Generator, difficulty: str, n: int) -> list[dict[str, Any]]:
    w, h = fx.SIZE_WH
    dice: list[dict[str, Any]] = []
    max_angle = {"clean": 0.0, "moderate": 10.0, "hard": 25.0}[difficulty]
    tries = 0
    while len(dice) < n and tries < 2000:
        tries += 1
        side = float(rng.uniform(52, 78))
        angle = float(rng.uniform(-max_angle, max_angle))
        touching = difficulty == "hard" and dice and rng.random() < 0.5
        if touching:
            other = dice[int(rng.integers(0, len(dice)))]
            angle = other["angle"]
            gap = float(rng.uniform(0.0, 2.0))
            a = np.deg2rad(angle + 90.0 * int(rng.integers(0, 4)))
            dist = other["side"] / 2 + side / 2 + gap
            cx = other["cx"] + dist * np.cos(a)
            cy = other["cy"] + dist * np.sin(a)
        else:
            cx = float(rng.uniform(60, w - 60))
            cy = float(rng.uniform(60, h - 60))
        r = side * 0.72
        if not (r + 4 < cx < w - r - 4 and r + 4 < cy < h - r - 4):
            continue
        min_gap = 20.0 if difficulty == "clean" else 10.0
        clash = False
        for d in dice:
            dist = float(np.hypot(d["cx"] - cx, d["cy"] - cy))
            need = d["side"] * 0.72 + r + min_gap
            if touching and d is other:
                continue
            if dist < need:
                clash = True
                break
        if clash:
            continue
        dice.append(
            {
                "cx": float(cx),
                "cy": float(cy),
                "side": side,
                "angle": angle,
                "pips": int(rng.integers(1, 7)),
            }
        )
    return dice


def _corners(d: dict[str, Any], u: float, v: float) -> np.ndarray:
    """Image point of the die's unit coordinates (u, v) in [0, 1]."""
    a = np.deg2rad(d["angle"])
    dx, dy = (u - 0.5) * d["side"], (v - 0.5) * d["side"]
    return np.array(
        [d["cx"] + dx * np.cos(a) - dy * np.sin(a), d["cy"] + dx * np.sin(a) + dy * np.cos(a)]
    )


def _draw_die(img: np.ndarray, d: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    outline = np.array([_corners(d, u, v) for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))])
    body = tuple(int(v) for v in rng.integers(225, 250, 3))
    cv2.fillPoly(img, [np.round(outline * 16).astype(np.int32)], body, cv2.LINE_AA, 4)
    cv2.polylines(
        img, [np.round(outline * 16).astype(np.int32)], True, (85, 85, 85), 3, cv2.LINE_AA, 4
    )
    for u, v in PIPS[d["pips"]]:
        c = _corners(d, u, v)
        cv2.circle(
            img,
            (round(c[0] * 16), round(c[1] * 16)),
            round(PIP_RADIUS * d["side"] * 16),
            (25, 25, 25),
            -1,
            cv2.LINE_AA,
            4,
        )
    return outline


def _clutter(img: np.ndarray, rng: np.random.Generator, dice: list[dict[str, Any]]) -> None:
    """Saturated shapes on the table (never white, never touching a pip)."""
    w, h = fx.SIZE_WH
    for _ in range(int(rng.integers(3, 7))):
        colour = fx.random_colour(rng)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if any(np.hypot(d["cx"] - x, d["cy"] - y) < d["side"] * 0.72 + 30 for d in dice):
            continue
        if rng.random() < 0.5:
            cv2.ellipse(
                img,
                (x, y),
                (int(rng.integers(8, 25)), int(rng.integers(5, 15))),
                float(rng.uniform(0, 180)),
                0,
                360,
                colour,
                -1,
                cv2.LINE_AA,
            )
        else:
            x2, y2 = x + int(rng.integers(-60, 60)), y + int(rng.integers(-60, 60))
            cv2.line(img, (x, y), (x2, y2), colour, int(rng.integers(2, 6)), cv2.LINE_AA)


def _occlude(img: np.ndarray, rng: np.random.Generator, d: dict[str, Any]) -> dict[str, Any]:
    """A coloured token over one corner of a die, clear of every pip."""
    u, v = [(0, 0), (1, 0), (1, 1), (0, 1)][int(rng.integers(0, 4))]
    c = _corners(d, u, v)
    radius = round(d["side"] * rng.uniform(0.12, 0.18))
    cv2.circle(img, (round(c[0]), round(c[1])), radius, fx.random_colour(rng), -1, cv2.LINE_AA)
    return {"center_px": [round(float(c[0]), 2), round(float(c[1]), 2)], "radius_px": radius}


def ground_spec() -> GroundSpec:
    """How a dice scene's gate grounds each die and reads its pips."""
    return GroundSpec(
        helper="boxes",
        target="each die",
        proposer="opencv.dice",
        budget=2,
        min_count=1,
        fields={"pips": {"type": "integer", "minimum": 1, "maximum": 6}},
    )


def program_for(
    scene_id: str, difficulty: str, where: str, claim_n: int, claim_sum: int
) -> Program:
    """Count and pip-sum claims about dice."""
    spec = ground_spec()
    noun = "die" if claim_n == 1 else "dice"
    return Program(
        id=scene_id,
        prompt=f"{count_word(claim_n).capitalize()} {noun} {where} whose pips add up to "
        f"{claim_sum}.",
        tags={"scene": "dice", "difficulty": difficulty, "axis": "quantity"},
        gates=[gate("g1", "Is there at least one die?", spec, "count(elements) >= 1")],
        hard=[
            hard(
                "h1",
                f"Are there exactly {count_word(claim_n)} {noun}?",
                f"count(elements) == {claim_n}",
                uses="g1",
            ),
            hard(
                "h2",
                f"Do the pips add up to {claim_sum}?",
                f"sum(e.pips for e in elements) == {claim_sum}",
                uses="g1",
                weight=2.0,
            ),
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Dice on a table; programs ask for the count and the pip sum (some claims are false)."""
    table_name = str(rng.choice(list(TABLES)))
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = TABLES[table_name]
    dice = _place(rng, difficulty, int(rng.integers(1, 7)))
    if difficulty == "hard":
        _clutter(img, rng, dice)
    objects = []
    for d in dice:
        outline = _draw_die(img, d, rng)
        objects.append(
            {
                "xyxy_px": fx.xyxy_of(outline),
                "pips": d["pips"],
                "angle_deg": round(d["angle"], 2),
                "side_px": round(d["side"], 2),
            }
        )
    occluders = []
    if difficulty == "hard" and dice and rng.random() < 0.6:
        occluders.append(_occlude(img, rng, dice[int(rng.integers(0, len(dice)))]))
    img = fx.degrade(img, difficulty, rng)

    n = len(dice)
    total = sum(d["pips"] for d in dice)
    claim_n = n if rng.random() < 0.65 else wrong_int(rng, n, 1, 8, 1)
    claim_sum = total if rng.random() < 0.65 else wrong_int(rng, total, 1, 48, 3)
    program = program_for(scene_id, difficulty, f"on a {table_name} table", claim_n, claim_sum)
    answers = {
        f"{scene_id}/g1": verdict(n >= 1),
        f"{scene_id}/h1": verdict(n == claim_n),
        f"{scene_id}/h2": verdict(total == claim_sum),
    }
    truth = {
        "table": table_name,
        "dice": objects,
        "count": n,
        "pip_sum": total,
        "occluders": occluders,
        "answers": answers,
    }
    return Scene(scene_id, "dice", difficulty, seed, img, truth, [program])
