"""Coloured shapes above a still lake, each mirrored in the water below the shoreline.

Physics: a reflection is the object's mirror image about the water line: flipped,
the same size, as far below the line as the object is above it (``mirrored``).
Wrong images get one reflection shifted sideways, sunk too deep, resized or not
flipped (drawn upright), as a generator that pastes reflections does. Every shape
is vertically asymmetric (triangle, trapezoid, dome, house, sail), so an unflipped
reflection shows. Shapes and reflections are found by colour
(``opencv.color_region``, one range per colour, the darker reflection included);
the water's top edge is the reflecting line.
"""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np
import shapely

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, count_word, gate, hard, verdict
from groundeval.programs import GroundSpec, NamedCheck, Program

TOLERANCE_PX = 12.0
"""How far (centre and outline) a reflection may lie from the object's mirror image."""
MIN_ERROR_PX = 22.0
"""A wrong reflection lies at least this far from the mirror image (well beyond tolerance)."""
WATER_RANGE = {"label": "water", "hsv_lower": [95, 100, 40], "hsv_upper": [125, 255, 255]}
COLOURS: dict[str, tuple[int, dict[str, Any]]] = {
    "red": (0, {"hsv_lower": [170, 110, 40], "hsv_upper": [7, 255, 255]}),
    "orange": (13, {"hsv_lower": [9, 110, 40], "hsv_upper": [18, 255, 255]}),
    "yellow": (27, {"hsv_lower": [21, 110, 40], "hsv_upper": [36, 255, 255]}),
    "green": (62, {"hsv_lower": [45, 110, 40], "hsv_upper": [80, 255, 255]}),
    "magenta": (152, {"hsv_lower": [140, 110, 40], "hsv_upper": [165, 255, 255]}),
}
"""Colour name -> (OpenCV hue, HSV range catching the shape and its darker reflection)."""
SHAPES = ("triangle", "trapezoid", "dome", "house", "sail")
FAULTS = ("shifted", "sunk", "resized", "unflipped")


def _outline(shape: str, w: float, h: float) -> np.ndarray:
    """The shape standing on (0, 0), upwards (negative y), ``w`` wide and ``h`` tall."""
    if shape == "triangle":
        pts = [(-w / 2, 0), (w / 2, 0), (0, -h)]
    elif shape == "trapezoid":
        pts = [(-w / 2, 0), (w / 2, 0), (w / 4, -h), (-w / 4, -h)]
    elif shape == "dome":
        pts = [(w / 2 * math.cos(t), -h * math.sin(t)) for t in np.linspace(0, math.pi, 25)]
    elif shape == "house":
        pts = [(-w / 2, 0), (w / 2, 0), (w / 2, -0.55 * h), (0, -h), (-w / 2, -0.55 * h)]
    else:  # sail: a right triangle, mast on the left
        pts = [(-w / 2, 0), (w / 2, 0), (-w / 2, -h)]
    return np.array(pts, dtype=float)


def _mirror(points: np.ndarray, axis_y: float) -> np.ndarray:
    out = points.copy()
    out[:, 1] = 2 * axis_y - out[:, 1]
    return out


def _miss(a: np.ndarray, b: np.ndarray) -> float:
    """Hausdorff distance between two outlines (how far b is from a, and back)."""
    pa, pb = shapely.Polygon(a).boundary, shapely.Polygon(b).boundary
    return float(shapely.hausdorff_distance(pa, pb, densify=0.1))


