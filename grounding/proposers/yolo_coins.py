"""``yolo.coins``: the shipped coin detector finds the coins; a residue check looks for more.

The network (``grounding/models/coins_yolov8n.onnx``, trained by this project on
in-style and out-of-style synthetic coin scenes from seeds no benchmark reports:
see the model card) proposes coin boxes. Each box becomes a coin with
``radius_px`` half the mean of the box's width and height (a coin seen at an
angle is an ellipse; its box still bounds it). Two boxes overlapping by more than
``dedupe_iou`` keep the more confident one; a box around two or more others, a
box nested in another and a box straddling two surer ones are dropped
(:func:`without_nested`). A retry keeps the confidence cut: at a lower cut false
coins are accepted.

Self-check: a coin the network missed must withhold the question. Four checks
look for one: boxes the network scored below ``conf`` but at least
``doubt_conf`` that no accepted box covers (it half believed they are coins; not one
over bare table, unlit on the contrast map and with no rim: :func:`table_hunches`; nor
one over a card, lit on the map: :func:`card_hunch`; nor one over a stick, its ink all
thin and no rim beside it: :func:`._discs.is_stick`),
the residue check shared by the CV proposers (compact, roundish regions
contrasting with their surroundings, of a coin's size, that no box covers,
then once more with every box erased, for a missed coin touching a found one),
round regions of a found coin's colour, lit on the contrast map, that no coin
covers (:func:`same_colour_coins`: a coin one region with its neighbours and a card),
and circles Hough finds of about the found coins' size with a rim on an edge nearly all
round that no box overlaps (:data:`._discs.COIN_SIZED`: a silver coin on a pale sweep;
with no box, circles of any size: "no coins" is a claim); all are ``unexplained``; a box
much smaller or larger than the others, far from square, or overlapping another
(``TWICE_IOU``), is a doubt too (``problems``), since one coin seen as two, or two
touching coins seen as one, would change the count; so is a box scored under
``bare_conf`` over which the contrast map sees nothing (:func:`bare_boxes`: the
corner of a dark card on the table), and a box scored under ``bare_conf`` whose
inscribed circle barely runs on an edge (:func:`rimless_boxes`: a card's corner, lit on
the contrast map, shows two straight edges, not a rim), and a box of any score with no
edge on its rim nor inside it (a blur of light, a reflection), and a box whose object is a
rectangle, hollow, of a hue no coin metal has (``metal_hues_deg``: a paper clip), or a
faint copy of the coin just above it (a reflection on a glossy table: :mod:`._discs`),
and a contrast map whose cut a loud table raised so far that it shows under half the
coins found (:func:`._peers.unseen_elements`: a missed coin would not show either).
With no coin found, the residue check looks again at wider windows (:func:`wider_looks`).
A region the contrast looks flag whose object is a flat-coloured rectangle (the image's
edge may cut it, a found coin may lie over it) is a card, not a coin missed
(:func:`._discs.without_cards`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy, frame_gap_px
from groundeval.grounding._geometry import xyxy_iou as _iou
from groundeval.grounding._protocol import register_proposer
from groundeval.grounding.proposers._cv import Review, box
from groundeval.grounding.proposers._discs import (
    BLUR_OF_LIGHT,
    COIN_SIZED,
    EDGELESS_INSIDE,
    ERASE_REACH,
    HOUGH_VOTE,
    METAL_HUES_DEG,
    MIN_RIM_SUPPORT,
    SIZE_SPREAD,
    MetalHues,
    blur_of_light,
    box_circle,
    colour_edges,
    half_edges,
    inner_edge_shares,
    is_card,
    is_stick,
    loose_circles,
    metal_span,
    rim_shares,
    unlike_discs,
    without_cards,
)
from groundeval.grounding.proposers._peers import unseen_elements, with_peer_checks
from groundeval.grounding.proposers._residue import (
    ContrastMap,
    Sizes,
    contrast_map,
    halved,
    lab_distance,
    merge_found,
    pixel_median,
    sizes_from,
    unexplained_regions,
    work_copy,
)
from groundeval.grounding.proposers.yolo import YoloProposer, doubtful_boxes, inside_share
from groundeval.state import Element, GroundSpec

__all__ = ["COINS_WEIGHTS", "YoloCoinsProposer"]

COINS_WEIGHTS = "coins_yolov8n.onnx"
"""The shipped detector, found in ``grounding/models/``."""


@register_proposer("yolo.coins")
class YoloCoinsProposer(YoloProposer):
    """The shipped coin detector, with a radius per coin and a residue self-check."""

    name: ClassVar[str] = "yolo.coins"
    defaults: ClassVar[dict[str, Any]] = {
        **YoloProposer.defaults,
        "weights": COINS_WEIGHTS,
        "conf": 0.5,
        "retry_conf": 0.5,  # a retry at a lower cut accepts false coins (tuning seeds)
        "doubt_conf": 0.1,
        "bare_conf": 0.75,
        "doubt_inside_share": 0.6,
        "nested_share": 0.8,
        "straddle_share": 0.65,
        "dedupe_iou": 0.5,
        "min_side_px": 10.0,
        "min_contrast": 28.0,
        "residue_low_share": 0.45,
        "residue_high_factor": 2.5,
        "residue_min_roundness": 0.5,
        # a coin the table nearly matches is lit only in part beside a found one (blind
        # 207432: a copper coin on red, 0.49 of the smallest box); no coin tuning image
        # decided holds a region of 0.3-0.5 there
        "erased_min_share": 0.4,
        "erased_max_factor": 1.2,
        "erased_min_roundness": 0.6,
        "max_box_aspect": 1.8,
        "max_clear_box_aspect": 1.3,
        "size_spread": SIZE_SPREAD,
        "metal_hues_deg": list(METAL_HUES_DEG),
    }
    param_types: ClassVar[dict[str, Any]] = {
        **YoloProposer.param_types,
        "metal_hues_deg": MetalHues,
    }
    """``metal_hues_deg``: the Lab hue span (low, high) of coin metals; ``None`` turns it off."""

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Coin boxes, the more confident of two overlapping boxes kept, each with a radius."""
        found: list[Element] = []
        detected = super().detect(image_bgr, spec, params)
        limit = float(params["dedupe_iou"])
        for element in sorted(detected, key=lambda e: -float(e.fields["confidence"])):
            xyxy = element_xyxy(element)
            if any(_iou(xyxy, element_xyxy(f)) > limit for f in found):
                continue
            x1, y1, x2, y2 = xyxy
            radius = round(((x2 - x1) + (y2 - y1)) / 4, 2)
            found.append(box(xyxy, **element.fields, radius_px=radius))
        found = without_nested(
            found, float(params["nested_share"]), float(params["straddle_share"])
        )
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0.0, 0.0))
        return found

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection at ``conf``, then the self-check, with doubtful boxes as unexplained.

        The network runs once at the lower of ``conf`` and ``doubt_conf``; boxes scored
        below ``conf`` are not coins but doubts, unless mostly (``doubt_inside_share``)
        inside an accepted box (a part of a coin already counted).
        """
        conf = float(params["conf"])
        low = min(conf, float(params["doubt_conf"]))
        everything = self.detect(image_bgr, spec, {**params, "conf": low})
        sure = [e for e in everything if float(e.fields["confidence"]) >= conf]
        inside = float(params["doubt_inside_share"])
        doubts = doubtful_boxes(everything, conf, "coin", sure, inside)
        return sure, self.review(image_bgr, sure, params, doubts)

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Contrasting coin-sized round regions no box covers; boxes unlike a coin."""
        return self.review(image_bgr, elements, params, [])

    def review(
        self,
        image_bgr: np.ndarray,
        elements: list[Element],
        params: dict[str, Any],
        doubts: list[Element],
    ) -> Review:
        """:meth:`self_check`, with the doubtful boxes (:func:`doubtful_boxes`) that show a coin.

        A doubtful box is the network's half belief in one more coin; one over bare table
        (:func:`table_hunches`) is left out.
        """
        h, w = image_bgr.shape[:2]
        min_area = 0.6 * float(params["min_side_px"]) ** 2
        sizes = sizes_from(
            elements, min_area, (0.5 * min(h, w)) ** 2, float(params["residue_low_share"])
        )
        areas = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in map(element_xyxy, elements)]
        if max(areas, default=0.0) > 0:
            sizes = replace(sizes, max_area_px=float(params["residue_high_factor"]) * max(areas))
        work = work_copy(image_bgr)
        cmap = contrast_map(image_bgr, sizes.window_px, params["min_contrast"], work=work)
        unexplained, problems = unexplained_regions(
            cmap,
            elements,
            sizes,
            "coin",
            min_roundness=float(params["residue_min_roundness"]),
        )
        if not elements:  # "no coins" is a claim: look for coins of any size the hints allow
            unexplained, problems = wider_looks(
                image_bgr, sizes, params, unexplained, problems, work=work
            )
        unexplained += outside_boxes(cmap.mask, cmap.scale, elements, unexplained, sizes, params)
        # a card or a note beside the coins is a region no coin covers, and no coin either
        unexplained = without_cards(image_bgr, unexplained, elements)
        unexplained = merge_found(unexplained, same_colour_coins(image_bgr, cmap, elements))
        problems += box_doubts(elements, params, (h, w))
        problems += bare_boxes(cmap, elements, float(params["bare_conf"]))
        # a silver coin on a pale sweep, unlit on the map, still has a rim; so has a gold
        # coin on a yellow cloth when nothing was found (blind 206269: "no coins", wrong)
        half, edges, scale = half_edges(image_bgr, float(HOUGH_VOTE["param1"]))
        rims = loose_circles(half, elements, HOUGH_VOTE, edges, scale, COIN_SIZED)
        unexplained = merge_found(unexplained, rims)
        if elements:
            problems += rimless_boxes(image_bgr, elements, float(params["bare_conf"]), edges)
        problems += unlike_discs(image_bgr, elements, "coin", metal_span(params))
        problems += unseen_elements(cmap, elements, "coin")
        review = Review(unexplained, problems)
        with_peer_checks(review, cmap, elements, "coin", faint=False)
        hunches = table_hunches(image_bgr, cmap, doubts)
        review.unexplained += [  # last, as they were
            d
            for d in doubts
            if d not in hunches
            and not card_hunch(image_bgr, cmap, d, elements)
            and not is_stick(image_bgr, element_xyxy(d))
        ]
        return review


