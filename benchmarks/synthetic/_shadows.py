"""Pillars on the ground seen from above, lit by one lamp: shadows point away from its foot.

Physics: with one light, every shadow's long axis, extended, passes through the
point under the lamp, so the extension lines meet in one point
(``lines_concurrent``). Inconsistent images turn one shadow by 30-70 degrees, as a
generator that paints shadows independently does. Shadows are dark on a light
ground and found by colour (``opencv.color_region``).
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, count_word, gate, hard, verdict
from groundeval.programs import GroundSpec, NamedCheck, Program

SHADOW_RANGE = {"label": "shadow", "hsv_lower": [0, 0, 0], "hsv_upper": [179, 255, 85]}
TOLERANCE_PX = 24.0
"""How far a shadow's extension line may pass from where the others meet. Read off in-style
seeds 1100-1299 (all difficulties): shadows of one lamp miss by up to 14.6 px (a clutter dot
on a shadow, or at its foot, bends its axis by up to 3.6 degrees), shadows turned 30-70
degrees by 41 px or more; 12 px, as before, called three consistent hard scenes of 600
inconsistent."""
LAMP_BGR = (40, 220, 250)


def _turned(v: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _inside(q: np.ndarray, margin: float = 15.0) -> bool:
    w, h = fx.SIZE_WH
    return bool(margin < q[0] < w - margin and margin < q[1] < h - margin)


def _place(
    rng: np.random.Generator, n: int, lamp: np.ndarray, turns: list[float]
) -> list[tuple[np.ndarray, np.ndarray, float, float]]:
    """(centre, shadow direction, shadow length, radius) per pillar, shadows inside the image."""
    placed: list[tuple[np.ndarray, np.ndarray, float, float]] = []
    for _ in range(2000):
        if len(placed) == n:
            break
        a = float(rng.uniform(0, 2 * math.pi))
        d = float(rng.uniform(75, 150))
        p = lamp + d * np.array([math.cos(a), math.sin(a)])
        away = _turned((p - lamp) / d, turns[len(placed)])
        length, radius = float(rng.uniform(85, 125)), float(rng.uniform(13, 17))
        if not (_inside(p, 40) and _inside(p + length * away)):
            continue
        if any(np.hypot(*(p - q)) < 80 for q, _, _, _ in placed):
            continue
        if any(_line_angle(away, dq) < 30 for _, dq, _, _ in placed):
            continue  # shadows along (nearly) one line would not show where they meet
        if any(_crosses(p, p + length * away, q, q + lq * dq) for q, dq, lq, _ in placed):
            continue
        placed.append((p, away, length, radius))
    return placed


def _crosses(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> bool:
    """Whether two shadow segments come within 30 px of each other (they would merge)."""
    ts = np.linspace(0, 1, 25)
    pa = a1 + ts[:, None] * (a2 - a1)
    pb = b1 + ts[:, None] * (b2 - b1)
    return bool(np.min(np.hypot(*(pa[:, None, :] - pb[None, :, :]).T)) < 30)


def _line_angle(u: np.ndarray, v: np.ndarray) -> float:
    """Angle between the lines along two directions, in degrees (0..90)."""
    cos = abs(float(u @ v / (np.hypot(*u) * np.hypot(*v))))
    return math.degrees(math.acos(min(1.0, cos)))


def _shadow_polygon(
    base: np.ndarray, direction: np.ndarray, length: float, width: float
) -> np.ndarray:
    """A tapered quadrilateral from the pillar's centre along ``direction``."""
    n = np.array([-direction[1], direction[0]])
    tip = base + length * direction
    return np.array(
        [base + n * width / 2, tip + n * width / 3, tip - n * width / 3, base - n * width / 2]
    )


def program_for(scene_id: str, difficulty: str, n: int) -> Program:
    """One light source, and the shadow count."""
    spec = GroundSpec(
        helper="boundary",
        target="each pillar's shadow",
        proposer="opencv.color_region",
        params={"ranges": [SHADOW_RANGE], "max_regions": 8, "min_area_px": 400.0},
        budget=2,
        min_count=2,
    )
    return Program(
        id=scene_id,
        prompt=f"Seen from above, {count_word(n)} pillars around a single lamp at "
        "night, each casting a shadow.",
        tags={"scene": "shadows", "difficulty": difficulty, "axis": "physics"},
        gates=[gate("g1", "Do the pillars cast shadows?", spec, "count(elements) >= 2")],
        hard=[
            hard(
                "h1",
                "Do the shadows agree with a single light source (extended, they meet "
                "in one point)?",
                NamedCheck(name="lines_concurrent", args={"tolerance_px": TOLERANCE_PX}),
                uses="g1",
                weight=2.0,
            ),
            hard("h2", f"Are there {count_word(n)} shadows?", f"count(elements) == {n}", uses="g1"),
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Pillars and their shadows; the program asks whether one light source casts them all."""
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = tuple(int(v) for v in rng.integers(165, 215, 3))
    lamp = np.array([w / 2 + float(rng.uniform(-60, 60)), h / 2 + float(rng.uniform(-40, 40))])
    n = int(rng.integers(3, 6))
    consistent = rng.random() < 0.55
    odd = -1 if consistent else int(rng.integers(0, n))
    turns = [
        float(rng.choice([-1, 1]) * rng.uniform(30, 70)) if i == odd else 0.0 for i in range(n)
    ]
    placed = _place(rng, n, lamp, turns)
    consistent = consistent or odd >= len(placed)
    pillars = [p for p, _, _, _ in placed]
    objects: list[dict[str, Any]] = []
    for (p, away, length, radius), turn in zip(placed, turns, strict=False):
        poly = _shadow_polygon(p, away, length, 2 * radius)
        cv2.fillPoly(img, [np.round(poly * 16).astype(np.int32)], (45, 45, 50), cv2.LINE_AA, 4)
        objects.append(
            {
                "center_px": [round(float(v), 2) for v in p],
                "radius_px": round(radius, 2),
                "shadow_tip_px": [round(float(v), 2) for v in p + length * away],
                "turned_deg": round(turn, 2),
            }
        )
    for o, p in zip(objects, pillars, strict=True):
        colour = fx.random_colour(rng)
        centre = (round(p[0] * 16), round(p[1] * 16))
        cv2.circle(img, centre, round(o["radius_px"] * 16), colour, -1, cv2.LINE_AA, 4)
    cv2.circle(img, (round(lamp[0]), round(lamp[1])), 9, LAMP_BGR, -1, cv2.LINE_AA)
    if difficulty == "hard":
        for _ in range(int(rng.integers(3, 7))):
            q = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            cv2.circle(img, q, int(rng.integers(4, 9)), fx.random_colour(rng), -1, cv2.LINE_AA)
    img = fx.degrade(img, difficulty, rng)
    program = program_for(scene_id, difficulty, len(pillars))
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(consistent),
        f"{scene_id}/h2": "pass",
    }
    truth = {
        "lamp_px": [round(float(v), 2) for v in lamp],
        "pillars": objects,
        "consistent": consistent,
        "answers": answers,
    }
    return Scene(scene_id, "shadows", difficulty, seed, img, truth, [program])
