"""The peer look: what a proposer found, judged against itself.

Objects of one kind stand out from the table about equally and are about one size, so
the elements a proposer accepted say what a missed one would look like: as contrasting,
as large (a region no element covers), and what a misfit looks like: a box around two
such regions, a box over a fraction of one, an element far fainter than the rest. Used
by the round-object proposers after their residue looks (:mod:`._residue`).
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding.proposers._cv import Review
from groundeval.grounding.proposers._residue import (
    ContrastMap,
    Outline,
    Sizes,
    above,
    filled,
    median,
    merge_found,
    unexplained_regions,
)
from groundeval.state import Element

PEER_SHARES = (0.5, 0.75)
"""The peer look cuts the contrast map at these shares of the found elements' typical contrast."""
PEER_PERCENTILE = 90
"""An element's contrast: this percentile of the map inside its box (its bright body)."""
PEER_AREA = (0.3, 2.5)
"""Area span of the peer look, as shares of the elements' typical region (else of the boxes)."""
PEER_SOLIDITY = 0.75
"""Least solidity of a region of the peer cut taken for one object."""
PEER_ASPECT = 2.2
"""Most elongation of a region of the peer cut taken for one object."""
PEER_ROUNDNESS = 0.6
"""Least area over the enclosing circle's of a region taken for a round object (disc: 1)."""
PEER_ALIKE = 0.3
"""Two regions in one box, the smaller at least this share of the larger, are two objects."""
PEER_PART = 0.5
"""An element whose box is under this share of its round region's box covers a part of it."""
PEER_HALO = 2.5
"""An element whose box is over this many times its round region's box, and larger than the
typical element's, holds table around an object (a small one's bright core is smaller)."""
FAINT_SHARE = 0.5
"""An element under this share of its peers' typical contrast is doubtful (a patch of table)."""


SEEN_SHARE = 0.25
"""An element is seen by a contrast map when this share of its box is lit there (a disc: 0.79)."""
SEEN_LEAST = 0.5
"""A map that sees under this share of the elements found cannot vouch that none was missed."""


def unseen_elements(cmap: ContrastMap, elements: list[Element], what: str) -> list[str]:
    """A problem when a table's pattern raised the map's cut and it sees under half those found.

    The residue looks vouch for what a detector missed by what the map shows; where a loud
    table (gingham, grain) raised the cut above the map's ``floor`` and most found objects
    do not show (under ``SEEN_LEAST``), a missed one would not show either, and the map's
    silence is no evidence. On a plain table (the cut at its floor) faint coins are only
    faint: 8 of 60 out-of-style images there, every count right, would be refused.
    """
    if not elements or cmap.floor is None or cmap.level <= cmap.floor:
        return []
    s = cmap.scale
    seen = 0
    for e in elements:
        x1, y1, x2, y2 = (round(v * s) for v in bounds(e))
        patch = cmap.mask[y1 : max(y2, y1 + 1), x1 : max(x2, x1 + 1)]
        seen += cv2.countNonZero(patch) >= SEEN_SHARE * patch.size
    if seen >= SEEN_LEAST * len(elements):
        return []
    return [
        f"the residue map shows {seen} of the {len(elements)} {what}s found: a {what} "
        "missed would not show either"
    ]


def peer_contrasts(cmap: ContrastMap, elements: list[Element]) -> list[float]:
    """Each element's contrast: the ``PEER_PERCENTILE`` of the map inside its box (0 if none)."""
    s = cmap.scale
    out = []
    for e in elements:
        x1, y1, x2, y2 = (int(v * s) for v in bounds(e))
        patch = cmap.distance[y1 : max(y2, y1 + 1), x1 : max(x2, x1 + 1)].ravel()
        if not patch.size:
            out.append(0.0)
            continue
        k = min(patch.size - 1, int(PEER_PERCENTILE / 100 * patch.size))
        out.append(float(np.partition(patch, k)[k]))  # a percentile, without interpolation
    return out


def _faint(contrasts: list[float], what: str) -> list[str]:
    """:func:`faint_elements` given the elements' contrasts."""
    if len(contrasts) < 3:
        return []
    typical = median(contrasts)
    return [
        f"{what} #{i} contrasts {c / typical:.0%} as much as the typical {what}: "
        "a patch of table rather than an object?"
        for i, c in enumerate(contrasts, start=1)
        if c < FAINT_SHARE * typical
    ]


def faint_elements(cmap: ContrastMap, elements: list[Element], what: str) -> list[str]:
    """Problems for elements far fainter than the others found (at least three of them).

    Objects of one kind stand out from the table about equally; an element under
    ``FAINT_SHARE`` of the typical contrast is more likely grain, gravel or a shadow
    than one more object, and counting it would be a guess.
    """
    return _faint(peer_contrasts(cmap, elements), what)


@dataclass(frozen=True)
class _Region:
    """One region of the peer cut, in full-image pixels."""

    xyxy: tuple[float, float, float, float]
    centre: tuple[float, float]
    area: float
    compact: bool
    round: bool


