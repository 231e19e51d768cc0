"""Built-in physics check: reflections mirrored about a line (still water, a mirror).

An object and its reflection are mirror images about the reflecting line: the
reflected outline of one lies on the other, so its centre, size and orientation
all match. The line is given (``axis_y_px``, ``axis_px``) or grounded: an element
of this grounding (``axis_label``, the water region) or the one element of another
question's grounding (``axis_question``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely
from scipy.optimize import linear_sum_assignment
from shapely import affinity

from groundeval.grounding import Line
from groundeval.programs._check_library import Result, Views, _fmt, _number, _same, _validate
from groundeval.programs._checks import register_check
from groundeval.programs._views import CheckError, ElementView, normalize_text
from groundeval.state import StateFile

AXIS_EDGES = ("top", "bottom", "left", "right")
"""Which edge of a region element is the reflecting line (water: its top edge)."""
STRADDLE_PX = 1.5
"""An element reaching this far past the line on both sides is object and reflection in one."""


@dataclass(frozen=True)
class _Axis:
    """The reflecting line: a point on it, its unit normal, and how it was found.

    The normal points to the objects' side: up for a horizontal line, out of a region.
    """

    point: np.ndarray
    normal: np.ndarray
    source: str
    element: ElementView | None = None

    def side(self, xy: np.ndarray) -> float:
        """Signed distance of points from the line (positive on the normal's side)."""
        return float(self.normal @ (xy - self.point))

    def reflect(self, geometry: Any) -> Any:
        """The mirror image of a shapely geometry about the line."""
        n = self.normal
        m = np.eye(2) - 2.0 * np.outer(n, n)
        t = 2.0 * float(n @ self.point) * n
        return affinity.affine_transform(
            geometry, [m[0, 0], m[0, 1], m[1, 0], m[1, 1], float(t[0]), float(t[1])]
        )

    @classmethod
    def through(cls, p1: Sequence[float], p2: Sequence[float], source: str) -> _Axis:
        a, b = np.asarray(p1, dtype=float), np.asarray(p2, dtype=float)
        d = b - a
        length = float(np.hypot(*d))
        if length == 0:
            raise CheckError(f"{source}: its two points coincide, no line")
        return cls(a, np.array([d[1], -d[0]]) / length, source)  # left of a -> b: y up


def _point(value: Any, what: str) -> list[float]:
    if isinstance(value, str) or not isinstance(value, Sequence) or len(value) != 2:
        raise CheckError(f"{what} must be an [x, y] point, got {value!r}")
    return [_number(v, what) for v in value]


def _mirrored_args(
    axis_y_px: Any = None,
    axis_px: Any = None,
    axis_label: Any = None,
    axis_question: Any = None,
    axis_edge: Any = "top",
    label_field: Any = "label",
    tolerance_px: Any = 10.0,
    **_: Any,
) -> None:
    given = [
        n
        for n, v in (
            ("axis_y_px", axis_y_px),
            ("axis_px", axis_px),
            ("axis_label", axis_label),
            ("axis_question", axis_question),
        )
        if v is not None
    ]
    if len(given) != 1:
        raise CheckError(
            "give exactly one reflecting line: 'axis_y_px' (a horizontal line), 'axis_px' "
            "([[x1, y1], [x2, y2]]), 'axis_label' (the element of this grounding with that "
            f"label, e.g. the water) or 'axis_question' (another question's one element); got "
            f"{', '.join(given) or 'none'}"
        )
    if axis_y_px is not None:
        _number(axis_y_px, "'axis_y_px'")
    if axis_px is not None:
        if isinstance(axis_px, str) or not isinstance(axis_px, Sequence) or len(axis_px) != 2:
            raise CheckError(f"'axis_px' must be two points [[x1, y1], [x2, y2]], got {axis_px!r}")
        a, b = (_point(p, "'axis_px' point") for p in axis_px)
        if a == b:
            raise CheckError("'axis_px': its two points coincide, no line")
    if axis_label is not None and not isinstance(axis_label, str | int | float):
        raise CheckError(f"'axis_label' must be a label value, got {axis_label!r}")
    if axis_question is not None and (not isinstance(axis_question, str) or not axis_question):
        raise CheckError(f"'axis_question' must be a question id, got {axis_question!r}")
    if axis_edge not in AXIS_EDGES:
        raise CheckError(f"'axis_edge' must be one of {', '.join(AXIS_EDGES)}, got {axis_edge!r}")
    if label_field is not None and (not isinstance(label_field, str) or not label_field):
        raise CheckError(f"'label_field' must be a field name or null, got {label_field!r}")
    if _number(tolerance_px, "'tolerance_px'") <= 0:
        raise CheckError("'tolerance_px' must be positive")


def _axis_of(view: ElementView, edge: str, source: str) -> _Axis:
    """A line or ray element gives its line; a region (box, polygon) the named edge."""
    geometry = view.geometry
    if isinstance(geometry, Line):
        axis = _Axis.through(geometry.p1, geometry.p2, source)
        return _Axis(axis.point, axis.normal, axis.source, view)
    if view.element.kind not in ("box", "polygon"):
        raise CheckError(f"{source} is a {view.element.kind}: the line needs a line or a region")
    x1, y1, x2, y2 = (float(view.value(k)) for k in ("x1", "y1", "x2", "y2"))
    ends = {
        "top": ((x1, y1), (x2, y1)),  # ordered so that the normal points out of the region
        "bottom": ((x2, y2), (x1, y2)),
        "left": ((x1, y2), (x1, y1)),
        "right": ((x2, y1), (x2, y2)),
    }[edge]
    axis = _Axis.through(*ends, f"{source}'s {edge} edge")
    return _Axis(axis.point, axis.normal, axis.source, view)


def _find_axis(
    elements: Views,
    *,
    axis_y_px: float | None,
    axis_px: Sequence[Sequence[float]] | None,
    axis_label: Any,
    axis_question: str | None,
    axis_edge: str,
    label_field: str | None,
    states: Mapping[str, Views] | None,
) -> _Axis:
    if axis_y_px is not None:
        y = float(axis_y_px)
        return _Axis.through((0.0, y), (1.0, y), f"y = {_fmt(y)}")
    if axis_px is not None:
        a, b = axis_px
        return _Axis.through(a, b, f"the line {list(a)}-{list(b)}")
    if axis_question is not None:
        if states is None or axis_question not in states:
            raise CheckError(f"no grounding state for question {axis_question!r} was given")
        found = list(states[axis_question])
        if len(found) != 1:
            raise CheckError(
                f"question {axis_question!r} grounded {len(found)} elements; the reflecting "
                "line needs exactly one"
            )
        return _axis_of(found[0], axis_edge, f"#{found[0].element.id} of {axis_question!r}")
    field = label_field or "label"
    found = [v for v in elements if v.has(field) and _same(v.value(field), axis_label)]
    if len(found) != 1:
        raise CheckError(
            f"{len(found)} elements have {field} = {_fmt(axis_label)}; the reflecting line "
            "needs exactly one (was it grounded?)"
        )
    return _axis_of(found[0], axis_edge, f"#{found[0].element.id} ({field}={_fmt(axis_label)})")


def _groups(views: Views, label_field: str | None) -> dict[str, Views]:
    """Elements that may pair: those sharing a label, or all of them when none has one."""
    if label_field is None:
        return {"": views}
    labelled = [v for v in views if v.has(label_field)]
    if not labelled:
        return {"": views}
    if len(labelled) != len(views):
        bare = [f"#{v.element.id}" for v in views if v not in labelled]
        raise CheckError(
            f"elements {', '.join(bare)} have no {label_field!r} field while others do: "
            "give label_field=null to pair them by position alone"
        )
    groups: dict[str, Views] = {}
    for v in views:
        groups.setdefault(normalize_text(str(v.value(label_field))), []).append(v)
    return groups


@dataclass(frozen=True)
class _Pair:
    a: ElementView
    b: ElementView
    centre_px: float
    outline_px: float

    def text(self) -> str:
        a, b = self.a.element.id, self.b.element.id
        left = f"#{a} (crossing the line)" if a == b else f"#{a}↔#{b}"
        return f"{left} centre off {self.centre_px:.1f} px, outline off {self.outline_px:.1f} px"


def _shape(view: ElementView) -> Any:
    shape = view.geometry.to_shapely()
    if shape.is_empty:
        raise CheckError(f"element #{view.element.id} has an empty shape")
    return shape


def _compare(axis: _Axis, a: ElementView, b: ElementView) -> _Pair:
    """How far b lies from the mirror image of a: its centre, and its outline.

    Outlines are compared as convex hulls (Hausdorff distance), so a ripple that
    notches a reflection does not count while a shift, a resize or a flip does.
    """
    mirrored = axis.reflect(_shape(a))
    other = _shape(b)
    ca, cb = mirrored.centroid, other.centroid
    centre = math.hypot(ca.x - cb.x, ca.y - cb.y)
    hull_a, hull_b = mirrored.convex_hull.boundary, other.convex_hull.boundary
    outline = float(shapely.hausdorff_distance(hull_a, hull_b, densify=0.1))
    return _Pair(a, b, centre, outline)


def _pair_group(axis: _Axis, views: Views) -> tuple[list[_Pair], list[ElementView]]:
    """Pairs across the line (least total centre miss) and the elements left without one."""
    pairs: list[_Pair] = []
    ahead: Views = []
    behind: Views = []
    for v in views:
        dists = [axis.side(np.array(p)) for p in _outline_points(v)]
        if min(dists) < -STRADDLE_PX and max(dists) > STRADDLE_PX:
            pairs.append(_compare(axis, v, v))  # object and reflection drawn as one region
        elif sum(dists) >= 0:
            ahead.append(v)
        else:
            behind.append(v)
    if ahead and behind:
        mirrored = [axis.reflect(_shape(a).centroid) for a in ahead]
        centres = [_shape(b).centroid for b in behind]
        cost = np.array([[m.distance(c) for c in centres] for m in mirrored])
        rows, cols = linear_sum_assignment(cost)
        for i, j in zip(rows, cols, strict=True):
            pairs.append(_compare(axis, ahead[int(i)], behind[int(j)]))
        ahead = [v for i, v in enumerate(ahead) if i not in {int(r) for r in rows}]
        behind = [v for j, v in enumerate(behind) if j not in {int(c) for c in cols}]
    return pairs, [*ahead, *behind]


def _outline_points(view: ElementView) -> list[tuple[float, float]]:
    shape = _shape(view)
    hull = shape.convex_hull
    coords = hull.exterior.coords if hasattr(hull, "exterior") else hull.coords
    return [(float(x), float(y)) for x, y in coords]


@register_check("mirrored", validate=_validate(_mirrored_args))
def mirrored(
    elements: Views,
    state: StateFile | None,
    *,
    axis_y_px: float | None = None,
    axis_px: Sequence[Sequence[float]] | None = None,
    axis_label: str | None = None,
    axis_question: str | None = None,
    axis_edge: str = "top",
    label_field: str | None = "label",
    tolerance_px: float = 10.0,
    states: Mapping[str, Views] | None = None,
) -> Result:
    """Each object and its reflection are mirror images about a line (water, a mirror).

    The line: ``axis_y_px`` (horizontal), ``axis_px`` (two points), ``axis_label``
    (the element of this grounding whose ``label_field`` has that value; a region
    gives its ``axis_edge``, the water its top) or ``axis_question`` (the one element
    another question grounded). Elements pair across the line, within the same
    ``label_field`` value when they have one; each pair passes when the mirror image
    of one lies within ``tolerance_px`` of the other, centre and outline (convex
    hulls: a ripple's notch does not count; a shifted, resized or unflipped
    reflection fails). An element left without a
    partner fails; one crossing the line must be its own mirror image.
    """
    _mirrored_args(
        axis_y_px, axis_px, axis_label, axis_question, axis_edge, label_field, tolerance_px
    )
    axis = _find_axis(
        elements,
        axis_y_px=axis_y_px,
        axis_px=axis_px,
        axis_label=axis_label,
        axis_question=axis_question,
        axis_edge=axis_edge,
        label_field=label_field,
        states=states,
    )
    views = [v for v in elements if v is not axis.element]
    if not views:
        raise CheckError(f"no elements besides the reflecting line ({axis.source}) to compare")
    pairs: list[_Pair] = []
    alone: list[ElementView] = []
    for _, group in sorted(_groups(views, label_field).items()):
        found, left = _pair_group(axis, group)
        pairs += found
        alone += left
    bad = [p for p in pairs if max(p.centre_px, p.outline_px) > tolerance_px]
    ok = not bad and not alone
    parts = [f"line: {axis.source}", f"{len(pairs)} pair(s)"]
    if pairs:
        worst = max(pairs, key=lambda p: max(p.centre_px, p.outline_px))
        parts.append(f"worst {worst.text()}")
    if bad:
        parts.append(f"{len(bad)} beyond {_fmt(float(tolerance_px))} px: {bad[0].text()}")
    if alone:
        ids = ", ".join(f"#{v.element.id}" for v in alone)
        parts.append(f"without a reflection across the line: {ids}")
    return float(ok), (
        f"{'; '.join(parts)}; tolerance {_fmt(float(tolerance_px))} px → {'pass' if ok else 'fail'}"
    )
