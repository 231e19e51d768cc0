"""A judge that answers from a table: for tests, dry runs and replaying recorded answers."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from groundeval.judges._protocol import JudgeCall, JudgeError, JudgeReply
from groundeval.state import Usage

AnswerTable = Mapping[tuple[str, str] | str, bool | str]


class ScriptedJudge:
    """Answers ``questions`` calls from a table keyed by ``(item_id, question_id)`` or id.

    A value of ``True``/``False`` (or ``"yes"``/``"no"``) is the answer; a question
    absent from the table is left out of the reply, as a real judge might. Other
    tasks go to ``on_call`` when given. Every call is counted in ``calls``.
    """

    def __init__(
        self,
        answers: AnswerTable | None = None,
        *,
        on_call: Callable[[JudgeCall], str] | None = None,
        spec: str = "scripted",
    ) -> None:
        self.spec = spec
        self.model = "scripted"
        self.params: dict[str, Any] = {}
        self.answers = dict(answers or {})
        self.on_call = on_call
        self.calls: list[JudgeCall] = []

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Answer from the table (or ``on_call``), counting the call."""
        self.calls.append(call)
        if call.task != "questions" or self.on_call is not None:
            if self.on_call is None:
                raise JudgeError(f"scripted judge has no script for {call.task!r} calls")
            return JudgeReply(self.on_call(call), Usage(calls=1))
        entries = []
        for q in call.questions:
            value = self.answers.get((call.item_id, q.id), self.answers.get(q.id))
            if value is None:
                continue
            result = value if isinstance(value, bool) else str(value).strip().lower() == "yes"
            entries.append({"id": q.id, "result": result, "reason": f"scripted {value}"})
        return JudgeReply(json.dumps({"answers": entries}), Usage(calls=1))
