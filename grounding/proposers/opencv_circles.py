"""``opencv.circles`` (Hough) and ``opencv.blobs`` (SimpleBlobDetector): round things as boxes.

Both return boxes around each circle with ``radius_px`` (and the centre in
``center_px``). Hough suits coins and pips with visible rims; the blob detector
suits filled dots, bright and dark alike unless ``blob_color`` picks one. Hough's echoes
of one coin (its relief ring, circles a ``minDist`` apart inside it) are dropped, judged
on the contrast map the self-check reads too: a weaker circle overlapping a stronger one
is an echo unless part of its rim borders the table (see :func:`drop_echoes`).

Self-check: uncovered round regions of a comparable size are ``unexplained`` (for blobs,
of any size the detector counts), and so are round ones left once necks about a radius
wide are opened away (a coin joined to a coin found, or to its shadow) and (circles only)
compact, clearly lit ones of a circle's size (a coin one region with a table line), and
circles a looser Hough vote finds on an edge that nothing found overlaps (a coin the
colour of the table, seen only by its rim); more than 60 circles, two circles holding
each other's centre, or circles with under 35 % of their rim on an image edge (Hough
votes from texture; counted on the rim clear of other circles, so a circle closed in the
gap between coins out of their rims is one) are ``problems``. For counting coins prefer
``opencv.contours``.

Feedback: on a retry after missing elements, Hough's accumulator threshold
(``param2``) drops by ``retry_factor`` and the blob detector's minimum
circularity and area fall by the same factor; after rejected elements only,
they rise by it, so the next proposal is stricter.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.grounding.proposers._peers import with_peer_checks
from groundeval.grounding.proposers._residue import ContrastMap, Sizes, lab_distance, merge_found
from groundeval.grounding.proposers.opencv_contours import (
    opened_residue,
    residue_map,
    round_residue,
    solid_residue,
)
from groundeval.state import Element, GroundSpec


def _circle(cx: float, cy: float, r: float) -> Element:
    return box(
        (cx - r, cy - r, cx + r, cy + r),
        radius_px=round(float(r), 2),
        center_px=[round(float(cx), 2), round(float(cy), 2)],
    )


WIDE_DIVISOR = 6.0
"""The wide look opens the residue map ``window / WIDE_DIVISOR`` wide: about an object's radius
(the window is three object sides), so a coin joined to another or to a tuft by a broad neck
comes apart while a coin itself stays."""

MIN_RIM_SUPPORT = 0.35
"""Share of a circle's rim that must lie on an image edge for the circle to be trusted."""
NEIGHBOUR_RIM = 1.15
"""A rim point within this many radii of another circle's centre is on that circle's rim."""
OWN_RIM_LEAST = 0.25
"""Least share of a rim clear of the other circles for its own support to be judged."""


LOOSE_VOTES = 0.85
"""The loose look votes at this share of ``param2`` (scaled to the half-size copy)."""
LOOSE_WIDEST = 2.0
"""The loose look seeks radii up to this many times the largest circle found."""
RIM_POINTS = np.linspace(0, 2 * np.pi, 72, endpoint=False)
"""Angles of the 72 points on a circle's rim that ``rim_supports`` looks at."""
RIM_UNIT = np.stack([np.cos(RIM_POINTS), np.sin(RIM_POINTS)], axis=1)
"""Their unit offsets ``(cos, sin)``, taken once."""


ECHO_MARGIN = 0.1
"""A rim point of a circle within this share of a stronger circle's radius outside it is on it."""
ECHO_OWN_ARC = 0.25
"""Least share of its rim a circle must have outside a stronger one it overlaps to be a coin."""
ECHO_HALO = 1.25
"""Just outside a circle's rim: this many radii from its centre (a coin's border with the table)."""
ECHO_INSIDE = 0.7
"""Share of a weaker circle's halo on an object (the contrast map) that makes it an echo."""


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
        margin = np.ones(crop.shape[:2], bool)
        margin[m:-m, m:-m] = False
        lightness, a, b = (float(round(v)) for v in np.median(crop[margin], axis=0))
        ink = (lab_distance(crop, (lightness, a, b, 0.0)) > SHAPE_CONTRAST).astype(np.uint8)
        inside = (x1 - left, y1 - top, x2 - left, y2 - top)
        radii = _box_radii(ink.shape, inside)
        doubt = _shape_doubt(ink, inside, radii)
        if not doubt and metal_hues_deg is not None:
            doubt = _colour_doubt(crop, ink, radii, metal_hues_deg)
        if doubt:
            problems.append(f"{what} #{i} is {doubt}, not a coin?")
    return problems


