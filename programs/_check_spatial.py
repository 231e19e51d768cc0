"""Built-in geometric checks: inside, overlaps, left_of / above, iou, line_hits.

Elements are named by id (the number on the overlay). Shapes come from
:mod:`groundeval.grounding._geometry`, so "inside" and "touch" mean what shapely
says (boundaries count).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from groundeval.grounding import Box, Line, intersects, overlap_area
from groundeval.grounding import iou as geometry_iou
from groundeval.programs._check_library import (
    Result,
    Views,
    _by_id,
    _element_id,
    _fmt,
    _number,
    _same,
    _validate,
    _verdict,
)
from groundeval.programs._checks import register_check
from groundeval.programs._views import (
    CheckError,
    above,
    describe_ids,
    first_hit_of,
    inside,
    left_of,
)
from groundeval.state import StateFile


def _ids(*values: Any, names: Sequence[str]) -> None:
    for value, name in zip(values, names, strict=True):
        if value is not None:
            _element_id(value, f"'{name}'")


def _inside_args(
    a: Any = None, b: Any = None, region: Any = None, tolerance_px: Any = 0.0, **_: Any
) -> None:
    _ids(a, b, region, names=("a", "b", "region"))
    if region is not None and (a is not None or b is not None):
        raise CheckError("give either 'a' and 'b' or 'region', not both")
    if region is None and (a is None or b is None):
        raise CheckError("give either 'a' and 'b' (a inside b) or 'region' (all inside it)")
    _number(tolerance_px, "'tolerance_px'")


@register_check("inside", validate=_validate(_inside_args))
def inside_check(
    elements: Views,
    state: StateFile | None,
    *,
    a: int | None = None,
    b: int | None = None,
    region: int | None = None,
    tolerance_px: float = 0.0,
    partial: bool = False,
) -> Result:
    """Element ``a`` lies inside element ``b``, or every other element inside ``region``."""
    _inside_args(a, b, region, tolerance_px)
    if region is None:
        va, vb = _by_id(elements, a, "'a'"), _by_id(elements, b, "'b'")
        ok = inside(va, vb, tolerance_px)
        return float(ok), f"#{va.element.id} inside #{vb.element.id}: {ok} → {_verdict(ok)}"
    vr = _by_id(elements, region, "'region'")
    others = [v for v in elements if v is not vr]
    if not others:
        return 0.0, f"no elements besides region #{vr.element.id} → fail"
    good = [v for v in others if inside(v, vr, tolerance_px)]
    bad = [v for v in others if v not in good]
    score = len(good) / len(others) if partial else float(not bad)
    word = "pass" if score >= 1 else ("fail" if score <= 0 else f"partial {score:.2f}")
    return score, (
        f"{len(good)} of {len(others)} elements inside region #{vr.element.id} "
        f"({describe_ids(good)}; outside: {describe_ids(bad)}) → {word}"
    )


def _pair_args(a: Any = None, b: Any = None, **_: Any) -> None:
    if a is None or b is None:
        raise CheckError("give both 'a' and 'b' (element ids)")
    _ids(a, b, names=("a", "b"))


@register_check("overlaps", validate=_validate(_pair_args))
def overlaps(
    elements: Views,
    state: StateFile | None,
    *,
    a: int,
    b: int,
    expected: bool = True,
    min_area_px: float = 0.0,
) -> Result:
    """Elements ``a`` and ``b`` share a point (touching counts), or at least ``min_area_px``.

    ``expected=False`` asks that they do not (a sun clear of the horizon).
    """
    va, vb = _by_id(elements, a, "'a'"), _by_id(elements, b, "'b'")
    area = overlap_area(va.geometry, vb.geometry)
    if min_area_px > 0:
        together = area >= min_area_px
    else:
        together = intersects(va.geometry, vb.geometry)
    ok = together == bool(expected)
    word = "meet" if together else "do not meet"
    want = "meet" if expected else "not meet"
    return float(ok), (
        f"#{va.element.id} and #{vb.element.id} {word} (shared area {_fmt(round(area, 2))} px²), "
        f"expected to {want} → {_verdict(ok)}"
    )


def _order(name: str, test: Callable[[Any, Any, bool], bool], axis: str) -> None:
    def check(
        elements: Views, state: StateFile | None, *, a: int, b: int, strict: bool = False
    ) -> Result:
        va, vb = _by_id(elements, a, "'a'"), _by_id(elements, b, "'b'")
        ok = test(va, vb, strict)
        how = "edges" if strict else f"centre {axis}"
        return float(ok), (
            f"#{va.element.id} {name.replace('_', ' ')} #{vb.element.id} by {how} "
            f"({_fmt(va.value('c' + axis))} vs {_fmt(vb.value('c' + axis))}) → {_verdict(ok)}"
        )

    check.__doc__ = f"Element ``a`` is {name.replace('_', ' ')} ``b`` (``strict``: by edges)."
    check.__name__ = name
    register_check(name, validate=_validate(_pair_args))(check)


_order("left_of", left_of, "x")
_order("above", above, "y")


def _iou_args(a: Any = None, b: Any = None, xyxy_px: Any = None, min: Any = 0.5, **_: Any) -> None:
    _ids(a, b, names=("a", "b"))
    if a is None or (b is None) == (xyxy_px is None):
        raise CheckError("give 'a' and either 'b' (an element id) or 'xyxy_px' (a reference box)")
    if xyxy_px is not None:
        try:
            Box(tuple(xyxy_px))
        except (TypeError, ValueError) as exc:
            raise CheckError(f"'xyxy_px': {exc}") from None
    value = _number(min, "'min'")
    if not 0 <= value <= 1:
        raise CheckError(f"'min' must lie in 0..1, got {min!r}")


@register_check("iou", validate=_validate(_iou_args))
def iou_check(
    elements: Views,
    state: StateFile | None,
    *,
    a: int,
    b: int | None = None,
    xyxy_px: Sequence[float] | None = None,
    min: float = 0.5,
) -> Result:
    """IoU of element ``a`` with element ``b`` or a reference ``xyxy_px`` box is >= ``min``."""
    va = _by_id(elements, a, "'a'")
    if b is not None:
        other, name = _by_id(elements, b, "'b'").geometry, f"#{b}"
    else:
        other, name = Box(tuple(xyxy_px or ())), f"box {list(xyxy_px or ())}"  # type: ignore[arg-type]
    value = geometry_iou(va.geometry, other)
    ok = value >= min
    return float(
        ok
    ), f"IoU(#{va.element.id}, {name}) = {value:.3f}, expected ≥ {_fmt(min)} → {_verdict(ok)}"


def _line_hits_args(
    expected: Any = None,
    ray: Any = None,
    targets: Any = None,
    question: Any = None,
    tolerance_px: Any = 0.0,
    field: Any = "label",
    **_: Any,
) -> None:
    if expected is None:
        raise CheckError("give 'expected': the value of 'field' of the element the ray should hit")
    _ids(ray, names=("ray",))
    if targets is not None:
        if isinstance(targets, str) or not isinstance(targets, Sequence) or not targets:
            raise CheckError(f"'targets' must be a list of element ids, got {targets!r}")
        for t in targets:
            _element_id(t, "'targets' item")
    if question is not None and (not isinstance(question, str) or targets is not None):
        raise CheckError("'question' must be a question id, and cannot be given with 'targets'")
    if not isinstance(field, str) or not field:
        raise CheckError(f"'field' must be a field name, got {field!r}")
    if _number(tolerance_px, "'tolerance_px'") < 0:
        raise CheckError("'tolerance_px' must not be negative")


@register_check("line_hits", validate=_validate(_line_hits_args))
def line_hits(
    elements: Views,
    state: StateFile | None,
    *,
    expected: Any,
    ray: int | None = None,
    field: str = "label",
    targets: Sequence[int] | None = None,
    question: str | None = None,
    tolerance_px: float = 0.0,
    states: Mapping[str, Views] | None = None,
) -> Result:
    """The region a ray reaches first has ``field`` equal to ``expected``.

    ``ray``: id of a ray (or line, read from its first point); default the only
    ray/line element. Candidates: ``targets`` (ids in this state), or the elements of
    another question's state (``question``), or else every other element here.
    Boxes and polygons count as areas; ``field="id"`` compares element ids.
    """
    if ray is not None:
        vr = _by_id(elements, ray, "'ray'")
    else:
        lines = [v for v in elements if isinstance(v.geometry, Line)]
        if len(lines) != 1:
            raise CheckError(f"give 'ray': {len(lines)} ray/line elements ({describe_ids(lines)})")
        vr = lines[0]
    if not isinstance(vr.geometry, Line):
        raise CheckError(f"element #{vr.element.id} is a {vr.element.kind}, not a ray or line")
    if question is not None:
        if states is None:
            raise CheckError(f"no grounding state for question {question!r} was given")
        candidates = list(states[question])
    elif targets is not None:
        candidates = [_by_id(elements, t, "'targets'") for t in targets]
    else:
        candidates = [v for v in elements if v is not vr]
    found = first_hit_of(vr, candidates, tolerance_px)
    if found is None:
        return 0.0, f"ray #{vr.element.id} hits none of {describe_ids(candidates)} → fail"
    hit, point = found
    actual = hit.value(field)
    ok = _same(actual, expected)
    where = f"({_fmt(round(point[0], 1))}, {_fmt(round(point[1], 1))})"
    return float(ok), (
        f"ray #{vr.element.id} hits #{hit.element.id} ({field}={_fmt(actual)}) first at {where}, "
        f"expected {_fmt(expected)} → {_verdict(ok)}"
    )


# --------------------------------------------------------------------------- directions


def _direction_of(view: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Axis of an element: (a point on it, unit direction, its outline points, elongation).

    Rays and lines: their end points (elongation infinite). Polygons: the principal
    axis of the filled shape (exact area moments), elongation = long / short axis.
    Boxes have no direction and are refused.
    """
    element = view.element
    pts = np.asarray(element.points_px or [], dtype=float)
    if element.kind in ("ray", "line") and len(pts) >= 2:
        d = pts[-1] - pts[0]
        n = float(np.hypot(*d))
        if n == 0:
            raise CheckError(f"element #{element.id}: its two points coincide, no direction")
        return pts[0], d / n, pts, math.inf
    if element.kind == "polygon" and len(pts) >= 3:
        x, y = pts[:, 0], pts[:, 1]
        xn, yn = np.roll(x, -1), np.roll(y, -1)
        a = x * yn - xn * y
        area = a.sum() / 2
        if abs(area) < 1e-9:
            raise CheckError(f"element #{element.id}: polygon has no area, no direction")
        cx = ((x + xn) * a).sum() / (6 * area)
        cy = ((y + yn) * a).sum() / (6 * area)
        ixx = ((x * x + x * xn + xn * xn) * a).sum() / 12 / area - cx * cx
        iyy = ((y * y + y * yn + yn * yn) * a).sum() / 12 / area - cy * cy
        ixy = ((x * yn + 2 * x * y + 2 * xn * yn + xn * y) * a).sum() / 24 / area - cx * cy
        theta = 0.5 * math.atan2(2 * ixy, ixx - iyy)
        common = math.hypot((ixx - iyy) / 2, ixy)
        big, small = (ixx + iyy) / 2 + common, (ixx + iyy) / 2 - common
        elongation = math.sqrt(big / small) if small > 1e-12 else math.inf
        return np.array([cx, cy]), np.array([math.cos(theta), math.sin(theta)]), pts, elongation
    raise CheckError(
        f"element #{element.id} is a {element.kind}: ground rays, lines or boundaries "
        "(polygons) to give it a direction"
    )


