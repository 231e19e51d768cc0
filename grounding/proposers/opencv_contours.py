"""``opencv.contours``: objects as outer contours of a threshold or colour mask, split by watershed.

Pipeline: a foreground mask (Otsu, or an adaptive mean threshold when
``adaptive_block_px`` > 1, on brightness = max(B, G, R), objects ``bright`` or
``dark``, and at least ``min_contrast`` away from the median, i.e. the
background, so dark clutter cannot make the cloth itself foreground; or an HSV
range), holes filled; then, with ``split_touching``, the distance
transform's local maxima become markers for ``cv2.watershed`` so touching round
objects (coins) come apart; every region keeps its contour if its area, solidity
(area / convex hull area, the convexity test) and circularity pass. A large
region that fails the shape tests is returned with ``radius_px: None`` when
``refuse_irregular`` is on, so a schema-checking verifier rejects it and the
question is withheld instead of miscounted.

Feedback: on any retry the watershed markers may lie closer together
(``retry_peak_spacing``), which splits a merged pair refused as irregular; after
missing elements the minimum area also halves.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


@register_proposer("opencv.contours")
class ContoursProposer(CVProposer):
    """Blobs by threshold or colour, with area, convexity and circularity filters."""

    name: ClassVar[str] = "opencv.contours"
    defaults: ClassVar[dict[str, Any]] = {
        "mode": "otsu",
        "polarity": "bright",
        "hsv_lower": [0, 0, 0],
        "hsv_upper": [179, 255, 255],
        "blur_px": 5,
        "adaptive_block_px": 0,
        "min_contrast": 30.0,
        "min_area_px": 300.0,
        "max_area_share": 0.25,
        "min_solidity": 0.85,
        "min_circularity": 0.0,
        "split_touching": True,
        "peak_spacing": 0.8,
        "refuse_irregular": True,
        "retry_peak_spacing": 0.65,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: closer watershed markers; smaller objects too when some are missing."""
        params["peak_spacing"] = params["retry_peak_spacing"]
        if feedback.missing:
            params["min_area_px"] = float(params["min_area_px"]) / 2
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find objects and return them as boxes with ``area_px`` and ``radius_px``."""
        mask = foreground(image_bgr, params)
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
            _, radius = cv2.minEnclosingCircle(contour)
            if solidity < params["min_solidity"] or circularity < params["min_circularity"]:
                if params["refuse_irregular"]:
                    found.append(
                        box(
                            xyxy,
                            area_px=round(area, 1),
                            radius_px=None,
                            problem=f"irregular region (solidity {solidity:.2f}, "
                            f"circularity {circularity:.2f})",
                        )
                    )
                continue
            found.append(box(xyxy, area_px=round(area, 1), radius_px=round(float(radius), 2)))
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0, 0))
        return found


def foreground(image_bgr: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """Binary mask (0/255) of the objects, holes filled."""
    k = int(params["blur_px"]) | 1
    smooth = cv2.GaussianBlur(image_bgr, (k, k), 0) if k > 1 else image_bgr
    if params["mode"] == "hsv":
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
        raise ValueError(f"opencv.contours: unknown mode {params['mode']!r}; use 'otsu' or 'hsv'")
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8), iterations=2)
    return fill_holes(mask)


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
    return labels
