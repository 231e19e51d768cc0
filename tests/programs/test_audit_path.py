"""The audit path: rescore gives checks the run's states, overrides reach dependents
(pending, then ``run --resume`` asks only those), resume re-asks errors and damaged
state files, overrides are archived and shown, and a no-op rescore changes no byte."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundeval.judges import ScriptedJudge
from groundeval.programs import Program
from groundeval.programs._rescore import read_override_archive, rescore_run
from groundeval.programs._run import RunReport, run_items
from groundeval.programs._runner import ItemInput
from groundeval.programs.cli import app
from groundeval.state._store import RunStore
from tests._support.paths import REPO, write_image

BOXES = [[5, 5, 12, 12, {"pips": 3}], [20, 5, 30, 12, {"pips": 2}]]
GROUND = {
    "helper": "boxes",
    "proposer": "test.boxes",
    "verifier": "test.accept",
    "params": {"boxes": BOXES},
}


def _program(pid: str = "p1") -> Program:
    """h1 fails (2 dice, not 3); h2 compares its grounding with h1's; h3 reads h1's state
    through ``requires``; h4 is a judge question under h1; h5 is independent."""
    return Program.model_validate(
        {
            "id": pid,
            "gates": [{"id": "g1", "ask": "A die?"}],
            "hard": [
                {
                    "id": "h1",
                    "ask": "Three dice?",
                    "ground": GROUND,
                    "check": "count(elements) == 3",
                },
                {
                    "id": "h2",
                    "ask": "As many dice as h1?",
                    "ground": GROUND,
                    "requires": ["h1"],
                    "check": "count(elements) == count(states['h1'])",
                },
                {
                    "id": "h3",
                    "ask": "Pips over 4?",
                    "requires": ["h1"],
                    "check": "sum(e.pips for e in elements) > 4",
                },
                {"id": "h4", "ask": "Red table?", "requires": ["h1"]},
                {"id": "h5", "ask": "A shadow?"},
            ],
        }
    )


def _run(
    tmp: Path, judge: ScriptedJudge, *, resume: bool = False, items: list[ItemInput] | None = None
) -> RunReport:
    if items is None:
        items = [ItemInput("i1", _program(), [write_image(tmp / "a.png", 60, 20)])]
    return asyncio.run(run_items(items, judge=judge, out=tmp / "run", resume=resume))


def _overrides(tmp: Path, *rows: dict[str, object]) -> Path:
    path = tmp / "audit.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def _decisions(run: Path, item: str = "i1") -> dict[str, tuple[str, str]]:
    result = next(r for r in RunStore(run).results() if r.item_id == item)
    return {d.question_id: (d.outcome, d.source) for d in result.decisions}


def _asked(judge: ScriptedJudge) -> list[str]:
    return [q.id for call in judge.calls for q in call.questions]


def test_rescore_without_overrides_changes_no_byte(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    before = {n: (run / n).read_bytes() for n in ("results.jsonl", "summary.json", "summary.csv")}
    report = rescore_run(run)
    assert report.rechecked == 1 and report.changed == 0 and report.pending == []
    assert {n: (run / n).read_bytes() for n in before} == before
    assert not (run / "overrides.jsonl").exists()


def test_override_rechecks_dependents_and_marks_judge_children_pending(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    assert _decisions(run)["h2"] == ("fail", "skipped")
    report = rescore_run(
        run, _overrides(tmp_path, {"item": "i1", "question": "h1", "outcome": "pass"})
    )
    # h2 (cross-question check: states['h1']) and h3 (grounded requires) are decided by
    # their checks; h2 needs its own grounding, which the run never made: pending
    got = _decisions(run)
    assert got["h1"] == ("pass", "human")
    assert got["h3"] == ("pass", "check")
    assert got["h2"] == ("pending", "check") and got["h4"] == ("pending", "judge")
    assert got["h5"] == ("fail", "judge")
    assert report.pending == ["i1/h2", "i1/h4"]
    result = RunStore(run).results()[0]
    assert result.status == "pending" and result.scores == {}
    assert "run --resume" in (result.error or "")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"]["pending"] == 1
    assert summary["problems"]["overall"]["pending_decisions"] == 2

    judge = ScriptedJudge({"g1": True, "h4": True, "h5": True})
    resumed = _run(tmp_path, judge, resume=True)
    assert _asked(judge) == ["h4"]  # only the pending judge question; h5 keeps its answer
    assert resumed.reasked == {"i1": ["h2 is pending", "h4 is pending"]}
    got = _decisions(run)
    assert got == {
        "g1": ("pass", "judge"),
        "h1": ("pass", "human"),
        "h2": ("pass", "check"),
        "h3": ("pass", "check"),
        "h4": ("pass", "judge"),
        "h5": ("fail", "judge"),
    }
    result = RunStore(run).results()[0]
    assert result.status == "scored" and result.scores["relaxed"] == pytest.approx(0.8)


def test_override_to_fail_skips_children_again(tmp_path: Path) -> None:
    judge = ScriptedJudge({"g1": True, "h4": True, "h5": True})
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    _run(tmp_path, judge, items=items)
    run = tmp_path / "run"
    rescore_run(run, _overrides(tmp_path, {"item": "i1", "question": "h1", "outcome": "pass"}))
    _run(tmp_path, ScriptedJudge({"h4": True}), resume=True, items=items)
    assert _decisions(run)["h4"] == ("pass", "judge")
    rescore_run(run, _overrides(tmp_path, {"item": "i1", "question": "h1", "outcome": "fail"}))
    got = _decisions(run)
    assert got["h2"] == got["h3"] == got["h4"] == ("fail", "skipped")


def test_gate_overridden_to_pass_leaves_hard_questions_pending(tmp_path: Path) -> None:
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    _run(tmp_path, ScriptedJudge({"g1": False}), items=items)
    run = tmp_path / "run"
    assert set(_decisions(run)) == {"g1"}
    report = rescore_run(
        run, _overrides(tmp_path, {"item": "i1", "question": "g1", "outcome": "pass"})
    )
    got = _decisions(run)
    # h1 needs its grounding, h3 reads h1's (missing) state, h2/h4 wait on h1, h5 on the judge
    assert {q: o for q, (o, _) in got.items()} == {
        "g1": "pass",
        "h1": "pending",
        "h2": "pending",
        "h3": "pending",
        "h4": "pending",
        "h5": "pending",
    }
    assert len(report.pending) == 5
    judge = ScriptedJudge({"h4": True, "h5": True})
    _run(tmp_path, judge, resume=True, items=items)
    assert _asked(judge) == ["h5"]  # h1 is grounded (2 dice, fails), so h4 is skipped
    got = _decisions(run)
    assert got["h1"] == ("fail", "check") and got["h4"] == ("fail", "skipped")
    assert got["g1"] == ("pass", "human")


def test_resume_reasks_only_error_decisions(tmp_path: Path) -> None:
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    _run(tmp_path, ScriptedJudge({"g1": True}), items=items)  # h5 unanswered: error
    run = tmp_path / "run"
    assert _decisions(run)["h5"] == ("error", "judge")
    assert RunStore(run).results()[0].status == "error"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["problems"]["overall"]["error_decisions"] == 1
    assert summary["problems"]["reasons"][0]["example"] == "i1/h5"
    judge = ScriptedJudge({"g1": True, "h5": True})
    report = _run(tmp_path, judge, resume=True, items=items)
    assert _asked(judge) == ["h5"] and report.reasked == {"i1": ["h5 is error"]}
    assert RunStore(run).results()[0].status == "scored"
    usage = RunStore(run).usages()[0].usage
    assert usage.calls == 2 + 1  # both runs' calls are kept


def test_damaged_state_file_is_reported_by_rescore_and_regrounded_on_resume(
    tmp_path: Path,
) -> None:
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    _run(tmp_path, ScriptedJudge({"g1": True, "h5": True}), items=items)
    run = tmp_path / "run"
    store = RunStore(run)
    path = next(d.state_file for d in store.results()[0].decisions if d.state_file)
    assert path is not None
    (run / path).write_text('{"schema_version": 1, "item_id": "i1", "elem')  # torn
    report = rescore_run(run)
    assert list(report.broken_states) == [path]
    assert _decisions(run)["h1"] == ("error", "check")
    reason = next(d.reason for d in store.results()[0].decisions if d.question_id == "h1")
    assert path in reason and "run --resume" in reason

    judge = ScriptedJudge({"g1": True, "h5": True})
    resumed = _run(tmp_path, judge, resume=True, items=items)
    assert _asked(judge) == []  # the grounding is redone by its proposer, no judge call
    assert "i1" in resumed.reasked
    assert store.read_state(path).status == "grounded"
    assert _decisions(run)["h1"] == ("fail", "check")


def test_resume_validates_state_files_of_finished_items(tmp_path: Path) -> None:
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    _run(tmp_path, ScriptedJudge({"g1": True, "h5": True}), items=items)
    run = tmp_path / "run"
    store = RunStore(run)
    path = next(d.state_file for d in store.results()[0].decisions if d.state_file)
    assert path is not None
    (run / path).write_text("not json")
    assert store.finished_ids() == set()
    report = _run(tmp_path, ScriptedJudge({"g1": True, "h5": True}), resume=True, items=items)
    assert report.graded == 1 and any(path in why for why in report.reasked["i1"])
    assert store.read_state(path).status == "grounded"


def test_overrides_are_archived_with_author_note_and_time(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    first = _overrides(
        tmp_path, {"item": "i1", "question": "h5", "outcome": "pass", "note": "faint shadow"}
    )
    rescore_run(run, first, author="ana")
    second = _overrides(
        tmp_path,
        {"item": "i1", "question": "h5", "outcome": "fail", "note": "no", "author": "bo"},
    )
    rescore_run(run, second)
    archive = read_override_archive(RunStore(run))
    assert [(a.author, a.outcome, a.note) for a in archive] == [
        ("ana", "pass", "faint shadow"),
        ("bo", "fail", "no"),
    ]
    assert archive[0].previous is not None and archive[0].previous.source == "judge"
    assert archive[1].previous is not None and archive[1].previous.source == "human"
    assert archive[1].original is not None and archive[1].original.outcome == "fail"
    assert all(a.time.endswith("+00:00") for a in archive)

    from groundeval.state.report import write_report

    index = write_report([run])
    html = index.read_text()
    assert "who overruled what, and when" in html
    assert archive[0].time in html and "faint shadow" in html and ">bo<" in html
    page = next((index.parent / "items").glob("*.html")).read_text()
    assert f"overridden by bo on {archive[1].time}" in page


def test_a_second_archive_survives_a_merge(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    rescore_run(run, _overrides(tmp_path, {"item": "i1", "question": "h5", "outcome": "pass"}))
    from groundeval.programs._rescore import merge_runs

    merge_runs(tmp_path / "merged", [run])
    assert len(read_override_archive(RunStore(tmp_path / "merged"))) == 1


def test_demo_rescore_keeps_what_the_demo_added(tmp_path: Path) -> None:
    from groundeval.benchmarks.synthetic._demo import run_demo

    out = tmp_path / "demo"
    run_demo(out, per_scene=1)
    before = {n: (out / n).read_bytes() for n in ("results.jsonl", "summary.json")}
    assert "accuracy_vs_truth" in json.loads(before["summary.json"])
    result = CliRunner().invoke(app, ["rescore", str(out)])
    assert result.exit_code == 0, result.output
    assert {n: (out / n).read_bytes() for n in before} == before

    item = RunStore(out).results()[0]
    target = item.decisions[0]
    flipped = "fail" if target.outcome == "pass" else "pass"
    rows = _overrides(
        tmp_path, {"item": item.item_id, "question": target.question_id, "outcome": flipped}
    )
    result = CliRunner().invoke(app, ["rescore", str(out), "--overrides", str(rows)])
    summary = json.loads((out / "summary.json").read_text())
    assert "accuracy_vs_truth" in summary and "accuracy_by_scene" in summary
    assert summary["not_recomputed"] == ["accuracy_by_scene", "accuracy_vs_truth"]


def test_cli_shows_error_counts_per_cell_and_reasks_on_resume(tmp_path: Path) -> None:
    image = write_image(tmp_path / "images" / "p1.png", 60, 20)
    assert image.exists()
    programs = tmp_path / "programs.jsonl"
    data = _program().model_dump(mode="json", exclude_defaults=True)
    data["tags"] = {"axis": "counting"}
    programs.write_text(json.dumps(data) + "\n")
    out = tmp_path / "run"
    args = ["run", str(programs), "--images", str(tmp_path / "images"), "--out", str(out)]
    extra = ["--checks", str(REPO / "tests" / "_support" / "fixtures.py"), "--no-cache"]
    result = CliRunner().invoke(app, [*args, *extra])  # offline judge: judge questions error
    assert result.exit_code == 0, result.output
    assert "not scored (items / decisions)" in result.output
    assert "axis=counting" in result.output
    row = next(line for line in result.output.split("\n") if "axis=counting" in line)
    cell = json.loads((out / "summary.json").read_text())["problems"]["by_tag"]["axis"]["counting"]
    assert cell["error_items"] == 1 and cell["error_decisions"] == 1  # g1; the gate stops there
    assert "1 / 1" in row
    assert "1 x error: " in result.output and "(e.g. p1/g1)" in result.output
    result = CliRunner().invoke(app, [*args, *extra, "--resume"])
    assert result.exit_code == 0, result.output
    assert "re-asked 1 item(s) that had error or pending decisions" in result.output


def test_repeat_index_is_recorded_and_checked_on_resume(tmp_path: Path) -> None:
    items = [ItemInput("i1", _program(), [write_image(tmp_path / "a.png", 60, 20)])]
    judge = ScriptedJudge({"g1": True, "h4": True, "h5": True})
    asyncio.run(run_items(items, judge=judge, out=tmp_path / "r2", repeat_index=2))
    assert RunStore(tmp_path / "r2").config()["repeat_index"] == 2
    with pytest.raises(ValueError, match="repeat_index"):
        asyncio.run(run_items(items, judge=judge, out=tmp_path / "r2", resume=True))
    # a folder written before the key existed resumes as repeat 0
    _run(tmp_path, judge, items=items)
    config = json.loads((tmp_path / "run" / "run.json").read_text())
    del config["repeat_index"]
    (tmp_path / "run" / "run.json").write_text(json.dumps(config))
    _run(tmp_path, judge, items=items, resume=True)


def test_cli_repeat_index_reaches_run_json_and_the_judge(tmp_path: Path) -> None:
    write_image(tmp_path / "images" / "p1.png", 60, 20)
    programs = tmp_path / "programs.jsonl"
    programs.write_text(json.dumps(_program().model_dump(mode="json", exclude_defaults=True)))
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(programs),
            "--images",
            str(tmp_path / "images"),
            "--out",
            str(out),
            "--repeat-index",
            "3",
            "--no-cache",
            "--checks",
            str(REPO / "tests" / "_support" / "fixtures.py"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert RunStore(out).config()["repeat_index"] == 3


def test_report_shows_pending_items(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    rescore_run(run, _overrides(tmp_path, {"item": "i1", "question": "h1", "outcome": "pass"}))
    from groundeval.state.report import write_report

    index = write_report([run])
    assert '<option value="pending">pending</option>' in index.read_text()
    items = (index.parent / "data" / "items.js").read_text()
    assert '"o":"pending"' in items
    page = next((index.parent / "items").glob("*.html")).read_text()
    assert 'class="badge o-pending">pending<' in page


def test_gate_overridden_to_fail_keeps_human_decisions_only(tmp_path: Path) -> None:
    _run(tmp_path, ScriptedJudge({"g1": True, "h4": True, "h5": False}))
    run = tmp_path / "run"
    rescore_run(run, _overrides(tmp_path, {"item": "i1", "question": "h5", "outcome": "pass"}))
    report = rescore_run(
        run, _overrides(tmp_path, {"item": "i1", "question": "g1", "outcome": "fail"})
    )
    assert report.unknown_overrides == []
    assert _decisions(run) == {"g1": ("fail", "human"), "h5": ("pass", "human")}
    result = RunStore(run).results()[0]
    assert result.gate_failed == "g1" and result.scores == {"strict": 0.0, "relaxed": 0.0}
    late = rescore_run(
        run, _overrides(tmp_path, {"item": "i1", "question": "h3", "outcome": "pass"})
    )
    assert late.unknown_overrides == ["i1/h3 (not applied: gate g1 is fail)"]
