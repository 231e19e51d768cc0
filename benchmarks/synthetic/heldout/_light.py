"""Held-out scenes about light: a sun over a field, and pillars' shadows under one lamp.

Both programs find their regions by colour range (the ranges are the program's
inputs), so the colours here stay inside them: the sun is orange to yellow and
saturated, the field green, the shadows' cores dark on a lit ground; everything
else (sky, clouds, pillars, ground) stays out of the ranges.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic._common import Scene, verdict
from groundeval.benchmarks.synthetic.heldout import _canvas as cv
from groundeval.benchmarks.synthetic.heldout import _programs as prog

DIFFICULTY = "heldout"
GROUND_NAMES = ("green field", "meadow", "pasture", "lawn")


def _r(v: float) -> float:
    return round(float(v), 2)


def _sky(rng: np.random.Generator, w: int, horizon: int) -> np.ndarray:
    """Blue to pale, or a hazy near-grey sky, with soft fBm clouds (never sun-coloured)."""
    t = np.linspace(0, 1, horizon, dtype=np.float32)[:, None, None]
    if rng.random() < 0.7:
        top = cv.hsv_rgb(rng.uniform(100, 118), rng.uniform(90, 200), rng.uniform(150, 235))
        low = cv.hsv_rgb(rng.uniform(95, 115), rng.uniform(20, 70), rng.uniform(200, 250))
    else:
        top = cv.hsv_rgb(rng.uniform(0, 180), rng.uniform(0, 40), rng.uniform(140, 210))
        low = cv.hsv_rgb(rng.uniform(0, 180), rng.uniform(0, 30), rng.uniform(190, 240))
    sky = top[None, None, :] * (1 - t) + low[None, None, :] * t
    sky = np.repeat(sky, w, axis=1)
    clouds = np.clip((cv.fbm(rng, horizon, w, base=3) - float(rng.uniform(0.45, 0.7))) * 3, 0, 1)
    white = cv.random_rgb(rng, 0.88, 1.0)
    return cv.f32(sky * (1 - 0.8 * clouds[..., None]) + white * 0.8 * clouds[..., None])


def _field(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Green ground: hue, saturation and value varied by noise, all inside the ground range."""
    n1 = cv.fbm(rng, h, w, base=int(rng.integers(3, 8)))
    n2 = cv.fbm(rng, h, w, base=16, octaves=3)
    hue = float(rng.uniform(48, 68)) + (n1 - 0.5) * 12
    sat = float(rng.uniform(130, 210)) + (n2 - 0.5) * 50
    val = float(rng.uniform(90, 170)) + (n1 - 0.5) * 50 + (n2 - 0.5) * 30
    hsv = np.stack([hue, sat, val], axis=-1)
    hsv = np.clip(np.round(hsv), [36, 90, 55], [84, 255, 255]).astype(np.uint8)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB).astype(np.float32) / 255.0