METAL_GREY_CHROMA = 12.0
"""Lab chroma under which an object is grey (silver, nickel, steel: any hue). Coins drawn
in four styles stayed under 8 wherever their hue left the metals' span; clips were 15 up."""


def _box_radii(shape: tuple[int, ...], xyxy: tuple[float, float, float, float]) -> np.ndarray:
    """Each pixel's distance from the box's centre, in radii of its inscribed disc."""
    x1, y1, x2, y2 = xyxy
    cx, cy, r = (x1 + x2) / 2, (y1 + y2) / 2, min(x2 - x1, y2 - y1) / 2
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]]
    return np.asarray(np.hypot(xx + 0.5 - cx, yy + 0.5 - cy) / max(r, 1.0))


def _colour_doubt(
    lab: np.ndarray, ink: np.ndarray, radii: np.ndarray, hues_deg: tuple[float, float]
) -> str:
    """Why the object's colour (its median in the box's inscribed disc) is no metal's, or ""."""
    disc = (radii < 1.0) & (ink > 0)
    if np.count_nonzero(disc) < 10:
        return ""
    _, a, b = np.median(lab[disc], axis=0).astype(float) - (0.0, 128.0, 128.0)
    chroma, hue = float(np.hypot(a, b)), float(np.degrees(np.arctan2(b, a)))
    if chroma < METAL_GREY_CHROMA or hues_deg[0] <= hue <= hues_deg[1]:
        return ""
    return f"of a hue no coin metal has ({hue:.0f} degrees, chroma {chroma:.0f})"


