"""Built-in geometric checks: inside, overlaps, left_of / above, iou, line_hits.

Elements are named by id (the number on the overlay). Shapes come from
:mod:`groundeval.grounding._geometry`, so "inside" and "touch" mean what shapely
says (boundaries count).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from groundeval.grounding._geometry import Box, Line, intersects, overlap_area
from groundeval.grounding._geometry import iou as geometry_iou
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
