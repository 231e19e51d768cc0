"""Things that are not counted: pens and pencils, paper clips, sticky notes, rings, bokeh.

Each prop is a shape about its centre with a nominal box (for placement); its truth box
is read off what was painted. Rings are hollow and notes square, so a counter that
takes them for coins or dice is wrong, not unlucky.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from groundeval.benchmarks.synthetic.blind._paint import BGR, Box, Patch, Sprite, soften, vec

KINDS = ("pen", "pencil", "clip", "note", "ring")
OUTLINE: BGR = (30, 26, 26)
INKS: dict[str, BGR] = {"blue": (150, 70, 20), "black": (40, 38, 38), "red": (40, 40, 190)}
NOTES: dict[str, BGR] = {
    "yellow": (120, 236, 250),
    "pink": (200, 172, 250),
    "green": (170, 236, 184),
    "blue": (244, 214, 168),
}
CLIPS: dict[str, BGR] = {"steel": (190, 188, 184), "red": (50, 50, 200), "blue": (190, 120, 40)}
RINGS: dict[str, BGR] = {"gold": (58, 176, 224), "silver": (200, 198, 194)}
Draw = Callable[[Patch, float, float], None]


@dataclass
class Prop:
    """A distractor: its kind, a nominal box about its centre, and how it paints."""

    kind: str
    rel: Box
    draw: Draw
    casts_shadow: bool = True


def _turn(local: np.ndarray, angle_deg: float, cx: float = 0.0, cy: float = 0.0) -> np.ndarray:
    """Local points turned about the origin, then moved to (cx, cy)."""
    a = math.radians(angle_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return np.asarray(np.asarray(local, np.float64) @ rot.T + np.array([cx, cy]), np.float64)


def _box_of(pts: np.ndarray, grow: float) -> Box:
    """The box of some points, grown by ``grow`` on every side."""
    lo, hi = pts.min(axis=0) - grow, pts.max(axis=0) + grow
    return (float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1]))


def _rounded_rect(u0: float, u1: float, half: float, r: float) -> np.ndarray:
    """A rounded rectangle along u from ``u0`` to ``u1``, ``half`` wide each side."""
    r = min(r, half, (u1 - u0) / 2)
    pts = []
    for (cu, cv), start in (
        ((u1 - r, half - r), 0),
        ((u0 + r, half - r), 90),
        ((u0 + r, -half + r), 180),
        ((u1 - r, -half + r), 270),
    ):
        for t in np.radians(np.linspace(start, start + 90, 7)):
            pts.append((cu + r * math.cos(t), cv + r * math.sin(t)))
    return np.array(pts)


def _outlined(p: Patch, shape: np.ndarray, colour: BGR, outline: float) -> None:
    """A filled polygon, with a dark outline in flat looks (outline > 0)."""
    if outline > 0:
        p.paint(p.line(shape, outline * 2, True), OUTLINE)
    p.paint(p.poly(shape), colour)


def pen(rng: np.random.Generator, unit: float, outline: float, pencil: bool) -> Prop:
    """A pen (capped, rounded body) or a pencil (eraser, ferrule, sharpened cone)."""
    length = float(rng.uniform(0.28, 0.48)) * unit
    half = float(np.clip(0.011 * unit, 3.5, 8.0))
    angle = float(rng.uniform(0, 180))
    tip = (0.09 if pencil else 0.05) * length
    u0, u1 = -length / 2, length / 2 - tip
    ink = list(INKS.values())[int(rng.integers(len(INKS)))]
    body_col: BGR = (40, 190, 240) if pencil else ink
    body = _rounded_rect(u0, u1, half, 0.15 * half if pencil else 0.9 * half)
    cone = np.array([(u1 - 0.5, half * 0.95), (length / 2, 0.0), (u1 - 0.5, -half * 0.95)])
    lead = np.array(
        [(u1 + 0.62 * tip, 0.37 * half), (length / 2, 0.0), (u1 + 0.62 * tip, -0.37 * half)]
    )

    def draw(p: Patch, cx: float, cy: float) -> None:
        def at(local: np.ndarray) -> np.ndarray:
            return _turn(local, angle, cx, cy)

        _outlined(p, at(cone), (150, 196, 226) if pencil else (160, 160, 164), outline)
        p.paint(p.poly(at(lead)), (50, 50, 54))
        _outlined(p, at(body), body_col, outline)
        if pencil:
            eraser = _rounded_rect(u0, u0 + 0.06 * length, half, 0.15 * half)
            ferrule = _rounded_rect(u0 + 0.06 * length, u0 + 0.1 * length, half, 0)
            p.paint(p.poly(at(eraser)), (150, 140, 236))
            p.paint(p.poly(at(ferrule)), (180, 182, 186))
            p.paint(
                p.line(at(np.array([(u0 + 0.1 * length, 0.0), (u1, 0.0)])), 0.5), (30, 150, 200)
            )
        else:
            cap = _rounded_rect(u0, u0 + 0.36 * length, half, 0.9 * half)
            p.paint(p.poly(at(cap)), vec(ink) * 0.6)
            clip_line = np.array([(u0 + 0.08 * length, 0.0), (u0 + 0.3 * length, 0.0)])
            p.paint(p.line(at(clip_line), 1.2), (200, 200, 204))

    pts = _turn(np.vstack([body, cone]), angle)
    return Prop("pencil" if pencil else "pen", _box_of(pts, outline + 1.5), draw)


def clip(rng: np.random.Generator, unit: float, outline: float) -> Prop:
    """A paper clip: one bent wire, three rounded turns."""
    length = max(28.0, float(rng.uniform(0.08, 0.13)) * unit)
    w = 0.4 * length
    thick = float(rng.uniform(2.0, 3.0))
    angle = float(rng.uniform(0, 360))
    colour = list(CLIPS.values())[int(rng.integers(len(CLIPS)))]
    path = _clip_path(length, w) - (w / 2, length / 2)

    def draw(p: Patch, cx: float, cy: float) -> None:
        pts = _turn(path, angle, cx, cy)
        if outline > 0:
            p.paint(p.line(pts, thick + 2), OUTLINE)
        p.paint(p.line(pts, thick), colour)

    return Prop("clip", _box_of(_turn(path, angle), thick / 2 + outline + 1.5), draw)


def _clip_path(length: float, w: float) -> np.ndarray:
    """The wire's centre line, in a (w wide, length long) frame, y down."""

    def arc(cx: float, cy: float, r: float, a0: float, a1: float) -> list[tuple[float, float]]:
        return [
            (cx + r * math.cos(t), cy + r * math.sin(t))
            for t in np.radians(np.linspace(a0, a1, 12))
        ]

    pts = [(w, 0.72 * length), (w, w / 2)]
    pts += arc(w / 2, w / 2, w / 2, 0, -180)
    pts += [(0.0, length - 0.4 * w)]
    pts += arc(0.4 * w, length - 0.4 * w, 0.4 * w, 180, 0)
    pts += [(0.8 * w, 0.55 * w)]
    pts += arc(0.5 * w, 0.55 * w, 0.3 * w, 0, -180)
    pts += [(0.2 * w, 0.62 * length)]
    return np.array(pts)


