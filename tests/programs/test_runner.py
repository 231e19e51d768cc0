from __future__ import annotations

import asyncio
import json
from pathlib import Path

from groundeval.judges import ScriptedJudge
from groundeval.programs import ItemInput, Program, grade_item
from tests._support.paths import write_image


def _program(**extra: object) -> Program:
    data = {
        "id": "p1",
        "gates": [{"id": "g1", "ask": "Is there a die?"}, {"id": "g2", "ask": "Is it a photo?"}],
        "hard": [
            {"id": "h1", "ask": "Five dice?"},
            {"id": "h2", "ask": "Red table?", "requires": ["h1"]},
            {"id": "h3", "ask": "Pips add to 17?", "requires": ["h2"]},
            {"id": "h4", "ask": "Any shadow?"},
        ],
    }
    data.update(extra)
    return Program.model_validate(data)


def _grade(program: Program, judge: ScriptedJudge, images: list[Path], answer: str | None = None):
    return asyncio.run(grade_item(ItemInput("item-1", program, images, answer), judge=judge))


def test_failing_gate_costs_exactly_one_call(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png")
    judge = ScriptedJudge({"g1": True, "g2": False, "h1": True, "h2": True, "h3": True, "h4": True})
    result, usage = _grade(_program(), judge, [image])
    assert len(judge.calls) == 1
    assert [q.id for q in judge.calls[0].questions] == ["g1", "g2"]
    assert result.gate_failed == "g2"
    assert result.scores == {"strict": 0.0, "relaxed": 0.0}
    assert [d.question_id for d in result.decisions] == ["g1", "g2"]
    assert usage.usage.calls == 1


def test_child_of_failed_parent_is_never_asked(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png")
    judge = ScriptedJudge({"g1": True, "g2": True, "h1": False, "h2": True, "h3": True, "h4": True})
    result, _ = _grade(_program(), judge, [image])
    asked = [q.id for call in judge.calls for q in call.questions]
    assert asked == ["g1", "g2", "h1", "h4"]
    by_id = {d.question_id: d for d in result.decisions}
    assert by_id["h2"].source == "skipped" and by_id["h2"].score == 0.0
    assert by_id["h3"].source == "skipped" and by_id["h3"].outcome == "fail"
    assert result.scores == {"strict": 0.0, "relaxed": 0.25}  # strict: every hard mark full
    assert len(judge.calls) == 2  # gates, then one wave (h1 + h4); h2/h3 never asked


def test_dependency_waves_batch_direct_questions(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png")
    judge = ScriptedJudge(dict.fromkeys(["g1", "g2", "h1", "h2", "h3", "h4"], True))
    result, _ = _grade(_program(), judge, [image])
    assert [[q.id for q in c.questions] for c in judge.calls] == [
        ["g1", "g2"],
        ["h1", "h4"],
        ["h2"],
        ["h3"],
    ]
    assert result.status == "scored" and result.scores["strict"] == 1.0
    assert judge.calls[0].images[0].data == image.read_bytes()


def test_missing_answer_is_asked_again_then_recorded_as_error(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png")
    judge = ScriptedJudge({"g1": True, "g2": True, "h1": True, "h2": True, "h3": True})  # no h4
    result, _ = _grade(_program(), judge, [image])
    h4 = next(d for d in result.decisions if d.question_id == "h4")
    assert h4.outcome == "error" and "h4" in h4.reason
    assert result.status == "error" and result.scores["strict"] is None
    singles = [c for c in judge.calls if [q.id for q in c.questions] == ["h4"]]
    assert len(singles) == 1  # re-asked alone exactly once


def test_grounded_questions_use_state_and_checks(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png", 100, 80)
    boxes = [
        [10, 10, 20, 20, {"pips": 3}],
        [30, 10, 40, 20, {"pips": 6}],
        [50, 10, 60, 20, {"pips": 1}],
    ]
    program = Program.model_validate(
        {
            "id": "p1",
            "gates": [
                {
                    "id": "g1",
                    "ask": "Any die?",
                    "check": "count(elements) >= 1",
                    "ground": {
                        "helper": "boxes",
                        "proposer": "test.boxes",
                        "verifier": "test.accept",
                        "params": {"boxes": boxes},
                    },
                }
            ],
            "hard": [
                {
                    "id": "h1",
                    "ask": "Three dice?",
                    "check": "count(elements) == 3",
                    "ground": {
                        "helper": "boxes",
                        "proposer": "test.boxes",
                        "verifier": "test.accept",
                        "params": {"boxes": boxes},
                    },
                },
                {
                    "id": "h2",
                    "ask": "Pips add to 10?",
                    "uses": "h1",
                    "weight": 2,
                    "check": "sum(e.pips for e in elements) == 10",
                },
                {
                    "id": "h3",
                    "ask": "Pips add to 11?",
                    "uses": "h1",
                    "check": "sum(e.pips for e in elements) == 11",
                },
            ],
        }
    )
    judge = ScriptedJudge({})
    result, _ = _grade(program, judge, [image])
    assert judge.calls == []  # everything decided by checks
    by_id = {d.question_id: d for d in result.decisions}
    assert by_id["h1"].outcome == "pass" and by_id["h2"].outcome == "pass"
    assert by_id["h3"].outcome == "fail" and by_id["h3"].source == "check"
    assert result.scores == {"strict": 0.0, "relaxed": 0.75}  # strict: every hard mark full


def test_withheld_when_budget_spent(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png", 100, 80)
    program = Program.model_validate(
        {
            "id": "p1",
            "hard": [
                {
                    "id": "h1",
                    "ask": "One die?",
                    "check": "count(elements) == 1",
                    "ground": {
                        "helper": "boxes",
                        "proposer": "test.boxes",
                        "verifier": "test.accept",
                        "budget": 2,
                        "params": {"boxes": [[1, 1, 9, 9]], "reject": [1]},
                    },
                }
            ],
        }
    )
    result, _ = _grade(program, ScriptedJudge({}), [image])
    assert result.status == "withheld"
    assert result.decisions[0].outcome == "withheld"
    assert "#1: test says no" in result.decisions[0].reason


def test_offline_judge_says_which_questions_need_a_model(tmp_path: Path) -> None:
    from groundeval.judges import make_judge

    image = write_image(tmp_path / "a.png")
    result, _ = asyncio.run(
        grade_item(ItemInput("i", _program(), [image]), judge=make_judge("offline"))
    )
    assert result.status == "error"
    assert all(d.outcome == "error" for d in result.decisions)
    assert "g1, g2 need a model judge" in result.decisions[0].reason


def test_bad_image_is_an_item_error_not_a_crash(tmp_path: Path) -> None:
    bad = tmp_path / "bad.png"
    bad.write_text("not an image")
    result, _ = _grade(_program(), ScriptedJudge({}), [bad])
    assert result.status == "error" and str(bad) in (result.error or "")
    json.dumps(result.model_dump(mode="json"))
