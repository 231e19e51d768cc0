"""Tuning-only dice photographs, drawn without reference to the detector or the other renderers.

A die's top face is painted as a sprite (rounded square, pips, bevel, gradient, highlight) and
warped onto the table by a homography: a rotated square for top-down shots, a mildly skewed
quadrilateral swept along the view direction (the visible side strip) for oblique ones. Truth
boxes are read off the warped coverage masks, so they hold exactly what was drawn.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from groundeval.benchmarks.synthetic._common import Scene

from ._tables import camera, table

STYLE_VERSION = 1

_FACES = {  # RGB
    "white": (236, 236, 230),
    "ivory": (240, 230, 200),
    "black": (28, 28, 30),
    "red": (196, 28, 36),
    "green": (28, 140, 64),
    "blue": (32, 72, 186),
    "yellow": (240, 202, 40),
    "purple": (118, 48, 160),
    "orange": (240, 122, 30),
    "translucent red": (222, 44, 64),
    "translucent blue": (60, 112, 230),
    "translucent green": (48, 186, 110),
    "translucent amber": (240, 160, 40),
}
_PIPS = {
    "black": (18, 18, 18),
    "white": (246, 246, 246),
    "gold": (214, 176, 58),
    "red": (192, 22, 32),
    "blue": (30, 62, 200),
}
_MIN_LUMA_GAP = 75.0  # pips must stand out from their face in brightness, not just hue


def _luma(rgb: tuple[int, int, int]) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


def _bgr(rgb: tuple[int, int, int]) -> np.ndarray:
    return np.array(rgb[::-1], np.float32)


def pip_centres(pips: int, a: float) -> list[tuple[float, float]]:
    """Standard layout of ``pips`` in face units; ``a`` is the corner pips' inset."""
    lo, c, hi = a, 0.5, 1 - a
    corners = [(lo, lo), (hi, lo), (lo, hi), (hi, hi)]
    return {
        1: [(c, c)],
        2: [(lo, lo), (hi, hi)],
        3: [(lo, lo), (c, c), (hi, hi)],
        4: corners,
        5: [*corners, (c, c)],
        6: [(lo, lo), (lo, c), (lo, hi), (hi, lo), (hi, c), (hi, hi)],
    }[pips]


@dataclass
class _Die:
    """One planned die: its look, and its geometry relative to its centre (pixels)."""

    side: float
    angle: float
    pips: int
    face: str
    pip_colour: str
    quad: np.ndarray  # 4x2 top-face corners, sprite order (0,0) (1,0) (1,1) (0,1)
    sweep: np.ndarray  # 2-vector from top face to bottom face; zero when seen from above
    cx: float = 0.0
    cy: float = 0.0

    def extent(self) -> np.ndarray:
        """[x1, y1, x2, y2] of the drawn outline around the centre (a superset of the mask)."""
        pts = np.vstack([self.quad, self.quad + self.sweep])
        return np.array([*pts.min(0), *pts.max(0)])

    def box(self) -> np.ndarray:
        box: np.ndarray = self.extent() + np.array([self.cx, self.cy, self.cx, self.cy])
        return box


def _plan(
    rng: np.random.Generator, n: int, short: int, oblique: bool, view: float, touch: bool
) -> list[_Die]:
    """Sizes within a factor 1.5 of each other, looks, and (for oblique shots) skewed tops.

    With ``touch`` the first two dice are turned near square to the axes, so the 2-6 px gap
    left between their boxes is also the gap between the dice.
    """
    base = rng.uniform(0.06, 0.18) * short
    lo, hi = max(0.06 * short, base / 1.22), min(0.18 * short, base * 1.22)
    depth, squash = rng.uniform(0.1, 0.24), rng.uniform(0.82, 0.95)
    vd = np.array([math.cos(view), math.sin(view)])
    dice = []
    for i in range(n):
        side, angle = rng.uniform(lo, hi), rng.uniform(0, 2 * math.pi)
        if touch and i < 2:
            angle = int(rng.integers(4)) * math.pi / 2 + rng.uniform(-0.03, 0.03)
        clear = rng.random() < 0.22
        face = str(rng.choice([f for f in _FACES if f.startswith("translucent") == clear]))
        ok = [p for p, c in _PIPS.items() if abs(_luma(c) - _luma(_FACES[face])) >= _MIN_LUMA_GAP]
        unit = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], float) * side / 2
        rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        quad, sweep = unit @ rot.T, np.zeros(2)
        if oblique:  # foreshorten along the view, narrow the far edge, jitter the corners
            along = quad @ vd
            quad = quad + np.outer(along * (squash - 1), vd)
            perp = quad - np.outer(quad @ vd, vd)
            quad = quad + perp * (along / (side / math.sqrt(2)) * rng.uniform(0, 0.08))[:, None]
            quad = quad + rng.uniform(-0.015, 0.015, (4, 2)) * side
            sweep = vd * depth * side
        pips = int(rng.integers(1, 7))
        dice.append(_Die(side, angle, pips, face, str(rng.choice(ok)), quad, sweep))
    return dice


