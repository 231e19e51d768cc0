"""Looks for round objects that several proposers share: shape, colour and a loose Hough vote.

``opencv.circles``, ``opencv.blobs``, ``opencv.contours`` and ``yolo.coins`` all count discs
(coins, mostly), and all can be fooled alike: a note, a ring, a paper clip's loop or a coin's
reflection taken for a coin (:func:`unlike_discs`), and a coin the colour of the table, seen
only by its rim, missed (:func:`loose_circles`, a second Hough vote under the usual cut). Rim
support (:func:`rim_shares`) says how much of a circle lies on an image edge, and
:func:`inner_edge_shares` how much of its inside (none: a blur of light, not a coin). What
a look flags may be no coin at all: a card (:func:`is_card`) or a stick (:func:`is_stick`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any

import cv2
import numpy as np
import shapely
from annotated_types import MaxLen, MinLen

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding.proposers._cv import box
from groundeval.grounding.proposers._residue import (
    above,
    lab_distance,
    masked_medians,
    pixel_median,
    shrink,
)
from groundeval.state import Element


def box_circle(xyxy: tuple[float, float, float, float]) -> tuple[float, float, float]:
    """The circle ``(cx, cy, r)`` a coin's box holds: its centre, ``r`` half its mean side."""
    x1, y1, x2, y2 = xyxy
    return (x1 + x2) / 2, (y1 + y2) / 2, (x2 - x1 + y2 - y1) / 4


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


SHAPE_SIDE_PX = 64
"""The shape and colour looks read a box at most this wide: a wider one's crop is shrunk by a
whole step (a coin's outline, core and colour show as well at half its size; the pixels,
a quarter, cost a quarter)."""
SHAPE_CONTRAST = 25.0
"""Lab distance from the table around a box over which a pixel is the boxed object's."""
RECT_FILL = 0.9
"""A boxed object filling more of its turned bounding rectangle is a rectangle (a disc: 0.79)."""
HOLLOW_CORE = 0.2
"""A boxed object covering less of its box's inner disc than this is hollow (a ring) ..."""
HOLLOW_RIM = 3.0
"""... when it covers this many times more of the outer ring of the disc (and 5 % or more).
The ring runs from 0.75 of the disc's radius to ``HOLLOW_REACH`` times it."""
HOLLOW_REACH = 1.25
"""A blob's circle is fitted inside a thin ring's band (probe 107370: a gold ring 1.1 times
the blob's radius), so the outer ring reads a little past the box."""
TABLE_CORE = 2.5
"""Lab distance under which a disc's core (its inner half, median) is the table beyond it
(``FAR_TABLE_RADII``): the inside of a ring, not a coin. Blind 205854: a faint silver ring's
hole, 1-2 from the table, taken for a blob (the ring, under ``SHAPE_CONTRAST`` from it, is
no object to the hollow look). The 6531 boxes of coins that ``yolo.coins``, ``opencv.circles``
and ``opencv.blobs`` found on tuning seeds (probe 0-149, blind 0-149, out-of-style
600000-600149, in-style 1000-1029) lay 3.3 and more from it; the coins ``opencv.contours``
counted right on 1714 tuning images, 5.7 and more (blind 208939's ring hole: 1.4)."""
FAR_TABLE_RADII = (1.7, 2.1)
"""The table beyond a disc is read on 36 points on each of circles this many radii wide
(clear of its rim and shadow; their median, so a neighbouring coin's arc does not count)."""


def unlike_discs(
    image_bgr: np.ndarray,
    elements: list[Element],
    what: str,
    metal_hues_deg: tuple[float, float] | None = None,
) -> list[str]:
    """Boxes of discs (``what``) whose object is a rectangle (a note), hollow (a ring) or table.

    Detectors take a yellow note or a gold ring for a coin (the coin network scores them
    0.85-0.93; blobs and Hough circles take them too). The object is what differs from the
    table around the box (the median of a margin a sixth of the box wide), judged only
    where it lies clear of that margin's outer edge. A disc fills 0.79 of its turned
    rectangle, a square all of it; a coin covers its box's core, a ring only its rim.
    ``metal_hues_deg`` (for coins): an object of a clear colour (``METAL_GREY_CHROMA``)
    whose Lab hue lies outside this span, as a red or blue paper clip's does, is no coin.
    Nor is a faint copy of the disc just above it (:func:`faint_copies`: a reflection), nor a
    disc whose core is the table's colour (:func:`core_table_gap`: a ring's inside; contours
    fill a thin ring's dark inner edge into a disc of table, blind 208939).
    """
    problems: list[str] = []
    for i, e in enumerate(elements, start=1):
        xyxy = bounds(e)
        side = max(xyxy[2] - xyxy[0], xyxy[3] - xyxy[1])
        read = _box_ink(image_bgr, xyxy, max(2, round(side / 6)))
        if read is None:
            continue
        crop, ink, inside = read
        doubt = _rectangle(ink, inside)
        if doubt is None and (wider := _box_ink(image_bgr, xyxy, round(side * RECT_WIDER))):
            _, wider_ink, wider_inside = wider
            doubt = _rectangle(wider_ink, wider_inside, RECT_REACH)
        radii_sq = _box_radii(ink.shape, inside)
        core = radii_sq < 0.25  # the inner half of the box's inscribed disc
        doubt = doubt or _hollow(ink, radii_sq, core)
        if not doubt and metal_hues_deg is not None:
            doubt = _colour_doubt(crop, ink, radii_sq, metal_hues_deg)
        if not doubt and (gap := core_table_gap(image_bgr, crop, core, xyxy)) < TABLE_CORE:
            doubt = f"a hole (its core {gap:.1f} from the table beyond it: a ring's inside?)"
        if doubt:
            problems.append(f"{what} #{i} is {doubt}, not a coin?")
    return problems + faint_copies(image_bgr, elements, what)


ERASE_REACH = 1.15
"""A box's coin is erased as the ellipse inscribed in the box, this much wider: the whole
rectangle would erase the part of a coin that touches it by a corner (blind 205308: a silver
coin against a gold one, left as a fragment under the size and roundness cuts)."""
CARD_FILL = 0.93
"""A card or a note fills more of its turned rectangle than this (its hull, with found coins
cut away): squares and cards the coin network passed over, on tuning seeds (probe and blind
0-149 and 100000/200000-200299, out-of-style 600000-600149, in-style 1000-1099), filled
0.94-0.99; a coin 0.79, a coin's part flagged beside a found one 0.91."""
CARD_SOLIDITY = 0.85
"""... is convex, its area this share of its hull's or more (cards on tuning seeds 0.93-0.99,
a found coin's bite out of one's edge included; the found coins' discs inside the hull count
as the card's, :func:`_covered_bite`): a coin's numeral has a card's hull and colour, 0.74
(probe 108051, a circle Hough drew on a gold coin's "2") ..."""
CARD_ROUNDNESS = 0.72
"""... is less round than this (area over its enclosing circle's: a square 0.64, a disc 1) ..."""
CARD_ODD = 0.05
"""... and under this share of its inside differs from its median colour (``SHAPE_CONTRAST``):
a coin lying on it would (a plain card 0; a note with print on it may be more, and stays
flagged)."""
CARD_SIDE_PX = 96
"""A region's crop is read at most this wide (a whole shrink step: a card's straight sides
and flat face show as well at a fraction of its size)."""


