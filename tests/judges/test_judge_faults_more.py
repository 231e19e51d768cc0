"""Judge faults that must never become evidence: cut-off replies, non-JSON 200s, bad cache entries.

Real openai and google-genai clients talk to a local server over a real socket;
what is exercised is the SDKs' own HTTP and JSON handling, not a patched method.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from groundeval.judges import (
    ANSWERS_SCHEMA,
    DiskCache,
    JudgeCall,
    JudgeError,
    QuestionRef,
    ask_questions,
    build_judge,
    make_judge,
    parse_answers,
    usable_reply,
)
from tests._support.fakeapi import (
    answers_for,
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)
from tests._support.fakeapi import tiny_png as png

KEY = "AIzaSy-TEST-KEY-never-on-disk-0123456789"
GEMINI = "/v1/models/gemini-2.5-flash:generateContent"
OPENAI = "/v1/chat/completions"
PATHS = {"gemini": GEMINI, "openai": OPENAI}
QS = [QuestionRef("q1", "Is there a circle?"), QuestionRef("q2", "Is it white?")]
HTML = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway"
    "</h1><p>The proxy server received an invalid response from an upstream server.</p>"
    "</body></html>"
)


def _json(body: dict[str, Any], status: int = 200) -> Response:
    return Response(json.dumps(body), status=status, content_type="application/json")


def _parts(kind: str, request: Request) -> tuple[dict[str, Any], str]:
    body = request.get_json()
    split = gemini_request_parts if kind == "gemini" else openai_request_parts
    return body, split(body)[1]


def _max_tokens(kind: str, body: dict[str, Any]) -> int | None:
    if kind == "gemini":
        return body.get("generationConfig", {}).get("maxOutputTokens")
    return body.get("max_tokens")


def _reply(kind: str, text: str | None, *, cut: bool = False, used: int = 20) -> Response:
    if kind == "gemini":
        return _json(gemini_body(text, finish="MAX_TOKENS" if cut else "STOP", output_tokens=used))
    return _json(openai_body(text, finish="length" if cut else "stop", output_tokens=used))


def _judge(kind: str, server: HTTPServer, **options: Any):
    if kind == "gemini":
        return build_judge(
            "gemini:gemini-2.5-flash", api_key=KEY, base_url=server.url_for("/"), **options
        )
    return build_judge(f"openai:fake-vl@{server.url_for('/v1')}", api_key=KEY, **options)


def _ask(judge, item: str = "it1", questions: list[QuestionRef] = QS):
    return asyncio.run(ask_questions(judge, [png()], questions, item_id=item, prompt=item))


# --- item 2: a reply cut off at the token limit is never partial evidence ---------------


@pytest.mark.parametrize("kind", ["gemini", "openai"])
@pytest.mark.parametrize(("configured", "asked"), [(512, [512, 1024]), (None, [None, 600])])
def test_cut_off_reply_is_asked_again_with_twice_the_room(
    httpserver: HTTPServer, kind: str, configured: int | None, asked: list[int | None]
) -> None:
    seen: list[int | None] = []

    def handler(request: Request) -> Response:
        body, text = _parts(kind, request)
        seen.append(_max_tokens(kind, body))
        full = answers_for(text)
        if len(seen) == 1:  # cut half-way; json-repair could close it and lose q2
            return _reply(kind, full[: full.index('"q2"')], cut=True, used=300)
        return _reply(kind, full, used=40)

    httpserver.expect_request(PATHS[kind]).respond_with_handler(handler)
    options = {} if configured is None else {"max_output_tokens": configured}
    judge = _judge(kind, httpserver, retries=1, **options)
    answers, usage = _ask(judge)
    assert seen == asked
    assert {q: a.result for q, a in answers.items()} == {"q1": True, "q2": True}
    assert usage.calls == 2 and usage.output_tokens == 340  # the cut-off reply was billed


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_reply_cut_off_twice_is_an_error_never_partial_and_never_cached(
    httpserver: HTTPServer, tmp_path: Path, kind: str
) -> None:
    seen: list[int | None] = []
    sent: list[str] = []

    def handler(request: Request) -> Response:
        body, text = _parts(kind, request)
        seen.append(_max_tokens(kind, body))
        full = answers_for(text)  # cut after q1's result: repairable, but partial
        sent.append(full[: full.index("fake")])
        return _reply(kind, sent[-1], cut=True, used=_max_tokens(kind, body))

    httpserver.expect_request(PATHS[kind]).respond_with_handler(handler)
    cache = tmp_path / "cache"
    judge = _judge(kind, httpserver, retries=1, max_output_tokens=256, cache_dir=cache)
    answers, _ = _ask(judge, questions=QS[:1])
    answer = answers["q1"]
    assert answer.result is None  # not the q1 answer the repaired JSON would have given
    assert "reply cut off at the token limit" in (answer.error or "")
    assert seen == [256, 512]
    assert parse_answers(sent[-1], ["q1"])["q1"].result is True  # what repair would have made
    assert judge.account.errors == {"truncated": 1}
    assert judge.account.total.calls == 2 and judge.account.total.output_tokens == 768
    assert not [p for p in cache.rglob("*.json")]  # never cached


def test_cut_off_reply_without_a_known_limit_is_an_error(httpserver: HTTPServer) -> None:
    """No configured limit and no token count: nothing to double, so no retry."""
    body = openai_body('{"answers": [{"id": "q1", "result": tr', finish="length")
    del body["usage"]
    httpserver.expect_request(OPENAI).respond_with_response(_json(body))
    judge = make_judge(f"openai:m@{httpserver.url_for('/v1')}")
    call = JudgeCall("questions", "[id=q1] x", (png(),), ANSWERS_SCHEMA, (QS[0],))
    with pytest.raises(JudgeError, match=r"^reply cut off at the token limit$") as info:
        asyncio.run(judge.generate(call))
    assert info.value.reason == "truncated" and len(httpserver.log) == 1


# --- item 5: an HTTP 200 whose body is not JSON ------------------------------------------


@pytest.mark.parametrize("kind", ["gemini", "openai"])
@pytest.mark.parametrize("content_type", ["text/html", "application/json"])
def test_html_200_is_retried_as_transient(
    httpserver: HTTPServer, kind: str, content_type: str
) -> None:
    count: list[int] = []

    def handler(request: Request) -> Response:
        count.append(1)
        if len(count) == 1:
            return Response(HTML, 200, content_type=content_type)
        return _reply(kind, answers_for(_parts(kind, request)[1]))

    httpserver.expect_request(PATHS[kind]).respond_with_handler(handler)
    judge = _judge(kind, httpserver, retries=3, backoff_s=(0.01, 0.02))
    answers, _ = _ask(judge)
    assert [a.result for a in answers.values()] == [True, True]
    assert len(count) == 2 and judge.account.retries == 1


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_html_200_names_status_and_first_bytes_after_the_last_attempt(
    httpserver: HTTPServer, kind: str
) -> None:
    httpserver.expect_request(PATHS[kind]).respond_with_response(
        Response(HTML, 200, content_type="text/html")
    )
    judge = _judge(kind, httpserver, retries=2, backoff_s=(0.01, 0.02))
    answers, _ = _ask(judge, questions=QS[:1])
    error = answers["q1"].error or ""
    assert answers["q1"].result is None
    assert "gave up after 2 attempts" in error
    assert "http 200 but the body is not JSON (text/html)" in error
    assert "<!DOCTYPE html><html><head><title>502 Bad Gateway" in error
    assert "invalid response from an upstream" not in error  # only the first 120 bytes
    assert judge.account.errors == {"not json body": 1} and len(httpserver.log) == 2


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_json_body_cut_short_is_transient_and_named(httpserver: HTTPServer, kind: str) -> None:
    """A body that starts like JSON but is cut short fails inside the SDK: still named, retried."""
    cut = json.dumps(gemini_body("{}") if kind == "gemini" else openai_body("{}"))[:40]
    httpserver.expect_request(PATHS[kind]).respond_with_response(
        Response(cut, 200, content_type="application/json")
    )
    judge = _judge(kind, httpserver, retries=2, backoff_s=(0.01, 0.02))
    answers, _ = _ask(judge, questions=QS[:1])
    error = answers["q1"].error or ""
    assert "gave up after 2 attempts" in error and len(httpserver.log) == 2
    assert f"but the body is not JSON: {cut!r}" in error


# --- item 8: only usable replies are cached ----------------------------------------------

BAD = {
    "wrong shape": lambda text: json.dumps({"verdict": "looks fine"}),
    "malformed": lambda text: "Sure! The answer is yes for both.",
    "unknown ids": lambda text: json.dumps({"answers": [{"id": "zz", "result": True}]}),
}


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_unusable_replies_are_not_cached_and_are_asked_again(
    httpserver: HTTPServer, tmp_path: Path, kind: str
) -> None:
    items = ["good1", *BAD, "cut", "good2"]

    def handler(request: Request) -> Response:
        _, text = _parts(kind, request)
        item = text.split("generated for this prompt: ", 1)[1].split("\n", 1)[0]
        if item in BAD:
            return _reply(kind, BAD[item](text))
        full = answers_for(text)
        if item == "cut":
            return _reply(kind, full[: len(full) - 30], cut=True, used=64)
        return _reply(kind, full)

    httpserver.expect_request(PATHS[kind]).respond_with_handler(handler)
    cache = tmp_path / "cache"

    def run() -> tuple[dict[str, int], dict[str, list[bool | None]]]:
        judge = _judge(kind, httpserver, retries=1, max_output_tokens=64, cache_dir=cache)
        results = {i: [a.result for a in _ask(judge, i)[0].values()] for i in items}
        return {i: judge.account.per_item[i].calls for i in items}, results

    first_calls, first = run()
    assert first["good1"] == first["good2"] == [True, True]
    assert all(first[i] == [None, None] for i in [*BAD, "cut"])
    # a reply of the wrong shape: the batch, then each question alone; prose: a backend error
    asked = {"wrong shape": 3, "unknown ids": 3, "malformed": 1, "cut": 2}
    assert first_calls == {"good1": 1, "good2": 1, **asked}
    second_calls, second = run()
    assert second == first
    assert second_calls == {**first_calls, "good1": 0, "good2": 0}  # bad ones asked again


def test_a_stored_unusable_entry_is_skipped_and_replaced(httpserver: HTTPServer, tmp_path: Path):
    """A cache written by an older version may hold a wrong-shape reply: it is re-asked."""
    httpserver.expect_request(GEMINI).respond_with_handler(
        lambda r: _reply("gemini", answers_for(_parts("gemini", r)[1]))
    )
    judge = _judge("gemini", httpserver, cache_dir=tmp_path / "cache")
    call = JudgeCall("questions", "[id=q1] x", (png(),), ANSWERS_SCHEMA, (QS[0],))
    key = call.cache_key(judge.spec, judge.model, judge.params)
    stale = '{"answers": "the judge wrote prose here"}'
    DiskCache(tmp_path / "cache").put(key, {"text": stale, "spec": judge.spec})
    assert not usable_reply(call, stale)
    reply = asyncio.run(judge.generate(call))
    assert not reply.cached and len(httpserver.log) == 1
    stored = DiskCache(tmp_path / "cache").get(key)
    assert stored is not None and stored["text"] == reply.text
    again = asyncio.run(judge.generate(call))
    assert again.cached and again.text == reply.text and len(httpserver.log) == 1


@pytest.mark.parametrize(
    ("task", "context", "text", "usable"),
    [
        ("propose", "boxes", '{"elements": [{"label": "d", "box_2d": [0, 0, 500, 500]}]}', True),
        ("propose", "boxes", '{"elements": []}', True),  # "nothing there" is an answer
        ("propose", "boxes", '{"elements": [{"label": "d", "box_2d": [NaN, 0, 5, 5]}]}', False),
        ("propose", "boxes", '{"elements": [{"box_2d": [900, 0, 100, 5]}]}', False),
        ("propose", "boxes", '{"boxes": []}', False),
        ("verify", "marks", '{"verdicts": [{"id": 2, "ok": false}], "missing": []}', True),
        ("verify", "marks", '{"verdicts": [{"id": 7, "ok": true}], "missing": []}', False),
        ("verify", "marks", '{"missing": []}', False),
    ],
)
def test_usable_reply_by_task(task: str, context: str, text: str, usable: bool) -> None:
    ctx: dict[str, Any] = (
        {"helper": "boxes", "box_convention": "box_2d_1000", "size_wh": [100, 80]}
        if context == "boxes"
        else {"elements": [{"id": 1}, {"id": 2}]}
    )
    call = JudgeCall(task, "p", (png(),), {}, context=ctx)  # type: ignore[arg-type]
    assert usable_reply(call, text) is usable


# --- item 15 (cache side): a repeat run samples again --------------------------------------


def test_repeat_index_folds_into_the_cache_key_and_parameters(
    httpserver: HTTPServer, tmp_path: Path
) -> None:
    httpserver.expect_request(GEMINI).respond_with_handler(
        lambda r: _reply("gemini", answers_for(_parts("gemini", r)[1]))
    )
    cache = tmp_path / "cache"

    def run(repeat: int) -> tuple[int, dict[str, Any]]:
        judge = _judge("gemini", httpserver, cache_dir=cache, repeat_index=repeat)
        _ask(judge)
        return judge.account.total.calls, judge.params

    assert run(0) == (1, {"temperature": 0.0, "seed": 0})
    assert run(0)[0] == 0
    calls, params = run(1)
    assert calls == 1 and params["repeat_index"] == 1  # recorded, and asked again
    assert run(1)[0] == 0 and run(2)[0] == 1 and run(0)[0] == 0


def test_repeat_index_zero_keeps_existing_cache_keys(httpserver: HTTPServer) -> None:
    bare = make_judge("gemini:gemini-2.5-flash", api_key=KEY, base_url=httpserver.url_for("/"))
    call = JudgeCall("questions", "[id=q1] x", (png(),), ANSWERS_SCHEMA, (QS[0],))
    old = call.cache_key(bare.spec, bare.model, bare.params)
    wrapped = _judge("gemini", httpserver, repeat_index=0)
    assert call.cache_key(wrapped.spec, wrapped.model, wrapped.params) == old
    again = _judge("gemini", httpserver, repeat_index=3)
    assert call.cache_key(again.spec, again.model, again.params) != old


@pytest.mark.parametrize("bad", [-1, 1.5, True, "2"])
def test_repeat_index_must_be_a_whole_number(bad: Any) -> None:
    with pytest.raises(ValueError, match="repeat_index"):
        build_judge("openai:m@http://127.0.0.1:9/v1", repeat_index=bad)


# --- item 17: secrets echoed in replies are redacted before anything sees them -------------


def test_a_key_echoed_in_a_reply_never_reaches_the_caller(httpserver: HTTPServer) -> None:
    echo: Callable[[Request], Response] = lambda r: _reply(  # noqa: E731
        "openai",
        json.dumps(
            {"answers": [{"id": "q1", "result": True, "reason": f"your key {KEY} is fine"}]}
        ),
    )
    httpserver.expect_request(OPENAI).respond_with_handler(echo)
    judge = _judge("openai", httpserver)
    answers, _ = _ask(judge, questions=QS[:1])
    assert answers["q1"].result is True
    assert answers["q1"].reason == "your key <redacted> is fine"
    assert KEY not in answers["q1"].raw


# --- Unicode line breaks in judge text survive the cassette and the cache -----------------

SEPARATORS = "a\u2028b\u2029c\u0085d\x0be\x0cf\x1cg\x1dh\x1ei\r\nj"


def test_line_separators_in_replies_round_trip_through_cassette_and_cache(tmp_path: Path) -> None:
    from groundeval.judges import ScriptedJudge, wrap_judge

    def reply(call: JudgeCall) -> str:
        answers = [{"id": q.id, "result": True, "reason": SEPARATORS} for q in call.questions]
        return json.dumps({"answers": answers}, ensure_ascii=False) + SEPARATORS

    cassette, cache = tmp_path / "calls.jsonl", tmp_path / "cache"
    recorded = wrap_judge(ScriptedJudge(on_call=reply), record=cassette, cache_dir=cache)
    first, _ = _ask(recorded)
    assert [a.reason for a in first.values()] == [SEPARATORS, SEPARATORS]
    cached = wrap_judge(ScriptedJudge(on_call=reply), cache_dir=cache)
    again, usage = _ask(cached)
    assert usage.calls == 0 and [a.reason for a in again.values()] == [SEPARATORS] * 2
    replayed, _ = _ask(build_judge(f"replay:{cassette}"))
    assert {q: (a.result, a.reason, a.raw) for q, a in replayed.items()} == {
        q: (a.result, a.reason, a.raw) for q, a in first.items()
    }
