"""A whole `groundeval run` through the real openai / google-genai SDKs on a local server.

Cache: a second run makes 0 calls. Replay: the same results.jsonl bytes. No API key on disk.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

from groundeval.programs.cli import app
from tests._support.fakeapi import (
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)
from tests._support.paths import write_image

SECRET = "sk-test-DO-NOT-LEAK-1234567890"
PATHS = {"openai": "/v1/chat/completions", "gemini": "/v1/models/gemini-2.5-flash:generateContent"}


class Judge:
    """Answers every question of a prompt: gate 'no' for scenes 1 and 4, h1 'no' for 2, 5."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.requests = 0
        self.images = 0
        self.lock = threading.Lock()

    def __call__(self, request: Request) -> Response:
        parts = gemini_request_parts if self.kind == "gemini" else openai_request_parts
        images, text = parts(request.get_json())
        with self.lock:
            self.requests += 1
            self.images += len(images)
        scene = int(text.split("generated for this prompt: scene ", 1)[1].split("\n", 1)[0])
        ids = [p.split("]", 1)[0] for p in text.split("[id=")[1:]]
        no = {"g1": (1, 4), "h1": (2, 5)}
        answers = [{"id": i, "result": scene not in no.get(i, ()), "reason": "looked"} for i in ids]
        reply = json.dumps({"answers": answers})
        body = gemini_body(reply) if self.kind == "gemini" else openai_body(reply)
        return Response(json.dumps(body), 200, content_type="application/json")


def _programs(tmp_path: Path, n: int = 6) -> tuple[Path, Path]:
    images = tmp_path / "images"
    rows = []
    for i in range(n):
        write_image(images / f"p{i}.png", 40 + i, 30)
        rows.append({
            "id": f"p{i}",
            "prompt": f"scene {i}",
            "gates": [{"id": "g1", "ask": "Is anything there?"}],
            "hard": [
                {"id": "h1", "ask": "Is it green?"},
                {"id": "h2", "ask": "Is it square?", "requires": ["h1"]},
                {"id": "h3", "ask": "Is it large?", "weight": 2},
            ],
        })  # fmt: skip
    path = tmp_path / "programs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path, images


@pytest.mark.parametrize("kind", ["openai", "gemini"])
def test_cache_replay_and_no_key_on_disk(
    kind: str, tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    judge = Judge(kind)
    httpserver.expect_request(PATHS[kind], method="POST").respond_with_handler(judge)
    base = httpserver.url_for("/").rstrip("/")
    if kind == "openai":
        spec = f"openai:fake-vl@{base}/v1"
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    else:
        spec = "gemini:gemini-2.5-flash"
        monkeypatch.setenv("GEMINI_API_KEY", SECRET)
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", base)
    programs, images = _programs(tmp_path)
    cache, cassette = tmp_path / "cache", tmp_path / "calls.jsonl"
    runner = CliRunner()

    def run(out: str, *extra: str) -> bytes:
        args = ["run", str(programs), "--images", str(images), "--out", str(tmp_path / out)]
        result = runner.invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        return (tmp_path / out / "results.jsonl").read_bytes()

    first = run("r1", "--judge", spec, "--cache-dir", str(cache), "--record", str(cassette))
    calls = judge.requests
    assert calls == 6 + 4 + 2  # gates; h1 + h3 where the gate passed; h2 only where h1 passed
    assert judge.images == calls  # every call carried the item's image
    results = [json.loads(line) for line in first.split(b"\n")[:-1]]
    assert all(r["status"] == "scored" for r in results)
    assert [r["gate_failed"] for r in results] == [None, "g1", None, None, "g1", None]
    skipped = {r["item_id"] for r in results for d in r["decisions"] if d["source"] == "skipped"}
    assert skipped == {"p2", "p5"}

    assert run("r2", "--judge", spec, "--cache-dir", str(cache)) == first
    assert judge.requests == calls  # everything came from the cache

    assert run("r3", "--judge", f"replay:{cassette}", "--no-cache") == first
    assert judge.requests == calls  # the cassette replays the whole run offline

    usage = [json.loads(x) for x in (tmp_path / "r1" / "usage.jsonl").read_text().split("\n")[:-1]]
    assert sum(u["usage"]["calls"] for u in usage) == calls
    cached = [json.loads(x) for x in (tmp_path / "r2" / "usage.jsonl").read_text().split("\n")[:-1]]
    assert sum(u["usage"]["calls"] for u in cached) == 0
    assert sum(u["usage"]["cached_calls"] for u in cached) == calls

    for folder in (tmp_path / "r1", tmp_path / "r2", tmp_path / "r3", cache, cassette):
        files = [folder] if folder.is_file() else [p for p in folder.rglob("*") if p.is_file()]
        assert files
        for path in files:
            assert SECRET.encode() not in path.read_bytes(), path