def is_card(
    image_bgr: np.ndarray, xyxy: tuple[float, float, float, float], found: list[Element]
) -> bool:
    """Whether the object in a region's box is a card or a note: a flat-coloured rectangle.

    A residue look flags a region no coin covers; a phone or card on the table is one, and
    withholding for it is a false alarm (in-style hard scenes: a card beside or under coins).
    The object is what differs from the table around the box (``SHAPE_CONTRAST``), with the
    found coins (``found``) cut away, specks opened away (:func:`_largest_opened`); it must
    fill a turned rectangle (``CARD_FILL``, :func:`_rect_fill`: on its hull, found coins'
    discs and the image's edge allowed for), be convex (``CARD_SOLIDITY``), not be round
    (``CARD_ROUNDNESS``) and be of one colour inside (``CARD_ODD``): a coin missed on a card
    would not be. A look flags the part of a card that coins leave bare, so the margin read
    around the box widens (``CARD_MARGINS``) until the object lies clear of it (or of the
    image's edge, which may cut a card) and covers the box (``CARD_SEEN``).
    """
    side = max(xyxy[2] - xyxy[0], xyxy[3] - xyxy[1])
    for share in CARD_MARGINS:
        card = _card_within(image_bgr, xyxy, found, max(2, round(side * share)))
        if card is not None:
            return card
    return False


def without_cards(
    image_bgr: np.ndarray, unexplained: list[Element], found: list[Element]
) -> list[Element]:
    """The unexplained regions that are no card or note (:func:`is_card`).

    For the contrast looks' regions of ``yolo.coins``, ``opencv.circles`` and ``opencv.blobs``,
    not for the rim or colour looks (a region of a found coin's colour is a stronger sign:
    blind 206543, a note the colour of bokeh the network took for coins). (The loose look's
    circles of circles and blobs go through it too, and so do contours' contrast looks while
    it counts no rectangles: :func:`without_sticks_or_cards`.) For blobs since stop 52:
    a note had been all that withheld blind 200139, whose pencil tip the blobs' size spread
    now doubts (``BLOB_SIZE_SPREAD``).
    """
    return [u for u in unexplained if not is_card(image_bgr, bounds(u), found)]


def without_sticks_or_cards(
    image_bgr: np.ndarray, circles: list[Element], found: list[Element]
) -> list[Element]:
    """The loose look's circles (:func:`loose_circles`) that are no stick and no card.

    A looser vote closes circles on a stick's bend or two sticks crossing, and on a card's
    corner: on in-style tuning seeds (hard 1000-1099, 9000-9099, 9200-9299) they were all
    that withheld 58 right counts of ``opencv.circles`` and 71 of ``opencv.blobs``. A coin
    the colour of the table keeps a rim all round (:func:`is_stick`) and is round
    (:func:`is_card`). On 3,250 tuning coin images this took circles from 583 to 610 right
    and blobs from 652 to 672, and no decision from withheld to wrong. Contours' contrast
    looks flag dark cards and sticks' stubs as compact regions: passing over them took its
    first proposals on the 1,300 in-style tuning images from 1,224 to 1,268 right (stop 57).
    """
    return without_cards(
        image_bgr, [c for c in circles if not is_stick(image_bgr, bounds(c))], found
    )


def loose_misses(
    image_bgr: np.ndarray, circles: list[Element], found: list[Element]
) -> list[Element]:
    """The loose look's circles (:func:`loose_circles`) that may be coins missed.

    Not one whose core is the table beyond it (under ``TABLE_CORE``, as no coin's is: a
    looser vote closes circles on the table between coins, on a coin's shadow and on a
    stick's bend), read first as it is the cheap test; then no stick and no card
    (:func:`without_sticks_or_cards`). The table-core test, with the longer stick test
    (``STICK_ACROSS``), took first proposals on the 1,300 in-style tuning images from 1,010
    to 1,041 right for ``opencv.blobs`` and from 942 to 959 for ``opencv.circles``; on 2,000
    probe and blind tuning images blobs gained 8, and nothing turned wrong (stop 57).
    """
    cored = [c for c in circles if _core_gap(image_bgr, bounds(c)) >= TABLE_CORE]
    return without_sticks_or_cards(image_bgr, cored, found)


CARD_MARGINS = (1 / 6, 0.5, 1.0, 2.0, 4.0)
"""Margins read around a region's box, in box sides, the next when the object reaches one."""
CARD_SEEN = 0.25
"""An object covering under this share of the region's box is not what was flagged: it lies
beside the region, or the margin lay on the object itself and left a speck (a box on a
card's face, in-style hard 1013), so the next margin is read."""


def _card_within(
    image_bgr: np.ndarray, xyxy: tuple[float, float, float, float], found: list[Element], m: int
) -> bool | None:
    """:func:`is_card` on the box and a margin ``m`` px wide (``None``: the object reaches it)."""
    h, w = image_bgr.shape[:2]
    x1, y1, x2, y2 = xyxy
    left, top, right, bottom = _window(xyxy, m, (h, w))
    step = max(1, math.ceil(max(right - left, bottom - top) / CARD_SIDE_PX))
    crop = cv2.cvtColor(shrink(image_bgr[top:bottom, left:right], step), cv2.COLOR_BGR2LAB)
    if min(crop.shape[:2]) < 8:
        return False
    ink = _table_ink(crop, max(2, round(m / step)))
    erased: list[np.ndarray] = []
    for fx1, fy1, fx2, fy2 in map(bounds, found):
        centre = (round(((fx1 + fx2) / 2 - left) / step), round(((fy1 + fy2) / 2 - top) / step))
        half = (fx2 - fx1) / 2 * ERASE_REACH / step, (fy2 - fy1) / 2 * ERASE_REACH / step
        axes = (round(half[0]), round(half[1]))
        erased.append(np.asarray(cv2.ellipse2Poly(centre, axes, 0, 0, 360, 5), np.int32))
    cv2.fillPoly(ink, erased, 0)
    largest = _largest_opened(ink, min(x2 - x1, y2 - y1) / step)
    if largest is None:
        return None  # the margin lay on the object itself (a box on a card's face): look wider
    outline = np.zeros(ink.shape, np.uint8)
    cv2.drawContours(outline, [largest], -1, 255, -1)
    region = outline[
        round((y1 - top) / step) : round((y2 - top) / step),
        round((x1 - left) / step) : round((x2 - left) / step),
    ]
    if cv2.countNonZero(region) < CARD_SEEN * region.size:
        return None  # the object is beside the region, or the margin lay on it: look wider
    bx, by, bw, bh = cv2.boundingRect(largest)
    ch, cw = ink.shape
    if (
        (bx == 0 < left)
        or (by == 0 < top)
        or (bx + bw >= cw and right < w)
        or (by + bh >= ch and bottom < h)
    ):
        return None  # it runs on past the margin (an image edge may cut it)
    # the cheap tests first (round, not one colour), the shapes of GEOS last
    (_, _), radius = cv2.minEnclosingCircle(largest)
    area = float(cv2.contourArea(largest))
    if area >= CARD_ROUNDNESS * np.pi * radius**2:
        return False
    inside = cv2.erode(outline, np.ones((5, 5), np.uint8))  # off its edge and shadow
    count = cv2.countNonZero(inside)
    if count < 10:
        return False
    lightness, a, b = (float(round(v)) for v in masked_medians(crop, (0, 1, 2), inside, count))
    odd = above(lab_distance(crop, (lightness, a, b, 0.0), squared=True), SHAPE_CONTRAST**2)
    odd &= inside
    if cv2.countNonZero(odd) >= CARD_ODD * count:
        return False
    hull = cv2.convexHull(largest)
    image_px = shapely.box(-left / step, -top / step, (w - left) / step, (h - top) / step)
    # an ellipse flattened to a line (a sliver's box) is no polygon GEOS can join: made valid
    discs = shapely.union_all(
        [shapely.make_valid(shapely.Polygon(p)) for p in erased if len(p) > 2]
    )
    if _rect_fill(hull, discs, image_px) < CARD_FILL:
        return False
    return area + _covered_bite(largest, hull, discs) >= CARD_SOLIDITY * cv2.contourArea(hull)


