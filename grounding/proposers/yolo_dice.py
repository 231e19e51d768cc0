"""``yolo.dice``: the shipped dice detector finds the dice, classical code reads their pips.

The network (``grounding/models/dice_yolov8n.onnx``, trained by this project on
its in-style synthetic dice: see the model card) proposes die boxes. Each box is
snapped to the face under it: the face's colour is the median colour of the
box's centre, and the face is the connected region of that colour (pips
filled in) that best covers the box, so white, red, blue or black faces are
read alike; where the face is the table's colour, the box is the face (if the network
scored it ``table_face_conf`` or more: there no outline says a die is there, and a one's
layout is any round spot near the middle, a mark on the table too). The pips
on that face are counted by ``opencv.dice``'s counter (lighter or darker than
the face). A box whose face cannot be read keeps its detector bounds and gets
``pips: None`` with the ``problem``, so a verifier checking the field schema
rejects it and the question is withheld rather than answered wrongly; a box on a
long smooth ellipse (no die's face, in any view, is one) is dropped, and so is a box with
no face to read that the network scored under ``unread_conf`` (the self-check then judges
the region there, as ``opencv.dice`` judges the table).

Self-check: the residue check shared by the CV proposers (compact regions
contrasting with their surroundings, from 0.3 of the smallest box read, that no box
covers) and the same look once the boxes are cleared (a missed die touching a found one
is one region with it) are ``unexplained`` when ``opencv.dice`` would take them for a
die (:func:`~groundeval.grounding.proposers.opencv_dice.dice_like`: square, or holding a
pip-like spot; a disc or a blot on the table is no die missed). So are square regions of
a read face's colour and size that no box covers, and pips no box holds laid out as
on a face (three to six point-symmetric, each with the face between it and the nearest;
two a diagonal apart) or a lone pip centred on a square face or stark and round enough to
be a pip by itself (``_pip_scan``), and regions of a colour the table does not have that
read as a face (:func:`~groundeval.grounding.proposers.opencv_dice.foreign_dice`: a die of a
third colour on gingham): a die the network missed withholds the question. When
no box reaches ``conf``, the boxes it scored from ``doubt_conf`` are unexplained too: "no
dice" is a claim, and on a busy photograph the residue cannot single a small die out.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy
from groundeval.grounding._geometry import xyxy_iou as _iou
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers import opencv_dice
from groundeval.grounding.proposers._cutout import smooth_ellipse, turned_fill
from groundeval.grounding.proposers._cv import Review, box
from groundeval.grounding.proposers._pip_scan import (
    clear_of_faces,
    face_side,
    lone_pip_faces,
    loose_dice,
    pip_spots,
)
from groundeval.grounding.proposers._residue import (
    cleared_residue,
    colour_distance,
    contrast_map,
    merge_found,
    sizes_from,
    unexplained_regions,
    work_copy,
)
from groundeval.grounding.proposers.yolo import YoloProposer, doubtful_boxes
from groundeval.state import Element, GroundSpec

__all__ = ["DICE_WEIGHTS", "YoloDiceProposer", "find_face"]

DICE_WEIGHTS = "dice_yolov8n.onnx"
"""The shipped detector, found in ``grounding/models/``."""


@register_proposer("yolo.dice")
class YoloDiceProposer(YoloProposer):
    """The shipped dice detector, with the pips of each die counted by classical code."""

    name: ClassVar[str] = "yolo.dice"
    defaults: ClassVar[dict[str, Any]] = {
        **YoloProposer.defaults,
        "weights": DICE_WEIGHTS,
        "conf": 0.25,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_pip_dark_ratio": 0.65,
        "face_colour_distance": 40.0,
        "face_margin_share": 0.35,
        "min_face_cover": 0.5,
        "min_side_px": 20.0,
        "max_face_aspect": 1.4,
        "min_face_fill": 0.7,
        "min_contrast": 28.0,
        "residue_low_share": 0.3,
        "residue_high_factor": 2.5,
        "halo_centre_share": 0.25,
        "doubt_conf": 0.05,
        "table_face_conf": 0.5,
        "unread_conf": 0.7,
    }
    """``unread_conf``: a box scored under this whose face cannot be read is dropped, not kept
    with ``pips: None``; the self-check judges what lies there as ``opencv.dice`` judges the
    table (withheld if square or holding a pip-like spot). The network scores a confetti disc,
    a blot cut by the image's edge or two ovals in one box 0.30-0.64 (in-style hard
    10100-10199: 9 of its 12 withheld images; the dice there scored 0.88 and up)."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: less confident boxes, a lower cut for pips."""
        params = super().adapt(params, feedback)
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Die faces the network found, snapped to the face, with pips read from the pixels."""
        return self.read_faces(image_bgr, super().detect(image_bgr, spec, params), params)

    def read_faces(
        self,
        image_bgr: np.ndarray,
        detected: list[Element],
        params: dict[str, Any],
        lab: np.ndarray | None = None,
    ) -> list[Element]:
        """The detector's boxes snapped to their faces, with pips; halos and repeats dropped.

        Two boxes on the same face keep the more confident one; a box with no
        readable face keeps its detector bounds and gets ``pips: None`` (dropped when it
        lies on a long ellipse or scored under ``unread_conf``), unless it is
        a *halo* of a read face: it holds that face whole and is centred on it (within
        ``halo_centre_share`` of the face's side), as a second, looser box on one die
        is. Two touching dice in one box are not centred on either, so they stay. ``lab``:
        the image in Lab, if converted.
        """
        if lab is None:
            lab = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB)
        pip_params = _pip_params(params)
        found: list[Element] = []
        for element in sorted(detected, key=lambda e: -float(e.fields["confidence"])):
            score = float(element.fields["confidence"])
            raw = element.xyxy_px or []
            face, problem, box_is_face = _face(lab, raw, params)
            fields: dict[str, Any] = {**element.fields, "pips": None}
            xyxy = list(raw)
            if face is not None:
                xyxy = list(_rect(face))
                (_, _), (rw, rh), _ = cv2.minAreaRect(face)
                side = float(np.sqrt(rw * rh))
                fields["pips"], problem = opencv_dice.count_pips(lab, face, side, pip_params)
                fields["detector_xyxy_px"] = raw
                unsure = score < float(params["table_face_conf"])
                if fields["pips"] is not None and box_is_face and unsure:
                    fields["pips"], problem = None, UNSURE_TABLE_FACE
            if face is None and (problem == AN_ELLIPSE or score < float(params["unread_conf"])):
                continue  # no die there, or the network unsure: the self-check judges it
            if problem:
                fields["problem"] = problem
            if any(_iou(_xyxy(xyxy), _xyxy(f.xyxy_px)) > 0.4 for f in found if f.xyxy_px):
                continue  # a second box on a face already read
            found.append(box(xyxy, **fields))
        found = [e for e in found if not _is_halo(e, found, float(params["halo_centre_share"]))]
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0.0, 0.0))
        return found

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection and self-check; when no box reaches ``conf``, the boxes under it are doubts.

        The network runs once at the lower of ``conf`` and ``doubt_conf``. Finding no die is
        a claim too ("no dice"), and on a busy photograph the residue cannot single a small
        die out; a box the network scored from ``doubt_conf`` then withholds. With dice
        found, the residue and the cleared look are sized by them, and the doubt band would
        only cost rights (tuning seeds: 6 of 90 in-style decisions, none wrong fixed).
        """
        conf = float(params["conf"])
        low = {**params, "conf": min(conf, float(params["doubt_conf"]))}
        boxes = super().detect(image_bgr, spec, low)
        lab = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB)  # the faces and the checks read it
        confident = [e for e in boxes if float(e.fields["confidence"]) >= conf]
        sure = self.read_faces(image_bgr, confident, params, lab)
        review = self.review(image_bgr, lab, sure, params)
        if not sure:
            doubts = doubtful_boxes(boxes, conf, "die", sure=[])
            review.unexplained = merge_found(review.unexplained, doubts)
        return sure, review

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Die-like regions and pips no box covers, the boxes cleared too (dice missed)."""
        return self.review(image_bgr, cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB), elements, params)

    def review(
        self,
        image_bgr: np.ndarray,
        lab: np.ndarray,
        elements: list[Element],
        params: dict[str, Any],
    ) -> Review:
        """:meth:`self_check` given the image in Lab (:meth:`analyse` read the faces from it)."""
        h, w = image_bgr.shape[:2]
        min_area = 0.6 * float(params["min_side_px"]) ** 2
        sizes = sizes_from(
            elements, min_area, (0.5 * min(h, w)) ** 2, float(params["residue_low_share"])
        )
        areas = [(x2 - x1) * (y2 - y1) for x1, y1, x2, y2 in map(element_xyxy, elements)]
        if max(areas, default=0.0) > 0:  # dice in one scene may differ in size by 2x or more
            high = float(params["residue_high_factor"]) * max(areas)
            sizes = replace(sizes, max_area_px=high)
        work = work_copy(image_bgr)
        cmap = contrast_map(image_bgr, sizes.window_px, params["min_contrast"], work=work)
        unexplained, problems = unexplained_regions(cmap, elements, sizes, "die face")
        # a die touching a box found is one region with it (as opencv.dice looks too)
        unexplained = merge_found(unexplained, cleared_residue(cmap, elements, sizes, "die face"))
        # a die of a colour the table lacks, unlit on the map on a pattern (read as a face)
        foreign = opencv_dice.foreign_dice(
            image_bgr, lab, work, cmap, elements, sizes, _pip_params(params)
        )
        if not elements:
            return Review(merge_found(unexplained, foreign), problems)
        # a disc or a blot on the table is no die missed, as opencv.dice judges
        side = face_side(elements)
        spots = pip_spots(lab, side, [element_xyxy(e) for e in elements])
        loose = clear_of_faces(spots, elements, lab)
        strict_sizes = replace(sizes, min_area_px=opencv_dice.STRICT_LOW_SHARE * min(areas))
        strict, _ = unexplained_regions(
            cmap, elements, strict_sizes, "die face",
            min_rect_fill=opencv_dice.RESIDUE_RECT_FILL, max_aspect=opencv_dice.RESIDUE_MAX_ASPECT,
        )  # fmt: skip
        unexplained = opencv_dice.dice_like(image_bgr, unexplained, strict, loose)
        # a face of a read die's colour is the better box where a residue region is a part
        unexplained = merge_found(same_colour_faces(lab, elements, params), unexplained)
        # pips no box holds: a die beside a face read, with no region of its own
        unexplained = merge_found(unexplained, loose_dice(image_bgr, loose, side, as_laid_out=True))
        unexplained = merge_found(unexplained, lone_pip_faces(image_bgr, loose, side))
        return Review(merge_found(unexplained, foreign), problems)


def _pip_params(params: dict[str, Any]) -> dict[str, Any]:
    """The pip reader's parameters: ``opencv.dice``'s defaults under this proposer's."""
    return {**opencv_dice.DiceProposer.defaults, **params}


