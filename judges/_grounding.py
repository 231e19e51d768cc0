"""Prompts, schemas and tolerant parsers for grounding through a judge.

A proposal asks for help lines in the model's native coordinate convention
(see :mod:`groundeval.judges._coords`) and converts them here, once, into
pixels of the original image. A verification shows the numbered overlay and
asks for a verdict per mark plus what is missing. Malformed elements are
dropped with a stated reason, never guessed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, NamedTuple

import jsonschema

from groundeval.judges._coords import box_to_xyxy_px, point_to_px, px_to_point, xyxy_px_to_box
from groundeval.judges._parse import clip, drop_nonfinite, load_json
from groundeval.state import Element

KIND_OF_HELPER = {
    "boxes": "box",
    "text": "box",
    "boundary": "polygon",
    "line": "line",
    "points": "point",
}
BOX_KEY = {
    "box_2d_1000": "box_2d",
    "qwen25_px": "bbox_2d",
    "xyxy_1000": "bbox_2d",
    "xyxy_norm": "box",
}
POINT_KEY = {
    "box_2d_1000": "point",
    "qwen25_px": "point_2d",
    "xyxy_1000": "point_2d",
    "xyxy_norm": "point",
}
_BOX_ALIASES = ("box_2d", "bbox_2d", "bbox", "box")
_POINT_ALIASES = ("point", "point_2d", "pt")
_POINTS_ALIASES = ("points", "polygon", "line")


def _describe(convention: str, input_wh: tuple[int, int] | None) -> str:
    """How the prompt explains the coordinate convention to the model."""
    if convention == "box_2d_1000":
        return (
            "Boxes are [ymin, xmin, ymax, xmax] and points are [y, x], "
            "on a 0-1000 grid over the whole image."
        )
    if convention == "qwen25_px":
        w, h = input_wh or (0, 0)
        return (
            f"Boxes are [x1, y1, x2, y2] and points are [x, y] in pixels of the image "
            f"as you see it ({w}x{h})."
        )
    if convention == "xyxy_1000":
        return "Boxes are [x1, y1, x2, y2] and points are [x, y], on a 0-1000 grid."
    return "Boxes are [x1, y1, x2, y2] and points are [x, y], as fractions 0-1 of width and height."


def propose_schema(
    helper: str, fields: dict[str, dict[str, Any]], convention: str
) -> dict[str, Any]:
    """JSON Schema of a proposal reply for a helper kind and its typed fields."""
    kind = KIND_OF_HELPER[helper]
    number = {"type": "number"}
    pair = {"type": "array", "items": number, "minItems": 2, "maxItems": 2}
    props: dict[str, Any] = {"label": {"type": "string"}}
    if kind == "box":
        geo = BOX_KEY[convention]
        props[geo] = {"type": "array", "items": number, "minItems": 4, "maxItems": 4}
    elif kind == "point":
        geo = POINT_KEY[convention]
        props[geo] = pair
    else:
        geo = "points"
        lo, hi = (2, 2) if kind == "line" else (3, 64)
        props[geo] = {"type": "array", "items": pair, "minItems": lo, "maxItems": hi}
    all_fields = _fields(helper, fields)
    required = ["label", geo]
    if all_fields:
        props["fields"] = {
            "type": "object",
            "properties": all_fields,
            "required": sorted(all_fields),
        }
        required.append("fields")
    element = {"type": "object", "properties": props, "required": required}
    return {
        "type": "object",
        "properties": {"elements": {"type": "array", "items": element}},
        "required": ["elements"],
    }


def _fields(helper: str, fields: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out = dict(fields)
    if helper == "text":
        out.setdefault("text", {"type": "string"})
    return out


def build_propose_prompt(
    *,
    helper: str,
    target: str,
    ask: str,
    fields: dict[str, dict[str, Any]],
    convention: str,
    size_wh: tuple[int, int],
    input_wh: tuple[int, int] | None = None,
    accepted: Sequence[Element] = (),
    rejected: Sequence[Element] = (),
    missing: Sequence[str] = (),
) -> str:
    """The proposal prompt: what to mark, how, in which numbers, and last round's feedback."""
    kind = KIND_OF_HELPER[helper]
    what = target or ask
    how = {
        "box": f"a tight box ({BOX_KEY[convention]}) around each {what}",
        "polygon": f"the boundary of each {what} as a polygon (points: 3+ vertices in order)",
        "line": f"each {what} as a line (points: exactly two, from its start to where it points)",
        "point": f"one point ({POINT_KEY[convention]}) on each {what}",
    }[kind]
    lines = [
        "You mark evidence in an AI-generated image so that a program can check it.",
        f"The question being checked: {ask}",
        f"Mark {how}. Give every element a short label.",
        _describe(convention, input_wh),
    ]
    all_fields = _fields(helper, fields)
    if all_fields:
        lines.append(
            "For each element also fill 'fields': " + json.dumps(all_fields, sort_keys=True)
        )
    if accepted:
        lines.append("Already accepted (keep them, do not repeat them):")
        lines += [f"  - {_geometry_text(e, convention, size_wh, input_wh)}" for e in accepted]
    if rejected:
        lines.append("Rejected last round (fix or drop them):")
        lines += [
            f"  - {_geometry_text(e, convention, size_wh, input_wh)}: {e.reason or 'rejected'}"
            for e in rejected
        ]
    if missing:
        lines.append("Missing last round (add them): " + "; ".join(missing))
    if accepted or rejected or missing:
        lines.append("Return only new or corrected elements.")
    lines.append('Reply with JSON only: {"elements": [...]}; an empty list if there is nothing.')
    return "\n".join(lines)