STICK_GRAIN = 0.5
"""Ink that an opening this share of a box's shorter side wide removes is thin: a stick or a
pen (3-9 px on in-style tables) crossing a box the coin network half believes in; a coin
in its box is as wide as the box and stays."""
STICK_BAND = (0.6, 1.2)
STICK_SPREAD = 0.9
"""Thin ink around a box's circle (``STICK_BAND``, in radii) in this share of 36 directions
or more goes all round it: a coin's ring of metal, its face the table's colour (probe
108088, 108583, blind 206546: 1.0 for each of 8 such coins). Sticks through a box, one or
two crossing, reached 0.33-0.61 of them on in-style tuning seeds; two or three crossing
near a box, 0.75-0.81 (in-style hard 1032, 10061, 10069, 10225)."""
STICK_RIM = 0.3
"""Edge in colour on under this share of a box's circle, the stick's own edges left out,
leaves no coin's rim (``yolo_coins.HUNCH_RIM``, the same cut on the same edges)."""


def is_stick(image_bgr: np.ndarray, xyxy: tuple[float, float, float, float]) -> bool:
    """Whether a box holds a stick and nothing else: all its ink thin, no rim beside it.

    The coin network half believes in a stick's end or two sticks crossing (in-style hard
    9207, 9286: most of what still withheld there). Ink is what differs from the table
    around the box (``SHAPE_CONTRAST``); a coin there, even one of the table's colour
    with a stick across it, keeps a rim away from the stick. A box the image's edge cuts
    is judged as the coin it would be part of (:func:`_squared_at_frame`).
    """
    h, w = image_bgr.shape[:2]
    xyxy = _squared_at_frame(xyxy, (h, w))
    x1, y1, x2, y2 = xyxy
    side = min(x2 - x1, y2 - y1)
    m = max(2, round(side / 2))
    left, top, right, bottom = _window(xyxy, m, (h, w))
    bgr = image_bgr[top:bottom, left:right]
    if min(bgr.shape[:2]) < 8:
        return False
    ink = _table_ink(cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB), m)
    grain = max(3, round(side * STICK_GRAIN) | 1)
    thick = cv2.morphologyEx(
        ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grain, grain))
    )
    inner = slice(round(y1) - top, round(y2) - top), slice(round(x1) - left, round(x2) - left)
    thin = cv2.subtract(ink, thick)
    if cv2.countNonZero(thick[inner]) or not cv2.countNonZero(thin[inner]):
        return False  # an object as wide as a coin, or nothing: not a stick's
    parts = _stick_parts(thin, side, inner)
    reach = round(side / 4)  # a stick runs on out of the box, a coin's numeral stays in it
    beyond = parts.copy()
    beyond[max(inner[0].start - reach, 0) : inner[0].stop + reach,
           max(inner[1].start - reach, 0) : inner[1].stop + reach] = 0  # fmt: skip
    # or runs off the image: the window's sides that are the image's edge
    edge = [(left == 0, parts[:, 0]), (right == w, parts[:, -1]),
            (top == 0, parts[0]), (bottom == h, parts[-1])]  # fmt: skip
    runs_on = np.concatenate([beyond.ravel(), *(side for at, side in edge if at)])
    held = np.unique(parts[inner])
    if not np.isin(held[held > 0], runs_on).all():
        return False  # thin ink that stays near the box (probe 100021: a gold coin's "1")
    cx, cy, r = box_circle(xyxy)
    cx, cy = cx - left, cy - top  # in the window
    ys, xs = np.nonzero(thin)
    away = np.hypot(xs - cx, ys - cy)
    band = (away > STICK_BAND[0] * r) & (away < STICK_BAND[1] * r)
    turns = np.arctan2(ys[band] - cy, xs[band] - cx) / (2 * np.pi) + 0.5
    if len(np.unique(np.floor(turns * 36) % 36)) >= STICK_SPREAD * 36:
        return False  # thin ink all round: a coin's ring (probe 108088), not a stick
    edges = colour_edges(bgr, float(HOUGH_VOTE["param1"]))
    near = cv2.dilate(thin, np.ones((7, 7), np.uint8))  # its edges, a blurred pixel or two off
    stick = cv2.resize(near, edges.shape[::-1], interpolation=cv2.INTER_NEAREST)
    scale = edges.shape[1] / bgr.shape[1]
    circle = np.array([[cx, cy, r]])
    return bool(rim_shares(circle, cv2.subtract(edges, stick), scale)[0] < STICK_RIM)


STICK_LONG = 0.6
"""A thin part of ink as long as this share of a box's shorter side, ``STICK_THIN`` times as
long as it is thick and reaching ``STICK_OUT`` of the side out of the box is a stick even
where it ends near the box (in-style hard 10114, 10183: sticks 0.89-0.91 of the side, ending
beside it; a coin's numeral stays inside the coin's box) ..."""
STICK_THIN = 5.0
STICK_OUT = 0.05
STICK_SPECK_PX = 5
"""... and a part under this many pixels is sensor noise, neither a stick's nor a coin's."""
STICK_ACROSS = 1.15
"""A thin part longer than this share of the box's shorter side is a stick's wherever it
ends: a coin's numeral or relief lies inside the coin's disc, at most its diameter and a
pixel or two of blur at each end long (probe 100021's "1": 0.75; a stroke drawn rim to rim
in a 30 px box, 1.13). In-style hard 10076, 10080, 10468: the coin network half believed in
stubs of stick 1.2-1.7 sides long, only 2.4-4.4 times as long as thick, ending within a
quarter side."""


def _stick_parts(thin: np.ndarray, side: float, inner: tuple[slice, slice]) -> np.ndarray:
    """Labels of the parts of ``thin`` ink that must run on out of the box to be a stick's.

    Specks, long thin parts (``STICK_LONG``) and parts longer than the box is wide
    (``STICK_ACROSS``) are labelled 0 (background) instead: they need not. ``side``: the
    box's shorter side; ``inner``: the box in ``thin``.
    """
    count, parts, stats, _ = cv2.connectedComponentsWithStats(thin)
    label = np.arange(count)
    rows, cols = inner
    for k in range(1, count):
        x, y, w, h, area = stats[k]
        past = max(rows.start - y, y + h - rows.stop, cols.start - x, x + w - cols.stop)
        if area < STICK_SPECK_PX:
            label[k] = 0
            continue
        ys, xs = np.nonzero(parts[y : y + h, x : x + w] == k)
        (_, _), (rw, rh), _ = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
        length = max(rw, rh)
        long_and_thin = length >= STICK_LONG * side and length >= STICK_THIN * min(rw, rh)
        if length >= STICK_ACROSS * side or (past >= STICK_OUT * side and long_and_thin):
            label[k] = 0
    return np.asarray(label[parts])