def _faulty(rng: np.random.Generator, obj: np.ndarray, axis_y: float, fault: str) -> np.ndarray:
    """A wrong reflection of ``obj``: the mirror image spoiled by ``fault``."""
    right = _mirror(obj, axis_y)
    out: np.ndarray
    if fault == "shifted":
        out = right + np.array([float(rng.choice([-1, 1]) * rng.uniform(22, 45)), 0.0])
    elif fault == "sunk":
        out = right + np.array([0.0, float(rng.uniform(22, 45))])
    elif fault == "resized":
        s = float(rng.choice([rng.uniform(0.55, 0.72), rng.uniform(1.35, 1.6)]))
        top = np.array([right[:, 0].mean(), right[:, 1].min()])  # the edge nearest the water
        out = top + (right - top) * s
    else:  # unflipped: the upright shape, moved down to where the reflection begins
        out = obj + np.array([0.0, float(right[:, 1].min() - obj[:, 1].min())])
    return out


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _fill(img: np.ndarray, points: np.ndarray, bgr: tuple[int, int, int]) -> None:
    cv2.fillPoly(img, [np.round(points * 16).astype(np.int32)], bgr, cv2.LINE_AA, 4)


def _bgr(hue: int, sat: int, val: int) -> tuple[int, int, int]:
    b, g, r = cv2.cvtColor(np.array([[[hue, sat, val]]], np.uint8), cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _background(rng: np.random.Generator, axis_y: int) -> np.ndarray:
    """Pale sky above the shoreline, a deep blue lake below (both with gentle gradients)."""
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.float32)
    sky_top = np.array([rng.uniform(215, 240), rng.uniform(190, 210), rng.uniform(160, 185)])
    sky_low = np.array([rng.uniform(235, 250), rng.uniform(225, 240), rng.uniform(205, 225)])
    t = np.linspace(0, 1, axis_y)[:, None, None]
    img[:axis_y] = sky_top * (1 - t) + sky_low * t
    water = np.array([rng.uniform(130, 175), rng.uniform(80, 110), rng.uniform(25, 55)])
    t = np.linspace(0, 1, h - axis_y)[:, None, None]
    img[axis_y:] = water * (1.1 - 0.25 * t)
    return np.clip(img, 0, 255).astype(np.uint8)


def _ripples(img: np.ndarray, rng: np.random.Generator, axis_y: int) -> None:
    """Thin lighter dashes on the water, over the reflections too (healed by a closing)."""
    w, h = fx.SIZE_WH
    for _ in range(int(rng.integers(6, 14))):
        y = int(rng.integers(axis_y + 12, h - 6))
        x = int(rng.integers(0, w - 40))
        colour = tuple(int(c) for c in img[y, x].astype(int) + np.array([25, 20, 10]))
        cv2.line(img, (x, y), (x + int(rng.integers(25, 80)), y), colour, 1, cv2.LINE_AA)


