"""Supersampled drawing patches, sprites and how they land on the canvas.

Every object is painted at 4x in a patch around its box, shrunk by area averaging (smooth
edges) and kept premultiplied, so shadows, reflections and the object itself all blend
from one sprite. The canvas is float32 BGR in 0-255 until the finish.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

SS = 4
"""Supersampling factor of patches."""
_SHIFT = 4
"""Fractional bits of cv2 coordinates (1/16 of a supersampled pixel)."""

Box = tuple[float, float, float, float]
BGR = tuple[float, float, float]


@dataclass
class Sprite:
    """A premultiplied colour patch and its coverage, at image resolution."""

    premult: np.ndarray
    alpha: np.ndarray
    x0: int
    y0: int


class Patch:
    """A supersampled drawing area covering an image box (plus a small pad)."""

    def __init__(self, box: Box, pad: int = 2) -> None:
        """Open a transparent patch around ``box`` (image pixels)."""
        self.x0 = math.floor(box[0]) - pad
        self.y0 = math.floor(box[1]) - pad
        self.w = math.ceil(box[2]) + pad - self.x0
        self.h = math.ceil(box[3]) + pad - self.y0
        self.premult = np.zeros((self.h * SS, self.w * SS, 3), np.float32)
        self.alpha = np.zeros((self.h * SS, self.w * SS), np.float32)

    def pts(self, xy: np.ndarray) -> np.ndarray:
        """Image coordinates as cv2 fixed-point points of this patch."""
        local = (np.asarray(xy, np.float64) - (self.x0, self.y0)) * SS - 0.5
        return np.round(local * (1 << _SHIFT)).astype(np.int32).reshape(-1, 1, 2)

    def grid(self) -> tuple[np.ndarray, np.ndarray]:
        """Image coordinates of every supersampled pixel centre (for ramps and fades)."""
        xs = self.x0 + (np.arange(self.w * SS, dtype=np.float32) + 0.5) / SS
        ys = self.y0 + (np.arange(self.h * SS, dtype=np.float32) + 0.5) / SS
        return xs[None, :], ys[:, None]

    def _blank(self) -> np.ndarray:
        return np.zeros(self.alpha.shape, np.uint8)

    def poly(self, xy: np.ndarray) -> np.ndarray:
        """Coverage (0-1) of a filled polygon."""
        m = self._blank()
        cv2.fillPoly(m, [self.pts(xy)], 255, cv2.LINE_AA, _SHIFT)
        return m.astype(np.float32) / 255

    def line(self, xy: np.ndarray, width: float, closed: bool = False) -> np.ndarray:
        """Coverage of a polyline ``width`` image pixels thick."""
        m = self._blank()
        thick = max(1, round(width * SS))
        cv2.polylines(m, [self.pts(xy)], closed, 255, thick, cv2.LINE_AA, _SHIFT)
        return m.astype(np.float32) / 255

    def disc(self, cx: float, cy: float, r: float) -> np.ndarray:
        """Coverage of a filled circle."""
        m = self._blank()
        centre = tuple(int(v) for v in self.pts(np.array([[cx, cy]]))[0, 0])
        radius = max(1, round(r * SS * (1 << _SHIFT)))
        cv2.circle(m, (centre[0], centre[1]), radius, 255, -1, cv2.LINE_AA, _SHIFT)
        return m.astype(np.float32) / 255

    def paint(self, cover: np.ndarray, colour: BGR | np.ndarray, opacity: float = 1.0) -> None:
        """Lay ``colour`` over what is painted, where ``cover`` says (the over operator)."""
        win = _support(cover)
        if win is None:
            return
        m = cover[win] * opacity
        c = np.asarray(colour, np.float32)
        c = c[win] if c.ndim == 3 else c
        self.premult[win] *= (1 - m)[..., None]
        self.premult[win] += m[..., None] * c
        self.alpha[win] = m + self.alpha[win] * (1 - m)

    def tint(self, cover: np.ndarray, factor: float | np.ndarray) -> None:
        """Darken (< 1) or lighten (> 1) what is painted, where ``cover`` says."""
        win = _support(cover)
        if win is None:
            return
        f = np.asarray(factor, np.float32)
        f = 1 + ((f[win] if f.ndim == 2 else f) - 1) * cover[win]
        self.premult[win] *= f[..., None]

    def sprite(self) -> Sprite:
        """The patch shrunk to image pixels."""
        size = (self.w, self.h)
        premult = cv2.resize(self.premult, size, interpolation=cv2.INTER_AREA)
        alpha = cv2.resize(self.alpha, size, interpolation=cv2.INTER_AREA)
        return Sprite(np.minimum(premult, 255 * alpha[..., None]), alpha, self.x0, self.y0)


def vec(values: BGR | Sequence[float] | Sequence[Sequence[float]]) -> np.ndarray:
    """Numbers as a float32 array (colours, matrices)."""
    return np.asarray(values, np.float32)


def _support(cover: np.ndarray) -> tuple[slice, slice] | None:
    """The rows and columns where a coverage map is not zero (painting skips the rest)."""
    rows, cols = np.flatnonzero(cover.any(axis=1)), np.flatnonzero(cover.any(axis=0))
    if len(rows) == 0:
        return None
    return slice(int(rows[0]), int(rows[-1]) + 1), slice(int(cols[0]), int(cols[-1]) + 1)


def soften(cover: np.ndarray, sigma: float) -> np.ndarray:
    """A coverage map blurred by ``sigma`` image pixels (blurred at image scale: faster)."""
    h, w = cover.shape
    small = cv2.resize(cover, (w // SS, h // SS), interpolation=cv2.INTER_AREA)
    small = cv2.GaussianBlur(small, (0, 0), max(sigma, 0.3))
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)


def shift(cover: np.ndarray, dx: float, dy: float) -> np.ndarray:
    """A coverage map moved by (dx, dy) image pixels, empty where it came from outside."""
    sx, sy = round(dx * SS), round(dy * SS)
    out = np.zeros_like(cover)
    h, w = cover.shape
    out[max(sy, 0) : h + min(sy, 0), max(sx, 0) : w + min(sx, 0)] = cover[
        max(-sy, 0) : h + min(-sy, 0), max(-sx, 0) : w + min(-sx, 0)
    ]
    return out


def _window(canvas: np.ndarray, x0: int, y0: int, h: int, w: int) -> tuple[slice, ...] | None:
    """Canvas rows/cols a (h, w) patch at (x0, y0) reaches, and the patch's own (clipped)."""
    ch, cw = canvas.shape[:2]
    ax, ay, bx, by = max(x0, 0), max(y0, 0), min(x0 + w, cw), min(y0 + h, ch)
    if ax >= bx or ay >= by:
        return None
    return slice(ay, by), slice(ax, bx), slice(ay - y0, by - y0), slice(ax - x0, bx - x0)