def _rect_fill(hull: np.ndarray, discs: shapely.Geometry, image_px: shapely.Polygon) -> float:
    """The most of a turned rectangle's part in the image (``image_px``) an object fills.

    The object is its ``hull`` and the erased ``discs`` of found coins: a coin lying over a
    card's corner is cut away with it and chamfers the hull (in-style hard 9042). Only the
    rectangle's part inside the image counts: a turned card cut by the image's edge is no
    rectangle in the picture (in-style hard 1093). Each side of the hull is tried as the
    rectangle's (without erasing or cutting, the fill of the least rectangle).
    """
    points = hull.reshape(-1, 2).astype(np.float64)
    if len(points) < 3:
        return 0.0
    object_px = shapely.union(shapely.Polygon(points), discs)
    best = 0.0
    for a, b in zip(points, np.roll(points, -1, axis=0), strict=True):
        along = (b - a) / max(float(np.hypot(*(b - a))), 1e-9)
        across = np.array([-along[1], along[0]])
        u, v = points @ along, points @ across
        spans = ((u.min(), v.min()), (u.max(), v.min()), (u.max(), v.max()), (u.min(), v.max()))
        corners = [along * i + across * j for i, j in spans]
        seen = shapely.Polygon(corners).intersection(image_px)
        if seen.area > 0:
            best = max(best, seen.intersection(object_px).area / seen.area)
    return best


def _squared_at_frame(
    xyxy: tuple[float, float, float, float], shape_hw: tuple[int, int]
) -> tuple[float, float, float, float]:
    """A box the image's edge cuts short, grown square into the image (else as it is).

    The coin network half believes in a stick's end where it leaves the picture (in-style
    hard 9416, 9478: boxes 11 x 36 and 11 x 66 px at the edge); the coin such a box would
    be a part of is as wide as the box is long.
    """
    x1, y1, x2, y2 = xyxy
    h, w = shape_hw
    bw, bh = x2 - x1, y2 - y1
    if bw < bh and x1 <= 1:
        return x1, y1, min(x1 + bh, w), y2
    if bw < bh and x2 >= w - 1:
        return max(x2 - bh, 0.0), y1, x2, y2
    if bh < bw and y1 <= 1:
        return x1, y1, x2, min(y1 + bw, h)
    if bh < bw and y2 >= h - 1:
        return x1, max(y2 - bw, 0.0), x2, y2
    return xyxy


def _covered_bite(largest: np.ndarray, hull: np.ndarray, discs: shapely.Geometry) -> float:
    """Area of an object's hull that found coins' erased ``discs`` cover and it does not.

    A coin lying on a card's edge bites it as deep as the coin reaches in; the card is
    whole under the coin (in-style hard 9465: a card's solidity 0.81 with the bite).
    """
    inside = shapely.Polygon(hull.reshape(-1, 2)).intersection(discs)
    if inside.is_empty:
        return 0.0
    return float(inside.difference(shapely.Polygon(largest.reshape(-1, 2)).buffer(0)).area)


def _window(
    xyxy: tuple[float, float, float, float], m: int, shape_hw: tuple[int, int]
) -> tuple[int, int, int, int]:
    """A box widened by ``m`` px each way, clipped to the image: left, top, right, bottom."""
    x1, y1, x2, y2 = xyxy
    h, w = shape_hw
    return (
        max(int(x1) - m, 0),
        max(int(y1) - m, 0),
        min(math.ceil(x2) + m, w),
        min(math.ceil(y2) + m, h),
    )


def _table_ink(crop_lab: np.ndarray, m: int) -> np.ndarray:
    """255 where a Lab crop is ``SHAPE_CONTRAST`` from the table: its frame's median, ``m`` wide."""
    lightness, a, b = (float(round(v)) for v in pixel_median(_frame(crop_lab, m)))
    return above(lab_distance(crop_lab, (lightness, a, b, 0.0), squared=True), SHAPE_CONTRAST**2)


def _largest_opened(ink: np.ndarray, shorter_side: float) -> np.ndarray | None:
    """The largest outline in ``ink`` once specks a ninth of ``shorter_side`` (px) are opened away.

    A note's edge frayed by the cloth's weave, or a polka dot touching it, still reads square.
    """
    grain = max(3, round(shorter_side / 9) | 1)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (grain, grain))
    outlines, _ = cv2.findContours(
        cv2.morphologyEx(ink, cv2.MORPH_OPEN, disc), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE
    )
    return max(outlines, key=cv2.contourArea) if outlines else None


SIZE_SPREAD = 4.0
"""Discs in one picture differ in radius by at most this factor: coins do (real ones under
2x; probe-style tuning scenes, drawn to vary most, 3.3x), a paper clip's loop and a large
coin do not (probe 106032: two Hough circles of 14 px in a clip beside a coin of 55).
``opencv.circles`` checks it, ``yolo.coins`` on its box sides (``size_spread``); a blob's
size is too rough (probe coins 3.3x apart read over 4x)."""


BLOB_SIZE_SPREAD = 5.0
"""``SIZE_SPREAD`` for blobs, whose sizes are rougher: blind 200139, a pencil's tip found as a
blob of radius 3.9 px beside a coin of 24 (6.3x)."""


def spread_sizes(elements: list[Element], what: str, most: float = SIZE_SPREAD) -> list[str]:
    """A doubt when the discs (``what``) range in radius over ``most`` times."""
    radii = circle_array(elements)[:, 2]
    if len(radii) < 2 or radii.max() <= most * radii.min():
        return []
    return [
        f"{what} radii range from {radii.min():.0f} to {radii.max():.0f} px (more than "
        f"{most:g}x): a loop or a part of something else taken for a coin?"
    ]


MIRROR_ALIGN = 0.3
"""A disc whose centre lies within this many radii of the line down another's centre ..."""
MIRROR_REACH = 1.5
"""... no further below it than this many times their radii summed (touching: 1), ..."""
MIRROR_FAINT = 0.45
"""... and whose box's grey spread is under this share of the other's, is its reflection.
Coin reflections on glossy tables (probe tuning seeds 0-299) spread 0.15-0.41 of their coin;
coins lying just under a coin 0.51 and up (probe 0-299, blind 0-199)."""
MIRROR_PART_FAINT = 0.2
"""A disc of any size lying wholly inside a disc's mirror image (the disc reflected about its
lowest point), under this share of its grey spread, is part of its reflection: contours cut
a round piece out of a reflection too dim to be one region (probe 111128: 0.16, 0.65 of the
coin's radius and 0.32 radii off its line). Tuning coin images counted right: 0.22 and up."""


