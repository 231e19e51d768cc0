"""Recorded VQA answers replayed as a judge, so DSG runs through the toolkit's own runner."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from groundeval.judges import JudgeCall, JudgeRefusal, JudgeReply
from groundeval.state import Usage


class RecordedAnswersJudge:
    """Answers ``questions`` calls from recorded answers keyed by (item id, question id).

    DSG's rule: only an answer that is exactly ``yes`` is true (``no bananas`` is
    false). A question with no recorded row is left unanswered (never a "no"), so
    its decision is ``error`` naming the missing row; a call with no recorded row
    at all is refused with that reason. Counts calls and questions asked.
    """

    def __init__(self, answers: Mapping[tuple[str, str], str], *, name: str = "recorded") -> None:
        self.spec = f"replay-answers:{name}"
        self.model = name
        self.params: dict[str, Any] = {}
        self.answers = answers
        self.calls = 0
        self.asked = 0

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Reply with one entry per question of the call."""
        if call.task != "questions":
            raise JudgeRefusal(f"recorded answers cannot answer {call.task!r} calls")
        self.calls += 1
        self.asked += len(call.questions)
        entries = []
        unanswered = []
        for q in call.questions:
            raw = self.answers.get((call.item_id, q.id))
            if raw is None:
                unanswered.append(q.id)
                continue
            entries.append(
                {"id": q.id, "result": raw == "yes", "reason": f"recorded answer {raw!r}"}
            )
        if not entries:
            raise JudgeRefusal(
                f"no recorded answer for image {call.item_id!r}, "
                f"question(s) {', '.join(unanswered)}"
            )
        return JudgeReply(json.dumps({"answers": entries}), Usage(calls=1))
