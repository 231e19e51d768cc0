"""``opencv.circles`` (Hough) and ``opencv.blobs`` (SimpleBlobDetector): round things as boxes.

Both return boxes around each circle with ``radius_px`` (and the centre in
``center_px``). Hough suits coins and pips with visible rims; the blob detector
suits filled dots, bright and dark alike unless ``blob_color`` picks one. Hough's echoes
of one coin (its relief ring, circles a ``minDist`` apart inside it) are dropped, judged
on the contrast map and edges the self-check reads too: a weaker circle overlapping a
stronger one is an echo unless part of its rim borders the table and, when the two are
about as large, runs on an edge there (see :func:`drop_echoes`).

Self-check: uncovered round regions of a comparable size are ``unexplained`` (for blobs,
of any size the detector counts), and so are round ones left once necks about a radius
wide are opened away (a coin joined to a coin found, or to its shadow) and (circles only)
compact, clearly lit ones of a circle's size (a coin one region with a table line), and
circles a looser Hough vote finds on an edge that nothing found overlaps, or reaches into
with its rim on an edge all round, or touches (under ``TOUCH_PX``) with most of it on one
(a coin the colour of the table, seen only by its rim, or one touching found ones; for
blobs also when none was found, and for both not one over bare table, on a stick's bend or
on a card's corner: :func:`._discs.loose_misses`), though a region of the
contrast looks whose object is a flat-coloured rectangle is a card, not a coin
(:func:`._discs.without_cards`); more than 60 circles, two circles
holding each other's centre, or circles with under 35 % of their rim on an image edge
(Hough votes from texture; counted on the rim clear of other circles, so a circle closed
in the gap between coins out of their rims is one), and a circle or blob whose object is a
rectangle, hollow or of a hue no coin metal has (``metal_hues_deg``; ``None`` for discs of
any colour: :mod:`._discs`), and (blobs) a blob with no edge in its box, a blur of light,
or blobs ranging in radius over ``BLOB_SIZE_SPREAD`` times (circles: ``SIZE_SPREAD``), are
``problems``. For counting coins prefer ``opencv.contours``.

Feedback: on a retry after missing elements, Hough's accumulator threshold
(``param2``) drops by ``retry_factor`` and the blob detector's minimum
circularity and area fall by the same factor; after rejected elements only,
they rise by it, so the next proposal is stricter.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review
from groundeval.grounding.proposers._discs import (
    BLOB_SIZE_SPREAD,
    HOUGH_VOTE,
    METAL_HUES_DEG,
    MIN_RIM_SUPPORT,
    RIM_POINTS,
    RIM_UNIT,
    MetalHues,
    circle_array,
    circle_box,
    edgeless_boxes,
    half_edges,
    loose_circles,
    loose_misses,
    metal_span,
    rim_points,
    rim_points_on,
    spread_sizes,
    unlike_discs,
    without_cards,
)
from groundeval.grounding.proposers._peers import with_peer_checks
from groundeval.grounding.proposers._residue import ContrastMap, Sizes, merge_found
from groundeval.grounding.proposers.opencv_contours import (
    WIDE_DIVISOR,
    opened_residue,
    residue_map,
    round_residue,
    solid_residue,
)
from groundeval.state import Element, GroundSpec

NEIGHBOUR_RIM = 1.15
"""A rim point within this many radii of another circle's centre is on that circle's rim."""
OWN_RIM_LEAST = 0.25
"""Least share of a rim clear of the other circles for its own support to be judged."""


ECHO_MARGIN = 0.1
"""A rim point of a circle within this share of a stronger circle's radius outside it is on it."""
ECHO_OWN_ARC = 0.25
"""Least share of its rim a circle must have outside a stronger one it overlaps to be a coin."""
ECHO_HALO = 1.25
"""Just outside a circle's rim: this many radii from its centre (a coin's border with the table)."""
ECHO_TWIN = 1.5
"""A weaker circle whose radius is within this factor of a kept one's may be its twin, shifted
off the coin's centre (in-style clean 10004: 44.6 px over 39.8, its own arc on the table;
clean 1091: 42.0 px over the coin's inner ring, 28.5). A far larger circle round coins is
no twin: dropped, it would take with it the doubts it raises (blind 206017, 206430: circles
of 156 and 221 px, whose sizes and hollowness withheld). Stop 56 raised it from 1.25: of
the 4,650 coin tuning images, 47 withheld turned right and none wrong."""
ECHO_INSIDE = 0.7
"""Share of a weaker circle's halo on an object (the contrast map) that makes it an echo."""