def faint_copies(image_bgr: np.ndarray, elements: list[Element], what: str) -> list[str]:
    """Discs (``what``) just below a disc of their size, much fainter than it: reflections.

    A glossy table mirrors a coin straight below it, touching it, dimmed; a detector scores
    the mirror image as a coin (0.5-0.9). Coins are round whichever way up, so it is not the
    mirrored face but the faintness (the grey spread in the box) that tells one.
    """
    circles = circle_array(elements)
    if len(circles) < 2:
        return []
    h, w = image_bgr.shape[:2]
    spread: dict[int, float] = {}

    def box_spread(k: int) -> float:  # only boxes in a pair: most images have none
        if k not in spread:
            x1, y1, x2, y2 = bounds(elements[k])
            top, left = max(int(y1), 0), max(int(x1), 0)
            crop = image_bgr[top : min(int(y2) + 1, h), left : min(int(x2) + 1, w)]
            spread[k] = float(cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY).std()) if crop.size else 0.0
        return spread[k]

    problems = []
    for i, (cx, cy, r) in enumerate(circles):
        for j, (ux, uy, ur) in enumerate(circles):
            if j == i or not 0 < cy - uy <= MIRROR_REACH * (r + ur):
                continue
            alike = abs(cx - ux) <= MIRROR_ALIGN * max(r, ur) and 0.7 <= r / max(ur, 1e-6) <= 1.4
            if alike:
                cut = MIRROR_FAINT
            elif math.hypot(cx - ux, cy - uy - 2 * ur) + r <= ur:  # inside its mirror image
                cut = MIRROR_PART_FAINT
            else:
                continue
            faint = box_spread(i) / max(box_spread(j), 1e-6)
            if faint < cut:
                problems.append(
                    f"{what} #{i + 1} is a faint copy ({faint:.0%} of its contrast) of {what} "
                    f"#{j + 1} just above it: a reflection on a glossy table, not a coin?"
                )
                break
    return problems


METAL_HUES_DEG = [35.0, 110.0]
"""Default ``metal_hues_deg``: the Lab hue span (low, high) of brass, gold, copper and bronze."""
MetalHues = Annotated[list[float], MinLen(2), MaxLen(2)] | None
"""The type of ``metal_hues_deg``: two numbers, or ``None`` to judge no colour (discs of any)."""


def metal_span(params: dict[str, Any]) -> tuple[float, float] | None:
    """``params["metal_hues_deg"]`` as :func:`unlike_discs` takes it."""
    hues = params["metal_hues_deg"]
    return (float(hues[0]), float(hues[1])) if hues else None


METAL_GREY_CHROMA = 10.0
"""Lab chroma under which an object is grey (silver, nickel, steel: any hue). Coins drawn
in four styles stayed under 8 wherever their hue left the metals' span; clips were 15 up,
but a blue clip blurred by the blind style's painterly look read 11.4 (blind 208083, taken
by the coin network for a third coin)."""


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
    dx = ((np.arange(0.5, shape[1]) - cx) / r) ** 2  # pixel centres
    dy = ((np.arange(0.5, shape[0]) - cy) / r) ** 2
    return np.asarray(dy[:, None] + dx[None, :])


def _colour_doubt(
    lab: np.ndarray, ink: np.ndarray, radii_sq: np.ndarray, hues_deg: tuple[float, float]
) -> str:
    """Why the object's colour (its median in the box's inscribed disc) is no metal's, or ""."""
    disc = (radii_sq < 1.0).view(np.uint8) & ink  # 1 on the object in the disc
    count = cv2.countNonZero(disc)
    if count < 10:
        return ""
    a, b = (median - 128.0 for median in masked_medians(lab, (1, 2), disc, count))
    chroma, hue = float(np.hypot(a, b)), float(np.degrees(np.arctan2(b, a)))
    if chroma < METAL_GREY_CHROMA or hues_deg[0] <= hue <= hues_deg[1]:
        return ""
    return f"of a hue no coin metal has ({hue:.0f} degrees, chroma {chroma:.0f})"


def core_table_gap(
    image_bgr: np.ndarray,
    lab: np.ndarray,
    core: np.ndarray,
    xyxy: tuple[float, float, float, float],
) -> float:
    """Lab distance of a box's core from the table beyond it (``inf``: too little to read).

    ``lab``: the box's crop in Lab; ``core``: where in it lies the inner half of the box's
    inscribed disc. The table is read on the image's pixels on two circles
    ``FAR_TABLE_RADII`` wide (a few dozen, converted to Lab alone); medians of both. Under
    half those circles on the image (a box at a corner) says nothing.
    """
    pixels = lab[core]
    if len(pixels) < 4:
        return math.inf
    x1, y1, x2, y2 = xyxy
    centre, r = np.array([(x1 + x2) / 2, (y1 + y2) / 2]), min(x2 - x1, y2 - y1) / 2
    points = np.concatenate([centre + k * r * RIM_UNIT[::2] for k in FAR_TABLE_RADII])
    ix = np.floor(points).astype(np.intp)  # the pixel each point lies in
    h, w = image_bgr.shape[:2]
    ix = ix[(ix[:, 0] >= 0) & (ix[:, 0] < w) & (ix[:, 1] >= 0) & (ix[:, 1] < h)]
    if len(ix) < len(points) // 2:
        return math.inf
    far = cv2.cvtColor(image_bgr[ix[:, 1], ix[:, 0]].reshape(-1, 1, 3), cv2.COLOR_BGR2LAB)
    return float(np.linalg.norm(pixel_median(pixels) - pixel_median(far.reshape(-1, 3))))


def _box_crop(
    image_bgr: np.ndarray, xyxy: tuple[float, float, float, float], m: int
) -> tuple[np.ndarray, tuple[float, float, float, float], int] | None:
    """A box and a margin ``m`` px wide, shrunk to ``SHAPE_SIDE_PX``: Lab crop, box, step.

    The box in the crop's pixels; ``None`` when the window is too small to read.
    """
    x1, y1, x2, y2 = xyxy
    h, w = image_bgr.shape[:2]
    left, top, right, bottom = _window(xyxy, m, (h, w))
    view = image_bgr[top:bottom, left:right]
    if min(view.shape[:2]) < 8:
        return None
    step = max(1, math.ceil(max(x2 - x1, y2 - y1) / SHAPE_SIDE_PX))
    crop = cv2.cvtColor(shrink(view, step), cv2.COLOR_BGR2LAB)
    inside = ((x1 - left) / step, (y1 - top) / step, (x2 - left) / step, (y2 - top) / step)
    return crop, inside, step


def _box_ink(
    image_bgr: np.ndarray, xyxy: tuple[float, float, float, float], m: int
) -> tuple[np.ndarray, np.ndarray, tuple[float, float, float, float]] | None:
    """:func:`_box_crop`'s Lab crop, its ink and the box in it.

    Ink is what differs from the table (:func:`_table_ink`, read on the margin).
    """
    read = _box_crop(image_bgr, xyxy, m)
    if read is None:
        return None
    crop, inside, step = read
    return crop, _table_ink(crop, max(2, round(m / step))), inside


def _core_gap(image_bgr: np.ndarray, xyxy: tuple[float, float, float, float]) -> float:
    """:func:`core_table_gap` of a box read alone (``inf`` when too small to read).

    Read as :func:`unlike_discs` reads it: the box with a margin a sixth of its side.
    """
    side = max(xyxy[2] - xyxy[0], xyxy[3] - xyxy[1])
    read = _box_crop(image_bgr, xyxy, max(2, round(side / 6)))
    if read is None:
        return math.inf
    crop, inside, _ = read
    return core_table_gap(image_bgr, crop, _box_radii(crop.shape, inside) < 0.25, xyxy)


RECT_SEEN = 0.4
"""An outline covering this share of the box or more is the boxed object: a square turned
45 degrees fills half its upright box (probe 109739: a yellow note, 0.499 once its corners
blur), a coin 0.79; a mark inside a coin's box is less."""
RECT_WIDER = 0.5
"""An object reaching the margin's outer edge is read again in a margin this many box sides
wide (blind 207767: a tilted note's shadowed corner a pixel from the sixth's edge)."""
RECT_REACH = 1.5
"""... where an outline over this many times the box's area is something larger than the
boxed object (two touching coins' hull: 1.8 times one's box; a coin on a card)."""


