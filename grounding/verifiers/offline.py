"""The offline verifier: geometric and schema sanity, decided by code with no model.

It cannot tell whether a box really holds a die; it can tell whether the box is
inside the image, big enough to mean something, not a copy of another box, that
its fields match the program's JSON Schemas, and whether the count is within
what the spec allows. Each rejected element gets a reason the next round (and a
person reading the state file) can act on.

What a proposer says it could not explain (``Proposal.unexplained``), distrusts
(``problems``) or had to drop (``dropped``) withholds the question too, but that
rule lives in the loop, so it holds behind every verifier, this one included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar

import numpy as np
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import NonNegativeFloat

from groundeval.grounding._geometry import (
    SAME_OBJECT_IOU,
    SAME_OBJECT_PX,
    element_points,
    element_xyxy,
    same_object,
)
from groundeval.grounding._protocol import Verification, VerifyRequest, register_verifier
from groundeval.state import Element, GroundSpec

HELPER_KINDS: dict[str, tuple[str, ...]] = {
    "boxes": ("box",),
    "text": ("box",),
    "boundary": ("polygon",),
    "line": ("line", "ray"),
    "points": ("point",),
}
"""Element kinds each helper may return."""

SETTINGS_KEY = "offline_verifier"
"""Key in ``GroundSpec.params`` whose dict overrides :class:`OfflineVerifier` settings."""


@register_verifier("offline")
@dataclass(frozen=True)
class OfflineVerifier:
    """Accepts an element only if it passes every check below (first failure is the reason).

    Settings can be overridden per question with ``params: {offline_verifier: {...}}``.
    """

    params_key: ClassVar[str] = SETTINGS_KEY
    """The ``ground.params`` key holding this verifier's settings (``validate`` checks them)."""
    param_types: ClassVar[dict[str, Any]] = {
        "min_size_px": NonNegativeFloat,
        "inside_tolerance": NonNegativeFloat,
        "duplicate_iou": NonNegativeFloat,
        "duplicate_px": NonNegativeFloat,
    }
    """Every setting is a number >= 0 (what :meth:`with_overrides` enforces at run time)."""

    name: str = "offline"
    min_size_px: float = 3.0
    """Smallest width and height of a box or polygon, and shortest line."""
    inside_tolerance: float = 0.02
    """How far outside the image a point may lie, as a share of the image's long side."""
    duplicate_iou: float = SAME_OBJECT_IOU
    """Boxes or polygons overlapping an earlier one by this IoU are copies."""
    duplicate_px: float = SAME_OBJECT_PX
    """Points, lines and rays whose points all lie this close to an earlier one are copies."""

    async def verify(self, request: VerifyRequest) -> Verification:
        """Give every element a verdict; say what is missing when there are too few."""
        height, width = request.image_bgr.shape[:2]
        settings = self.with_overrides(request.spec.params.get(SETTINGS_KEY) or {})
        return settings.check(request.elements, request.spec, (width, height))

    def with_overrides(self, overrides: dict[str, Any]) -> OfflineVerifier:
        """A copy with settings taken from a program's params (unknown keys are an error)."""
        known = {f.name for f in fields(self)} - {"name"}
        if not isinstance(overrides, dict) or set(overrides) - known:
            bad = sorted(set(overrides) - known) if isinstance(overrides, dict) else overrides
            raise ValueError(
                f"params.{SETTINGS_KEY}: unknown setting(s) {bad}; known: {sorted(known)}"
            )
        values: dict[str, Any] = {}
        for key, value in overrides.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(
                    f"params.{SETTINGS_KEY}.{key}: expected a number >= 0, got {value!r}"
                )
            values[key] = float(value)
        return replace(self, **values)

    def check(
        self, elements: list[Element], spec: GroundSpec, size_wh: tuple[int, int]
    ) -> Verification:
        """The verdicts, synchronously (the protocol method wraps this)."""
        validators = _field_validators(spec)
        reasons: dict[int, str] = {}
        for e in elements:
            reason = self._problem(e, spec.helper, size_wh, validators)
            if reason:
                reasons[e.id] = reason
        self._mark_duplicates(elements, reasons)
        missing = self._count(elements, spec, reasons)
        judged = [
            e.model_copy(
                update={
                    "verdict": "rejected" if e.id in reasons else "accepted",
                    "reason": reasons.get(e.id, "passes the offline checks"),
                }
            )
            for e in elements
        ]
        return Verification(judged, missing=missing, raw="")

    def _problem(
        self,
        e: Element,
        helper: str,
        size_wh: tuple[int, int],
        validators: dict[str, Draft202012Validator],
    ) -> str:
        allowed = HELPER_KINDS.get(helper)
        if allowed and e.kind not in allowed:
            return f"a {e.kind} is not a {helper} help line (expected {' or '.join(allowed)})"
        points = element_points(e)
        if not all(math.isfinite(v) for p in points for v in p):
            return "coordinates are not finite numbers"
        width, height = size_wh
        tol = self.inside_tolerance * max(width, height)
        outside = [
            p for p in points if not (-tol <= p[0] <= width + tol and -tol <= p[1] <= height + tol)
        ]
        if outside:
            x, y = outside[0]
            return f"outside the {width}x{height} image (point {x:.1f}, {y:.1f})"
        small = self._too_small(e, points)
        if small:
            return small
        for name, validator in validators.items():
            if name not in e.fields:
                return f"field {name!r} is missing"
            error = next(iter(validator.iter_errors(e.fields[name])), None)
            if error is not None:
                return f"field {name!r}: {error.message}"
        return ""

    def _too_small(self, e: Element, points: list[tuple[float, float]]) -> str:
        x1, y1, x2, y2 = element_xyxy(e)
        m = self.min_size_px
        if e.kind in ("box", "polygon") and (x2 - x1 < m or y2 - y1 < m):
            return f"smaller than {m:g} px ({x2 - x1:.1f} x {y2 - y1:.1f})"
        if e.kind == "polygon" and _shoelace(points) < m * m:
            return f"polygon encloses less than {m * m:g} px² (degenerate or self-crossing)"
        if e.kind in ("line", "ray") and math.dist(points[0], points[1]) < m:
            return f"shorter than {m:g} px"
        return ""

    def _mark_duplicates(self, elements: list[Element], reasons: dict[int, str]) -> None:
        kept: list[Element] = []
        for e in elements:
            if e.id in reasons:
                continue
            twin = next((k for k in kept if self.same_object(k, e)), None)
            if twin is None:
                kept.append(e)
            else:
                reasons[e.id] = f"near-duplicate of #{twin.id}"

    def same_object(self, a: Element, b: Element) -> bool:
        """True when ``b`` marks the same thing as ``a`` (same kind, near-identical geometry)."""
        return same_object(a, b, min_iou=self.duplicate_iou, max_px=self.duplicate_px)

    def _count(
        self, elements: list[Element], spec: GroundSpec, reasons: dict[int, str]
    ) -> list[str]:
        """Too few -> what is missing; too many -> the least confident / smallest are rejected."""
        good = [e for e in elements if e.id not in reasons]
        n = len(good)
        if spec.min_count is not None and n < spec.min_count:
            return [
                f"{spec.min_count - n} more {spec.helper} needed: {n} passed the checks, "
                f"the spec wants at least {spec.min_count}"
            ]
        if spec.max_count is not None and n > spec.max_count:
            excess = sorted(good, key=lambda e: (_confidence(e), _extent(e), -e.id))
            for e in excess[: n - spec.max_count]:
                reasons[e.id] = (
                    f"{n} elements passed but the spec allows at most {spec.max_count}; "
                    "this is among the least confident / smallest"
                )
        return []


def _field_validators(spec: GroundSpec) -> dict[str, Draft202012Validator]:
    validators = {}
    for name, schema in spec.fields.items():
        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(
                f"ground.fields.{name}: not a valid JSON Schema ({exc.message})"
            ) from exc
        validators[name] = Draft202012Validator(schema)
    return validators


def _shoelace(points: list[tuple[float, float]]) -> float:
    xs = np.array([p[0] for p in points])
    ys = np.array([p[1] for p in points])
    return float(abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1))) / 2)


def _confidence(e: Element) -> float:
    value = e.fields.get("confidence", 1.0)
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else 1.0


def _extent(e: Element) -> float:
    x1, y1, x2, y2 = element_xyxy(e)
    if e.kind in ("box", "polygon"):
        return (x2 - x1) * (y2 - y1)
    return math.hypot(x2 - x1, y2 - y1)
