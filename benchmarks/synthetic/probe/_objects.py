"""Dice, coins and distractors of the probe style, drawn as sprites with an alpha mask.

A sprite is painted upright at 4x, shrunk, turned and laid on the canvas; its truth box
is read off its own mask, so it holds exactly what was drawn (no shadow, no reflection).
Studio looks add a contact shadow and, on a glossy floor, a faint flipped reflection.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

SS = 4
"""Supersampling of sprites."""
FACES = {  # name: BGR
    "white": (240, 240, 240),
    "cream": (200, 230, 245),
    "black": (30, 28, 28),
    "red": (40, 30, 200),
    "navy": (90, 40, 25),
    "green": (60, 150, 40),
    "pink": (180, 150, 250),
    "orange": (30, 130, 245),
    "teal": (150, 140, 20),
}
METALS = {  # name: (body, rim) BGR
    "gold": ((60, 175, 220), (40, 140, 190)),
    "silver": ((200, 198, 192), (160, 158, 155)),
    "copper": ((70, 115, 190), (50, 85, 150)),
    "bronze": ((60, 120, 160), (40, 90, 120)),
    "bimetal": ((200, 198, 192), (60, 175, 220)),
}
_LAYOUT = {
    1: [(0.5, 0.5)],
    2: [(0.25, 0.25), (0.75, 0.75)],
    3: [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)],
    4: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75)],
    5: [(0.25, 0.25), (0.75, 0.25), (0.25, 0.75), (0.75, 0.75), (0.5, 0.5)],
    6: [(0.27, 0.22), (0.27, 0.5), (0.27, 0.78), (0.73, 0.22), (0.73, 0.5), (0.73, 0.78)],
}


@dataclass
class Sprite:
    """A painted object: colour (float32 BGR), alpha in 0-1, both the same square size."""

    rgb: np.ndarray
    alpha: np.ndarray


def _bgr(c: tuple[int, int, int] | np.ndarray, f: float = 1.0) -> tuple[float, float, float]:
    return tuple(float(np.clip(v * f, 0, 255)) for v in c)  # type: ignore[return-value]


def pip_colour(face: str, rng: np.random.Generator) -> str:
    """A pip colour that stands out in brightness from the face."""
    dark = face in ("black", "navy", "red", "green", "teal")
    return "white" if dark else str(rng.choice(["black", "dark red"]))


def die_sprite(
    side: float, pips: int, face: str, pip: str, look: str, rng: np.random.Generator
) -> Sprite:
    """A top face: rounded square, standard pips, outline (flat) or soft shading."""
    n = int(np.ceil(side * 1.5)) * SS
    s = side * SS
    o = (n - s) / 2
    alpha = np.zeros((n, n), np.float32)
    corner = s * float(rng.uniform(0.06, 0.22))
    box = (o + corner, o + corner, o + s - corner, o + s - corner)
    cv2.rectangle(alpha, (int(box[0]), int(o)), (int(box[2]), int(o + s)), 1.0, -1)
    cv2.rectangle(alpha, (int(o), int(box[1])), (int(o + s), int(box[3])), 1.0, -1)
    for x in (box[0], box[2]):
        for y in (box[1], box[3]):
            cv2.circle(alpha, (int(x), int(y)), int(corner), 1.0, -1)
    colour = np.array(FACES[face], np.float32)
    rgb = np.empty((n, n, 3), np.float32)
    rgb[:] = colour
    if look == "flat":  # cel shading: one flat darker tone on one side
        rgb[:, int(o + s * 0.72) :] = colour * 0.8
    else:
        ramp = np.linspace(1.08, 0.9, n, dtype=np.float32)[None, :, None]
        rgb = rgb * ramp
    pip_rgb = {"white": (245, 245, 245), "black": (20, 20, 20), "dark red": (30, 20, 140)}[pip]
    radius = s * float(rng.uniform(0.07, 0.11))
    layout = _LAYOUT[pips]
    if rng.random() < 0.5:
        layout = [(y, x) for x, y in layout]
    for px, py in layout:
        centre = (int(o + px * s), int(o + py * s))
        cv2.circle(rgb, centre, int(radius), _bgr(pip_rgb), -1)
        if look == "flat":
            cv2.circle(rgb, centre, int(radius), (15, 15, 15), max(1, int(0.5 * SS)))
    if look == "flat":
        edge = np.zeros_like(alpha)
        cv2.drawContours(edge, _outline(alpha), -1, 1.0, int(rng.integers(2, 5)) * SS)
        rgb[edge > 0] = (20, 20, 22)
    return _shrink(Sprite(rgb, alpha))


def coin_sprite(radius: float, metal: str, look: str, rng: np.random.Generator) -> Sprite:
    """A coin face: rim ring, an inner circle, a numeral and a highlight crescent."""
    n = int(np.ceil(radius * 2 + 4)) * SS
    c = n // 2
    r = radius * SS
    alpha = np.zeros((n, n), np.float32)
    cv2.circle(alpha, (c, c), int(r), 1.0, -1)
    body, rim = (np.array(v, np.float32) for v in METALS[metal])
    rgb = np.empty((n, n, 3), np.float32)
    rgb[:] = rim
    cv2.circle(rgb, (c, c), int(r * 0.86), _bgr(body), -1)
    cv2.circle(rgb, (c, c), int(r * 0.66), _bgr(body, 0.86), max(1, int(r * 0.04)))
    text = str(int(rng.choice([1, 2, 5, 10, 20, 50])))
    scale = r / 40
    (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_DUPLEX, scale, 1)
    thick = max(1, int(scale * 2))
    ink = np.zeros((n, n), np.uint8)  # putText draws in 8 bits only
    cv2.putText(
        ink,
        text,
        (c - tw // 2, c + th // 2),
        cv2.FONT_HERSHEY_DUPLEX,
        scale,
        255,
        thick,
        cv2.LINE_AA,
    )
    a = (ink.astype(np.float32) / 255)[..., None]
    rgb = np.asarray(rgb * (1 - a) + body * 0.7 * a, np.float32)
    if look == "flat":
        rgb[:, c + int(r * 0.3) :] *= 0.82
        ring = np.zeros_like(alpha)
        cv2.circle(ring, (c, c), int(r), 1.0, int(rng.integers(2, 5)) * SS)
        rgb[ring > 0] = (20, 20, 22)
    else:
        glow = np.zeros((n, n), np.float32)
        cv2.ellipse(
            glow,
            (c - int(r * 0.2), c - int(r * 0.25)),
            (int(r * 0.55), int(r * 0.3)),
            -35,
            180,
            300,
            1.0,
            max(1, int(r * 0.1)),
        )
        glow = np.asarray(cv2.GaussianBlur(glow, (0, 0), r * 0.05 + 1), np.float32)
        rgb = rgb + glow[..., None] * 90
    return _shrink(Sprite(rgb, alpha))


def _outline(alpha: np.ndarray) -> list[np.ndarray]:
    contours, _ = cv2.findContours(
        (alpha > 0.5).astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE
    )
    return list(contours)


def _shrink(sprite: Sprite) -> Sprite:
    n = sprite.alpha.shape[0] // SS
    rgb = cv2.resize(sprite.rgb * sprite.alpha[..., None], (n, n), interpolation=cv2.INTER_AREA)
    alpha = cv2.resize(sprite.alpha, (n, n), interpolation=cv2.INTER_AREA)
    return Sprite(rgb / np.maximum(alpha, 1e-6)[..., None], alpha)


def turned(sprite: Sprite, angle_deg: float) -> Sprite:
    """The sprite turned about its centre (same size: a die's square fits its 1.5x sprite)."""
    n = sprite.alpha.shape[0]
    m = cv2.getRotationMatrix2D((n / 2, n / 2), angle_deg, 1.0)
    rgb = cv2.warpAffine(sprite.rgb * sprite.alpha[..., None], m, (n, n), flags=cv2.INTER_LINEAR)
    alpha = cv2.warpAffine(sprite.alpha, m, (n, n), flags=cv2.INTER_LINEAR)
    return Sprite(rgb / np.maximum(alpha, 1e-6)[..., None], alpha)


def lay(
    img: np.ndarray, sprite: Sprite, centre: tuple[float, float], opacity: float = 1.0
) -> list[float]:
    """Composite ``sprite`` centred at ``centre``; the box of its visible pixels (alpha > 0.5)."""
    n = sprite.alpha.shape[0]
    x0, y0 = round(centre[0] - n / 2), round(centre[1] - n / 2)
    h, w = img.shape[:2]
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + n, w), min(y0 + n, h)
    a = sprite.alpha[ya - y0 : yb - y0, xa - x0 : xb - x0, None] * opacity
    region = img[ya:yb, xa:xb]
    region[:] = region * (1 - a) + sprite.rgb[ya - y0 : yb - y0, xa - x0 : xb - x0] * a
    return sprite_box(sprite, centre)


