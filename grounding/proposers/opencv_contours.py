"""``opencv.contours``: objects as outer contours of a threshold or colour mask, split by watershed.

**The recommended coin path**: ``proposer: opencv.contours`` with no params. It counts
the project's coin scenes, metal coins on wood, cloth and gradients, and
scikit-image's ``coins()`` photo (24) at these defaults; coins it cannot count
(darker than the table, merged, cut) are refused or reported as unexplained, so the
question is withheld rather than miscounted.

Pipeline: a foreground mask, holes filled. The default ``mode: local`` keeps pixels
whose Lab colour differs from the *local* background (the median over a window
``window_share`` of the short side, lowered under crowded bright objects by a grey
opening) by Otsu's cut on that distance, capped at ``spread_factor`` x its median
and never under ``min_contrast``; ``polarity: bright`` leaves out pixels darker than
the table (dark pens, cards and shadows). ``mode: otsu`` is the older global
threshold on brightness = max(B, G, R) (or an adaptive mean threshold when
``adaptive_block_px`` > 1); ``mode: hsv`` an HSV range. Then, with
``split_touching``, the distance transform's local maxima become markers for
``cv2.watershed`` so touching round objects (coins) come apart; a round mask region left
holding one object's label (or none) is given back whole (the flood can creep in over a
groove or bevel and leave only a disc's face). Every region keeps its contour if its
area, solidity (area / convex hull area), circularity and elongation (``max_aspect``: a
disc merged with its shadow, or a shadow between discs, is long) pass, and it is no
rectangle: a region filling over ``max_rect_fill`` of its turned bounding rectangle is a
card, a note or a die, not a disc (a disc fills 0.79, one cut by a card's edge little more;
1.0 turns the test off). A region that fails the shape tests is looked at again with an
adaptive threshold (``rescue_block_share`` of the short side; textured coin faces); if
it still fails and is object-sized, it is returned with ``radius_px: None`` (``refuse_irregular``),
so a schema-checking verifier rejects it and the question is withheld instead of
miscounted. Slivers (small halos of dark clutter, specks far smaller than the rest)
are left out; a region the frame cuts that is no whole disc is refused too (table in a
corner beyond a dark stick; a coin the frame cuts has no size either).

Self-check: round regions of any polarity, of a size comparable to the objects found
(down to ``ROUND_RESIDUE_LOW_SHARE`` of the smallest box, never under ``min_area_px``, up to
at least ``ROUND_RESIDUE_SPAN`` x ``min_area_px`` so a fragment found does not hide whole
coins) and only ``ROUND_RESIDUE_CONTRAST`` off their surroundings, that no element covers
are ``unexplained``; a second look opens thin bridges away first (a coin touching mortar or
grain is one long region with it); a third clears the elements' boxes first (a fainter coin
touching found ones is one region with them, mostly covered); a fourth (contours only)
flags regions that are not round but compact, of about the median box's size, almost
wholly uncovered and lit well above the cut (``SOLID_*``: a faint or dark coin, or one
merged with its shadow); a fifth flags
round regions of the detector's own mask that no element covers, and round ones left once
the elements' boxes are cleared from it (a small coin touching a large one, lost as a speck);
a sixth, as for circles,
opens necks about a radius wide (``WIDE_DIVISOR``); a seventh asks Hough for circles the
size of the elements with a rim on an edge nearly all round (:data:`._discs.COIN_SIZED`: a
silver coin on a pale sweep, which no contrast look sees). A region the contrast looks
flag that is a card or a stick's stub is no object missed while rectangles are not counted
(``max_rect_fill`` under 1: :func:`._discs.without_sticks_or_cards`). Refused elements, more
than ``MAX_OBJECTS`` elements, two boxes holding each other's centre, or an element whose
object is a rectangle, hollow or the table (a note, a ring, a ring's inside:
:func:`._discs.unlike_discs`), or whose box holds no edge in grey or colour (bokeh:
:func:`._discs.edgeless_boxes`) are ``problems``,
and so are the peer look's misfits (:mod:`._peers`), among them a region far larger than
the round one in it and than its peers (a cloudy table grown around a coin).
The residue looks for objects of the size the spec asked for, never a retry's halved
``min_area_px``.

Feedback: on any retry the watershed markers may lie closer together
(``retry_peak_spacing``), which splits a merged pair refused as irregular; after
missing elements the minimum area also halves. (A retry's box nested with a box kept from
an earlier round is withheld by the verify loop, for every proposer.)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding._geometry import frame_gap_px, holds_centre
from groundeval.grounding._geometry import xyxy_iou as iou
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.grounding.proposers._discs import (
    COIN_SIZED,
    HOUGH_VOTE,
    edgeless_boxes,
    half_edges,
    loose_circles,
    unlike_discs,
    without_sticks_or_cards,
)
from groundeval.grounding.proposers._peers import with_peer_checks
from groundeval.grounding.proposers._residue import (
    BACKGROUND_SIDE_PX,
    ContrastMap,
    Sizes,
    cleared_residue,
    contrast_map,
    local_background,
    median,
    merge_found,
    opened,
    sizes_from,
    unexplained_regions,
)
from groundeval.state import Element, GroundSpec

ROUND_RESIDUE_CONTRAST = 8.0
"""Lab distance a missed disc needs to be flagged: below the detection cut on purpose, so a
coin too faint to count is still too visible to ignore."""
ROUND_RESIDUE_LOW_SHARE = 0.12
"""Smallest flagged region as a share of the smallest box found (coin radii vary 2.5x)."""
ROUND_RESIDUE_SPAN = 30.0
"""The residue looks at regions up to this many times ``min_area_px`` whatever was found."""
BRIDGE_DIVISOR = 12.0
"""The residue's second look opens bridges ``window / BRIDGE_DIVISOR`` wide (the window is three
object sides, so about a third of an object's diameter: mortar and grain go, pens stay apart)."""
WIDE_DIVISOR = 6.0
"""The wide look opens the residue map ``window / WIDE_DIVISOR`` wide: about an object's radius
(the window is three object sides), so a coin joined to another or to a tuft by a broad neck
comes apart while a coin itself stays."""
BRIDGE_LOW_SHARE = 0.4
"""Smallest region the bridged look flags, as a share of the median box found."""
CLEARED_MIN_SOLIDITY = 0.75
"""Least solidity of what is left of a region once the found boxes are cleared: clearing
cuts a box's corner out of a coin touching a found one (blind 206024: 0.797 left; the other
looks ask 0.8)."""
MASK_CLEAR_PX = 2
"""How much wider than each box :func:`cleared_mask_residue` clears the mask (full-size pixels)."""
CLEARED_ROUNDNESS = 0.7
"""Least roundness (area over the enclosing circle's) of what :func:`cleared_mask_residue` flags."""
SOLID_AREA = (0.4, 2.0)
"""Area span of the solid look, as shares of the median box found (a coin, not a cluster)."""
SOLID_COVERED = 0.1
"""A region the solid look flags lies almost wholly outside every element's box."""
SOLID_MAX_ASPECT = 2.0
"""A coin with its shadow is still no longer than twice its width (lines and pens are)."""
SOLID_MIN_SOLIDITY = 0.7
"""Least solidity of a region the solid look flags (a faint coin half lit still has it)."""
SOLID_MIN_ROUNDNESS = 0.33
"""Least roundness (area over the enclosing circle's) of a region the solid look flags."""
SOLID_LIT = 1.15
"""Least mean contrast over the map's cut: clearly lit, not a patch of table at the cut."""
WHOLE_MIN_ROUNDNESS = 0.6
"""Least area over the enclosing circle's of a region the watershed may not cut (disc: 1)."""
WHOLE_MAX_LOST = 1 - 1 / 3.5
"""A lone object's region is given back whole only when the watershed kept more than this
share of it (a sliver left of a large region is not the object's centre)."""
CUT_BY_FRAME = "cut by the frame"
"""A refused element's ``problem`` when the frame cuts it and it is no whole disc."""
BORDER_PX = 8
"""Boxes this close to the frame are cut by it (``drop_slivers``)."""
WHOLE_DISC_FILL = 0.75
"""Least share of its box's inscribed disc a region by the frame fills to be a whole coin
(a coin the watershed parted from a touching one loses a cap: 0.8)."""
WHOLE_DISC_SQUARE = 0.85
"""Least short side over long side of such a region's box (a disc's box is square)."""
FRAME_GAP_PX = 2
"""A region's box nearer the frame than this is cut by it: no whole disc."""
MAX_OBJECTS = 60
"""More elements than this is a pattern or texture, not a countable set."""
RADIUS_ERR_FLOOR_PX = 0.25
"""Least uncertainty of a measured radius: a quarter pixel, for an outline on whole pixels."""
CUT_SHIFT = (0.85, 1.2)
"""The cut moved down and up by these factors to see how firmly it places each outline."""
CUT_PAD_PX = 4
"""How far past its mask an outline may grow when the cut moves down."""
POLARITY_SLACK = 10.0
"""How much darker (lighter) than the background a ``bright`` (``dark``) object's pixel may be."""


