"""Dice seen from above: rounded squares at any angle, pips in the standard layouts.

The box is the turned rounded square's exact extent (outline included, shadow and
reflection not): half-width ``(s/2 - r)(|cos| + |sin|) + r`` for side ``s``, corner ``r``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from groundeval.benchmarks.synthetic.blind._paint import (
    BGR,
    Box,
    Patch,
    Sprite,
    shift,
    soften,
    vec,
)
from groundeval.benchmarks.synthetic.blind._stage import luma

FACES: dict[str, BGR] = {
    "white": (242, 242, 240),
    "cream": (196, 228, 244),
    "black": (32, 30, 30),
    "red": (44, 34, 198),
    "navy": (92, 42, 26),
    "green": (62, 148, 40),
    "pink": (190, 156, 248),
    "orange": (30, 132, 244),
    "teal": (150, 138, 18),
}
LIGHT_FACES = ("white", "cream", "pink", "orange")
PIPS: dict[str, BGR] = {"white": (246, 246, 246), "black": (26, 24, 24), "dark red": (34, 22, 138)}
OUTLINE: BGR = (30, 26, 26)
_D = 0.27
"""Pip offset from the face centre, as a share of the side."""
LAYOUTS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0, 0),),
    2: ((-_D, -_D), (_D, _D)),
    3: ((-_D, -_D), (0, 0), (_D, _D)),
    4: ((-_D, -_D), (_D, -_D), (-_D, _D), (_D, _D)),
    5: ((-_D, -_D), (_D, -_D), (0, 0), (-_D, _D), (_D, _D)),
    6: ((-_D, -_D), (-_D, 0), (-_D, _D), (_D, -_D), (_D, 0), (_D, _D)),
}
MIN_STEP = 35.0
"""Least brightness step between a face and the surface's mean."""


@dataclass
class Die:
    """One die: where, how big, how turned, what colours, how many pips."""

    side: float
    angle_deg: float
    corner: float
    face: str
    pip_colour: str
    pips: int
    pip_frac: float
    transpose: bool
    cx: float = 0.0
    cy: float = 0.0

    def half_extent(self) -> float:
        """Half the width (and height) of the turned rounded square's box."""
        a = math.radians(self.angle_deg)
        return (self.side / 2 - self.corner) * (abs(math.cos(a)) + abs(math.sin(a))) + self.corner

    def rel_box(self) -> Box:
        """The box about the centre."""
        e = self.half_extent()
        return (-e, -e, e, e)

    def box(self) -> Box:
        """The box in the image."""
        e = self.half_extent()
        return (self.cx - e, self.cy - e, self.cx + e, self.cy + e)

    def to_image(self, uv: np.ndarray) -> np.ndarray:
        """Face coordinates (units of the side, centre 0) to image pixels."""
        a = math.radians(self.angle_deg)
        rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
        return np.asarray(np.asarray(uv) * self.side @ rot.T + (self.cx, self.cy), np.float64)

    def outline(self, inset: float = 0.0) -> np.ndarray:
        """The rounded square's outline in image pixels, ``inset`` pixels inside."""
        s = (self.side - 2 * inset) / self.side
        r = max(self.corner - inset, 0.5) / self.side
        k = s / 2 - r
        pts = []
        for (sx, sy), start in (((1, 1), 0), ((-1, 1), 90), ((-1, -1), 180), ((1, -1), 270)):
            for t in np.radians(np.linspace(start, start + 90, 10)):
                pts.append((sx * k + r * math.cos(t), sy * k + r * math.sin(t)))
        return self.to_image(np.array(pts))

    def pip_centres(self) -> np.ndarray:
        """Pip centres in image pixels (a six runs along either axis)."""
        uv = np.array(LAYOUTS[self.pips], np.float64)
        return self.to_image(uv[:, ::-1] if self.transpose else uv)


def pick_face(rng: np.random.Generator, surface_luma: float) -> tuple[str, str]:
    """A face colour a brightness step off the surface, and pips that contrast with it."""
    names = [n for n in FACES if abs(luma(FACES[n]) - surface_luma) >= MIN_STEP] or list(FACES)
    face = names[int(rng.integers(len(names)))]
    if face in LIGHT_FACES:
        return face, ("black", "dark red")[int(rng.random() < 0.3)]
    return face, "white"


def sprite(d: Die, look: str, outline_px: float) -> Sprite:
    """The die painted in the look: studio/painterly shading, or flat with outline and cel."""
    p = Patch(d.box())
    face_col = vec(FACES[d.face])
    outer = p.poly(d.outline())
    if outline_px > 0:
        p.paint(outer, OUTLINE)
        inner = p.poly(d.outline(outline_px))
    else:
        inner = outer
    p.paint(inner, face_col)
    if look == "flat":
        lit = shift(inner, -0.09 * d.side, -0.09 * d.side)
        p.tint(inner * (1 - lit), 0.72)
    else:
        _shade(p, d, inner)
    _pips(p, d, look, outline_px)
    return p.sprite()


def _shade(p: Patch, d: Die, face: np.ndarray) -> None:
    """Light from the upper left, a soft bevel at the edges, a studio highlight."""
    xs, ys = p.grid()
    ramp = 1.0 - 0.1 * ((xs - d.cx) + (ys - d.cy)) / d.side
    p.tint(face, ramp)
    bevel = soften(face, 0.05 * d.side)
    p.tint(face, 0.82 + 0.18 * np.clip(bevel * 2 - 1, 0, 1))
    glint = soften(p.disc(d.cx - 0.2 * d.side, d.cy - 0.2 * d.side, 0.16 * d.side), 0.06 * d.side)
    p.paint(glint * face, (255, 255, 255), 0.22)


def _pips(p: Patch, d: Die, look: str, outline_px: float) -> None:
    """Round pips; flat pips have a thin dark rim, studio pips a shadowed upper-left edge."""
    r = d.pip_frac * d.side / 2
    colour = PIPS[d.pip_colour]
    for x, y in d.pip_centres():
        pip = p.disc(x, y, r)
        if outline_px > 0:
            rim = max(1.0, min(outline_px, 0.2 * 2 * r))
            p.paint(pip, OUTLINE)
            p.paint(p.disc(x, y, r - rim), colour)
            continue
        p.paint(pip, colour)
        if look == "studio":
            recess = pip * (1 - p.disc(x + 0.22 * r, y + 0.22 * r, r))
            p.tint(recess, 0.7)
