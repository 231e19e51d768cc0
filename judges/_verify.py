"""Verification through a judge: a verdict per numbered mark and what is missing.

The judge sees the overlay with numbered marks. A mark it gives no clear verdict
for is rejected with that reason, never accepted by default.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from groundeval.judges._parse import clip, load_json
from groundeval.state import Element

VERIFY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer"},
                    "ok": {"type": "boolean"},
                    "reason": {"type": "string"},
                },
                "required": ["id", "ok", "reason"],
            },
        },
        "missing": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["verdicts", "missing"],
}


def build_verify_prompt(
    *,
    helper: str,
    target: str,
    ask: str,
    elements: Sequence[Element],
    min_count: int | None = None,
    max_count: int | None = None,
) -> str:
    """The verification prompt over the numbered overlay."""
    what = target or ask
    lines = [
        "The image shows numbered help lines drawn over an AI-generated image.",
        f"They should mark {helper} for: {what}. They serve the question: {ask}",
        "For every number, say whether the mark is correct (ok: true) or not (ok: false),",
        "with a short reason. Then list anything that should be marked but is not.",
    ]
    if min_count is not None or max_count is not None:
        lines.append(
            f"Expected count: at least {min_count or 0}"
            + (f", at most {max_count}" if max_count is not None else "")
            + "."
        )
    lines.append("Marks: " + (", ".join(_mark_text(e) for e in elements) or "none"))
    lines.append(
        'Reply with JSON only: {"verdicts": [{"id": <number>, "ok": true|false, '
        '"reason": "..."}], "missing": ["..."]}'
    )
    return "\n".join(lines)


def _mark_text(e: Element) -> str:
    extra = {k: v for k, v in e.fields.items() if k != "label"}
    return f"#{e.id} {e.fields.get('label', e.kind)}" + (f" {json.dumps(extra)}" if extra else "")


def parse_verification(text: str, elements: Sequence[Element]) -> tuple[list[Element], list[str]]:
    """Elements with verdicts set, and what is missing.

    A mark the judge gave no clear verdict for is rejected with that reason,
    never accepted by default.

    Raises:
        ValueError: the reply holds no list of verdicts.
    """
    data = load_json(text)
    by_id = verdicts_by_mark(data, text)
    out = []
    for e in elements:
        if e.id in by_id:
            ok, reason = by_id[e.id]
            out.append(
                e.model_copy(
                    update={"verdict": "accepted" if ok else "rejected", "reason": reason[:500]}
                )
            )
        else:
            out.append(
                e.model_copy(
                    update={
                        "verdict": "rejected",
                        "reason": "the verifier gave no verdict for this mark",
                    }
                )
            )
    raw_missing = data.get("missing") if isinstance(data, dict) else None
    missing = (
        [m[:300] for m in raw_missing if isinstance(m, str) and m.strip()]
        if isinstance(raw_missing, list)
        else []
    )
    return out, missing


def verdicts_by_mark(data: Any, text: str = "") -> dict[int, tuple[bool, str]]:
    """Clear verdicts in a parsed reply, by mark number: ``(ok, reason)``.

    Raises:
        ValueError: the reply holds no list of verdicts.
    """
    verdicts = data.get("verdicts") if isinstance(data, dict) else data
    if not isinstance(verdicts, list):
        raise ValueError(f"verification holds no 'verdicts' list: {clip(text)}")
    by_id: dict[int, tuple[bool, str]] = {}
    for v in verdicts:
        if not isinstance(v, dict):
            continue
        mark = _as_int(v.get("id"))
        ok = _as_ok(v.get("ok", v.get("verdict")))
        if mark is None or ok is None:
            continue
        reason = v.get("reason")
        by_id[mark] = (ok, reason if isinstance(reason, str) else "")
    return by_id


def _as_int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("#").isdigit():
        return int(value.strip().lstrip("#"))
    return None


def _as_ok(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes", "ok", "accepted", "correct"):
            return True
        if low in ("false", "no", "rejected", "wrong", "incorrect"):
            return False
    return None
