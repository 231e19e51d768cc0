"""Fault injection on a local Gemini-format server: every item ends answered or as an error."""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from groundeval.judges import QuestionRef, ask_questions, build_judge
from tests._support.fakeapi import (
    answers_for,
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)
from tests._support.fakeapi import tiny_png as png

GEMINI_PATH = "/v1/models/gemini-2.5-flash:generateContent"
FAULTS = ["429", "500", "503", "hang", "truncated", "empty", "safety", "html"]
TIMEOUT_S = 1.0
"""Client timeout: long enough that a loaded machine still connects, far below a hang."""
HANG_S = 3 * TIMEOUT_S


class FaultyServer:
    """Answers like Gemini or OpenAI; 30 % of requests get a fault, chosen by a seeded draw."""

    def __init__(self, kind: str = "gemini", rate: float = 0.3, seed: int = 4) -> None:
        self.kind = kind
        self.rate = rate
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.requests = 0
        self.faults: Counter[str] = Counter()

    def __call__(self, request: Request) -> Response:
        with self.lock:
            self.requests += 1
            fault = self.rng.choice(FAULTS) if self.rng.random() < self.rate else None
            if fault:
                self.faults[fault] += 1
        gemini = self.kind == "gemini"
        _, text = (gemini_request_parts if gemini else openai_request_parts)(request.get_json())
        answer = answers_for(text, result=True)
        if fault == "429":
            return _json(
                {"error": {"code": 429, "message": "slow down"}}, 429, {"Retry-After": "0.05"}
            )
        if fault in ("500", "503"):
            return _json({"error": {"code": int(fault), "message": "oops"}}, int(fault))
        if fault == "hang":
            time.sleep(HANG_S)
        if fault == "html":  # a proxy's page with status 200
            return Response(
                "<html><body>502 Bad Gateway</body></html>", 200, content_type="text/html"
            )
        if fault == "truncated":
            cut = answer[: len(answer) // 2]
            return _json(
                gemini_body(cut, finish="MAX_TOKENS")
                if gemini
                else openai_body(cut, finish="length")
            )
        if fault == "empty":
            return _json(
                gemini_body(None, no_candidates=True)
                if gemini
                else openai_body(None, no_choices=True)
            )
        if fault == "safety":
            return _json(
                gemini_body(None, finish="SAFETY")
                if gemini
                else openai_body(None, finish="content_filter")
            )
        return _json(gemini_body(answer) if gemini else openai_body(answer))


def _json(body: dict, status: int = 200, headers: dict | None = None) -> Response:
    return Response(
        json.dumps(body), status=status, content_type="application/json", headers=headers
    )


@pytest.fixture
def threaded_server() -> Iterator[HTTPServer]:
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_200_items_with_30_percent_faults_all_accounted_for(threaded_server, kind) -> None:
    fake = FaultyServer(kind)
    attempts = 4
    layers = {
        "timeout_s": TIMEOUT_S,
        "retries": attempts,
        "backoff_s": (0.01, 0.1),
        "concurrency": 32,
    }
    if kind == "gemini":
        threaded_server.expect_request(GEMINI_PATH).respond_with_handler(fake)
        judge = build_judge(
            "gemini:gemini-2.5-flash",
            api_key="k" * 20,
            base_url=threaded_server.url_for("/"),
            **layers,
        )
    else:
        threaded_server.expect_request("/v1/chat/completions").respond_with_handler(fake)
        judge = build_judge(f"openai:fake@{threaded_server.url_for('/v1')}", **layers)
    questions = [QuestionRef("q1", "Is there a die?"), QuestionRef("q2", "Are there 5 pips?")]
    image = png()

    async def run() -> list[dict]:
        async def one(i: int) -> dict:
            answers, _ = await ask_questions(
                judge, [image], questions, item_id=f"item{i}", prompt=f"item {i}"
            )
            return answers

        return await asyncio.gather(*(one(i) for i in range(200)))

    started = time.perf_counter()
    results = asyncio.run(run())
    elapsed = time.perf_counter() - started

    assert len(results) == 200
    outcomes: Counter[str] = Counter()
    for answers in results:
        assert set(answers) == {"q1", "q2"}
        for answer in answers.values():
            if answer.result is None:
                assert answer.error, "an unanswered question must carry its reason"
                outcomes["error"] += 1
            else:
                assert answer.result is True, "the server only says yes: a 'no' is invented"
                outcomes["answered"] += 1
    assert outcomes["answered"] > 300 and outcomes["error"] > 0
    # bounded: each item makes at most 1 batch call + 2 re-asks, each tried `attempts` times
    assert fake.requests <= 200 * 3 * attempts
    assert set(fake.faults) == set(FAULTS)
    account = judge.account
    assert account.retries > 0
    assert {"safety", "empty"} <= set(account.errors)
    assert elapsed < 30


def test_retry_after_is_honoured(threaded_server) -> None:
    times: list[float] = []

    def handler(request: Request) -> Response:
        times.append(time.perf_counter())
        if len(times) == 1:
            return _json({"error": {"code": 429, "message": "wait"}}, 429, {"Retry-After": "0.4"})
        _, text = gemini_request_parts(request.get_json())
        return _json(gemini_body(answers_for(text)))

    threaded_server.expect_request(GEMINI_PATH).respond_with_handler(handler)
    judge = build_judge(
        "gemini:gemini-2.5-flash",
        api_key="k" * 20,
        base_url=threaded_server.url_for("/"),
        retries=3,
        backoff_s=(0.01, 2.0),
    )
    answers, usage = asyncio.run(ask_questions(judge, [png()], [QuestionRef("q1", "x?")]))
    assert answers["q1"].result is True and usage.calls == 1
    assert times[1] - times[0] >= 0.38


def test_retries_are_bounded_and_error_names_attempts(threaded_server) -> None:
    count = []

    def handler(request: Request) -> Response:
        count.append(1)
        return _json({"error": {"code": 503, "message": "down"}}, 503)

    threaded_server.expect_request(GEMINI_PATH).respond_with_handler(handler)
    judge = build_judge(
        "gemini:gemini-2.5-flash",
        api_key="k" * 20,
        base_url=threaded_server.url_for("/"),
        retries=3,
        backoff_s=(0.01, 0.02),
    )
    answers, _ = asyncio.run(ask_questions(judge, [png()], [QuestionRef("q1", "x?")]))
    assert answers["q1"].result is None
    assert "gave up after 3 attempts" in (answers["q1"].error or "")
    assert len(count) == 3
