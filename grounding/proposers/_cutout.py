"""A flagged box looked at in full resolution: the object in it, cut from the table by colour.

The residue looks work on a copy a few times smaller; a box they flag (or a lone pip's
surround) is judged again here, on the image itself.
"""

from __future__ import annotations

import cv2
import numpy as np

from groundeval.grounding.proposers._residue import colour_distance

ELLIPSE_FIT = 0.04
"""Most median relative distance of an outline from its fitted ellipse for it to be one (a
square's is 0.06-0.12, a disc's or an oval's 0.02-0.03)."""


def look_box(
    shape: tuple[int, ...], xyxy: tuple[float, float, float, float], pad_share: float = 0.25
) -> tuple[int, int, int, int]:
    """The pixels :func:`full_size_region` reads (``x1, y1, x2, y2``, ends exclusive).

    The box grown by ``pad_share`` of its longer side, clipped to an image of ``shape``.
    """
    h, w = shape[:2]
    x1, y1, x2, y2 = xyxy
    pad = pad_share * max(x2 - x1, y2 - y1)
    return (
        max(0, int(x1 - pad)),
        max(0, int(y1 - pad)),
        min(w, int(np.ceil(x2 + pad))),
        min(h, int(np.ceil(y2 + pad))),
    )


def full_size_region(
    image_bgr: np.ndarray,
    xyxy: tuple[float, float, float, float],
    pad_share: float = 0.25,
    around: tuple[float, float] | None = None,
) -> np.ndarray | None:
    """Outline (full-image pixels) of the object in a box, cut from the table by its colour.

    The box (padded) is cut by Otsu on the Lab distance from the colour of its rim and the
    largest region kept; when that region is small, Otsu split the pips from the rest (a
    face close to the table's colour) and the cut is halved. With ``around`` (a point in
    full-image pixels) the region holding that point is kept instead of the largest (a
    neighbouring die may be larger). ``None`` when the box is too small or nothing stands
    out.
    """
    x1, y1, x2, y2 = xyxy
    a, b, c, d = look_box(image_bgr.shape, xyxy, pad_share)
    if c - a < 8 or d - b < 8:
        return None
    lab = cv2.cvtColor(image_bgr[b:d, a:c], cv2.COLOR_BGR2LAB).astype(np.float32)
    rim = np.concatenate([lab[0], lab[-1], lab[:, 0], lab[:, -1]])
    dist = colour_distance(lab, np.median(rim, axis=0))
    dist8 = np.clip(dist, 0, 255).astype(np.uint8)
    otsu, mask = cv2.threshold(dist8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    if cv2.contourArea(cv2.convexHull(contour)) < 0.4 * (x2 - x1) * (y2 - y1):
        _, mask = cv2.threshold(dist8, 0.5 * otsu, 255, cv2.THRESH_BINARY)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        if not contours:
            return None
        contour = max(contours, key=cv2.contourArea)
    if around is not None:
        point = (float(around[0] - a), float(around[1] - b))
        holding = [c for c in contours if cv2.pointPolygonTest(c, point, False) >= 0]
        if holding:
            contour = holding[0]
    return np.asarray(contour + np.array([a, b], np.int32))


def turned_fill(hull: np.ndarray) -> tuple[float, float]:
    """A convex outline's area over its least turned rectangle's, and that rectangle's aspect.

    A square face fills 1 (0.9 and up, blurred) at any turn, a disc or an ellipse 0.785.
    """
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    return float(cv2.contourArea(hull)) / max(rw * rh, 1.0), max(rw, rh) / max(min(rw, rh), 1.0)


def smooth_ellipse(contour: np.ndarray, shape: tuple[int, ...], least_aspect: float = 1.0) -> bool:
    """Whether an outline, off the edge of an image of ``shape``, is a smooth ellipse.

    The outline's points off the edge are fitted with an ellipse; each point's distance from
    the centre relative to the ellipse's radius in its direction must stay within
    ``ELLIPSE_FIT`` of 1 (median), the ellipse ``least_aspect`` long or longer. No face of
    a die, in any view, is one; a confetti disc, an oval or a coin is.
    """
    h, w = shape[:2]
    points = contour.reshape(-1, 2)
    x, y = points[:, 0], points[:, 1]
    points = points[(x > 0) & (y > 0) & (x < w - 1) & (y < h - 1)]
    if len(points) < 12:
        return False
    (cx, cy), axes, angle = cv2.fitEllipse(points.reshape(-1, 1, 2).astype(np.float32))
    a, b = max(axes[0] / 2, 1e-6), max(axes[1] / 2, 1e-6)
    if max(a, b) < least_aspect * min(a, b):
        return False
    t = np.deg2rad(angle)
    dx, dy = points[:, 0] - cx, points[:, 1] - cy
    u, v = dx * np.cos(t) + dy * np.sin(t), dy * np.cos(t) - dx * np.sin(t)
    return float(np.median(np.abs(np.hypot(u / a, v / b) - 1))) <= ELLIPSE_FIT