def outside_boxes(
    mask: np.ndarray,
    scale: float,
    elements: list[Element],
    known: list[Element],
    sizes: Sizes,
    params: dict[str, Any],
) -> list[Element]:
    """Compact, coin-sized parts of the contrast mask left once every box is erased.

    A missed coin touching a found one merges with it in the mask, and the merged
    region is mostly covered by the found coin's box; erased (each box's coin as the
    ellipse of ``ERASE_REACH``), the missed coin remains.
    """
    left = mask.copy()
    for e in elements:
        x1, y1, x2, y2 = element_xyxy(e)
        centre = (round((x1 + x2) / 2 * scale), round((y1 + y2) / 2 * scale))
        half_w, half_h = (math.ceil(side / 2 * scale * ERASE_REACH) for side in (x2 - x1, y2 - y1))
        cv2.ellipse(left, centre, (half_w, half_h), 0, 0, 360, 0, -1)
    min_area = (
        float(params["erased_min_share"]) * sizes.min_area_px / float(params["residue_low_share"])
    )
    areas = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in map(element_xyxy, elements)]
    max_area = float(params["erased_max_factor"]) * max(areas, default=sizes.max_area_px)
    contours, _ = cv2.findContours(left, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found: list[Element] = []
    for contour in contours:
        area = float(cv2.contourArea(contour)) / (scale * scale)
        if area < min_area or area > max_area:
            continue
        _, radius = cv2.minEnclosingCircle(contour)
        if area * scale * scale < float(params["erased_min_roundness"]) * np.pi * radius**2:
            continue
        hull = float(cv2.contourArea(cv2.convexHull(contour))) / (scale * scale)
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        if hull <= 0 or area / hull < 0.8 or max(rw, rh) > 2.0 * max(min(rw, rh), 1e-6):
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        xyxy = (x / scale, y / scale, (x + bw) / scale, (y + bh) / scale)
        if inside_share(xyxy, known) > 0.3:
            continue
        why = f"a compact, contrasting region of {area:.0f} px outside every coin box"
        found.append(box(xyxy, reason=why))
    return found


COIN_COLOUR_DISTANCE = 30.0
"""Lab distance (8-bit units) up to which a pixel has a found coin's colour."""
COLOUR_LOW_SHARE = 0.2
"""Least area of a region of a coin's colour, as a share of the smallest coin box (a coin's
face, its darker rim aside, fills half its box; a smaller coin, partly hidden, less)."""
COLOUR_SIDE_PX = 320
"""Most long side of the copy the colour look reads, the image shrunk by a whole step (a
small coin keeps its shape there; a 512 px image is read at 256)."""
COLOUR_LIT = 0.5
"""Least share of such a region's box lit on the contrast map (tuning: coins missed 0.98
and more, patches of a table of a coin's colour 0.06 and less)."""


def _lit_box_share(cmap: ContrastMap, xyxy: tuple[float, float, float, float]) -> float:
    """Share of a box (image pixels) lit on the contrast map."""
    s = cmap.scale
    x1, y1, x2, y2 = (int(v * s) for v in xyxy)
    lit = cmap.mask[y1 : max(y2, y1 + 1), x1 : max(x2, x1 + 1)]
    return float(np.count_nonzero(lit) / lit.size) if lit.size else 0.0


def same_colour_coins(
    image_bgr: np.ndarray, cmap: ContrastMap, elements: list[Element]
) -> list[Element]:
    """Coin-sized, round regions of a found coin's colour that no coin covers (coins missed).

    A coin the network missed beside found ones and a dark card is one region with them on
    the contrast map, so the residue and the boxes-erased looks pass it by; its metal is
    the colour of a coin found (each found coin's inner disc gives a colour). Found coins
    are cleared as the discs in their boxes: a box's corners would cut a touching coin.
    The region must stand out on the contrast map (``cmap``, ``COLOUR_LIT`` of its box): a
    wooden table may be a brass coin's colour, and there it is the background.
    """
    boxes = [element_xyxy(e) for e in elements]
    if not boxes:
        return []
    h, w = image_bgr.shape[:2]
    copy = halved(image_bgr, math.ceil(max(h, w) / COLOUR_SIDE_PX))
    lab = cv2.cvtColor(copy, cv2.COLOR_BGR2LAB)
    s = lab.shape[1] / w
    areas = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in boxes]
    sizes = Sizes(COLOUR_LOW_SHARE * min(areas), 2.5 * max(areas), 0.0)
    uncovered = np.full(lab.shape[:2], 255, np.uint8)
    for x1, y1, x2, y2 in boxes:
        centre = (round((x1 + x2) / 2 * s), round((y1 + y2) / 2 * s))
        axes = (round((x2 - x1) / 2 * s) + 1, round((y2 - y1) / 2 * s) + 1)
        cv2.ellipse(uncovered, centre, axes, 0, 0, 360, 0, -1)
    colours: list[np.ndarray] = []
    found: list[Element] = []
    for x1, y1, x2, y2 in boxes:
        cx, cy, r = (x1 + x2) / 2 * s, (y1 + y2) / 2 * s, (x2 - x1 + y2 - y1) / 8 * s
        inner = lab[max(0, int(cy - r)) : int(cy + r) + 1, max(0, int(cx - r)) : int(cx + r) + 1]
        if inner.size == 0:
            continue
        colour = np.rint(pixel_median(inner.reshape(-1, 3)))
        if any(np.linalg.norm(colour - c) < COIN_COLOUR_DISTANCE / 2 for c in colours):
            continue
        colours.append(colour)
        # whole Lab levels: the distance in 8 bits, exact and quick
        dist = lab_distance(lab, (float(colour[0]), float(colour[1]), float(colour[2]), 0.0))
        near = cv2.bitwise_and(cv2.inRange(dist, 0.0, COIN_COLOUR_DISTANCE), uncovered)
        alike = cv2.morphologyEx(near, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        # judged as any residue region is (found coins already cleared as discs)
        look = ContrastMap(s, dist, alike, COIN_COLOUR_DISTANCE)
        regions, _ = unexplained_regions(look, [], sizes, "coin", min_roundness=0.5)
        said = "a coin-sized region of a found coin's colour that no coin covers"
        found += [u.model_copy(update={"reason": said}) for u in regions
                  if _lit_box_share(cmap, element_xyxy(u)) >= COLOUR_LIT]  # fmt: skip
    return found


def without_nested(found: list[Element], share: float, straddle: float) -> list[Element]:
    """Drop boxes that hold others: around two or more coins, or one coin seen twice.

    A box holding two or more others goes (one box per coin is kept); of a box and one
    box nested in it, the less confident goes; a box mostly inside two or more surer boxes
    (``straddle`` of its area: it straddles two touching coins) goes.

    ``found`` is sorted most confident first; nested means at least ``share`` of the inner
    box's area inside the outer one.
    """
    boxes = [element_xyxy(e) for e in found]
    drop: set[int] = set()
    for i, outer in enumerate(boxes):
        inner = [j for j, b in enumerate(boxes) if j != i and _share_inside(b, outer) >= share]
        if len(inner) >= 2:
            drop.add(i)
    for i, outer in enumerate(boxes):
        if i in drop:
            continue
        for j, b in enumerate(boxes):
            if j != i and j not in drop and _share_inside(b, outer) >= share:
                drop.add(max(i, j))  # the later one is the less confident
    for i, b in enumerate(boxes):  # a box straddling two surer coins: part of each
        surer = [found[j] for j in range(i) if j not in drop]
        touched = [e for e in surer if _share_inside(b, element_xyxy(e)) > 0.1]
        if len(touched) >= 2 and inside_share(b, touched) >= straddle:
            drop.add(i)
    return [e for i, e in enumerate(found) if i not in drop]


def _share_inside(
    inner: tuple[float, float, float, float], outer: tuple[float, float, float, float]
) -> float:
    """The share of ``inner``'s area inside ``outer``."""
    w = min(inner[2], outer[2]) - max(inner[0], outer[0])
    h = min(inner[3], outer[3]) - max(inner[1], outer[1])
    area = max((inner[2] - inner[0]) * (inner[3] - inner[1]), 1e-6)
    return max(w, 0.0) * max(h, 0.0) / area


BARE_DISC = 0.4
"""Radius of the disc a box's contrast is read in, as a share of the box's shorter side."""
BARE_LIT = 0.05
"""Under this share of that disc lit on the contrast map, a box shows no object of its own."""


def wider_looks(
    image_bgr: np.ndarray,
    sizes: Sizes,
    params: dict[str, Any],
    unexplained: list[Element],
    problems: list[str],
    *,
    work: np.ndarray,
) -> tuple[list[Element], list[str]]:
    """The residue look again at windows doubling up to half the image's short side.

    With no coin found, the window follows the least coin size (``min_side_px``): a coin
    wider than about a sixth of it is its own surroundings there, and only its rim shows.
    """
    window = 2 * sizes.window_px
    while window <= 0.5 * min(image_bgr.shape[:2]):
        cmap = contrast_map(image_bgr, window, params["min_contrast"], work=work)
        found, doubts = unexplained_regions(
            cmap,
            [],
            replace(sizes, window_px=window),
            "coin",
            min_roundness=float(params["residue_min_roundness"]),
        )
        unexplained = merge_found(unexplained, found)
        problems += [d for d in doubts if d not in problems]
        window *= 2
    return unexplained, problems


def bare_boxes(cmap: ContrastMap, elements: list[Element], sure_conf: float) -> list[str]:
    """Boxes the network scored under ``sure_conf`` over which the contrast map sees nothing.

    Either signal alone may fail: a coin the colour of the table shows little contrast,
    and the network half believes in a dark corner of a card lying on the table. A coin
    box needs one of them strong: a sure score, or an object in the disc inside the box.
    """
    return [
        f"coin #{i} (scored {score:.2f}) shows nothing against the table: "
        "a shadow or a mark, not a coin?"
        for i, e in enumerate(elements, start=1)
        if (score := float(e.fields["confidence"])) < sure_conf and _is_bare(cmap, e)
    ]


def _is_bare(cmap: ContrastMap, element: Element) -> bool:
    """Whether under ``BARE_LIT`` of the disc inside a box is lit on the contrast map."""
    s = cmap.scale
    h, w = cmap.mask.shape
    x1, y1, x2, y2 = element_xyxy(element)
    cx, cy = round((x1 + x2) / 2 * s), round((y1 + y2) / 2 * s)
    radius = max(1, round(BARE_DISC * min(x2 - x1, y2 - y1) * s))
    # the disc is drawn in its own square of the map, not on a map-sized canvas
    left, top = max(cx - radius, 0), max(cy - radius, 0)
    near = cmap.mask[top : min(cy + radius + 1, h), left : min(cx + radius + 1, w)]
    disc = np.zeros_like(near)
    if disc.size:
        cv2.circle(disc, (cx - left, cy - top), radius, 255, -1)
    inside, lit = int(np.count_nonzero(disc)), int(np.count_nonzero(disc & near))
    return lit < BARE_LIT * max(inside, 1)


HUNCH_RIM = 0.3
"""A doubtful box (scored under ``conf``) whose disc the contrast map leaves unlit and whose
circle runs on under this share of edge in colour shows no coin: the network's hunch over a
stick or a card's face. Of 231 doubtful boxes marking a coin no sure box covered (tuning seeds:
probe and blind 0-149 and 100000/200000-200299, out-of-style 600000-600149, in-style 1000-1099)
the least rim was 0.35; such hunches on in-style tables (sticks, a card) were 0.11-0.38."""


def _box_circles(elements: list[Element]) -> np.ndarray:
    """Rows ``(cx, cy, r)`` of the circles boxes hold (:func:`._discs.box_circle`)."""
    return np.array([box_circle(element_xyxy(e)) for e in elements])


def table_hunches(image_bgr: np.ndarray, cmap: ContrastMap, doubts: list[Element]) -> list[Element]:
    """The doubtful boxes that show no coin: unlit on the map and with no rim (``HUNCH_RIM``).

    Both must hold: a coin the colour of the table is unlit but keeps its rim; a coin in
    shadow has little edge but stands out on the map. Edges in colour, made only when a
    box is unlit.
    """
    bare = [d for d in doubts if _is_bare(cmap, d)]
    if not bare:
        return []
    edges = colour_edges(image_bgr, float(HOUGH_VOTE["param1"]))
    scale = edges.shape[1] / image_bgr.shape[1]
    rims = rim_shares(_box_circles(bare), edges, scale)
    return [d for d, rim in zip(bare, rims, strict=True) if rim < HUNCH_RIM]


def card_hunch(
    image_bgr: np.ndarray, cmap: ContrastMap, doubt: Element, elements: list[Element]
) -> bool:
    """Whether a doubtful box marks a card: lit on the contrast map, and a card (``is_card``).

    The network half believes in a card's corner (in-style hard 1006). Unlit, the flat
    rectangle may be the table's own pattern: a gingham square (probe 108431, 108747, where
    such a hunch was all that withheld a wrong count).
    """
    return not _is_bare(cmap, doubt) and is_card(image_bgr, element_xyxy(doubt), elements)


def rimless_boxes(
    image_bgr: np.ndarray, elements: list[Element], sure_conf: float, edges: np.ndarray
) -> list[str]:
    """Boxes whose inscribed circle runs on too little edge for a coin's rim.

    A coin's rim is an edge all round (a card lying on it still leaves most of the rim);
    the corner of a dark card, which the network half believes in (under ``sure_conf``)
    and the contrast map lights, has two straight edges that its box's circle crosses in
    a few points only. At any score, a box with no edge on its rim nor inside it, in grey
    or in colour (``EDGELESS_INSIDE``), is a blur of light or a shadow, which the network
    scores up to 0.9; so is one with its rim on an edge but none inside, when the rim is
    blurred (:func:`._discs.blur_of_light`: crisp bokeh). ``edges``: :func:`half_edges`' at
    ``opencv.circles``' Canny cut.
    """
    scale = edges.shape[1] / image_bgr.shape[1]
    circles = _box_circles(elements)
    rims = rim_shares(circles, edges, scale)
    problems = []
    coloured: np.ndarray | None = None  # edges in colour, made for the first box that needs them
    grey: np.ndarray | None = None
    for i, (e, rim) in enumerate(zip(elements, rims, strict=True), start=1):
        score = float(e.fields["confidence"])
        circle = circles[i - 1 : i]
        if rim < MIN_RIM_SUPPORT and score < sure_conf:
            problems.append(
                f"coin #{i} (scored {score:.2f}) has {rim:.0%} of its rim on an edge (under "
                f"{MIN_RIM_SUPPORT:.0%}): a card's corner or a mark, not a coin?"
            )
            continue
        if rim >= MIN_RIM_SUPPORT and inner_edge_shares(circle, edges, scale)[0] >= EDGELESS_INSIDE:
            continue
        if coloured is None:
            coloured = colour_edges(image_bgr, float(HOUGH_VOTE["param1"]))
        if (
            rim < MIN_RIM_SUPPORT
            and rim_shares(circle, coloured, scale)[0] < MIN_RIM_SUPPORT
            and inner_edge_shares(circle, coloured, scale)[0] < EDGELESS_INSIDE
        ):
            problems.append(
                f"coin #{i} (scored {score:.2f}) shows no edge on its rim ({rim:.0%}) or "
                "inside it, in grey or colour: a blur of light or a shadow, not a coin?"
            )
            continue
        if grey is None:
            grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        if blur_of_light(grey, circle[0], coloured, scale):
            problems.append(f"coin #{i} (scored {score:.2f}) {BLUR_OF_LIGHT}")
    return problems


def box_doubts(
    elements: list[Element], params: dict[str, Any], shape_hw: tuple[int, int]
) -> list[str]:
    """Boxes unlike a single coin: far from square, far from the others' size, or overlapping.

    A box the image's edge cuts may be a coin's part (``max_box_aspect``); one clear of it
    holds a whole coin, square seen from above (``max_clear_box_aspect``: the network's
    boxes of coins on tuning seeds, probe 0-149, blind 0-149 and out-of-style
    600000-600149, were 1.19 or under for 99.5 % of 2053; blind 205998: a red paper clip's
    bend, 1.37).
    """
    doubts: list[str] = []
    sides = []
    h, w = shape_hw
    boxes = [element_xyxy(e) for e in elements]
    for x1, y1, x2, y2 in boxes:
        bw, bh = max(x2 - x1, 1e-6), max(y2 - y1, 1e-6)
        clear = frame_gap_px((x1, y1, x2, y2), w, h) > 1
        limit = float(params["max_clear_box_aspect" if clear else "max_box_aspect"])
        if max(bw, bh) / min(bw, bh) > limit:
            doubts.append(
                f"a coin box {bw:.0f} x {bh:.0f} px is far from square: two coins in one box, "
                "or something long (a clip, a pen's end)?"
            )
        sides.append(float(np.sqrt(bw * bh)))
    spread = float(params["size_spread"])
    if sides and max(sides) > spread * min(sides):
        doubts.append(
            f"coin boxes range from {min(sides):.0f} to {max(sides):.0f} px across "
            f"(more than {spread:g}x): part of a coin, or several coins, in one box?"
        )
    for i, j in itertools.combinations(range(len(boxes)), 2):
        overlap = _iou(boxes[i], boxes[j])
        if overlap > TWICE_IOU:
            doubts.append(
                f"coin boxes #{i + 1} and #{j + 1} overlap by {overlap:.2f} IoU: one coin "
                "boxed twice, or a coin mostly hidden?"
            )
    return doubts


TWICE_IOU = 0.3
"""Most overlap (IoU) of two coin boxes before it is a doubt: under ``dedupe_iou``, two boxes
each cutting one coin survive (probe 108283: a coin boxed twice, 0.43); coins side by side
overlap by a corner (0.24 at most on 1,258 of 1,260 tuning and fresh coin images)."""
