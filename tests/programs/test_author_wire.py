"""`groundeval author` through the real google-genai and openai SDKs on a local HTTP server.

The request must carry the program JSON Schema as the response schema and the
catalogue in the prompt; the API key must reach no file the command writes.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from groundeval.programs._author import response_schema
from groundeval.programs._catalogue import catalogue_text
from groundeval.programs._loaders import load_programs
from groundeval.programs.cli import app
from tests._support.fakeapi import (
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)

SECRET = "sk-author-DO-NOT-LEAK-0987654321"
PATHS = {"openai": "/v1/chat/completions", "gemini": "/v1/models/gemini-2.5-flash:generateContent"}
DRAFT = {
    "gates": [{"id": "g1", "ask": "Is there a clock?"}],
    "hard": [
        {
            "id": "h1",
            "ask": "Does it show 10:10?",
            "weight": 2,
            "ground": {
                "helper": "line",
                "target": "each hand",
                "proposer": "judge",
                "min_count": 2,
                "max_count": 2,
            },
            "check": {"name": "clock_time", "args": {"expected": "10:10"}},
        }
    ],
}
BAD = {**DRAFT, "gates": [{"id": "g1", "ask": "Clock?", "ground": {"helper": "boxes"}}]}


class Server:
    """Answers drafting calls: a bad draft first for prompt 'p2', a good one otherwise."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.bodies: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        body = request.get_json()
        parts = gemini_request_parts if self.kind == "gemini" else openai_request_parts
        _, text = parts(body)
        with self.lock:
            self.bodies.append(body)
            self.headers.append(dict(request.headers))
        first_p2 = "Generation prompt: A clock at ten past ten" in text and "failed" not in text
        reply = json.dumps(BAD if first_p2 else DRAFT)
        if self.kind == "gemini":
            out = gemini_body(reply, input_tokens=1000, output_tokens=200)
        else:
            out = openai_body(reply, input_tokens=1000, output_tokens=200)
        return Response(json.dumps(out), 200, content_type="application/json")


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_author_through_the_real_sdk(
    kind: str, tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = Server(kind)
    httpserver.expect_request(PATHS[kind], method="POST").respond_with_handler(server)
    base = httpserver.url_for("/").rstrip("/")
    if kind == "openai":
        spec = f"openai:gpt-4o-mini@{base}/v1"
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    else:
        spec = "gemini:gemini-2.5-flash"
        monkeypatch.setenv("GEMINI_API_KEY", SECRET)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", base)
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(
        json.dumps({"id": "p1", "prompt": "A clock at 10:10.", "axis": "symbolic"})
        + "\n"
        + json.dumps({"id": "p2", "prompt": "A clock at ten past ten.", "axis": "symbolic"})
        + "\n"
    )
    out, cache, cassette = tmp_path / "drafts", tmp_path / "cache", tmp_path / "calls.jsonl"
    args = ["author", str(prompts), "--judge", spec, "--out", str(out), "--cache-dir", str(cache)]
    result = CliRunner().invoke(app, [*args, "--record", str(cassette)])
    assert result.exit_code == 0, result.output
    assert "authored 2 (0 kept from before), failed 0, calls 3" in result.output
    assert len(server.bodies) == 3
    schema, catalogue = response_schema(), catalogue_text()
    for body in server.bodies:
        parts = gemini_request_parts if kind == "gemini" else openai_request_parts
        images, text = parts(body)
        assert images == []
        assert catalogue in text
        if kind == "gemini":
            assert body["generationConfig"]["responseJsonSchema"] == schema
        else:
            assert body["response_format"]["json_schema"]["schema"] == schema
            assert body["response_format"]["json_schema"]["name"] == "author"
    retry = next(b for b in server.bodies if "failed validation" in json.dumps(b))
    assert "a grounded question needs a 'check'" in json.dumps(retry)
    programs = load_programs(out / "programs.jsonl")
    assert [p.provenance.judge for p in programs if p.provenance] == [spec, spec]
    assert [p.provenance.rounds for p in programs if p.provenance] == [1, 2]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["input_tokens"] == 3000 and summary["output_tokens"] == 600
    assert summary["cost_usd"] > 0
    # a second run is served from the cache: no request reaches the server
    again = CliRunner().invoke(
        app, ["author", str(prompts), "--judge", spec, "--out", str(tmp_path / "d2"),
              "--cache-dir", str(cache)],
    )  # fmt: skip
    assert again.exit_code == 0 and len(server.bodies) == 3
    for folder in (out, tmp_path / "d2", cache, cassette):
        files = [folder] if folder.is_file() else [p for p in folder.rglob("*") if p.is_file()]
        assert files
        for path in files:
            assert SECRET.encode() not in path.read_bytes(), path