def _separated(a: np.ndarray, b: np.ndarray, gap: float) -> bool:
    return bool(
        a[2] + gap <= b[0] or b[2] + gap <= a[0] or a[3] + gap <= b[1] or b[3] + gap <= a[1]
    )


def _touch(
    rng: np.random.Generator, d: _Die, first: np.ndarray, fits: Callable[[_Die, float], bool]
) -> bool:
    """Put ``d`` 2-6 px right of, left of, below or above the box ``first``, if one fits."""
    ext, g = d.extent(), float(rng.uniform(2, 6))
    for k in rng.permutation(4):
        d.cx = float(rng.uniform(first[0], first[2]) - (ext[0] + ext[2]) / 2)
        d.cy = float(rng.uniform(first[1], first[3]) - (ext[1] + ext[3]) / 2)
        if k < 2:
            d.cx = float(first[2] + g - ext[0] if k == 0 else first[0] - g - ext[2])
        else:
            d.cy = float(first[3] + g - ext[1] if k == 2 else first[1] - g - ext[3])
        if fits(d, g - 1e-6):
            return True
    return False


def _place(rng: np.random.Generator, dice: list[_Die], w: int, h: int, touch: bool) -> list[_Die]:
    """Rejection-sample centres so boxes keep a margin and clear each other.

    With ``touch`` the second die tries to sit beside the first with a 2-6 px gap.
    Dice that find no room are dropped, and the truth counts only what was drawn.
    """
    margin = max(6.0, 0.02 * min(w, h))
    gap = max(8.0, 0.15 * float(np.mean([d.side for d in dice])))
    placed: list[_Die] = []

    def fits(d: _Die, g: float) -> bool:
        b = d.box()
        inside = b[0] >= margin and b[1] >= margin and b[2] <= w - margin and b[3] <= h - margin
        return inside and all(_separated(b, p.box(), g) for p in placed)

    for i, d in enumerate(dice):
        ext = d.extent()
        if touch and i == 1 and placed and _touch(rng, d, placed[0].box(), fits):
            placed.append(d)
            continue
        for _ in range(300):
            d.cx = float(rng.uniform(margin - ext[0], w - margin - ext[2]))
            d.cy = float(rng.uniform(margin - ext[1], h - margin - ext[3]))
            if fits(d, gap):
                placed.append(d)
                break
    return placed


