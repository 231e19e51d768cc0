"""The residue check: object-like regions that no proposed element explains.

A proposer that silently drops what falls outside its model (a red die to a
white-dice detector) turns "I could not read it" into "there is nothing there".
The residue check looks at the image independently of the proposer's model:

1. a *contrast map* on a copy at most ``WORK_SIDE_PX`` on its long side: the
   Lab colour distance of every pixel from the mean of a window about three
   objects wide (its local background), cut at ``min_contrast`` or at
   ``spread_factor`` times the map's median, whichever is higher, so a textured
   table (wood grain, cloth) must be out-contrasted, not merely matched;
2. its connected regions, holes filled, kept when *compact* (solidity,
   aspect of the minimum-area rectangle) and of a size comparable to what was
   found (or to the spec's size hints when nothing was);
3. a region mostly outside every element's box is *unexplained* (a box with a
   ``reason``); the loop withholds the question while any remain.

Regions too many to be objects, a contrast map lit up over much of the image, or a
table whose own pattern raised the cut far above ``min_contrast`` (so a plainer object
would not show) are a *problem* (texture, clutter) rather than a long list or silence.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding.proposers._cv import box
from groundeval.state import Element

WORK_SIDE_PX = 200
"""Long side of the copy the check works on (keeps it to a few milliseconds)."""
TEXTURE_SIGMA_PX = 1.5
"""Blur (in work-copy pixels) that averages texture before contrasts are measured."""
RELAXED_RECT_FILL = 0.74
"""Least rectangle fill of a region accepted as square by its roundness (a disc fills 0.79)."""
BACKGROUND_SIDE_PX = 96
"""Long side of the copy the local background (a median) is estimated on."""
SPREAD_FACTOR = 3.0
"""A map's cut is at least this many times its median contrast (texture stays unlit)."""
PLAIN_CONTRAST = 28.0
"""Lab contrast an object needs to be found on a plain table (the detectors' defaults)."""
BUSY_FACTOR = 1.25
"""A table whose own pattern would raise the cut over this many times ``PLAIN_CONTRAST``
(stripes, gingham, a loud print) hides objects that contrast less: the check says so."""
COARSE_MEDIAN_PX = 22
"""A coarse map takes a median window wider than this (copy pixels) on a copy half as long."""


@dataclass(frozen=True)
class Sizes:
    """Expected object size: areas in full-image pixels, and the local window."""

    min_area_px: float
    max_area_px: float
    window_px: float


class Outline:
    """One outer contour of a map's mask and its measures (work-copy pixels), each taken once.

    Several looks read one mask (the round and the solid one): they share its outlines. A
    measure is taken when first asked (most outlines fail the size test before any).
    """

    __slots__ = ("_bbox", "_hull", "_radius", "_rect", "area", "contour")

    def __init__(self, contour: np.ndarray) -> None:
        self.contour = contour
        self.area = float(cv2.contourArea(contour))
        self._hull: float | None = None
        self._rect: tuple[float, float] | None = None
        self._radius: float | None = None
        self._bbox: tuple[int, int, int, int] | None = None

    @property
    def hull_area(self) -> float:
        """Area of the convex hull."""
        if self._hull is None:
            self._hull = float(cv2.contourArea(cv2.convexHull(self.contour)))
        return self._hull

    @property
    def rect_wh(self) -> tuple[float, float]:
        """Sides of the minimum-area rectangle."""
        if self._rect is None:
            (_, _), (rw, rh), _ = cv2.minAreaRect(self.contour)
            self._rect = float(rw), float(rh)
        return self._rect

    @property
    def radius(self) -> float:
        """Radius of the minimum enclosing circle."""
        if self._radius is None:
            self._radius = float(cv2.minEnclosingCircle(self.contour)[1])
        return self._radius

    @property
    def bbox(self) -> tuple[int, int, int, int]:
        """``cv2.boundingRect``: x, y, width, height."""
        if self._bbox is None:
            x, y, w, h = cv2.boundingRect(self.contour)
            self._bbox = int(x), int(y), int(w), int(h)
        return self._bbox


