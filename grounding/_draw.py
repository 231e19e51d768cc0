"""Drawing numbered help lines (Set-of-Mark style) on a copy of the image.

A verifier, judge or person reads the overlay by number, so the numbers must be
legible at any image size and must not hide what they label: line widths and
font scale follow the image's short side, labels sit above the object and
inside the image, and every mark gets a dark outline so it shows on light and
dark backgrounds alike. Colours come from the Okabe-Ito palette, which stays
distinguishable under the common colour-vision deficiencies. Output is
deterministic (pure OpenCV raster operations), so overlays can be golden-tested.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np
import supervision as sv
from supervision.geometry.core import Rect

from groundeval.state import Element

OKABE_ITO = sv.ColorPalette.from_hex(
    ["#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"]
)
"""Okabe-Ito colours (black left out: it vanishes on dark images); element n uses n-1 mod 7."""
_OUTLINE = sv.Color.BLACK
_FONT = cv2.FONT_HERSHEY_SIMPLEX
_FILL_OPACITY = 0.3
_LIMIT = 1 << 20
"""Coordinates are clipped to +-this before rounding: absurd values must not crash OpenCV."""


@dataclass(frozen=True)
class MarkStyle:
    """Sizes derived from the image so marks read the same on 64 px and 4000 px images."""

    line: int
    font_scale: float
    font_thickness: int
    padding: int
    point_radius: int
    arrow_px: int

    @classmethod
    def for_size(cls, width: int, height: int) -> MarkStyle:
        """Scale with the short side: about 1 px of line per 300 px of image."""
        short = max(1, min(width, height))
        line = max(1, round(short / 300))
        font_scale = min(8.0, max(0.4, short / 900))
        return cls(
            line=line,
            font_scale=font_scale,
            font_thickness=max(1, round(font_scale * 1.6)),
            padding=max(2, round(font_scale * 5)),
            point_radius=max(3, line * 3),
            arrow_px=max(8, line * 8),
        )


UNEXPLAINED_COLOR = sv.Color.from_hex("#FF00FF")
"""Magenta, outside the Okabe-Ito set: regions the proposer found but could not explain."""
OTHER_COLORS = sv.ColorPalette.from_hex(["#FFFFFF", "#9AA0A6"])
"""White, then grey: elements of independent proposers (consensus), dashed, ``a1``, ``b1``..."""


def draw_marks(
    image_bgr: np.ndarray,
    elements: list[Element],
    helper: str = "boxes",
    *,
    unexplained: Sequence[Element] = (),
    others: Sequence[Sequence[Element]] = (),
) -> np.ndarray:
    """Return a copy of the image with every element drawn and labelled by its id.

    Args:
        image_bgr: The original image (BGR, uint8; grayscale and BGRA are accepted).
        elements: Elements to draw; ``ray`` elements are extended to the image border.
        helper: The spec's helper kind (kept for the signature; marks follow each
            element's own kind).
        unexplained: Regions the proposer could not explain: dashed magenta, labelled ``?``
            (so nobody mistakes them for counted elements).
        others: Independent proposals (consensus), one list per proposer: dashed,
            labelled ``a1``, ``a2``... for the first proposer, ``b1``... for the second.

    Returns:
        A new BGR uint8 image; the input is not modified.
    """
    scene = _as_bgr(image_bgr)
    height, width = scene.shape[:2]
    style = MarkStyle.for_size(width, height)
    drawable = [e for e in elements if _finite(e)]
    _fill_polygons(scene, [e for e in drawable if e.kind == "polygon"])
    ghosts = [
        (e, OTHER_COLORS.by_idx(g), f"{_letter(g)}{e.id}")
        for g, group in enumerate(others)
        for e in group
        if _finite(e)
    ]
    ghosts += [(e, UNEXPLAINED_COLOR, "?") for e in unexplained if _finite(e)]
    for e, color, _ in ghosts:
        _draw_dashed(scene, e, style, color)
    for e in drawable:
        _draw_shape(scene, e, style, OKABE_ITO.by_idx(e.id - 1))
    placed: list[tuple[int, int, int, int]] = []
    for e in drawable:
        _draw_label(scene, e, style, placed)
    for e, color, text in ghosts:
        _draw_label(scene, e, style, placed, text=text, color=color)
    del helper
    return scene


def _letter(group: int) -> str:
    """``a``..``z``, then ``aa``, ``bb``...: the label prefix of the n-th independent proposer."""
    return chr(ord("a") + group % 26) * (group // 26 + 1)


def _draw_dashed(scene: np.ndarray, e: Element, style: MarkStyle, color: sv.Color) -> None:
    """Dashed outline (ring for a point): drawn under the solid marks, never mistaken for one."""
    if e.kind == "point":
        centre = _xy(*(e.points_px or [[0.0, 0.0]])[0])
        radius = style.point_radius * 2
        cv2.circle(scene, centre, radius, _OUTLINE.as_bgr(), style.line + 2)
        cv2.circle(scene, centre, radius, color.as_bgr(), style.line)
        return
    if e.kind == "box" and e.xyxy_px is not None:
        x1, y1, x2, y2 = e.xyxy_px
        path, closed = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]], True
    elif e.kind == "ray":
        (x0, y0), (xa, ya) = (e.points_px or [[0.0, 0.0], [0.0, 0.0]])[:2]
        path = [[x0, y0], list(ray_to_border(x0, y0, xa, ya, scene.shape[1], scene.shape[0]))]
        closed = False
    else:
        path, closed = [list(p) for p in e.points_px or []], e.kind == "polygon"
    points = [_xy(x, y) for x, y in path]
    if closed:
        points.append(points[0])
    dash = max(4, style.line * 4)
    for c, t in ((_OUTLINE, style.line + 2), (color, style.line)):
        for start, end in itertools.pairwise(points):
            _dashed_segment(scene, start, end, dash, c.as_bgr(), t)


def _dashed_segment(
    scene: np.ndarray,
    start: tuple[int, int],
    end: tuple[int, int],
    dash: int,
    bgr: tuple[int, int, int],
    thickness: int,
) -> None:
    length = math.hypot(end[0] - start[0], end[1] - start[1])
    if length < 1:
        return
    steps = min(4096, max(1, int(length // dash)))
    for k in range(0, steps, 2):
        a, b = k / steps, min(1.0, (k + 1) / steps)
        p = (round(start[0] + (end[0] - start[0]) * a), round(start[1] + (end[1] - start[1]) * a))
        q = (round(start[0] + (end[0] - start[0]) * b), round(start[1] + (end[1] - start[1]) * b))
        cv2.line(scene, p, q, bgr, thickness, cv2.LINE_8)


def _fill_polygons(scene: np.ndarray, polygons: list[Element]) -> None:
    """Translucent fills, blended in one pass (one image copy, however many polygons)."""
    if not polygons:
        return
    filled = scene.copy()
    for e in polygons:
        cv2.fillPoly(filled, [_pts(e.points_px or [])], OKABE_ITO.by_idx(e.id - 1).as_bgr())
    cv2.addWeighted(filled, _FILL_OPACITY, scene, 1 - _FILL_OPACITY, 0, dst=scene)


def _as_bgr(image: np.ndarray) -> np.ndarray:
    img = np.asarray(image)
    if img.dtype != np.uint8:
        raise ValueError(f"draw_marks needs a uint8 image, got dtype {img.dtype}")
    if img.ndim == 2:
        return cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.ndim == 3 and img.shape[2] == 4:
        return cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
    if img.ndim == 3 and img.shape[2] == 3:
        return np.ascontiguousarray(img).copy()
    raise ValueError(f"draw_marks needs an HxW, HxWx3 or HxWx4 image, got shape {img.shape}")


def _finite(e: Element) -> bool:
    values = e.xyxy_px if e.xyxy_px is not None else [v for p in e.points_px or [] for v in p]
    return bool(values) and all(math.isfinite(v) for v in values)


def _xy(x: float, y: float) -> tuple[int, int]:
    return (
        round(min(max(x, -_LIMIT), _LIMIT)),
        round(min(max(y, -_LIMIT), _LIMIT)),
    )


def _pts(points: list[list[float]]) -> np.ndarray:
    return np.array([_xy(x, y) for x, y in points], dtype=np.int64)


def _draw_shape(scene: np.ndarray, e: Element, style: MarkStyle, color: sv.Color) -> None:
    t = style.line
    if e.kind == "box" and e.xyxy_px is not None:
        (x1, y1), (x2, y2) = _xy(*e.xyxy_px[:2]), _xy(*e.xyxy_px[2:])
        rect = Rect(x=x1, y=y1, width=x2 - x1, height=y2 - y1)
        sv.draw_rectangle(scene, rect, _OUTLINE, thickness=t + 2)
        sv.draw_rectangle(scene, rect, color, thickness=t)
    elif e.kind == "polygon":
        pts = _pts(e.points_px or [])
        sv.draw_polygon(scene, pts, _OUTLINE, thickness=t + 2)
        sv.draw_polygon(scene, pts, color, thickness=t)
    elif e.kind in ("line", "ray"):
        _draw_arrow(scene, e, style, color)
    elif e.kind == "point":
        centre = _xy(*(e.points_px or [[0.0, 0.0]])[0])
        cv2.circle(scene, centre, style.point_radius + 1, _OUTLINE.as_bgr(), -1)
        cv2.circle(scene, centre, style.point_radius, color.as_bgr(), -1)


def _draw_arrow(scene: np.ndarray, e: Element, style: MarkStyle, color: sv.Color) -> None:
    """A line from its first point with an arrowhead; a ray runs on to the image border."""
    (x0, y0), (x1, y1) = (e.points_px or [[0.0, 0.0], [0.0, 0.0]])[:2]
    if e.kind == "ray":
        x1, y1 = ray_to_border(x0, y0, x1, y1, scene.shape[1], scene.shape[0])
    start, end = _xy(x0, y0), _xy(x1, y1)
    length = math.hypot(end[0] - start[0], end[1] - start[1])
    radius = max(2, style.line + 1)
    cv2.circle(scene, start, radius + 1, _OUTLINE.as_bgr(), -1)
    cv2.circle(scene, start, radius, color.as_bgr(), -1)
    if length < 1:
        return
    tip = min(0.5, style.arrow_px / length)
    for c, t in ((_OUTLINE, style.line + 2), (color, style.line)):
        cv2.arrowedLine(scene, start, end, c.as_bgr(), t, cv2.LINE_8, 0, tip)


def ray_to_border(
    x0: float, y0: float, x1: float, y1: float, width: int, height: int
) -> tuple[float, float]:
    """Where the ray from (x0, y0) through (x1, y1) leaves the image (pixel centres).

    Returns (x1, y1) unchanged when the two points coincide or the ray never
    enters the image rectangle beyond its second point.
    """
    dx, dy = x1 - x0, y1 - y0
    if dx == 0 and dy == 0:
        return x1, y1
    limits = []
    if dx:
        limits.append(((width - 1 if dx > 0 else 0) - x0) / dx)
    if dy:
        limits.append(((height - 1 if dy > 0 else 0) - y0) / dy)
    t = min(limits)
    if t <= 1:
        return x1, y1
    return x0 + t * dx, y0 + t * dy


def _anchor_box(e: Element) -> tuple[float, float, float, float]:
    """The region a label should sit next to (and preferably not cover)."""
    if e.xyxy_px is not None:
        x1, y1, x2, y2 = e.xyxy_px
        return x1, y1, x2, y2
    pts = e.points_px or [[0.0, 0.0]]
    if e.kind in ("line", "ray"):
        pts = pts[:1]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def _draw_label(
    scene: np.ndarray,
    e: Element,
    style: MarkStyle,
    placed: list[tuple[int, int, int, int]],
    *,
    text: str | None = None,
    color: sv.Color | None = None,
) -> None:
    """Number in a filled tag: above the object, else inside its top, else wherever it fits."""
    text = str(e.id) if text is None else text
    (tw, th), base = cv2.getTextSize(text, _FONT, style.font_scale, style.font_thickness)
    pad = style.padding
    w, h = tw + 2 * pad, th + base + 2 * pad
    height, width = scene.shape[:2]
    ax1, ay1, ax2, ay2 = (round(min(max(v, -_LIMIT), _LIMIT)) for v in _anchor_box(e))
    if ax2 < 0 or ay2 < 0 or ax1 >= width or ay1 >= height:
        return  # nothing of it is visible; a label in a corner would point at nothing
    gap = style.point_radius if e.kind in ("point", "line", "ray") else 0
    candidates = [
        *_behind_start(e, w, h, gap),
        (ax1, ay1 - h - gap),  # above, left-aligned
        (ax2 - w, ay1 - h - gap),  # above, right-aligned
        (ax1, ay2 + gap + 1),  # below
        (ax2 + gap + 1, ay1),  # right
        (ax1 - w - gap - 1, ay1),  # left
        (ax1, ay1),  # inside the top-left corner
    ]
    fitted = [(_clamp(x, width - w), _clamp(y, height - h)) for x, y in candidates]
    inside = [c for c, f in zip(candidates, fitted, strict=True) if c == f]
    choice = next((c for c in inside if not _hits(c, w, h, placed)), None)
    if choice is None:
        choice = next((c for c in fitted if not _hits(c, w, h, placed)), fitted[0])
    x, y = choice
    placed.append((x, y, x + w, y + h))
    color = OKABE_ITO.by_idx(e.id - 1) if color is None else color
    sv.draw_filled_rectangle(scene, Rect(x=x, y=y, width=w, height=h), color)
    sv.draw_rectangle(scene, Rect(x=x, y=y, width=w, height=h), _OUTLINE, thickness=1)
    ink = sv.Color.BLACK if _luma(color) > 140 else sv.Color.WHITE
    cv2.putText(
        scene, text, (x + pad, y + pad + th), _FONT, style.font_scale, ink.as_bgr(),
        style.font_thickness, cv2.LINE_AA,
    )  # fmt: skip


def _behind_start(e: Element, w: int, h: int, gap: int) -> list[tuple[int, int]]:
    """For a line or ray: the label goes behind its start, so it never covers the line."""
    if e.kind not in ("line", "ray") or not e.points_px:
        return []
    (x0, y0), (x1, y1) = e.points_px[:2]
    norm = math.hypot(x1 - x0, y1 - y0)
    if norm == 0:
        return []
    ux, uy = (x1 - x0) / norm, (y1 - y0) / norm
    reach = (abs(ux) * w + abs(uy) * h) / 2 + gap
    return [_xy(x0 - ux * reach - w / 2, y0 - uy * reach - h / 2)]


def _clamp(value: int, high: int) -> int:
    return max(0, min(value, max(0, high)))


def _hits(corner: tuple[int, int], w: int, h: int, placed: list[tuple[int, int, int, int]]) -> bool:
    x, y = corner
    return any(x < bx2 and bx1 < x + w and y < by2 and by1 < y + h for bx1, by1, bx2, by2 in placed)


def _luma(color: sv.Color) -> float:
    return 0.299 * color.r + 0.587 * color.g + 0.114 * color.b
