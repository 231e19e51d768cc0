"""groundeval author: drafts from a scripted judge, feedback rounds, failures, review and apply."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundeval.judges import JudgeCall, JudgeError, ScriptedJudge, wrap_judge
from groundeval.programs import _checks, register_check
from groundeval.programs._author import (
    AXES,
    AuthorPrompt,
    PromptFileError,
    author_all,
    author_one,
    read_prompts,
    response_schema,
    validate_draft,
)
from groundeval.programs._author_cli import write_outcomes
from groundeval.programs._author_review import ReviewError, apply_decisions, write_review
from groundeval.programs._author_script import read_replies, scripted_author
from groundeval.programs._catalogue import build_catalogue, catalogue_text
from groundeval.programs._loaders import load_programs
from groundeval.programs.cli import app
from tests._support.paths import REPO

ROOT = REPO
EXAMPLE = ROOT / "examples" / "author"
sys.path.insert(0, str(EXAMPLE))
from images import write_images  # noqa: E402

GOOD = {
    "gates": [
        {
            "id": "g1",
            "ask": "Is there a die?",
            "ground": {"helper": "boxes", "target": "each die", "proposer": "opencv.dice"},
            "check": "count(elements) >= 1",
        }
    ],
    "hard": [
        {"id": "h1", "ask": "Five dice?", "uses": "g1", "check": "count(elements) == 5"},
        {"id": "h2", "ask": "Is the table green?", "weight": 0.5},
    ],
}


def _prompt(pid: str = "p1", **kw: Any) -> AuthorPrompt:
    return AuthorPrompt(pid, kw.pop("prompt", "Five dice on a green table."), **kw)


def _judge(*replies: Any) -> tuple[Any, list[JudgeCall]]:
    calls: list[JudgeCall] = []

    def answer(call: JudgeCall) -> str:
        calls.append(call)
        reply = replies[min(len(calls), len(replies)) - 1]
        return reply if isinstance(reply, str) else json.dumps(reply)

    return wrap_judge(ScriptedJudge(on_call=answer, spec="scripted")), calls


def _bad(change: str) -> dict[str, Any]:
    draft = json.loads(json.dumps(GOOD))
    if change == "expression":
        draft["hard"][0]["check"] = "count(elements) == 5 and open('x')"
    elif change == "proposer":
        draft["gates"][0]["ground"]["proposer"] = "opencv.dies"
    elif change == "parameter":
        draft["gates"][0]["ground"]["params"] = {"treshold": 180}
    elif change == "reference":
        draft["hard"][0]["uses"] = "h7"
    return draft


# ----------------------------------------------------------------------------- catalogue


def test_catalogue_comes_from_the_registries_and_shows_new_registrations() -> None:
    catalogue = build_catalogue()
    proposers = {p["name"]: p for p in catalogue["proposers"]}
    assert proposers["opencv.dice"]["fills"]["fields"] == {"pips": "integer 1-6"}
    assert (
        "min_side_px" in json.dumps(proposers["opencv.dice"]["params"])
        or proposers["opencv.dice"]["params"]
    )
    checks = {c["name"]: c for c in catalogue["checks"]}
    assert checks["clock_time"]["args"]["expected"] == {"type": "str", "required": True}
    assert checks["lines_concurrent"]["args"]["tolerance_px"]["default"] == 10.0
    assert {"offline", "judge"} <= {v["name"] for v in catalogue["verifiers"]}
    assert "count" in catalogue["expression"]["functions"]
    assert "my_brand_new_check" not in catalogue_text()

    @register_check("my_brand_new_check")
    def my_brand_new_check(elements, state, *, colour: str, share: float = 1.0):  # type: ignore[no-untyped-def]
        """Every element has this colour."""
        return 1.0, "ok"

    try:
        text = catalogue_text()
        assert "my_brand_new_check" in text and "Every element has this colour." in text
        assert '"colour":{"required":true,"type":"str"}' in text
        judge, calls = _judge(GOOD)
        asyncio.run(author_one(judge, _prompt()))
        assert "my_brand_new_check" in calls[0].prompt  # no prompt was edited to show it
    finally:
        _checks._REGISTRY.pop("my_brand_new_check", None)


def test_request_carries_the_program_schema_and_the_rationale_goes_to_instructions() -> None:
    judge, calls = _judge(GOOD)
    prompt = _prompt(axis="world", rationale="The event happened at 11:40.")
    outcome = asyncio.run(author_one(judge, prompt))
    assert outcome.program is not None
    call = calls[0]
    assert call.task == "author" and call.response_schema == response_schema()
    assert "status" not in call.response_schema["properties"]
    assert "hard" in call.response_schema["properties"]
    assert "The event happened at 11:40." in call.prompt
    program = outcome.program
    assert "11:40" in program.instructions and "11:40" not in program.prompt
    assert program.tags["axis"] == "world"


# ----------------------------------------------------------------------------- drafting


def test_twenty_prompts_across_all_nine_axes_become_valid_drafts(tmp_path: Path) -> None:
    prompts = read_prompts(EXAMPLE / "prompts.jsonl")
    assert len(prompts) == 20 and {p.axis for p in prompts} == set(AXES)
    judge = wrap_judge(scripted_author(read_replies(EXAMPLE / "replies.jsonl")))
    outcomes = asyncio.run(author_all(judge, prompts, concurrency=4))
    summary = write_outcomes(tmp_path, outcomes, [])
    assert summary["authored"] == 20 and summary["failed"] == 0
    assert summary["judge_calls"] == 24 and summary["calls_per_prompt"] <= 1.5
    assert (tmp_path / "failed.jsonl").read_text() == ""
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "programs.jsonl")])
    assert result.exit_code == 0, result.output
    programs = load_programs(tmp_path / "programs.jsonl")
    assert [p.id for p in programs] == [p.id for p in prompts]
    for program, prompt in zip(programs, prompts, strict=True):
        assert program.status == "draft" and program.tags["axis"] == prompt.axis
        assert program.provenance is not None
        assert program.provenance.prompt_sha256 == prompt.sha256
        assert program.provenance.model == "scripted"
    rounds = {p.id: p.provenance.rounds for p in programs if p.provenance}
    assert {k for k, v in rounds.items() if v == 2} == {
        "q-coins-7",
        "compass-clean-00000",
        "shadows-clean-00000",
        "rows-clean-00000",
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("expression", "open"),
        ("proposer", "unknown proposer 'opencv.dies'"),
        ("parameter", "unknown params ['treshold']"),
        ("reference", "'uses' names unknown question 'h7'"),
    ],
)
def test_feedback_corrects_a_mistake_within_the_budget(change: str, message: str) -> None:
    errors = validate_draft({"id": "p1", **_bad(change)})
    assert errors and any(message in e for e in errors), errors
    judge, calls = _judge(_bad(change), GOOD)
    outcome = asyncio.run(author_one(judge, _prompt(), budget=3))
    assert outcome.program is not None and outcome.rounds == 2 and len(calls) == 2
    assert message in calls[1].prompt  # the validation message went back to the judge
    assert json.dumps(_bad(change)) in calls[1].prompt
    assert outcome.program.provenance is not None and outcome.program.provenance.rounds == 2


def test_a_judge_that_never_validates_ends_in_failed_only(tmp_path: Path) -> None:
    judge, calls = _judge("not json at all", _bad("proposer"), _bad("reference"))
    outcomes = asyncio.run(author_all(judge, [_prompt("p1")], budget=3))
    summary = write_outcomes(tmp_path, outcomes, [])
    assert len(calls) == 3 and summary == {**summary, "authored": 0, "failed": 1}
    assert (tmp_path / "programs.jsonl").read_text() == ""
    failed = [json.loads(x) for x in (tmp_path / "failed.jsonl").read_text().split("\n") if x]
    assert failed[0]["id"] == "p1" and failed[0]["rounds"] == 3
    assert any("'uses' names unknown question 'h7'" in e for e in failed[0]["errors"])
    assert "h7" in failed[0]["last_reply"]
    assert "not json" in calls[1].prompt  # the non-JSON reply was fed back too


def test_judge_errors_and_author_owned_keys() -> None:
    def broken(call: JudgeCall) -> str:
        raise JudgeError("http 500 after 5 attempts", reason="http 500")

    outcome = asyncio.run(author_one(wrap_judge(ScriptedJudge(on_call=broken)), _prompt()))
    assert outcome.program is None and outcome.errors == ["judge error: http 500 after 5 attempts"]
    sneaky = {**GOOD, "id": "../etc", "status": "approved", "provenance": {"reviewer": "me"}}
    judge, _ = _judge(sneaky)
    outcome = asyncio.run(author_one(judge, _prompt("p9")))
    assert outcome.program is not None and outcome.program.id == "p9"
    assert outcome.program.status == "draft"
    assert outcome.program.provenance is not None and outcome.program.provenance.reviewer is None


# ----------------------------------------------------------------------------- prompt files


def test_prompt_files_in_three_formats(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Five dice.\n\nA clock at 10:10.\n")
    assert [(p.id, p.prompt) for p in read_prompts(tmp_path / "a.txt")] == [
        ("p0001", "Five dice."),
        ("p0003", "A clock at 10:10."),
    ]
    (tmp_path / "a.csv").write_text('id,prompt,axis\nx1,"Five dice, red",quantity\n,Two cats,\n')
    got = read_prompts(tmp_path / "a.csv")
    assert [(p.id, p.prompt, p.axis) for p in got] == [
        ("x1", "Five dice, red", "quantity"),
        ("p0002", "Two cats", None),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"id": "a/b", "prompt": "x"}\n{"id": "ok", "prompt": ""}\n'
        '{"id": "ok2", "prompt": "x", "axis": "humour"}\n{"id": "ok3", "prompt": "y"}\n'
        '{"id": "ok3", "prompt": "z", "extra": 1}\nnot json\n'
    )
    with pytest.raises(PromptFileError) as info:
        read_prompts(bad)
    text = str(info.value)
    for expected in (
        "bad.jsonl:1: id:",
        "bad.jsonl:2: prompt:",
        "bad.jsonl:3: axis: expected one of counterfactual",
        "bad.jsonl:5: unknown field(s) ['extra']",
        "bad.jsonl:6: not JSON",
    ):
        assert expected in text


# ----------------------------------------------------------------------------- CLI, run gate


def _entries(part: dict[str, Any]) -> list[tuple[str, Any]]:
    """(key, entry) pairs: list sections entry by entry, other keys whole."""
    out: list[tuple[str, Any]] = []
    for key, value in part.items():
        out += [(key, v) for v in value] if isinstance(value, list) else [(key, value)]
    return out


def _as_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide what test modules registered: the cassette was recorded with the shipped catalogue."""
    from groundeval.grounding import _protocol

    for registry in (_protocol._PROPOSERS, _protocol._VERIFIERS):
        for name, factory in list(registry.items()):
            if not factory.__module__.startswith("groundeval."):
                monkeypatch.delitem(registry, name)
    for name, entry in list(_checks._registry().items()):
        if not entry.origin.startswith("groundeval."):
            monkeypatch.delitem(_checks._REGISTRY, name)
    from groundeval.state import Registry

    for kind in ("scoring protocol", "judge backend"):  # the catalogue lists these too
        others = Registry.registries().get(kind)
        for name in list(others or ()):
            if others is not None and not others.origin(name).startswith("groundeval."):
                monkeypatch.delitem(others, name)


