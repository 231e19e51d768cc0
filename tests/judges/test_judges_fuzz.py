"""Fuzz: malformed judge replies never crash a parser and never become a silent "no".

The invariant for answers: a question comes back ``False`` only when the reply
literally says false/no; otherwise it is ``True`` or an error with a reason.
"""

from __future__ import annotations

import asyncio
import json
import math
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.judges import (
    QuestionRef,
    ScriptedJudge,
    ask_questions,
    load_json,
    parse_answers,
    parse_proposal,
    parse_verification,
)
from groundeval.state import Element
from tests._support.fakeapi import tiny_png

IDS = ["q1", "q2", "q3"]
FAST = settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**6), 10**6),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["yes", "maybe", "q1", "1", "NaN", "box_2d"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(
                [
                    "id",
                    "result",
                    "reason",
                    "answers",
                    "elements",
                    "box_2d",
                    "points",
                    "verdicts",
                    "ok",
                    "missing",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=25,
)


def _dump(value) -> str:
    return json.dumps(value, allow_nan=True)


@st.composite
def mangled(draw, valid: str) -> str:
    """A valid reply put through the ways judges break JSON."""
    text = valid
    ops = draw(
        st.lists(
            st.sampled_from(
                ["truncate", "fence", "prose", "garbage", "swap", "nan", "drop_brace", "upper"]
            ),
            max_size=4,
        )
    )
    for op in ops:
        if op == "truncate":
            text = text[: draw(st.integers(0, len(text)))]
        elif op == "fence":
            text = f"```json\n{text}\n```"
        elif op == "prose":
            text = (
                draw(st.sampled_from(["Sure! ", "Here you go:\n", ""])) + text + " Hope it helps."
            )
        elif op == "garbage":
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + draw(st.text(max_size=6)) + text[pos:]
        elif op == "swap":
            text = text.replace("true", draw(st.sampled_from(["1", '"maybe"', "null", "NaN"])), 1)
        elif op == "nan":
            text = re.sub(r"\d+(\.\d+)?", "NaN", text, count=1)
        elif op == "drop_brace":
            text = text.replace("{", "", 1)
        elif op == "upper":
            text = text.replace("true", "True")
    return text


YES = json.dumps({"answers": [{"id": q, "result": True, "reason": "seen"} for q in IDS]})
reply_text = st.one_of(mangled(YES), st.text(max_size=80), json_value.map(_dump))


def _says_no(text: str) -> bool:
    return bool(re.search(r"false|\bno\b", text, re.IGNORECASE))


@FAST
@given(text=reply_text)
def test_parse_answers_never_crashes_or_invents_a_no(text: str) -> None:
    found = parse_answers(text, IDS)
    assert set(found) <= set(IDS)
    for answer in found.values():
        assert isinstance(answer.result, bool) and isinstance(answer.reason, str)
        if answer.result is False:
            assert _says_no(text), text


@settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))
@given(first=reply_text, second=reply_text)
def test_ask_questions_ends_every_question_answered_or_error(first: str, second: str) -> None:
    replies = iter([first, second, second, second])
    judge = ScriptedJudge(on_call=lambda call: next(replies))
    qs = [QuestionRef(q, f"question {q}") for q in IDS]
    answers, usage = asyncio.run(ask_questions(judge, [tiny_png()], qs))
    assert set(answers) == set(IDS) and usage.calls == len(judge.calls) <= 1 + len(IDS)
    for answer in answers.values():
        if answer.result is None:
            assert answer.error and answer.question_id in answer.error
        elif answer.result is False:
            assert _says_no(first) or _says_no(second)


VALID_PROPOSAL = json.dumps(
    {
        "elements": [
            {"label": "die", "box_2d": [100, 100, 400, 300], "fields": {"pips": 3}},
            {"label": "die", "box_2d": [500, 500, 900, 800], "fields": {"pips": 6}},
        ]
    }
)
proposal_text = st.one_of(
    mangled(VALID_PROPOSAL),
    json_value.map(_dump),
    st.text(max_size=60),
    st.lists(st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=6), max_size=4).map(
        lambda boxes: _dump({"elements": [{"label": "x", "box_2d": b} for b in boxes]})
    ),
)


@FAST
@given(text=proposal_text, conv=st.sampled_from(["box_2d_1000", "qwen25_px", "xyxy_norm"]))
def test_parse_proposal_keeps_only_sane_geometry(text: str, conv: str) -> None:
    size = (640, 480)
    try:
        elements, dropped, notes = parse_proposal(
            text,
            helper="boxes",
            fields={"pips": {"type": "integer", "minimum": 1, "maximum": 6}},
            convention=conv,
            size_wh=size,
        )
    except ValueError as exc:
        assert "elements" in str(exc)
        return
    data = load_json(text)
    items = data.get("elements") if isinstance(data, dict) else data
    assert len(elements) + len(dropped) == len(items)  # nothing dropped silently
    assert all(re.fullmatch(r"proposal \d+: .+", d) for d in dropped + notes)
    for e in elements:
        x1, y1, x2, y2 = e.xyxy_px
        assert all(math.isfinite(v) for v in e.xyxy_px)
        assert 0 <= x1 < x2 <= size[0] and 0 <= y1 < y2 <= size[1]
        assert e.fields.get("pips", 1) in range(1, 7)


MARKS = [Element(id=i, kind="box", xyxy_px=[0, 0, 10, 10]) for i in (1, 2, 3)]
VALID_VERDICT = json.dumps(
    {
        "verdicts": [
            {"id": 1, "ok": False, "reason": "off"},
            {"id": 2, "ok": False, "reason": "off"},
        ],
        "missing": ["a die"],
    }
)


@FAST
@given(text=st.one_of(mangled(VALID_VERDICT), json_value.map(_dump), st.text(max_size=60)))
def test_parse_verification_never_accepts_by_default(text: str) -> None:
    try:
        elements, missing = parse_verification(text, MARKS)
    except ValueError as exc:
        assert "verdicts" in str(exc)
        return
    assert [e.id for e in elements] == [1, 2, 3]
    assert all(isinstance(m, str) for m in missing)
    for e in elements:
        assert e.verdict in ("accepted", "rejected")
        if e.verdict == "accepted":
            assert re.search(r"true|yes|ok|accepted|correct", text, re.IGNORECASE), text


def test_parse_reply_validates_into_a_model_and_says_where_it_failed() -> None:
    import pytest
    from pydantic import BaseModel

    from groundeval.judges import parse_reply

    class Verdicts(BaseModel):
        verdicts: list[int]

    assert parse_reply('Sure:\n```json\n{"verdicts": [1, 2]}\n```', Verdicts).verdicts == [1, 2]
    assert parse_reply("[3, 4", Verdicts).verdicts == [3, 4]  # bare, truncated list
    with pytest.raises(ValueError, match=r"verdicts\.0"):
        parse_reply('{"verdicts": ["x"]}', Verdicts)
    with pytest.raises(ValueError, match="no JSON"):
        parse_reply("no idea", Verdicts)


@FAST
@given(text=st.one_of(st.text(max_size=200), json_value.map(_dump)))
def test_load_json_never_raises_and_has_no_nan(text: str) -> None:
    value = load_json(text)
    assert value is None or isinstance(value, (dict, list))

    def finite(v) -> bool:
        if isinstance(v, float):
            return math.isfinite(v)
        if isinstance(v, dict):
            return all(finite(x) for x in v.values())
        if isinstance(v, list):
            return all(finite(x) for x in v)
        return True

    assert finite(value)
