"""Coins seen from above: a metal disc with a rim, a relief and a highlight crescent.

Five metals (gold, silver, copper, bronze, bimetal with either centre); the relief is a
darker inner circle, a raised star or a numeral, turned with the coin. The box is the
disc's extent (rim and outline included): centre plus and minus the radius.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from groundeval.benchmarks.synthetic.blind._paint import (
    BGR,
    SS,
    Box,
    Patch,
    Sprite,
    shift,
    soften,
    vec,
)
from groundeval.benchmarks.synthetic.blind._stage import luma

METALS: dict[str, BGR] = {
    "gold": (58, 172, 218),
    "silver": (196, 194, 188),
    "copper": (62, 108, 188),
    "bronze": (72, 122, 160),
}
KINDS = ("gold", "silver", "copper", "bronze", "bimetal")
RELIEFS = ("circle", "star", "numeral")
NUMERALS = ("1", "2", "5", "10", "20", "50")
OUTLINE: BGR = (30, 26, 26)
MIN_STEP = 20.0
"""Least brightness step between a one-metal coin and the surface's mean."""


@dataclass
class Coin:
    """One coin: centre, radius, metal (and a bimetal's centre), relief, turn."""

    r: float
    metal: str
    centre_metal: str
    relief: str
    numeral: str
    angle_deg: float
    cx: float = 0.0
    cy: float = 0.0

    def rel_box(self) -> Box:
        """The box about the centre."""
        return (-self.r, -self.r, self.r, self.r)

    def box(self) -> Box:
        """The box in the image."""
        return (self.cx - self.r, self.cy - self.r, self.cx + self.r, self.cy + self.r)

    @property
    def ring_metal(self) -> str:
        """The metal of the outer part (the whole coin unless bimetal)."""
        if self.metal != "bimetal":
            return self.metal
        return "gold" if self.centre_metal == "silver" else "silver"


def pick_coin(rng: np.random.Generator, r: float, surface_luma: float) -> Coin:
    """A coin whose metal stands off the surface in brightness (bimetal always does)."""
    kinds = [k for k in KINDS if k == "bimetal" or abs(luma(METALS[k]) - surface_luma) >= MIN_STEP]
    metal = kinds[int(rng.integers(len(kinds)))]
    centre = ("silver", "gold")[int(rng.integers(2))] if metal == "bimetal" else metal
    relief = RELIEFS[int(rng.integers(len(RELIEFS)))]
    numeral = NUMERALS[int(rng.integers(len(NUMERALS)))]
    return Coin(r, metal, centre, relief, numeral, float(rng.uniform(-180, 180)))


def sprite(c: Coin, look: str, outline_px: float) -> Sprite:
    """The coin painted in the look."""
    p = Patch(c.box())
    outer = p.disc(c.cx, c.cy, c.r)
    body = outer
    if outline_px > 0:
        p.paint(outer, OUTLINE)
        body = p.disc(c.cx, c.cy, c.r - outline_px)
    r = c.r - outline_px
    ring = vec(METALS[c.ring_metal])
    p.paint(body, ring)
    if c.metal == "bimetal":
        core = p.disc(c.cx, c.cy, 0.6 * r)
        p.paint(core, vec(METALS[c.centre_metal]))
        p.paint(p.line(_circle(c.cx, c.cy, 0.6 * r), max(1.0, 0.03 * r), True), ring * 0.6)
    p.paint(p.line(_circle(c.cx, c.cy, 0.86 * r), max(1.0, 0.035 * r), True), ring * 0.62)
    _relief(p, c, r)
    if look == "flat":
        lit = shift(body, -0.1 * r, -0.1 * r)
        p.tint(body * (1 - lit), 0.74)
        shine = body * (1 - shift(body, 0.09 * r, 0.09 * r))
        p.paint(shine, (255, 255, 255), 0.4)
    else:
        xs, ys = p.grid()
        p.tint(body, 1.0 - 0.13 * ((xs - c.cx) + (ys - c.cy)) / r)
        lower = p.disc(c.cx + 0.14 * r, c.cy + 0.14 * r, 0.8 * r)
        crescent = soften(p.disc(c.cx, c.cy, 0.8 * r) * (1 - lower), max(0.3, 0.05 * r))
        p.paint(crescent * body, (255, 255, 255), 0.45)
    return p.sprite()


def _circle(cx: float, cy: float, r: float, n: int = 72) -> np.ndarray:
    """Points on a circle (for rings drawn as closed polylines)."""
    t = np.linspace(0, 2 * math.pi, n, endpoint=False)
    return np.stack([cx + r * np.cos(t), cy + r * np.sin(t)], axis=1)


def _relief(p: Patch, c: Coin, r: float) -> None:
    """A darker inner circle, or a raised star or numeral (shadowed low right, lit high left)."""
    if c.relief == "circle":
        p.tint(p.disc(c.cx, c.cy, 0.62 * r) * (1 - p.disc(c.cx, c.cy, 0.56 * r)), 0.72)
        p.tint(p.disc(c.cx, c.cy, 0.56 * r), 0.9)
        return
    shape = _star(p, c, r) if c.relief == "star" else _numeral(p, c, r)
    depth = max(1.0, 0.05 * r)
    p.tint(shift(shape, depth, depth) * (1 - shape), 0.68)
    p.tint(shape, 1.14)


def _star(p: Patch, c: Coin, r: float) -> np.ndarray:
    """Coverage of a five-pointed star turned with the coin."""
    a0 = math.radians(c.angle_deg)
    pts = [
        (
            c.cx + (0.45 if k % 2 == 0 else 0.19) * r * math.sin(a0 + k * math.pi / 5),
            c.cy - (0.45 if k % 2 == 0 else 0.19) * r * math.cos(a0 + k * math.pi / 5),
        )
        for k in range(10)
    ]
    return p.poly(np.array(pts))


def _numeral(p: Patch, c: Coin, r: float) -> np.ndarray:
    """Coverage of the coin's numeral (cv2.putText), turned part way with the coin."""
    font = cv2.FONT_HERSHEY_DUPLEX
    target = 0.55 * r * SS
    (tw, th), _ = cv2.getTextSize(c.numeral, font, 1.0, 1)
    scale = target / th
    if tw * scale > 1.0 * r * SS:
        scale = 1.0 * r * SS / tw
    thick = max(1, round(0.09 * r * SS))
    (tw, th), _ = cv2.getTextSize(c.numeral, font, scale, thick)
    ox, oy = (c.cx - p.x0) * SS, (c.cy - p.y0) * SS
    m = np.zeros(p.alpha.shape, np.uint8)
    cv2.putText(m, c.numeral, (round(ox - tw / 2), round(oy + th / 2)), font, scale, 255, thick)
    turn = cv2.getRotationMatrix2D((ox, oy), -c.angle_deg * 0.3, 1.0)
    turned = cv2.warpAffine(m, turn, (m.shape[1], m.shape[0]), flags=cv2.INTER_LINEAR)
    return np.asarray(turned, np.float32) / 255