def test_offline_example_from_the_cassette_then_run_refuses_drafts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _as_installed(monkeypatch)
    recorded = json.loads((EXAMPLE / "catalogue.json").read_text())
    now = {"catalogue": build_catalogue(), "response_schema": response_schema()}
    changed = [
        f"{part}.{entry.get('name', key) if isinstance(entry, dict) else key}"
        for part in ("catalogue", "response_schema")
        for key, entry in _entries(now[part])
        if entry not in [e for _, e in _entries(recorded[part])]
    ]
    assert not changed, (
        f"the catalogue changed since examples/author/cassette.jsonl was recorded ({changed}): "
        "re-record it with .venv/bin/python examples/author/record.py"
    )
    runner = CliRunner()
    out = tmp_path / "drafts"
    args = ["author", str(EXAMPLE / "prompts.jsonl"), "--out", str(out), "--no-cache"]
    result = runner.invoke(app, [*args, "--judge", f"replay:{EXAMPLE / 'cassette.jsonl'}"])
    assert result.exit_code == 0, (
        f"{result.output}\nIf the catalogue changed (a new proposer or check), re-record: "
        ".venv/bin/python examples/author/record.py"
    )
    assert "authored 20 (0 kept from before), failed 0, calls 24" in result.output
    assert runner.invoke(app, ["validate", str(out / "programs.jsonl")]).exit_code == 0
    again = runner.invoke(app, [*args, "--judge", "replay:/nonexistent.jsonl", "--resume"])
    assert again.exit_code == 1 and "does not exist" in again.output
    gen = tmp_path / "gen"
    ids = write_images(gen)
    assert len(ids) == 6
    run = ["run", str(out / "programs.jsonl"), "--manifest", str(gen / "manifest.jsonl")]
    refused = runner.invoke(app, [*run, "--out", str(tmp_path / "r1")])
    assert refused.exit_code == 2 and "unreviewed drafts" in refused.output
    assert not (tmp_path / "r1" / "results.jsonl").exists()
    allowed = runner.invoke(app, [*run, "--out", str(tmp_path / "r2"), "--allow-drafts"])
    assert allowed.exit_code == 0, allowed.output
    # the drafts decide the synthetic scenes' exact truth, offline
    truth: dict[str, str] = {}
    for line in (gen / "truth.jsonl").read_text().split("\n"):
        truth.update(json.loads(line)["answers"] if line else {})
    lines = (tmp_path / "r2" / "results.jsonl").read_text().split("\n")
    decided = 0
    for result in (json.loads(x) for x in lines if x):
        for d in result["decisions"]:
            expected = truth[f"{result['item_id']}/{d['question_id']}"]
            assert d["outcome"] == expected, (result["item_id"], d["question_id"], d["reason"])
            decided += 1
    assert decided == 16


