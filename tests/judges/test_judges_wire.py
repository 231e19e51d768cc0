"""Real google-genai and openai clients over a real socket to a local fake API server."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from groundeval.judges import (
    ANSWERS_SCHEMA,
    ImagePart,
    JudgeCall,
    JudgeError,
    QuestionRef,
    ask_questions,
    build_judge,
    make_judge,
)
from tests._support.fakeapi import (
    answers_for,
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)

KEY = "AIzaSy-TEST-KEY-must-never-be-written-0123456789"
GEMINI_PATH = "/v1/models/gemini-2.5-flash:generateContent"


def png(width: int = 32, height: int = 24) -> ImagePart:
    img = np.zeros((height, width, 3), np.uint8)
    cv2.circle(img, (10, 10), 5, (255, 255, 255), -1)
    ok, buf = cv2.imencode(".png", img)
    assert ok
    return ImagePart(buf.tobytes(), "image/png", (width, height))


def questions_call(image: ImagePart) -> JudgeCall:
    return JudgeCall(
        "questions",
        "Questions:\n1. [id=q1] Is there a circle?\n2. [id=q2] Is it red?",
        (image,),
        ANSWERS_SCHEMA,
        (QuestionRef("q1", "Is there a circle?"), QuestionRef("q2", "Is it red?")),
        item_id="it1",
    )


class Recorder:
    """A handler that records request bodies and answers with a fixed body or status."""

    def __init__(self, body: dict[str, Any] | None = None, status: int = 200) -> None:
        self.body = body
        self.status = status
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []

    def __call__(self, request: Request) -> Response:
        self.requests.append((dict(request.headers), request.get_json()))
        return Response(json.dumps(self.body), status=self.status, content_type="application/json")


def gemini(server: HTTPServer, **options: Any):
    return make_judge(
        "gemini:gemini-2.5-flash", api_key=KEY, base_url=server.url_for("/"), timeout_s=5, **options
    )


def test_gemini_sends_image_schema_temperature_and_parses_usage(httpserver: HTTPServer) -> None:
    reply = json.dumps(
        {
            "answers": [
                {"id": "q1", "result": True, "reason": "round"},
                {"id": "q2", "result": False, "reason": "white"},
            ]
        }
    )
    rec = Recorder(gemini_body(reply, input_tokens=321, output_tokens=45, thinking_tokens=67))
    httpserver.expect_request(GEMINI_PATH, method="POST").respond_with_handler(rec)
    judge = gemini(httpserver, temperature=0.25, seed=7, thinking="low")
    image = png()
    out = asyncio.run(judge.generate(questions_call(image)))
    assert out.text == reply
    assert (
        out.usage.calls,
        out.usage.input_tokens,
        out.usage.output_tokens,
        out.usage.thinking_tokens,
    ) == (1, 321, 45, 67)
    headers, body = rec.requests[0]
    images, text = gemini_request_parts(body)
    assert images == [image.data]
    assert "[id=q2] Is it red?" in text
    cfg = body["generationConfig"]
    assert cfg["temperature"] == 0.25 and cfg["seed"] == 7
    assert cfg["responseMimeType"] == "application/json"
    assert cfg["responseJsonSchema"] == ANSWERS_SCHEMA
    assert cfg["thinkingConfig"] == {"thinking_budget": 1024} or cfg["thinkingConfig"] == {
        "thinkingBudget": 1024
    }
    assert headers.get("X-Goog-Api-Key") == KEY


def test_gemini_3_sends_thinking_level(httpserver: HTTPServer) -> None:
    rec = Recorder(gemini_body('{"answers": []}'))
    httpserver.expect_request(
        "/v1/models/gemini-3-pro-preview:generateContent"
    ).respond_with_handler(rec)
    judge = make_judge(
        "gemini:gemini-3-pro-preview",
        api_key=KEY,
        base_url=httpserver.url_for("/"),
        thinking="high",
    )
    asyncio.run(judge.generate(questions_call(png())))
    think = rec.requests[0][1]["generationConfig"]["thinkingConfig"]
    assert list(think.values()) == ["HIGH"] or list(think.values()) == ["high"]


def test_gemini_base_url_from_environment(httpserver: HTTPServer, monkeypatch) -> None:
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", httpserver.url_for("/"))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    rec = Recorder(gemini_body('{"answers": []}'))
    httpserver.expect_request(GEMINI_PATH).respond_with_handler(rec)
    asyncio.run(make_judge("gemini:gemini-2.5-flash").generate(questions_call(png())))
    assert len(rec.requests) == 1


def test_gemini_without_key_says_which_variables(monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(JudgeError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        make_judge("gemini:gemini-2.5-flash")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (gemini_body(None, finish="SAFETY"), "safety"),
        (gemini_body(None, block_reason="PROHIBITED_CONTENT"), "safety"),
        (gemini_body(None, no_candidates=True), "empty"),
        (gemini_body(""), "empty"),
        (gemini_body("I cannot judge this image."), "not json"),
    ],
)
def test_gemini_bad_replies_are_errors_never_success(httpserver, body, reason) -> None:
    httpserver.expect_request(GEMINI_PATH).respond_with_handler(Recorder(body))
    with pytest.raises(JudgeError) as info:
        asyncio.run(gemini(httpserver).generate(questions_call(png())))
    assert info.value.reason == reason


@pytest.mark.parametrize(
    ("status", "transient"), [(429, True), (500, True), (503, True), (400, False), (403, False)]
)
def test_gemini_http_errors_are_classified(httpserver, status, transient) -> None:
    from groundeval.judges import TransientJudgeError

    body = {"error": {"code": status, "message": "nope", "status": "X"}}
    httpserver.expect_request(GEMINI_PATH).respond_with_handler(Recorder(body, status))
    with pytest.raises(JudgeError) as info:
        asyncio.run(gemini(httpserver).generate(questions_call(png())))
    assert isinstance(info.value, TransientJudgeError) is transient
    assert info.value.reason == f"http {status}"


def test_openai_sends_data_url_schema_and_parses(httpserver: HTTPServer) -> None:
    reply = json.dumps({"answers": [{"id": "q1", "result": True, "reason": "r"}]})
    rec = Recorder(openai_body(reply, input_tokens=50, output_tokens=9))
    httpserver.expect_request("/v1/chat/completions", method="POST").respond_with_handler(rec)
    judge = make_judge(
        f"openai:Qwen2.5-VL-7B@{httpserver.url_for('/v1')}", temperature=0.5, timeout_s=5
    )
    image = png()
    out = asyncio.run(judge.generate(questions_call(image)))
    assert out.text == reply and out.usage.input_tokens == 50 and out.usage.output_tokens == 9
    body = rec.requests[0][1]
    images, text = openai_request_parts(body)
    assert images == [image.data] and "[id=q1]" in text
    assert body["temperature"] == 0.5 and body["model"] == "Qwen2.5-VL-7B"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"] == ANSWERS_SCHEMA
    assert judge.box_convention == "qwen25_px"


def test_openai_falls_back_when_server_rejects_json_schema(httpserver: HTTPServer) -> None:
    seen: list[str | None] = []

    def handler(request: Request) -> Response:
        fmt = (request.get_json().get("response_format") or {}).get("type")
        seen.append(fmt)
        if fmt in ("json_schema", "json_object"):
            err = {"error": {"message": f"response_format {fmt} is not supported"}}
            return Response(json.dumps(err), status=400, content_type="application/json")
        return Response(json.dumps(openai_body('{"answers": []}')), content_type="application/json")

    httpserver.expect_request("/v1/chat/completions").respond_with_handler(handler)
    judge = make_judge(f"openai:llava@{httpserver.url_for('/v1')}")
    asyncio.run(judge.generate(questions_call(png())))
    asyncio.run(judge.generate(questions_call(png())))
    assert seen == ["json_schema", "json_object", None, None]
    assert judge.format == "none"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (openai_body(None, no_choices=True), "empty"),
        (openai_body("", finish="stop"), "empty"),
        (openai_body(None, finish="content_filter"), "safety"),
        (openai_body(None, refusal="I won't"), "refusal"),
        # cut off at the token limit: unusable even though json-repair could close it
        (openai_body('{"answers": [{"id": "q1", "res', finish="length"), "truncated"),
    ],
)
def test_openai_bad_replies(httpserver, body, reason) -> None:
    httpserver.expect_request("/v1/chat/completions").respond_with_handler(Recorder(body))
    judge = make_judge(f"openai:m@{httpserver.url_for('/v1')}")
    with pytest.raises(JudgeError) as info:
        asyncio.run(judge.generate(questions_call(png())))
    assert info.value.reason == reason


def test_api_key_never_reaches_cache_cassette_or_errors(
    httpserver, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)

    def handler(request: Request) -> Response:
        body = request.get_json()
        _, text = gemini_request_parts(body)
        if "[id=bad]" in text:  # an error that echoes the key back
            err = {"error": {"code": 400, "message": f"bad key {KEY}", "status": "INVALID"}}
            return Response(json.dumps(err), status=400, content_type="application/json")
        return Response(
            json.dumps(gemini_body(answers_for(text) + f" echo {KEY}")),
            content_type="application/json",
        )

    httpserver.expect_request(GEMINI_PATH).respond_with_handler(handler)
    judge = build_judge(
        "gemini:gemini-2.5-flash",
        base_url=httpserver.url_for("/"),
        cache_dir=tmp_path / "cache",
        record=tmp_path / "run" / "calls.jsonl",
    )
    image = png()
    answers, _ = asyncio.run(ask_questions(judge, [image], [QuestionRef("q1", "circle?")]))
    assert answers["q1"].result is True
    bad, _ = asyncio.run(ask_questions(judge, [image], [QuestionRef("bad", "x?")]))
    assert bad["bad"].result is None and KEY not in (bad["bad"].error or "")
    assert "<redacted>" in (bad["bad"].error or "")
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 2
    for path in files:
        assert KEY not in path.read_text(encoding="utf-8"), path
    recorded = [json.loads(line) for line in (tmp_path / "run" / "calls.jsonl").open()]
    assert [e.get("error", {}).get("reason") for e in recorded] == [None, "http 400"]
    assert "<redacted>" in recorded[1]["error"]["message"]
    assert "<redacted>" in recorded[0]["text"]  # a reply echoing the key is scrubbed too


def test_cache_then_record_then_replay_over_the_wire(httpserver, tmp_path: Path) -> None:
    rec: list[int] = []

    def handler(request: Request) -> Response:
        rec.append(1)
        _, text = gemini_request_parts(request.get_json())
        return Response(
            json.dumps(gemini_body(answers_for(text, result=False))),
            content_type="application/json",
        )

    httpserver.expect_request(GEMINI_PATH).respond_with_handler(handler)
    options = {"api_key": KEY, "base_url": httpserver.url_for("/"), "cache_dir": tmp_path / "cache"}
    qs = [QuestionRef("q1", "circle?"), QuestionRef("q2", "red?")]

    def grade(judge) -> dict:
        return {
            i: {
                k: (a.result, a.reason)
                for k, a in asyncio.run(ask_questions(judge, [png()], qs, item_id=i, prompt=i))[
                    0
                ].items()
            }
            for i in ("a", "b", "c")
        }

    first_judge = build_judge("gemini:gemini-2.5-flash", **options)
    first = grade(first_judge)
    assert len(rec) == 3 and first_judge.account.total.calls == 3
    # a second run on the same cache makes no call, and records a complete cassette
    cassette = tmp_path / "run2" / "calls.jsonl"
    second_judge = build_judge("gemini:gemini-2.5-flash", record=cassette, **options)
    assert grade(second_judge) == first and len(rec) == 3
    assert second_judge.account.total.calls == 0
    assert second_judge.account.total.cached_calls == 3
    # the cassette alone replays the run, offline
    httpserver.clear()
    replayed = grade(build_judge(f"replay:{cassette}"))
    assert replayed == first and all(
        a == (False, "fake") for v in first.values() for a in v.values()
    )