def median(values: Sequence[float]) -> float:
    """``np.median`` of a short list (the same value: middle one, or mean of the two), faster."""
    return float(statistics.median(values))


@dataclass
class ContrastMap:
    """Foreground regions of an image by local colour contrast (a downscaled copy)."""

    scale: float
    distance: np.ndarray
    """Lab distance of each pixel of the copy from its local mean."""
    mask: np.ndarray
    """Pixels contrasting enough (0/255), opened and with holes filled."""
    level: float
    """The distance cut actually used."""
    closed: np.ndarray | None = field(default=None, repr=False)
    """The cut map closed, before opening and filling (the opened looks start from it)."""
    contours: Sequence[np.ndarray] | None = field(default=None, repr=False)
    """Outer contours of ``mask`` when already found (see :func:`filled`)."""
    covers: dict[tuple[tuple[Any, ...], ...], np.ndarray] = field(default_factory=dict, repr=False)
    """:func:`covered_mask` by the elements' geometry, shared with the maps derived from this."""
    floor: float | None = None
    """The contrast an object needs on a plain table (``min_contrast``, at least
    ``PLAIN_CONTRAST``) when the map is an image's own, not a derived look."""
    tables: dict[tuple[tuple[Any, ...], ...], float] = field(default_factory=dict, repr=False)
    """:func:`table_level` by the elements' geometry (several looks of one map ask)."""
    seen: str = "contrasting with its surroundings"
    """How the map's regions differ from the table, for their reasons."""

    @cached_property
    def outlines(self) -> list[Outline]:
        """Outer contours of ``mask`` (found once; ``mask`` is never changed in place)."""
        contours = self.contours
        if contours is None:
            contours, _ = cv2.findContours(self.mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return [Outline(c) for c in contours]


def above(values: np.ndarray, level: float) -> np.ndarray:
    """255 where ``values > level``, else 0: numpy's ``(values > level) * 255`` in one pass.

    Like numpy, OpenCV compares a float32 map with ``level`` taken as float32.
    """
    return np.asarray(cv2.compare(values, level, cv2.CMP_GT))  # type: ignore[call-overload]


def filled(mask: np.ndarray) -> tuple[np.ndarray, Sequence[np.ndarray]]:
    """``mask`` with its holes filled, and its outer contours.

    They are the filled mask's outer contours too (filling redraws each outer boundary
    pixel for pixel), so the looks need not find them again.
    """
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, contours, -1, 255, -1)
    return out, contours


def work_copy(image_bgr: np.ndarray, *, coarse: bool = False) -> np.ndarray:
    """The image about ``WORK_SIDE_PX`` long, in Lab, lightly blurred: what maps are cut from.

    ``coarse`` shrinks by halving (:func:`halved`). A proposer that cuts several maps of one
    image (other windows, other levels) makes this once and hands it to each.
    """
    h, w = image_bgr.shape[:2]
    step = max(1, int(np.ceil(max(h, w) / WORK_SIDE_PX)))
    small = halved(image_bgr, step) if coarse else shrink(image_bgr, step)
    # a light blur averages fine texture (wood grain, weave) into its mean colour
    return np.asarray(
        cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2LAB), (0, 0), TEXTURE_SIGMA_PX)
    )


