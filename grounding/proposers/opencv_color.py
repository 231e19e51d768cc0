"""``opencv.color_region``: regions inside HSV colour ranges as boundary polygons.

Each range (``{"label", "hsv_lower", "hsv_upper"}``, OpenCV HSV: hue 0-179;
a lower hue above the upper one wraps through red) gives a mask, cleaned by a
morphological opening and closing; its largest ``max_regions`` outer contours
above ``min_area_px`` become polygons (simplified by ``approxPolyDP``) with
fields ``label`` and ``area_px``. Several ranges in one call let a check
compare regions (the sun against the ground below the horizon).

Feedback: on a retry after missing regions every range widens by
``retry_widen`` (hue +-h, saturation and value floors lowered by s, v) and the
minimum area halves.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.grounding.proposers.opencv_contours import hsv_mask
from groundeval.state import Element, GroundSpec


@register_proposer("opencv.color_region")
class ColorRegionProposer(CVProposer):
    """Polygons around colour regions, one or more labelled ranges per call."""

    name: ClassVar[str] = "opencv.color_region"
    defaults: ClassVar[dict[str, Any]] = {
        "ranges": [{"label": "region", "hsv_lower": [20, 100, 100], "hsv_upper": [35, 255, 255]}],
        "min_area_px": 200.0,
        "max_regions": 1,
        "blur_px": 3,
        "open_px": 3,
        "close_px": 7,
        "epsilon_share": 0.004,
        "widen": [0, 0, 0],
        "retry_widen": [5, 40, 40],
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: wider colour ranges and smaller regions."""
        if feedback.missing:
            params["widen"] = list(params["retry_widen"])
            params["min_area_px"] = float(params["min_area_px"]) / 2
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """One polygon per region found, in the order of the ranges."""
        return self._find(image_bgr, params)[0]

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Regions, plus those of the same colour left out by ``max_regions`` (unexplained)."""
        found, extra = self._find(image_bgr, params)
        return found, Review(unexplained=extra)

    def _find(
        self, image_bgr: np.ndarray, params: dict[str, Any]
    ) -> tuple[list[Element], list[Element]]:
        k = int(params["blur_px"]) | 1
        smooth = cv2.GaussianBlur(image_bgr, (k, k), 0) if k > 1 else image_bgr
        hsv = cv2.cvtColor(smooth, cv2.COLOR_BGR2HSV)
        found: list[Element] = []
        extra: list[Element] = []
        for i, spec_range in enumerate(params["ranges"]):
            label, lower, upper = _range(spec_range, i, params["widen"])
            mask = hsv_mask(hsv, lower, upper)
            mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, _kernel(params["open_px"]))
            mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, _kernel(params["close_px"]))
            contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
            regions = sorted(contours, key=cv2.contourArea, reverse=True)
            keep = int(params["max_regions"])
            kept_areas: list[float] = []
            for contour in regions[:keep]:
                area = float(cv2.contourArea(contour))
                if area < float(params["min_area_px"]):
                    break
                eps = float(params["epsilon_share"]) * cv2.arcLength(contour, True)
                poly = cv2.approxPolyDP(contour, eps, True).reshape(-1, 2)
                if len(poly) < 3:
                    continue
                kept_areas.append(area)
                points = [[float(x), float(y)] for x, y in poly]
                found.append(
                    Element(
                        id=1,
                        kind="polygon",
                        points_px=points,
                        fields={"label": label, "area_px": round(area, 1)},
                    )
                )
            least = 0.5 * min(kept_areas) if kept_areas else float(params["min_area_px"])
            for contour in regions[keep:]:
                area = float(cv2.contourArea(contour))
                if area < max(least, float(params["min_area_px"])):
                    break
                x, y, w, h = cv2.boundingRect(contour)
                extra.append(
                    box(
                        (x, y, x + w, y + h),
                        reason=f"another {label!r} region of {area:.0f} px beyond "
                        f"max_regions={keep}",
                    )
                )
        return found, extra


def _kernel(size: int) -> np.ndarray:
    n = max(1, int(size))
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (n, n))


def _range(item: Any, index: int, widen: list[int]) -> tuple[str, list[int], list[int]]:
    """Validate one range and widen it (hue clamped to 0-179, S and V to 0-255)."""
    if not isinstance(item, dict) or "hsv_lower" not in item or "hsv_upper" not in item:
        raise ValueError(
            f"opencv.color_region: ranges[{index}] needs hsv_lower and hsv_upper "
            f"(3 numbers each), got {item!r}"
        )
    lower, upper = list(item["hsv_lower"]), list(item["hsv_upper"])
    if len(lower) != 3 or len(upper) != 3:
        raise ValueError(f"opencv.color_region: ranges[{index}] hsv bounds need 3 numbers each")
    dh, ds, dv = (int(v) for v in widen)
    lo = [max(0, int(lower[0]) - dh), max(0, int(lower[1]) - ds), max(0, int(lower[2]) - dv)]
    hi = [min(179, int(upper[0]) + dh), int(upper[1]), int(upper[2])]
    return str(item.get("label", f"region{index + 1}")), lo, hi
