"""Held-out scenes that count or compare objects: dice, dice_math, coins and rows."""

from __future__ import annotations

import itertools
import math
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _rows
from groundeval.benchmarks.synthetic._common import Scene, verdict, wrong_int
from groundeval.benchmarks.synthetic.heldout import _canvas as cv
from groundeval.benchmarks.synthetic.heldout import _programs as prog
from groundeval.benchmarks.synthetic.heldout import _solids as so

DIFFICULTY = "heldout"
SURFACE_WORDS = {
    "clouds": "mottled table",
    "wood": "wooden table",
    "marble": "marble counter",
    "weave": "woven cloth",
    "gradient": "studio backdrop",
}


def _where(surface_name: str) -> str:
    return f"on a {SURFACE_WORDS.get(surface_name, 'photo-printed mat')}"


def _r(v: float) -> float:
    return round(float(v), 2)


def _draw_dice(rng: np.random.Generator, min_dx_share: float = 0.0) -> dict[str, Any]:
    w, h = cv.canvas_size(rng)
    surface, img = cv.surface(rng, w, h)
    style = so.die_style(rng, img.mean(axis=(0, 1)))
    side0 = min(w, h) * float(rng.uniform(0.09, 0.16))
    dice = so.place_dice(rng, style, w, h, int(rng.integers(1, 7)), side0, min_dx_share * side0)
    dx = -float(style.light[0]) * side0 * 0.45
    dy = float(style.light[1]) * side0 * 0.45
    for die in dice:
        mask = np.zeros((h, w), np.float32)
        hull = np.array(die.hull(style).exterior.coords, np.float32)
        cv2.fillPoly(mask, [np.round(hull * 4).astype(np.int32)], 1.0, cv2.LINE_AA, 2)
        cv.soft_shadow(img, mask, dx, dy, side0 * 0.12, float(rng.uniform(0.25, 0.5)))
    for die in sorted(dice, key=lambda d: d.cy):
        so.paint_die(img, die, style)
    bgr, effects = cv.finish(img, rng)
    objects = []
    for die in dice:
        x0, y0, x1, y1 = die.hull(style).bounds
        shown = die.sides[: len(die.visible_sides(style))] if style.side_pips else []
        objects.append(
            {
                "xyxy_px": [_r(x0), _r(y0), _r(x1), _r(y1)],
                "pips": die.pips,
                "top_face_px": [[_r(v) for v in p] for p in die.top_corners(style)],
                "side_px": _r(die.side),
                "yaw_deg": _r(die.yaw_deg),
                "side_face_pips": shown,
            }
        )
    return {
        "image": bgr,
        "surface": surface,
        "dice": objects,
        "style": {
            "face_rgb": [_r(v) for v in style.face],
            "pip_rgb": [_r(v) for v in style.pip],
            "pip_shape": style.pip_shape,
            "elevation_deg": _r(style.elevation_deg),
            "side_pips": style.side_pips,
        },
        "effects": effects,
    }