@register_proposer("opencv.contours")
class ContoursProposer(CVProposer):
    """Blobs by threshold or colour, with area, convexity and circularity filters."""

    name: ClassVar[str] = "opencv.contours"
    defaults: ClassVar[dict[str, Any]] = {
        "mode": "local",
        "polarity": "bright",
        "hsv_lower": [0, 0, 0],
        "hsv_upper": [179, 255, 255],
        "blur_px": 5,
        "adaptive_block_px": 0,
        "min_contrast": 30.0,
        "window_share": 0.33,
        "spread_factor": 3.0,
        "rescue_block_share": 0.33,
        "min_area_px": 300.0,
        "max_area_share": 0.25,
        "min_solidity": 0.85,
        "min_circularity": 0.0,
        "max_rect_fill": 0.9,
        "max_aspect": 1.6,
        "split_touching": True,
        "peak_spacing": 0.8,
        "refuse_irregular": True,
        "retry_peak_spacing": 0.65,
    }
    param_types: ClassVar[dict[str, Any]] = {
        "mode": Literal["local", "otsu", "hsv"],
        "polarity": Literal["bright", "dark", "any"],
    }
    """Types the defaults cannot show (``validate`` checks them)."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: closer watershed markers; smaller objects too when some are missing."""
        params["peak_spacing"] = params["retry_peak_spacing"]
        if feedback.missing:
            params["min_area_px"] = float(params["min_area_px"]) / 2
        return params

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection, then the self-check at the size asked for, not a retry's halved minimum.

        A retry after missing elements halves ``min_area_px`` to find small objects; the
        residue's size span must not halve with it, or a coin found as a fragment shrinks
        what the residue looks at and the rest of the coin goes unflagged.
        """
        fg = foreground_of(image_bgr, params)  # a retry changes no parameter it reads
        elements = self.found(image_bgr, fg, params)
        asked = {**params, "min_area_px": self.resolve(spec)["min_area_px"]}
        return elements, self.review(image_bgr, fg.mask, elements, asked)

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Uncovered regions of an object's size: round ones, or clearly lit compact ones.

        Refused (irregular) elements are open too: a program without a field schema would
        otherwise count them, and their size is unknown.
        """
        return self.review(image_bgr, foreground(image_bgr, params), elements, params)

    def review(
        self,
        image_bgr: np.ndarray,
        mask: np.ndarray,
        elements: list[Element],
        params: dict[str, Any],
    ) -> Review:
        """:meth:`self_check` given the detector's foreground ``mask``."""
        sizes, cmap = residue_map(image_bgr, elements, params)
        review = round_residue(image_bgr, elements, params, "element", (sizes, cmap))
        review.unexplained = merge_found(review.unexplained, solid_residue(cmap, elements, sizes))
        if elements:
            # as for circles: a coin joined to a found one by a broad neck; a ring or a note
            # cut out of the table as a disc
            wide = opened_residue(cmap, elements, sizes, "element", WIDE_DIVISOR)
            review.unexplained = merge_found(review.unexplained, wide)
        if params["max_rect_fill"] < 1:  # a card or a stick's stub is no object counted here
            review.unexplained = without_sticks_or_cards(image_bgr, review.unexplained, elements)
        parts = cv2.connectedComponentsWithStats(mask)  # both mask looks read them
        for extra in (
            mask_residue(mask, elements, params, parts),
            cleared_mask_residue(mask, elements, sizes, params, parts),
        ):
            review.unexplained = merge_found(review.unexplained, extra)
        review.problems.extend(refused_problems(elements))
        if elements:
            # a coin the contrast looks miss (silver on a pale sweep) still has a rim
            param1 = float(HOUGH_VOTE["param1"])
            half, edges, scale = half_edges(image_bgr, param1)
            rims = loose_circles(half, elements, HOUGH_VOTE, edges, scale, COIN_SIZED)
            review.unexplained = merge_found(review.unexplained, rims)
            review.problems += unlike_discs(image_bgr, elements, "element")
            review.problems += edgeless_boxes(image_bgr, elements, "element", edges, scale, param1)
        return with_peer_checks(review, cmap, elements, "element", segmented=True)

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find objects and return them as boxes with ``area_px`` and ``radius_px``."""
        return self.found(image_bgr, foreground_of(image_bgr, params), params)

    def found(self, image_bgr: np.ndarray, fg: Foreground, params: dict[str, Any]) -> list[Element]:
        """:meth:`detect` given the foreground ``fg``."""
        found = regions(image_bgr, fg.mask, params)
        share = float(params["rescue_block_share"])
        if params["mode"] == "local" and share > 0 and any(_refused(e) for e in found):
            found = rescue(image_bgr, found, share, params)
        if params["mode"] == "local":
            found = refuse_cut(drop_slivers(found, image_bgr.shape), image_bgr.shape)
            found = cut_uncertainty(found, fg)
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0, 0))
        return found


def refused_problems(elements: list[Element]) -> list[str]:
    """Refused elements are a problem: an object seen but not measured.

    A problem (not an unexplained region) so the loop keeps no element of the round: a
    program without a field schema would count a refused element, and a retry that no
    longer refuses it must not leave the earlier refusal standing among the kept ones.
    """
    refused = [(i, e) for i, e in enumerate(elements, start=1) if _refused(e)]
    cut = [i for i, e in refused if e.fields.get("problem") == CUT_BY_FRAME]
    irregular = [i for i, _ in refused if i not in cut]
    said = []
    for which, why in ((irregular, "irregular"), (cut, CUT_BY_FRAME)):
        if which:
            said.append(f"element(s) #{', #'.join(map(str, which))} {why}: size not measured")
    return said


MaskParts = tuple[int, np.ndarray, np.ndarray, np.ndarray]
"""``cv2.connectedComponentsWithStats`` of a mask: count, labels, stats, centroids."""


def mask_residue(
    mask: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    parts_of: MaskParts | None = None,
) -> list[Element]:
    """Round regions of the detector's own mask, of an object's size, that no element covers.

    The watershed can leave a disc only a sliver (its label flooded over a groove), and the
    sliver falls under ``min_area_px``: the disc is in the mask but silently lost.
    ``parts_of``: the mask's connected components, when the caller has them.
    """
    if params["mode"] != "local":
        return []
    n, parts, stats, _ = parts_of or cv2.connectedComponentsWithStats(mask)
    h, w = mask.shape
    covered = np.zeros((h, w), np.uint8)
    for e in elements:
        x1, y1, x2, y2 = (int(v) for v in bounds(e))
        covered[max(0, y1) : y2 + 1, max(0, x1) : x2 + 1] = 1
    least, most = float(params["min_area_px"]), float(params["max_area_share"]) * h * w
    found: list[Element] = []
    for part in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[part])
        if not least <= area <= most or covered[y : y + bh, x : x + bw].mean() >= SOLID_COVERED:
            continue
        if _round_part(parts[y : y + bh, x : x + bw] == part):
            said = f"a round region of {area} px in the mask that no element covers"
            found.append(box((x, y, x + bw, y + bh), reason=said))
    return found


def cleared_mask_residue(
    mask: np.ndarray,
    elements: list[Element],
    sizes: Sizes,
    params: dict[str, Any],
    parts_of: MaskParts | None = None,
) -> list[Element]:
    """Round parts of the detector's own mask, of an object's size, left once every box is cleared.

    The mask's look (:func:`mask_residue`) passes by a region a box partly covers: a small coin
    touching a large one is one region with it, and the watershed's label for it fell under
    ``drop_slivers``' speck cut (probe 110757: 0.13 of the median coin). The contrast looks clear
    boxes too, on a copy too coarse to keep the small coin round. Cleared at full size, it is
    (roundness 0.82); on tuning images counted right, what clearing leaves is a crescent or a
    sliver (0.64 at most), bar one bimetal coin found as its inner disc only. Only regions a
    box reaches are cleared (each in its own window): the others are the mask look's.
    ``parts_of``: as for :func:`mask_residue`.
    """
    if params["mode"] != "local" or not elements:
        return []
    grown = [
        (int(x1) - MASK_CLEAR_PX, int(y1) - MASK_CLEAR_PX,
         int(np.ceil(x2)) + MASK_CLEAR_PX, int(np.ceil(y2)) + MASK_CLEAR_PX)
        for x1, y1, x2, y2 in map(bounds, elements)
    ]  # fmt: skip
    n, parts, stats, _ = parts_of or cv2.connectedComponentsWithStats(mask)
    found: list[Element] = []
    for part in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[part])
        if area < sizes.min_area_px:
            continue
        reach = [g for g in grown if g[0] < x + bw and x <= g[2] and g[1] < y + bh and y <= g[3]]
        if not reach:
            continue
        left = (parts[y : y + bh, x : x + bw] == part).astype(np.uint8)
        for gx1, gy1, gx2, gy2 in reach:
            cv2.rectangle(left, (gx1 - x, gy1 - y), (gx2 - x, gy2 - y), 0, -1)
        left = cv2.morphologyEx(left, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        m, pieces, kept, _ = cv2.connectedComponentsWithStats(left)
        for piece in range(1, m):
            px, py, pw, ph, size = (int(v) for v in kept[piece])
            window = pieces[py : py + ph, px : px + pw] == piece
            if sizes.min_area_px <= size <= sizes.max_area_px and _round_part(
                window, CLEARED_ROUNDNESS, CLEARED_MIN_SOLIDITY
            ):
                said = f"a round region of {size} px in the mask beside the elements' boxes"
                found.append(box((x + px, y + py, x + px + pw, y + py + ph), reason=said))
    return found


def drop_slivers(found: list[Element], shape: tuple[int, ...]) -> list[Element]:
    """Leave out slivers: small regions cut by the border, small irregular ones.

    Dark clutter (a card, a pen) leaves a thin halo of table that reads as brighter than
    the local background. A region by the border under half the median area of
    the accepted regions, or an irregular one under a third of it, is such a halo, not an
    object (an irregular region of an object's size is still refused); so is anything
    under 0.15 of that median (a speck beside coins six times its area). By the border
    but off the frame, a region filling its square box as a disc does is a small coin (one
    touching a larger coin was lost here, unseen by the self-check, which sees the two as
    one region) and an irregular one stays refused.
    """
    h, w = shape[:2]
    areas = [
        float(e.fields.get("area_px") or 0.0)
        for e in found
        if not _at_border(e, w, h) and not _refused(e)
    ]
    typical = float(np.median(areas)) if areas else 0.0

    def sliver(e: Element) -> bool:
        area = float(e.fields.get("area_px") or 0.0)
        if area < 0.15 * typical or (_refused(e) and area < 0.35 * typical):
            return True
        if _at_border(e, w, h) and area < 0.5 * typical:
            # off the frame, an irregular region stays refused and a whole disc is a coin
            return not (_off_frame(e, w, h) and (_refused(e) or _whole_disc(e)))
        return False

    return [e for e in found if not sliver(e)]


def refuse_cut(found: list[Element], shape: tuple[int, ...]) -> list[Element]:
    """Refuse a region the frame cuts unless it is a whole disc: it is no coin measured.

    Table in a corner beyond a dark stick reads as brighter than its surroundings (in-style
    hard 10379): cut by two sides of the frame and the stick, a right triangle of a coin's area
    that ``drop_slivers`` keeps. A coin the frame cuts has no size either. Refused, either
    is a problem and the question is withheld. No generated coin is cut by the frame; of the
    coin tuning images counted, only 10379 held such a region.
    """
    h, w = shape[:2]
    return [
        e
        if _off_frame(e, w, h) or _refused(e) or _whole_disc(e)
        else box(bounds(e), area_px=e.fields.get("area_px"), radius_px=None, problem=CUT_BY_FRAME)
        for e in found
    ]


def _off_frame(e: Element, w: int, h: int) -> bool:
    """Whether a region's box keeps ``FRAME_GAP_PX`` off the frame (the frame does not cut it)."""
    return frame_gap_px(bounds(e), w, h) >= FRAME_GAP_PX


def _whole_disc(e: Element) -> bool:
    """Whether a region fills a square box as a disc does: a small coin, not a halo of table.

    A halo of table beside dark clutter is thinner or longer.
    """
    x1, y1, x2, y2 = bounds(e)
    side = max(x2 - x1, y2 - y1)
    if _refused(e) or side <= 0:
        return False
    fill = float(e.fields.get("area_px") or 0.0) / (np.pi / 4 * side * side)
    return fill >= WHOLE_DISC_FILL and min(x2 - x1, y2 - y1) / side >= WHOLE_DISC_SQUARE


def _at_border(e: Element, w: int, h: int) -> bool:
    x1, y1, x2, y2 = bounds(e)
    return x1 <= BORDER_PX or y1 <= BORDER_PX or x2 >= w - BORDER_PX or y2 >= h - BORDER_PX


def _refused(e: Element) -> bool:
    return e.fields.get("radius_px", 0) is None


def rescue(
    image_bgr: np.ndarray, found: list[Element], share: float, params: dict[str, Any]
) -> list[Element]:
    """Second look at refused regions with an adaptive mean threshold (textured coins).

    Inside each refused region's box, the regions of the adaptive mask replace the
    refusal only if every one of them passes the shape tests; otherwise it stands.
    """
    block = max(3, int(share * min(image_bgr.shape[:2])) | 1)
    second = foreground(image_bgr, {**params, "mode": "otsu", "adaptive_block_px": block})
    kept = [e for e in found if not _refused(e)]
    for e in found:
        if not _refused(e) or e.xyxy_px is None:
            continue
        x1, y1, x2, y2 = (int(v) for v in e.xyxy_px)
        pad = max(8, x2 - x1, y2 - y1)
        window = np.zeros_like(second)
        window[max(0, y1 - pad) : y2 + pad, max(0, x1 - pad) : x2 + pad] = 255
        local = regions(image_bgr, cv2.bitwise_and(second, window), params)
        inside = [r for r in local if r.xyxy_px is not None and _centre_in(r, e)]
        if inside and not any(_refused(r) for r in inside):
            kept.extend(r for r in inside if not any(same_box(r, k) for k in kept))
        else:
            kept.append(e)
    return kept


def _centre_in(r: Element, e: Element) -> bool:
    assert r.xyxy_px is not None and e.xyxy_px is not None
    cx, cy = (r.xyxy_px[0] + r.xyxy_px[2]) / 2, (r.xyxy_px[1] + r.xyxy_px[3]) / 2
    x1, y1, x2, y2 = e.xyxy_px
    return x1 <= cx <= x2 and y1 <= cy <= y2


def same_box(a: Element, b: Element) -> bool:
    """Boxes overlapping by IoU 0.5 or more."""
    return iou(bounds(a), bounds(b)) >= 0.5


def regions(image_bgr: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> list[Element]:
    """Elements for the regions of a foreground mask (split, then shape-tested)."""
    h, w = mask.shape
    if params["split_touching"]:
        labels = split(image_bgr, mask, params)
    else:
        _, labels = cv2.connectedComponents(mask)
    found: list[Element] = []
    max_area = float(params["max_area_share"]) * h * w
    for label in range(1, int(labels.max()) + 1):
        region = (labels == label).astype(np.uint8)
        contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
        if not contours:
            continue
        contour = max(contours, key=cv2.contourArea)
        area = float(cv2.contourArea(contour))
        if area < float(params["min_area_px"]) or area > max_area:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        xyxy = (float(x), float(y), float(x + bw), float(y + bh))
        hull = float(cv2.contourArea(cv2.convexHull(contour)))
        solidity = area / hull if hull > 0 else 0.0
        perimeter = float(cv2.arcLength(contour, True))
        circularity = 4 * np.pi * area / perimeter**2 if perimeter > 0 else 0.0
        aspect = elongation(contour)
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        rect_fill = area / (rw * rh) if rw * rh > 0 else 0.0
        if (
            solidity < params["min_solidity"]
            or circularity < params["min_circularity"]
            or aspect > params["max_aspect"]
            or rect_fill > params["max_rect_fill"]
        ):
            if params["refuse_irregular"]:
                found.append(
                    box(
                        xyxy,
                        area_px=round(area, 1),
                        radius_px=None,
                        problem=f"irregular region (solidity {solidity:.2f}, "
                        f"circularity {circularity:.2f}, aspect {aspect:.2f})",
                    )
                )
            continue
        radius, err = disc_radius(contour, area)
        # a neighbour's pixels in the box: the split between them is no edge of the object
        window = (slice(y, y + bh), slice(x, x + bw))
        own, near = cv2.countNonZero(region[window]), cv2.countNonZero(mask[window])
        err = max(err, float(np.sqrt(near / np.pi) - np.sqrt(own / np.pi)))
        found.append(
            box(
                xyxy,
                area_px=round(area, 1),
                radius_px=round(radius, 2),
                radius_px_err=round(err, 2),
            )
        )
    return found


def cut_uncertainty(elements: list[Element], fg: Foreground) -> list[Element]:
    """Radii widened by how much more their outline moves than the others' as the cut moves.

    A faint edge (a token the colour of the wood beside it, grain running under a rim) is
    not where the cut puts it: cut ``CUT_SHIFT`` lower or higher, its radius moves further
    than a crisp one's. What all outlines share (blur, a global shift) cancels in any
    comparison between elements, so only each element's excess over the median move
    counts towards its ``radius_px_err``.
    """
    if fg.contrast is None:
        return elements
    moves: list[tuple[float, float] | None] = [_cut_moves(e, fg) for e in elements]
    known = [m for m in moves if m is not None]
    if len(known) < 2:
        return elements
    typical = (float(np.median([m[0] for m in known])), float(np.median([m[1] for m in known])))
    out = []
    for e, m in zip(elements, moves, strict=True):
        if m is not None:
            extra = max(abs(m[0] - typical[0]), abs(m[1] - typical[1]))
            err = max(float(e.fields["radius_px_err"]), extra)
            e = e.model_copy(update={"fields": {**e.fields, "radius_px_err": round(err, 2)}})
        out.append(e)
    return out


def _cut_moves(e: Element, fg: Foreground) -> tuple[float, float] | None:
    """How far an element's radius moves with the cut lower and higher (``CUT_SHIFT``)."""
    if e.fields.get("radius_px") is None or e.xyxy_px is None or fg.contrast is None:
        return None
    x1, y1, x2, y2 = (int(v) for v in e.xyxy_px)
    x1, y1 = max(0, x1 - CUT_PAD_PX), max(0, y1 - CUT_PAD_PX)
    window = (slice(y1, y2 + CUT_PAD_PX + 1), slice(x1, x2 + CUT_PAD_PX + 1))
    own = cv2.dilate(fg.mask[window], np.ones((2 * CUT_PAD_PX + 1,) * 2, np.uint8)) > 0
    contrast = fg.contrast[window]
    radii = [
        float(np.sqrt(np.count_nonzero((contrast > f * fg.level) & own) / np.pi))
        for f in (1.0, *CUT_SHIFT)
    ]
    return radii[1] - radii[0], radii[2] - radii[0]


def disc_radius(contour: np.ndarray, area: float) -> tuple[float, float]:
    """A region's radius (that of the disc of its area) and its uncertainty, in pixels.

    The area sums the whole outline, so a stray pixel or a bump barely moves it (the
    enclosing circle jumps by the bump's height). For a clean disc the radii of the
    fitted ellipse and of the minimum-area rectangle (both, like the area, through the
    outline's pixel centres) agree with it to a fraction of a pixel; a notch, a shadow
    lobe or a blurred edge pulls them apart, and their widest stray is the uncertainty
    (at least ``RADIUS_ERR_FLOOR_PX``: the outline is traced on whole pixels).
    """
    radius = float(np.sqrt(area / np.pi))
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    others = [(rw + rh) / 4]
    if len(contour) >= 5:
        (_, _), (ew, eh), _ = cv2.fitEllipse(contour)
        others.append((ew + eh) / 4)
    stray = max(abs(r - radius) for r in others)
    return radius, max(RADIUS_ERR_FLOOR_PX, stray)


def elongation(contour: np.ndarray) -> float:
    """Long over short side of the minimum-area rectangle (1 for a disc or a square).

    A disc seen at a slant stays under about 1.2; a disc merged with its cast shadow, or a
    shadow cut off between two discs, is far longer than wide, and its radius means nothing.
    """
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    return float(max(rw, rh) / max(min(rw, rh), 1e-6))


def residue_map(
    image_bgr: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    *,
    coarse: bool = False,
    widest_area_px: float = 0.0,
) -> tuple[Sizes, ContrastMap]:
    """Sizes the round residue looks for, and its contrast map (``coarse``: see there).

    ``widest_area_px`` > 0: look at regions up to that area whatever was found, on a map
    whose window is three such objects wide (a window sized to specks found sees a coin's
    inside as its own background, and the coin is no region at all). The opened looks keep
    ``sizes.window_px``, sized to what was found.
    """
    h, w = image_bgr.shape[:2]
    hint_min = float(params.get("min_area_px", np.pi * float(params.get("min_radius_px", 8)) ** 2))
    hint_max = float(params.get("max_area_share", 0.25)) * h * w
    sizes = sizes_from(elements, hint_min, hint_max, low_share=ROUND_RESIDUE_LOW_SHARE)
    # never smaller than the least object the proposer counts: specks of grain are not coins
    sizes = replace(sizes, min_area_px=max(sizes.min_area_px, hint_min))
    # a tiny element (a fragment of a coin) must not hide the coins: never look only at
    # regions under ROUND_RESIDUE_SPAN x the least object the proposer counts
    sizes = replace(sizes, max_area_px=max(sizes.max_area_px, ROUND_RESIDUE_SPAN * hint_min))
    window = sizes.window_px
    if widest_area_px > 0:
        sizes = replace(sizes, max_area_px=max(sizes.max_area_px, widest_area_px))
        window = max(window, 3.0 * float(np.sqrt(widest_area_px)))
    cmap = contrast_map(image_bgr, window, ROUND_RESIDUE_CONTRAST, coarse=coarse)
    return sizes, cmap


def round_residue(
    image_bgr: np.ndarray,
    elements: list[Element],
    params: dict[str, Any],
    what: str,
    looked: tuple[Sizes, ContrastMap] | None = None,
    min_roundness: float = 0.6,
) -> Review:
    """The residue check for round objects (coins, discs): shared by contours, circles, blobs.

    ``looked`` is :func:`residue_map`'s result when the caller already has it;
    ``min_roundness`` the least roundness of a region the first look flags.
    """
    sizes, cmap = looked or residue_map(image_bgr, elements, params)
    found, problems = unexplained_regions(cmap, elements, sizes, what, min_roundness=min_roundness)
    # a coin touching a line of the table (mortar, grain) is one region with it: look again
    # with thin bridges opened away (a kernel about a third of the objects' diameter)
    found = merge_found(found, opened_residue(cmap, elements, sizes, what, BRIDGE_DIVISOR))
    # a fainter coin touching found ones (or their shadows) is one region with them
    rest = cleared_residue(
        cmap, elements, sizes, what, min_roundness=0.6, min_solidity=CLEARED_MIN_SOLIDITY
    )
    found = merge_found(found, rest)
    if len(elements) > MAX_OBJECTS:
        problems.append(f"{len(elements)} objects found: too many to count, likely texture")
    problems.extend(nested(elements, what))
    return Review(found, problems)


def opened_residue(
    cmap: ContrastMap, elements: list[Element], sizes: Sizes, what: str, divisor: float
) -> list[Element]:
    """Round uncovered regions left once necks ``window / divisor`` wide are opened away.

    Opening chops grain into compact bits too, so only regions near full size (at least
    ``BRIDGE_LOW_SHARE`` of the median box found) count. A neck too thin to open leaves the
    map as it is: the round look (``round_residue``, which every caller runs first, with the
    same filters and no higher least area) has flagged all this could, so it is skipped.
    """
    cut = opened(cmap, sizes.window_px / divisor)
    if cut is cmap:
        return []
    boxes = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in (bounds(e) for e in elements)]
    least = BRIDGE_LOW_SHARE * median(boxes) if boxes else 0.0
    found, _ = unexplained_regions(
        cut, elements, replace(sizes, min_area_px=max(sizes.min_area_px, least)), what,
        min_roundness=0.6,
    )  # fmt: skip
    return found


def solid_residue(cmap: ContrastMap, elements: list[Element], sizes: Sizes) -> list[Element]:
    """Uncovered regions of an object's size that are compact and clearly contrasting.

    A coin that is faint, dark on a light table or one region with its shadow is not round
    in the contrast map, so the round look passes it by; it is still about as large as the
    objects found, wide rather than long (pens and lines are long), solid, and lit well
    above the map's cut (a patch of cloudy table barely clears it).
    """
    boxes = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in (bounds(e) for e in elements)]
    if not boxes:
        return []
    typical = median(boxes)
    span = replace(sizes, min_area_px=max(sizes.min_area_px, SOLID_AREA[0] * typical),
                   max_area_px=SOLID_AREA[1] * typical)  # fmt: skip
    found, _ = unexplained_regions(
        cmap, elements, span, "element", min_solidity=SOLID_MIN_SOLIDITY,
        max_aspect=SOLID_MAX_ASPECT, covered_share=SOLID_COVERED, min_roundness=SOLID_MIN_ROUNDNESS,
    )  # fmt: skip
    return [u for u in found if _clearly_lit(cmap, bounds(u))]