def _rectangle(
    ink: np.ndarray, xyxy: tuple[float, float, float, float], reach: float = math.inf
) -> str | None:
    """Why the object in a box's mask is a rectangle, "" when it is none, ``None`` when unseen.

    Its outline is read with specks a ninth of the box wide opened away, so a note's edge
    frayed by the cloth's weave, or a polka dot touching it, still reads square (blind tuning
    seed 203075: a rectangle fill of 0.89 at a twelfth, 0.93 at a ninth; blind 205528: dots
    joined the note to the mask's frame). Only an outline clear of the frame is judged
    (``None`` otherwise: it runs on past the margin, part of something larger or needing a
    wider one), and only one of ``RECT_SEEN`` to ``reach`` times the box's area.
    """
    x1, y1, x2, y2 = xyxy
    largest = _largest_opened(ink, min(x2 - x1, y2 - y1))
    if largest is None:
        return ""
    bx, by, bw, bh = cv2.boundingRect(largest)
    if not (bx > 0 and by > 0 and bx + bw < ink.shape[1] and by + bh < ink.shape[0]):
        return None
    hull = cv2.convexHull(largest)
    area = float(cv2.contourArea(hull))
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    seen = area / max((x2 - x1) * (y2 - y1), 1e-6)  # a degenerate box holds no object
    if RECT_SEEN <= seen <= reach and area > RECT_FILL * rw * rh:
        return f"a rectangle (it fills {area / (rw * rh):.0%} of its turned box)"
    return ""


def _hollow(ink: np.ndarray, radii_sq: np.ndarray, core: np.ndarray) -> str:
    """Why the object in a box's mask is hollow, a ring ("" when it may be a coin).

    Read wherever it runs (blind 205464: a ring's shadow reached the frame), from
    ``radii_sq`` (:func:`_box_radii`) and ``core`` (where it is under a quarter: the inner
    half of the inscribed disc).
    """
    inner = ink[core]
    if not inner.size or (lit := np.count_nonzero(inner) / inner.size) >= HOLLOW_CORE:
        return ""  # a filled core (a coin): its rim need not be read
    outer = ink[(radii_sq > 0.5625) & (radii_sq < HOLLOW_REACH**2)]
    if outer.size and (rim := np.count_nonzero(outer) / outer.size) >= max(HOLLOW_RIM * lit, 0.05):
        return f"hollow (its core {lit:.0%} unlike the table, its rim {rim:.0%})"
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


EDGELESS_INSIDE = 0.02
"""A disc with under this share of its inner disc (0.8 of its radius) on an edge, and under
``MIN_RIM_SUPPORT`` of its rim, shows no edge at all: a blur of light (bokeh), a reflection
or a shadow. Edges in grey: of 2877 coins the coin network found on tuning images of four
styles, one had none, of its 49 bokeh and reflection boxes 32; but out-of-style tuning
seeds 600000-600399 held 24 more coins with none, brown on green felt. In colour
(:func:`colour_edges`) those have a rim; bokeh still has nothing."""


def colour_edges(image_bgr: np.ndarray, param1: float) -> np.ndarray:
    """:func:`half_edges`' edges taken in each colour channel of the half-size copy, joined.

    A brown coin on green felt has no edge in grey (the two are equally dark) but a clear
    one in colour; a blur of light has none in any channel.
    """
    half = _half_blurred(image_bgr)
    return _dilated(np.max([cv2.Canny(c, param1 / 2, param1) for c in cv2.split(half)], axis=0))


def edgeless_boxes(
    image_bgr: np.ndarray,
    elements: list[Element],
    noun: str,
    edges: np.ndarray,
    scale: float,
    param1: float,
) -> list[str]:
    """Problems for elements with no edge (``EDGELESS_INSIDE``), in grey or colour, in the box.

    Or none inside the disc, its rim blurred (:func:`blur_of_light`). ``edges``: a ``scale``
    copy's in grey; those in colour (:func:`colour_edges`) are made only when a box or a disc
    has none in grey. An object cut out of the table by contrast has its outline in its box;
    a blur of light (bokeh) has no edge anywhere. Of 1999 coins ``opencv.contours`` found on
    tuning images (probe 0-299, blind 0-199, out-of-style 600000-600099) the least edged box
    was 0.04 in colour; six of seven bokeh were 0.
    """
    circles = circle_array(elements)
    bare = [i for i, e in enumerate(elements) if _box_edge_share(e, edges, scale) < EDGELESS_INSIDE]
    inner = inner_edge_shares(circles, edges, scale)
    flat = [i for i, share in enumerate(inner) if i not in bare and share < EDGELESS_INSIDE]
    if not bare and not flat:
        return []
    coloured = colour_edges(image_bgr, param1)
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    return [
        f"{noun} #{i + 1} has no edge in its box, in grey or colour: a blur of light or a "
        "shadow, not an object?"
        for i in bare
        if _box_edge_share(elements[i], coloured, scale) < EDGELESS_INSIDE
    ] + [
        f"{noun} #{i + 1} {BLUR_OF_LIGHT}"
        for i in flat
        if blur_of_light(grey, circles[i], coloured, scale)
    ]


SOFT_RIM_PX = 5.7
"""A disc with no edge inside whose rim climbs from the table to its inside over this many
image pixels or more (median over rays) is a blur of light, not a coin. Blind 206850: crisp
bokeh, drawn with a rim on an edge all round, 6.2-6.8 px on the discs of every coin proposer,
which all took it for coins. Of the 149 coins the coin network found with no edge inside on
tuning images (probe 0-149, 100000-100299, 108000-108799; blind 0-149, 200000-200299,
206000-206899; out-of-style 600000-600149; in-style 1000-1099, 9000-9099, 9200-9299), all
plain coins out-of-style, the widest rim was 4.1 px; on the circle contours or blobs fit to
a region (off the rim a little) 5.2 px (out-of-style 600019, in-style hard 1056). Relative
to the radius, coins and bokeh overlap (0.15)."""
BLUR_OF_LIGHT = (
    f"shows no edge inside it, in grey or colour, and its rim is blurred over {SOFT_RIM_PX:g} px "
    "or more: a blur of light, not a coin?"
)
"""The problem :func:`blur_of_light` names (after the element's noun and number)."""


def blur_of_light(grey: np.ndarray, circle: np.ndarray, coloured: np.ndarray, scale: float) -> bool:
    """Whether a disc ``(cx, cy, r)`` has no edge inside in colour and a soft rim.

    ``coloured``: :func:`colour_edges` of a ``scale`` copy; ``grey``: the image in grey,
    where the rim's width is read (:func:`rim_width_px`). Ask only of a disc with no edge
    inside in grey (the cheap look first).
    """
    row = np.asarray(circle, dtype=float).reshape(1, 3)
    if inner_edge_shares(row, coloured, scale)[0] >= EDGELESS_INSIDE:
        return False
    return rim_width_px(grey, row[0]) >= SOFT_RIM_PX


RIM_RAYS = np.linspace(0.4, 1.6, 49)
"""Where on each of 36 rays from a disc's centre its profile is read, in radii."""
RIM_STEP = 8.0
"""Least grey step between a ray's inside (under 0.7 radii) and its table (over 1.3) for the
ray's rim width to be read."""


