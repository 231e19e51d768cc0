"""The safe expression language: hostile input is rejected before anything runs;
honest checks compute hand-checked answers."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest

from groundeval.programs import _expressions
from groundeval.programs._checks import CheckError, run_check, validate_check
from groundeval.programs._expressions import evaluate_expression, parse_expression
from groundeval.state import Element, Provenance, StateFile

PIPS = [6, 2, 3, 1, 5]


def make_state(elements: list[Element], question_id: str = "h1") -> StateFile:
    return StateFile(
        item_id="dice-0001",
        question_id=question_id,
        image_sha256="0" * 64,
        image_size_wh=[300, 100],
        helper="boxes",
        elements=elements,
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


@pytest.fixture
def dice() -> StateFile:
    """Five 30x30 dice in a row, 20 px apart: x = 10, 60, 110, 160, 210."""
    return make_state(
        [
            Element(
                id=i + 1,
                kind="box",
                xyxy_px=[10 + 50 * i, 10, 40 + 50 * i, 40],
                fields={"pips": p, "colour": "red" if i < 2 else "white"},
            )
            for i, p in enumerate(PIPS)
        ]
    )


@pytest.fixture
def evaluations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records every expression that reached the evaluator."""
    seen: list[str] = []
    original = _expressions._compile_validated

    def spy(text, tree):  # type: ignore[no-untyped-def]
        seen.append(text)
        return original(text, tree)

    _expressions._compiled.cache_clear()
    monkeypatch.setattr(_expressions, "_compile_validated", spy)
    return seen


_OPENED: list[str] = []
_WATCHING = [False]


def _audit(event: str, args: tuple[object, ...]) -> None:
    if _WATCHING[0] and event in ("open", "os.system", "subprocess.Popen", "os.exec"):
        _OPENED.append(f"{event}{args[:1]!r}")


sys.addaudithook(_audit)


@pytest.fixture
def no_side_effects() -> Iterator[list[str]]:
    _OPENED.clear()
    _WATCHING[0] = True
    try:
        yield _OPENED
    finally:
        _WATCHING[0] = False


HOSTILE = [
    ("__import__('os')", "names starting with '_' are not allowed"),
    ("__import__('os').system('touch /tmp/pwned')", "only named functions can be called"),
    ("().__class__.__bases__", "'__bases__': names starting with '_'"),
    ("().__class__", "'__class__': names starting with '_'"),
    ("[e.__dict__ for e in elements]", "'__dict__': names starting with '_'"),
    ("elements[0]._element", "'_element': names starting with '_'"),
    ("lambda: 1", "lambda is not allowed"),
    ("sorted(elements, key=lambda e: e.pips)", "lambda is not allowed"),
    ("open('/etc/passwd')", "function 'open' is not allowed (no file access)"),
    ("eval('1 + 1')", "function 'eval' is not allowed"),
    ("exec('x = 1')", "function 'exec' is not allowed"),
    ("getattr(elements[0], 'pips')", "function 'getattr' is not allowed"),
    ("9**9**9", "exponent in '9 ** 9 ** 9' exceeds 100"),
    ("2 ** 1000 > 1", "exponent"),
    ("'a'*10**9", "repetition"),
    ("[0] * 10**8", "repetition"),
    ("'%999999999d' % 1", "string formatting"),
    ("(" * 200 + "1" + ")" * 200, "brackets nested 200 deep; at most 20"),
    ("foo(1)", "unknown function 'foo'"),
    ("nope == 1", "unknown name 'nope'"),
    ("elements[0].pips.real", "attribute chain 'elements[0].pips.real'"),
    ("[e.text.upper for e in elements]", "attribute chain"),
    ("elements.count(1)", "only named functions can be called"),
    ("elements.sort", "attribute access 'elements.sort'"),
    ("image_w.real", "attribute access 'image_w.real'"),
    ("(x := 1)", "assignment (:=) is not allowed"),
    ("f'{elements}'", "f-string is not allowed"),
    ("{**states}", "dict literal is not allowed"),
    ("sum(*elements)", "star unpacking is not allowed"),
    ("count(**states)", "'**' keyword unpacking"),
    ("len", "function 'len' must be called"),
    ("[len for e in elements]", "function 'len' must be called"),
    ("[1 for count in elements]", "loop variable 'count' hides a built-in name"),
    ("'x' * 3 if True else 'y' + '" + "z" * 1500 + "'", "string literal longer than 1000"),
    ("[" + "1," * 600 + "]", "more than 500 syntax nodes"),
    ("1 + " * 700 + "1", "characters; at most 2000"),
    ("+".join(["1"] * 80), "nested deeper than 60 levels"),
    ("1; 2", "not a single Python expression"),
    ("import os", "not a single Python expression"),
    ("", "the expression is empty"),
    ("1 @ 2", "MatMult is not allowed"),
    ("b'abc' == 1", "bytes literals are not allowed"),
]


