"""Issue 12.4: comparing a number with a string is an error, never a fail.

Statically where the kinds are known (``groundeval validate`` refuses the file),
at run time otherwise (the decision is ``error`` with the reason).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundeval.judges import ScriptedJudge
from groundeval.programs import ItemInput, Program, grade_item
from groundeval.programs._expr_static import parse_expression
from groundeval.programs._expressions import evaluate_expression
from groundeval.programs._views import CheckError, views_of
from groundeval.programs.cli import app
from groundeval.state import Element
from tests._support.paths import write_image

STATIC = [
    ('count(elements) == "5"', "tests equality of a number and a string"),
    ('"5" != len(elements)', "tests equality of a string and a number"),
    ('image_w == "640"', "a number and a string"),
    ('norm("x") == 3', "a string and a number"),
    ("count(elements) == [5]", "a number and a list"),
    ('count(elements) >= "2"', "orders a number and a string"),
    ('count(elements) in ["1", "2"]', "looks for a number among items that are all a string"),
    ('3 in "345"', "looks for a number in a string"),
    ("2 in count(elements)", "looks inside a number"),
    ('count(elements) + "1" == 2', "adds a number and a string"),
    ('count(elements) - "1" == 2', "does arithmetic on a number and a string"),
    ('"ab" * "c" == "x"', "multiplies a string by a string"),
    ('-"a" == 1', "negates a string"),
    ('(count(elements) if image_w else "none") == 1', ""),  # branches differ: run-time check
    ('count(e for e in elements if e.label == 2 == "2") == 0', "a number and a string"),
]


@pytest.mark.parametrize(("text", "message"), [s for s in STATIC if s[1]])
def test_mixed_kinds_are_rejected_before_anything_runs(text: str, message: str) -> None:
    with pytest.raises(CheckError, match="rejected") as info:
        parse_expression(text)
    assert message in str(info.value)


@pytest.mark.parametrize(
    "text",
    [
        "count(elements) == 5",
        'state_status == "grounded"',
        'norm("A") in ["a", "b"]',
        "sorted([2, 1]) == (1, 2)",  # list and tuple are both sequences
        "(count(elements) > 1) * 0.5 <= 1",  # a boolean is a number
        "hits(elements[0], elements) == None",  # None compares with anything
        'count(elements) in [1, "2"]',  # mixed list: decided at run time
        "set([1]) - set([2]) == set([1])",
    ],
)
def test_kinds_that_meet_still_parse(text: str) -> None:
    parse_expression(text)


def _names(elements: list[Element]) -> dict:
    return {
        "elements": views_of(elements),
        "image_w": 100,
        "image_h": 80,
        "state_status": "grounded",
        "states": {},
    }


DICE = [
    Element(id=1, kind="box", xyxy_px=[1, 1, 9, 9], fields={"pips": 5, "label": "five"}),
    Element(id=2, kind="box", xyxy_px=[20, 1, 29, 9], fields={"pips": 2, "label": "two"}),
]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('max(e.pips for e in elements) == "5"', "'==' compares a number (5) with a string ('5')"),
        ('any(e.pips != "2" for e in elements)', "'!=' compares a number"),
        ("any(e.label == 2 for e in elements)", "a string ('five') with a number (2)"),
        ('any(e.pips in ["2", "5"] for e in elements)', "'in' compares a number (5)"),
        ("any(e.label > 1 for e in elements)", "'>' compares a string"),
        ("(count(elements) if image_w else 'none') == 'x'", "a number (2) with a string"),
    ],
)
def test_mixed_kinds_found_at_run_time_are_errors(text: str, message: str) -> None:
    parse_expression(text)  # kinds unknown statically
    with pytest.raises(CheckError) as info:
        evaluate_expression(text, _names(DICE))
    assert message in str(info.value) and text in str(info.value)


def test_sequences_of_either_bracket_compare_by_items() -> None:
    score, _ = evaluate_expression("sorted(e.pips for e in elements) == (2, 5)", _names(DICE))
    assert score == 1.0
    score, _ = evaluate_expression("[e.label for e in elements] != ('five', 'two')", _names(DICE))
    assert score == 0.0


def _program(check: str) -> dict:
    return {
        "id": "p1",
        "hard": [
            {
                "id": "h1",
                "ask": "Five dice?",
                "check": check,
                "ground": {
                    "helper": "boxes",
                    "proposer": "test.boxes",
                    "verifier": "test.accept",
                    "params": {"boxes": [[1, 1, 9, 9, {"pips": 5}], [20, 1, 29, 9, {"pips": 2}]]},
                },
            }
        ],
    }


def test_validate_refuses_a_number_compared_with_a_string(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_program('count(elements) == "5"')))
    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert str(path) in result.output and "$.hard[0].check" in result.output
    assert "count(elements) == '5'" in result.output
    assert "a number and a string" in result.output
    path.write_text(json.dumps(_program("count(elements) == 5")))
    assert CliRunner().invoke(app, ["validate", str(path)]).exit_code == 0


def test_run_time_mismatch_is_an_error_decision_not_a_fail(tmp_path: Path) -> None:
    image = write_image(tmp_path / "a.png")
    program = Program.model_validate(_program('max(e.pips for e in elements) == "5"'))
    result, _ = asyncio.run(
        grade_item(ItemInput("item-1", program, [image]), judge=ScriptedJudge({}))
    )
    decision = result.decisions[0]
    assert (decision.outcome, decision.source) == ("error", "check")
    assert "compares a number (5) with a string ('5')" in decision.reason
    assert result.status == "error" and result.scores["relaxed"] is None
