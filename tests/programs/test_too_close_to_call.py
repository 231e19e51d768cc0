"""Measurements with uncertainty: `consistent` withholds what its error bars could reverse."""

from __future__ import annotations

import pytest

from groundeval.programs import CheckError, TooCloseToCall, run_check
from groundeval.programs._model import NamedCheck, Question
from groundeval.programs._runner import decide_by_check
from groundeval.state import Element, Provenance, StateFile, error_field


def _row(radii: list[float], errs: list[float] | None = None) -> StateFile:
    elements = []
    for i, r in enumerate(radii):
        fields: dict[str, object] = {"radius_px": r}
        if errs is not None:
            fields[error_field("radius_px")] = errs[i]
        xyxy = [10.0 + 60 * i, 10.0, 50.0 + 60 * i, 50.0]
        elements.append(Element(id=i + 1, kind="box", xyxy_px=xyxy, fields=fields))
    return StateFile(
        item_id="row",
        question_id="h1",
        image_sha256="0" * 64,
        image_size_wh=[700, 100],
        helper="boxes",
        elements=elements,
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


SAME = NamedCheck(
    name="consistent",
    args={"field": "radius_px", "mode": "same", "tolerance": 0.08, "relative": True},
)
GROWS = NamedCheck(name="consistent", args={"field": "radius_px", "mode": "increasing"})


def test_the_uncertainty_field_is_named_after_the_field() -> None:
    assert error_field("radius_px") == "radius_px_err"


def test_without_uncertainty_the_verdict_is_as_before() -> None:
    # spread 1.32 against 8 % of 16.45 = 1.316: a fail by a hair, decided
    row = _row([15.9, 16.04, 16.45, 16.56, 16.45, 16.45, 16.51, 17.22, 16.6])
    assert run_check(SAME, row).score == 0.0


def test_a_spread_within_the_error_bars_of_the_tolerance_is_too_close_to_call() -> None:
    row = _row([15.9, 16.04, 16.45, 16.56, 16.45, 16.45, 16.51, 17.22, 16.6], [0.3] * 9)
    with pytest.raises(TooCloseToCall, match="too close to call"):
        run_check(SAME, row)


def test_firm_verdicts_stand_with_error_bars() -> None:
    assert run_check(SAME, _row([16.0, 16.2, 16.1], [0.2] * 3)).score == 1.0
    assert run_check(SAME, _row([16.0, 21.0, 16.1], [0.5] * 3)).score == 0.0
    assert run_check(GROWS, _row([12.0, 13.3, 14.6], [0.25] * 3)).score == 1.0
    assert run_check(GROWS, _row([12.0, 14.6, 13.3], [0.25] * 3)).score == 0.0


def test_a_step_smaller_than_its_error_bars_is_too_close_to_call() -> None:
    # 13.1 -> 12.5 reads as a break, but 13.1 +/- 0.9 could be 12.2
    with pytest.raises(TooCloseToCall, match=r"position\(s\) \[3\]"):
        run_check(GROWS, _row([11.0, 13.1, 12.5, 15.0], [0.25, 0.9, 0.25, 0.25]))
    # one step firmly broken decides the fail, whatever the doubtful ones say
    row = _row([11.0, 13.1, 12.5, 9.0], [0.25, 0.9, 0.25, 0.25])
    assert run_check(GROWS, row).score == 0.0


def test_a_bad_uncertainty_is_an_error_not_a_verdict() -> None:
    with pytest.raises(CheckError, match="radius_px_err"):
        run_check(SAME, _row([16.0, 16.1, 16.2], [0.2, -1.0, 0.2]))
    with pytest.raises(CheckError, match="radius_px_err"):
        run_check(SAME, _row([16.0, 16.1, 16.2], [0.2, "wide", 0.2]))  # type: ignore[list-item]


def test_the_runner_withholds_a_verdict_too_close_to_call() -> None:
    q = Question(id="h1", ask="All the same size?", check=SAME, uses="g1")
    row = _row([15.9, 16.04, 16.45, 16.56, 16.45, 16.45, 16.51, 17.22, 16.6], [0.3] * 9)
    decision = decide_by_check(q, "hard", row, "state/row/g1.json", {})
    assert decision.outcome == "withheld" and decision.score == 0.0
    assert "too close to call" in decision.reason
    firm = decide_by_check(q, "hard", _row([16.0, 16.2, 16.1], [0.2] * 3), None, {})
    assert firm.outcome == "pass"


def _dice(*faces: tuple[float, float, int]) -> StateFile:
    """Dice boxes 60 px wide at ``(x, y)`` top-left, each with its pips."""
    elements = [
        Element(id=i, kind="box", xyxy_px=[x, y, x + 60, y + 60], fields={"pips": pips})
        for i, (x, y, pips) in enumerate(faces, start=1)
    ]
    return _row([]).model_copy(update={"elements": elements, "question_id": "h2"})


RISES = NamedCheck(name="arithmetic", args={"op": "increasing", "field": "pips"})


@pytest.mark.parametrize(
    "check",
    [
        RISES,
        NamedCheck(name="consistent", args={"field": "pips", "mode": "increasing"}),
        NamedCheck(name="arithmetic", args={"op": "difference", "field": "pips", "equals": 2}),
    ],
)
def test_dice_stacked_one_above_the_other_have_no_left_to_right_order(check: NamedCheck) -> None:
    # in-style dice_math hard 9677: a two above a four, their centres 0.08 px apart in x;
    # read left to right in the order their boxes rounded to, "rising?" was said pass for a
    # truth of fail. Side by side across the reading order, the order is the picture's to
    # give, and it gives none: the verdict is withheld
    with pytest.raises(TooCloseToCall, match="side by side across the reading order"):
        run_check(check, _dice((300, 50, 4), (301, 122, 2)))


def test_dice_apart_along_the_reading_order_are_read_in_it() -> None:
    # 16 px apart in x (over a quarter of the 60 px boxes): an order, decided either way
    assert run_check(RISES, _dice((300, 50, 2), (316, 122, 4))).score == 1.0
    assert run_check(RISES, _dice((300, 50, 4), (316, 122, 2))).score == 0.0
    # stacked dice whose order the verdict does not hang on: decided (a break elsewhere)
    assert run_check(RISES, _dice((100, 50, 5), (300, 50, 3), (301, 122, 4))).score == 0.0
    assert run_check(RISES, _dice((300, 50, 3), (301, 122, 3))).score == 0.0
