"""``yolo.dice``: the shipped dice detector finds the dice, classical code reads their pips.

The network (``grounding/models/dice_yolov8n.onnx``, trained by this project on
its synthetic dice) proposes die boxes; each box is snapped to the white face
under it and the pips on that face are counted by ``opencv.dice``'s counter.
Pips are 6-10 px at the network's input size, too small for a detector trained
this briefly; the pixel reading is exact where the face is clean. Boxes with
no readable face, and die-sized white faces no box covers, come back with
``pips: None`` so the verifier rejects them and the question is withheld
rather than answered wrongly.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import box
from groundeval.grounding.proposers._cv import iou as _iou
from groundeval.grounding.proposers.opencv_dice import count_pips
from groundeval.grounding.proposers.yolo import YoloProposer
from groundeval.programs._model import GroundSpec
from groundeval.state import Element

__all__ = ["DICE_WEIGHTS", "YoloDiceProposer", "find_face", "missed_faces"]

DICE_WEIGHTS = "dice_yolov8n.onnx"
"""The shipped detector, found in ``grounding/models/``."""


@register_proposer("yolo.dice")
class YoloDiceProposer(YoloProposer):
    """The shipped dice detector, with the pips of each die counted by classical code."""

    name: ClassVar[str] = "yolo.dice"
    defaults: ClassVar[dict[str, Any]] = {
        **YoloProposer.defaults,
        "weights": DICE_WEIGHTS,
        "conf": 0.15,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_pip_dark_ratio": 0.65,
        "face_threshold_bounds": [100, 210],
        "face_margin_share": 0.5,
        "min_face_cover": 0.5,
        "bare_white_share": 0.1,
        "min_side_px": 20.0,
        "max_face_aspect": 1.4,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: less confident boxes, darker cut for pips."""
        params = super().adapt(params, feedback)
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Die faces the network found, snapped to the white face, with pips read from the pixels.

        Each box is replaced by the bounds of the face it lies on (a box that
        covers half a die still gives the whole die); two boxes on the same face
        keep the more confident one. A box with no readable face keeps its
        detector bounds and gets ``pips: None`` with the ``problem``; so does a
        die-sized white region no box covers (a die the detector missed).
        """
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        found: list[Element] = []
        detected = super().detect(image_bgr, spec, params)
        for element in sorted(detected, key=lambda e: -float(e.fields["confidence"])):
            face, problem = find_face(image_bgr, element.xyxy_px or [], params)
            fields: dict[str, Any] = {**element.fields, "pips": None}
            xyxy = element.xyxy_px or []
            if face is not None:
                xyxy = list(_rect(face))
                (_, _), (rw, rh), _ = cv2.minAreaRect(face)
                fields["pips"], problem = count_pips(grey, face, float(np.sqrt(rw * rh)), params)
                fields["detector_xyxy_px"] = element.xyxy_px
            if problem:
                fields["problem"] = problem
            if any(_iou(_xyxy(xyxy), _xyxy(f.xyxy_px)) > 0.5 for f in found if f.xyxy_px):
                continue  # a second box on a face already read
            if face is None and _duplicate_or_bare(image_bgr, xyxy, found, params):
                continue
            found.append(box(xyxy, **fields))
        found.extend(missed_faces(image_bgr, found, params))
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0.0, 0.0))
        return found


def find_face(
    image_bgr: np.ndarray, xyxy_px: list[float], params: dict[str, Any]
) -> tuple[np.ndarray | None, str]:
    """The white square die face a detected box lies on (full-image contour), or why not.

    The face is looked for in the box plus a margin, so a box that covers only
    part of a die still finds the whole face; a box with no white face under
    it, or whose white region is not one square face (two dice merged), fails.
    """
    h, w = image_bgr.shape[:2]
    bx1, by1, bx2, by2 = (float(v) for v in xyxy_px)
    if min(bx2 - bx1, by2 - by1) < 6:
        return None, "box too small to read"
    margin = float(params["face_margin_share"]) * max(bx2 - bx1, by2 - by1)
    x1, y1 = max(int(bx1 - margin), 0), max(int(by1 - margin), 0)
    x2, y2 = min(int(np.ceil(bx2 + margin)), w), min(int(np.ceil(by2 + margin)), h)
    white = np.ascontiguousarray(image_bgr[y1:y2, x1:x2].min(axis=2))
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["face_threshold_bounds"]
    bright = (white > float(np.clip(otsu, low, high))).astype(np.uint8) * 255
    mask = cv2.morphologyEx(bright, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    box_area = (bx2 - bx1) * (by2 - by1)
    target = (bx1 - x1, by1 - y1, bx2 - x1, by2 - y1)
    covered = [(_overlap(_rect(c), target) / box_area, c) for c in contours]
    share, face = max(covered, key=lambda t: t[0], default=(0.0, None))
    if face is None or share < float(params["min_face_cover"]):
        return None, f"no white die face under the box ({share:.0%} covered)"
    (_, _), (rw, rh), _ = cv2.minAreaRect(face)
    if max(rw, rh) > float(params["max_face_aspect"]) * max(min(rw, rh), 1.0):
        return None, "the white region under the box is not one square face"
    return face + np.array([x1, y1]), ""


def _duplicate_or_bare(
    image_bgr: np.ndarray, xyxy: list[float], found: list[Element], params: dict[str, Any]
) -> bool:
    """A face-less box whose white pixels all belong to faces already read (or that has none)."""
    x1, y1, x2, y2 = (round(v) for v in xyxy)
    if x2 <= x1 or y2 <= y1:
        return True
    white = image_bgr[y1:y2, x1:x2].min(axis=2) > float(params["face_threshold_bounds"][0])
    for f in found:
        fx1, fy1, fx2, fy2 = (round(v) for v in (f.xyxy_px or [0, 0, 0, 0]))
        white[max(fy1 - y1, 0) : max(fy2 - y1, 0), max(fx1 - x1, 0) : max(fx2 - x1, 0)] = False
    return bool(white.mean() < float(params["bare_white_share"]))


def missed_faces(
    image_bgr: np.ndarray, found: list[Element], params: dict[str, Any]
) -> list[Element]:
    """White regions of a die's size that no element covers: the detector missed a die.

    They come back with ``pips: None`` so the verifier rejects them and the
    question is withheld rather than answered with a die left out.
    """
    white = image_bgr.min(axis=2)
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["face_threshold_bounds"]
    mask = (white > float(np.clip(otsu, low, high))).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    min_area = float(params["min_side_px"]) ** 2 * 0.6
    extra = []
    for contour in contours:
        if cv2.contourArea(contour) < min_area:
            continue
        rect = _rect(contour)
        area = max((rect[2] - rect[0]) * (rect[3] - rect[1]), 1.0)
        if any(_overlap(rect, tuple(f.xyxy_px or [])) / area > 0.3 for f in found):
            continue
        extra.append(box(rect, pips=None, problem="a white face the detector did not find"))
    return extra


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