def sprite_box(sprite: Sprite, centre: tuple[float, float]) -> list[float]:
    """The box of a sprite's visible pixels (alpha > 0.5) when centred at ``centre``."""
    n = sprite.alpha.shape[0]
    x0, y0 = round(centre[0] - n / 2), round(centre[1] - n / 2)
    ys, xs = np.nonzero(sprite.alpha > 0.5)
    return [
        float(x0 + xs.min()),
        float(y0 + ys.min()),
        float(x0 + xs.max() + 1),
        float(y0 + ys.max() + 1),
    ]


def contact_shadow(img: np.ndarray, xyxy: list[float], strength: float) -> None:
    """A soft dark ellipse under the object's lower half (studio light from above)."""
    x1, y1, x2, y2 = xyxy
    h, w = img.shape[:2]
    mask = np.zeros((h, w), np.float32)
    centre = (int((x1 + x2) / 2), int(y2 - (y2 - y1) * 0.2))
    cv2.ellipse(mask, centre, (int((x2 - x1) * 0.55), int((y2 - y1) * 0.25)), 0, 0, 360, 1.0, -1)
    mask = cv2.GaussianBlur(mask, (0, 0), (x2 - x1) * 0.08 + 1) * strength
    img *= (1 - mask)[..., None]


def reflection(img: np.ndarray, sprite: Sprite, xyxy: list[float], opacity: float) -> list[float]:
    """The sprite flipped below the object, faded and blurred (a glossy floor); its box."""
    x1, y1, x2, y2 = xyxy
    flipped = Sprite(sprite.rgb[::-1].copy(), cv2.GaussianBlur(sprite.alpha[::-1], (0, 0), 1.5))
    n = flipped.alpha.shape[0]
    fade = np.linspace(1.0, 0.0, n, dtype=np.float32)[:, None] ** 0.7
    flipped.alpha = flipped.alpha * fade
    centre = ((x1 + x2) / 2, y2 + (y2 - y1) / 2 + 2)
    box = lay(img, flipped, centre, opacity)
    return box


