"""Coins on a dark cloth: a count, with touching and partly covered coins when hard."""

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

CLOTHS: dict[str, tuple[int, int, int]] = {
    "dark green": (30, 60, 25),
    "navy": (70, 35, 20),
    "charcoal": (45, 45, 45),
    "maroon": (30, 25, 80),
}
METALS: dict[str, tuple[int, int, int]] = {
    "gold": (50, 175, 215),
    "silver": (195, 195, 200),
    "copper": (70, 120, 200),
}


def _place(rng: np.random.Generator, difficulty: str, n: int) -> list[dict[str, Any]]:
    w, h = fx.SIZE_WH
    coins: list[dict[str, Any]] = []
    tries = 0
    while len(coins) < n and tries < 3000:
        tries += 1
        r = float(rng.uniform(22, 42))
        touching = difficulty == "hard" and coins and rng.random() < 0.5
        if touching:
            other = coins[int(rng.integers(0, len(coins)))]
            a = rng.uniform(0, 2 * np.pi)
            dist = other["r"] + r + float(rng.uniform(-1.0, 1.0))
            cx, cy = other["cx"] + dist * np.cos(a), other["cy"] + dist * np.sin(a)
        else:
            cx, cy = rng.uniform(r + 5, w - r - 5), rng.uniform(r + 5, h - r - 5)
        if not (r + 5 < cx < w - r - 5 and r + 5 < cy < h - r - 5):
            continue
        gap = 18.0 if difficulty == "clean" else 8.0
        ok = True
        for c in coins:
            dist = float(np.hypot(c["cx"] - cx, c["cy"] - cy))
            if touching and c is other:
                continue
            if dist < c["r"] + r + gap:
                ok = False
                break
        if ok:
            coins.append(
                {"cx": float(cx), "cy": float(cy), "r": r, "metal": str(rng.choice(list(METALS)))}
            )
    return coins


def _draw_coin(img: np.ndarray, c: dict[str, Any]) -> None:
    centre = (round(c["cx"] * 16), round(c["cy"] * 16))
    base = np.array(METALS[c["metal"]], dtype=np.float64)
    rim = tuple(int(v) for v in base * 0.55)
    cv2.circle(img, centre, round(c["r"] * 16), rim, -1, cv2.LINE_AA, 4)
    for share, gain in ((0.93, 0.9), (0.8, 1.0), (0.55, 1.08)):
        colour = tuple(int(min(255, v * gain)) for v in base)
        cv2.circle(img, centre, round(c["r"] * share * 16), colour, -1, cv2.LINE_AA, 4)
    cv2.circle(
        img,
        centre,
        round(c["r"] * 0.8 * 16),
        tuple(int(v * 0.8) for v in base),
        2,
        cv2.LINE_AA,
        4,
    )


def _clutter(img: np.ndarray, rng: np.random.Generator) -> None:
    """Dark pens and scraps: darker than any coin, never round."""
    w, h = fx.SIZE_WH
    for _ in range(int(rng.integers(3, 7))):
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        x2, y2 = x + int(rng.integers(-120, 120)), y + int(rng.integers(-120, 120))
        shade = tuple(int(v) for v in rng.integers(5, 25, 3))
        cv2.line(img, (x, y), (x2, y2), shade, int(rng.integers(3, 9)), cv2.LINE_AA)


def _occlude(img: np.ndarray, rng: np.random.Generator, c: dict[str, Any]) -> dict[str, Any]:
    """A dark card over the edge of one coin (the other coins are drawn again on top)."""
    a = rng.uniform(0, 2 * np.pi)
    depth = c["r"] * rng.uniform(0.2, 0.45)
    edge = np.array([c["cx"], c["cy"]]) + (c["r"] - depth) * np.array([np.cos(a), np.sin(a)])
    u = np.array([np.cos(a), np.sin(a)])
    v = np.array([-u[1], u[0]])
    quad = np.array([edge + 80 * v, edge - 80 * v, edge - 80 * v + 90 * u, edge + 80 * v + 90 * u])
    cv2.fillPoly(img, [np.round(quad).astype(np.int32)], (12, 12, 12), cv2.LINE_AA)
    return {"points_px": [[round(float(x), 2), round(float(y), 2)] for x, y in quad]}


def program_for(scene_id: str, difficulty: str, where: str, claim: int) -> Program:
    """An exact coin count."""
    spec = GroundSpec(
        helper="boxes",
        target="each coin",
        proposer="opencv.contours",
        budget=2,
        min_count=1,
        fields={"radius_px": {"type": "number", "minimum": 5}},
    )
    noun = "coin" if claim == 1 else "coins"
    return Program(
        id=scene_id,
        prompt=f"{count_word(claim).capitalize()} {noun} {where}.",
        tags={"scene": "coins", "difficulty": difficulty, "axis": "quantity"},
        gates=[gate("g1", "Is there at least one coin?", spec, "count(elements) >= 1")],
        hard=[
            hard(
                "h1",
                f"Are there exactly {count_word(claim)} {noun}?",
                f"count(elements) == {claim}",
                uses="g1",
            )
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Coins on a cloth; the program asks for an exact count (some claims are false)."""
    cloth = str(rng.choice(list(CLOTHS)))
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = CLOTHS[cloth]
    coins = _place(rng, difficulty, int(rng.integers(1, 10)))
    if difficulty == "hard":
        _clutter(img, rng)
    for c in coins:
        _draw_coin(img, c)
    occluders = []
    if difficulty == "hard":
        if coins and rng.random() < 0.6:
            hidden = coins[int(rng.integers(0, len(coins)))]
            occluders.append(_occlude(img, rng, hidden))
            for c in coins:
                if c is not hidden:
                    _draw_coin(img, c)
    img = fx.degrade(img, difficulty, rng)
    n = len(coins)
    claim = n if rng.random() < 0.65 else wrong_int(rng, n, 1, 12, 1)
    program = program_for(scene_id, difficulty, f"on a {cloth} cloth", claim)
    objects = [
        {
            "xyxy_px": [
                round(c["cx"] - c["r"], 2),
                round(c["cy"] - c["r"], 2),
                round(c["cx"] + c["r"], 2),
                round(c["cy"] + c["r"], 2),
            ],
            "center_px": [round(c["cx"], 2), round(c["cy"], 2)],
            "radius_px": round(c["r"], 2),
            "metal": c["metal"],
        }
        for c in coins
    ]
    answers = {f"{scene_id}/g1": verdict(n >= 1), f"{scene_id}/h1": verdict(n == claim)}
    truth = {
        "cloth": cloth,
        "coins": objects,
        "count": n,
        "occluders": occluders,
        "answers": answers,
    }
    return Scene(scene_id, "coins", difficulty, seed, img, truth, [program])
