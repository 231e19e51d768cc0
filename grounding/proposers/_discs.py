"""Looks for round objects that several proposers share: shape, colour and a loose Hough vote.

``opencv.circles``, ``opencv.blobs``, ``opencv.contours`` and ``yolo.coins`` all count discs
(coins, mostly), and all can be fooled alike: a note, a ring or a paper clip's loop taken for a
coin (:func:`unlike_discs`), and a coin the colour of the table, seen only by its rim, missed
(:func:`loose_circles`, a second Hough vote under the usual cut). Rim support
(:func:`rim_shares`) says how much of a circle lies on an image edge.
"""

from __future__ import annotations

from typing import Annotated, Any

import cv2
import numpy as np
from annotated_types import MaxLen, MinLen

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding.proposers._cv import box
from groundeval.grounding.proposers._residue import lab_distance, pixel_median
from groundeval.state import Element


def circle_box(cx: float, cy: float, r: float) -> Element:
    """A box element around a circle, with its ``radius_px`` and ``center_px`` (0.01 px)."""
    return box(
        (cx - r, cy - r, cx + r, cy + r),
        radius_px=round(float(r), 2),
        center_px=[round(float(cx), 2), round(float(cy), 2)],
    )


MIN_RIM_SUPPORT = 0.35
"""Share of a circle's rim that must lie on an image edge for the circle to be trusted."""


HOUGH_VOTE: dict[str, Any] = {
    "dp": 1.2,
    "param1": 100.0,
    "param2": 30.0,
    "min_radius_px": 8,
    "max_radius_px": 0,
}
"""Hough's settings for a loose look by a proposer with no Hough of its own (``opencv.circles``'
defaults, which it takes from here)."""
LOOSE_VOTES = 0.85
"""The loose look votes at this share of ``param2`` (scaled to the half-size copy)."""
LOOSE_WIDEST = 2.0
"""The loose look seeks radii up to this many times the largest circle found."""
RIM_POINTS = np.linspace(0, 2 * np.pi, 72, endpoint=False)
"""Angles of the 72 points on a circle's rim that ``rim_supports`` looks at."""
RIM_UNIT = np.stack([np.cos(RIM_POINTS), np.sin(RIM_POINTS)], axis=1)
"""Their unit offsets ``(cos, sin)``, taken once."""


SHAPE_CONTRAST = 25.0
"""Lab distance from the table around a box over which a pixel is the boxed object's."""
RECT_FILL = 0.9
"""A boxed object filling more of its turned bounding rectangle is a rectangle (a disc: 0.79)."""
HOLLOW_CORE = 0.2
"""A boxed object covering less of its box's inner disc than this is hollow (a ring) ..."""
HOLLOW_RIM = 3.0
"""... when it covers this many times more of the outer ring of the disc (and 5 % or more)."""


def unlike_discs(
    image_bgr: np.ndarray,
    elements: list[Element],
    what: str,
    metal_hues_deg: tuple[float, float] | None = None,
) -> list[str]:
    """Boxes of discs (``what``) whose object is a rectangle (a note, a card) or hollow (a ring).

    Detectors take a yellow note or a gold ring for a coin (the coin network scores them
    0.85-0.93; blobs and Hough circles take them too). The object is what differs from the
    table around the box (the median of a margin a sixth of the box wide), judged only
    where it lies clear of that margin's outer edge. A disc fills 0.79 of its turned
    rectangle, a square all of it; a coin covers its box's core, a ring only its rim.
    ``metal_hues_deg`` (for coins): an object of a clear colour (``METAL_GREY_CHROMA``)
    whose Lab hue lies outside this span, as a red or blue paper clip's does, is no coin.
    """
    h, w = image_bgr.shape[:2]
    problems: list[str] = []
    for i, e in enumerate(elements, start=1):
        x1, y1, x2, y2 = bounds(e)
        m = max(2, round(max(x2 - x1, y2 - y1) / 6))
        left, top = max(int(x1) - m, 0), max(int(y1) - m, 0)
        right, bottom = min(int(np.ceil(x2)) + m, w), min(int(np.ceil(y2)) + m, h)
        crop = cv2.cvtColor(image_bgr[top:bottom, left:right], cv2.COLOR_BGR2LAB)
        if min(crop.shape[:2]) < 8:
            continue
        lightness, a, b = (float(round(v)) for v in pixel_median(_frame(crop, m)))
        ink = (lab_distance(crop, (lightness, a, b, 0.0)) > SHAPE_CONTRAST).astype(np.uint8)
        inside = (x1 - left, y1 - top, x2 - left, y2 - top)
        radii_sq = _box_radii(ink.shape, inside)
        doubt = _shape_doubt(ink, inside, radii_sq)
        if not doubt and metal_hues_deg is not None:
            doubt = _colour_doubt(crop, ink, radii_sq, metal_hues_deg)
        if doubt:
            problems.append(f"{what} #{i} is {doubt}, not a coin?")
    return problems


