"""``opencv.circles`` (Hough) and ``opencv.blobs`` (SimpleBlobDetector): round things as boxes.

Both return boxes around each circle with ``radius_px`` (and the centre in
``center_px``). Hough suits coins and pips with visible rims; the blob detector
suits filled dots of one polarity.

Feedback: on a retry after missing elements, Hough's accumulator threshold
(``param2``) drops by ``retry_factor`` and the blob detector's minimum
circularity and area fall by the same factor; after rejected elements only,
they rise by it, so the next proposal is stricter.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


def _circle(cx: float, cy: float, r: float) -> Element:
    return box(
        (cx - r, cy - r, cx + r, cy + r),
        radius_px=round(float(r), 2),
        center_px=[round(float(cx), 2), round(float(cy), 2)],
    )


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

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Hough circles, strongest first as OpenCV returns them, then sorted top to bottom."""
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
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
        if circles is None:
            return []
        found = [_circle(float(x), float(y), float(r)) for x, y, r in circles[0]]
        found = _clip(found, grey.shape)
        return sorted(found, key=lambda e: (e.fields["center_px"][1], e.fields["center_px"][0]))


@register_proposer("opencv.blobs")
class BlobsProposer(CVProposer):
    """``cv2.SimpleBlobDetector`` with area, circularity, convexity and colour filters."""

    name: ClassVar[str] = "opencv.blobs"
    defaults: ClassVar[dict[str, Any]] = {
        "blob_color": 0,
        "min_area_px": 30.0,
        "max_area_px": 50000.0,
        "min_circularity": 0.6,
        "min_convexity": 0.8,
        "min_inertia": 0.3,
        "min_threshold": 10.0,
        "max_threshold": 220.0,
        "retry_factor": 0.8,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: looser shape and area filters when blobs are missing, stricter when wrong."""
        factor = float(params["retry_factor"])
        scale = factor if feedback.missing else 1 / factor
        params["min_circularity"] = min(1.0, float(params["min_circularity"]) * scale)
        params["min_area_px"] = float(params["min_area_px"]) * scale
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Blobs of the given colour (0 dark, 255 bright) as circles."""
        p = cv2.SimpleBlobDetector_Params()  # type: ignore[attr-defined]
        p.filterByColor = True
        p.blobColor = int(params["blob_color"])
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
