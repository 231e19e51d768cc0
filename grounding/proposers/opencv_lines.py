"""``opencv.lines``: line segments (HoughLinesP or LSD) reduced to the dominant needle as a ray.

Pipeline: the dial centre (the largest Hough circle, else the image centre, or
``center_px`` given); line segments from Canny + ``HoughLinesP`` (or OpenCV's
LSD); segments kept if their line passes near the centre and they reach close
to it (needle edges do, rim ticks and letters do not); the length-weighted
dominant orientation among them; the needle's extent along that axis on both
sides of the centre. The tip is the end farther from the centre (a pointer is
long in front, short behind); the ray is ``[tail, tip]`` with ``bearing_deg``
(0 = up, clockwise) from the centre to the tip. When both ends reach about as
far (``max_end_ratio``), the direction is ambiguous and the ray is returned
with ``bearing_deg: None``, so a schema-checking verifier rejects it.

Self-check: a second line through the centre as strong as the needle is a
problem, and so is a tip the colours contradict. Grey edges can miss a needle
half whose colour differs from the face in hue but not in brightness (a red
front on a brown face) and then take the short tail for the tip; measured along
the axis in colour (Lab), what stands out from the face on both sides must not
reach about as far behind the centre as in front of it.

Feedback: on a retry the Hough vote threshold and minimum segment length drop
by ``retry_factor`` (faint needles), and the centre tolerance widens.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal, NamedTuple

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review
from groundeval.state import Element, GroundSpec


@register_proposer("opencv.lines")
class LinesProposer(CVProposer):
    """The dominant pointer through a dial's centre, as one ray element."""

    name: ClassVar[str] = "opencv.lines"
    defaults: ClassVar[dict[str, Any]] = {
        "method": "hough",
        "center_px": None,
        "min_dial_share": 0.2,
        "hough_threshold": 30,
        "min_length_share": 0.08,
        "max_gap_px": 6,
        "center_tolerance_share": 0.1,
        "reach_share": 0.3,
        "cluster_deg": 12.0,
        "max_end_ratio": 0.7,
        "retry_factor": 0.7,
    }
    param_types: ClassVar[dict[str, Any]] = {
        "method": Literal["hough", "lsd"],
        "center_px": list[float] | None,
    }
    """Types the defaults cannot show (``validate`` checks them)."""

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: fainter and shorter segments count, and they may pass farther from the centre."""
        factor = float(params["retry_factor"])
        params["hough_threshold"] = max(5, int(params["hough_threshold"] * factor))
        params["min_length_share"] = float(params["min_length_share"]) * factor
        params["center_tolerance_share"] = float(params["center_tolerance_share"]) / factor
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Return at most one ray: the needle from tail to tip."""
        return self._find(image_bgr, params).elements

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """The needle, with a problem for a rival line or a tip the colours contradict."""
        found = self._find(image_bgr, params)
        if len(found.elements) != 1:
            return found.elements, Review()
        needle = found.elements[0]
        problems = []
        rival = _rival_share(found.near, needle, float(params["cluster_deg"]))
        if rival >= SECOND_NEEDLE_SHARE:
            problems.append(
                f"a second line through the centre carries {rival:.0%} of the needle's length: "
                "two pointers, or a shadow"
            )
        if needle.fields.get("bearing_deg") is not None:
            front, back = _colour_ends(image_bgr, found, needle)
            if back > float(params["max_end_ratio"]) * front:
                problems.append(
                    f"in colour, the needle reaches {back:.0f} px behind the centre and "
                    f"{front:.0f} px in front: tip and tail may be swapped"
                )
        return found.elements, Review(problems=problems)

    def _find(self, image_bgr: np.ndarray, params: dict[str, Any]) -> _Found:
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        grey = cv2.GaussianBlur(grey, (5, 5), 0)
        center, radius = dial(grey, params)
        none = _Found([], np.zeros((0, 4)), center, radius)
        segments = line_segments(grey, params)
        if len(segments) == 0:
            return none
        tol = float(params["center_tolerance_share"]) * radius
        reach = float(params["reach_share"]) * radius
        near = np.array(
            [s for s in segments if _line_dist(s, center) <= tol and _seg_dist(s, center) <= reach]
        )
        if len(near) == 0:
            return none
        return _Found([_needle(near, center, params)], near, center, radius)


class _Found(NamedTuple):
    """The needle (at most one ray), the segments near the centre, and the dial found."""

    elements: list[Element]
    near: np.ndarray
    center: np.ndarray
    radius: float


SECOND_NEEDLE_SHARE = 0.6
"""A rival line cluster this strong (share of the needle's segment length) is a problem."""