def drop_echoes(
    circles: np.ndarray, cmap: ContrastMap, edged: tuple[np.ndarray, float] | None = None
) -> np.ndarray:
    """Rows ``(cx, cy, r)`` (strongest first) without Hough's echoes of a stronger circle.

    Hough answers one coin with several circles whose centres lie just over ``minDist``
    apart, or with its inner ring as well as its rim. A weaker circle overlapping a kept one
    (either's box holds the other's centre) is an echo when under ``ECHO_OWN_ARC`` of its rim
    lies outside the kept circle, or when that arc borders an object, not the table (its
    halo, ``ECHO_HALO`` radii out, is mostly lit in the contrast map): both lie inside one
    coin. So is a twin of the kept circle (radii within ``ECHO_TWIN``) whose own arc runs on
    no edge (under ``MIN_RIM_SUPPORT`` of it, on ``edged``: the edge map and its scale):
    Hough's circle shifted off a coin's centre over the table. Otherwise it has a border of
    its own, is kept, and the nested check withholds the question (two coins stacked, or
    one split).
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
            if (
                edged is not None
                and max(r, kr) <= ECHO_TWIN * min(r, kr)  # a twin, whose own arc has no edge
                and rim_points_on(rim[outside], *edged).mean() < MIN_RIM_SUPPORT
            ):
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


def circle_review(
    image_bgr: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    param1: float,
    grey: np.ndarray | None = None,
    looked: tuple[Sizes, ContrastMap] | None = None,
    edged: tuple[np.ndarray, np.ndarray, float] | None = None,
) -> Review:
    """Residue, clutter and rim support of a set of circles (edges on a half-size copy).

    Hough misses coins a table line (mortar, grass) or another coin runs into, and so does
    the round residue (the coin is one region with the line): the solid look (as contours
    has it) and a wide-opened look flag them. ``grey`` (the image in grey) and ``looked``
    (the residue map) and ``edged`` (:func:`._discs.half_edges`) are detection's, when it has
    them. The contrast map is ``coarse`` (a
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
    # a card or a note beside the coins is a region no circle covers, and no coin either
    review.unexplained = without_cards(image_bgr, review.unexplained, elements)
    with_peer_checks(review, cmap, elements, "circle")
    half, edges, scale = edged or half_edges(image_bgr, param1, grey)
    support = own_rim_supports(elements, edges, scale)
    weak = [f"#{i}" for i, share in enumerate(support, start=1) if share < MIN_RIM_SUPPORT]
    if weak:
        review.problems.append(
            f"weak support: circles {', '.join(weak[:8])} have under {MIN_RIM_SUPPORT:.0%} "
            "of their rim clear of other circles on an edge (texture, or a gap between "
            "coins, not discs?)"
        )
    loose = loose_circles(half, elements, params, edges, scale)
    loose = loose_misses(image_bgr, loose, elements)
    review.unexplained = merge_found(review.unexplained, loose)
    review.problems += unlike_discs(image_bgr, elements, "circle", metal_span(params))
    review.problems += spread_sizes(elements, "circle")
    return review


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
        "dp": HOUGH_VOTE["dp"],
        "min_dist_px": 0.0,
        "param1": HOUGH_VOTE["param1"],
        "param2": HOUGH_VOTE["param2"],
        "min_radius_px": HOUGH_VOTE["min_radius_px"],
        "max_radius_px": HOUGH_VOTE["max_radius_px"],
        "retry_factor": 0.8,
        "metal_hues_deg": list(METAL_HUES_DEG),
    }
    param_types: ClassVar[dict[str, Any]] = {"metal_hues_deg": MetalHues}
    """``metal_hues_deg``: a circle whose object has a clear colour outside this Lab hue span
    (a blue paper clip's loop) is no coin; ``None`` for discs of any colour."""

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
        elements, looked, edged = self.circles(image_bgr, grey, params)
        param1 = float(params["param1"])
        review = circle_review(
            image_bgr, elements, self.review_params(params), param1, grey, looked, edged
        )
        return elements, review

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Hough circles without their echoes, sorted top to bottom."""
        return self.circles(image_bgr, cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), params)[0]

    def circles(
        self, image_bgr: np.ndarray, grey: np.ndarray, params: dict[str, Any]
    ) -> tuple[list[Element], tuple[Sizes, ContrastMap], tuple[np.ndarray, np.ndarray, float]]:
        """:meth:`detect` (``grey``: the image in grey), and the map and edges it judged echoes on.

        The residue map is sized to all of Hough's circles; the self-check reads the same map
        and the same half-size edges (:func:`._discs.half_edges`).
        """
        raw = self.hough(grey, params)
        looked = residue_map(
            image_bgr, [circle_box(*row) for row in raw], self.review_params(params), coarse=True
        )
        edged = half_edges(image_bgr, float(params["param1"]), grey)
        kept = drop_echoes(raw, looked[1], edged[1:])
        found = _clip([circle_box(*row) for row in kept], image_bgr.shape)
        found.sort(key=lambda e: (e.fields["center_px"][1], e.fields["center_px"][0]))
        return found, looked, edged

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


PAIR_ROUNDNESS = 0.5
"""Least roundness (area over the enclosing circle's) of a region the blobs' round look flags:
two discs touching are one region on the map, and two alike fill half their circle (blind
205205: the detector took specks of linen and missed two touching coins, 0.60 round). Other
proposers keep 0.6: at 0.5, contours (on coins and rows) and circles lost 2-6 right decisions
a column on the report seeds."""


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
        "metal_hues_deg": list(METAL_HUES_DEG),
    }
    param_types: ClassVar[dict[str, Any]] = {
        "blob_color": Literal[0, 255] | None,
        "metal_hues_deg": MetalHues,
    }
    """``blob_color``: 0 dark blobs, 255 bright ones, ``None`` (default) both (coins on a dark
    cloth are bright, on a pale table dark). ``metal_hues_deg``: as for ``opencv.circles``."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: looser shape and area filters when blobs are missing, stricter when wrong."""
        factor = float(params["retry_factor"])
        scale = factor if feedback.missing else 1 / factor
        params["min_circularity"] = min(1.0, float(params["min_circularity"]) * scale)
        params["min_area_px"] = float(params["min_area_px"]) * scale
        return params

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection and self-check on one grey copy (the loose vote's edges are cut from it)."""
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        elements = self.blobs(grey, params)
        return elements, self.self_check(image_bgr, elements, params, grey)

    def self_check(
        self,
        image_bgr: np.ndarray,
        elements: list[Element],
        params: dict[str, Any],
        grey: np.ndarray | None = None,
    ) -> Review:
        """Uncovered round regions; too many or nested blobs; blobs unlike the others.

        A ``coarse`` contrast map, as for circles: the detector is as quick as Hough. The
        residue looks at every size the detector could have counted (up to
        ``max_area_px``, on a map whose window is sized to that), not only at the size of
        what it found: specks of the table found as dark blobs must not hide coins of the
        other polarity. Hough's loose vote (:func:`loose_circles`, at the circles' defaults)
        looks for a coin the colour of the table by its rim, and a blob with no edge in its
        box is a blur of light (:func:`._discs.edgeless_boxes`). A card beside the blobs is no
        coin (:func:`._discs.without_cards`, as for circles). ``grey``: the image in grey, if
        made.
        """
        widest = float(params["max_area_px"])
        sizes, cmap = residue_map(image_bgr, elements, params, coarse=True, widest_area_px=widest)
        review = round_residue(image_bgr, elements, params, "blob", (sizes, cmap), PAIR_ROUNDNESS)
        if elements:  # the wide look too: a coin one region with a coin's shadow
            wide = opened_residue(cmap, elements, sizes, "blob", WIDE_DIVISOR)
            review.unexplained = merge_found(review.unexplained, wide)
            # a card or a note beside the coins is a region no blob covers, and no coin either
            review.unexplained = without_cards(image_bgr, review.unexplained, elements)
        # a coin the colour of the table shows only by its rim: Hough's loose vote sees it
        # (with no blob found too: "no coins" is a claim, probe 108020)
        param1 = float(HOUGH_VOTE["param1"])
        half, edges, scale = half_edges(image_bgr, param1, grey)
        loose = loose_circles(half, elements, HOUGH_VOTE, edges, scale)
        loose = loose_misses(image_bgr, loose, elements)
        review.unexplained = merge_found(review.unexplained, loose)
        if elements:
            review.problems += unlike_discs(image_bgr, elements, "blob", metal_span(params))
            review.problems += spread_sizes(elements, "blob", BLOB_SIZE_SPREAD)
            # a blur of light is a blob with no edge (bokeh on a dark sweep), as for contours
            review.problems += edgeless_boxes(image_bgr, elements, "blob", edges, scale, param1)
        return with_peer_checks(review, cmap, elements, "blob")

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Blobs of the given colour (0 dark, 255 bright, ``None`` either) as circles."""
        return self.blobs(cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY), params)

    def blobs(self, grey: np.ndarray, params: dict[str, Any]) -> list[Element]:
        """:meth:`detect` on the image in grey."""
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
        found = [circle_box(k.pt[0], k.pt[1], k.size / 2) for k in detector.detect(grey)]
        return sorted(found, key=lambda e: (e.fields["center_px"][1], e.fields["center_px"][0]))
