"""End to end: a judge's unusable boxes are withheld, never a fail; an echoed key is never stored.

Both go through the real loop and runner (``run_items`` / ``groundeval run``); the
key test goes through the real google-genai and openai SDKs over a local socket.
"""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner
from werkzeug import Request, Response

import groundeval.grounding.proposers.judge
import groundeval.grounding.verifiers.judge  # noqa: F401  (register "judge")
from groundeval.grounding._loop import encode_png
from groundeval.grounding._protocol import Feedback, ProposeRequest, get_proposer
from groundeval.judges import ImagePart, JudgeCall, ScriptedJudge, wrap_judge
from groundeval.programs._loaders import load_program_files
from groundeval.programs._model import GroundSpec
from groundeval.programs._run import items_from_images, run_items
from groundeval.programs.cli import app
from tests._support.fakeapi import (
    gemini_body,
    gemini_request_parts,
    openai_body,
    openai_request_parts,
)
from tests._support.paths import write_image

W, H = 64, 48
NAN, INF = math.nan, math.inf
BAD_BOXES: list[tuple[list[float], str]] = [
    ([NAN, 100, 500, 400], "ymin=NaN is not a finite number"),
    ([100, INF, 500, 400], "xmin=inf is not a finite number"),
    ([100, 100, -INF, 400], "ymax=-inf is not a finite number"),
    ([100, -300, 500, 400], "xmin=-300 is negative (the grid is 0..1000)"),
    ([100, 100, 1700, 400], "ymax=1700 is outside the image (the grid is 0..1000)"),
    ([600, 100, 200, 400], "corners swapped: ymin=600 > ymax=200"),
    ([100, 800, 500, 300], "corners swapped: xmin=800 > xmax=300"),
]


def _bad_proposal(item: int) -> str:
    """Three unusable boxes (json.dumps writes NaN / Infinity as a model would)."""
    boxes = [BAD_BOXES[(item + k) % len(BAD_BOXES)][0] for k in range(3)]
    return json.dumps({"elements": [{"label": "die", "box_2d": b} for b in boxes]})


def _script(call: JudgeCall) -> str:
    if call.task == "propose":
        return _bad_proposal(int(call.item_id.removeprefix("p")))
    marks = call.context.get("elements") or []
    return json.dumps(
        {"verdicts": [{"id": m["id"], "ok": True, "reason": "fine"} for m in marks], "missing": []}
    )


def test_judge_proposer_lists_every_unusable_box_with_its_reason() -> None:
    bgr = np.full((H, W, 3), 40, np.uint8)
    image = ImagePart(encode_png(bgr), "image/png", (W, H))
    boxes = [b for b, _ in BAD_BOXES] + [[100, 100, 500, 400]]
    reply = json.dumps({"elements": [{"label": "die", "box_2d": b} for b in boxes]})
    judge = ScriptedJudge(on_call=lambda call: reply, spec="gemini:scripted")
    spec = GroundSpec(helper="boxes", target="each die", proposer="judge")
    request = ProposeRequest(bgr, image, spec, "How many dice?", Feedback(), judge, "i", "q")
    proposal = asyncio.run(get_proposer("judge").propose(request))
    assert [e.xyxy_px for e in proposal.elements] == [
        pytest.approx([0.1 * W, 0.1 * H, 0.4 * W, 0.5 * H])
    ]
    assert proposal.dropped == [f"proposal {i}: {why}" for i, (_, why) in enumerate(BAD_BOXES, 1)]