def _geometry_text(
    e: Element, convention: str, size_wh: tuple[int, int], input_wh: tuple[int, int] | None
) -> str:
    label = e.fields.get("label", e.kind)
    if e.xyxy_px is not None:
        box = xyxy_px_to_box(e.xyxy_px, convention, size_wh, input_wh=input_wh)
        return f"#{e.id} {label} {BOX_KEY[convention]}={box}"
    pts = [px_to_point(p, convention, size_wh, input_wh=input_wh) for p in e.points_px or []]
    return f"#{e.id} {label} points={pts}"


class ParsedProposal(NamedTuple):
    """A proposal reply read into elements, with every proposal that was not kept and why."""

    elements: list[Element]
    """Usable elements, in original pixels, numbered 1..n."""
    dropped: list[str]
    """One reason per unusable proposal (``proposal 3: xmin=NaN is not a finite number``)."""
    notes: list[str]
    """Problems with kept elements (a declared field missing or of the wrong type)."""


def parse_proposal(
    text: str,
    *,
    helper: str,
    fields: dict[str, dict[str, Any]],
    convention: str,
    size_wh: tuple[int, int],
    input_wh: tuple[int, int] | None = None,
) -> ParsedProposal:
    """Elements in original pixels; every proposal that cannot be used is listed with its reason.

    A proposal with a NaN, infinite, negative, swapped or out-of-image
    coordinate is never kept and never dropped silently.

    Raises:
        ValueError: the reply holds no list of elements at all.
    """
    data = load_json(text, finite=False)
    items = data.get("elements") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError(f"proposal holds no 'elements' list: {clip(text)}")
    kind = KIND_OF_HELPER[helper]
    declared = _fields(helper, fields)
    out = ParsedProposal([], [], [])
    for number, item in enumerate(items, start=1):
        try:
            if not isinstance(item, dict):
                raise ValueError(f"is not an object but {type(item).__name__}")
            geometry = _geometry(item, kind, convention, size_wh, input_wh)
            values, notes = _typed_fields(item, declared)
            label = item.get("label")
            if isinstance(label, str) and label:
                values.setdefault("label", label[:200])
            element = Element.model_validate(
                {"id": len(out.elements) + 1, "kind": kind, "fields": values, **geometry}
            )
        except ValueError as exc:
            out.dropped.append(f"proposal {number}: {exc}".split("\n", 1)[0][:300])
            continue
        out.elements.append(element)
        out.notes.extend(f"proposal {number}: {n}" for n in notes)
    return out


def _geometry(
    item: dict[str, Any],
    kind: str,
    convention: str,
    size_wh: tuple[int, int],
    input_wh: tuple[int, int] | None,
) -> dict[str, Any]:
    if kind == "box":
        raw = _first(item, _BOX_ALIASES)
        return {"xyxy_px": box_to_xyxy_px(raw, convention, size_wh, input_wh=input_wh)}
    if kind == "point":
        raw = _first(item, _POINT_ALIASES)
        return {"points_px": [point_to_px(raw, convention, size_wh, input_wh=input_wh)]}
    raw = _first(item, _POINTS_ALIASES)
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence):
        raise ValueError(f"points must be a list of points, got {raw!r:.60}")
    need = 2 if kind == "line" else 3
    if (kind == "line" and len(raw) != 2) or len(raw) < need:
        raise ValueError(
            f"a {kind} needs {'exactly ' if kind == 'line' else ''}{need} points, got {len(raw)}"
        )
    points = []
    for number, p in enumerate(raw, start=1):
        try:
            points.append(point_to_px(p, convention, size_wh, input_wh=input_wh))
        except ValueError as exc:
            raise ValueError(f"point {number}: {exc}") from None
    return {"points_px": points}


def _first(item: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in item:
            return item[key]
    raise ValueError(f"has none of {list(keys)}")


def _typed_fields(
    item: dict[str, Any], declared: dict[str, dict[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    """Declared fields that validate against their schema (light coercion of numbers)."""
    raw = item.get("fields")
    raw = raw if isinstance(raw, dict) else {k: item[k] for k in declared if k in item}
    raw = drop_nonfinite(raw)  # a NaN field value is missing, not a number
    values: dict[str, Any] = {}
    notes: list[str] = []
    for name, schema in declared.items():
        if name not in raw:
            notes.append(f"field {name!r} missing")
            continue
        value = _coerce(raw[name], schema)
        try:
            jsonschema.validate(value, schema)
        except jsonschema.ValidationError as exc:
            notes.append(f"field {name!r}: {exc.message[:120]}")
            continue
        except jsonschema.SchemaError as exc:
            raise ValueError(
                f"field {name!r} has a bad schema in the program: {exc.message}"
            ) from None
        values[name] = value
    return values, notes


def _coerce(value: Any, schema: dict[str, Any]) -> Any:
    kind = schema.get("type")
    try:
        if kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            return int(value)
        if kind == "integer" and isinstance(value, float) and value.is_integer():
            return int(value)
        if kind == "number" and isinstance(value, str):
            return float(value)
    except ValueError:
        return value
    return value
