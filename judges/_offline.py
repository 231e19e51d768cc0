"""The offline judge: decides nothing itself and says which questions need a model."""

from __future__ import annotations

from typing import Any

from groundeval.judges._protocol import JudgeCall, JudgeRefusal, JudgeReply


class OfflineJudge:
    """Refuses every call with a clear message; deterministic checks still run."""

    spec = "offline"
    model = ""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Refuse, naming the questions that need a model judge."""
        if call.questions:
            names = ", ".join(q.id for q in call.questions)
            what = f"questions {names} need a model judge"
        else:
            what = f"a {call.task} call needs a model judge"
        raise JudgeRefusal(
            f"offline judge: {what}; run with --judge gemini:<model> or "
            "--judge openai:<model>@<base_url>, or give them a 'ground' and a 'check'",
            reason="offline",
        )
