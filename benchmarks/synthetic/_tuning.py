"""Harder variants of the dice and coin scenes, used to tune the CV proposers' defaults.

These are the current in-style drawings pushed further: dice of any face colour
with lighter or darker pips (some large enough to touch), coins of several metals,
textured tables (wood grain, cloth, gradients, scikit-image textures when
installed), drop shadows, blur and JPEG. They are a *tuning* set: figures measured
on them are tuning figures, never the accuracy a README reports. The seed fixes
the bytes; truth lists every object drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._dice import PIPS

FACES: dict[str, tuple[tuple[int, int, int], tuple[int, int, int]]] = {
    "white": ((238, 238, 238), (25, 25, 25)),
    "ivory": ((205, 232, 240), (40, 30, 130)),
    "red": ((40, 40, 190), (240, 240, 240)),
    "blue": ((170, 80, 30), (240, 240, 240)),
    "black": ((30, 30, 30), (235, 235, 235)),
    "green": ((60, 150, 40), (245, 245, 245)),
    "yellow": ((40, 200, 230), (30, 30, 30)),
}
"""Face colour and pip colour (BGR) per die style."""
METALS: dict[str, tuple[int, int, int]] = {
    "gold": (60, 170, 210),
    "silver": (190, 192, 196),
    "copper": (70, 115, 190),
    "bronze": (60, 110, 150),
    "nickel": (150, 155, 160),
}
TABLES = ("wood", "cloth", "gradient", "plain", "texture")


@dataclass
class TuningScene:
    """One tuning image and the objects drawn on it."""

    kind: str
    seed: int
    image_bgr: np.ndarray
    truth: dict[str, Any]


def table(rng: np.random.Generator, size_wh: tuple[int, int], kind: str) -> np.ndarray:
    """A textured background of the given kind (BGR uint8)."""
    w, h = size_wh
    if kind == "wood":
        return fx.wood_grain(rng, size_wh)
    if kind == "cloth":
        return fx.cloth(rng, size_wh)
    if kind == "gradient":
        a = np.array(fx.random_colour(rng, saturated=False), np.float32)
        b = np.array(fx.random_colour(rng, saturated=False), np.float32) * 0.6
        t = np.linspace(0, 1, w, dtype=np.float32)[None, :, None]
        t = np.repeat(t, h, axis=0)
        return np.clip(a * (1 - t) + b * t, 0, 255).astype(np.uint8)
    if kind == "texture":
        return fx.photo_texture(rng, size_wh)
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = fx.random_colour(rng, saturated=False)
    return img


def _free(
    rng: np.random.Generator,
    placed: list[tuple[float, float, float]],
    r: float,
    size_wh: tuple[int, int],
    gap: float,
) -> tuple[float, float] | None:
    w, h = size_wh
    for _ in range(200):
        cx, cy = float(rng.uniform(r + 4, w - r - 4)), float(rng.uniform(r + 4, h - r - 4))
        if all(np.hypot(cx - x, cy - y) >= r + pr + gap for x, y, pr in placed):
            return cx, cy
    return None


def dice_scene(seed: int, size_wh: tuple[int, int] = fx.SIZE_WH) -> TuningScene:
    """Dice of random face styles, pip sizes and angles on a random table."""
    rng = np.random.default_rng([seed, 11, 1])
    kind = str(rng.choice(TABLES))
    img = table(rng, size_wh, kind)
    style_pool = list(FACES)
    mono = rng.random() < 0.5
    style0 = str(rng.choice(style_pool))
    pip_share = float(rng.choice([0.085, 0.1, 0.12, 0.135]))
    placed: list[tuple[float, float, float]] = []
    dice: list[dict[str, Any]] = []
    shadow = rng.random() < 0.5
    for _ in range(int(rng.integers(1, 7))):
        side = float(rng.uniform(42, 90))
        spot = _free(rng, placed, side * 0.72, size_wh, float(rng.uniform(4, 20)))
        if spot is None:
            continue
        style = style0 if mono else str(rng.choice(style_pool))
        d = {
            "cx": spot[0],
            "cy": spot[1],
            "side": side,
            "angle": float(rng.uniform(-45, 45)),
            "pips": int(rng.integers(1, 7)),
            "style": style,
        }
        placed.append((spot[0], spot[1], side * 0.72))
        outline = draw_die(img, d, pip_share, rng, shadow)
        dice.append(
            {
                "xyxy_px": fx.xyxy_of(outline),
                "pips": d["pips"],
                "style": style,
                "side_px": round(side, 2),
            }
        )
    img = _finish(img, rng)
    truth = {
        "table": kind,
        "pip_share": pip_share,
        "dice": dice,
        "count": len(dice),
        "pip_sum": sum(d["pips"] for d in dice),
    }
    return TuningScene("dice", seed, img, truth)


def draw_die(
    img: np.ndarray, d: dict[str, Any], pip_share: float, rng: np.random.Generator, shadow: bool
) -> np.ndarray:
    """One die face with rounded shading, pips of ``pip_share`` x side; returns its outline."""
    face, pip = FACES[d["style"]]
    a = np.deg2rad(d["angle"])
    rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    centre = np.array([d["cx"], d["cy"]])

    def at(u: float, v: float) -> np.ndarray:
        point: np.ndarray = centre + rot @ (np.array([u - 0.5, v - 0.5]) * d["side"])
        return point

    outline = np.array([at(u, v) for u, v in ((0, 0), (1, 0), (1, 1), (0, 1))])
    pts = np.round(outline * 16).astype(np.int32)
    if shadow:
        off = np.round((outline + np.array([5.0, 6.0])) * 16).astype(np.int32)
        layer = img.copy()
        cv2.fillPoly(layer, [off], (0, 0, 0), cv2.LINE_AA, 4)
        cv2.addWeighted(layer, 0.45, img, 0.55, 0, dst=img)
    jitter = rng.integers(-12, 13, 3)
    body = tuple(int(np.clip(c + j, 0, 255)) for c, j in zip(face, jitter, strict=True))
    cv2.fillPoly(img, [pts], body, cv2.LINE_AA, 4)
    edge = tuple(int(c * 0.75) for c in body)
    cv2.polylines(img, [pts], True, edge, 2, cv2.LINE_AA, 4)
    for u, v in PIPS[d["pips"]]:
        c = at(u, v)
        cv2.circle(
            img,
            (round(c[0] * 16), round(c[1] * 16)),
            round(pip_share * d["side"] * 16),
            pip,
            -1,
            cv2.LINE_AA,
            4,
        )
    return outline


def coins_scene(seed: int, size_wh: tuple[int, int] = fx.SIZE_WH) -> TuningScene:
    """Coins of several metals (some touching) on a random table."""
    rng = np.random.default_rng([seed, 11, 2])
    kind = str(rng.choice(TABLES))
    img = table(rng, size_wh, kind)
    placed: list[tuple[float, float, float]] = []
    coins: list[dict[str, Any]] = []
    shadow = rng.random() < 0.5
    for _ in range(int(rng.integers(1, 10))):
        r = float(rng.uniform(18, 45))
        spot = _free(rng, placed, r, size_wh, float(rng.uniform(1, 16)))
        if spot is None:
            continue
        metal = str(rng.choice(list(METALS)))
        placed.append((spot[0], spot[1], r))
        draw_coin(img, spot, r, METALS[metal], rng, shadow)
        coins.append(
            {
                "center_px": [round(spot[0], 2), round(spot[1], 2)],
                "radius_px": round(r, 2),
                "metal": metal,
            }
        )
    img = _finish(img, rng)
    return TuningScene("coins", seed, img, {"table": kind, "coins": coins, "count": len(coins)})


def draw_coin(
    img: np.ndarray,
    centre: tuple[float, float],
    r: float,
    base: tuple[int, int, int],
    rng: np.random.Generator,
    shadow: bool,
) -> None:
    """A metal disc: darker rim, radial shading, a few embossed marks."""
    c16 = (round(centre[0] * 16), round(centre[1] * 16))
    if shadow:
        layer = img.copy()
        cv2.circle(layer, (c16[0] + 64, c16[1] + 80), round(r * 16), (0, 0, 0), -1, cv2.LINE_AA, 4)
        cv2.addWeighted(layer, 0.4, img, 0.6, 0, dst=img)
    b = np.array(base, np.float64) * rng.uniform(0.85, 1.1)
    cv2.circle(
        img, c16, round(r * 16), tuple(int(min(255, v * 0.6)) for v in b), -1, cv2.LINE_AA, 4
    )
    for share, gain in ((0.92, 0.95), (0.7, 1.05), (0.4, 1.12)):
        colour = tuple(int(min(255, v * gain)) for v in b)
        cv2.circle(img, c16, round(r * share * 16), colour, -1, cv2.LINE_AA, 4)
    for _ in range(int(rng.integers(2, 6))):
        a, d = rng.uniform(0, 2 * np.pi), rng.uniform(0, 0.6 * r)
        p = (int(centre[0] + d * np.cos(a)), int(centre[1] + d * np.sin(a)))
        cv2.ellipse(
            img,
            p,
            (int(r * 0.2) + 1, int(r * 0.08) + 1),
            float(rng.uniform(0, 180)),
            0,
            360,
            tuple(int(v * 0.75) for v in b),
            1,
            cv2.LINE_AA,
        )


def _finish(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Light, blur, noise and (often) JPEG."""
    img = fx.light_gradient(img, rng, float(rng.uniform(0.65, 0.95)), float(rng.uniform(1.0, 1.2)))
    img = fx.blur(img, float(rng.uniform(0.4, 1.4)))
    img = fx.noise(img, rng, float(rng.uniform(2.0, 8.0)))
    if rng.random() < 0.7:
        img = fx.jpeg(img, int(rng.integers(30, 90)))
    return img