def over(canvas: np.ndarray, s: Sprite, opacity: float = 1.0) -> None:
    """Lay a sprite on the canvas."""
    win = _window(canvas, s.x0, s.y0, *s.alpha.shape)
    if win is None:
        return
    cy, cx, py, px = win
    a = s.alpha[py, px, None] * opacity
    canvas[cy, cx] = canvas[cy, cx] * (1 - a) + s.premult[py, px] * opacity


def shadow(
    canvas: np.ndarray, s: Sprite, dx: float, dy: float, sigma: float, strength: float
) -> None:
    """Darken the canvas under a sprite's outline moved by (dx, dy) and blurred by ``sigma``."""
    pad = math.ceil(3 * sigma + abs(dx) + abs(dy)) + 2
    a = cv2.copyMakeBorder(s.alpha, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0.0)
    m = vec([[1, 0, dx], [0, 1, dy]])
    a = cv2.warpAffine(a, m, (a.shape[1], a.shape[0]), flags=cv2.INTER_LINEAR)
    if sigma > 0:
        a = cv2.GaussianBlur(a, (0, 0), sigma)
    win = _window(canvas, s.x0 - pad, s.y0 - pad, *a.shape)
    if win is None:
        return
    cy, cx, py, px = win
    canvas[cy, cx] *= (1 - strength * a[py, px])[..., None]


def reflection(s: Sprite, floor_y: float, fade_px: float, opacity: float) -> Sprite:
    """The sprite flipped about the line ``floor_y``, fading out over ``fade_px`` and blurred.

    Nothing of it lies above ``floor_y``'s row, so it never reaches into its object's box.
    """
    h = s.alpha.shape[0]
    y0 = round(2 * floor_y - s.y0 - h)
    rows = y0 + np.arange(h, dtype=np.float32) + 0.5
    fade = np.clip(1 - (rows - floor_y) / fade_px, 0, 1) ** 1.6 * opacity
    premult = s.premult[::-1] * fade[:, None, None]
    alpha = s.alpha[::-1] * fade[:, None]
    premult = cv2.GaussianBlur(premult, (9, 9), 1.3)
    alpha = cv2.GaussianBlur(alpha, (9, 9), 1.3)
    above = max(0, min(h, math.ceil(floor_y) - y0))
    premult[:above] = 0
    alpha[:above] = 0
    return Sprite(premult, alpha, s.x0, y0)


def extent(s: Sprite, size_wh: tuple[int, int], floor: float = 1 / 255) -> Box | None:
    """The box of a sprite's visible pixels inside the image (None if nothing shows)."""
    w, h = size_wh
    ys, xs = np.nonzero(s.alpha >= floor)
    if len(xs) == 0:
        return None
    x1, x2 = max(int(xs.min()) + s.x0, 0), min(int(xs.max()) + 1 + s.x0, w)
    y1, y2 = max(int(ys.min()) + s.y0, 0), min(int(ys.max()) + 1 + s.y0, h)
    if x1 >= x2 or y1 >= y2:
        return None
    return (float(x1), float(y1), float(x2), float(y2))
