"""Tolerant reading of judge replies: fenced, wrapped in prose, truncated or repaired JSON.

Models wrap JSON in code fences, add a sentence before it, stop half-way, or
write ``True``/``NaN``. :func:`load_json` recovers what can be recovered and
returns ``None`` otherwise; it never raises. :func:`parse_reply` then validates
into a pydantic model and says why when it cannot. The raw text is always kept
by the callers, next to what was parsed.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar

import json_repair
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)(?:```|$)", re.DOTALL)


def load_json(text: str, *, finite: bool = True) -> Any:
    """The JSON value in a reply (object or array), or ``None`` when there is none.

    ``NaN`` and infinities become ``None`` unless ``finite=False`` (geometry
    parsers keep them, to name the coordinate that was not a number).

    >>> load_json('Sure! ```json {"a": 1} ```')
    {'a': 1}
    >>> load_json('{"a": [1, 2') is not None
    True
    >>> load_json("no json here") is None
    True
    """
    if not isinstance(text, str) or not text.strip():
        return None
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except (ValueError, RecursionError):
            try:
                value = json_repair.loads(candidate)
            except Exception:  # json_repair raises on some pathological input
                continue
        if isinstance(value, (dict, list)):
            return drop_nonfinite(value) if finite else value
    return None


def _candidates(text: str) -> list[str]:
    """Places JSON may start: fenced blocks first, then from the first brace or bracket."""
    out = [m.group(1) for m in _FENCE.finditer(text) if m.group(1).strip()]
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if starts:
        out.append(text[min(starts) :])
    return out


def drop_nonfinite(value: Any, depth: int = 0) -> Any:
    """Replace NaN and infinities by ``None`` so no caller does arithmetic on them."""
    if depth > 64:
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): drop_nonfinite(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [drop_nonfinite(v, depth + 1) for v in value]
    return value


def parse_reply(text: str, model: type[M]) -> M:
    """Validate a reply into ``model``; ``ValueError`` says what was wrong.

    Raises:
        ValueError: no JSON could be recovered, or it does not fit the model.
    """
    data = load_json(text)
    if data is None:
        raise ValueError(f"reply holds no JSON: {clip(text)}")
    if isinstance(data, list) and len(model.model_fields) == 1:
        # a bare list where an object with one list field was asked for
        data = {next(iter(model.model_fields)): data}
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        raise ValueError(f"reply does not fit {model.__name__}: {where}: {first['msg']}") from None


def clip(text: str, limit: int = 200) -> str:
    """A reply shortened for an error message, with control characters escaped."""
    text = json.dumps(text)[1:-1]
    return text if len(text) <= limit else text[:limit] + "…"