def test_resume_keeps_authored_programs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _as_installed(monkeypatch)
    runner = CliRunner()
    prompts = tmp_path / "p.jsonl"
    rows = [r for r in (EXAMPLE / "prompts.jsonl").read_text().split("\n") if r][:3]
    prompts.write_text("\n".join(rows) + "\n")
    cassette = f"replay:{EXAMPLE / 'cassette.jsonl'}"
    args = ["author", str(prompts), "--out", str(tmp_path / "d"), "--no-cache"]
    assert runner.invoke(app, [*args, "--judge", cassette]).exit_code == 0
    bigger = [r for r in (EXAMPLE / "prompts.jsonl").read_text().split("\n") if r][:5]
    prompts.write_text("\n".join(bigger) + "\n")
    result = runner.invoke(app, [*args, "--judge", cassette, "--resume"])
    assert result.exit_code == 0, result.output
    assert "authored 5 (3 kept from before)" in result.output
    summary = json.loads((tmp_path / "d" / "summary.json").read_text())
    assert summary["prompts_drafted"] == 2


# ----------------------------------------------------------------------------- review, apply


def _drafts(tmp_path: Path) -> Path:
    prompts = [
        _prompt("a1", prompt='Five dice <script>alert("x")</script> & more.'),
        _prompt("a2"),
        _prompt("a3"),
    ]
    judge, _ = _judge(GOOD)
    outcomes = asyncio.run(author_all(judge, prompts))
    write_outcomes(tmp_path, outcomes, [])
    return tmp_path


