"""``opencv.dice``: die faces as boxes, with the number of pips on each face.

Pipeline: a whiteness map (the smallest of B, G, R: high only for white or
ivory, low for coloured tables and clutter) thresholded by Otsu within bounds;
each outer contour that is roughly square (min-area rectangle aspect and fill)
is a die face; inside its eroded mask, dark connected components of the size a
pip should have are counted. A face whose pips cannot be read unambiguously, or
a large bright blob that is not square (two dice merged, a die half hidden),
is still returned with ``pips: None`` so that a verifier checking the field
schema rejects it: the question is withheld rather than answered by a guess.

Feedback: on a retry the threshold is lowered by ``retry_threshold_drop``, the
allowed aspect is widened to ``retry_max_aspect`` and the pip darkness ratio
moves to ``retry_pip_dark_ratio``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


@register_proposer("opencv.dice")
class DiceProposer(CVProposer):
    """White dice with dark pips on any non-white background."""

    name: ClassVar[str] = "opencv.dice"
    defaults: ClassVar[dict[str, Any]] = {
        "min_side_px": 20.0,
        "max_side_share": 0.5,
        "threshold_bounds": [100, 210],
        "threshold_drop": 0,
        "max_aspect": 1.35,
        "min_fill": 0.72,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_threshold_drop": 20,
        "retry_max_aspect": 1.5,
        "retry_pip_dark_ratio": 0.65,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: lower the whiteness threshold, accept less square faces, darker cut for pips."""
        params["threshold_drop"] = params["retry_threshold_drop"]
        params["max_aspect"] = params["retry_max_aspect"]
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find die faces and count their pips."""
        white = image_bgr.min(axis=2)
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
        low, high = params["threshold_bounds"]
        level = float(np.clip(otsu, low, high)) - float(params["threshold_drop"])
        mask = (white > level).astype(np.uint8) * 255
        mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        h, w = white.shape
        min_side = float(params["min_side_px"])
        max_side = float(params["max_side_share"]) * min(h, w)
        found: list[Element] = []
        for contour in contours:
            area = cv2.contourArea(contour)
            if area < 0.6 * min_side**2:
                continue
            (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
            x, y, bw, bh = cv2.boundingRect(contour)
            xyxy = (float(x), float(y), float(x + bw), float(y + bh))
            side = float(np.sqrt(rw * rh))
            aspect = max(rw, rh) / max(min(rw, rh), 1.0)
            fill = area / max(rw * rh, 1.0)
            if side > max_side:
                continue
            if aspect > params["max_aspect"] or fill < params["min_fill"]:
                found.append(box(xyxy, pips=None, problem="bright blob that is not one die face"))
                continue
            pips, problem = count_pips(grey, contour, side, params)
            fields: dict[str, Any] = {"pips": pips}
            if problem:
                fields["problem"] = problem
            found.append(box(xyxy, **fields))
        found.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0, 0))
        return found


def count_pips(
    grey: np.ndarray, contour: np.ndarray, side: float, params: dict[str, Any]
) -> tuple[int | None, str]:
    """Pips inside one face, or ``None`` with the reason when the reading is ambiguous."""
    face = np.zeros(grey.shape, np.uint8)
    cv2.drawContours(face, [contour], -1, 255, -1)
    k = max(3, round(side * 0.08) | 1)
    inner = cv2.erode(face, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    if not inner.any():
        return None, "face too small to read"
    body = float(np.percentile(grey[inner > 0], 90))
    dark = ((grey < body * float(params["pip_dark_ratio"])) & (inner > 0)).astype(np.uint8)
    n, _, stats, _ = cv2.connectedComponentsWithStats(dark, connectivity=8)
    expected = np.pi * (float(params["pip_radius_share"]) * side) ** 2
    pips = 0
    for area in stats[1:n, cv2.CC_STAT_AREA]:
        if area < 0.15 * expected:
            continue
        if area < 0.4 * expected or area > 2.2 * expected:
            return None, f"dark spot of {int(area)} px where a pip has about {int(expected)}"
        pips += 1
    if not 1 <= pips <= 6:
        return None, f"{pips} pips is not a die face"
    return pips, ""