def _shape_doubt(
    ink: np.ndarray, xyxy: tuple[float, float, float, float], radii: np.ndarray
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
    core, rim = ink[radii < 0.5], ink[(radii > 0.75) & (radii < 1.0)]
    hollow = core.size and rim.size and core.mean() < HOLLOW_CORE
    if hollow and rim.mean() >= max(HOLLOW_RIM * core.mean(), 0.05):
        return f"hollow (its core {core.mean():.0%} unlike the table, its rim {rim.mean():.0%})"
    return ""


def drop_echoes(circles: np.ndarray, cmap: ContrastMap) -> np.ndarray:
    """Rows ``(cx, cy, r)`` (strongest first) without Hough's echoes of a stronger circle.

    Hough answers one coin with several circles whose centres lie just over ``minDist``
    apart, or with its inner ring as well as its rim. A weaker circle overlapping a kept one
    (either's box holds the other's centre) is an echo when under ``ECHO_OWN_ARC`` of its rim
    lies outside the kept circle, or when that arc borders an object, not the table (its
    halo, ``ECHO_HALO`` radii out, is mostly lit in the contrast map): both lie inside one
    coin. Otherwise it has a border of its own, is kept, and the nested check withholds
    the question (two coins stacked, or one split).
    """
    kept: list[int] = []
    for i, (cx, cy, r) in enumerate(circles):
        rim = np.array([cx, cy]) + r * RIM_UNIT
        for k in kept:
            kx, ky, kr = circles[k]
            if max(abs(cx - kx), abs(cy - ky)) >= max(r, kr):
                continue
            outside = np.hypot(rim[:, 0] - kx, rim[:, 1] - ky) > kr * (1 + ECHO_MARGIN)
            if outside.mean() < ECHO_OWN_ARC:
                break
            halo = np.array([cx, cy]) + ECHO_HALO * r * RIM_UNIT[outside]
            if _lit_share(halo, cmap) >= ECHO_INSIDE:
                break
        else:
            kept.append(i)
    return circles[kept]


def _lit_share(points_px: np.ndarray, cmap: ContrastMap) -> float:
    """Share of image points on the contrast map's objects (points off the image are not)."""
    xy = np.rint(points_px * cmap.scale)
    h, w = cmap.mask.shape
    inside = (xy[:, 0] >= 0) & (xy[:, 0] < w) & (xy[:, 1] >= 0) & (xy[:, 1] < h)
    ix = xy[inside].astype(np.intp)
    return float(np.count_nonzero(cmap.mask[ix[:, 1], ix[:, 0]]) / max(len(xy), 1))


def rim_supports(elements: list[Element], edges: np.ndarray, scale: float) -> np.ndarray:
    """:func:`rim_shares` of circle elements (their ``center_px`` and ``radius_px``)."""
    return rim_shares(circle_array(elements), edges, scale)


def own_rim_supports(elements: list[Element], edges: np.ndarray, scale: float) -> np.ndarray:
    """:func:`rim_supports` counted on the part of each rim clear of the other circles.

    Hough can close a circle in the gap between three coins out of their rims: its edge
    support is theirs. Rim points within ``NEIGHBOUR_RIM`` radii of another circle's
    centre are left out; a rim with under ``OWN_RIM_LEAST`` of its points clear keeps
    its plain share (too little of it is its own to judge).
    """
    circles = circle_array(elements)
    rims = rim_points(circles)
    on = rim_points_on(rims, edges, scale)
    shares = np.count_nonzero(on, axis=1) / len(RIM_POINTS)
    gap = circles[:, None, :2] - circles[None, :, :2]
    reach = np.hypot(gap[..., 0], gap[..., 1]) < circles[:, None, 2] + NEIGHBOUR_RIM * circles[:, 2]
    np.fill_diagonal(reach, False)
    for i in np.flatnonzero(reach.any(axis=1)):  # only rims another circle reaches
        others = circles[reach[i]]
        d = np.hypot(rims[i, :, None, 0] - others[:, 0], rims[i, :, None, 1] - others[:, 1])
        clear = (d >= NEIGHBOUR_RIM * others[:, 2]).all(axis=1)
        if np.count_nonzero(clear) >= OWN_RIM_LEAST * len(RIM_POINTS):
            shares[i] = np.count_nonzero(on[i] & clear) / np.count_nonzero(clear)
    return np.asarray(shares)


def circle_array(elements: list[Element]) -> np.ndarray:
    """Rows ``(cx, cy, r)`` of circle elements, full-image pixels."""
    rows = [(*e.fields["center_px"], e.fields["radius_px"]) for e in elements]
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


def circle_review(
    image_bgr: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    param1: float,
    grey: np.ndarray | None = None,
    looked: tuple[Sizes, ContrastMap] | None = None,
) -> Review:
    """Residue, clutter and rim support of a set of circles (edges on a half-size copy).

    Hough misses coins a table line (mortar, grass) or another coin runs into, and so does
    the round residue (the coin is one region with the line): the solid look (as contours
    has it) and a wide-opened look flag them. ``grey`` (the image in grey) and ``looked``
    (the residue map) are detection's, when it has them. The contrast map is ``coarse`` (a
    wide window's median on a smaller copy), so the check stays cheap next to Hough.
    """
    sizes, cmap = looked or residue_map(image_bgr, elements, params, coarse=True)
    review = round_residue(image_bgr, elements, params, "circle", (sizes, cmap))
    if not elements:
        return review
    # both looks size regions against the circles found
    wide = opened_residue(cmap, elements, sizes, "circle", WIDE_DIVISOR)
    for extra in (solid_residue(cmap, elements, sizes), wide):
        review.unexplained = merge_found(review.unexplained, extra)
    with_peer_checks(review, cmap, elements, "circle")
    half, edges, scale = half_edges(image_bgr, param1, grey)
    support = own_rim_supports(elements, edges, scale)
    weak = [f"#{i}" for i, share in enumerate(support, start=1) if share < MIN_RIM_SUPPORT]
    if weak:
        review.problems.append(
            f"weak support: circles {', '.join(weak[:8])} have under {MIN_RIM_SUPPORT:.0%} "
            "of their rim clear of other circles on an edge (texture, or a gap between "
            "coins, not discs?)"
        )
    loose = loose_circles(half, elements, params, edges, scale)
    review.unexplained = merge_found(review.unexplained, loose)
    review.problems += unlike_discs(image_bgr, elements, "circle")
    return review


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
    circle overlaps is unexplained.
    """
    widest = max((float(e.fields["radius_px"]) for e in elements), default=0.0)
    found = loose_vote(half, params, scale, widest)
    if found is None:
        return []
    raw = found / scale  # full-image pixels, float32 as HoughCircles gives them
    # the fields _circle would store, without an element per candidate (most are covered)
    fields = np.array([[round(float(v), 2) for v in row] for row in raw])
    keep = rim_shares(fields, edges, scale) >= MIN_RIM_SUPPORT
    if elements:
        mine = circle_array(elements)
        gap = fields[:, None, :2] - mine[None, :, :2]
        apart = np.hypot(gap[..., 0], gap[..., 1])
        keep &= ~(apart < fields[:, None, 2] + mine[None, :, 2]).any(axis=1)  # no overlap
    return [
        box(
            bounds(c),
            reason=f"a circle of radius {c.fields['radius_px']:.0f} px that a looser vote finds "
            "on an edge and no circle found covers",
        )
        for c in (_circle(*raw[i]) for i in np.flatnonzero(keep))
    ]


def _clip(elements: list[Element], shape: tuple[int, ...]) -> list[Element]:
    """Keep circles whose centre lies inside the image."""
    h, w = shape[:2]
    return [
        e
        for e in elements
        if 0 <= e.fields["center_px"][0] < w and 0 <= e.fields["center_px"][1] < h
    ]


@register_proposer("opencv.circles")
class CirclesProposer(CVProposer):
    """``cv2.HoughCircles`` (gradient method) on a blurred grey image."""

    name: ClassVar[str] = "opencv.circles"
    defaults: ClassVar[dict[str, Any]] = {
        "blur_px": 5,
        "dp": 1.2,
        "min_dist_px": 0.0,
        "param1": 100.0,
        "param2": 30.0,
        "min_radius_px": 8,
        "max_radius_px": 0,
        "retry_factor": 0.8,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: lower the accumulator threshold when circles are missing, raise it when wrong."""
        factor = float(params["retry_factor"])
        params["param2"] = float(params["param2"]) * (factor if feedback.missing else 1 / factor)
        return params

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Uncovered round regions; too many, nested or weakly supported circles."""
        return circle_review(
            image_bgr, elements, self.review_params(params), float(params["param1"])
        )

    @staticmethod
    def review_params(params: dict[str, Any]) -> dict[str, Any]:
        """The parameters with the least coin area the residue looks for (a least circle's)."""
        return {**params, "min_area_px": np.pi * float(params["min_radius_px"]) ** 2}

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection and self-check on one residue map (detection judges echoes on it)."""
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        elements, looked = self.circles(image_bgr, grey, params)
        param1 = float(params["param1"])
        review = circle_review(
            image_bgr, elements, self.review_params(params), param1, grey, looked
        )
        return elements, review

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Hough circles without their echoes, sorted top to bottom."""
        return self.circles(image_bgr, cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), params)[0]

    def circles(
        self, image_bgr: np.ndarray, grey: np.ndarray, params: dict[str, Any]
    ) -> tuple[list[Element], tuple[Sizes, ContrastMap]]:
        """:meth:`detect` (``grey``: the image in grey), and the residue map echoes were judged on.

        The map is sized to all of Hough's circles; the self-check reads the same one.
        """
        raw = self.hough(grey, params)
        looked = residue_map(
            image_bgr, [_circle(*row) for row in raw], self.review_params(params), coarse=True
        )
        found = _clip([_circle(*row) for row in drop_echoes(raw, looked[1])], image_bgr.shape)
        found.sort(key=lambda e: (e.fields["center_px"][1], e.fields["center_px"][0]))
        return found, looked

    def hough(self, grey: np.ndarray, params: dict[str, Any]) -> np.ndarray:
        """Rows ``(cx, cy, r)`` of Hough circles on the image in grey, strongest first."""
        k = int(params["blur_px"]) | 1
        if k > 1:
            grey = cv2.GaussianBlur(grey, (k, k), 0)
        min_r = int(params["min_radius_px"])
        max_r = int(params["max_radius_px"]) or int(min(grey.shape) // 2)
        min_dist = float(params["min_dist_px"]) or 1.6 * min_r
        circles = cv2.HoughCircles(
            grey,
            cv2.HOUGH_GRADIENT,
            dp=float(params["dp"]),
            minDist=min_dist,
            param1=float(params["param1"]),
            param2=float(params["param2"]),
            minRadius=min_r,
            maxRadius=max_r,
        )
        return np.zeros((0, 3)) if circles is None else circles[0].astype(float)


@register_proposer("opencv.blobs")
class BlobsProposer(CVProposer):
    """``cv2.SimpleBlobDetector`` with area, circularity, convexity and colour filters."""

    name: ClassVar[str] = "opencv.blobs"
    defaults: ClassVar[dict[str, Any]] = {
        "blob_color": None,
        "min_area_px": 30.0,
        "max_area_px": 50000.0,
        "min_circularity": 0.6,
        "min_convexity": 0.8,
        "min_inertia": 0.3,
        "min_threshold": 10.0,
        "max_threshold": 220.0,
        "retry_factor": 0.8,
    }
    param_types: ClassVar[dict[str, Any]] = {"blob_color": Literal[0, 255] | None}
    """``blob_color``: 0 dark blobs, 255 bright ones, ``None`` (default) both (coins on a dark
    cloth are bright, on a pale table dark)."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: looser shape and area filters when blobs are missing, stricter when wrong."""
        factor = float(params["retry_factor"])
        scale = factor if feedback.missing else 1 / factor
        params["min_circularity"] = min(1.0, float(params["min_circularity"]) * scale)
        params["min_area_px"] = float(params["min_area_px"]) * scale
        return params

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Uncovered round regions; too many or nested blobs; blobs unlike the others.

        A ``coarse`` contrast map, as for circles: the detector is as quick as Hough. The
        residue looks at every size the detector could have counted (up to
        ``max_area_px``, on a map whose window is sized to that), not only at the size of
        what it found: specks of the table found as dark blobs must not hide coins of the
        other polarity. With blobs found, Hough's loose vote (:func:`loose_circles`, at the
        circles' defaults) looks for a coin the colour of the table by its rim.
        """
        widest = float(params["max_area_px"])
        sizes, cmap = residue_map(image_bgr, elements, params, coarse=True, widest_area_px=widest)
        review = round_residue(image_bgr, elements, params, "blob", (sizes, cmap))
        if elements:  # the wide look too: a coin one region with a coin's shadow
            wide = opened_residue(cmap, elements, sizes, "blob", WIDE_DIVISOR)
            review.unexplained = merge_found(review.unexplained, wide)
            # a coin the colour of the table shows only by its rim: Hough's loose vote sees it
            vote = CirclesProposer.defaults
            half, edges, scale = half_edges(image_bgr, float(vote["param1"]))
            loose = loose_circles(half, elements, vote, edges, scale)
            review.unexplained = merge_found(review.unexplained, loose)
            review.problems += unlike_discs(image_bgr, elements, "blob")
        return with_peer_checks(review, cmap, elements, "blob")

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Blobs of the given colour (0 dark, 255 bright, ``None`` either) as circles."""
        p = cv2.SimpleBlobDetector_Params()  # type: ignore[attr-defined]
        p.filterByColor = params["blob_color"] is not None
        p.blobColor = int(params["blob_color"] or 0)
        p.filterByArea = True
        p.minArea = float(params["min_area_px"])
        p.maxArea = float(params["max_area_px"])
        p.filterByCircularity = True
        p.minCircularity = float(params["min_circularity"])
        p.filterByConvexity = True
        p.minConvexity = float(params["min_convexity"])
        p.filterByInertia = True
        p.minInertiaRatio = float(params["min_inertia"])
        p.minThreshold = float(params["min_threshold"])
        p.maxThreshold = float(params["max_threshold"])
        detector = cv2.SimpleBlobDetector_create(p)  # type: ignore[attr-defined]
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        found = [_circle(k.pt[0], k.pt[1], k.size / 2) for k in detector.detect(grey)]
        return sorted(found, key=lambda e: (e.fields["center_px"][1], e.fields["center_px"][0]))