def dice(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Dice in three-quarter view; the program asks for the count and the top-face pip sum."""
    drawn = _draw_dice(rng)
    objects = drawn["dice"]
    n = len(objects)
    total = sum(int(d["pips"]) for d in objects)
    claim_n = n if rng.random() < 0.65 else wrong_int(rng, n, 1, 8, 1)
    claim_sum = total if rng.random() < 0.65 else wrong_int(rng, total, 1, 48, 3)
    program = prog.dice(scene_id, DIFFICULTY, _where(drawn["surface"]), claim_n, claim_sum)
    answers = {
        f"{scene_id}/g1": verdict(n >= 1),
        f"{scene_id}/h1": verdict(n == claim_n),
        f"{scene_id}/h2": verdict(total == claim_sum),
    }
    truth = {
        "surface": drawn["surface"],
        "dice": objects,
        "count": n,
        "pip_sum": total,
        "style": drawn["style"],
        "effects": drawn["effects"],
        "answers": answers,
    }
    return Scene(scene_id, "dice", DIFFICULTY, seed, drawn["image"], truth, [program])


def dice_math(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Dice spread left to right; the program asks for the pip product and a rising order."""
    drawn = _draw_dice(rng, min_dx_share=0.6)
    objects = drawn["dice"]
    pips = [int(d["pips"]) for d in objects]
    product = math.prod(pips)
    claim = product if rng.random() < 0.6 else wrong_int(rng, product, 1, 6 ** len(pips), 4)
    by_x = [d["pips"] for d in sorted(objects, key=lambda d: d["xyxy_px"][0] + d["xyxy_px"][2])]
    rising = all(b > a for a, b in itertools.pairwise(by_x))
    program = prog.dice_math(scene_id, DIFFICULTY, len(pips), claim)
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(claim == product),
        f"{scene_id}/h2": verdict(rising),
    }
    truth = {
        "surface": drawn["surface"],
        "dice": objects,
        "count": len(pips),
        "pip_sum": sum(pips),
        "product": product,
        "pips_left_to_right": by_x,
        "style": drawn["style"],
        "effects": drawn["effects"],
        "answers": answers,
    }
    return Scene(scene_id, "dice_math", DIFFICULTY, seed, drawn["image"], truth, [program])


def _place_coins(
    rng: np.random.Generator, w: int, h: int, n: int, r0: float, overlap: float
) -> list[tuple[float, float, float]]:
    placed: list[tuple[float, float, float]] = []
    for _ in range(3000):
        if len(placed) == n:
            break
        r = r0 * float(rng.uniform(0.8, 1.2))
        cx, cy = float(rng.uniform(r + 8, w - r - 8)), float(rng.uniform(r + 8, h - r - 8))
        if all(math.hypot(cx - x, cy - y) >= (r + q) * (1 - overlap) + 2 for x, y, q in placed):
            placed.append((cx, cy, r))
    return placed