def rim_width_px(grey: np.ndarray, circle: np.ndarray) -> float:
    """Median width (image px) of a disc's rim: the step across it over its steepest slope.

    Read on 36 rays from 0.4 to 1.6 radii, the slope between 0.6 and 1.4; rays with under
    ``RIM_STEP`` between inside and table, or leaving the image, are passed over. Under 9
    rays read: 0 (nothing to judge).
    """
    cx, cy, r = (float(v) for v in circle)
    angles = RIM_POINTS[::2]
    xs = (cx + np.outer(np.cos(angles), RIM_RAYS * r)).astype(np.float32)
    ys = (cy + np.outer(np.sin(angles), RIM_RAYS * r)).astype(np.float32)
    h, w = grey.shape
    on = ((xs >= 0) & (xs < w - 1) & (ys >= 0) & (ys < h - 1)).all(axis=1)
    profiles = cv2.remap(grey.astype(np.float32), xs, ys, cv2.INTER_LINEAR)[on]
    if len(profiles) < 9:
        return 0.0
    inside = np.median(profiles[:, RIM_RAYS < 0.7], axis=1)
    steps = np.abs(inside - np.median(profiles[:, RIM_RAYS > 1.3], axis=1))
    between = (RIM_RAYS[:-1] > 0.6) & (RIM_RAYS[:-1] < 1.4)
    ray_step_px = (RIM_RAYS[1] - RIM_RAYS[0]) * r
    slopes = np.abs(np.diff(profiles, axis=1))[:, between].max(axis=1) / ray_step_px
    read = steps >= RIM_STEP
    if np.count_nonzero(read) < 9:
        return 0.0
    return float(np.median(steps[read] / np.maximum(slopes[read], 1e-6)))


def _box_edge_share(element: Element, edges: np.ndarray, scale: float) -> float:
    """Share of a ``scale`` copy's (dilated) edge pixels inside an element's box."""
    inside = edges[_scaled_box(element, scale)]
    return float(np.count_nonzero(inside)) / max(inside.size, 1)


def _scaled_box(element: Element, scale: float) -> tuple[slice, slice]:
    """The rows and columns of an element's box on a ``scale`` copy (ends included)."""
    x1, y1, x2, y2 = (round(v * scale) for v in bounds(element))
    return slice(max(y1, 0), y2 + 1), slice(max(x1, 0), x2 + 1)


def inner_edge_shares(circles: np.ndarray, edges: np.ndarray, scale: float) -> np.ndarray:
    """Share of (dilated) edge pixels of a ``scale`` copy inside 0.8 of each circle's radius."""
    h, w = edges.shape
    shares = []
    for cx, cy, r in circles * scale:
        reach = 0.8 * max(r, 1.0)
        x1, y1 = max(int(cx - reach), 0), max(int(cy - reach), 0)
        x2, y2 = min(int(cx + reach) + 1, w), min(int(cy + reach) + 1, h)
        dx = (np.arange(x1, x2) + 0.5 - cx) ** 2
        dy = (np.arange(y1, y2) + 0.5 - cy) ** 2
        inside = dy[:, None] + dx[None, :] < reach**2
        count = np.count_nonzero(inside)
        shares.append(np.count_nonzero(edges[y1:y2, x1:x2][inside]) / count if count else 1.0)
    return np.array(shares, dtype=float)


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
    half = _half_blurred(grey)
    return half, _dilated(cv2.Canny(half, param1 / 2, param1)), half.shape[1] / grey.shape[1]


