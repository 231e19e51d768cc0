"""Dice in three-quarter view and embossed coins, painted as anti-aliased shaders.

A die is an upright cube seen from a camera at ``elevation`` degrees above the
table: its top face (the one that counts) is a parallelogram and one or two
side faces show below it, each with its own pips in about half of the scenes.
A coin is a height field (rim, dome, lettering ring and a relief numeral) lit
with diffuse and specular light.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np
from shapely.geometry import MultiPoint, Polygon

from groundeval.benchmarks.synthetic.heldout import _canvas as cv

LAYOUTS: dict[int, list[tuple[float, float]]] = {
    1: [(0.5, 0.5)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)],
}
"""Pip positions as offsets from the face centre in units of the pip margin (1 is centred)."""
PIP_SHAPES = ("round", "square", "hollow", "cupped")
METALS: dict[str, tuple[float, float, float]] = {
    "gold": (0.86, 0.68, 0.30),
    "silver": (0.80, 0.80, 0.82),
    "copper": (0.80, 0.46, 0.30),
    "brass": (0.76, 0.66, 0.36),
    "nickel": (0.64, 0.66, 0.64),
    "bronze": (0.56, 0.40, 0.24),
    "oxidised": (0.36, 0.31, 0.26),
}


@dataclass
class DieStyle:
    """What every die of one scene shares: colours, pips and the camera."""

    face: np.ndarray
    pip: np.ndarray
    pip_shape: str
    pip_radius: float
    margin: float
    elevation_deg: float
    light: np.ndarray
    side_pips: bool
    corner: float = 0.08


@dataclass
class Die:
    """One die: top-face centre in the image, side of the top face in pixels, yaw, faces."""

    cx: float
    cy: float
    side: float
    yaw_deg: float
    pips: int
    flip: bool
    sides: list[int] = field(default_factory=list)

    def axes(self, style: DieStyle) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Image vectors of the top face's two edges and of the vertical edge (downwards)."""
        e = math.radians(style.elevation_deg)
        y = math.radians(self.yaw_deg)
        s = self.side
        a = np.array([s * math.cos(y), -s * math.sin(y) * math.sin(e)])
        b = np.array([-s * math.sin(y), -s * math.cos(y) * math.sin(e)])
        return a, b, np.array([0.0, s * math.cos(e)])

    def top_corners(self, style: DieStyle) -> np.ndarray:
        """The top face's corners in the image, in order around the face."""
        a, b, _ = self.axes(style)
        c = np.array([self.cx, self.cy])
        return np.array(
            [c - a / 2 - b / 2, c + a / 2 - b / 2, c + a / 2 + b / 2, c - a / 2 + b / 2]
        )

    def hull(self, style: DieStyle) -> Polygon:
        """Outline of the whole die in the image (top face and the sides below it)."""
        top = self.top_corners(style)
        _, _, d = self.axes(style)
        hull = MultiPoint([tuple(p) for p in np.vstack([top, top + d])]).convex_hull
        assert isinstance(hull, Polygon)
        return hull

    def visible_sides(self, style: DieStyle) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """(origin, along-edge vector, brightness) of each side face the camera sees."""
        top = self.top_corners(style)
        y = math.radians(self.yaw_deg)
        out = []
        for i in range(4):
            p0, p1 = top[i], top[(i + 1) % 4]
            # the outward normal in table coordinates; it faces the camera when it points at -y
            nx, ny = [(0.0, -1.0), (1.0, 0.0), (0.0, 1.0), (-1.0, 0.0)][i]
            wx = nx * math.cos(y) - ny * math.sin(y)
            wy = nx * math.sin(y) + ny * math.cos(y)
            if wy < -0.02:
                lit = max(0.0, wx * style.light[0] + wy * style.light[1])
                out.append((p0, p1 - p0, 0.45 + 0.35 * lit))
        return out