def peer_review(
    cmap: ContrastMap,
    elements: list[Element],
    what: str,
    contrasts: list[float] | None = None,
    *,
    segmented: bool = False,
) -> tuple[list[Element], list[str]]:
    """Regions as contrasting as the elements found: the ones they miss, and misfits.

    What a proposer counted says what its objects look like to the contrast map; a missed
    object of the same kind is as bright there. A cut at the table's own level merges a
    row of close objects with their shadows into one long region, so this look cuts at
    shares of the elements' typical contrast instead (``PEER_SHARES``; the higher one
    only when an element sits in a region the lower one left merged), where such a row
    comes apart. Sizes come from the regions the elements sit on (a loose box is not an
    object's size).

    ``contrasts`` are :func:`peer_contrasts` when the caller has them. Returns the
    unexplained regions (compact, of a comparable size, outside every box) and problems:
    an element whose box holds several round regions (objects boxed together), or that
    covers a fraction of a round one (an object cut in pieces); and for ``segmented``
    elements (regions cut from the table, as ``opencv.contours`` cuts them, not a fitted
    circle or a detector's box), one far larger than the round region in it and than its
    peers (a cloudy table grown around an object).
    """
    if not elements:
        return [], []
    if contrasts is None:
        contrasts = peer_contrasts(cmap, elements)
    typical = median(contrasts)
    found: list[Element] = []
    problems: list[str] = []
    for k, share in enumerate(PEER_SHARES):
        level = max(cmap.level, share * typical)
        more, doubts, merged = _peer_cut(cmap, elements, what, level, table=segmented and k == 0)
        found = merge_found(found, more)
        problems.extend(d for d in doubts if d not in problems)
        if not merged:
            break
    return found, problems


def _peer_cut(
    cmap: ContrastMap, elements: list[Element], what: str, level: float, *, table: bool = False
) -> tuple[list[Element], list[str], bool]:
    """:func:`peer_review` at one cut; also whether an element sits in a merged region.

    ``table``: look for table grown around an object (at the lowest cut only: a faint
    object's region may be gone at a higher one).
    """
    raw = above(cmap.distance, level)
    mask, contours = filled(
        np.asarray(cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    )
    cut = ContrastMap(cmap.scale, cmap.distance, mask, level, contours=contours, covers=cmap.covers)
    regions = [_region(o, cmap.scale) for o in cut.outlines]
    problems: list[str] = []
    matched: list[float] = []
    merged = False
    boxes = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in map(bounds, elements)]
    typical_box = median(boxes) if table else 0.0
    for i, e in enumerate(elements, start=1):
        x1, y1, x2, y2 = bounds(e)
        cx, cy = (x1 + x2) / 2, (y1 + y2) / 2
        merged = merged or any(not r.compact and _holds(r.xyxy, cx, cy) for r in regions)
        inside = [r for r in regions if _holds((x1, y1, x2, y2), *r.centre)]
        if not inside:
            continue
        largest = max(inside, key=lambda r: r.area)
        alike = [r for r in inside if r.round and r.area >= PEER_ALIKE * largest.area]
        if len(alike) >= 2:
            problems.append(f"{what} #{i} holds {len(alike)} separate object-like regions")
            continue
        matched.append(largest.area)
        rx1, ry1, rx2, ry2 = largest.xyxy
        box_area, region_box = (x2 - x1) * (y2 - y1), (rx2 - rx1) * (ry2 - ry1)
        if largest.round and box_area < PEER_PART * region_box:
            problems.append(f"{what} #{i} covers only part of a round region: an object cut up?")
        elif table and largest.round and box_area > max(PEER_HALO * region_box, typical_box):
            problems.append(f"{what} #{i} is far larger than the round region in it: table around?")
    if matched:
        typical = median(matched)
        sizes = Sizes(PEER_AREA[0] * typical, PEER_AREA[1] * typical, 0.0)
    else:
        sizes = Sizes(PEER_AREA[0] * min(boxes), PEER_AREA[1] * max(boxes), 0.0)
    found, _ = unexplained_regions(
        cut, elements, sizes, what, min_solidity=PEER_SOLIDITY, max_aspect=PEER_ASPECT
    )
    for u in found:
        u.reason = f"{u.reason} (as contrasting as the {what}s found)"
    return found, problems, merged


def _holds(xyxy: tuple[float, float, float, float], x: float, y: float) -> bool:
    return xyxy[0] <= x <= xyxy[2] and xyxy[1] <= y <= xyxy[3]


def _region(outline: Outline, scale: float) -> _Region:
    area, hull, radius = outline.area, outline.hull_area, outline.radius
    x, y, w, h = outline.bbox
    rw, rh = outline.rect_wh
    aspect = max(rw, rh) / max(min(rw, rh), 1e-6)
    compact = hull > 0 and area / hull >= PEER_SOLIDITY and aspect <= PEER_ASPECT
    rounded = compact and area >= PEER_ROUNDNESS * np.pi * max(radius, 1e-6) ** 2
    s = scale
    return _Region(
        (x / s, y / s, (x + w) / s, (y + h) / s),
        ((x + w / 2) / s, (y + h / 2) / s),
        area / (s * s),
        compact,
        rounded,
    )


def with_peer_checks(
    review: Review,
    cmap: ContrastMap,
    elements: list[Element],
    what: str,
    *,
    faint: bool = True,
    segmented: bool = False,
) -> Review:
    """``review`` with the peer look's regions and misfits (and faint elements) added.

    ``faint=False`` for a learned detector: it judged each box by shape, so a faint box
    is a faint object more often than a patch of table. ``segmented``: the elements are
    regions cut from the table (see :func:`peer_review`).
    """
    contrasts = peer_contrasts(cmap, elements)
    peers, misfits = peer_review(cmap, elements, what, contrasts=contrasts, segmented=segmented)
    review.unexplained = merge_found(review.unexplained, peers)
    review.problems.extend(misfits)
    if faint:
        review.problems.extend(_faint(contrasts, what))
    return review
