"""Read-only views of grounded elements, the thing every check reads.

A check never sees a mutable ``Element``: it sees an ``ElementView`` whose
attributes are the element's typed fields (``e.pips``, ``e.text``) and a fixed
set of geometric names (``id``, ``kind``, ``x1`` … ``area``). The safe expression
language resolves attributes only through :meth:`ElementView.value`, so no method
or dunder of the view is ever reachable from a program file.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

from groundeval.grounding import Geometry, Line, bounds_xyxy, distance, first_hit, geometry_of
from groundeval.grounding import inside as _inside
from groundeval.grounding import iou as _iou
from groundeval.state import Element

GEOMETRY_NAMES: tuple[str, ...] = (
    "id",
    "kind",
    "x1",
    "y1",
    "x2",
    "y2",
    "cx",
    "cy",
    "w",
    "h",
    "area",
)
"""Names every element view has, whatever its fields; they win over a field of the same name."""


_GEOMETRY_SET = frozenset(GEOMETRY_NAMES)


def normalize_text(text: str) -> str:
    """Normalise text for comparison, in this order.

    1. Unicode NFKC (full-width letters, ligatures and compatibility forms fold);
    2. ``casefold`` (case-insensitive, ß → ss);
    3. every run of whitespace becomes one space;
    4. punctuation (Unicode category P*) and spaces are stripped from both ends.

    >>> normalize_text("  “Q3   REVENUE!” ")
    'q3 revenue'
    """
    s = " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())
    start, end = 0, len(s)
    while start < end and (s[start].isspace() or unicodedata.category(s[start]).startswith("P")):
        start += 1
    while end > start and (
        s[end - 1].isspace() or unicodedata.category(s[end - 1]).startswith("P")
    ):
        end -= 1
    return s[start:end]


class CheckError(ValueError):
    """A check could not be evaluated (bad expression, missing field, bad arguments).

    The runner records this as outcome ``error``, never as a fail.
    """


class TooCloseToCall(CheckError):
    """The verdict lies within the measurements' own uncertainty (``F_err`` fields).

    The runner records this as outcome ``withheld`` with the check's reason: the
    evidence was read, but it is too imprecise to say pass or fail.
    """


class ElementView:
    """Read-only view of one element: its fields by attribute plus its geometry."""

    __slots__ = ("_element", "_geometry", "_values")
    _element: Element
    _geometry: Geometry | None
    _values: dict[str, Any]

    def __init__(self, element: Element) -> None:
        fields = element.fields
        if _GEOMETRY_SET.isdisjoint(fields):  # the usual case: copied in C
            values = dict(fields)
        else:
            values = {k: v for k, v in fields.items() if k not in _GEOMETRY_SET}
        values["id"] = element.id
        values["kind"] = element.kind
        object.__setattr__(self, "_element", element)
        object.__setattr__(self, "_geometry", None)
        object.__setattr__(self, "_values", values)

    @property
    def element(self) -> Element:
        """The underlying element (a copy is not made; do not mutate it)."""
        return self._element

    @property
    def geometry(self) -> Geometry:
        """The element's shape (Box, Polygon, Line, Ray or Point), built on first use."""
        if self._geometry is not None:
            return self._geometry
        try:
            geometry = geometry_of(self._element)
        except ValueError as exc:
            raise CheckError(str(exc)) from exc
        x1, y1, x2, y2 = bounds_xyxy(geometry)
        cx, cy = geometry.centre
        area = float(geometry.to_shapely().area)
        self._values.update(x1=x1, y1=y1, x2=x2, y2=y2, cx=cx, cy=cy, area=area)
        self._values.update(w=x2 - x1, h=y2 - y1, id=self._element.id, kind=self._element.kind)
        object.__setattr__(self, "_geometry", geometry)
        return geometry

    @property
    def names(self) -> list[str]:
        """Field names first, then geometric names."""
        return [*self._element.fields, *GEOMETRY_NAMES]

    def has(self, name: str) -> bool:
        """True when the element has this field or geometric name."""
        return name in self._values or name in GEOMETRY_NAMES

    def value(self, name: str) -> Any:
        """A field or geometric value by name; :class:`CheckError` naming both when absent."""
        try:
            return self._values[name]  # fields, id, kind, and geometry once computed
        except KeyError:
            pass
        if name in GEOMETRY_NAMES:
            self.geometry  # noqa: B018  (computes and caches the geometric values)
            return self._values[name]
        fields = ", ".join(self._element.fields) or "none"
        raise CheckError(
            f"element #{self._element.id} ({self._element.kind}) has no field {name!r} "
            f"(fields: {fields}; geometry: {', '.join(GEOMETRY_NAMES)})"
        )

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return self.value(name)

    def __getitem__(self, name: str) -> Any:
        return self.value(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ElementView is read-only")

    def __repr__(self) -> str:
        return f"#{self._element.id}"


def views_of(elements: Iterable[Element]) -> list[ElementView]:
    """Views of elements, in the order given."""
    return [ElementView(e) for e in elements]


def describe_ids(views: Sequence[ElementView]) -> str:
    """``#1–#5`` for a run of ids, ``#1, #3, #4`` otherwise, ``none`` when empty."""
    ids = sorted(v.element.id for v in views)
    if not ids:
        return "none"
    if len(ids) > 2 and ids == list(range(ids[0], ids[-1] + 1)):
        return f"#{ids[0]}–#{ids[-1]}"
    return ", ".join(f"#{i}" for i in ids)


def _view(value: Any, what: str) -> ElementView:
    if not isinstance(value, ElementView):
        raise CheckError(f"{what} must be an element, got {type(value).__name__}")
    return value


def iou(a: Any, b: Any) -> float:
    """IoU of two elements' areas."""
    return _iou(_view(a, "iou() argument").geometry, _view(b, "iou() argument").geometry)


def inside(a: Any, b: Any, tolerance_px: float = 0.0) -> bool:
    """True when element ``a`` lies within element ``b`` (boundary counts)."""
    return _inside(
        _view(a, "inside() argument").geometry,
        _view(b, "inside() argument").geometry,
        tolerance_px=float(tolerance_px),
    )


def left_of(a: Any, b: Any, strict: bool = False) -> bool:
    """Centre of ``a`` left of centre of ``b``; ``strict``: a's right edge <= b's left edge."""
    va, vb = _view(a, "left_of() argument"), _view(b, "left_of() argument")
    if strict:
        return bool(va.value("x2") <= vb.value("x1"))
    return bool(va.value("cx") < vb.value("cx"))


def above(a: Any, b: Any, strict: bool = False) -> bool:
    """Centre of ``a`` above centre of ``b``; ``strict``: a's bottom edge <= b's top edge."""
    va, vb = _view(a, "above() argument"), _view(b, "above() argument")
    if strict:
        return bool(va.value("y2") <= vb.value("y1"))
    return bool(va.value("cy") < vb.value("cy"))


def element_distance(a: Any, b: Any) -> float:
    """Shortest distance in pixels between two elements' shapes."""
    return distance(
        _view(a, "distance() argument").geometry, _view(b, "distance() argument").geometry
    )


def first_hit_of(
    ray: Any, targets: Iterable[Any], tolerance_px: float = 0.0
) -> tuple[ElementView, tuple[float, float]] | None:
    """The element of ``targets`` a ray reaches first, and where; ``None`` if none.

    A line is read as a ray from its first point.
    """
    rv = _view(ray, "the ray")
    if not isinstance(rv.geometry, Line):
        raise CheckError(f"element #{rv.element.id} is a {rv.element.kind}, not a ray or line")
    candidates = [t for t in (_view(t, "a target") for t in targets) if t is not rv]
    found = first_hit(rv.geometry, [t.geometry for t in candidates], tolerance_px=tolerance_px)
    return None if found is None else (candidates[found.index], found.point_px)


def hits(ray: Any, targets: Iterable[Any], field: str = "id", tolerance_px: float = 0.0) -> Any:
    """Expression helper: ``field`` of the target a ray hits first, ``None`` when it hits none."""
    found = first_hit_of(ray, targets, tolerance_px=float(tolerance_px))
    return None if found is None else found[0].value(field)