@pytest.mark.parametrize("verifier", ["judge", "offline"])
def test_fifteen_items_of_bad_boxes_end_withheld_never_grounded_or_failed(
    tmp_path: Path, verifier: str
) -> None:
    program = {
        "gates": [],
        "hard": [
            {
                "id": "h1",
                "ask": "Are there at least two dice?",
                "ground": {
                    "helper": "boxes",
                    "target": "each die",
                    "proposer": "judge",
                    "verifier": verifier,
                    "budget": 2,
                },
                "check": "count(elements) >= 2",
            }
        ],
    }
    rows = [{"id": f"p{i}", "prompt": f"dice {i}", **program} for i in range(15)]
    path = tmp_path / "programs.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for i in range(15):
        write_image(tmp_path / "images" / f"p{i}.png", W, H)
    items = items_from_images(load_program_files([path]), tmp_path / "images")
    scripted = ScriptedJudge(on_call=_script, spec="gemini:scripted")
    judge = wrap_judge(scripted, retries=1)
    out = tmp_path / "run"
    asyncio.run(run_items(items, judge=judge, out=out))

    lines = (out / "results.jsonl").read_text(encoding="utf-8").split("\n")
    results = [json.loads(line) for line in lines if line]
    assert len(results) == 15
    outcomes = [d["outcome"] for r in results for d in r["decisions"]]
    assert "fail" not in outcomes and "pass" not in outcomes, outcomes
    assert outcomes == ["withheld"] * 15
    for result in results:
        i = int(result["item_id"].removeprefix("p"))
        decision = result["decisions"][0]
        state = json.loads((out / decision["state_file"]).read_text(encoding="utf-8"))
        assert state["status"] == "withheld" and state["elements"] == []
        dropped = [d for r in state["rounds"] for d in r["dropped"]]
        wanted = {BAD_BOXES[(i + k) % len(BAD_BOXES)][1] for k in range(3)}
        assert {d.split(": ", 1)[1] for d in dropped} == wanted
    proposals = [c for c in scripted.calls if c.task == "propose"]
    assert 15 <= len(proposals) <= 30  # the budget bounds the rounds


KEY = "sk-echo-THIS-KEY-MUST-NOT-LEAK-0123456789"
PATHS = {"openai": "/v1/chat/completions", "gemini": "/v1/models/gemini-2.5-flash:generateContent"}


