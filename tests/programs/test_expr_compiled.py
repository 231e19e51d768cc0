"""Compiled check expressions: validated and compiled once per text, bounded per evaluation,
with the same results and trace text as the language has always given."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from groundeval.programs import _expressions
from groundeval.programs._expr_static import MAX_ITERATIONS, NAMES
from groundeval.programs._expressions import StatesView, evaluate_expression
from groundeval.programs._views import CheckError, views_of
from groundeval.state import Element

PIPS = [6, 2, 3, 1, 5]


def _elements() -> list[Element]:
    return [
        Element(
            id=i + 1,
            kind="box",
            xyxy_px=[10 + 50 * i, 10, 40 + 50 * i, 40],
            fields={"pips": p, "colour": "red" if i < 2 else "white"},
        )
        for i, p in enumerate(PIPS)
    ]


def _names(*, states: bool = True) -> dict[str, Any]:
    names: dict[str, Any] = {
        "elements": views_of(_elements()),
        "image_w": 300,
        "image_h": 100,
        "state_status": "grounded",
    }
    if states:
        names["states"] = StatesView.of_elements({"h1": _elements()})
    return names


def test_validated_and_compiled_once_per_text(monkeypatch: pytest.MonkeyPatch) -> None:
    compiled: list[str] = []
    original = _expressions._compile_validated

    def spy(text: str, tree: Any) -> Any:
        compiled.append(text)
        return original(text, tree)

    _expressions._compiled.cache_clear()
    monkeypatch.setattr(_expressions, "_compile_validated", spy)
    text = "sum(e.pips for e in elements) == 17"
    for _ in range(50):
        assert evaluate_expression(text, _names())[0] == 1.0
    assert compiled == [text]


POSITIVE = [
    "count(elements) == 5",
    "sum(e.pips for e in elements) == 17 and image_w > image_h",
    "0 < count(elements) < 9 != 8",
    "sorted(e.pips for e in elements)[1:3] == [2, 3]",
    "[a for a, b in [(1, 2), (3, 4)]] == [1, 3]",
    "states['h1'][0].pips == 6 and 'h1' in states",
    "left_of(elements[0], elements[1]) and elements[0].colour * 2 == 'redred'",
    "2 ** elements[3].pips == 2 and elements[0].pips % 4 == 2",
]


@pytest.mark.parametrize("text", POSITIVE)
def test_code_reaches_only_names_and_helpers(text: str) -> None:
    """The code object looks up the language's names, its loop variables and ``_ge_`` helpers;
    Python's builtins are not reachable (an empty ``__builtins__``)."""
    compiled = _expressions._compiled(text)
    assert compiled.helpers["__builtins__"] == {}
    run_attributes = {"add", "mult", "loop", "watch"}
    loop_variables = {"e", "a", "b"}
    for name in _expressions._code_names(compiled.code):
        assert (
            name in NAMES
            or name in loop_variables
            or name in run_attributes
            or name.startswith("_ge_")
        ), name
    assert evaluate_expression(text, _names())[0] == 1.0


def test_trace_text_of_chains_and_short_circuits() -> None:
    names = _names()
    assert evaluate_expression("0 < count(elements) < 3", names)[1] == (
        "0 < count(elements) < 3 with elements: 5 (#1–#5); count(elements)=5 → fail"
    )
    # the right operand of a false `and` is never evaluated, so it is not shown
    text = "image_w > 999 and sum(e.pips for e in elements) == 17"
    assert evaluate_expression(text, names)[1] == (
        f"{text} with elements: 5 (#1–#5); image_w=300 → fail"
    )


def test_mixed_kinds_in_a_chain_are_errors_not_fails() -> None:
    with pytest.raises(CheckError) as info:
        evaluate_expression("1 < elements[0].colour < 3", _names())
    assert str(info.value) == (
        "check '1 < elements[0].colour < 3': '<' compares a number (1) with a string ('red')"
    )


def test_generators_are_eager_as_before() -> None:
    """``any(...)`` sees every item: an unusable item is an error even after a True one."""
    with pytest.raises(CheckError, match="attributes can only be read from an element"):
        evaluate_expression("any(e.pips > 0 for e in elements + [1])", _names())


def test_iterations_are_capped_across_all_comprehensions() -> None:
    under = f"count(1 for a in [0] * 100 for b in [0] * {MAX_ITERATIONS // 100 - 2}) > 0"
    assert evaluate_expression(under, _names())[0] == 1.0
    over = "count(1 for a in [0] * 100 for b in [0] * 100) > 0"  # 100 + 10,000 steps
    with pytest.raises(CheckError, match="Comprehension generates too many elements"):
        evaluate_expression(over, _names())


def test_deadline_is_checked_inside_a_comprehension() -> None:
    text = "count(a for a in [0] * 9000 if a == 0) == 9000"
    assert evaluate_expression(text, _names())[0] == 1.0
    with pytest.raises(CheckError, match=r"evaluation took longer than 1e-05 s"):
        evaluate_expression(text, _names(), deadline_s=1e-5)


def test_a_name_the_caller_did_not_give_is_an_error() -> None:
    text = "count(elements) == 5 and len(states['h1']) == 5"
    with pytest.raises(CheckError) as info:
        evaluate_expression(text, _names(states=False))
    assert str(info.value) == (
        f"check {text!r} could not be evaluated: 'states' is not defined for expression '{text}'"
    )
    # short-circuited before reaching the missing name: as before, no error
    assert evaluate_expression("count(elements) == 5 or states", _names(states=False))[0] == 1.0


def test_states_are_viewed_only_when_read() -> None:
    states = StatesView.of_elements({"h1": _elements(), "h2": []})
    assert sorted(states) == ["h1", "h2"] and len(states) == 2
    assert states._pending.keys() == {"h1", "h2"}
    assert [v.value("pips") for v in states["h1"]] == PIPS
    assert states._pending.keys() == {"h2"}
    with pytest.raises(CheckError, match=r"no grounding state for question 'h9'"):
        states["h9"]


def test_evaluations_in_threads_do_not_share_bounds_or_traces() -> None:
    """Each evaluation has its own budget, counter and traced values."""
    out: dict[int, tuple[float, str]] = {}

    def work(k: int) -> None:
        names = _names()
        names["image_w"] = k
        for _ in range(200):
            out[k] = evaluate_expression(f"image_w == {k} and count(elements) == 5", names)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        assert out[k] == (
            1.0,
            f"image_w == {k} and count(elements) == 5 with elements: 5 (#1–#5); "
            f"image_w={k}; count(elements)=5 → pass",
        )