METAL_HUES_DEG = [35.0, 110.0]
"""Default ``metal_hues_deg``: the Lab hue span (low, high) of brass, gold, copper and bronze."""
MetalHues = Annotated[list[float], MinLen(2), MaxLen(2)] | None
"""The type of ``metal_hues_deg``: two numbers, or ``None`` to judge no colour (discs of any)."""


def metal_span(params: dict[str, Any]) -> tuple[float, float] | None:
    """``params["metal_hues_deg"]`` as :func:`unlike_discs` takes it."""
    hues = params["metal_hues_deg"]
    return (float(hues[0]), float(hues[1])) if hues else None


METAL_GREY_CHROMA = 12.0
"""Lab chroma under which an object is grey (silver, nickel, steel: any hue). Coins drawn
in four styles stayed under 8 wherever their hue left the metals' span; clips were 15 up."""


def _frame(crop: np.ndarray, m: int) -> np.ndarray:
    """The pixels of a crop's outer frame ``m`` wide, one row each (strips: no mask to build)."""
    strips = (crop[:m], crop[-m:], crop[m:-m, :m], crop[m:-m, -m:])
    return np.concatenate([s.reshape(-1, crop.shape[2]) for s in strips])


def _box_radii(shape: tuple[int, ...], xyxy: tuple[float, float, float, float]) -> np.ndarray:
    """Each pixel's squared distance from the box's centre, in squared radii of its inscribed disc.

    Squared: the looks compare it with squared shares of a radius (no square root per pixel),
    and a row of x terms plus a column of y terms makes it in one pass.
    """
    x1, y1, x2, y2 = xyxy
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, max(min(x2 - x1, y2 - y1) / 2, 1.0)
    dx = ((np.arange(shape[1]) + 0.5 - cx) / r) ** 2
    dy = ((np.arange(shape[0]) + 0.5 - cy) / r) ** 2
    return np.asarray(dy[:, None] + dx[None, :])


def _colour_doubt(
    lab: np.ndarray, ink: np.ndarray, radii_sq: np.ndarray, hues_deg: tuple[float, float]
) -> str:
    """Why the object's colour (its median in the box's inscribed disc) is no metal's, or ""."""
    disc = (radii_sq < 1.0) & (ink > 0)
    if np.count_nonzero(disc) < 10:
        return ""
    _, a, b = pixel_median(lab[disc]) - (0.0, 128.0, 128.0)
    chroma, hue = float(np.hypot(a, b)), float(np.degrees(np.arctan2(b, a)))
    if chroma < METAL_GREY_CHROMA or hues_deg[0] <= hue <= hues_deg[1]:
        return ""
    return f"of a hue no coin metal has ({hue:.0f} degrees, chroma {chroma:.0f})"