def same_colour_faces(
    lab8: np.ndarray, elements: list[Element], params: dict[str, Any]
) -> list[Element]:
    """Face-sized, square regions of a read face's colour that no box covers (missed dice).

    Dice in one scene often share a colour; on a busy texture the contrast map
    may not single a missed die out, but its colour does. ``lab8`` is the image in Lab.
    """
    lab = lab8.astype(np.float32)
    faces = [e for e in elements if e.fields.get("pips") is not None and e.xyxy_px]
    boxes = [e.xyxy_px for e in elements if e.xyxy_px]
    extra: list[Element] = []
    for face in faces:
        x1, y1, x2, y2 = (int(v) for v in face.xyxy_px or [])
        bw, bh = x2 - x1, y2 - y1
        centre = lab[y1 + bh // 4 : y2 - bh // 4, x1 + bw // 4 : x2 - bw // 4]
        if centre.size == 0:
            continue
        colour = np.median(centre.reshape(-1, 3), axis=0)
        dist = colour_distance(lab, colour)
        mask = (dist < float(params["face_colour_distance"])).astype(np.uint8) * 255
        mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        area = float(bw * bh)
        for contour in contours:
            hull = cv2.convexHull(contour)
            rect = _rect(hull)
            hull_area = (rect[2] - rect[0]) * (rect[3] - rect[1])
            if not 0.4 * area <= hull_area <= 2.0 * area:
                continue
            (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
            if max(rw, rh) > 1.5 * max(min(rw, rh), 1.0):
                continue
            if cv2.contourArea(hull) < 0.6 * rw * rh:
                continue
            if any(_overlap(rect, tuple(b)) > 0.3 * hull_area for b in boxes):
                continue
            boxes.append(list(rect))
            why = "a face of the read dice's colour that no box covers"
            extra.append(box(rect).model_copy(update={"reason": why}))
    return extra


FACE_SPREAD = 1.6
"""A face colour whose region's box is this many times the detector's box spreads past the
die (a face the colour of its table, a see-through face): the box is then the face."""
UNSURE_TABLE_FACE = "a face the table's colour, the network unsure: a mark on the table?"
"""Why a box that is its own face (the table's colour) scored under ``table_face_conf`` is
refused: there no outline says a die is there, only the network and the pips, and a one's
layout is any round spot near the middle, a two's a stick split in two (in-style hard seeds
6049 and 8061: a green oval on grey, a pink stick on red, boxes scored 0.37)."""
AN_ELLIPSE = "the region under the box is a long ellipse, no die"
"""Why a box is dropped: no face of a die, in any view, is a long smooth ellipse."""
ELLIPSE_FILL = 0.82
"""Most rectangle fill of a region taken for an ellipse (an ellipse fills 0.785, a face 0.9+)."""
ELLIPSE_ASPECT = 1.5
"""Least axis ratio of such an ellipse (a rounder blob may be a face seen in some view)."""


def find_face(
    lab: np.ndarray, xyxy_px: list[float], params: dict[str, Any]
) -> tuple[np.ndarray | None, str]:
    """The die face a detected box lies on (full-image contour), or why not.

    The face colour is the median Lab colour of the box's central half (pips
    cover far less than half a face); the face is the region of that colour,
    pips filled in, inside the box plus a margin, that covers most of the box.
    When that colour spreads far past the box (a face the colour of its table, a
    see-through face), the box itself is the face.
    """
    face, problem, _ = _face(lab, xyxy_px, params)
    return face, problem


def _face(
    lab: np.ndarray, xyxy_px: list[float], params: dict[str, Any]
) -> tuple[np.ndarray | None, str, bool]:
    """:func:`find_face`, and whether the face is the detector's box (the table's colour)."""
    h, w = lab.shape[:2]
    if len(xyxy_px) != 4:
        return None, "detector box has no bounds", False
    bx1, by1, bx2, by2 = (float(v) for v in xyxy_px)
    bw, bh = bx2 - bx1, by2 - by1
    if min(bw, bh) < 6:
        return None, "box too small to read", False
    margin = float(params["face_margin_share"]) * max(bw, bh)
    x1, y1 = max(int(bx1 - margin), 0), max(int(by1 - margin), 0)
    x2, y2 = min(int(np.ceil(bx2 + margin)), w), min(int(np.ceil(by2 + margin)), h)
    crop = lab[y1:y2, x1:x2].astype(np.float32)
    cx1, cy1 = int(bx1 + bw / 4) - x1, int(by1 + bh / 4) - y1
    centre = crop[cy1 : cy1 + max(int(bh / 2), 1), cx1 : cx1 + max(int(bw / 2), 1)]
    colour = np.median(centre.reshape(-1, 3), axis=0)
    dist = colour_distance(crop, colour)
    mask = (dist < float(params["face_colour_distance"])).astype(np.uint8) * 255
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    target = (bx1 - x1, by1 - y1, bx2 - x1, by2 - y1)
    box_area = max(bw * bh, 1.0)
    covered = [(_overlap(_rect(c), target) / box_area, c) for c in contours]
    share, face = max(covered, key=lambda t: t[0], default=(0.0, None))
    if face is None or share < float(params["min_face_cover"]):
        return None, f"no die face of one colour under the box ({share:.0%} covered)", False
    hull = cv2.convexHull(face)
    fill, aspect = turned_fill(hull)
    if aspect > float(params["max_face_aspect"]) or fill < float(params["min_face_fill"]):
        if fill <= ELLIPSE_FILL and smooth_ellipse(face, mask.shape, ELLIPSE_ASPECT):
            return None, AN_ELLIPSE, False
        return None, "the region under the box is not one square face", False
    fx1, fy1, fx2, fy2 = _rect(hull)
    if (fx2 - fx1) * (fy2 - fy1) > FACE_SPREAD * box_area:
        # face and table alike: the colour cannot bound the face, the detector's box does
        # (the pip reading's own checks still refuse a box whose pips are not a die's)
        corners = [(bx1, by1), (bx2, by1), (bx2, by2), (bx1, by2)]
        return np.array(corners, np.float32).round().astype(np.int32).reshape(-1, 1, 2), "", True
    return hull + np.array([x1, y1], np.int32), "", False


def _is_halo(element: Element, found: list[Element], centre_share: float) -> bool:
    """An unread box that holds a read face whole and is centred on it (a looser duplicate)."""
    if element.fields.get("pips") is not None or not element.xyxy_px or centre_share <= 0:
        return False
    ex1, ey1, ex2, ey2 = element.xyxy_px
    for face in found:
        if face.fields.get("pips") is None or not face.xyxy_px:
            continue
        fx1, fy1, fx2, fy2 = face.xyxy_px
        area = max((fx2 - fx1) * (fy2 - fy1), 1.0)
        side = float(np.sqrt(area))
        off = np.hypot((ex1 + ex2 - fx1 - fx2) / 2, (ey1 + ey2 - fy1 - fy2) / 2)
        inside = _overlap((ex1, ey1, ex2, ey2), (fx1, fy1, fx2, fy2)) / area
        if inside >= 0.9 and off <= centre_share * side:
            return True
    return False


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    return max(w, 0.0) * max(h, 0.0)


def _rect(contour: np.ndarray) -> tuple[float, float, float, float]:
    x, y, bw, bh = cv2.boundingRect(contour)
    return float(x), float(y), float(x + bw), float(y + bh)


def _xyxy(values: list[float]) -> tuple[float, float, float, float]:
    x1, y1, x2, y2 = values
    return (x1, y1, x2, y2)