@pytest.mark.parametrize(("text", "message"), HOSTILE)
def test_hostile_rejected_by_validate(text: str, message: str, evaluations: list[str]) -> None:
    with pytest.raises(ValueError, match="check expression rejected") as info:
        validate_check(text)
    assert message in str(info.value)
    assert isinstance(info.value, CheckError)
    assert evaluations == []


@pytest.mark.parametrize(("text", "message"), HOSTILE)
def test_hostile_rejected_by_run_and_nothing_runs(
    text: str,
    message: str,
    dice: StateFile,
    evaluations: list[str],
    no_side_effects: list[str],
) -> None:
    with pytest.raises(CheckError) as info:
        run_check(text, dice)
    assert message in str(info.value)
    assert evaluations == [], "a rejected expression reached the evaluator"
    assert no_side_effects == []


BOUNDED_AT_RUNTIME = [
    ("sum([[1]*10000]*10000, []) == 1", "builds more than 10000 items"),
    ("len([[1]*10000 for x in [1]*10000]) == 1", "builds more than 10000 items"),
    ("elements[0].colour * 10**6 == 'x'", "builds more than 10000 items"),
    ("sum([e.colour for e in elements]) == 1", "sum() adds numbers only"),
    ("2 ** elements[0].pips ** 99 > 0", "too large to evaluate"),
    ("len([1 for a in [0]*99 for b in [0]*99 for c in [0]*99]) == 1", "too many elements"),
    ("min(elements) == 1", "TypeError"),
    ("round(1.5, 10**6) == 1", "round() digits"),
    ("elements[0].colour % 2 == 1", "'%' works on numbers only"),
    ("states['h9'][0].pips == 1", "no grounding state for question 'h9'"),
    ("elements[0].size == 1", "element #1 (box) has no field 'size'"),
    ("elements[7].pips == 1", "IndexError"),
    ("1 / (count(elements) - 5) == 1", "ZeroDivisionError"),
    (
        "len([x.pips for x in elements[0].colour]) == 1",
        "attributes can only be read from an element",
    ),
    ("elements[0].geometry == 1", "has no field 'geometry'"),
    ("elements[0].value == 1", "has no field 'value'"),
    ("count(elements)", "gave 5 (int); expected True/False or a number in [0, 1]"),
    ("elements[0].colour", "gave 'red' (str)"),
]


@pytest.mark.parametrize(("text", "message"), BOUNDED_AT_RUNTIME)
def test_runtime_limits_and_errors(text: str, message: str, dice: StateFile) -> None:
    validate_check(text)  # statically fine
    with pytest.raises(CheckError) as info:
        run_check(text, dice)
    assert message in str(info.value)


def test_deadline_guard(dice: StateFile) -> None:
    names = {"elements": [], "image_w": 1, "image_h": 1, "state_status": "grounded"}
    with pytest.raises(CheckError, match="evaluation took longer than 0 s"):
        evaluate_expression("image_w + image_h == 2", names, deadline_s=0.0)


