"""The authoring catalogue: everything a program may name, read from the live registries.

``groundeval author`` shows this to the judge that drafts programs, so a proposer,
verifier or check registered by a plugin appears in the next draft's prompt with
no prompt edited. Nothing here is hand-listed except what a proposer does not
declare itself (the fields the built-in proposers fill), and a proposer may
declare that too with a ``fills`` class attribute.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, get_args

from groundeval.grounding import PROPOSERS, VERIFIERS, describe_params
from groundeval.programs._checks import RESERVED_ARGS, _registry
from groundeval.programs._expr_static import FUNCTION_NAMES, NAMES
from groundeval.programs._model import Helper
from groundeval.programs._protocols import PROTOCOLS
from groundeval.state import Registry

BUILTIN_FILLS: dict[str, dict[str, Any]] = {
    "opencv.dice": {"kind": "box", "fields": {"pips": "integer 1-6"}},
    "yolo.dice": {"kind": "box", "fields": {"pips": "integer 1-6", "confidence": "0-1"}},
    "opencv.circles": {"kind": "box", "fields": {"radius_px": "number", "center_px": "[x, y]"}},
    "opencv.blobs": {"kind": "box", "fields": {"radius_px": "number", "center_px": "[x, y]"}},
    "opencv.contours": {"kind": "box", "fields": {"area_px": "number", "radius_px": "number"}},
    "opencv.lines": {
        "kind": "ray",
        "fields": {"bearing_deg": "0 = up, clockwise", "length_px": "number"},
    },
    "opencv.color_region": {
        "kind": "polygon",
        "fields": {"label": "the range's label", "area_px": "number"},
    },
    "ocr": {"kind": "box", "fields": {"text": "string", "confidence": "0-1"}},
    "yolo": {"kind": "box", "fields": {"class_name": "string", "confidence": "0-1"}},
    "yoloworld": {"kind": "box", "fields": {"class_name": "string", "confidence": "0-1"}},
    "sam": {"kind": "polygon", "fields": {"area_px": "number", "confidence": "0-1"}},
    "fastsam": {"kind": "polygon", "fields": {"area_px": "number", "confidence": "0-1"}},
    "judge": {"kind": "per helper", "fields": "the spec's own 'fields' (any JSON Schema)"},
}
"""What the built-in proposers fill, for those that do not declare ``fills``."""

ELEMENT_NAMES_DOC = (
    "each element e has e.id, e.kind, e.x1, e.y1, e.x2, e.y2, e.cx, e.cy, e.w, e.h, e.area "
    "plus its fields (e.pips, e.text, ...)"
)


def _first_line(obj: Any) -> str:
    doc = inspect.getdoc(obj) or ""
    return doc.strip().split("\n", 1)[0]


def _json_safe(value: Any) -> Any:
    """A default value as plain JSON (tuples to lists, anything odd to its repr)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return repr(value)


def _params(registry: Registry[Any], name: str) -> dict[str, Any] | str:
    """Name -> ``{"type", "default"}`` of every parameter an entry declares, or why not."""
    try:
        described = describe_params(registry.params_model(name))
    except TypeError as exc:  # a plugin's broken declaration: say so, keep the catalogue
        return f"declared wrongly: {exc}"
    if described is None:
        return "none declared"
    return {
        key: {k: _json_safe(v) if k == "default" else v for k, v in spec.items()}
        for key, spec in described.items()
    }


def proposer_entries() -> list[dict[str, Any]]:
    """Every registered proposer: name, what it is for, typed parameters, what it fills."""
    entries = []
    for name in PROPOSERS.names():
        factory = PROPOSERS[name]
        fills = getattr(factory, "fills", None) or BUILTIN_FILLS.get(name)
        entry: dict[str, Any] = {"name": name, "about": _first_line(factory)}
        entry["params"] = _params(PROPOSERS, name)
        entry["fills"] = _json_safe(fills) if fills is not None else "undeclared"
        entries.append(entry)
    return entries


def verifier_entries() -> list[dict[str, Any]]:
    """Every registered verifier: what it is for and, if it has settings, where and which."""
    entries = []
    for name in VERIFIERS.names():
        factory = VERIFIERS[name]
        entry: dict[str, Any] = {"name": name, "about": _first_line(factory)}
        key = getattr(factory, "params_key", None)
        if isinstance(key, str) and key:
            entry["settings"] = {"in": f"params.{key}", "params": _params(VERIFIERS, name)}
        entries.append(entry)
    return entries


def _annotation(param: inspect.Parameter) -> str:
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return "any"
    return ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))


def check_entries() -> list[dict[str, Any]]:
    """Every named check with its argument schema (name, type, required, default)."""
    entries = []
    for name, entry in sorted(_registry().items()):
        args: dict[str, Any] = {}
        params = list(inspect.signature(entry.fn).parameters.values())[2:]
        for p in params:
            if p.name in RESERVED_ARGS or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
                continue
            spec: dict[str, Any] = {"type": _annotation(p)}
            if p.default is inspect.Parameter.empty:
                spec["required"] = True
            else:
                spec["default"] = _json_safe(p.default)
            args[p.name] = spec
        entries.append(
            {
                "name": name,
                "about": _first_line(entry.fn),
                "args": args,
                "reads_other_questions": entry.wants_states,
            }
        )
    return entries


def expression_entry() -> dict[str, Any]:
    """The safe expression language's names and functions."""
    return {
        "names": list(NAMES),
        "functions": list(FUNCTION_NAMES),
        "elements": ELEMENT_NAMES_DOC,
        "states": 'states["h1"]: the elements of question h1 (to compare groundings)',
        "forbidden": "imports, attributes other than element fields, dunders, lambdas, I/O",
        "example": "count(elements) == 5 and sum(e.pips for e in elements) == 17",
    }


def protocol_entries() -> list[dict[str, Any]]:
    """Every registered scoring protocol (a program's ``scoring``) with what it computes."""
    return [{"name": d["name"], "about": d["about"]} for d in PROTOCOLS.describe()]


def judge_entries() -> list[dict[str, Any]]:
    """Every registered judge backend (``--judge <name>:...``) with what it talks to."""
    import groundeval.judges  # noqa: F401  (registers the built-in backends)

    judges = Registry.registries().get("judge backend")
    if judges is None:  # pragma: no cover - the import above always creates it
        return []
    return [{"name": d["name"], "about": d["about"]} for d in judges.describe()]


def build_catalogue() -> dict[str, Any]:
    """The whole catalogue as plain JSON data (what the drafting judge is shown)."""
    return {
        "protocols": protocol_entries(),
        "judges": judge_entries(),
        "helpers": list(get_args(Helper)),
        "proposers": proposer_entries(),
        "verifiers": verifier_entries(),
        "checks": check_entries(),
        "expression": expression_entry(),
    }


def catalogue_text(catalogue: dict[str, Any] | None = None) -> str:
    """The catalogue as compact, stable JSON (sorted keys) for a prompt."""
    data = catalogue if catalogue is not None else build_catalogue()
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


__all__ = [
    "BUILTIN_FILLS",
    "build_catalogue",
    "catalogue_text",
    "check_entries",
    "expression_entry",
    "judge_entries",
    "proposer_entries",
    "protocol_entries",
    "verifier_entries",
]