def contrast_map(
    image_bgr: np.ndarray,
    window_px: float,
    min_contrast: float = 28.0,
    spread_factor: float = SPREAD_FACTOR,
    *,
    coarse: bool = False,
    work: np.ndarray | None = None,
) -> ContrastMap:
    """Pixels that differ from their surroundings (``window_px`` wide, full-image pixels).

    ``coarse``: see :func:`work_copy`, and the wide window's median is taken on a smaller
    copy (:func:`median_background`). ``work``: the image's :func:`work_copy`, if made.
    """
    lab8 = work_copy(image_bgr, coarse=coarse) if work is None else work
    scale = lab8.shape[1] / image_bgr.shape[1]
    background = median_background(lab8, window_px * scale, coarse=coarse)
    distance = lab_distance(lab8, background)
    distance = cv2.blur(distance, (3, 3))
    level = max(float(min_contrast), spread_factor * sample_median(distance[::3, ::3]))
    raw = above(distance, level)
    closed = cv2.morphologyEx(raw, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    mask, contours = filled(
        np.asarray(cv2.morphologyEx(closed, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    )
    return ContrastMap(
        scale,
        distance,
        mask,
        level,
        closed,
        contours,
        floor=max(float(min_contrast), PLAIN_CONTRAST),
    )


PALETTE_COLOURS = 8
"""Colours the work copy is clustered into (k-means) to find the table's own."""
PALETTE_SAMPLES = 1000
"""Pixels the clustering reads, drawn at random with a fixed seed (a stride would beat
against a pattern's period); a table colour's 5 % is 50 of them."""
PALETTE_TABLE_SHARE = 0.05
"""Least share of the image a colour covers to be the table's: a die or a coin covers
less, a gingham's or a wood grain's shades each more."""
PALETTE_DISTANCE = 25.0
"""Lab distance (8-bit units) from every table colour at which a pixel is of a colour
the table does not have."""


def palette_map(work: np.ndarray, scale: float) -> ContrastMap:
    """Pixels of a colour the table does not have, on the ``work`` copy (``scale`` of it).

    On a patterned table (gingham, polka dots) the local mean lies between the table's
    colours, so an object of a third colour may be no farther from it than the table's own
    squares are, and the contrast map's cut, raised by the pattern, leaves it unlit (blind
    207477: a teal die on green gingham, missed with nothing said). Here the table is the
    colours that cover ``PALETTE_TABLE_SHARE`` of the image or more, and a pixel counts by
    its distance from the nearest of them.
    """
    pixels = work.reshape(-1, 3)
    if len(pixels) > PALETTE_SAMPLES:
        pixels = pixels[np.random.default_rng(0).choice(len(pixels), PALETTE_SAMPLES, False)]
    pixels = pixels.astype(np.float32)  # k-means reads floats: converted once sampled
    k = min(PALETTE_COLOURS, len(pixels))
    criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
    cv2.setRNGSeed(0)  # same image, same palette
    _, labels, centres = cv2.kmeans(
        pixels, k, None, criteria, 1,
        cv2.KMEANS_PP_CENTERS,  # type: ignore[call-overload, unused-ignore]
    )  # fmt: skip
    shares = np.bincount(labels.ravel(), minlength=k) / len(pixels)
    table = [c for c, share in zip(centres, shares, strict=True) if share >= PALETTE_TABLE_SHARE]
    distance = np.min([colour_distance(work, c) for c in table], axis=0)
    raw = above(distance, PALETTE_DISTANCE)
    mask, contours = filled(
        np.asarray(cv2.morphologyEx(raw, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    )
    seen = "of a colour the table does not have"
    return ContrastMap(scale, distance, mask, PALETTE_DISTANCE, contours=contours, seen=seen)


def opened(cmap: ContrastMap, size_px: float) -> ContrastMap:
    """The map with thin structures (mortar, grain, a shadow's tail) opened away.

    An object touching a contrasting line merges with it into one region that is not
    compact, so the plain map never flags it; an elliptical opening ``size_px`` wide
    (full-image pixels; about an object's radius) cuts such bridges and keeps blobs.
    """
    k = round(size_px * cmap.scale)
    if k < 3:
        return cmap
    # open the raw map, then fill: lines closing a loop must not leave a filled blob behind
    closed = cmap.closed
    if closed is None:
        raw = above(cmap.distance, cmap.level)
        closed = cv2.morphologyEx(raw, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k | 1, k | 1))
    mask, contours = filled(np.asarray(cv2.morphologyEx(closed, cv2.MORPH_OPEN, kernel)))
    return ContrastMap(cmap.scale, cmap.distance, mask, cmap.level, closed, contours, cmap.covers)


CLEARED_MARGIN_PX = 2
"""How much wider than an element's box (work-copy pixels) :func:`without_elements` clears."""


def without_elements(
    cmap: ContrastMap, elements: list[Element], margin_px: int = CLEARED_MARGIN_PX
) -> ContrastMap:
    """The map with every element's box (``margin_px`` wider, work-copy pixels) cleared.

    What remains of a region an element only partly covers (a second die touching the
    first, a coin beside another) becomes a region of its own, judged like any other.
    """
    s = cmap.scale
    mask = cmap.mask.copy()
    for e in elements:
        x1, y1, x2, y2 = bounds(e)
        cv2.rectangle(
            mask,
            (int(x1 * s) - margin_px, int(y1 * s) - margin_px),
            (int(np.ceil(x2 * s)) + margin_px, int(np.ceil(y2 * s)) + margin_px),
            0,
            -1,
        )
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    return ContrastMap(cmap.scale, cmap.distance, mask, cmap.level, cmap.closed, covers=cmap.covers)


def cleared_residue(
    cmap: ContrastMap, elements: list[Element], sizes: Sizes, what: str, **filters: Any
) -> list[Element]:
    """Regions left once the elements' boxes are cleared, judged as any region is.

    :func:`without_elements` clears the boxes, :func:`unexplained_regions` (with
    ``filters``) judges what is left; no elements, no look. An object touching one found
    (or its shadow) is one region with it, mostly covered, so the plain look passes it
    by; what is left of the region is that object.
    """
    if not elements:
        return []
    found, _ = unexplained_regions(without_elements(cmap, elements), [], sizes, what, **filters)
    return found


def merge_found(first: list[Element], second: list[Element]) -> list[Element]:
    """Unexplained regions of two looks, each place once (boxes overlapping are one)."""
    kept = list(first)
    for e in second:
        bx = bounds(e)
        if not any(_overlap(bx, bounds(k)) for k in kept):
            kept.append(e)
    return kept


def beside_cleared(
    regions: list[Element], elements: list[Element], cleared: ContrastMap
) -> list[Element]:
    """The regions of a :func:`without_elements` map that its clearing may have notched.

    Their boxes come within the cleared margin (a work-copy pixel more) of an element's box.
    """
    reach = (CLEARED_MARGIN_PX + 1) / cleared.scale
    near = [
        (x1 - reach, y1 - reach, x2 + reach, y2 + reach) for x1, y1, x2, y2 in map(bounds, elements)
    ]
    return [r for r in regions if any(_overlap(bounds(r), b) for b in near)]


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return w > 0 and h > 0


CHANNEL_SUM = np.ones((1, 3), np.float32)
"""``cv2.transform``'s matrix that sums a pixel's three channels."""


def lab_distance(
    lab8: np.ndarray,
    background8: np.ndarray | tuple[float, float, float, float],
    *,
    squared: bool = False,
) -> np.ndarray:
    """Per-pixel Euclidean distance between two 8-bit Lab images, as float32.

    Whole-number differences: squared from their absolute value in 8 bits, every step is
    exact, so this is the distance of the images taken as floats, in fewer passes.
    ``background8`` may be one whole-number colour, ``(L, a, b, 0)``. ``squared``: the
    squared distance (whole numbers; a cut ``d`` on the distance is ``d * d`` on it).
    """
    diff = cv2.absdiff(lab8, background8)  # type: ignore[arg-type]  # OpenCV takes a Scalar
    summed = cv2.transform(cv2.multiply(diff, diff, dtype=cv2.CV_32F), CHANNEL_SUM)
    return np.asarray(summed if squared else cv2.sqrt(summed)).reshape(lab8.shape[:2])


def colour_distance(lab: np.ndarray, colour: np.ndarray) -> np.ndarray:
    """Per-pixel Euclidean distance of a Lab image (or crop) from one colour, as float32.

    OpenCV sums the channels: numpy's ``sum(axis=2)`` walks the pixels one by one, 10x slower.
    """
    diff = np.asarray(lab, np.float32) - np.asarray(colour, np.float32)
    summed = cv2.transform(cv2.multiply(diff, diff), CHANNEL_SUM)
    return np.asarray(cv2.sqrt(summed)).reshape(lab.shape[:2])


def sample_median(values: np.ndarray) -> float:
    """``np.median`` of an array (the mean of its middle one or two), by one partition."""
    flat = values.ravel()
    half = flat.size // 2
    middle = slice(half, half + 1) if flat.size % 2 else slice(half - 1, half + 1)
    return float(np.partition(flat, (middle.start, middle.stop - 1))[middle].mean())


def pixel_median(pixels: np.ndarray) -> np.ndarray:
    """``np.median(pixels, axis=0)`` of 8-bit pixels ``(n, channels)``, n > 0: the same values.

    One partition per channel of the transposed copy: numpy's walks the strided column, 2.5x
    slower on a crop's few thousand pixels.
    """
    rows = np.array(pixels.T, order="C")  # a copy of its own, partitioned in place
    half = rows.shape[1] // 2
    if rows.shape[1] % 2:
        rows.partition(half, axis=1)
        return np.asarray(rows[:, half], dtype=np.float64)
    rows.partition((half - 1, half), axis=1)
    return np.asarray((rows[:, half - 1].astype(np.float64) + rows[:, half]) / 2)


def masked_medians(
    image: np.ndarray, channels: Sequence[int], mask: np.ndarray, count: int
) -> list[float]:
    """``np.median`` of each channel of an 8-bit image where ``mask`` (``count`` > 0 pixels) is set.

    Read off the running count of each channel's 256-bin histogram (its middle one or two
    values), the same values: taking the masked pixels out first (a boolean index) costs
    numpy 3x more on a coin's crop. Array methods, not ``np.cumsum``: on 256 bins numpy's
    dispatch costs more than the sum.
    """
    if count >= 1 << 24:  # OpenCV's float32 bins count exactly up to here
        return [float(np.median(image[..., c][mask > 0])) for c in channels]
    middle = ((count - 1) // 2, count // 2)
    medians = []
    for c in channels:
        running = cv2.calcHist([image], [c], mask, [256], (0, 256)).cumsum()
        low, high = running.searchsorted(middle, side="right")
        medians.append((float(low) + float(high)) / 2)
    return medians


def local_background(lab8: np.ndarray, window_px: float) -> np.ndarray:
    """:func:`median_background` as float32 (for callers that adjust it, as contours does)."""
    return np.asarray(median_background(lab8, window_px), dtype=np.float32)


def shrink(image: np.ndarray, step: int) -> np.ndarray:
    """``image`` area-averaged to ``1 / step`` of each side, each pixel one ``step``-square block.

    Whole blocks only (the last ``step - 1`` rows and columns at most are left out): on
    them OpenCV's area resize takes its integer path, 3-4x quicker than the fractional
    one a side not divisible by ``step`` would need (512 px by 3: 1.1 ms against 0.3), and
    copy pixel ``i`` is image pixels ``i * step`` to ``(i + 1) * step`` exactly (a caller
    taking the scale as the widths' ratio is off by under a copy pixel at the far side).
    A side shorter than ``step`` is averaged whole into one pixel.
    """
    if step <= 1:
        return image
    h, w = image.shape[:2]
    size = (max(1, w // step), max(1, h // step))
    rows, cols = h // step * step or h, w // step * step or w
    whole = image[:rows, :cols]
    return np.asarray(cv2.resize(whole, size, interpolation=cv2.INTER_AREA))


def halved(image: np.ndarray, step: int) -> np.ndarray:
    """:func:`shrink` for a power-of-two ``step``, by exact halvings (3x quicker, same means).

    Bilinear resizing to exactly half a side averages each 2x2 block, so ``log2(step)``
    halvings average each ``step``-square block as one area resize does, rounding to 8 bits
    at each halving (values differ by at most 1). Other steps use :func:`shrink`.
    """
    if step <= 1 or step & (step - 1):
        return shrink(image, step)
    h, w = image.shape[:2]
    out = image[: h // step * step, : w // step * step]  # whole blocks, as shrink reads
    while step > 1 and min(out.shape[:2]) >= 2:
        size = (out.shape[1] // 2, out.shape[0] // 2)
        out = np.asarray(cv2.resize(out, size, interpolation=cv2.INTER_LINEAR))
        step //= 2
    return out


def median_background(lab8: np.ndarray, window_px: float, *, coarse: bool = False) -> np.ndarray:
    """Median colour of a ``window_px`` neighbourhood (objects under half of it vanish).

    Computed on a copy about ``BACKGROUND_SIDE_PX`` long, so the median filter stays cheap,
    then brought back to the input's size (8 bits, as the input). ``coarse`` takes a window
    over ``COARSE_MEDIAN_PX`` wide there on a copy half as long (OpenCV's median costs most
    for wide windows, and their median barely moves).
    """
    sh, sw = lab8.shape[:2]
    step = max(1, int(np.ceil(max(sh, sw) / BACKGROUND_SIDE_PX)))
    if coarse and window_px / step > COARSE_MEDIAN_PX:
        step *= 2
    tiny = shrink(lab8, step)
    f = tiny.shape[1] / sw
    th, tw = tiny.shape[:2]
    k = int(min(max(window_px * f, 3), max(3, min(th, tw) - 1))) | 1  # np.clip, on floats
    med = cv2.medianBlur(tiny, k) if min(th, tw) > k else tiny
    return np.asarray(cv2.resize(med, (sw, sh), interpolation=cv2.INTER_LINEAR))


def sizes_from(
    elements: list[Element],
    hint_min_area_px: float,
    hint_max_area_px: float,
    low_share: float = 0.45,
) -> Sizes:
    """Comparable sizes: ``low_share`` of the smallest to 2.5x the largest found, else hints."""
    areas = [
        (x2 - x1) * (y2 - y1)
        for x1, y1, x2, y2 in (bounds(e) for e in elements)
        if x2 > x1 and y2 > y1
    ]
    if areas:
        low, high = float(min(areas)), float(max(areas))
        return Sizes(low_share * low, 2.5 * high, 3.0 * float(np.sqrt(high)))
    side = float(np.sqrt(max(hint_min_area_px, 1.0)))
    return Sizes(hint_min_area_px, hint_max_area_px, 6.0 * side)


def covered_mask(cmap: ContrastMap, elements: list[Element]) -> np.ndarray:
    """1 inside every element's box (a pixel wider, work-copy pixels), 0 elsewhere (read only).

    Drawn once per set of elements: every look of a map and of the maps derived from it
    asks.
    """
    key = _geometry_key(elements)
    covered = cmap.covers.get(key)
    if covered is not None:
        return covered
    s = cmap.scale
    covered = np.zeros(cmap.mask.shape, np.uint8)
    cmap.covers[key] = covered
    for x1, y1, x2, y2 in (bounds(e) for e in elements):
        cv2.rectangle(
            covered,
            (int(x1 * s) - 1, int(y1 * s) - 1),
            (int(np.ceil(x2 * s)) + 1, int(np.ceil(y2 * s)) + 1),
            1,
            -1,
        )
    return covered


def table_level(cmap: ContrastMap, elements: list[Element]) -> float:
    """The cut the map's rule would take on the table's own pattern alone.

    That is ``SPREAD_FACTOR`` x the lower quartile of the contrast where nothing was found
    or lit.
    A pattern (stripes, gingham) contrasts everywhere, so even its quietest quarter is loud;
    grain or shading between bright coins leaves quiet stretches a faint object shows on.
    """
    key = _geometry_key(elements)
    level = cmap.tables.get(key)
    if level is None:
        rest = cmap.distance[(covered_mask(cmap, elements) == 0) & (cmap.mask == 0)]
        level = SPREAD_FACTOR * lower_quartile(rest) if rest.size else 0.0
        cmap.tables[key] = level
    return level


def _geometry_key(elements: list[Element]) -> tuple[tuple[Any, ...], ...]:
    """The elements' geometry as stored: a key cheaper than their bounds, and as exact."""
    return tuple(tuple(e.xyxy_px or ()) + tuple(map(tuple, e.points_px or ())) for e in elements)


def lower_quartile(values: np.ndarray) -> float:
    """``np.percentile(values, 25)`` of a non-empty float32 array (the same value), quicker.

    numpy sorts its way there; one partition at the two neighbours is 4x quicker.
    """
    flat = values.ravel()
    pos = 0.25 * (flat.size - 1)
    lo = int(pos)
    hi = min(lo + 1, flat.size - 1)
    part = np.partition(flat, (lo, hi))
    x, y, t = part[lo], part[hi], pos - lo
    # numpy's interpolation, step for step (the nearer end plus a share of the gap)
    return float(x + (y - x) * np.float32(t) if t < 0.5 else y - (y - x) * np.float32(1 - t))


def unexplained_regions(
    cmap: ContrastMap,
    elements: list[Element],
    sizes: Sizes,
    what: str,
    min_solidity: float = 0.8,
    max_aspect: float = 2.6,
    covered_share: float = 0.3,
    min_roundness: float = 0.0,
    min_rect_fill: float = 0.0,
    square_roundness: float = 0.0,
) -> tuple[list[Element], list[str]]:
    """Compact, contrasting regions of a comparable size that no element's box covers.

    ``min_roundness`` (area over that of the enclosing circle: 1 for a disc, 0.64 for a
    square) lets round-object proposers ignore cards and books on the table;
    ``min_rect_fill`` (area over the minimum-area rectangle: 1 for a square, 0.79 for a
    disc) lets square-object proposers ignore tokens and coins. At the work copy's
    resolution a small tilted square's corners blur, so its rectangle fill drops towards
    a disc's; ``square_roundness`` > 0 also accepts a region whose roundness is at most
    that (a square is 0.64-0.78 there, a disc 0.82 or more) when its fill is at least
    ``RELAXED_RECT_FILL`` and its aspect at most 1.2 (an ellipse is not round either).
    """
    s = cmap.scale
    covered: np.ndarray | None = None  # drawn once a region needs it
    found: list[Element] = []
    compact = 0
    for outline in cmap.outlines:
        area = outline.area / (s * s)
        if area < sizes.min_area_px or area > sizes.max_area_px:
            continue
        hull = outline.hull_area / (s * s)
        rw, rh = outline.rect_wh
        aspect = max(rw, rh) / max(min(rw, rh), 1e-6)
        if hull <= 0 or area / hull < min_solidity or aspect > max_aspect:
            continue
        roundness = area * s * s / (np.pi * max(outline.radius, 1e-6) ** 2)
        fill = area * s * s / max(rw * rh, 1e-6)
        # an ellipse fills its rectangle like a disc and is not round either: only a region
        # about as wide as long may be taken for a square by its roundness
        squarish = square_roundness > 0 and fill >= RELAXED_RECT_FILL and aspect <= 1.2
        if fill < min_rect_fill and not (squarish and roundness <= square_roundness):
            continue
        if roundness < min_roundness:
            continue
        compact += 1
        x, y, bw, bh = outline.bbox
        if covered is None:
            covered = covered_mask(cmap, elements)
        # the share of the region's box that elements cover (a count: np.mean's exact value)
        share = cv2.countNonZero(covered[y : y + bh, x : x + bw]) / (bw * bh) if bw and bh else 1.0
        if share >= covered_share:
            continue
        xyxy = (x / s, y / s, (x + bw) / s, (y + bh) / s)
        found.append(
            box(
                xyxy,
                reason=f"a compact region of {area:.0f} px {cmap.seen} that no {what} covers",
            )
        )
    problems: list[str] = []
    if cmap.floor and (table := table_level(cmap, elements)) > BUSY_FACTOR * cmap.floor:
        problems.append(
            f"the table's own pattern contrasts by {table:.0f} (an object needs "
            f"{cmap.floor:.0f} on a plain one): an object contrasting less would not show"
        )
    lit = cv2.countNonZero(cmap.mask) / cmap.mask.size
    if lit > 0.5:
        problems.append(
            f"{lit:.0%} of the image contrasts with its surroundings: texture or clutter, "
            "objects cannot be told apart"
        )
    if compact > 60:
        problems.append(f"{compact} object-like regions: too cluttered to count")
    return found, problems