def _face_shader(
    origin: np.ndarray,
    u: np.ndarray,
    v: np.ndarray,
    colour: np.ndarray,
    pips: list[tuple[float, float]],
    style: DieStyle,
    rounded: tuple[bool, bool],
    brightness: float,
) -> cv.Shader:
    """A face as an affine patch: local (a, b) in [0, 1]^2, rounded corners, bevel, pips."""
    inv = np.linalg.inv(np.column_stack([u, v]))
    r = style.pip_radius
    k = style.corner

    def shade(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dx, dy = xs - origin[0], ys - origin[1]
        a = inv[0, 0] * dx + inv[0, 1] * dy
        b = inv[1, 0] * dx + inv[1, 1] * dy
        inside = (a >= 0) & (a <= 1) & (b >= 0) & (b <= 1)
        for cb, round_it in ((0.0, rounded[0]), (1.0, rounded[1])):
            if not round_it:
                continue
            for ca in (0.0, 1.0):
                qa, qb = abs(a - ca), abs(b - cb)
                corner = (qa < k) & (qb < k)
                inside &= ~corner | (np.hypot(k - qa, k - qb) <= k)
        edge = np.minimum(np.minimum(a, 1 - a), np.minimum(b, 1 - b))
        lum = brightness * (0.82 + 0.18 * np.clip(edge / 0.08, 0, 1))
        rgb = colour[None, None, :] * lum[..., None]
        for pa, pb in pips:
            if style.pip_shape == "square":
                d = np.maximum(abs(a - pa), abs(b - pb)) / 0.9
            else:
                d = np.hypot(a - pa, b - pb)
            hit = d <= r
            if style.pip_shape == "hollow":
                hit &= d >= r * 0.55
            mix = style.pip * brightness
            if style.pip_shape == "cupped":
                mix = (
                    mix[None, None, :]
                    * (0.75 + 0.5 * np.clip((a - pa + b - pb) / r, -0.5, 0.5))[..., None]
                )
            rgb = np.where(hit[..., None], mix, rgb)
        return inside.astype(np.float32), rgb

    return shade


def pip_points(n: int, margin: float, flip: bool) -> list[tuple[float, float]]:
    """Face coordinates of ``n`` pips (``flip`` mirrors the diagonal of 2, 3 and 6)."""
    pts = []
    for ox, oy in LAYOUTS[n]:
        if n == 1:
            pts.append((0.5, 0.5))
            continue
        if flip:
            ox, oy = (-ox, oy) if n in (2, 3) else (oy, ox)
        pts.append((0.5 + ox * (0.5 - margin), 0.5 + oy * (0.5 - margin)))
    return pts


def paint_die(canvas: np.ndarray, die: Die, style: DieStyle) -> np.ndarray:
    """Paint one die (shadow excluded); returns its coverage."""
    a, b, d = die.axes(style)
    top = die.top_corners(style)
    cover = np.zeros(canvas.shape[:2], np.float32)
    for i, (p0, edge, lit) in enumerate(die.visible_sides(style)):
        pips = []
        if style.side_pips and i < len(die.sides):
            pips = pip_points(die.sides[i], style.margin, die.flip)
        shader = _face_shader(p0, edge, d, style.face, pips, style, (False, True), lit)
        box = np.vstack([p0, p0 + edge, p0 + d, p0 + edge + d])
        cover = np.maximum(cover, cv.paint(canvas, (*box.min(0), *box.max(0)), shader))
    lit_top = 0.85 + 0.15 * float(style.light[2])
    shader = _face_shader(
        top[0],
        a,
        b,
        style.face,
        pip_points(die.pips, style.margin, die.flip),
        style,
        (True, True),
        lit_top,
    )
    return cv.f32(np.maximum(cover, cv.paint(canvas, (*top.min(0), *top.max(0)), shader)))


def die_style(rng: np.random.Generator, background: np.ndarray) -> DieStyle:
    """Face colour of any hue (kept visible on the table), pips lighter or darker."""
    face = cv.distinct(rng, background, 0.3)
    pip = cv.distinct(rng, face, 0.45)
    margin = float(rng.uniform(0.24, 0.3))
    light = np.array([rng.uniform(-1, 1), rng.uniform(-1, 0.3), rng.uniform(0.5, 1.0)])
    return DieStyle(
        face=face,
        pip=pip,
        pip_shape=PIP_SHAPES[int(rng.integers(0, len(PIP_SHAPES)))],
        pip_radius=float(rng.uniform(0.065, min(0.11, 0.42 * (0.5 - margin)))),
        margin=margin,
        elevation_deg=float(rng.uniform(42, 78)),
        light=light / np.linalg.norm(light),
        side_pips=bool(rng.random() < 0.55),
    )


def side_values(rng: np.random.Generator, top: int) -> list[int]:
    """Two faces that can sit beside ``top`` on a real die (not it, not its opposite)."""
    choices = [v for v in range(1, 7) if v not in (top, 7 - top)]
    first = int(rng.choice(choices))
    second = int(rng.choice([v for v in choices if v not in (first, 7 - first)]))
    return [first, second]


def place_dice(
    rng: np.random.Generator,
    style: DieStyle,
    w: int,
    h: int,
    n: int,
    side0: float,
    min_dx: float = 0.0,
) -> list[Die]:
    """Up to ``n`` dice inside the image, never overlapping (gap >= 3 px).

    ``min_dx`` keeps top-face centres at least that far apart horizontally, so
    "left to right" is plain to a person.
    """
    dice: list[Die] = []
    hulls: list[Polygon] = []
    for _ in range(3000):
        if len(dice) == n:
            break
        cy = float(rng.uniform(0, h))
        side = side0 * (0.85 + 0.3 * cy / h) * float(rng.uniform(0.95, 1.05))
        die = Die(
            float(rng.uniform(0, w)),
            cy,
            side,
            float(rng.uniform(0, 90)),
            int(rng.integers(1, 7)),
            bool(rng.random() < 0.5),
        )
        die.sides = side_values(rng, die.pips)
        hull = die.hull(style)
        x0, y0, x1, y1 = hull.bounds
        if x0 < 10 or y0 < 10 or x1 > w - 10 or y1 > h - 10:
            continue
        if any(hull.distance(o) < 3 + 0.15 * side for o in hulls):
            continue
        if any(abs(die.cx - o.cx) < min_dx for o in dice):
            continue
        dice.append(die)
        hulls.append(hull)
    return dice


def coin_shader(
    cx: float,
    cy: float,
    r: float,
    metal: np.ndarray,
    light: np.ndarray,
    relief: np.ndarray,
    marks: np.ndarray,
    rim_metal: np.ndarray,
) -> cv.Shader:
    """A lit coin: raised rim, slight dome, a ring of lettering marks, a relief in the middle."""
    half_v = (light + np.array([0, 0, 1.0])) / np.linalg.norm(light + np.array([0, 0, 1.0]))
    rh, rw = relief.shape

    def height(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        dx, dy = (xs - cx) / r, (ys - cy) / r
        d = np.hypot(dx, dy)
        hgt = 0.05 * (1 - np.clip(d, 0, 1) ** 2)
        hgt += 0.09 * np.clip(1 - abs(d - 0.93) / 0.06, 0, 1)
        theta = (np.arctan2(dy, dx) + math.pi) / (2 * math.pi)
        on = marks[(theta * len(marks)).astype(int) % len(marks)]
        ring = (d > 0.68) & (d < 0.8) & on & (np.sin(theta * len(marks) * 2 * math.pi * 3) > -0.2)
        hgt += 0.025 * ring
        ix = np.clip(((dx / 1.05 + 0.5) * rw).astype(int), 0, rw - 1)
        iy = np.clip(((dy / 1.05 + 0.5) * rh).astype(int), 0, rh - 1)
        inside_relief = (abs(dx) < 0.52) & (abs(dy) < 0.52)
        return cv.f32(hgt + 0.04 * relief[iy, ix] * inside_relief)

    def shade(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.hypot(xs - cx, ys - cy) / r
        hgt = height(xs, ys)
        sy = (ys[1, 0] - ys[0, 0]) / r if ys.shape[0] > 1 else 1.0
        sx = (xs[0, 1] - xs[0, 0]) / r if xs.shape[1] > 1 else 1.0
        gy, gx = np.gradient(hgt, sy, sx)
        n = np.stack([-gx * 3, -gy * 3, np.ones_like(gx)], axis=-1)
        n /= np.linalg.norm(n, axis=-1, keepdims=True)
        diffuse = np.clip(n @ light, 0, 1)
        spec = np.clip(n @ half_v, 0, 1) ** 30
        base = np.where((d > 0.86)[..., None], rim_metal, metal)
        rgb = base * (0.3 + 0.8 * diffuse[..., None]) + 0.55 * spec[..., None] * (0.5 + 0.5 * base)
        return (d <= 1.0).astype(np.float32), np.clip(rgb, 0, 1)

    return shade


def relief_mask(rng: np.random.Generator) -> np.ndarray:
    """A blurred numeral or emblem for a coin's middle (values in [0, 1])."""
    text = str(rng.choice(["1", "2", "5", "10", "20", "50", "25", "$", "3"]))
    mask, _ = cv.text_mask(text, 40, rng)
    side = max(mask.shape) + 8
    out = np.zeros((side, side), np.float32)
    y0, x0 = (side - mask.shape[0]) // 2, (side - mask.shape[1]) // 2
    out[y0 : y0 + mask.shape[0], x0 : x0 + mask.shape[1]] = mask
    return cv2.GaussianBlur(out, (0, 0), 1.2)
