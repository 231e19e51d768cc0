"""Object sprites drawn flat at 4x with PIL and numpy, then put in perspective.

A sprite is float32 RGBA (0..1) in scene pixels with its top-left corner in
the scene; its exact box is where the drawn alpha reaches one half.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

Rgb = tuple[float, float, float]
SUPER = 4
"""Supersampling factor of every flat drawing."""

DIE_STYLES: dict[str, tuple[Rgb, tuple[Rgb, ...]]] = {
    "white": ((0.96, 0.95, 0.92), ((0.08, 0.08, 0.10), (0.10, 0.14, 0.45), (0.55, 0.08, 0.10))),
    "ivory": ((0.93, 0.88, 0.74), ((0.45, 0.06, 0.08), (0.12, 0.10, 0.08))),
    "red": ((0.78, 0.10, 0.13), ((0.97, 0.97, 0.95), (0.98, 0.90, 0.55))),
    "blue": ((0.12, 0.27, 0.72), ((0.97, 0.97, 0.97), (0.95, 0.85, 0.30))),
    "black": ((0.10, 0.10, 0.11), ((0.96, 0.96, 0.96), (0.85, 0.15, 0.15))),
    "green": ((0.10, 0.52, 0.28), ((0.97, 0.97, 0.95),)),
    "yellow": ((0.95, 0.80, 0.18), ((0.10, 0.10, 0.12),)),
}
"""Face colour and the pip colours it comes with (lighter or darker than the face)."""

PIP_SPOTS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((1, -1), (-1, 1)),
    3: ((1, -1), (0, 0), (-1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)),
}

METALS: dict[str, tuple[Rgb, float]] = {
    "gold": ((0.83, 0.66, 0.24), 0.9),
    "silver": ((0.78, 0.79, 0.80), 1.0),
    "copper": ((0.72, 0.42, 0.24), 0.8),
    "bronze": ((0.58, 0.42, 0.22), 0.7),
    "brass": ((0.80, 0.70, 0.38), 0.9),
    "nickel": ((0.62, 0.64, 0.66), 0.8),
    "dark bronze": ((0.38, 0.27, 0.16), 0.6),
}
"""Base colour and shine of each coin metal."""


@dataclass
class Sprite:
    """RGBA pixels (float32 0..1) placed at ``x0, y0`` in the scene."""

    rgba: np.ndarray
    x0: int
    y0: int

    def box(self) -> list[float]:
        """Exact box (x1, y1, x2, y2) in scene pixels of the half-opaque footprint."""
        ys, xs = np.nonzero(self.rgba[:, :, 3] >= 0.5)
        return [
            float(self.x0 + xs.min()),
            float(self.y0 + ys.min()),
            float(self.x0 + xs.max() + 1),
            float(self.y0 + ys.max() + 1),
        ]


def warp(flat: np.ndarray, corners: np.ndarray) -> Sprite:
    """Map a flat 4x RGBA square onto the quad ``corners`` (scene pixels, clockwise from top-left).

    Warping happens at 4x and is then averaged down, so edges stay smooth.
    """
    n = flat.shape[0]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int) + 2
    src = np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32)
    dst = ((corners - [x0, y0]) * SUPER).astype(np.float32)
    hom = cv2.getPerspectiveTransform(src, dst)
    size = (int(x1 - x0) * SUPER, int(y1 - y0) * SUPER)
    premult = flat.copy()
    premult[:, :, :3] *= flat[:, :, 3:4]  # warp premultiplied colour so edges do not darken
    big = cv2.warpPerspective(premult, hom, size, flags=cv2.INTER_LINEAR, borderValue=0)
    small = cv2.resize(big, (int(x1 - x0), int(y1 - y0)), interpolation=cv2.INTER_AREA)
    alpha = small[:, :, 3:4]
    small[:, :, :3] = np.where(alpha > 1e-4, small[:, :, :3] / np.maximum(alpha, 1e-4), 0)
    return Sprite(np.clip(small, 0, 1), int(x0), int(y0))


def die_face(side: float, face: Rgb, pip: Rgb, pips: int, rng: np.random.Generator) -> np.ndarray:
    """A flat die face at 4x: rounded corners, a bevelled edge, shaded hollow pips."""
    n = round(side * SUPER)
    img = Image.new("RGBA", (n, n), (0, 0, 0, 0))
    draw = ImageDraw.Draw(img)
    corner = n * float(rng.uniform(0.12, 0.24))
    edge = tuple(round(255 * c * 0.72) for c in face)
    draw.rounded_rectangle((0, 0, n - 1, n - 1), radius=corner, fill=(*edge, 255))
    inset = n * float(rng.uniform(0.03, 0.06))
    top = tuple(round(255 * c) for c in face)
    draw.rounded_rectangle(
        (inset, inset, n - 1 - inset, n - 1 - inset), radius=corner * 0.8, fill=(*top, 255)
    )
    spacing = n * float(rng.uniform(0.23, 0.28))
    radius = n * float(rng.uniform(0.075, 0.115))
    ring = tuple(round(255 * (0.6 * p + 0.4 * f)) for p, f in zip(pip, face, strict=True))
    body = tuple(round(255 * p) for p in pip)
    for sx, sy in PIP_SPOTS[pips]:
        cx, cy = n / 2 + sx * spacing, n / 2 + sy * spacing
        draw.ellipse((cx - radius, cy - radius, cx + radius, cy + radius), fill=(*ring, 255))
        r2 = radius * 0.82
        draw.ellipse((cx - r2, cy - r2 + radius * 0.08, cx + r2, cy + r2), fill=(*body, 255))
    arr = np.asarray(img, np.float32) / 255.0
    yy = np.linspace(-1, 1, n, dtype=np.float32)
    sheen = 1.0 + float(rng.uniform(0.04, 0.12)) * (yy[None, :] * rng.choice([-1, 1]) - yy[:, None])
    arr[:, :, :3] *= sheen[..., None]
    return np.asarray(np.clip(arr, 0, 1))


def die(
    rng: np.random.Generator, cx: float, cy: float, side: float, face: Rgb, pip: Rgb, pips: int
) -> tuple[Sprite, float]:
    """A die face in the scene: rotated by any angle, in mild perspective. Returns its angle."""
    flat = die_face(side, face, pip, pips, rng)
    angle = float(rng.uniform(0, 90))
    corners = _quad(rng, cx, cy, side, side, angle, jitter=0.05)
    return warp(flat, corners), angle


def _quad(
    rng: np.random.Generator, cx: float, cy: float, w: float, h: float, angle: float, jitter: float
) -> np.ndarray:
    t = np.radians(angle)
    c, s = np.cos(t), np.sin(t)
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
    pts = unit * [w, h]
    rot = np.stack([pts[:, 0] * c - pts[:, 1] * s, pts[:, 0] * s + pts[:, 1] * c], axis=1)
    rot += rng.normal(0, jitter * max(w, h) / 2, rot.shape)
    return np.asarray(rot + np.array([cx, cy]), np.float32)


def coin_face(radius: float, metal: str, rng: np.random.Generator) -> np.ndarray:
    """A flat coin at 4x: metallic shading, a raised rim, an embossed numeral, a highlight."""
    base, shine = METALS[metal]
    n = round(2 * radius * SUPER) + 2
    r = n / 2 - 1
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - n / 2 + 0.5
    d = np.hypot(xx, yy) / r
    phi = np.arctan2(yy, xx)
    light = float(rng.uniform(-np.pi, np.pi))
    tone = 0.78 + 0.14 * shine * np.cos(phi - light) * d + 0.06 * np.cos(2 * phi + light)
    rim_w = float(rng.uniform(0.08, 0.14))
    rim = (d > 1 - rim_w) & (d <= 1)
    tone = np.where(rim, tone + 0.22 * shine * np.cos(phi - light - np.pi), tone)
    groove = np.abs(d - (1 - rim_w)) < 0.015
    tone = np.where(groove, tone * 0.7, tone)
    relief = _relief(n, r, rng)
    gy, gx = np.gradient(relief)
    tone = tone - 0.9 * (gx * np.cos(light) + gy * np.sin(light)) * shine
    hx, hy = 0.35 * r * np.cos(light + np.pi), 0.35 * r * np.sin(light + np.pi)
    spot = np.exp(-((xx + hx) ** 2 + (yy + hy) ** 2) / (2 * (0.3 * r) ** 2))
    rgb = np.array(base, np.float32)[None, None, :] * tone[..., None]
    rgb = rgb + 0.22 * shine * spot[..., None]
    alpha = np.clip((r - np.hypot(xx, yy)) / SUPER + 0.5, 0, 1)
    return np.asarray(np.clip(np.dstack([rgb, alpha]), 0, 1), np.float32)


def _relief(n: int, r: float, rng: np.random.Generator) -> np.ndarray:
    """Height map of the embossing: a numeral or a star inside a thin inner ring."""
    img = Image.new("L", (n, n), 0)
    draw = ImageDraw.Draw(img)
    ring = r * float(rng.uniform(0.62, 0.75))
    c = n / 2
    draw.ellipse(
        (c - ring, c - ring, c + ring, c + ring), outline=255, width=max(2, round(r * 0.03))
    )
    if rng.random() < 0.6:
        text = str(rng.choice(["1", "2", "5", "10", "20", "50"]))
        font = ImageFont.load_default(size=max(8, round(r * 0.8)))
        draw.text((c, c), text, fill=255, font=font, anchor="mm")
    else:
        k = int(rng.integers(5, 9))
        pts = []
        for i in range(2 * k):
            a = np.pi * i / k + rng.uniform(0, 0.1)
            rr = ring * (0.75 if i % 2 == 0 else 0.35)
            pts.append((c + rr * np.cos(a), c + rr * np.sin(a)))
        draw.polygon(pts, fill=255)
    height = np.asarray(img, np.float32) / 255.0
    return np.asarray(cv2.GaussianBlur(height, (0, 0), max(1.0, r * 0.02)), np.float32)


def token_face(radius: float, colour: Rgb, rng: np.random.Generator) -> np.ndarray:
    """A flat game token at 4x: one colour, a lit bevel, a ring groove, sometimes two holes."""
    n = round(2 * radius * SUPER) + 2
    r = n / 2 - 1
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - n / 2 + 0.5
    d = np.hypot(xx, yy) / r
    light = float(rng.uniform(-np.pi, np.pi))
    phi = np.arctan2(yy, xx)
    bevel = np.clip((d - 0.86) / 0.14, 0, 1) * np.cos(phi - light)
    tone = 0.92 + 0.18 * bevel - 0.05 * d
    groove = np.abs(d - float(rng.uniform(0.55, 0.75))) < 0.03
    tone = np.where(groove, tone * 0.78, tone)
    alpha = np.clip((r - np.hypot(xx, yy)) / SUPER + 0.5, 0, 1)
    if rng.random() < 0.4:  # a button: two holes show the table through
        for sx in (-0.22, 0.22):
            hole = np.hypot(xx - sx * r, yy) < 0.1 * r
            alpha = np.where(hole, 0.0, alpha)
    rgb = np.array(colour, np.float32)[None, None, :] * tone[..., None]
    return np.asarray(np.clip(np.dstack([rgb, alpha]), 0, 1), np.float32)


def flat_disc(flat: np.ndarray, cx: float, cy: float, squash: float, tilt_deg: float) -> Sprite:
    """A flat disc drawing seen with the whole table's tilt (the same squash for every disc)."""
    span = flat.shape[0] / SUPER
    t = np.radians(tilt_deg)
    unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * [span, span * squash]
    c, s = np.cos(t), np.sin(t)
    rot = np.stack([unit[:, 0] * c - unit[:, 1] * s, unit[:, 0] * s + unit[:, 1] * c], axis=1)
    return warp(flat, np.asarray(rot + np.array([cx, cy]), np.float32))


def coin(
    rng: np.random.Generator, cx: float, cy: float, radius: float, metal: str
) -> tuple[Sprite, float]:
    """A coin in the scene, slightly foreshortened; returns its equivalent radius in pixels."""
    flat = coin_face(radius, metal, rng)
    squash = float(rng.uniform(0.88, 1.0))
    span = flat.shape[0] / SUPER
    corners = _quad(rng, cx, cy, span, span * squash, float(rng.uniform(0, 180)), jitter=0.0)
    return warp(flat, corners), radius * float(np.sqrt(squash))