def sun(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A glowing sun over a green field, clear of the horizon or partly set behind it."""
    w = int(rng.integers(560, 961))
    h = round(w * float(rng.uniform(0.55, 0.8)))
    horizon = int(rng.integers(int(h * 0.55), int(h * 0.78)))
    img = np.zeros((h, w, 3), np.float32)
    img[:horizon] = _sky(rng, w, horizon)
    hue = float(rng.uniform(12, 28))
    sun_rgb = cv.hsv_rgb(hue, rng.uniform(185, 255), rng.uniform(225, 255))
    sun_name = "yellow" if hue >= 21 else "orange"
    r = min(w, h) * float(rng.uniform(0.06, 0.12))
    touching = bool(rng.random() < 0.5)
    gap_min = max(24.0, 0.3 * r)
    if touching:
        cy = horizon - r + float(rng.uniform(0, 0.7)) * r
    else:
        cy = horizon - r - float(rng.uniform(gap_min, max(gap_min + 1, horizon - 2 * r - 30)))
    cx = float(rng.uniform(r + 30, w - r - 30))
    ys, xs = np.mgrid[0:horizon, 0:w].astype(np.float32)
    glow = np.exp(-(((np.hypot(xs - cx, ys - cy) - r).clip(0) / (r * 0.35)) ** 2)) * 0.22
    img[:horizon] = img[:horizon] * (1 - glow[..., None]) + sun_rgb * glow[..., None]

    def disc(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.hypot(xs - cx, ys - cy) / r
        rgb = sun_rgb * (1 - 0.08 * np.clip(d, 0, 1) ** 2)[..., None]
        return (d <= 1).astype(np.float32), rgb

    cv.paint(img, (cx - r, cy - r, cx + r, cy + r), disc)
    birds = _birds(img, rng, horizon, (cx, cy, r))
    img[horizon:] = _field(rng, w, h - horizon)
    bgr, effects = cv.finish(img, rng, blur_max=1.0, strong=False)
    ground_name = str(rng.choice(GROUND_NAMES))
    claim_touch = touching if rng.random() < 0.6 else not touching
    program = prog.sun(scene_id, DIFFICULTY, sun_name, ground_name, claim_touch)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(claim_touch == touching)}
    bottom = min(cy + r, float(horizon))
    truth = {
        "sun": {
            "center_px": [_r(cx), _r(cy)],
            "radius_px": _r(r),
            "colour": sun_name,
            "hue_cv": _r(hue),
            "xyxy_px": [_r(cx - r), _r(cy - r), _r(cx + r), _r(bottom)],
        },
        "horizon_y_px": horizon,
        "ground": ground_name,
        "touching": touching,
        "gap_px": _r(horizon - (cy + r)),
        "birds": birds,
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "sun", DIFFICULTY, seed, bgr, truth, [program])


def _birds(
    img: np.ndarray, rng: np.random.Generator, horizon: int, sun_circle: tuple[float, float, float]
) -> list[list[float]]:
    """A few distant birds as thin dark 'v' strokes, away from the sun."""
    cx, cy, r = sun_circle
    out = []
    for _ in range(int(rng.integers(0, 5))):
        x, y = float(rng.uniform(20, img.shape[1] - 20)), float(rng.uniform(15, horizon - 25))
        if math.hypot(x - cx, y - cy) < r * 1.8:
            continue
        s = float(rng.uniform(4, 9))
        ink = np.array([0.15, 0.15, 0.17])
        for dx in (-s, s):
            seg = cv.in_segment(np.array([x + dx, y - s * 0.4]), np.array([x, y]), 1.3)
            cv.paint(img, (x - s - 2, y - s - 2, x + s + 2, y + 2), cv.flat(ink, seg))
        out.append([_r(x), _r(y)])
    return out


def _turned(v: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _gap(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray) -> float:
    ts = np.linspace(0, 1, 25)
    pa = a1 + ts[:, None] * (a2 - a1)
    pb = b1 + ts[:, None] * (b2 - b1)
    return float(np.min(np.hypot(*(pa[:, None, :] - pb[None, :, :]).T)))


def _place_pillars(
    rng: np.random.Generator, w: int, h: int, n: int, lamp: np.ndarray, turns: list[float], s: float
) -> list[dict[str, Any]]:
    """Pillars around the lamp with shadows inside the image that neither merge nor align."""
    placed: list[dict[str, Any]] = []

    def inside(q: np.ndarray, m: float) -> bool:
        return bool(m < q[0] < w - m and m < q[1] < h - m)

    for _ in range(3000):
        if len(placed) == n:
            break
        a = float(rng.uniform(0, 2 * math.pi))
        d = float(rng.uniform(80, 150)) * s
        p = lamp + d * np.array([math.cos(a), math.sin(a)])
        away = _turned((p - lamp) / d, turns[len(placed)])
        length, radius = float(rng.uniform(85, 125)) * s, float(rng.uniform(13, 18)) * s
        tip = p + length * away
        if not (inside(p, 40 * s) and inside(tip, 20)):
            continue
        if any(np.hypot(*(p - q["p"])) < 85 * s for q in placed):
            continue
        if any(abs(float(away @ q["away"])) > math.cos(math.radians(30)) for q in placed):
            continue
        if any(_gap(p, tip, q["p"], q["tip"]) < 32 * s for q in placed):
            continue
        placed.append({"p": p, "away": away, "tip": tip, "length": length, "radius": radius})
    return placed


def shadows(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Pillars seen from above around one lamp; one shadow is turned in inconsistent images."""
    w, h = cv.canvas_size(rng, 600, 900)
    w, h = max(w, h), min(w, h)
    _, ground = cv.surface(rng, w, h)
    hsv = cv2.cvtColor(np.clip(ground, 0, 1).astype(np.float32), cv2.COLOR_RGB2HSV)
    v = hsv[..., 2]
    hsv[..., 2] = 0.64 + 0.3 * (v - v.min()) / max(float(v.max() - v.min()), 1e-6)
    img = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
    s = float(rng.uniform(0.9, 1.2))
    lamp = np.array(
        [w / 2 + float(rng.uniform(-0.08, 0.08)) * w, h / 2 + float(rng.uniform(-0.08, 0.08)) * h]
    )
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    pool = np.exp(-((np.hypot(xs - lamp[0], ys - lamp[1]) / (0.6 * max(w, h))) ** 2))
    img *= (0.8 + 0.2 * pool)[..., None]
    n = int(rng.integers(3, 6))
    consistent = bool(rng.random() < 0.55)
    odd = -1 if consistent else int(rng.integers(0, n))
    turns = [
        float(rng.choice([-1, 1]) * rng.uniform(30, 70)) if i == odd else 0.0 for i in range(n)
    ]
    placed = _place_pillars(rng, w, h, n, lamp, turns, s)
    while len(placed) < 3:  # the check needs three lines; a smaller scale always fits three
        s *= 0.92
        placed = _place_pillars(rng, w, h, n, lamp, turns, s)
    consistent = consistent or odd >= len(placed)
    darkness = float(rng.uniform(0.12, 0.3))
    soft = float(rng.uniform(0.8, 2.5))
    for q in placed:
        normal = np.array([-q["away"][1], q["away"][0]])
        width = 2 * q["radius"] * float(rng.uniform(0.85, 1.0))
        poly = np.array(
            [
                q["p"] + normal * width / 2,
                q["tip"] + normal * width / 3,
                q["tip"] - normal * width / 3,
                q["p"] - normal * width / 2,
            ]
        )
        mask = np.zeros((h, w), np.float32)
        cv2.fillPoly(mask, [np.round(poly * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
        cv.soft_shadow(img, mask, 0, 0, soft, 1 - darkness)
    objects = []
    for q, turn in zip(placed, turns, strict=False):
        colour = cv.random_rgb(rng, 0.5, 0.95)
        px, py, pr = float(q["p"][0]), float(q["p"][1]), float(q["radius"])
        toward = -q["away"]

        def pillar(
            xs: np.ndarray,
            ys: np.ndarray,
            px: float = px,
            py: float = py,
            pr: float = pr,
            c: np.ndarray = colour,
            t: np.ndarray = toward,
        ) -> tuple[np.ndarray, np.ndarray]:
            dx, dy = (xs - px) / pr, (ys - py) / pr
            d = np.hypot(dx, dy)
            lit = 0.8 + 0.2 * np.clip(dx * t[0] + dy * t[1], -1, 1)
            rim = np.where(d > 0.85, 0.85, 1.0)
            return (d <= 1).astype(np.float32), c * (lit * rim)[..., None]

        cv.paint(img, (px - pr, py - pr, px + pr, py + pr), pillar)
        objects.append(
            {
                "center_px": [_r(px), _r(py)],
                "radius_px": _r(pr),
                "shadow_tip_px": [_r(v) for v in q["tip"]],
                "turned_deg": _r(turn),
            }
        )
    glow = np.exp(-((np.hypot(xs - lamp[0], ys - lamp[1]) / (14 * s)) ** 2)) * 0.6
    lamp_rgb = np.array([1.0, 0.9, 0.45])
    img = img * (1 - glow[..., None]) + lamp_rgb * glow[..., None]
    lr = 8 * s
    cv.paint(
        img,
        (lamp[0] - lr, lamp[1] - lr, lamp[0] + lr, lamp[1] + lr),
        cv.flat(lamp_rgb, lambda xs, ys: np.hypot(xs - lamp[0], ys - lamp[1]) <= lr),
    )
    bgr, effects = cv.finish(img, rng, blur_max=1.0, strong=False)
    program = prog.shadows(scene_id, DIFFICULTY, len(placed))
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(consistent),
        f"{scene_id}/h2": "pass",
    }
    truth = {
        "lamp_px": [_r(v) for v in lamp],
        "pillars": objects,
        "consistent": consistent,
        "scale": round(s, 3),
        "shadow_darkness": round(darkness, 3),
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "shadows", DIFFICULTY, seed, bgr, truth, [program])