def _shape_doubt(
    ink: np.ndarray, xyxy: tuple[float, float, float, float], radii_sq: np.ndarray
) -> str:
    """Why the object in a box's mask is no disc ("" when it may be one).

    Only an object clear of the mask's frame is judged: one running on past the margin
    (a coin under a card) is part of something larger, whose cut-off outline says nothing.
    Its rectangle fill is read with specks a twelfth of the box wide opened away, from its
    convex hull, so a note's edge frayed by the cloth's weave still reads square.
    """
    x1, y1, x2, y2 = xyxy
    contours, _ = cv2.findContours(ink, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return ""
    bx, by, bw, bh = cv2.boundingRect(max(contours, key=cv2.contourArea))
    if bx == 0 or by == 0 or bx + bw == ink.shape[1] or by + bh == ink.shape[0]:
        return ""
    grain = max(3, round(min(x2 - x1, y2 - y1) / 12) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grain, grain))
    solid, _ = cv2.findContours(
        cv2.morphologyEx(ink, cv2.MORPH_OPEN, disc), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
    )
    if solid:
        hull = cv2.convexHull(max(solid, key=cv2.contourArea))
        area = float(cv2.contourArea(hull))
        (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
        if area >= 0.5 * (x2 - x1) * (y2 - y1) and area > RECT_FILL * rw * rh:
            return f"a rectangle (it fills {area / (rw * rh):.0%} of its turned box)"
    core, rim = ink[radii_sq < 0.25], ink[(radii_sq > 0.5625) & (radii_sq < 1.0)]
    hollow = core.size and rim.size and core.mean() < HOLLOW_CORE
    if hollow and rim.mean() >= max(HOLLOW_RIM * core.mean(), 0.05):
        return f"hollow (its core {core.mean():.0%} unlike the table, its rim {rim.mean():.0%})"
    return ""


def rim_supports(elements: list[Element], edges: np.ndarray, scale: float) -> np.ndarray:
    """:func:`rim_shares` of circle elements (their ``center_px`` and ``radius_px``)."""
    return rim_shares(circle_array(elements), edges, scale)


def circle_array(elements: list[Element]) -> np.ndarray:
    """Rows ``(cx, cy, r)`` of elements, full-image pixels.

    A circle element's ``center_px`` and ``radius_px``; any other box's centre and half its
    shorter side (the disc it holds: a region cut from the table, a detector's box).
    """
    rows = []
    for e in elements:
        if "center_px" in e.fields and e.fields.get("radius_px") is not None:
            rows.append((*e.fields["center_px"], e.fields["radius_px"]))
        else:
            x1, y1, x2, y2 = bounds(e)
            rows.append(((x1 + x2) / 2, (y1 + y2) / 2, min(x2 - x1, y2 - y1) / 2))
    return np.array(rows, dtype=float).reshape(-1, 3)


def rim_shares(circles: np.ndarray, edges: np.ndarray, scale: float) -> np.ndarray:
    """Share of 72 rim points on (dilated) edge pixels of a ``scale`` copy, one per row.

    ``circles`` are rows ``(cx, cy, r)``. All at once: one array operation instead of a
    Python loop per circle.
    """
    on = rim_points_on(rim_points(circles), edges, scale)
    return np.asarray(np.count_nonzero(on, axis=1) / len(RIM_POINTS))


def rim_points(circles: np.ndarray) -> np.ndarray:
    """The 72 rim points of each row ``(cx, cy, r)``, shape ``(n, 72, 2)``, image pixels."""
    rows = circles.reshape(-1, 1, 3)
    return np.asarray(rows[..., :2] + rows[..., 2:] * RIM_UNIT)


def rim_points_on(points_px: np.ndarray, edges: np.ndarray, scale: float) -> np.ndarray:
    """Whether each image point (``(..., 2)``, clipped to the copy) is an edge pixel of it."""
    xy = np.rint(points_px * scale)
    np.clip(xy, 0, (edges.shape[1] - 1, edges.shape[0] - 1), out=xy)  # whole numbers still
    ix = xy.astype(np.intp)
    return np.asarray(edges[ix[..., 1], ix[..., 0]] > 0)


def half_edges(
    image_bgr: np.ndarray, param1: float, grey: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """The image in grey at half size (lightly blurred), its dilated Canny edges, and the scale.

    The rim support and the loose vote both read them. ``grey``: the image in grey, if made.
    """
    if grey is None:
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    h, w = grey.shape
    half = cv2.resize(grey, (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA)
    half = cv2.GaussianBlur(half, (3, 3), 0)
    edges = cv2.Canny(half, param1 / 2, param1)
    return half, cv2.dilate(edges, np.ones((3, 3), np.uint8)), half.shape[1] / w


def loose_vote(
    half: np.ndarray, params: dict[str, Any], scale: float, widest_px: float = 0.0
) -> np.ndarray | None:
    """Rows ``(x, y, r)`` (half-copy pixels) Hough finds at ``LOOSE_VOTES`` of its cut, or None.

    ``widest_px`` > 0 (the largest radius found, image pixels) caps the radii at
    ``LOOSE_WIDEST`` times it: the look seeks coins like those found (it costs Hough a pass
    per radius, and larger ones are the round and solid looks' to flag).
    """
    min_r = max(2, round(float(params["min_radius_px"]) * scale))
    max_r = round((float(params["max_radius_px"]) or min(half.shape) / scale / 2) * scale)
    if widest_px > 0:
        max_r = min(max_r, round(LOOSE_WIDEST * widest_px * scale))
    found = cv2.HoughCircles(
        half,
        cv2.HOUGH_GRADIENT,
        dp=float(params["dp"]),
        minDist=1.6 * min_r,
        param1=float(params["param1"]),
        param2=max(1.0, float(params["param2"]) * scale * LOOSE_VOTES),
        minRadius=min_r,
        maxRadius=max(min_r + 1, max_r),
    )
    return None if found is None else np.asarray(found[0])


def loose_circles(
    half: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    edges: np.ndarray,
    scale: float,
) -> list[Element]:
    """Circles a looser vote finds on the half-size copy (blurred), on an edge, none covers.

    Hough's cut on its accumulator decides which coins exist: a coin the colour of the
    table, seen only by its rim and shadow, falls just under it, and no contrast look sees
    it either. Voting again at ``LOOSE_VOTES`` of the cut, on the half-size copy the rim
    check already has, shows such a coin; one with its rim on an edge that no accepted
    circle overlaps is unexplained. ``elements`` may be any boxes (see :func:`circle_array`).
    """
    mine = circle_array(elements)
    found = loose_vote(half, params, scale, float(mine[:, 2].max()) if len(mine) else 0.0)
    if found is None:
        return []
    raw = found / scale  # full-image pixels, float32 as HoughCircles gives them
    # the fields circle_box would store (to 0.01 px), without an element per candidate
    fields = np.round(raw.astype(float), 2)
    keep = rim_shares(fields, edges, scale) >= MIN_RIM_SUPPORT
    if elements:
        gap = fields[:, None, :2] - mine[None, :, :2]
        apart = np.hypot(gap[..., 0], gap[..., 1])
        keep &= ~(apart < fields[:, None, 2] + mine[None, :, 2]).any(axis=1)  # no overlap
    return [
        box(
            bounds(c),
            reason=f"a circle of radius {c.fields['radius_px']:.0f} px that a looser vote finds "
            "on an edge and no circle found covers",
        )
        for c in (circle_box(*raw[i]) for i in np.flatnonzero(keep))
    ]
