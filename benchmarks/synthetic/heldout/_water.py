"""Held-out scene about reflections: shaded shapes over a photographed-looking lake.

The program finds the water, each shape and its reflection by colour range (the
ranges are the program's inputs), so everything is painted in HSV inside them:
the lake keeps a blue hue and strong saturation under its ripples, each shape and
its darker, slightly bluer reflection keep their colour's hue, and the sky and hills
stay far too pale for any range. Reflections are rippled sideways by a pixel or two
and blurred, so a right one lies within a few pixels of the mirror image; a wrong
one is shifted, sunk, resized or left upright by at least :data:`MIN_MISS_PX`.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
import shapely

from groundeval.benchmarks.synthetic import _reflection
from groundeval.benchmarks.synthetic._common import Scene, verdict
from groundeval.benchmarks.synthetic.heldout import _canvas as cv
from groundeval.benchmarks.synthetic.heldout import _programs as prog

DIFFICULTY = "heldout"
MIN_MISS_PX = 25.0
"""A wrong reflection lies at least this far (Hausdorff) from the mirror image."""
SHAPE_NAMES = ("triangle", "trapezoid", "dome", "house", "sail")
FAULT_NAMES = ("shifted", "sunk", "resized", "unflipped")
_BLUER = {"red": -2, "orange": 2, "yellow": 3, "green": 4, "magenta": -3}
"""Hue nudge towards blue for a reflection (kept inside its colour's range)."""


def _r(v: float) -> float:
    return round(float(v), 2)


def _outline(
    rng: np.random.Generator, shape: str, cx: float, base: float, w: float, h: float
) -> np.ndarray:
    """The shape's outline standing on ``base`` (its lowest y), centred at ``cx``."""
    x0, x1, top = cx - w / 2, cx + w / 2, base - h
    if shape == "triangle":
        apex = cx + float(rng.uniform(-0.15, 0.15)) * w
        pts = [(x0, base), (x1, base), (apex, top)]
    elif shape == "trapezoid":
        inset = float(rng.uniform(0.22, 0.32)) * w
        pts = [(x0, base), (x1, base), (x1 - inset, top), (x0 + inset, top)]
    elif shape == "dome":
        t = np.linspace(0, math.pi, 25)
        pts = [(cx + math.cos(a) * w / 2, base - math.sin(a) * h) for a in t]
    elif shape == "house":
        eave = base - h * float(rng.uniform(0.5, 0.62))
        pts = [(x0, base), (x1, base), (x1, eave), (cx, top), (x0, eave)]
    else:  # sail: a tall right triangle leaning on its mast
        pts = [(x0, base), (x1, base), (x0 + 0.12 * w, top)]
    return np.array(pts, np.float64)


def _mirror(pts: np.ndarray, axis_y: float) -> np.ndarray:
    out = pts.copy()
    out[:, 1] = 2 * axis_y - out[:, 1]
    return out


def _miss(a: np.ndarray, b: np.ndarray) -> float:
    return float(shapely.hausdorff_distance(shapely.Polygon(a), shapely.Polygon(b)))


def _fault(
    rng: np.random.Generator, name: str, obj: np.ndarray, mirror: np.ndarray, room: dict[str, float]
) -> np.ndarray | None:
    """A wrong reflection of one kind, inside its room, or ``None`` when none fits."""
    for _ in range(30):
        if name == "shifted":
            dx = float(rng.uniform(MIN_MISS_PX + 3, max(MIN_MISS_PX + 4, room["side"])))
            bad = mirror + np.array([dx * float(rng.choice([-1, 1])), 0.0])
        elif name == "sunk":
            down = float(rng.uniform(MIN_MISS_PX + 5, max(MIN_MISS_PX + 6, room["down"])))
            bad = mirror + np.array([0.0, down])
        elif name == "resized":
            s = float(rng.choice([rng.uniform(0.45, 0.68), rng.uniform(1.35, 1.6)]))
            top = np.array([mirror[:, 0].mean(), mirror[:, 1].min()])
            bad = top + (mirror - top) * s
        else:  # unflipped: the upright shape moved down onto the mirror image's place
            bad = obj + np.array([0.0, mirror[:, 1].min() - obj[:, 1].min()])
        inside = (
            bad[:, 0].min() >= room["x0"]
            and bad[:, 0].max() <= room["x1"]
            and bad[:, 1].max() <= room["y1"]
        )
        if inside and _miss(mirror, bad) >= MIN_MISS_PX:
            return np.asarray(bad, np.float64)
    return None


def _mask(h: int, w: int, pts: np.ndarray) -> np.ndarray:
    """Anti-aliased coverage of a polygon (sub-pixel vertices)."""
    m = np.zeros((h, w), np.float32)
    cv2.fillPoly(m, [np.round(pts * 8).astype(np.int32)], 1.0, cv2.LINE_AA, 3)
    return m


def _hsv_to_rgb(hsv: np.ndarray) -> np.ndarray:
    """Float HSV (OpenCV scales) to RGB in [0, 1]; hue wraps."""
    q = hsv.copy()
    q[..., 0] = np.mod(q[..., 0], 180)
    q = np.clip(np.round(q), 0, [179, 255, 255]).astype(np.uint8)
    return cv2.cvtColor(q, cv2.COLOR_HSV2RGB).astype(np.float32) / 255.0


def _sky_and_hills(rng: np.random.Generator, w: int, axis_y: int) -> np.ndarray:
    """A pale hazy sky with soft clouds and grey distant hills (far below every range)."""
    t = np.linspace(0, 1, axis_y, dtype=np.float32)[:, None]
    hue = float(rng.uniform(0, 180))
    sat = float(rng.uniform(10, 55)) * (1 - 0.6 * t) + np.zeros((axis_y, w), np.float32)
    val = float(rng.uniform(175, 215)) + float(rng.uniform(20, 35)) * t + np.zeros((1, w))
    clouds = np.clip((cv.fbm(rng, axis_y, w, base=3) - float(rng.uniform(0.45, 0.65))) * 3, 0, 1)
    sat = sat * (1 - 0.7 * clouds)
    val = np.minimum(val + 25 * clouds, 250)
    ridge = cv.fbm(rng, 1, w, base=int(rng.integers(3, 7)), octaves=3)[0]
    hill_top = axis_y - (float(rng.uniform(0.06, 0.16)) * axis_y) * (0.4 + ridge)
    ys = np.arange(axis_y, dtype=np.float32)[:, None]
    hills = np.clip(ys - hill_top[None, :] + 0.5, 0, 1)
    hhue = float(rng.uniform(40, 110))
    sat = sat * (1 - hills) + float(rng.uniform(25, 60)) * hills
    val = val * (1 - hills) + float(rng.uniform(105, 150)) * hills
    hsv = np.stack([np.full((axis_y, w), hue) * (1 - hills) + hhue * hills, sat, val], axis=-1)
    return _hsv_to_rgb(hsv.astype(np.float32))


def _water(rng: np.random.Generator, w: int, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """Blue lake in HSV: a distance gradient and horizontally stretched ripple noise.

    Returns the HSV image and the ripple field in [0, 1] (reused to streak reflections).
    """
    t = np.linspace(0, 1, depth, dtype=np.float32)[:, None]
    small = cv.fbm(rng, max(depth // 6, 8), max(w // 2, 8), base=6, octaves=4)
    ripple = cv2.resize(small, (w, depth), interpolation=cv2.INTER_CUBIC)
    fine = cv.fbm(rng, depth, w, base=24, octaves=2)
    hue = float(rng.uniform(103, 116)) + (cv.fbm(rng, depth, w, base=3, octaves=2) - 0.5) * 8
    sat = float(rng.uniform(150, 215)) + (ripple - 0.5) * 40
    val = (
        float(rng.uniform(150, 200))
        - float(rng.uniform(40, 70)) * t
        + (ripple - 0.5) * 55
        + (fine - 0.5) * 15
    )
    hsv = np.stack([hue, sat, val], axis=-1)
    hsv = np.clip(hsv, [99, 125, 70], [121, 250, 245]).astype(np.float32)
    return hsv, np.clip(ripple, 0, 1)


def reflection(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Shaded shapes floating over a lake; in about half the images one reflection is wrong."""
    w = int(rng.integers(600, 961))
    h = round(w * float(rng.uniform(0.62, 0.85)))
    axis_y = int(rng.integers(int(h * 0.4), int(h * 0.5)))
    n = int(rng.integers(2, min(4, w // 180) + 1))
    colours = [str(c) for c in rng.permutation(list(_reflection.COLOURS))[:n]]
    mirrored = bool(rng.random() < 0.5)
    odd = -1 if mirrored else int(rng.integers(0, n))
    slot = w / n
    placed: list[dict[str, Any]] = []
    for i, colour in enumerate(colours):
        shape = str(rng.choice(SHAPE_NAMES))
        sw = float(rng.uniform(0.3, 0.46)) * slot
        sh = float(rng.uniform(70, min(135.0, axis_y * 0.55)))
        gap = float(rng.uniform(8, 45))
        cx = slot * (i + 0.5) + float(rng.uniform(-0.05, 0.05)) * slot
        obj = _outline(rng, shape, cx, axis_y - gap, sw, sh)
        mirror = _mirror(obj, axis_y)
        drawn, fault, miss = mirror, None, 0.0
        if i == odd:
            room = {
                "x0": slot * i + 4,
                "x1": slot * (i + 1) - 4,
                "y1": h - 6.0,
                "side": slot / 2 - sw / 2 - 6,
                "down": h - 6 - float(mirror[:, 1].max()),
            }
            for name in [str(rng.choice(FAULT_NAMES)), *FAULT_NAMES]:
                bad = _fault(rng, name, obj, mirror, room)
                if bad is not None:
                    drawn, fault, miss = bad, name, _miss(mirror, bad)
                    break
        placed.append(
            {
                "colour": colour,
                "shape": shape,
                "object_px": [[_r(x), _r(y)] for x, y in obj],
                "reflection_px": [[_r(x), _r(y)] for x, y in drawn],
                "fault": fault,
                "miss_px": _r(miss),
            }
        )
    mirrored = all(p["fault"] is None for p in placed)

    img = np.zeros((h, w, 3), np.float32)
    img[:axis_y] = _sky_and_hills(rng, w, axis_y)
    water_hsv, ripple = _water(rng, w, h - axis_y)
    hsv = np.zeros((h, w, 3), np.float32)
    hsv[axis_y:] = water_hsv
    streak = np.zeros((h, w), np.float32)
    streak[axis_y:] = ripple - 0.5
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    light = np.array([float(rng.uniform(-1, 1)), -1.0])
    light /= np.linalg.norm(light)
    refl_layers = []
    for p in placed:
        centre, colour_range = _reflection.COLOURS[p["colour"]]
        lo, hi = int(colour_range["hsv_lower"][0]), int(colour_range["hsv_upper"][0])
        hue = centre + float(rng.uniform(-2, 2))
        sat, val = float(rng.uniform(180, 240)), float(rng.uniform(185, 235))
        obj = np.array(p["object_px"])
        ox, oy = obj[:, 0].mean(), obj[:, 1].mean()
        span = max(float(np.ptp(obj[:, 0])), float(np.ptp(obj[:, 1]))) / 2
        lit = np.clip(((xs - ox) * light[0] + (ys - oy) * light[1]) / span, -1, 1)
        shade_v = val * (0.86 + 0.14 * lit)
        shade_s = sat - 25 * np.clip(lit - 0.6, 0, 1)
        obj_hsv = np.stack([np.full_like(xs, hue), shade_s, shade_v], axis=-1)
        m = _mask(h, w, obj)
        img = img * (1 - m[..., None]) + _hsv_to_rgb(obj_hsv) * m[..., None]
        rhue = hue + _BLUER[p["colour"]]
        if lo < hi:
            rhue = float(np.clip(rhue, lo + 2, hi - 2))
        dark = float(rng.uniform(0.55, 0.72))
        lit_m = np.clip(((xs - ox) * light[0] + (2 * axis_y - ys - oy) * light[1]) / span, -1, 1)
        refl = np.array(p["reflection_px"])
        r_hsv = np.stack(
            [
                np.full_like(xs, rhue),
                shade_s * float(rng.uniform(0.85, 0.97)),
                val * dark * (0.9 + 0.1 * lit_m) * (1 + 0.2 * streak),
            ],
            axis=-1,
        )
        refl_layers.append((_mask(h, w, refl), r_hsv))
    # the water with reflections is built in HSV, rippled sideways and softened
    water_rgb = _hsv_to_rgb(hsv)
    amp, wave = float(rng.uniform(0.8, 2.2)), float(rng.uniform(5, 11))
    phase = float(rng.uniform(0, 2 * math.pi))
    dx = amp * np.sin(2 * math.pi * (ys - axis_y) / wave + phase + 0.02 * xs)
    sigma = float(rng.uniform(0.8, 1.5))
    for m, r_hsv in refl_layers:
        m = cv2.remap(m, xs + dx, ys, cv2.INTER_LINEAR)
        m = cv2.GaussianBlur(m, (0, 0), sigma)
        water_rgb = water_rgb * (1 - m[..., None]) + _hsv_to_rgb(r_hsv) * m[..., None]
    img[axis_y:] = water_rgb[axis_y:]
    bgr, effects = cv.finish(img, rng, blur_max=0.9, strong=False)
    effects["ripple_px"] = _r(amp)
    effects["reflection_blur_sigma"] = _r(sigma)
    program = prog.reflection(scene_id, DIFFICULTY, [(p["colour"], p["shape"]) for p in placed])
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(mirrored),
        f"{scene_id}/h2": "pass",
    }
    truth = {
        "water_line_y_px": axis_y,
        "shapes": placed,
        "mirrored": mirrored,
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "reflection", DIFFICULTY, seed, bgr, truth, [program])