def test_review_page_is_static_and_escaped(tmp_path: Path) -> None:
    folder = _drafts(tmp_path)
    result = CliRunner().invoke(app, ["author", "review", str(folder)])
    assert result.exit_code == 0, result.output
    html = (folder / "review" / "index.html").read_text()
    assert "<script>alert" not in html and "&lt;script&gt;alert" in html
    assert "Content-Security-Policy" in html and "http://" not in html and "https://" not in html
    assert html.count('class="draft"') == 3
    assert "opencv.dice" in html and "count(elements) == 5" in html  # helper and check in words
    assert 'data-weight="h2"' in html and 'value="0.5"' in html
    assert (folder / "review" / "static" / "author.js").is_file()
    (folder / "review" / "stray.txt").write_text("x")
    assert CliRunner().invoke(app, ["author", "review", str(folder)]).exit_code == 0
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "keep.txt").write_text("mine")
    with pytest.raises(ReviewError, match="not empty"):
        write_review(folder, tmp_path / "other")


def test_review_apply_round_trip(tmp_path: Path) -> None:
    folder = _drafts(tmp_path)
    write_review(folder)
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(
        json.dumps({"id": "a1", "decision": "approve", "weights": {"h2": 3}, "reviewer": "Ann"})
        + "\n"
        + json.dumps({"id": "a2", "decision": "reject", "note": "vague", "reviewer": "Ann"})
        + "\n"
    )
    result = CliRunner().invoke(app, ["author", "apply", str(folder), str(decisions)])
    assert result.exit_code == 0, result.output
    assert "approved 1, rejected 1, still draft 1" in result.output
    programs = {p.id: p for p in load_programs(folder / "programs.jsonl")}
    assert set(programs) == {"a1", "a3"}
    a1 = programs["a1"]
    assert a1.status == "approved" and a1.question("h2").weight == 3.0
    assert a1.provenance is not None and a1.provenance.reviewer == "Ann"
    assert programs["a3"].status == "draft"
    rejected = json.loads((folder / "rejected.jsonl").read_text())
    assert rejected["id"] == "a2" and rejected["note"] == "vague" and rejected["reviewer"] == "Ann"
    write_review(folder)  # the page shows the approval
    assert "approved by Ann" in (folder / "review" / "index.html").read_text()


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": "zz", "decision": "approve", "reviewer": "A"}, "id: no draft 'zz'"),
        ({"id": "a1", "decision": "maybe", "reviewer": "A"}, "decision: expected approve"),
        ({"id": "a1", "decision": "approve"}, "reviewer: expected the reviewer's name"),
        (
            {"id": "a1", "decision": "approve", "reviewer": "A", "weights": {"g1": 2}},
            "weights.g1: no hard question",
        ),
        (
            {"id": "a1", "decision": "approve", "reviewer": "A", "weights": {"h1": 0}},
            "weights.h1: expected a number > 0",
        ),
    ],
)
def test_bad_decisions_change_nothing(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    folder = _drafts(tmp_path)
    before = (folder / "programs.jsonl").read_bytes()
    decisions = tmp_path / "decisions.jsonl"
    decisions.write_text(json.dumps(row) + "\n")
    with pytest.raises(ReviewError, match="decisions.jsonl:1: " + message.split(":")[0]) as info:
        apply_decisions(folder, decisions)
    assert message in str(info.value)
    assert (folder / "programs.jsonl").read_bytes() == before