def distractor(
    img: np.ndarray, kind: str, centre: tuple[float, float], size: float, rng: np.random.Generator
) -> list[float]:
    """Draw one non-target object (bokeh disc, pen, paper clip, sticky note or ring); its box.

    Everything drawn lies within ``size * 0.75`` of ``centre`` (a turned square's corners).
    """
    cx, cy = centre
    mark = np.zeros(img.shape[:2], np.uint8)
    if kind == "bokeh":
        mask = np.zeros(img.shape[:2], np.float32)
        cv2.circle(mask, (int(cx), int(cy)), int(size / 2), 1.0, -1, cv2.LINE_AA)
        mask = cv2.GaussianBlur(mask, (0, 0), size * 0.06 + 1) * float(rng.uniform(0.15, 0.3))
        img[:] = img * (1 - mask[..., None]) + 255 * mask[..., None]
    elif kind == "pen":
        t = rng.uniform(0, np.pi)
        d = np.array([np.cos(t), np.sin(t)]) * size / 2
        a, b = np.array(centre) - d, np.array(centre) + d
        colour = _bgr(FACES[str(rng.choice(["navy", "red", "black", "green"]))])
        ends = (tuple(int(v) for v in a), tuple(int(v) for v in b))
        for canvas, c in ((img, colour), (mark, 255)):
            cv2.line(canvas, *ends, c, int(size * 0.07) + 2, cv2.LINE_AA)
    elif kind == "clip":
        t = float(rng.uniform(0, 180))
        for k in (1.0, 0.65):
            box = ((cx, cy), (size * 0.28 * k, size * k), t)
            pts = cv2.boxPoints(box).astype(np.int32)
            cv2.polylines(img, [pts], True, (150, 150, 155), 2, cv2.LINE_AA)
            cv2.polylines(mark, [pts], True, 255, 2, cv2.LINE_AA)
    elif kind == "note":
        pts = cv2.boxPoints(((cx, cy), (size, size), float(rng.uniform(0, 90)))).astype(np.int32)
        cv2.fillPoly(img, [pts], (120, 235, 245), cv2.LINE_AA)
        cv2.fillPoly(mark, [pts], 255, cv2.LINE_AA)
    else:  # ring
        cv2.circle(img, (int(cx), int(cy)), int(size / 2), (60, 175, 220), 4, cv2.LINE_AA)
    if kind in ("bokeh", "ring"):
        cv2.circle(mark, (int(cx), int(cy)), int(size / 2) + 2, 255, -1)
    ys, xs = np.nonzero(mark)
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]