def _rival_share(segs: np.ndarray, needle: Element, cluster_deg: float) -> float:
    """Length of segments away from the needle's direction over the length along it."""
    if len(segs) == 0 or not needle.points_px:
        return 0.0
    (x1, y1), (x2, y2) = needle.points_px
    axis = float(np.degrees(np.arctan2(y2 - y1, x2 - x1)) % 180.0)
    d = segs[:, 2:] - segs[:, :2]
    lengths = np.hypot(d[:, 0], d[:, 1])
    angles = np.mod(np.degrees(np.arctan2(d[:, 1], d[:, 0])), 180.0)
    off = np.abs((angles - axis + 90) % 180 - 90) > 2 * cluster_deg
    along = float(lengths[~off].sum())
    if not off.any() or along <= 0:
        return 0.0
    best = 0.0
    for a in angles[off]:
        same = off & (np.abs((angles - a + 90) % 180 - 90) <= cluster_deg)
        best = max(best, float(lengths[same].sum()))
    return best / along


BODY_SIDE_SHARE = 0.1
"""Face probes sit this share of the dial radius to either side of the needle's axis."""
BODY_SLACK_SHARE = 0.03
"""The axis is searched this share of the radius sideways (a thin tip, a slightly off angle)."""
BODY_START_SHARE = 0.1
"""Colour reach is measured from this share of the radius out (past the hub)."""
BODY_MIN_DIFF = 12.0
"""Lab distance from the face on both sides that counts as needle body (noise stays below)."""
BODY_GAP_PX = 4
"""A needle body may fade for this many pixels (a blurred taper) and go on."""


def _colour_ends(image_bgr: np.ndarray, found: _Found, needle: Element) -> tuple[float, float]:
    """How far the needle's colour body reaches in front of the centre (towards the tip) and behind.

    Both 0 when colour sees no body: then it neither confirms nor contradicts the tip.
    """
    if not needle.points_px:
        return 0.0, 0.0
    v = np.array(needle.points_px[1], dtype=float) - found.center
    norm = float(np.hypot(*v))
    if norm <= 0:
        return 0.0, 0.0
    u = v / norm
    return (
        _colour_reach(image_bgr, found.center, u, found.radius),
        _colour_reach(image_bgr, found.center, -u, found.radius),
    )


def _colour_reach(image_bgr: np.ndarray, center: np.ndarray, u: np.ndarray, radius: float) -> float:
    """Distance from the centre along ``u`` to which something unlike the face on both sides runs.

    Contiguous from just past the hub (gaps up to ``BODY_GAP_PX``); 0 if nothing starts there.
    The dial is blurred first: the sideways search would otherwise chain noise into a body.
    """
    h, w = image_bgr.shape[:2]
    x0, y0 = (max(0, int(v - radius) - 1) for v in center)
    x1, y1 = min(w, int(center[0] + radius) + 2), min(h, int(center[1] + radius) + 2)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return 0.0
    crop = cv2.GaussianBlur(image_bgr[y0:y1, x0:x1], (3, 3), 0)
    n = np.array([-u[1], u[0]])
    ts = np.arange(BODY_START_SHARE * radius, radius, 1.0)
    axis = center + ts[:, None] * u
    side = BODY_SIDE_SHARE * radius
    slack = round(BODY_SLACK_SHARE * radius)
    offsets = [side, -side, *range(-slack, slack + 1)]
    pts = np.concatenate([axis + o * n for o in offsets])
    x = np.clip(np.round(pts[:, 0]).astype(int) - x0, 0, x1 - x0 - 1)
    y = np.clip(np.round(pts[:, 1]).astype(int) - y0, 0, y1 - y0 - 1)
    bgr = np.ascontiguousarray(crop[y, x].reshape(len(offsets), len(ts), 3))
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2LAB).astype(np.float32)
    to_left = np.linalg.norm(lab[2:] - lab[0], axis=2)
    to_right = np.linalg.norm(lab[2:] - lab[1], axis=2)
    body = np.minimum(to_left, to_right).max(axis=0) > BODY_MIN_DIFF
    reach, missed = 0.0, 0
    for t, on in zip(ts, body, strict=True):
        if on:
            reach, missed = float(t), 0
        else:
            missed += 1
            if missed > BODY_GAP_PX:
                break
    return reach


