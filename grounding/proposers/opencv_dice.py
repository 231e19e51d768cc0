"""``opencv.dice``: die faces of any colour as boxes, with the number of pips on each face.

Faces are found two ways. *White faces*: a whiteness map (the smallest of B, G,
R: high only for white or ivory) thresholded by Otsu within bounds. *Any other
face colour*: regions that contrast with their local background (the residue
check's contrast map), each refined to the pixels of its own dominant colour so
a drop shadow or a textured table does not bend its outline. Either way an outer
contour that is roughly square (minimum-area rectangle aspect and fill) is a
face.

Pips are whatever differs in colour from the face inside its eroded mask,
lighter *or* darker. Pips that touch are split by the distance transform (one
core per pip) and checked against their area (a merged blob covers about as
many pip areas as it has cores); pips of clashing sizes, a count the two
readings disagree on, or a total outside 1-6 leave the face with
``pips: None`` and a ``problem`` so a verifier checking the field schema
rejects it: the question is withheld rather than answered by a guess. So is a
large blob that is not square (two dice merged, a die half hidden).

Self-check: compact contrasting regions of a die's size that no face covers
are ``unexplained`` (a die the proposer could not read is never silently
absent). The net is wide (down to a fifth of the smallest face's box, square by
rectangle fill or, blurred and tilted, by low roundness); what only the wide net
catches must also look square in full resolution (``square_at_full_size``), so
a small token or ellipse on the table is not taken for a missed die.

Feedback: on a retry the threshold is lowered by ``retry_threshold_drop``, the
allowed aspect is widened to ``retry_max_aspect`` and the pip contrast cut moves
to ``retry_pip_dark_ratio``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding._geometry import xyxy_iou as iou
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.grounding.proposers._residue import (
    ContrastMap,
    contrast_map,
    sizes_from,
    unexplained_regions,
)
from groundeval.state import Element, GroundSpec

NOT_A_FACE = "blob that is not one die face"
RESIDUE_RECT_FILL = 0.84
"""How square an uncovered region must be to count as a missed die (a disc fills 0.79)."""
RESIDUE_CONTRAST = 18.0
"""Lab distance from the local background at which an uncovered die-sized region is flagged."""
RESIDUE_LOW_SHARE = 0.2
"""Smallest flagged region, as a share of the smallest face box found (sides vary 2x, boxes
of tilted faces are up to 2x their area)."""
RESIDUE_MAX_ASPECT = 1.4
"""A die face's region is about square at any tilt; longer ones are cloth folds or cards."""
STRICT_SIZE_FACTOR = 0.45 / RESIDUE_LOW_SHARE
"""The strict net's smallest region (0.45 of the smallest face box) over the wide net's."""
FULL_SIZE_SQUARE_FILL = 0.86
"""Rectangle fill (of the convex hull, full resolution) of a region taken for a missed die."""
RESIDUE_SQUARE_ROUNDNESS = 0.8
"""Roundness up to which a blurred, tilted region still counts as square (see ``_residue``)."""