class EchoingJudge:
    """A server that puts the caller's key into every reason, label and message it writes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.requests = 0

    def __call__(self, request: Request) -> Response:
        self.requests += 1
        split = gemini_request_parts if self.kind == "gemini" else openai_request_parts
        _, text = split(request.get_json())
        echo = f"(auth {KEY})"
        if "You mark evidence" in text:  # a proposal: labels and one unusable box echo it
            reply: dict[str, Any] = {
                "elements": [
                    {"label": f"die {echo}", "box_2d": [100, 100, 500, 400]},
                    {"label": f"die {echo}", "box_2d": [100, 550, 500, 900]},
                    {"label": echo, "box_2d": [900, 100, 100, 400]},
                ]
            }
        elif "numbered help lines" in text:  # a verification
            ids = [int(p.split(" ", 1)[0]) for p in text.split("Marks: ", 1)[1].split("#")[1:]]
            reply = {
                "verdicts": [{"id": i, "ok": True, "reason": f"ok {echo}"} for i in ids],
                "missing": [f"nothing {echo}"] if ids else [],
            }
        else:
            qids = [p.split("]", 1)[0] for p in text.split("[id=")[1:]]
            reply = {"answers": [{"id": q, "result": True, "reason": f"yes {echo}"} for q in qids]}
        raw = json.dumps(reply) + f"\nNote: request signed with {KEY}"
        body = gemini_body(raw) if self.kind == "gemini" else openai_body(raw)
        return Response(json.dumps(body), 200, content_type="application/json")


@pytest.mark.parametrize("kind", ["gemini", "openai"])
def test_a_key_echoed_by_the_judge_is_in_no_stored_file(
    kind: str, tmp_path: Path, httpserver: HTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = EchoingJudge(kind)
    httpserver.expect_request(PATHS[kind], method="POST").respond_with_handler(server)
    base = httpserver.url_for("/").rstrip("/")
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    if kind == "gemini":  # the key from the environment
        monkeypatch.setenv("GEMINI_API_KEY", KEY)
        judge_args = ["--judge", "gemini:gemini-2.5-flash", "--judge-param", f"base_url={base}"]
    else:  # the key the backend was built with, given on the command line
        judge_args = ["--judge", f"openai:fake@{base}/v1", "--judge-param", f"api_key={KEY}"]
    program = {
        "id": "dice",
        "prompt": "Two dice",
        "gates": [{"id": "g1", "ask": "Is there a die?"}],
        "hard": [
            {
                "id": "h1",
                "ask": "Are there two dice?",
                "ground": {"helper": "boxes", "target": "each die", "proposer": "judge",
                           "verifier": "judge", "budget": 2},
                "check": "count(elements) == 2",
            },
            {"id": "h2", "ask": "Are they red?"},
        ],
    }  # fmt: skip
    programs = tmp_path / "programs.jsonl"
    programs.write_text(json.dumps(program) + "\n", encoding="utf-8")
    write_image(tmp_path / "images" / "dice.png", 200, 100)
    out, cache, cassette = tmp_path / "run", tmp_path / "cache", tmp_path / "calls.jsonl"
    args = ["run", str(programs), "--images", str(tmp_path / "images"), "--out", str(out)]
    result = CliRunner().invoke(
        app, [*args, *judge_args, "--cache-dir", str(cache), "--record", str(cassette)]
    )
    assert result.exit_code == 0, result.output
    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code == 0, report.output
    assert server.requests >= 4  # gate, h2, a proposal and a verification

    text = (out / "results.jsonl").read_text(encoding="utf-8")
    assert "<redacted>" in text  # the echoes were there, and were scrubbed
    states = [p for p in out.rglob("*.json") if "state" in p.parts]
    assert states and any("<redacted>" in p.read_text(encoding="utf-8") for p in states)
    files = [p for folder in (out, cache) for p in folder.rglob("*") if p.is_file()]
    assert len(files) > 5 and any(p.suffix == ".html" for p in files)
    for path in [*files, cassette]:
        assert KEY.encode() not in path.read_bytes(), path


def test_run_repeat_index_asks_again_once_per_index(tmp_path: Path, httpserver: HTTPServer) -> None:
    """``run --repeat-index k`` reaches the judge builder: each new index samples again."""
    requests: list[int] = []

    def answer(request: Request) -> Response:
        requests.append(1)
        _, text = openai_request_parts(request.get_json())
        qids = [p.split("]", 1)[0] for p in text.split("[id=")[1:]]
        reply = {"answers": [{"id": q, "result": True, "reason": "seen"} for q in qids]}
        return Response(json.dumps(openai_body(json.dumps(reply))), 200)

    httpserver.expect_request(PATHS["openai"]).respond_with_handler(answer)
    program = {"id": "p0", "prompt": "x", "gates": [], "hard": [{"id": "h1", "ask": "Red?"}]}
    (tmp_path / "programs.jsonl").write_text(json.dumps(program) + "\n", encoding="utf-8")
    write_image(tmp_path / "images" / "p0.png")
    judge = f"openai:fake@{httpserver.url_for('/v1')}"

    def run(out: str, *extra: str) -> int:
        before = len(requests)
        args = ["run", str(tmp_path / "programs.jsonl"), "--images", str(tmp_path / "images")]
        args += ["--out", str(tmp_path / out), "--judge", judge, "--cache-dir", str(tmp_path / "c")]
        result = CliRunner().invoke(app, [*args, *extra])
        assert result.exit_code == 0, result.output
        return len(requests) - before

    assert run("r0") == 1 and run("r0b") == 0  # the cache serves a plain re-run
    assert run("r1", "--repeat-index", "1") == 1  # a repeat asks again
    assert run("r1b", "--repeat-index", "1") == 0 and run("r2", "--repeat-index", "2") == 1
    for out, index in (("r0", None), ("r2", 2)):
        params = json.loads((tmp_path / out / "run.json").read_text(encoding="utf-8"))
        assert params["parameters"].get("repeat_index") == index  # the judge's parameters