def _clearly_lit(cmap: ContrastMap, xyxy: tuple[float, float, float, float]) -> bool:
    """Whether the largest region in a residue box contrasts well above the map's cut."""
    s = cmap.scale
    x1, y1, x2, y2 = (round(v * s) for v in xyxy)
    _, labels, stats, _ = cv2.connectedComponentsWithStats(
        np.ascontiguousarray(cmap.mask[y1:y2, x1:x2])
    )
    if len(stats) < 2:
        return False
    region = labels == 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return float(cmap.distance[y1:y2, x1:x2][region].mean()) >= SOLID_LIT * cmap.level


def nested(elements: list[Element], what: str) -> list[str]:
    """Pairs where one box holds the other's centre: one object split, or two stacked."""
    for i, a in enumerate(elements):
        for j in range(i + 1, len(elements)):
            if holds_centre(a, elements[j]):
                return [f"{what}s #{i + 1} and #{j + 1} overlap heavily: one object split in two?"]
    return []


@dataclass(frozen=True)
class Foreground:
    """The detector's foreground mask and, in ``local`` mode, the contrast it was cut from."""

    mask: np.ndarray
    """0/255, opened and with holes filled."""
    contrast: np.ndarray | None = None
    """Lab distance of each pixel from its local background (``local`` mode only)."""
    level: float = 0.0
    """The cut on ``contrast`` that made the mask."""


