"""``sam`` / ``fastsam``: a boundary polygon from a box or point prompt, from local weights.

Prompts come from ``params.prompt_xyxy_px`` (one box or a list) and / or
``params.prompt_points_px`` (foreground points), in pixels of the image; with
neither, every segment is returned. Each mask becomes the simplified outline
of its largest part, with its area and confidence. Needs the ``yolo`` extra;
weights are never downloaded (see :func:`.yolo.resolve_weights`).
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np
import supervision as sv

from groundeval.grounding._protocol import register_proposer
from groundeval.grounding.proposers._cv import CVProposer
from groundeval.grounding.proposers._ultralytics_env import use_threads
from groundeval.grounding.proposers.yolo import resolve_weights, ultralytics_model
from groundeval.state import Element, GroundSpec

__all__ = ["FastSamProposer", "SamProposer", "masks_to_polygons"]


class _SegmentProposer(CVProposer):
    """Boundary polygons from SAM-family weights, prompted by boxes or points."""

    kind: ClassVar[str] = "sam"
    defaults: ClassVar[dict[str, Any]] = {
        "weights": None,
        "prompt_xyxy_px": None,
        "prompt_points_px": None,
        "threads": None,
        "simplify_share": 0.004,
    }
    param_types: ClassVar[dict[str, Any]] = {
        "weights": str | None,
        "prompt_xyxy_px": list[float] | list[list[float]] | None,
        "prompt_points_px": list[float] | list[list[float]] | None,
        "threads": int | None,
    }
    """Types the ``None`` defaults cannot show (``validate`` checks them)."""

    def predict_args(self, params: dict[str, Any]) -> dict[str, Any]:
        """Prompts in the form ultralytics takes (none: segment everything)."""
        args: dict[str, Any] = {}
        if params["prompt_xyxy_px"]:
            boxes = np.asarray(params["prompt_xyxy_px"], dtype=float).reshape(-1, 4)
            args["bboxes"] = boxes.tolist()
        if params["prompt_points_px"]:
            points = np.asarray(params["prompt_points_px"], dtype=float).reshape(-1, 2)
            args["points"] = points.tolist()
            args["labels"] = [1] * len(points)
        return args

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """One polygon per mask: the outline of its largest part, simplified."""
        path = resolve_weights(params["weights"], (".pt", ".pth"))
        model, lock = ultralytics_model(path, self.kind)
        try:
            args = self.predict_args(params)
        except ValueError as exc:
            raise ValueError(f"proposer {self.name}: bad prompt: {exc}") from exc
        with lock:
            use_threads(model, params["threads"])
            result = model.predict(image_bgr, verbose=False, **args)
        detections = sv.Detections.from_ultralytics(result[0])
        return masks_to_polygons(detections, float(params["simplify_share"]))


@register_proposer("sam")
class SamProposer(_SegmentProposer):
    """SAM / SAM 2 / MobileSAM weights (``sam_b.pt``, ``mobile_sam.pt``...)."""

    name: ClassVar[str] = "sam"
    kind: ClassVar[str] = "sam"


@register_proposer("fastsam")
class FastSamProposer(_SegmentProposer):
    """FastSAM weights (``FastSAM-s.pt``), with its confidence and IoU thresholds."""

    name: ClassVar[str] = "fastsam"
    kind: ClassVar[str] = "fastsam"
    defaults: ClassVar[dict[str, Any]] = {**_SegmentProposer.defaults, "conf": 0.4, "iou": 0.9}

    def predict_args(self, params: dict[str, Any]) -> dict[str, Any]:
        """Prompts plus FastSAM's thresholds."""
        return {**super().predict_args(params), "conf": params["conf"], "iou": params["iou"]}


def masks_to_polygons(detections: sv.Detections, simplify_share: float) -> list[Element]:
    """Polygon elements (outline of each mask's largest part) with confidence and area."""
    if detections.mask is None:
        return []
    scores = detections.confidence
    found = []
    for i, mask in enumerate(detections.mask):
        parts = sv.mask_to_polygons(mask.astype(bool))
        if not parts:
            continue
        outline = max(parts, key=lambda p: cv2.contourArea(p.astype(np.float32)))
        eps = simplify_share * cv2.arcLength(outline.astype(np.float32), True)
        simple = cv2.approxPolyDP(outline.astype(np.float32), eps, True).reshape(-1, 2)
        if len(simple) < 3:
            continue
        fields: dict[str, Any] = {"area_px": int(mask.sum())}
        if scores is not None:
            fields["confidence"] = round(float(scores[i]), 4)
        points = [[round(float(x), 2), round(float(y), 2)] for x, y in simple]
        found.append(Element(id=1, kind="polygon", points_px=points, fields=fields))
    return found