def dial(grey: np.ndarray, params: dict[str, Any]) -> tuple[np.ndarray, float]:
    """Centre and radius of the dial: given, the largest Hough circle, or the image centre."""
    h, w = grey.shape
    if params["center_px"] is not None:
        return np.array(params["center_px"], dtype=float), min(h, w) / 2
    min_r = int(float(params["min_dial_share"]) * min(h, w))
    circles = cv2.HoughCircles(
        grey,
        cv2.HOUGH_GRADIENT,
        dp=1.5,
        minDist=min(h, w),
        param1=100,
        param2=40,
        minRadius=min_r,
        maxRadius=int(max(h, w) / 2),
    )
    if circles is not None:
        x, y, r = max(circles[0], key=lambda c: c[2])
        return np.array([float(x), float(y)]), float(r)
    return np.array([w / 2, h / 2]), min(h, w) / 2


def line_segments(grey: np.ndarray, params: dict[str, Any]) -> np.ndarray:
    """(n, 4) array of segments x1, y1, x2, y2."""
    min_len = float(params["min_length_share"]) * min(grey.shape)
    lines: Any
    if params["method"] == "lsd":
        lines = cv2.createLineSegmentDetector().detect(grey)[0]
    elif params["method"] == "hough":
        median = float(np.median(grey))
        edges = cv2.Canny(grey, int(max(0, 0.66 * median)), int(min(255, 1.33 * median)))
        lines = cv2.HoughLinesP(
            edges,
            1,
            np.pi / 180,
            int(params["hough_threshold"]),
            minLineLength=min_len,
            maxLineGap=float(params["max_gap_px"]),
        )
    else:
        raise ValueError(f"opencv.lines: unknown method {params['method']!r}; use 'hough' or 'lsd'")
    if lines is None:
        return np.zeros((0, 4))
    segs = np.asarray(lines, dtype=float).reshape(-1, 4)
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    kept: np.ndarray = segs[lengths >= min_len]
    return kept


def _line_dist(s: np.ndarray, p: np.ndarray) -> float:
    """Distance from p to the infinite line through segment s."""
    a, b = s[:2], s[2:]
    d = b - a
    n = float(np.hypot(*d))
    return (
        abs(float(d[0] * (p[1] - a[1]) - d[1] * (p[0] - a[0]))) / n
        if n
        else float(np.hypot(*(p - a)))
    )


def _seg_dist(s: np.ndarray, p: np.ndarray) -> float:
    """Distance from p to the segment s itself."""
    a, b = s[:2], s[2:]
    d = b - a
    t = float(np.clip(np.dot(p - a, d) / max(float(np.dot(d, d)), 1e-9), 0, 1))
    return float(np.hypot(*(a + t * d - p)))


def _needle(segs: np.ndarray, center: np.ndarray, params: dict[str, Any]) -> Element:
    """Dominant orientation, then the farther end along it is the tip."""
    d = segs[:, 2:] - segs[:, :2]
    lengths = np.hypot(d[:, 0], d[:, 1])
    angles = np.mod(np.degrees(np.arctan2(d[:, 1], d[:, 0])), 180.0)
    best, best_w = 0.0, -1.0
    for a in angles:
        diff = np.abs((angles - a + 90) % 180 - 90)
        weight = float(lengths[diff <= params["cluster_deg"]].sum())
        if weight > best_w:
            best, best_w = float(a), weight
    member = np.abs((angles - best + 90) % 180 - 90) <= params["cluster_deg"]
    doubled = np.radians(2 * angles[member])
    mean = 0.5 * np.arctan2(
        np.sum(lengths[member] * np.sin(doubled)), np.sum(lengths[member] * np.cos(doubled))
    )
    u = np.array([np.cos(mean), np.sin(mean)])
    ends = np.concatenate([segs[member, :2], segs[member, 2:]])
    t = (ends - center) @ u
    front, back = float(t.max()), float(-t.min())
    if back > front:
        u, t, front, back = -u, -t, back, front
    tip = ends[int(np.argmax(t))]
    tail = center - max(back, 0.0) * u
    ratio = back / front if front > 0 else 1.0
    fields: dict[str, Any] = {"length_px": round(front + max(back, 0.0), 2)}
    if front <= 0 or ratio > float(params["max_end_ratio"]):
        fields["bearing_deg"] = None
        fields["problem"] = f"both ends reach about as far (ratio {ratio:.2f}): tip unclear"
    else:
        v = tip - center
        fields["bearing_deg"] = round(float(np.degrees(np.arctan2(v[0], -v[1])) % 360.0), 2)
    points = [
        [round(float(tail[0]), 2), round(float(tail[1]), 2)],
        [round(float(tip[0]), 2), round(float(tip[1]), 2)],
    ]
    return Element(id=1, kind="ray", points_px=points, fields=fields)