def _half_blurred(image: np.ndarray) -> np.ndarray:
    """The image (grey or colour) area-averaged to half size and lightly blurred (3 x 3)."""
    h, w = image.shape[:2]
    half = cv2.resize(image, (max(1, w // 2), max(1, h // 2)), interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.GaussianBlur(half, (3, 3), 0))


def _dilated(edges: np.ndarray) -> np.ndarray:
    """Edge pixels grown by one pixel (3 x 3), so a rim point a pixel off still lands on one."""
    return np.asarray(cv2.dilate(edges, np.ones((3, 3), np.uint8)))


@dataclass(frozen=True)
class RimLook:
    """How a second Hough vote looks for coins nothing found covers.

    ``votes``: the share of ``param2`` it votes at; ``min_rim``: the share of a circle's rim
    that must lie on an edge; ``radius_span``: radii kept, as shares of the smallest and the
    largest radius found (``None``: any up to ``LOOSE_WIDEST`` times the largest);
    ``max_halo``: below.
    """

    votes: float = LOOSE_VOTES
    min_rim: float = MIN_RIM_SUPPORT
    radius_span: tuple[float, float] | None = None
    max_halo: float = 1.0
    """Share of the table around a circle (``HALO_RADII``) that may lie on an edge: under 1,
    a circle on a table whose own texture is edges everywhere (wood grain) is passed over."""
    max_table_edges: float = 1.0
    """Share of the table (outside the boxes found) that may lie on an edge for the look to
    run: on a textured table (wood, gravel, grass) Hough finds rims all over it."""
    max_overlap: float = 0.0
    """Share of the smaller radius by which a circle with its rim on an edge all round
    (``FULL_RIM``) may overlap a circle found: Hough may centre a coin touching a found one a
    few pixels towards it."""
    touch_rim: float = 1.0
    """Share of its rim on an edge that lets a circle touch a found one (reach under
    ``TOUCH_PX`` into it). At 1.0 it adds nothing to ``FULL_RIM``'s overlap."""


FULL_RIM = 0.95
"""Share of its rim on an edge that lets a circle overlap a found one (``RimLook.max_overlap``).
Probe 109313: a silver coin between two found ones, its circle 6 px off its centre and 6.3 px
into the gold coin's, rim 1.0; tuning probe 108393, 0.97. Circles touching found coins with
0.7-0.9 of their rim on an edge are a card's corner, a coin's inner ring or relief: passed
over as before (on 3,250 tuning coin images, 0.3 of the radius with no rim cut would have
flagged 9 images counted right)."""
TOUCH_PX = 0.5
"""A circle reaching less than this far into a found one touches it rather than overlapping
it. Circles and blobs missed a coin touching found ones by 0.3 px (in-style hard 10307, rim
0.76; blind 206783, 0.02 px, rim 0.85) with nothing said; in the 2,051 first proposals on
tuning coin images counted right (blobs 1,101, circles 950), no circle reaching 0-1 px into a
found one had over 0.67 of its rim on an edge (gaps between coins: 0.36-0.67), and the next
reached 1.07 px (rim 0.74)."""
HALO_RADII = (1.4, 1.8)
"""The table around a circle is read on circles this many times as wide; the least edged one
counts. Hough often fits a coin's inner ring (its relief) rather than its rim: the first
circle then runs on the coin's own rim and shadow, the second clear of them."""
LOOSE_MIN_RIM = 0.45
"""Least share of its rim on an edge for the circles' and blobs' loose look to flag a circle.
At 0.35 (``MIN_RIM_SUPPORT``, until stop 55) it flagged Hough's circles closed over a stick, a
card's corner or the gap beside coins (in-style hard 1000, 1013: rims 0.36). Of the tuning
coin images withheld by flags and no problem (blobs 1,307, circles 803), 0.45 decides 78 and
39 more, all right (59 and 36 in-style); the first to turn wrong does at 0.55 (blobs, in-style
hard 10116)."""
LOOSE = RimLook(min_rim=LOOSE_MIN_RIM, max_overlap=0.3, touch_rim=0.7)
"""Circles' and blobs' look: a looser vote, for a coin the colour of the table, or one touching
found coins (in-style hard 10009: a copper coin between two found blobs, its circle 0.5 px into
one of them, rim 0.99, missed with nothing said; ``TOUCH_PX``). The touch cut is not
``COIN_SIZED``'s: there it would flag 4 right counts on tuning images (3 of ``yolo.coins``,
1 of contours: small circles beside a found coin, rims 0.75-0.88)."""
COIN_SIZED = RimLook(
    votes=1.0,
    min_rim=0.7,
    radius_span=(0.45, 1.6),
    max_halo=0.5,
    max_table_edges=0.05,
    max_overlap=0.3,
)
"""Contours' and ``yolo.coins``' look: Hough's own vote, circles the size of the objects found
(0.45 of the smallest to 1.6 of the largest), with a rim on an edge nearly all round, on a
plain table. A silver coin on a pale sweep, missed by the contrast looks and the network,
shows so (probe tuning seeds 31, 119, 203); polka dots are smaller. From 0.6 of the smallest
(until stop 42) a small coin beside large ones was not sought (probe 107148, 107219, 108144:
0.45-0.5 of the least found, missed with nothing said). Of 108 images contours
counted right with nothing flagged (probe 0-299, blind 0-199, out-of-style 600000-600059),
it flags 5; any size and a 0.35 rim flagged 27. On wood grain every circle has its rim on an
edge (the half-size copy's edges cover 0.8-0.9 of the table): a circle whose surroundings
are edged over half their length says nothing, and is passed over; so does any circle on a
table over 5 % edged (wood, gravel, grass: 7-55 % on out-of-style tuning seeds, where the
coin network's right counts drew 23 flags in 100 images; plain sweeps with a missed coin
0-1 %)."""


def loose_vote(
    half: np.ndarray,
    params: dict[str, Any],
    scale: float,
    widest_px: float = 0.0,
    votes: float = LOOSE_VOTES,
    span_px: tuple[float, float] | None = None,
) -> np.ndarray | None:
    """Rows ``(x, y, r)`` (half-copy pixels) Hough finds at ``votes`` of its cut, or None.

    ``widest_px`` > 0 (the largest radius found, image pixels) caps the radii at
    ``LOOSE_WIDEST`` times it: the look seeks coins like those found (it costs Hough a pass
    per radius, and larger ones are the round and solid looks' to flag). ``span_px``: the
    least and most radius sought (image pixels) instead; the whole pixels around it.
    """
    if span_px is not None:
        min_r, max_r = max(2, math.floor(span_px[0] * scale)), math.ceil(span_px[1] * scale)
    else:
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
        param2=max(1.0, float(params["param2"]) * scale * votes),
        minRadius=min_r,
        maxRadius=max(min_r + 1, max_r),
    )
    return None if found is None else np.asarray(found[0])


TABLE_RECHECK = 3.0
"""A table edged over ``max_table_edges`` but under this many times it is read again with
the circles Hough found taken out: coins missed put their own rims on the table (probe
107605: four silver coins on a pink sweep made it 6.4 % edged, and turned the look off).
Texture is everywhere, so its share stays (wood, gravel and grass: 5-56 % on out-of-style
tuning seeds 600000-600029); coins are local."""
TABLE_CLEAR_RADII = 1.25
"""A Hough circle is taken out of the table this many radii wide (its rim and shadow)."""


def table_edge_share(
    edges: np.ndarray, elements: list[Element], scale: float, circles: np.ndarray | None = None
) -> float:
    """Share of a ``scale`` copy's (dilated) edge pixels outside the elements' boxes.

    ``circles``: rows ``(x, y, r)`` in the copy's pixels, also left out
    (``TABLE_CLEAR_RADII`` wide).
    """
    table = np.ones(edges.shape, np.uint8)
    for e in elements:
        table[_scaled_box(e, scale)] = 0
    if circles is not None:
        for x, y, r in circles:
            cv2.circle(table, (round(x), round(y)), round(r * TABLE_CLEAR_RADII), 0, -1)
    count = cv2.countNonZero(table)
    return cv2.countNonZero(edges & table) / count if count else 1.0


def loose_circles(
    half: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    edges: np.ndarray,
    scale: float,
    look: RimLook = LOOSE,
) -> list[Element]:
    """Circles a second vote finds on the half-size copy (blurred), on an edge, none covers.

    Hough's cut on its accumulator decides which coins exist: a coin the colour of the
    table, seen only by its rim and shadow, falls just under it, and no contrast look sees
    it either. Voting again (at ``look.votes`` of the cut, on the half-size copy the rim
    check already has) shows such a coin; one with ``look.min_rim`` of its rim on an edge
    that no accepted circle overlaps is unexplained. ``elements`` may be any boxes (see
    :func:`circle_array`).
    """
    edged = table_edge_share(edges, elements, scale) if look.max_table_edges < 1 else 0.0
    if edged > TABLE_RECHECK * look.max_table_edges:
        return []
    mine = circle_array(elements)
    widest = float(mine[:, 2].max()) if len(mine) else 0.0
    span = None
    if look.radius_span and len(mine):  # Hough seeks only these radii (a pass per radius)
        span = (look.radius_span[0] * mine[:, 2].min(), look.radius_span[1] * widest)
    found = loose_vote(half, params, scale, widest, look.votes, span)
    if found is None:
        return []
    if edged > look.max_table_edges and (
        table_edge_share(edges, elements, scale, found) > look.max_table_edges
    ):
        return []
    raw = found / scale  # full-image pixels, float32 as HoughCircles gives them
    # the fields circle_box would store (to 0.01 px), without an element per candidate
    fields = np.round(raw.astype(float), 2)
    keep = np.ones(len(fields), bool)
    if span is not None:
        keep &= (fields[:, 2] >= span[0]) & (fields[:, 2] <= span[1])
    clear = np.ones(len(fields), bool)  # overlapping no circle found
    touching = np.ones(len(fields), bool)  # reaching under TOUCH_PX into any
    if elements:
        gap = fields[:, None, :2] - mine[None, :, :2]
        overlap = fields[:, None, 2] + mine[None, :, 2] - np.hypot(gap[..., 0], gap[..., 1])
        clear = ~(overlap > 0).any(axis=1)
        touching = ~(overlap >= TOUCH_PX).any(axis=1)
        smaller = np.minimum(fields[:, None, 2], mine[None, :, 2])
        keep &= ~(overlap > look.max_overlap * smaller).any(axis=1)
    rest = np.flatnonzero(keep)  # the rims only of circles still in question
    rims = rim_shares(fields[rest], edges, scale)
    near = touching[rest] & (rims >= look.touch_rim)
    kept = (rims >= look.min_rim) & (clear[rest] | near | (rims >= FULL_RIM))
    if look.max_halo < 1:
        halos = [rim_shares(fields[rest] * (1.0, 1.0, k), edges, scale) for k in HALO_RADII]
        kept &= np.minimum.reduce(halos) < look.max_halo
    how = "a looser vote finds" if look.votes < 1 else "Hough finds"
    return [
        box(
            bounds(c),
            reason=f"a circle of radius {c.fields['radius_px']:.0f} px that {how} "
            "on an edge and nothing found covers",
        )
        for c in (circle_box(*raw[i]) for i in rest[kept])
    ]