@register_proposer("opencv.dice")
class DiceProposer(CVProposer):
    """Dice of any face colour, pips lighter or darker than the face, on any table."""

    name: ClassVar[str] = "opencv.dice"
    defaults: ClassVar[dict[str, Any]] = {
        "min_side_px": 20.0,
        "max_side_share": 0.5,
        "threshold_bounds": [100, 210],
        "threshold_drop": 0,
        "max_aspect": 1.35,
        "min_fill": 0.72,
        "colour_faces": True,
        "colour_min_fill": 0.8,
        "face_colour_distance": 40.0,
        "min_contrast": 28.0,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_threshold_drop": 20,
        "retry_max_aspect": 1.5,
        "retry_pip_dark_ratio": 0.65,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: lower the whiteness threshold, accept less square faces, lower pip cut."""
        params["threshold_drop"] = params["retry_threshold_drop"]
        params["max_aspect"] = params["retry_max_aspect"]
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find die faces and count their pips."""
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        lab = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB)
        limit = float(params["max_side_share"]) * min(grey.shape)
        found: list[tuple[Element, float]] = []
        blobs: list[tuple[Element, float, np.ndarray]] = []
        for contour in white_faces(image_bgr, params):
            element, side = face_element(lab, grey, contour, params, float(params["min_fill"]))
            if side <= limit:
                blobs.append((element, side, contour))
        read = [side for e, side, _ in blobs if e.fields["pips"] is not None]
        least = 0.6 * float(np.median(read)) if read else 0.0
        for element, side, contour in blobs:
            if element.fields["pips"] is not None or _die_like(contour, side, read, grey.shape):
                found.append((element, side))
        if params["colour_faces"]:
            cmap = contrast_map(image_bgr, _window(image_bgr, read, params), params["min_contrast"])
            for contour in colour_faces(lab, cmap, [e for e, _ in found], params):
                element, side = face_element(
                    lab, grey, contour, params, float(params["colour_min_fill"])
                )
                # a coloured blob is a face only if square and about as big as the white faces
                if element.fields.get("problem") == NOT_A_FACE:
                    continue
                if side < least:
                    continue
                found.append((element, side))
            found = _outermost(found)
        elements = [e for e, side in found if side <= limit]
        elements.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0, 0))
        return elements

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Residue check on its own contrast map (a harder look than detection's)."""
        h, w = image_bgr.shape[:2]
        hint_max = (float(params["max_side_share"]) * min(h, w)) ** 2
        sizes = sizes_from(
            elements, 0.6 * float(params["min_side_px"]) ** 2, hint_max, RESIDUE_LOW_SHARE
        )
        # the residue looks harder than detection: a die too faint to read must still show
        cmap = contrast_map(image_bgr, sizes.window_px, RESIDUE_CONTRAST)
        unexplained, problems = unexplained_regions(
            cmap,
            elements,
            sizes,
            "die face",
            min_rect_fill=RESIDUE_RECT_FILL,
            max_aspect=RESIDUE_MAX_ASPECT,
            square_roundness=RESIDUE_SQUARE_ROUNDNESS,
        )
        # what only the wider net (smaller, blurrier regions) caught is looked at again in
        # full resolution, so a small disc or ellipse on the table is not taken for a die
        strict, _ = unexplained_regions(
            cmap, elements, replace(sizes, min_area_px=sizes.min_area_px * STRICT_SIZE_FACTOR),
            "die face", min_rect_fill=RESIDUE_RECT_FILL,
        )  # fmt: skip
        sure = {tuple(u.xyxy_px or ()) for u in strict}
        unexplained = [
            u
            for u in unexplained
            if tuple(u.xyxy_px or ()) in sure or square_at_full_size(image_bgr, bounds(u))
        ]
        if len(elements) > 40:
            problems.append(f"{len(elements)} die faces: too many to be dice, likely a pattern")
        return Review(unexplained, problems)


def square_at_full_size(image_bgr: np.ndarray, xyxy: tuple[float, float, float, float]) -> bool:
    """Whether the object in a residue box is square when looked at in full resolution.

    The residue works on a copy a few times smaller, where a small ellipse or disc blurs
    into something as square as a tilted die. Here the box (padded) is cut by Otsu on the
    Lab distance from the colour of its rim; the largest region must fill its minimum-area
    rectangle like a square (a disc or ellipse fills 0.79) and be about as wide as long.
    """
    h, w = image_bgr.shape[:2]
    x1, y1, x2, y2 = xyxy
    pad = 0.25 * max(x2 - x1, y2 - y1)
    a, b = max(0, int(x1 - pad)), max(0, int(y1 - pad))
    c, d = min(w, int(np.ceil(x2 + pad))), min(h, int(np.ceil(y2 + pad)))
    if c - a < 8 or d - b < 8:
        return True
    lab = cv2.cvtColor(image_bgr[b:d, a:c], cv2.COLOR_BGR2LAB).astype(np.float32)
    rim = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    dist = np.sqrt(((lab - np.median(rim, axis=0)) ** 2).sum(axis=2))
    dist8 = np.clip(dist, 0, 255).astype(np.uint8)
    _, mask = cv2.threshold(dist8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return True
    contour = max(contours, key=cv2.contourArea)
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    hull = cv2.convexHull(contour)  # pips and shading leave holes: the hull is the face
    fill = float(cv2.contourArea(hull)) / max(rw * rh, 1.0)
    aspect = max(rw, rh) / max(min(rw, rh), 1.0)
    return fill >= FULL_SIZE_SQUARE_FILL and aspect <= 1.3


def _die_like(contour: np.ndarray, side: float, read: list[float], shape: tuple[int, ...]) -> bool:
    """An unreadable white blob worth refusing on: die-sized, compact, clear of the border.

    Two touching dice are (a refusal withholds the question); a highlight on the table,
    a stripe of light wood or a bright corner of the image are not.
    """
    h, w = shape[:2]
    x, y, bw, bh = cv2.boundingRect(contour)
    if x <= 1 or y <= 1 or x + bw >= w - 1 or y + bh >= h - 1:
        return False
    if read and not 0.6 * float(np.median(read)) <= side <= 2.5 * float(np.median(read)):
        return False
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    hull = float(cv2.contourArea(cv2.convexHull(contour)))
    solidity = float(cv2.contourArea(contour)) / hull if hull > 0 else 0.0
    return max(rw, rh) / max(min(rw, rh), 1.0) <= 2.6 and solidity >= 0.75


def _outermost(found: list[tuple[Element, float]]) -> list[tuple[Element, float]]:
    """Drop candidates lying inside a much larger one (light pips on a dark face)."""
    kept = []
    for e, side in found:
        x1, y1, x2, y2 = e.xyxy_px or (0.0, 0.0, 0.0, 0.0)
        area = max((x2 - x1) * (y2 - y1), 1e-6)
        inside = False
        for o, other_side in found:
            if o is e or other_side < 1.8 * side or o.xyxy_px is None:
                continue
            ox1, oy1, ox2, oy2 = o.xyxy_px
            w = min(x2, ox2) - max(x1, ox1)
            h = min(y2, oy2) - max(y1, oy1)
            if w > 0 and h > 0 and w * h >= 0.8 * area:
                inside = True
                break
        if not inside:
            kept.append((e, side))
    return kept


def _window(image_bgr: np.ndarray, sides: list[float], params: Any) -> float:
    """Local-background window: three dice wide (or a third of the image before any is read)."""
    if sides:
        return 3.0 * float(np.median(sides))
    return max(3.0 * float(params["min_side_px"]), 0.36 * float(min(image_bgr.shape[:2])))


def white_faces(image_bgr: np.ndarray, params: dict[str, Any]) -> list[np.ndarray]:
    """Outer contours of the white or ivory regions big enough to be a die."""
    white = image_bgr.min(axis=2)
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["threshold_bounds"]
    level = float(np.clip(otsu, low, high)) - float(params["threshold_drop"])
    mask = (white > level).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    min_area = 0.6 * float(params["min_side_px"]) ** 2
    return [c for c in contours if cv2.contourArea(c) >= min_area]


def colour_faces(
    lab: np.ndarray, cmap: ContrastMap, taken: list[Element], params: dict[str, Any]
) -> list[np.ndarray]:
    """Contrasting regions, each split into blobs of its dominant colour; none already taken."""
    s = cmap.scale
    min_area = 0.6 * float(params["min_side_px"]) ** 2
    contours, _ = cv2.findContours(cmap.mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    faces: list[np.ndarray] = []
    h, w = lab.shape[:2]
    boxes = [e.xyxy_px for e in taken if e.xyxy_px is not None]
    for contour in contours:
        if cv2.contourArea(contour) / (s * s) < min_area:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        x1, y1 = max(0, int(x / s) - 2), max(0, int(y / s) - 2)
        x2, y2 = min(w, int((x + bw) / s) + 3), min(h, int((y + bh) / s) + 3)
        region = np.zeros((y2 - y1, x2 - x1), np.uint8)
        shifted = np.round(contour.astype(np.float64) / s).astype(np.int32) - [x1, y1]
        cv2.drawContours(region, [shifted], -1, 1, -1)
        for blob in _dominant_colour_blobs(lab[y1:y2, x1:x2], region, params, min_area):
            blob = blob + np.array([x1, y1], np.int32)
            bx, by, bbw, bbh = cv2.boundingRect(blob)
            xyxy = (float(bx), float(by), float(bx + bbw), float(by + bbh))
            if any(iou(xyxy, (b[0], b[1], b[2], b[3])) > 0.3 for b in boxes):
                continue
            boxes.append(list(xyxy))
            faces.append(blob)
    return faces


def _dominant_colour_blobs(
    lab: np.ndarray, region: np.ndarray, params: dict[str, Any], min_area: float
) -> list[np.ndarray]:
    """Outer contours of the blobs of the region's median colour (pips are holes, filled)."""
    pixels = lab[region > 0].astype(np.float32)
    if len(pixels) == 0:
        return []
    colour = np.median(pixels, axis=0)
    dist = np.sqrt(((lab.astype(np.float32) - colour) ** 2).sum(axis=2))
    mask = ((dist < float(params["face_colour_distance"])) & (region > 0)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return [c for c in contours if cv2.contourArea(c) >= min_area]


def face_element(
    lab: np.ndarray,
    grey: np.ndarray,
    contour: np.ndarray,
    params: dict[str, Any],
    min_fill: float,
) -> tuple[Element, float]:
    """A face box with its pips (or ``None`` and the reason); also its side in pixels."""
    area = cv2.contourArea(contour)
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    x, y, bw, bh = cv2.boundingRect(contour)
    xyxy = (float(x), float(y), float(x + bw), float(y + bh))
    side = float(np.sqrt(rw * rh))
    aspect = max(rw, rh) / max(min(rw, rh), 1.0)
    fill = area / max(rw * rh, 1.0)
    if aspect > params["max_aspect"] or fill < min_fill:
        return box(xyxy, pips=None, problem=NOT_A_FACE), side
    pips, problem = count_pips(lab, contour, side, params)
    fields: dict[str, Any] = {"pips": pips}
    if problem:
        fields["problem"] = problem
    return box(xyxy, **fields), side


def count_pips(
    lab: np.ndarray, contour: np.ndarray, side: float, params: dict[str, Any]
) -> tuple[int | None, str]:
    """Pips inside one face, or ``None`` with the reason when the reading is ambiguous."""
    x, y, bw, bh = cv2.boundingRect(contour)
    crop = lab[y : y + bh, x : x + bw].astype(np.float32)
    face = np.zeros((bh, bw), np.uint8)
    cv2.drawContours(face, [contour - np.array([x, y], np.int32)], -1, 255, -1)
    k = max(3, round(side * 0.08) | 1)
    inner = cv2.erode(face, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))) > 0
    if inner.sum() < 9:
        return None, "face too small to read"
    body = np.median(crop[inner], axis=0)
    dist = np.sqrt(((crop - body) ** 2).sum(axis=2))
    contrast = float(np.percentile(dist[inner], 99))
    cut = max(40.0, (1.0 - float(params["pip_dark_ratio"])) * contrast)
    if contrast < 40.0:
        return None, "no pip contrasts with the face"
    spots = ((dist > cut) & inner).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(spots, connectivity=8)
    speck = 0.15 * np.pi * (float(params["pip_radius_share"]) * side) ** 2
    readings: list[tuple[int, int, float]] = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < speck:
            continue
        readings.append(_pip_blob(labels == i, int(stats[i, cv2.CC_STAT_AREA])))
    return _total(readings, side)


CORE_LEVELS = (0.6, 0.5, 0.7, 0.8, 0.9, 0.4)
"""Distance-transform levels (shares of the blob's largest) tried to split touching pips."""


def _pip_blob(blob: np.ndarray, area: int) -> tuple[int, int, float]:
    """(pips by cores, pips by area, radius) of one spot.

    Touching pips leave one distance-transform core each above some level; the first
    level whose core count matches the blob's area in pip areas wins. No level
    agreeing returns the two readings as they are, and the face is refused.
    """
    dist = cv2.distanceTransform(blob.astype(np.uint8), cv2.DIST_L2, 3)
    radius = float(dist.max())
    by_area = max(1, round(area / (np.pi * max(radius, 0.5) ** 2 * 1.1)))
    first = -1
    for level in CORE_LEVELS:
        cores = cv2.connectedComponents((dist >= level * radius).astype(np.uint8))[0] - 1
        if cores == by_area:
            return cores, by_area, radius
        first = cores if first < 0 else first
    return first, by_area, radius


def _total(readings: list[tuple[int, int, float]], side: float) -> tuple[int | None, str]:
    """Sum of pips; specks far smaller than the largest pip are ignored, mid-sized ones refuse."""
    if not readings:
        return None, "no pips found"
    typical = max((r for cores, _, r in readings if cores == 1), default=0.0) or max(
        r for *_, r in readings
    )
    if not 0.03 * side <= typical <= 0.2 * side:
        return None, f"spots of radius {typical:.1f} px are not pips on a {side:.0f} px face"
    total = 0
    for cores, by_area, radius in readings:
        if radius < 0.35 * typical:
            continue
        if radius < 0.6 * typical:
            return None, f"spot of radius {radius:.1f} px among pips of {typical:.1f} px"
        if cores != by_area:
            return None, f"merged pips: {cores} cores but the area of {by_area}"
        total += cores
    if not 1 <= total <= 6:
        return None, f"{total} pips is not a die face"
    return total, ""