def _birds(img: np.ndarray, rng: np.random.Generator, axis_y: int) -> None:
    """Grey gull marks in the sky: clutter in a colour no range takes."""
    w, _ = fx.SIZE_WH
    for _ in range(int(rng.integers(2, 6))):
        x, y = int(rng.integers(20, w - 20)), int(rng.integers(10, max(20, axis_y - 120)))
        s = int(rng.integers(5, 10))
        pts = np.array([[x - s, y - s // 2], [x, y], [x + s, y - s // 2]], np.int32)
        cv2.polylines(img, [pts], False, (90, 90, 90), 2, cv2.LINE_AA)


def _place(
    rng: np.random.Generator, n: int, axis_y: float, odd: int
) -> list[dict[str, Any]] | None:
    """Shapes in left-to-right slots with their reflections; ``None`` when one does not fit."""
    w, h = fx.SIZE_WH
    slot = (w - 40) / n
    names = [str(c) for c in rng.choice(list(COLOURS), size=n, replace=False)]
    placed: list[dict[str, Any]] = []
    for i in range(n):
        sw = float(rng.uniform(50, min(100, slot - 30)))
        sh = float(rng.uniform(45, 95))
        gap = float(rng.uniform(12, 50))
        spare = (slot - sw) / 2 - 12
        cx = 20 + slot * (i + 0.5) + float(rng.uniform(-spare, spare))
        shape = str(rng.choice(SHAPES))
        obj = _outline(shape, sw, sh) + np.array([cx, axis_y - gap])
        fault = str(rng.choice(FAULTS)) if i == odd else ""
        refl = _faulty(rng, obj, axis_y, fault) if fault else _mirror(obj, axis_y)
        error = _miss(_mirror(obj, axis_y), refl)
        x1, x2 = refl[:, 0].min(), refl[:, 0].max()
        inside = obj[:, 1].min() > 12 and refl[:, 1].max() < h - 8 and 8 < x1 and x2 < w - 8
        clear = refl[:, 1].min() > axis_y + 6
        apart = all(x1 > p["reflection_x2"] + 14 for p in placed)
        if not (inside and clear and apart) or (fault and error < MIN_ERROR_PX):
            return None
        placed.append(
            {
                "colour": names[i],
                "shape": shape,
                "object_px": np.round(obj, 2).tolist(),
                "reflection_px": np.round(refl, 2).tolist(),
                "reflection_x2": float(max(x2, obj[:, 0].max())),
                "fault": fault or None,
                "error_px": round(error, 2),
            }
        )
    return placed


def program_for(scene_id: str, difficulty: str, shapes: list[tuple[str, str]]) -> Program:
    """Is every reflection mirrored: ``shapes`` are (colour, shape)."""
    n = len(shapes)
    ranges = [WATER_RANGE] + [{"label": colour, **COLOURS[colour][1]} for colour, _ in shapes]
    spec = GroundSpec(
        helper="boundary",
        target="the water, and each shape and its reflection",
        proposer="opencv.color_region",
        params={"ranges": ranges, "max_regions": 2},
        budget=2,
        min_count=2 * n + 1,
    )
    listed = [f"{_article(colour)} {colour} {shape}" for colour, shape in shapes]
    named = ", ".join(listed[:-1]) + f" and {listed[-1]}"
    return Program(
        id=scene_id,
        prompt=f"{named[0].upper()}{named[1:]} float above a still lake, each one mirrored "
        "in the water.",
        tags={"scene": "reflection", "difficulty": difficulty, "axis": "physics"},
        gates=[
            gate(
                "g1",
                "Are there shapes above the water with reflections?",
                spec,
                "count(elements) >= 3",
            )
        ],
        hard=[
            hard(
                "h1",
                "Is every reflection the mirror image of its shape about the water line "
                "(flipped, the same size, straight below it)?",
                NamedCheck(
                    name="mirrored",
                    args={"axis_label": "water", "tolerance_px": TOLERANCE_PX},
                ),
                uses="g1",
                weight=2.0,
            ),
            hard(
                "h2",
                f"Are there {count_word(n)} shapes, each with one reflection?",
                f"count(elements) == {2 * n + 1}",
                uses="g1",
            ),
        ],
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Shapes over a lake with their reflections; the program asks whether each is mirrored."""
    axis_y = int(rng.integers(215, 265))
    n = int(rng.integers(2, 5))
    mirrored = rng.random() < 0.5
    odd = -1 if mirrored else int(rng.integers(0, n))
    placed = None
    while placed is None:  # the rng moves on each try, so the seed still fixes the scene
        placed = _place(rng, n, float(axis_y), odd)
    img = _background(rng, axis_y)
    for p in placed:
        hue = (COLOURS[p["colour"]][0] + int(rng.integers(-2, 3))) % 180
        sat, val = int(rng.integers(190, 245)), int(rng.integers(190, 240))
        _fill(img, np.array(p["object_px"]), _bgr(hue, sat, val))
        darker = int(val * float(rng.uniform(0.55, 0.72)))
        _fill(img, np.array(p["reflection_px"]), _bgr(hue, sat, darker))
        del p["reflection_x2"]
    if difficulty != "clean":
        _ripples(img, rng, axis_y)
    if difficulty == "hard":
        _birds(img, rng, axis_y)
    img = fx.degrade(img, difficulty, rng)
    program = program_for(scene_id, difficulty, [(p["colour"], p["shape"]) for p in placed])
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(mirrored),
        f"{scene_id}/h2": "pass",
    }
    truth = {
        "water_line_y_px": axis_y,
        "shapes": placed,
        "mirrored": mirrored,
        "answers": answers,
    }
    return Scene(scene_id, "reflection", difficulty, seed, img, truth, [program])