def foreground(image_bgr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Binary mask (0/255) of the objects, holes filled."""
    return foreground_of(image_bgr, params).mask


def foreground_of(image_bgr: np.ndarray, params: dict[str, Any]) -> Foreground:
    """:func:`foreground` with the contrast map and cut behind it."""
    k = int(params["blur_px"]) | 1
    smooth = cv2.GaussianBlur(image_bgr, (k, k), 0) if k > 1 else image_bgr
    distance: np.ndarray | None = None
    cut = 0.0
    mask: np.ndarray
    if params["mode"] == "local":
        distance, cut = local_contrast(smooth, params)
        mask = (distance > cut).astype(np.uint8) * 255
    elif params["mode"] == "hsv":
        hsv = cv2.cvtColor(smooth, cv2.COLOR_BGR2HSV)
        mask = hsv_mask(hsv, params["hsv_lower"], params["hsv_upper"])
    elif params["mode"] == "otsu":
        grey = smooth.max(axis=2)
        flag = cv2.THRESH_BINARY if params["polarity"] == "bright" else cv2.THRESH_BINARY_INV
        block = int(params["adaptive_block_px"])
        if block > 1:
            mask = cv2.adaptiveThreshold(grey, 255, cv2.ADAPTIVE_THRESH_MEAN_C, flag, block | 1, -2)
        else:
            otsu, _ = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
            median, contrast = float(np.median(grey)), float(params["min_contrast"])
            if params["polarity"] == "bright":
                level = max(float(otsu), median + contrast)
            else:
                level = min(float(otsu), median - contrast)
            _, mask = cv2.threshold(grey, level, 255, flag)
    else:
        raise ValueError(
            f"opencv.contours: unknown mode {params['mode']!r}; use 'local', 'otsu' or 'hsv'"
        )
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8), iterations=2)
    return Foreground(fill_holes(mask), distance, cut)


def local_contrast(smooth: np.ndarray, params: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Each pixel's Lab distance from its local background, and the cut objects exceed.

    The background is the median Lab colour over a window ``window_share`` of the image's
    short side (objects under half of it vanish from the median). The cut is Otsu's on the
    distance map, capped at ``spread_factor`` x its median (wood grain or cloth must be
    out-contrasted, not matched) and never below ``min_contrast``. ``polarity``
    ``bright`` (``dark``) leaves out pixels clearly darker (lighter) than the background;
    ``any`` keeps both.
    """
    lab = cv2.cvtColor(smooth, cv2.COLOR_BGR2LAB)
    h, w = lab.shape[:2]
    window = float(params["window_share"]) * min(h, w)
    background = local_background(lab, window)
    if params["polarity"] in ("bright", "dark"):
        background[:, :, 0] = _envelope(lab[:, :, 0], window, params["polarity"], background)
    diff = lab.astype(np.float32) - background
    distance = np.sqrt((diff**2).sum(axis=2))
    if params["polarity"] == "bright":
        distance[diff[:, :, 0] < -POLARITY_SLACK] = 0.0
    elif params["polarity"] == "dark":
        distance[diff[:, :, 0] > POLARITY_SLACK] = 0.0
    otsu, _ = cv2.threshold(
        np.clip(distance, 0, 255).astype(np.uint8), 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU
    )
    spread = float(params["spread_factor"]) * float(np.median(distance))
    level = max(float(params["min_contrast"]), min(float(otsu), spread))
    return distance, level


def _envelope(
    lightness: np.ndarray, window_px: float, polarity: str, background: np.ndarray
) -> np.ndarray:
    """Background lightness under bright objects (a grey opening), or over dark ones.

    Where objects crowd the window, the median is an object's colour; an opening
    (the darkest the table gets, spread back) is not. The lower (bright) or higher
    (dark) of the two is kept.
    """
    h, w = lightness.shape
    f = min(1.0, BACKGROUND_SIDE_PX / max(h, w))
    tiny = cv2.resize(lightness, (max(1, round(w * f)), max(1, round(h * f))),
                      interpolation=cv2.INTER_AREA)  # fmt: skip
    k = np.ones((int(max(3, window_px * f * 0.5)) | 1,) * 2, np.uint8)
    op = cv2.MORPH_OPEN if polarity == "bright" else cv2.MORPH_CLOSE
    level = cv2.resize(cv2.morphologyEx(tiny, op, k), (w, h), interpolation=cv2.INTER_LINEAR)
    pick = np.minimum if polarity == "bright" else np.maximum
    return np.asarray(pick(background[:, :, 0], level.astype(np.float32)))


def hsv_mask(hsv: np.ndarray, lower: list[int], upper: list[int]) -> np.ndarray:
    """``cv2.inRange`` that wraps the hue when ``lower[0] > upper[0]`` (reds)."""
    lo, hi = np.array(lower, np.uint8), np.array(upper, np.uint8)
    if lo[0] <= hi[0]:
        return cv2.inRange(hsv, lo, hi)
    first = cv2.inRange(hsv, lo, np.array([179, hi[1], hi[2]], np.uint8))
    second = cv2.inRange(hsv, np.array([0, lo[1], lo[2]], np.uint8), hi)
    return cv2.bitwise_or(first, second)


def fill_holes(mask: np.ndarray) -> np.ndarray:
    """Fill every hole inside outer contours."""
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(mask)
    cv2.drawContours(filled, contours, -1, 255, -1)
    return filled


def split(image_bgr: np.ndarray, mask: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Label image: watershed from distance-transform peaks separates touching objects."""
    dist = cv2.distanceTransform(mask, cv2.DIST_L2, 5)
    min_radius = np.sqrt(float(params["min_area_px"]) / np.pi) * 0.5
    window = max(3, int(2 * min_radius) | 1)
    local_max = (dist >= cv2.dilate(dist, np.ones((window, window), np.float32))) & (
        dist >= min_radius
    )
    n, _peak_labels, _, centroids = cv2.connectedComponentsWithStats(local_max.astype(np.uint8))
    peaks = sorted(
        ((float(dist[round(cy), round(cx)]), float(cx), float(cy)) for cx, cy in centroids[1:n]),
        reverse=True,
    )
    kept: list[tuple[float, float, float]] = []
    spacing = float(params["peak_spacing"])
    for value, cx, cy in peaks:
        if all(np.hypot(cx - kx, cy - ky) >= spacing * max(value, kv) for kv, kx, ky in kept):
            kept.append((value, cx, cy))
    markers = np.zeros(mask.shape, np.int32)
    markers[mask == 0] = 1
    for i, (value, cx, cy) in enumerate(kept, start=2):
        centre = (int(np.clip(cx, 0, mask.shape[1] - 1)), int(np.clip(cy, 0, mask.shape[0] - 1)))
        cv2.circle(markers, centre, max(1, int(value * 0.3)), i, -1)
    cv2.watershed(image_bgr, markers)
    labels = markers - 1
    labels[labels < 1] = 0
    labels[mask == 0] = 0
    return whole_when_alone(mask, labels)


def whole_when_alone(mask: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Give a round mask region its whole area back when the watershed left one object in it.

    The watershed floods the image's colour edges, so the table's label can creep in over
    a groove or a bevel ring and leave only a disc's inner face (a radius a third too
    small), or take the whole disc. Splitting is for touching objects: a region holding a
    single object's label, or none, that is round (``WHOLE_MIN_ROUNDNESS``) and not lost
    over ``WHOLE_MAX_LOST`` of itself, is that one object, whole.
    """
    n, parts, stats, _ = cv2.connectedComponentsWithStats(mask)
    out = labels.copy()
    fresh = int(labels.max()) + 1
    for part in range(1, n):
        x, y, bw, bh, area = (int(v) for v in stats[part])
        window = parts[y : y + bh, x : x + bw] == part
        inside = labels[y : y + bh, x : x + bw][window]
        held = np.unique(inside[inside > 0])
        if len(held) > 1 or not _round_part(window):
            continue
        kept = int((inside == held[0]).sum()) if len(held) else 0
        if len(held) == 1 and (area - kept > area * WHOLE_MAX_LOST or _reaches_frame(
            stats[part], labels == held[0], mask.shape)):  # fmt: skip
            continue
        out[y : y + bh, x : x + bw][window] = int(held[0]) if len(held) else fresh
        fresh += 0 if len(held) else 1
    return out


def _reaches_frame(stat: np.ndarray, kept: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether a region given back whole would reach the frame's margin, what was kept not.

    ``drop_slivers`` would then read a whole coin by the edge as a sliver of one.
    """
    h, w = shape[:2]
    x, y, bw, bh = (int(v) for v in stat[:4])
    whole = x <= BORDER_PX or y <= BORDER_PX or x + bw >= w - BORDER_PX or y + bh >= h - BORDER_PX
    ys, xs = np.nonzero(kept)
    if not whole or not len(xs):
        return False
    x1, y1, x2, y2 = int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1
    return not (x1 <= BORDER_PX or y1 <= BORDER_PX or x2 >= w - BORDER_PX or y2 >= h - BORDER_PX)


def _round_part(
    window: np.ndarray, roundness: float = WHOLE_MIN_ROUNDNESS, solidity: float = 0.0
) -> bool:
    """Whether a region fills its enclosing circle like a disc seen at a slant (and its hull)."""
    contours, _ = cv2.findContours(window.astype(np.uint8), cv2.RETR_EXTERNAL,
                                   cv2.CHAIN_APPROX_SIMPLE)  # fmt: skip
    if not contours:
        return False
    contour = max(contours, key=cv2.contourArea)
    _, radius = cv2.minEnclosingCircle(contour)
    area = float(cv2.contourArea(contour))
    if area < roundness * np.pi * max(radius, 1e-6) ** 2:
        return False
    return solidity <= 0 or area >= solidity * float(cv2.contourArea(cv2.convexHull(contour)))