def _meeting_point(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    """Least-squares point closest to every line; ``None`` when they are (near) parallel."""
    a = np.zeros((2, 2))
    b = np.zeros(2)
    for p, d in lines:
        n = np.array([-d[1], d[0]])
        nn = np.outer(n, n)
        a += nn
        b += nn @ p
    if abs(np.linalg.det(a)) < 1e-6 * len(lines) ** 2:
        return None
    point: np.ndarray = np.linalg.solve(a, b)
    return point


def _angle_spread_deg(dirs: list[np.ndarray]) -> float:
    """Largest angle between two undirected directions, in degrees (0..90)."""
    angles = [math.degrees(math.atan2(d[1], d[0])) % 180 for d in dirs]
    worst = 0.0
    for i, u in enumerate(angles):
        for v in angles[i + 1 :]:
            diff = abs(u - v) % 180
            worst = max(worst, min(diff, 180 - diff))
    return worst


def _concurrent_args(
    tolerance_px: Any = 10.0,
    min_lines: Any = 3,
    allow_parallel: Any = False,
    parallel_deg: Any = 2.0,
    min_elongation: Any = 2.0,
    **_: Any,
) -> None:
    if _number(tolerance_px, "'tolerance_px'") <= 0:
        raise CheckError("'tolerance_px' must be positive")
    if isinstance(min_lines, bool) or not isinstance(min_lines, int) or min_lines < 3:
        raise CheckError(
            f"'min_lines' must be an integer >= 3 (any two lines meet), got {min_lines!r}"
        )
    if not isinstance(allow_parallel, bool):
        raise CheckError(f"'allow_parallel' must be true or false, got {allow_parallel!r}")
    if not 0 < _number(parallel_deg, "'parallel_deg'") < 45:
        raise CheckError("'parallel_deg' must be between 0 and 45")
    if _number(min_elongation, "'min_elongation'") < 1:
        raise CheckError("'min_elongation' must be >= 1")


@register_check("lines_concurrent", validate=_validate(_concurrent_args))
def lines_concurrent(
    elements: Views,
    state: StateFile | None,
    *,
    tolerance_px: float = 10.0,
    min_lines: int = 3,
    allow_parallel: bool = False,
    parallel_deg: float = 2.0,
    min_elongation: float = 2.0,
) -> Result:
    """The extension lines of all elements meet in one point (shadows from one light source).

    Each ray/line, or the long axis of each elongated boundary (a shadow), is extended;
    every line must pass within ``tolerance_px`` of the point where the others meet
    (at least three lines: any two meet somewhere).
    ``allow_parallel``: lines within ``parallel_deg`` of each other meet at infinity
    (one distant light, like the sun) and pass.
    """
    _concurrent_args(tolerance_px, min_lines, allow_parallel, parallel_deg, min_elongation)
    if len(elements) < min_lines:
        raise CheckError(
            f"{len(elements)} elements; need at least {min_lines} lines (any two lines meet)"
        )
    lines = []
    for v in elements:
        p, d, _, elongation = _direction_of(v)
        if elongation < min_elongation:
            raise CheckError(
                f"element #{v.element.id} is not elongated (long/short axis {elongation:.2f} "
                f"< {_fmt(min_elongation)}): its direction is unclear"
            )
        lines.append((p, d))
    spread = _angle_spread_deg([d for _, d in lines])
    ids = describe_ids(elements)
    if spread <= parallel_deg:
        ok = allow_parallel
        return float(ok), (
            f"{len(lines)} lines ({ids}) are parallel within {spread:.1f}°: they meet only at "
            f"infinity (allow_parallel={allow_parallel}) → {_verdict(ok)}"
        )
    point = _meeting_point(lines)
    if point is None:
        return 0.0, f"{len(lines)} lines ({ids}) have no finite meeting point → fail"
    misses = [_leave_one_out_miss(lines, i, point) for i in range(len(lines))]
    worst = int(np.argmax(misses))
    ok = misses[worst] <= tolerance_px
    return float(ok), (
        f"{len(lines)} lines ({ids}) meet nearest ({point[0]:.1f}, {point[1]:.1f}); the "
        f"farthest, #{elements[worst].element.id}, passes {misses[worst]:.1f} px from where "
        f"the others meet, tolerance {_fmt(tolerance_px)} px → {_verdict(ok)}"
    )


def _leave_one_out_miss(
    lines: list[tuple[np.ndarray, np.ndarray]], index: int, fallback: np.ndarray
) -> float:
    """Distance of line ``index`` from the point where the other lines meet.

    Leaving the line out keeps one wrong shadow from pulling the meeting point
    towards itself (with three lines a least-squares point splits the difference).
    """
    others = [line for i, line in enumerate(lines) if i != index]
    point = _meeting_point(others) if _angle_spread_deg([d for _, d in others]) >= 15 else None
    if point is None:  # the others run (nearly) along one line: their crossing is unstable
        point = fallback
    p, d = lines[index]
    return abs(float(np.array([-d[1], d[0]]) @ (point - p)))


_TIME_RE = re.compile(r"^([01]?\d|2[0-3]):([0-5]\d)$")


def _parse_time(value: Any) -> int:
    """Minutes on a 12-hour dial (0..719) of an ``H:MM`` string."""
    match = _TIME_RE.match(value) if isinstance(value, str) else None
    if match is None:
        raise CheckError(f"'expected' must be a time H:MM (e.g. '10:10'), got {value!r}")
    return (int(match.group(1)) % 12) * 60 + int(match.group(2))


def _clock_args(
    expected: Any = None,
    tolerance_min: Any = 5,
    center_px: Any = None,
    label_field: Any = "label",
    **_: Any,
) -> None:
    _parse_time(expected)
    if not 0 <= _number(tolerance_min, "'tolerance_min'") < 360:
        raise CheckError("'tolerance_min' must be between 0 and 360")
    if center_px is not None and (
        isinstance(center_px, str) or not isinstance(center_px, Sequence) or len(center_px) != 2
    ):
        raise CheckError(f"'center_px' must be [x, y], got {center_px!r}")
    if not isinstance(label_field, str):
        raise CheckError(f"'label_field' must be a field name, got {label_field!r}")


def _bearing(center: np.ndarray, tip: np.ndarray) -> float:
    """0 = 12 o'clock, clockwise, in degrees."""
    d = tip - center
    return math.degrees(math.atan2(float(d[0]), float(-d[1]))) % 360


@register_check("clock_time", validate=_validate(_clock_args))
def clock_time(
    elements: Views,
    state: StateFile | None,
    *,
    expected: str,
    tolerance_min: float = 5,
    center_px: Sequence[float] | None = None,
    label_field: str = "label",
) -> Result:
    """An analogue clock reads ``expected`` (H:MM) from its two hands (rays or hand outlines).

    The centre is where the hands' axes cross (or ``center_px``); each tip is the end
    farther from it. The minute hand is the one labelled ``minute`` in ``label_field``,
    else the longer one. The hour is read from the hour hand minus the minutes' share.
    """
    target = _parse_time(expected)
    _clock_args(expected, tolerance_min, center_px, label_field)
    if len(elements) != 2:
        raise CheckError(f"need exactly 2 hands, got {len(elements)} ({describe_ids(elements)})")
    axes = [_direction_of(v) for v in elements]
    if center_px is not None:
        center = np.array([_number(c, "'center_px'") for c in center_px])
    else:
        if _angle_spread_deg([d for _, d, _, _ in axes]) < 6:
            raise CheckError("the hands are (nearly) aligned: give 'center_px' to read the time")
        found = _meeting_point([(p, d) for p, d, _, _ in axes])
        if found is None:
            raise CheckError("the hands' axes do not cross: give 'center_px'")
        center = found
    hands = []
    for v, (_p, d, pts, _) in zip(elements, axes, strict=True):
        along = (pts - center) @ d
        tip_t = float(along.max()) if abs(along.max()) >= abs(along.min()) else float(along.min())
        tip = center + tip_t * d
        label = v.value(label_field) if v.has(label_field) else None
        hands.append((v, abs(tip_t), _bearing(center, tip), label))
    labelled = {str(h[3]).lower(): h for h in hands if h[3] is not None}
    if {"hour", "minute"} <= set(labelled):
        hour, minute = labelled["hour"], labelled["minute"]
    else:
        hour, minute = sorted(hands, key=lambda h: h[1])
    minutes = minute[2] / 6.0
    hour_value = round(hour[2] / 30.0 - minutes / 60.0) % 12
    read = (hour_value * 60 + minutes) % 720
    diff = abs(read - target) % 720
    diff = round(min(diff, 720 - diff), 1)
    ok = diff <= tolerance_min
    whole = round(read) % 720
    shown = f"{whole // 60 or 12}:{whole % 60:02d}"
    return float(ok), (
        f"hour hand #{hour[0].element.id} at {hour[2]:.1f}°, minute hand #{minute[0].element.id} "
        f"at {minute[2]:.1f}° (centre {center[0]:.1f}, {center[1]:.1f}) → reads {shown}; "
        f"expected {expected} ± {_fmt(tolerance_min)} min (off by {diff} min) → {_verdict(ok)}"
    )