def coins(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Embossed metal coins; the program asks for an exact count."""
    w, h = cv.canvas_size(rng)
    surface, img = cv.surface(rng, w, h)
    mean = img.mean(axis=(0, 1))
    metals = [m for m, c in so.METALS.items() if np.linalg.norm(np.array(c) - mean) > 0.25]
    metals = metals or list(so.METALS)
    kinds = [
        str(m)
        for m in rng.choice(metals, size=min(len(metals), int(rng.integers(1, 4))), replace=False)
    ]
    overlap = 0.08 if rng.random() < 0.3 else 0.0
    r0 = min(w, h) * float(rng.uniform(0.045, 0.09))
    placed = _place_coins(rng, w, h, int(rng.integers(1, 10)), r0, overlap)
    light = np.array([rng.uniform(-0.7, 0.7), rng.uniform(-0.7, 0.7), 1.0])
    light /= np.linalg.norm(light)
    drawn = []
    for cx, cy, r in placed:
        metal = kinds[int(rng.integers(0, len(kinds)))]
        rim = metal if rng.random() < 0.8 else kinds[int(rng.integers(0, len(kinds)))]
        drawn.append((cx, cy, r, metal, rim))
        mask = np.zeros((h, w), np.float32)
        cv2.circle(mask, (round(cx * 4), round(cy * 4)), round(r * 4), 1.0, -1, cv2.LINE_AA, 2)
        cv.soft_shadow(img, mask, -light[0] * r * 0.25, -light[1] * r * 0.25, r * 0.12, 0.45)
    for cx, cy, r, metal, rim in drawn:
        marks = rng.random(int(rng.integers(24, 48))) < 0.7
        shader = so.coin_shader(
            cx,
            cy,
            r,
            np.array(so.METALS[metal]),
            light,
            so.relief_mask(rng),
            marks,
            np.array(so.METALS[rim]),
        )
        cv.paint(img, (cx - r, cy - r, cx + r, cy + r), shader)
    bgr, effects = cv.finish(img, rng)
    n = len(drawn)
    claim = n if rng.random() < 0.65 else wrong_int(rng, n, 1, 12, 1)
    program = prog.coins(scene_id, DIFFICULTY, _where(surface), claim)
    objects = [
        {
            "xyxy_px": [_r(cx - r), _r(cy - r), _r(cx + r), _r(cy + r)],
            "center_px": [_r(cx), _r(cy)],
            "radius_px": _r(r),
            "metal": metal,
            "rim_metal": rim,
        }
        for cx, cy, r, metal, rim in drawn
    ]
    answers = {f"{scene_id}/g1": verdict(n >= 1), f"{scene_id}/h1": verdict(n == claim)}
    truth = {
        "surface": surface,
        "coins": objects,
        "count": n,
        "max_overlap_share": overlap,
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "coins", DIFFICULTY, seed, bgr, truth, [program])


def _disc_shader(cx: float, cy: float, r: float, colour: np.ndarray, look: str) -> cv.Shader:
    def shade(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dx, dy = (xs - cx) / r, (ys - cy) / r
        d = np.hypot(dx, dy)
        if look == "sphere":
            z = np.sqrt(np.clip(1 - d**2, 0, 1))
            lum = 0.6 + 0.4 * np.clip((-dx - dy) * 0.5 + z, 0, 1)
            spec = np.clip(1 - np.hypot(dx + 0.35, dy + 0.35) / 0.25, 0, 1) ** 2
            rgb = colour * lum[..., None] + 0.5 * spec[..., None]
        elif look == "button":
            holes = np.zeros(d.shape, bool)
            for hx, hy in ((-0.22, -0.22), (0.22, -0.22), (-0.22, 0.22), (0.22, 0.22)):
                holes |= np.hypot(dx - hx, dy - hy) < 0.1
            rim = (d > 0.78) & (d < 0.86)
            lum = np.where(rim, 0.75, 1.0) * np.where(holes, 0.45, 1.0)
            rgb = colour * lum[..., None]
        else:
            edge = d > 0.93
            rgb = np.where(edge[..., None], colour * 0.55, colour)
        return (d <= 1).astype(np.float32), np.clip(rgb, 0, 1)

    return shade


def rows(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A long row of discs kept the same size or grown steadily, sometimes with one break."""
    w = int(rng.integers(720, 1001))
    h = round(w * float(rng.uniform(0.45, 0.75)))
    surface, img = cv.surface(rng, w, h)
    n = int(rng.integers(8, 12))
    mode = "same" if rng.random() < 0.5 else "increasing"
    broken = bool(rng.random() < 0.45)
    radii = _rows._radii(rng, n, mode, broken)
    gap = (w - 60) / n
    bound = 0.42 * gap / max(radii)
    scale = float(rng.uniform(1.0, max(1.0, min(1.6, bound))))
    y0 = h / 2 + float(rng.uniform(-0.12, 0.12)) * h
    slope = float(rng.uniform(-0.12, 0.12))
    colour = cv.distinct(rng, img.mean(axis=(0, 1)), 0.45)
    look = ("flat", "sphere", "button")[int(rng.integers(0, 3))]
    discs = []
    for i, base in enumerate(radii):
        r = base * scale
        x = 30 + gap * (i + 0.5)
        y = y0 + slope * (x - w / 2) + float(rng.uniform(-0.1, 0.1)) * r
        mask = np.zeros((h, w), np.float32)
        cv2.circle(mask, (round(x * 4), round(y * 4)), round(r * 4), 1.0, -1, cv2.LINE_AA, 2)
        cv.soft_shadow(img, mask, 0.15 * r, 0.2 * r, 0.15 * r, 0.35)
        cv.paint(img, (x - r, y - r, x + r, y + r), _disc_shader(x, y, r, colour, look))
        discs.append({"center_px": [_r(x), _r(y)], "radius_px": _r(r)})
    bgr, effects = cv.finish(img, rng, blur_max=0.9)
    program = prog.rows(scene_id, DIFFICULTY, n, mode)
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(not broken),
        f"{scene_id}/h2": "pass",
    }
    truth = {
        "mode": mode,
        "broken": broken,
        "scale": round(scale, 3),
        "look": look,
        "surface": surface,
        "discs": discs,
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "rows", DIFFICULTY, seed, bgr, truth, [program])