def _sprite(
    rng: np.random.Generator, d: _Die, light: float
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Premultiplied BGR+alpha face sprite and its shape coverage; returns (rgba, shape, n, pad).

    Anti-aliasing is one destination pixel wide, so the warp only has to resample.
    """
    n, pad = int(np.clip(round(1.6 * d.side), 40, 300)), 2
    px = d.side  # destination pixels per face unit
    u = (np.arange(n + 2 * pad, dtype=np.float32) + 0.5 - pad) / n
    uu, vv = np.meshgrid(u, u)
    rc = rng.uniform(0.05, 0.16)
    qx, qy = np.abs(uu - 0.5) - (0.5 - rc), np.abs(vv - 0.5) - (0.5 - rc)
    sdf = np.hypot(np.maximum(qx, 0), np.maximum(qy, 0)) + np.minimum(np.maximum(qx, qy), 0) - rc
    shape = np.clip(0.5 - sdf * px, 0, 1)
    lu, lv = math.cos(light - d.angle), math.sin(light - d.angle)  # light in the sprite frame
    translucent = d.face.startswith("translucent")
    ramp = (uu - 0.5) * lu + (vv - 0.5) * lv
    shade = 1 + rng.uniform(*((0.2, 0.32) if translucent else (0.06, 0.14))) * ramp
    shade *= 1 - 0.2 * (1 - np.clip(-sdf / 0.05, 0, 1))  # rounded bevel darkens the rim
    face = _bgr(_FACES[d.face]) * shade[..., None]
    if rng.random() < 0.3:  # specular blob toward the light; painted under the pips
        hx, hy = (
            0.5 + 0.3 * lu + rng.uniform(-0.08, 0.08),
            0.5 + 0.3 * lv + rng.uniform(-0.08, 0.08),
        )
        blob = np.exp(-((uu - hx) ** 2 + (vv - hy) ** 2) / (2 * rng.uniform(0.05, 0.1) ** 2))
        face += (255 - face) * (rng.uniform(0.25, 0.45) * blob)[..., None]
    opacity = rng.uniform(0.62, 0.78) + 0.1 * ramp if translucent else np.ones_like(uu)

    dia = rng.uniform(0.14, 0.26)
    r, power = dia / 2, 2.0 if rng.random() < 0.6 else rng.uniform(2.6, 3.6)
    inset = rng.uniform(max(0.17, r + 0.05), min(0.30, 0.44 - dia))
    engraved = rng.random() < 0.35
    cover, inner = np.zeros_like(uu), np.zeros_like(uu)
    for cu, cv in pip_centres(d.pips, inset):
        du, dv = np.abs(uu - cu) / r, np.abs(vv - cv) / r
        norm = np.hypot(du, dv) if power == 2.0 else (du**power + dv**power) ** (1 / power)
        cover = np.maximum(cover, np.clip(0.5 - (norm - 1) * r * px, 0, 1))
        if engraved:
            inner = np.maximum(inner, np.clip(0.5 - (norm - 0.62) * r * px, 0, 1))
    pip = _bgr(_PIPS[d.pip_colour])
    if engraved:  # dark ring, lighter centre
        ring, centre = pip * 0.35 + 8, pip * 0.8 + 51
        pip_img = ring * (1 - inner[..., None]) + centre * inner[..., None]
    else:
        pip_img = np.broadcast_to(pip, face.shape)
    alpha = shape * (opacity * (1 - cover) + cover)
    prem = shape[..., None] * (
        face * (opacity * (1 - cover))[..., None] + pip_img * cover[..., None]
    )
    rgba = np.dstack([prem, alpha]).astype(np.float32)
    return rgba, shape.astype(np.float32), n, pad


@dataclass
class _Layer:
    x0: int
    y0: int
    prem: np.ndarray  # premultiplied BGR, float32
    alpha: np.ndarray
    mask: np.ndarray  # coverage of the whole die (top and side), for boxes and shadows


def _draw(rng: np.random.Generator, d: _Die, light: float, w: int, h: int) -> _Layer:
    """Warp the die's sprite into a small window of the image and sweep its side strip."""
    b = d.box()
    x0, y0 = max(0, int(b[0]) - 2), max(0, int(b[1]) - 2)
    x1, y1 = min(w, math.ceil(b[2]) + 3), min(h, math.ceil(b[3]) + 3)
    rgba, shape, n, pad = _sprite(rng, d, light)
    src = np.array([[pad, pad], [pad + n, pad], [pad + n, pad + n], [pad, pad + n]], np.float32)
    dst = (d.quad + np.array([d.cx - x0, d.cy - y0])).astype(np.float32)
    hom = cv2.getPerspectiveTransform(src - 0.5, dst - 0.5)
    size = (x1 - x0, y1 - y0)
    top = cv2.warpPerspective(rgba, hom, size, flags=cv2.INTER_LINEAR)
    top_shape = cv2.warpPerspective(shape, hom, size, flags=cv2.INTER_LINEAR)
    prem, alpha = top[..., :3], top[..., 3]
    mask = top_shape
    length = float(np.hypot(*d.sweep))
    if length > 0:
        side_col = _bgr(_FACES[d.face]) * rng.uniform(0.5, 0.72)
        side_op = 0.9 if d.face.startswith("translucent") else 1.0
        side_p = np.zeros(prem.shape, np.float32)
        over, side_a = np.zeros(alpha.shape, np.float32), np.zeros(alpha.shape, np.float32)
        for t in np.linspace(1, 0, max(2, math.ceil(length / 1.2) + 1)):  # far to near
            shift = np.array([[1, 0, t * d.sweep[0]], [0, 1, t * d.sweep[1]]], np.float32)
            m = cv2.warpAffine(top_shape, shift, size, flags=cv2.INTER_LINEAR)
            side_p = side_p * (1 - m[..., None]) + (side_col * (1 - 0.35 * t)) * m[..., None]
            over = over * (1 - m) + m
            side_a = np.maximum(side_a, m)  # stacked soft edges would widen the strip
        side_p *= (side_a / np.maximum(over, 1e-6))[..., None]
        mask = np.maximum(top_shape, side_a)
        prem = prem + side_p * side_op * (1 - alpha[..., None])
        alpha = alpha + side_a * side_op * (1 - alpha)
    return _Layer(x0, y0, prem, alpha, mask)


def _shadows(layers: list[_Layer], w: int, h: int, offset: np.ndarray, soft: float) -> np.ndarray:
    """Soft drop shadow plus a tight contact shadow, both cast away from the light."""
    mask = np.zeros((h, w), np.float32)
    for ly in layers:
        win = mask[ly.y0 : ly.y0 + ly.mask.shape[0], ly.x0 : ly.x0 + ly.mask.shape[1]]
        np.maximum(win, ly.mask, out=win)
    small = cv2.resize(mask, (w // 4, h // 4), interpolation=cv2.INTER_AREA)
    move = np.array([[1, 0, offset[0] / 4], [0, 1, offset[1] / 4]], np.float32)
    small = cv2.GaussianBlur(cv2.warpAffine(small, move, (w // 4, h // 4)), (0, 0), soft / 4)
    drop = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    move = np.array([[1, 0, offset[0] * 0.2], [0, 1, offset[1] * 0.2]], np.float32)
    contact = cv2.GaussianBlur(cv2.warpAffine(mask, move, (w, h)), (0, 0), 1.5)
    return np.clip(0.75 * drop + 0.5 * contact, 0, 1)


def generate(seed: int) -> Scene:
    """One seeded tuning dice photograph with exact truth (count, pip sum, boxes, colours)."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    rng = np.random.default_rng([seed, 0xD1CE, STYLE_VERSION])
    if rng.random() < 0.5:
        w = 16 * int(rng.integers(30, 61))
        h = w * 3 // 4
    else:
        w = 16 * int(rng.integers(40, 61))
        h = w * 9 // 16
    light = rng.uniform(0, 2 * math.pi)  # direction toward the light, image coordinates
    oblique = rng.random() < 0.45
    view = math.pi / 2 + rng.uniform(-0.7, 0.7) if rng.random() < 0.75 else rng.uniform(0, 6.3)
    n = int(rng.integers(1, 8))
    touch = n >= 2 and rng.random() < 0.25  # ~20% of all images (some pairs find no room)
    dice = _plan(rng, n, min(w, h), oblique, view, touch)
    dice = _place(rng, dice, w, h, touch)
    img, table_name = table(rng, w, h)
    layers = [_draw(rng, d, light, w, h) for d in dice]
    mean_side = float(np.mean([d.side for d in dice]))
    offset = -np.array([math.cos(light), math.sin(light)]) * mean_side * rng.uniform(0.06, 0.2)
    shadow = _shadows(layers, w, h, offset, mean_side * rng.uniform(0.05, 0.14))
    img *= (1 - rng.uniform(0.3, 0.6) * shadow)[..., None]
    for ly in layers:
        win = img[ly.y0 : ly.y0 + ly.alpha.shape[0], ly.x0 : ly.x0 + ly.alpha.shape[1]]
        win *= 1 - ly.alpha[..., None]
        win += ly.prem
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    reach = abs(w * math.cos(light)) + abs(h * math.sin(light))
    ramp = ((xs - w / 2) * math.cos(light) + (ys - h / 2) * math.sin(light)) / reach
    img *= (1 + rng.uniform(0.1, 0.45) * ramp)[..., None]
    truth_dice = []
    for d, ly in zip(dice, layers, strict=True):
        rows, cols = np.nonzero(ly.mask > 0.5)
        box = [ly.x0 + int(cols.min()), ly.y0 + int(rows.min())]
        box += [ly.x0 + int(cols.max()) + 1, ly.y0 + int(rows.max()) + 1]
        truth_dice.append({"xyxy_px": box, "pips": d.pips, "face": d.face})
    smallest_pip = 0.14 * min(d.side for d in dice)
    image = camera(rng, img, smallest_pip)
    truth = {
        "count": len(truth_dice),
        "pip_sum": sum(d.pips for d in dice),
        "dice": truth_dice,
        "table": table_name,
    }
    return Scene(
        id=f"dice-tuningdice-{seed}",
        scene="dice",
        difficulty="tuning",
        seed=seed,
        image_bgr=image,
        truth=truth,
        programs=[],
    )
