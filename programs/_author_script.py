"""A drafting judge that answers from a table of prepared replies: tests, perf, the example.

``replies.jsonl`` holds one line per prompt id, ``{"id", "replies": [draft, ...]}``;
round *k* of that prompt gets the *k*-th draft (the last one again once they run
out), so a table can show a first draft with a mistake and its correction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundeval.judges import JudgeCall, JudgeError, ScriptedJudge

Replies = dict[str, list[Any]]


def read_replies(path: Path) -> Replies:
    """The table of a replies file; a bad line is an error naming the file and line."""
    table: Replies = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path}:{number}: not JSON: {exc.msg}") from None
        if not isinstance(row, dict) or not isinstance(row.get("replies"), list):
            raise ValueError(f"{path}:{number}: expected {{'id': ..., 'replies': [...]}}")
        table[str(row["id"])] = row["replies"]
    return table


def scripted_author(replies: Replies, *, spec: str = "scripted-author") -> ScriptedJudge:
    """A judge whose ``author`` calls get the prepared draft for (prompt id, round)."""

    def answer(call: JudgeCall) -> str:
        if call.task != "author":
            raise JudgeError(f"scripted author only drafts programs, not {call.task!r} calls")
        drafts = replies.get(str(call.context.get("prompt_id", call.item_id)))
        if not drafts:
            raise JudgeError(f"scripted author has no draft for prompt {call.item_id!r}")
        index = min(int(call.context.get("round", 1)), len(drafts)) - 1
        draft = drafts[index]
        return draft if isinstance(draft, str) else json.dumps(draft, ensure_ascii=False)

    return ScriptedJudge(on_call=answer, spec=spec)


__all__ = ["read_replies", "scripted_author"]
