"""A sun in the sky, either clear above the horizon or touching it (partly set)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, gate, hard, verdict
from groundeval.programs import GroundSpec, Program

SUNS: dict[str, tuple[int, int, int]] = {"yellow": (40, 215, 250), "orange": (20, 140, 250)}
GROUNDS: dict[str, tuple[int, int, int]] = {
    "green field": (40, 140, 60),
    "dark forest": (30, 80, 25),
    "meadow": (60, 170, 110),
}
SUN_RANGE = {"label": "sun", "hsv_lower": [5, 120, 150], "hsv_upper": [35, 255, 255]}
GROUND_RANGE = {"label": "ground", "hsv_lower": [35, 80, 40], "hsv_upper": [85, 255, 255]}
TOUCH_TOLERANCE_PX = 6
"""A gap up to this many pixels counts as touching; drawn gaps are 0 or at least 20 px."""


def _clouds(
    img: np.ndarray, rng: np.random.Generator, sun: dict[str, float]
) -> list[dict[str, Any]]:
    """White puffs; one may cover the top of the sun (never its lower half)."""
    w, _ = fx.SIZE_WH
    out = []
    for i in range(int(rng.integers(2, 5))):
        if i == 0 and rng.random() < 0.6:
            cx = sun["cx"] + rng.uniform(-0.6, 0.6) * sun["r"]
            cy = sun["cy"] - sun["r"] * rng.uniform(0.9, 1.3)
        else:
            cx, cy = rng.uniform(0, w), rng.uniform(20, sun["horizon"] * 0.5)
        rx, ry = int(rng.integers(30, 70)), int(rng.integers(12, 22))
        cv2.ellipse(img, (int(cx), int(cy)), (rx, ry), 0, 0, 360, (245, 245, 245), -1, cv2.LINE_AA)
        out.append({"center_px": [round(float(cx), 2), round(float(cy), 2)], "axes_px": [rx, ry]})
    return out


def _birds(img: np.ndarray, rng: np.random.Generator, horizon: int) -> None:
    w, _ = fx.SIZE_WH
    for _ in range(int(rng.integers(3, 7))):
        x, y = int(rng.integers(20, w - 20)), int(rng.integers(20, horizon - 40))
        s = int(rng.integers(6, 12))
        cv2.polylines(
            img,
            [np.array([[x - s, y - s // 2], [x, y], [x + s, y - s // 2]])],
            False,
            (40, 40, 40),
            2,
            cv2.LINE_AA,
        )


def program_for(
    scene_id: str, difficulty: str, sun_name: str, ground_name: str, claim_touch: bool
) -> Program:
    """Does the sun touch the horizon."""
    spec = GroundSpec(
        helper="boundary",
        target="the sun and the ground below the horizon",
        proposer="opencv.color_region",
        budget=2,
        min_count=2,
        max_count=2,
        params={"ranges": [SUN_RANGE, GROUND_RANGE]},
        fields={"label": {"type": "string", "enum": ["sun", "ground"]}},
    )
    tol = TOUCH_TOLERANCE_PX
    op = ">=" if claim_touch else "<"
    check = (
        f"any(s.label == 'sun' and g.label == 'ground' and s.y2 {op} g.y1 - {tol}"
        " for s in elements for g in elements)"
    )
    where = "touching the horizon" if claim_touch else "clear above the horizon"
    article = "An" if sun_name[0] in "aeiou" else "A"
    return Program(
        id=scene_id,
        prompt=f"{article} {sun_name} sun {where} over a {ground_name}.",
        tags={"scene": "sun", "difficulty": difficulty, "axis": "spatial"},
        gates=[
            gate(
                "g1", "Is there a sun in the sky?", spec, "any(e.label == 'sun' for e in elements)"
            )
        ],
        hard=[hard("h1", f"Is the sun {where}?", check, uses="g1")],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Sky, sun, ground; the program asks whether the sun touches the horizon."""
    w, h = fx.SIZE_WH
    horizon = int(rng.integers(int(h * 0.55), int(h * 0.78)))
    sky_top = np.array([200, 140, 90], np.float32)
    sky_low = np.array([235, 210, 180], np.float32)
    t = np.linspace(0, 1, horizon, dtype=np.float32)[:, None]
    img = np.zeros((h, w, 3), np.uint8)
    img[:horizon] = np.round(sky_top * (1 - t) + sky_low * t)[:, None, :].astype(np.uint8)
    sun_name = str(rng.choice(list(SUNS)))
    ground_name = str(rng.choice(list(GROUNDS)))
    r = float(rng.uniform(28, 55))
    touching = bool(rng.random() < 0.5)
    if touching:
        cy = horizon - r + float(rng.uniform(0, 0.7)) * r
    else:
        cy = horizon - r - float(rng.uniform(20, max(21.0, horizon - 2 * r - 30)))
    cx = float(rng.uniform(r + 20, w - r - 20))
    sun = {"cx": cx, "cy": cy, "r": r, "horizon": horizon}
    if difficulty == "hard":
        _birds(img, rng, horizon)
    cv2.circle(
        img,
        (round(cx * 16), round(cy * 16)),
        round(r * 16),
        SUNS[sun_name],
        -1,
        cv2.LINE_AA,
        4,
    )
    clouds = _clouds(img, rng, sun) if difficulty == "hard" else []
    img[horizon:] = GROUNDS[ground_name]
    if difficulty != "clean":
        tex = rng.normal(0, 6, (h - horizon, w, 1))
        img[horizon:] = np.clip(img[horizon:].astype(np.float32) + tex, 0, 255).astype(np.uint8)
    img = fx.degrade(img, difficulty, rng)
    bottom = min(cy + r, float(horizon))
    gap = float(horizon) - (cy + r)
    claim_touch = touching if rng.random() < 0.6 else not touching
    program = program_for(scene_id, difficulty, sun_name, ground_name, claim_touch)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(claim_touch == touching)}
    truth = {
        "sun": {
            "center_px": [round(cx, 2), round(cy, 2)],
            "radius_px": round(r, 2),
            "colour": sun_name,
            "xyxy_px": [round(cx - r, 2), round(cy - r, 2), round(cx + r, 2), round(bottom, 2)],
        },
        "horizon_y_px": horizon,
        "ground": ground_name,
        "touching": touching,
        "gap_px": round(gap, 2),
        "clouds": clouds,
        "answers": answers,
    }
    return Scene(scene_id, "sun", difficulty, seed, img, truth, [program])
