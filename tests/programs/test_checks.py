"""Named checks: hand-computed scores and traces, static validation, user modules."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from groundeval.programs import _checks
from groundeval.programs._checks import (
    CheckError,
    ElementView,
    check_names,
    load_check_module,
    register_check,
    run_check,
    validate_check,
)
from groundeval.programs._model import NamedCheck
from groundeval.programs._views import normalize_text
from groundeval.state import Element, Provenance, StateFile

PIPS = [6, 2, 3, 1, 5]


def make_state(elements: list[Element], question_id: str = "h1") -> StateFile:
    return StateFile(
        item_id="item-1",
        question_id=question_id,
        image_sha256="0" * 64,
        image_size_wh=[300, 200],
        helper="boxes",
        elements=elements,
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


def box(i: int, xyxy: list[float], **fields: object) -> Element:
    return Element(id=i, kind="box", xyxy_px=xyxy, fields=dict(fields))


@pytest.fixture
def dice() -> StateFile:
    """Five 30x30 dice in a row at x = 10, 60, 110, 160, 210 with pips 6, 2, 3, 1, 5."""
    return make_state(
        [box(i + 1, [10 + 50 * i, 10, 40 + 50 * i, 40], pips=p) for i, p in enumerate(PIPS)]
    )


@pytest.fixture
def scene() -> StateFile:
    """A table (polygon), a sun (box) touching a horizon (line), a bar label."""
    return make_state(
        [
            Element(id=1, kind="polygon", points_px=[[0, 0], [200, 0], [200, 100], [0, 100]]),
            box(2, [20, 20, 60, 60], label="sun"),
            Element(id=3, kind="line", points_px=[[0, 60], [300, 60]], fields={"label": "horizon"}),
            box(4, [150, 120, 190, 140], text="  “Q3  Revenue!” ", value="42"),
            box(5, [30, 30, 50, 50]),
        ]
    )


def named(name: str, **args: object) -> NamedCheck:
    return NamedCheck(name=name, args=dict(args))


CASES = [
    # (check, fixture, score, trace)
    (named("count", equals=5), "dice", 1.0, "5 boxes (#1–#5), expected 5 → pass"),
    (named("count", equals=4), "dice", 0.0, "5 boxes (#1–#5), expected 4 → fail"),
    (named("count", min=3), "dice", 1.0, "5 boxes (#1–#5), expected at least 3 → pass"),
    (named("count", max=4), "dice", 0.0, "5 boxes (#1–#5), expected at most 4 → fail"),
    (
        named("count", min=2, max=3, kind="polygon"),
        "scene",
        0.0,
        "1 polygon (#1), expected 2..3 → fail",
    ),
    (named("count", equals=0, kind="ray"), "dice", 1.0, "0 rays (none), expected 0 → pass"),
    (
        named("count_where", field="pips", op=">", value=2, equals=3),
        "dice",
        1.0,
        "3 of 5 elements with pips > 2 (#1, #3, #5), expected 3 → pass",
    ),
    (
        named("count_where", field="pips", op="in", value=[1, 6], min=3),
        "dice",
        0.0,
        "2 of 5 elements with pips in [1, 6] (#1, #4), expected at least 3 → fail",
    ),
    (
        named("sum_field", field="pips", equals=17),
        "dice",
        1.0,
        "sum of pips over 5 elements (#1–#5) = 6+2+3+1+5 = 17, expected 17 → pass",
    ),
    (
        named("sum_field", field="pips", between=[18, 20]),
        "dice",
        0.0,
        "sum of pips over 5 elements (#1–#5) = 6+2+3+1+5 = 17, expected 18..20 → fail",
    ),
    (
        named("equals", field="pips", value=3, element=3),
        "dice",
        1.0,
        "#3 pips=3, expected 3 → pass",
    ),
    (
        named("equals", field="value", value=42, element=4),
        "scene",
        1.0,
        "#4 value='42', expected 42 → pass",
    ),
    (
        named("between", field="pips", min=2, max=5, element=1),
        "dice",
        0.0,
        "#1 pips=6, expected 2..5 → fail",
    ),
    (
        named("all", field="pips", op=">=", value=2),
        "dice",
        0.0,
        "4 of 5 elements have pips >= 2 (#1, #2, #3, #5; not: #4), expected all → fail",
    ),
    (
        named("all", field="pips", op=">=", value=2, partial=True),
        "dice",
        0.8,
        "4 of 5 elements have pips >= 2 (#1, #2, #3, #5; not: #4), expected all → partial 0.80",
    ),
    (
        named("any", field="pips", value=6),
        "dice",
        1.0,
        "1 of 5 elements have pips == 6 (#1; not: #2–#5), expected any → pass",
    ),
    (named("inside", a=2, b=1), "scene", 1.0, "#2 inside #1: True → pass"),
    (named("inside", a=4, b=1), "scene", 0.0, "#4 inside #1: False → fail"),
    (named("inside", a=5, b=2), "scene", 1.0, "#5 inside #2: True → pass"),
    (
        named("inside", region=1, partial=True),
        "scene",
        0.5,
        "2 of 4 elements inside region #1 (#2, #5; outside: #3, #4) → partial 0.50",
    ),
    (
        named("overlaps", a=2, b=3),
        "scene",
        1.0,
        "#2 and #3 meet (shared area 0 px²), expected to meet → pass",
    ),
    (
        named("overlaps", a=2, b=3, expected=False),
        "scene",
        0.0,
        "#2 and #3 meet (shared area 0 px²), expected to not meet → fail",
    ),
    (
        named("overlaps", a=2, b=5, min_area_px=500),
        "scene",
        0.0,
        "#2 and #5 do not meet (shared area 400 px²), expected to meet → fail",
    ),
    (named("left_of", a=1, b=2), "dice", 1.0, "#1 left of #2 by centre x (25 vs 75) → pass"),
    (named("left_of", a=2, b=1), "dice", 0.0, "#2 left of #1 by centre x (75 vs 25) → fail"),
    (named("above", a=2, b=4), "scene", 1.0, "#2 above #4 by centre y (40 vs 130) → pass"),
    (named("above", a=5, b=2, strict=True), "scene", 0.0, "#5 above #2 by edges (40 vs 40) → fail"),
    (named("iou", a=2, b=5, min=0.25), "scene", 1.0, "IoU(#2, #5) = 0.250, expected ≥ 0.25 → pass"),
    (
        named("iou", a=2, xyxy_px=[40, 20, 80, 60]),
        "scene",
        0.0,
        "IoU(#2, box [40, 20, 80, 60]) = 0.333, expected ≥ 0.5 → fail",
    ),
    (
        named("text_equals", expected="q3 revenue"),
        "scene_text",
        1.0,
        "read #4 'q3 revenue'; expected 'q3 revenue', matched #4 → pass",
    ),
    (
        named("text_equals", expected="Q4 revenue", element=4),
        "scene_text",
        0.0,
        "read #4 'q3 revenue'; expected 'q4 revenue', matched none → fail",
    ),
    (
        named("text_contains", expected="REVENUE"),
        "scene_text",
        1.0,
        "read 'q3 revenue' (#4); expected to contain 'revenue' → pass",
    ),
    (
        named("argmax_is_leftmost", field="pips"),
        "dice",
        1.0,
        "max pips=6 at #1; leftmost is #1 (cx=25, pips=6) → pass",
    ),
]


@pytest.fixture
def scene_text(scene: StateFile) -> StateFile:
    return make_state([e for e in scene.elements if "text" in e.fields])


@pytest.mark.parametrize(("check", "fixture", "score", "trace"), CASES)
def test_named_checks(check: NamedCheck, fixture: str, score: float, trace: str, request) -> None:
    state = request.getfixturevalue(fixture)
    validate_check(check)
    result = run_check(check, state)
    assert result.score == pytest.approx(score)
    assert result.trace == trace
    assert result.check.startswith(f"{check.name}(")


def test_argmax_not_leftmost_and_ties() -> None:
    state = make_state([box(1, [0, 0, 10, 10], pips=2), box(2, [20, 0, 30, 10], pips=5)])
    result = run_check(named("argmax_is_leftmost", field="pips"), state)
    assert result.score == 0.0
    assert result.trace == "max pips=5 at #2; leftmost is #1 (cx=5, pips=2) → fail"
    tie = make_state([box(1, [0, 0, 10, 10], pips=5), box(2, [20, 0, 30, 10], pips=5)])
    assert run_check(named("argmax_is_leftmost", field="pips"), tie).score == 1.0


def test_all_over_no_elements_fails() -> None:
    result = run_check(named("all", field="pips", value=6), make_state([]))
    assert result.score == 0.0
    assert "no elements" in result.trace


@pytest.fixture
def compass() -> StateFile:
    return make_state(
        [
            Element(id=1, kind="ray", points_px=[[100, 100], [110, 90]]),
            box(2, [95, 10, 105, 20], label="N"),
            box(3, [170, 95, 180, 105], label="E"),
            box(4, [150, 40, 160, 50], label="NE"),
            box(5, [160, 30, 170, 40], label="far"),
        ]
    )


@pytest.mark.parametrize(
    ("args", "score", "trace"),
    [
        (
            {"expected": "NE"},
            1.0,
            "ray #1 hits #4 (label='NE') first at (150, 50), expected 'NE' → pass",
        ),
        (
            {"expected": "ne."},
            1.0,
            "ray #1 hits #4 (label='NE') first at (150, 50), expected 'ne.' → pass",
        ),
        (
            {"expected": "N", "ray": 1},
            0.0,
            "ray #1 hits #4 (label='NE') first at (150, 50), expected 'N' → fail",
        ),
        (
            {"expected": 5, "field": "id", "targets": [2, 3, 5]},
            1.0,
            "ray #1 hits #5 (id=5) first at (160, 40), expected 5 → pass",
        ),
        ({"expected": "E", "targets": [2, 3]}, 0.0, "ray #1 hits none of #2, #3 → fail"),
    ],
)
def test_line_hits(compass: StateFile, args: dict, score: float, trace: str) -> None:
    result = run_check(named("line_hits", **args), compass)
    assert (result.score, result.trace) == (score, trace)


def test_line_hits_reads_another_question(compass: StateFile) -> None:
    needle = make_state([compass.elements[0]])
    letters = make_state(compass.elements[1:], question_id="letters")
    check = named("line_hits", expected="NE", question="letters")
    assert run_check(check, needle, extra_states={"letters": letters}).score == 1.0
    with pytest.raises(CheckError, match="no grounding state for question 'letters'"):
        run_check(check, needle)


@pytest.mark.parametrize(
    ("raw", "normal"),
    [
        ("  “Q3   REVENUE!” ", "q3 revenue"),
        ("Straße", "strasse"),
        ("ＡＢＣ１２３", "abc123"),  # full-width forms fold under NFKC
        ("ﬁve", "five"),  # ligature
        ("...hello, world...", "hello, world"),
        ("$42", "$42"),  # symbols are not punctuation
        ("\tNew\nYork ", "new york"),
        ("!!!", ""),
    ],
)
def test_normalize_text(raw: str, normal: str) -> None:
    assert normalize_text(raw) == normal


BAD = [
    (named("nope"), "unknown check 'nope'; registered checks: above, all"),
    (
        named("count", equal=5),
        "unexpected keyword argument 'equal' (accepted arguments: equals, min, max, kind)",
    ),
    (named("count"), "check 'count': give exactly one of 'equals', 'min'/'max' or 'between'"),
    (named("count", equals=5, min=2), "give exactly one of"),
    (named("count", equals="five"), "'equals' must be a number, got 'five'"),
    (named("sum_field", equals=3), "missing a required argument: 'field'"),
    (named("sum_field", field="pips", between=[5, 1]), "lower bound 5 is above the upper bound 1"),
    (named("count_where", field="pips", op="~", value=1, equals=1), "'op' must be one of"),
    (named("count_where", field="pips", op="in", value=3, equals=1), "for op 'in' must be a list"),
    (named("inside", a=1, b=2, region=3), "give either 'a' and 'b' or 'region', not both"),
    (named("inside", a=1), "give either 'a' and 'b'"),
    (named("left_of", a=0, b=2), "'a' must be an element id (1, 2, ...), got 0"),
    (named("iou", a=1, b=2, min=1.5), "'min' must lie in 0..1"),
    (named("iou", a=1, xyxy_px=[5, 5, 1, 1]), "'xyxy_px': xyxy_px must have x2 >= x1"),
    (named("line_hits", expected="N", targets="2"), "'targets' must be a list of element ids"),
    (named("line_hits", field="label"), "missing a required argument: 'expected'"),
    (named("text_equals", expected="   "), "'expected' must be non-empty text"),
    (named("line_hits", expected="N", states={}), "argument 'states' is reserved"),
]


@pytest.mark.parametrize(("check", "message"), BAD)
def test_bad_named_checks_rejected_statically_and_at_run(
    check: NamedCheck, message: str, dice: StateFile
) -> None:
    with pytest.raises(ValueError) as info:
        validate_check(check)
    assert message in str(info.value)
    with pytest.raises(CheckError) as info_run:
        run_check(check, dice)
    assert message in str(info_run.value)


def test_dict_form_is_accepted(dice: StateFile) -> None:
    validate_check({"name": "count", "args": {"equals": 5}})
    assert run_check({"name": "count", "args": {"equals": 5}}, dice).score == 1.0
    with pytest.raises(CheckError, match="bad named check"):
        validate_check({"name": "count", "argz": {}})
    with pytest.raises(CheckError, match="expression string or a named check"):
        validate_check(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            named("sum_field", field="colour", equals=1),
            "element #1 (box) has no field 'colour' (fields: pips;",
        ),
        (
            named("equals", field="pips", value=1),
            "give 'element': there are 5 elements, not exactly one",
        ),
        (named("left_of", a=1, b=9), "'b': no element #9 (elements: #1–#5)"),
        (named("line_hits", expected="N"), "give 'ray': 0 ray/line elements"),
        (named("line_hits", expected="N", ray=2), "element #2 is a box, not a ray or line"),
    ],
)
def test_errors_at_run_name_the_problem(check: NamedCheck, message: str, dice: StateFile) -> None:
    validate_check(check)
    with pytest.raises(CheckError) as info:
        run_check(check, dice)
    assert message in str(info.value)
    assert str(info.value).startswith(f"check {check.name}(")


@pytest.fixture
def scratch_names() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        _checks._REGISTRY.pop(name, None)


def test_register_custom_check(dice: StateFile, scratch_names: list[str]) -> None:
    scratch_names += ["test.share_red", "test.bad_score", "test.raises", "test.bad_return"]

    @register_check("test.share_red")
    def share_red(elements, state, *, min_share: float = 1.0):  # type: ignore[no-untyped-def]
        share = sum(e.pips > 2 for e in elements) / len(elements)
        return (share if share >= min_share else 0.0), f"{share:.0%} above two"

    @register_check("test.bad_score")
    def bad_score(elements, state):  # type: ignore[no-untyped-def]
        return 1.5, "too much"

    @register_check("test.raises")
    def raises(elements, state):  # type: ignore[no-untyped-def]
        raise KeyError("boom")

    @register_check("test.bad_return")
    def bad_return(elements, state):  # type: ignore[no-untyped-def]
        return 1.0

    assert "test.share_red" in check_names()
    result = run_check(named("test.share_red", min_share=0.5), dice)
    assert (result.score, result.trace) == (0.6, "60% above two")
    with pytest.raises(CheckError, match="unexpected keyword argument 'share'"):
        validate_check(named("test.share_red", share=1))
    with pytest.raises(CheckError, match=r"returned score 1\.5; expected 0\.\.1"):
        run_check(named("test.bad_score"), dice)
    with pytest.raises(CheckError, match=r"raised KeyError: 'boom'"):
        run_check(named("test.raises"), dice)
    with pytest.raises(CheckError, match=r"must return \(score, trace\)"):
        run_check(named("test.bad_return"), dice)
    with pytest.raises(ValueError, match="check 'count' is already registered"):
        register_check("count")(share_red)
    with pytest.raises(ValueError, match="must be letters, digits"):
        register_check("bad name!")


def test_check_receives_other_states(scratch_names: list[str], dice: StateFile) -> None:
    scratch_names.append("test.same_count")

    @register_check("test.same_count")
    def same_count(elements, state, *, other: str, states):  # type: ignore[no-untyped-def]
        ok = len(elements) == len(states[other])
        return float(ok), f"{len(elements)} vs {len(states[other])}"

    other = make_state(dice.elements[:3], question_id="h2")
    result = run_check(named("test.same_count", other="h2"), dice, extra_states={"h2": other})
    assert (result.score, result.trace) == (0.0, "5 vs 3")


def test_load_check_module(tmp_path: Path, scratch_names: list[str], dice: StateFile) -> None:
    marker = tmp_path / "loaded.txt"
    module = tmp_path / "mychecks.py"
    module.write_text(
        "from pathlib import Path\n"
        "from groundeval.programs._checks import register_check\n"
        f"Path({str(marker)!r}).open('a').write('x')\n"
        "@register_check('test.five_dice')\n"
        "def five(elements, state):\n"
        "    return float(len(elements) == 5), f'{len(elements)} dice'\n",
        encoding="utf-8",
    )
    scratch_names.append("test.five_dice")
    assert load_check_module(module) == ["test.five_dice"]
    assert load_check_module(module) == ["test.five_dice"]  # second load: no re-import
    assert marker.read_text() == "x"
    assert run_check(named("test.five_dice"), dice).trace == "5 dice"


def test_load_check_module_errors(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def oops(:\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"broken.py: importing it failed: SyntaxError"):
        load_check_module(broken)
    with pytest.raises(ValueError, match=r"expected an existing \.py file"):
        load_check_module(tmp_path / "missing.py")
    text = tmp_path / "checks.txt"
    text.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"expected an existing \.py file"):
        load_check_module(text)


def test_builtin_names() -> None:
    expected = {
        "count", "count_where", "sum_field", "equals", "between", "all", "any", "inside",
        "overlaps", "left_of", "above", "iou", "line_hits", "text_equals", "text_contains",
        "argmax_is_leftmost",
    }  # fmt: skip
    assert expected <= set(check_names())


def test_element_view(dice: StateFile) -> None:
    view = ElementView(dice.elements[1])
    assert (view.id, view.kind, view.pips) == (2, "box", 2)
    assert (view.x1, view.y1, view.x2, view.y2) == (60, 10, 90, 40)
    assert (view.cx, view.cy, view.w, view.h, view.area) == (75, 25, 30, 30, 900)
    assert view["pips"] == 2
    with pytest.raises(CheckError, match=r"element #2 \(box\) has no field 'colour'"):
        view.colour  # noqa: B018
    with pytest.raises(AttributeError, match="read-only"):
        view.pips = 3
    polygon = ElementView(Element(id=9, kind="polygon", points_px=[[0, 0], [4, 0], [0, 3]]))
    assert (polygon.area, polygon.w, polygon.h) == (6.0, 4.0, 3.0)
    assert (round(polygon.cx, 6), polygon.cy) == (round(4 / 3, 6), 1.0)


# --------------------------------------------------------------------------- axis checks


def ray(i: int, tail: list[float], tip: list[float], **fields: object) -> Element:
    return Element(id=i, kind="ray", points_px=[tail, tip], fields=dict(fields))


def hand(i: int, bearing_deg: float, length: float, centre=(100.0, 100.0), **fields: object):
    """A clock hand from 10 px behind the centre to its tip (bearing 0 = 12 o'clock)."""
    import math

    a = math.radians(bearing_deg)
    cx, cy = centre
    tail = [cx - 10 * math.sin(a), cy + 10 * math.cos(a)]
    tip = [cx + length * math.sin(a), cy - length * math.cos(a)]
    return ray(i, tail, tip, **fields)


@pytest.mark.parametrize(
    ("expected", "score", "reads"),
    [
        ("10:10", 1.0, "reads 10:10"),
        ("10:12", 1.0, "off by 2.0 min"),
        ("10:20", 0.0, "off by 10.0 min"),
        ("2:50", 0.0, "reads 10:10"),  # hour and minute hands swapped
        ("22:10", 1.0, "reads 10:10"),  # a 24-hour time on a 12-hour dial
    ],
)
def test_clock_time_from_two_rays(expected: str, score: float, reads: str) -> None:
    # 10:10: hour hand at 305 deg (short), minute hand at 60 deg (long)
    state = make_state([hand(1, 305, 40), hand(2, 60, 70)])
    trace = run_check(named("clock_time", expected=expected), state)
    assert trace.score == score and reads in trace.trace, trace.trace


def test_clock_time_labels_win_over_length_and_polygons_work() -> None:
    # a counterfactual clock whose hour hand is the longer one, labelled by colour
    state = make_state([hand(1, 305, 70, label="hour"), hand(2, 60, 40, label="minute")])
    assert run_check(named("clock_time", expected="10:10"), state).score == 1.0
    thick = Element(
        id=1, kind="polygon", points_px=[[96, 108], [104, 108], [104, 40], [96, 40]]
    )  # hour hand pointing at 12, length 60 px
    minute = hand(2, 90, 80)  # 3 o'clock: 12:15
    assert run_check(named("clock_time", expected="12:15"), make_state([thick, minute])).score == 1
    aligned = make_state([hand(1, 0, 40), hand(2, 0, 70)])
    with pytest.raises(CheckError, match="aligned: give 'center_px'"):
        run_check(named("clock_time", expected="12:00"), aligned)
    got = run_check(named("clock_time", expected="12:00", center_px=[100, 100]), aligned)
    assert got.score == 1.0
    with pytest.raises(CheckError, match="exactly 2 hands"):
        run_check(named("clock_time", expected="1:00"), make_state([hand(1, 0, 40)]))
    with pytest.raises(CheckError, match="time H:MM"):
        validate_check(named("clock_time", expected="25:00"))


def test_lines_concurrent_meets_misses_and_parallel() -> None:
    light = (150.0, 20.0)
    tops = [(60.0, 100.0), (150.0, 120.0), (260.0, 90.0)]
    # each shadow tip lies on the line from the light through the object's top
    rays = [ray(i, list(t), [t[0] + 0.8 * (t[0] - light[0]), t[1] + 0.8 * (t[1] - light[1])])
            for i, t in enumerate(tops, start=1)]  # fmt: skip
    ok = run_check(named("lines_concurrent", tolerance_px=2), make_state(rays))
    assert ok.score == 1.0 and "meet nearest (150.0, 20.0)" in ok.trace
    moved = [*rays[:2], ray(3, [260, 90], [300, 200])]
    bad = run_check(named("lines_concurrent", tolerance_px=5), make_state(moved))
    assert bad.score == 0.0 and "px from where the others meet" in bad.trace
    with pytest.raises(CheckError, match="any two lines meet"):
        run_check(named("lines_concurrent"), make_state(rays[:2]))
    sun = [ray(i, [x, 10], [x + 20, 110]) for i, x in enumerate((10, 80, 150), start=1)]
    assert run_check(named("lines_concurrent"), make_state(sun)).score == 0.0
    assert run_check(named("lines_concurrent", allow_parallel=True), make_state(sun)).score == 1
    with pytest.raises(CheckError, match="box: ground rays, lines or boundaries"):
        run_check(named("lines_concurrent"), make_state([box(1, [0, 0, 9, 9]), *rays[:2]]))
    blob = Element(id=4, kind="polygon", points_px=[[0, 0], [10, 0], [10, 9], [0, 9]])
    with pytest.raises(CheckError, match="not elongated"):
        run_check(named("lines_concurrent"), make_state([*rays, blob]))
    with pytest.raises(CheckError, match="'tolerance_px' must be positive"):
        validate_check(named("lines_concurrent", tolerance_px=0))


@pytest.mark.parametrize(
    ("args", "score", "trace"),
    [
        ({"op": "sum", "equals": 20}, 1.0, "sum of text (#1=12, #2=3, #3=5) = 20"),
        ({"op": "product", "equals": 180}, 1.0, "= 180"),
        ({"op": "difference", "equals": 4}, 1.0, "= 4"),
        ({"op": "max", "min": 13}, 0.0, "= 12, expected at least 13"),
        ({"op": "decreasing"}, 0.0, "decreasing? → fail"),
        ({"op": "increasing", "order_by": "id"}, 0.0, "#1=12, #2=3"),
    ],
)
def test_arithmetic_over_ocr_text(args: dict, score: float, trace: str) -> None:
    state = make_state(
        [box(1, [0, 0, 20, 10], text="$12"), box(2, [30, 0, 50, 10], text="3"),
         box(3, [60, 0, 80, 10], text="5.00")]
    )  # fmt: skip
    got = run_check(named("arithmetic", **args), state)
    assert got.score == score and trace in got.trace, got.trace


def test_arithmetic_refuses_unreadable_numbers(dice: StateFile) -> None:
    assert run_check(named("arithmetic", op="sum", field="pips", equals=17), dice).score == 1
    two = make_state([box(1, [0, 0, 9, 9], text="3 or 4")])
    with pytest.raises(CheckError, match="holds 2 numbers, not exactly one"):
        run_check(named("arithmetic", op="sum", equals=3), two)
    with pytest.raises(CheckError, match="'op' must be one of"):
        validate_check(named("arithmetic", op="mean", equals=3))
    with pytest.raises(CheckError, match="takes no"):
        validate_check(named("arithmetic", op="increasing", equals=3))


def test_consistent_same_and_sequences(dice: StateFile) -> None:
    sizes = [10.0, 10.4, 9.8, 10.1, 10.0, 13.0]
    row = make_state([box(i + 1, [30 * i, 0, 30 * i + 20, 20], r=r) for i, r in enumerate(sizes)])
    same = named("consistent", field="r", mode="same", tolerance=0.08, relative=True)
    got = run_check(same, row)
    assert got.score == 0.0 and "spread 3.2, allowed 0.8" in got.trace
    assert run_check(same, make_state(row.elements[:5])).score == 1.0
    grow = run_check(named("consistent", field="r", mode="increasing"), row)
    assert grow.score == 0.0 and "breaks at position(s) [3, 5]" in grow.trace
    steps = named("consistent", field="x1", mode="increasing")
    assert run_check(steps, row).score == 1.0  # a geometric name works as the field
    colours = make_state([box(i + 1, [0, 0, 9, 9], colour=c) for i, c in enumerate("rrR")])
    assert run_check(named("consistent", field="colour"), colours).score == 1.0
    few = named("consistent", field="pips", min_count=6)
    assert run_check(few, dice).score == 0.0