def note(rng: np.random.Generator, unit: float, outline: float) -> Prop:
    """A small square sticky note, slightly turned, with a paler adhesive strip."""
    side = float(rng.uniform(0.1, 0.16)) * unit
    angle = float(rng.uniform(-30, 30))
    colour = list(NOTES.values())[int(rng.integers(len(NOTES)))]
    sq = np.array([(-1, -1), (1, -1), (1, 1), (-1, 1)], np.float64) * side / 2
    strip = np.array([(-1, -1), (1, -1), (1, -0.62), (-1, -0.62)], np.float64) * side / 2

    def draw(p: Patch, cx: float, cy: float) -> None:
        _outlined(p, _turn(sq, angle, cx, cy), colour, outline)
        p.tint(p.poly(_turn(strip, angle, cx, cy)), 0.94)

    return Prop("note", _box_of(_turn(sq, angle), outline + 1.5), draw)


def ring(rng: np.random.Generator, unit: float, outline: float) -> Prop:
    """A finger ring seen from above: a thin hollow band, sized like a coin."""
    r = float(np.clip(rng.uniform(0.04, 0.07) * unit, 18, 60))
    band = float(rng.uniform(2.0, 4.0))
    colour = list(RINGS.values())[int(rng.integers(len(RINGS)))]
    t = np.linspace(0, 2 * math.pi, 96, endpoint=False)
    unit_circle = np.stack([np.cos(t), np.sin(t)], axis=1)

    def draw(p: Patch, cx: float, cy: float) -> None:
        mid = unit_circle * (r - band / 2) + (cx, cy)
        if outline > 0:
            p.paint(p.line(mid, band + 2, True), OUTLINE)
        p.paint(p.line(mid, band, True), colour)
        lit = unit_circle[(t > math.pi * 1.05) & (t < math.pi * 1.45)] * (r - band / 2) + (cx, cy)
        p.paint(p.line(lit, max(1.0, band / 2)), (250, 250, 250), 0.55)

    e = r + (1.0 if outline > 0 else 0.0) + 1.5
    return Prop("ring", (-e, -e, e, e), draw)


def bokeh(rng: np.random.Generator, unit: float) -> Prop:
    """A large soft out-of-focus light disc (gradient sweeps only), half transparent."""
    r = float(rng.uniform(0.05, 0.11)) * unit
    colour: BGR = ((250, 250, 255), (220, 240, 255), (255, 236, 226))[int(rng.integers(3))]
    strength = float(rng.uniform(0.18, 0.35))
    soft = 0.06 * r

    def draw(p: Patch, cx: float, cy: float) -> None:
        p.paint(soften(p.disc(cx, cy, r), soft), colour, strength)

    e = r + 3 * soft + 2
    return Prop("bokeh", (-e, -e, e, e), draw, casts_shadow=False)


def make(kind: str, rng: np.random.Generator, unit: float, outline: float) -> Prop:
    """A prop of one kind."""
    if kind in ("pen", "pencil"):
        return pen(rng, unit, outline, kind == "pencil")
    if kind == "clip":
        return clip(rng, unit, outline)
    if kind == "note":
        return note(rng, unit, outline)
    if kind == "ring":
        return ring(rng, unit, outline)
    return bokeh(rng, unit)


def paint(prop: Prop, cx: float, cy: float) -> Sprite:
    """The prop painted with its centre at (cx, cy)."""
    rel = prop.rel
    p = Patch((rel[0] + cx, rel[1] + cy, rel[2] + cx, rel[3] + cy))
    prop.draw(p, cx, cy)
    return p.sprite()
