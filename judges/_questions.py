"""Batched yes/no questions: one call per item, tolerant parsing, no silent "no".

A question missing from a batched answer is asked again alone once; if it is
still missing it is returned as an error with the reason.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from groundeval.judges._parse import clip, load_json
from groundeval.judges._protocol import ImagePart, Judge, JudgeCall, JudgeError, QuestionRef
from groundeval.state import Usage

ANSWERS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answers": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "result": {"type": "boolean"},
                    "reason": {"type": "string"},
                },
                "required": ["id", "result", "reason"],
            },
        }
    },
    "required": ["answers"],
}


@dataclass
class Answer:
    """A judge's answer to one question: ``result`` is None when it is an error."""

    question_id: str
    result: bool | None
    reason: str = ""
    raw: str = ""
    error: str | None = None


def build_questions_prompt(
    questions: list[QuestionRef],
    *,
    prompt: str = "",
    instructions: str = "",
    answer_text: str | None = None,
) -> str:
    """Numbered questions with a result and a short reason each, as JSON."""
    lines = [
        "You are grading an AI-generated image from what is visible in it.",
        "Answer every question below with true (yes) or false (no) and one short reason.",
    ]
    if instructions:
        lines.append(instructions)
    if prompt:
        lines.append(f"The image was generated for this prompt: {prompt}")
    if answer_text:
        lines.append(f"The answer's text part is:\n{answer_text}")
    lines.append("Questions:")
    lines += [f"{i}. [id={q.id}] {q.text}" for i, q in enumerate(questions, start=1)]
    lines.append(
        'Reply with JSON only: {"answers": [{"id": "<id>", "result": true|false, '
        '"reason": "<short reason>"}, ...]} with one entry per question id.'
    )
    return "\n".join(lines)


def parse_answers(text: str, question_ids: list[str]) -> dict[str, Answer]:
    """Answers found in a reply, keyed by question id; unknown ids and bad entries dropped.

    Accepts ``{"answers": [...]}``, a bare list, or a mapping ``{id: result}``;
    entries may name a question by id or by its number. An entry whose result is
    not a clear yes/no, or a question answered twice differently, counts as missing.
    """
    data = load_json(text)
    entries = _entries(data)
    found: dict[str, Answer] = {}
    conflicted: set[str] = set()
    wanted = set(question_ids)
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        raw_id = entry.get("id")
        if raw_id is None or isinstance(raw_id, (dict, list, bool)):
            continue
        qid = str(raw_id).strip()
        if qid not in wanted:
            # judges sometimes answer with the number instead of the id
            if qid.isdigit() and 1 <= int(qid) <= len(question_ids):
                qid = question_ids[int(qid) - 1]
            else:
                continue
        result = _as_bool(entry.get("result"))
        if result is None:
            continue
        if qid in found and found[qid].result != result:
            conflicted.add(qid)
        reason = entry.get("reason")
        found[qid] = Answer(qid, result, reason if isinstance(reason, str) else "", raw=text)
    for qid in conflicted:
        del found[qid]
    return found


def _entries(data: Any) -> list[Any]:
    """The answer entries of a reply in any of the shapes judges use."""
    if isinstance(data, list):
        return data
    if not isinstance(data, dict):
        return []
    got = data.get("answers")
    if isinstance(got, list):
        return got
    mapping = got if isinstance(got, dict) else data
    out: list[Any] = []
    for key, value in mapping.items():
        if isinstance(value, dict):
            out.append({"id": key, **{k: v for k, v in value.items() if k != "id"}})
        else:
            out.append({"id": key, "result": value})
    return out


def _as_bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "yes"):
            return True
        if low in ("false", "no"):
            return False
    return None


async def ask_questions(
    judge: Judge,
    images: list[ImagePart],
    questions: list[QuestionRef],
    *,
    item_id: str = "",
    prompt: str = "",
    instructions: str = "",
    answer_text: str | None = None,
    usage: Usage | None = None,
) -> tuple[dict[str, Answer], Usage]:
    """Ask all questions in one call; re-ask each missing one alone once; never guess.

    The re-asks run concurrently. A question still unanswered after its re-ask
    (or whose call failed) comes back with ``result=None`` and the reason.
    """
    total = usage or Usage()
    if not questions:
        return {}, total

    async def ask(batch: list[QuestionRef]) -> tuple[dict[str, Answer], list[QuestionRef], Usage]:
        call = JudgeCall(
            task="questions",
            prompt=build_questions_prompt(
                batch, prompt=prompt, instructions=instructions, answer_text=answer_text
            ),
            images=tuple(images),
            response_schema=ANSWERS_SCHEMA,
            questions=tuple(batch),
            item_id=item_id,
        )
        try:
            reply = await judge.generate(call)
        except JudgeError as exc:
            failed = {q.id: Answer(q.id, None, error=f"judge error: {exc}") for q in batch}
            return failed, [], Usage()
        got = parse_answers(reply.text, [q.id for q in batch])
        missing = [q for q in batch if q.id not in got]
        for q in missing:
            got[q.id] = Answer(
                q.id,
                None,
                raw=reply.text,
                error=f"no usable answer for {q.id} in the judge's reply: {clip(reply.text)}",
            )
        return got, missing, reply.usage

    answers, missing, spent = await ask(list(questions))
    total = total.add(spent)
    if len(questions) > 1 and missing:
        for again, _, spent in await asyncio.gather(*(ask([q]) for q in missing)):
            answers.update(again)
            total = total.add(spent)
    return {q.id: answers[q.id] for q in questions}, total