POSITIVE = [
    ("count(elements) == 5", 1.0),
    ("sum(e.pips for e in elements) == 17", 1.0),
    ("sum(e.pips for e in elements) == 18", 0.0),
    ("count(e for e in elements if e.pips >= 5) == 2", 1.0),
    ("max(e.pips for e in elements) == 6 and min(e.x1 for e in elements) == 10", 1.0),
    ("sorted(e.pips for e in elements) == [1, 2, 3, 5, 6]", 1.0),
    ("sorted([e.pips for e in elements], reverse=True)[0] == 6", 1.0),
    ("len(set(e.colour for e in elements)) == 2", 1.0),
    ("all(e.w == 30 and e.h == 30 and e.area == 900 for e in elements)", 1.0),
    ("any(e.pips == 4 for e in elements)", 0.0),
    ("count(e for e in elements if e.pips % 2 == 0) / count(elements)", 0.4),
    ("left_of(elements[0], elements[4]) and not above(elements[0], elements[1])", 1.0),
    ("left_of(elements[0], elements[1], strict=True)", 1.0),
    ("inside(elements[0], elements[0]) and not inside(elements[0], elements[1])", 1.0),
    ("iou(elements[0], elements[1]) == 0", 1.0),
    ("distance(elements[0], elements[1]) == 20", 1.0),
    ("image_w == 300 and image_h == 100 and state_status == 'grounded'", 1.0),
    ("elements[-1].pips == 5 and elements[1].colour == 'red'", 1.0),
    ("abs(elements[0].cx - elements[1].cx) == 50 and elements[0].cy == 25", 1.0),
    ("sum(e.pips for e in elements) ** 2 == 289", 1.0),
    ("elements[0].pips if count(elements) > 10 else 1", 1.0),
    ("round(sum(e.pips for e in elements) / 20, 2)", 0.85),
    ("[e.id for e in elements if e.colour == 'red'] == [1, 2]", 1.0),
    ("count(p for e in elements for p in [e.pips] if p > 2) == 3", 1.0),
    ("'RED' != elements[0].colour and elements[0].kind in ('box', 'polygon')", 1.0),
    ("norm(' “RED”! ') == norm(elements[0].colour)", 1.0),
    ("True", 1.0),
    ("0", 0.0),
]


@pytest.mark.parametrize(("text", "score"), POSITIVE)
def test_positive_cases(text: str, score: float, dice: StateFile) -> None:
    validate_check(text)
    trace = run_check(text, dice)
    assert trace.check == text
    assert trace.score == pytest.approx(score)
    assert trace.trace.startswith(text)


def test_trace_shows_top_level_values(dice: StateFile) -> None:
    trace = run_check("count(elements) == 5", dice)
    assert trace.trace == (
        "count(elements) == 5 with elements: 5 (#1–#5); count(elements)=5 → pass"
    )
    trace = run_check("sum(e.pips for e in elements) >= 20 or image_w < 100", dice)
    assert "sum(e.pips for e in elements)=17" in trace.trace
    assert "image_w=300" in trace.trace
    assert trace.trace.endswith("→ fail")
    partial = run_check("sum(e.pips for e in elements) / 20", dice)
    assert partial.trace.endswith("→ partial 0.85")


def test_states_of_other_questions() -> None:
    needle = make_state(
        [Element(id=1, kind="ray", points_px=[[100, 100], [110, 90]])], question_id="h1"
    )
    letters = make_state(
        [
            Element(id=1, kind="box", xyxy_px=[95, 10, 105, 20], fields={"label": "N"}),
            Element(id=2, kind="box", xyxy_px=[170, 95, 180, 105], fields={"label": "E"}),
            Element(id=3, kind="box", xyxy_px=[150, 40, 160, 50], fields={"label": "NE"}),
        ],
        question_id="letters",
    )
    extra = {"letters": letters}
    assert (
        run_check(
            "hits(elements[0], states['letters'], field='label') == 'NE'",
            needle,
            extra_states=extra,
        ).score
        == 1.0
    )
    assert run_check("hits(elements[0], states['letters']) == 3", needle, extra_states=extra).score
    assert run_check("count(states['letters']) == 3", needle, extra_states=extra).score == 1.0
    with pytest.raises(CheckError, match="is a box, not a ray or line"):
        run_check("hits(states['letters'][0], elements) == 1", needle, extra_states=extra)


def test_no_state_means_no_elements() -> None:
    assert run_check("count(elements) == 0 and image_w is None", None).score == 1.0


def test_whitelist_and_bindings_agree() -> None:
    from groundeval.programs._expr_static import FUNCTION_NAMES

    assert tuple(_expressions.FUNCTIONS) == FUNCTION_NAMES


def test_parse_is_cached_and_pure() -> None:
    text = "count(elements) == 5"
    assert parse_expression(text) is parse_expression(text)
