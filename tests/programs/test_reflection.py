"""The ``mirrored`` check (reflections about a line) and the synthetic 'reflection' scene.

Hand-made outlines test each way a reflection can be wrong (shifted, sunk, resized,
unflipped, missing) and every way of naming the line; the generated scenes are
graded through the real runner and offline grounding, and must decide their
exact truth or withhold, never the opposite.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import shapely

from groundeval.benchmarks.synthetic import _reflection as scene_mod
from groundeval.benchmarks.synthetic import encode_png, generate
from groundeval.judges import ScriptedJudge, wrap_judge
from groundeval.programs._catalogue import build_catalogue
from groundeval.programs._checks import CheckError, run_check, validate_check
from groundeval.programs._loaders import load_programs
from groundeval.programs._model import NamedCheck
from groundeval.programs._run import items_from_images, run_items
from groundeval.state import Element, Provenance, StateFile
from groundeval.state._records import ItemResult
from tests._support.paths import REPO

AXIS_Y = 100.0
TRIANGLE = [[40.0, 80.0], [80.0, 80.0], [60.0, 30.0]]  # apex up, base 20 px above the line


def state(elements: list[Element], question_id: str = "g1") -> StateFile:
    return StateFile(
        item_id="item-1",
        question_id=question_id,
        image_sha256="0" * 64,
        image_size_wh=[300, 240],
        helper="boundary",
        elements=elements,
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


def poly(i: int, points: list[list[float]], **fields: Any) -> Element:
    return Element(id=i, kind="polygon", points_px=points, fields=dict(fields))


def mirror(points: list[list[float]], dx: float = 0.0, dy: float = 0.0) -> list[list[float]]:
    return [[x + dx, 2 * AXIS_Y - y + dy] for x, y in points]


def water(i: int = 1) -> Element:
    return poly(i, [[0, AXIS_Y], [300, AXIS_Y], [300, 240], [0, 240]], label="water")


def check(**args: Any) -> NamedCheck:
    return NamedCheck(name="mirrored", args={"axis_label": "water", **args})


def test_a_true_reflection_passes_with_its_numbers_in_the_trace() -> None:
    s = state([water(), poly(2, TRIANGLE, label="red"), poly(3, mirror(TRIANGLE), label="red")])
    trace = run_check(check(tolerance_px=2), s)
    assert trace.score == 1.0
    assert "#1 (label='water')'s top edge" in trace.trace and "1 pair(s)" in trace.trace
    assert "#2↔#3 centre off 0.0 px, outline off 0.0 px" in trace.trace


@pytest.mark.parametrize(
    ("reflection", "what"),
    [
        (mirror(TRIANGLE, dx=15), "shifted sideways"),
        (mirror(TRIANGLE, dy=15), "sunk too deep"),
        ([[x, y + 90] for x, y in TRIANGLE], "upright, not flipped"),
        ([[60 + 1.5 * (x - 60), 120 + 1.5 * (y - 120)] for x, y in mirror(TRIANGLE)], "larger"),
    ],
)
def test_a_wrong_reflection_fails(reflection: list[list[float]], what: str) -> None:
    s = state([water(), poly(2, TRIANGLE, label="red"), poly(3, reflection, label="red")])
    trace = run_check(check(tolerance_px=8), s)
    assert trace.score == 0.0, what
    assert "beyond 8 px" in trace.trace and trace.trace.endswith("→ fail")


def test_tolerance_decides_a_small_offset() -> None:
    s = state([water(), poly(2, TRIANGLE, label="red"), poly(3, mirror(TRIANGLE, dx=5))])
    s.elements[2].fields["label"] = "red"
    assert run_check(check(tolerance_px=6), s).score == 1.0
    assert run_check(check(tolerance_px=4), s).score == 0.0


def test_pairs_follow_labels_and_a_missing_reflection_fails() -> None:
    square = [[150.0, 60.0], [190.0, 60.0], [190.0, 90.0], [150.0, 90.0]]
    swapped = [
        water(),
        poly(2, TRIANGLE, label="red"),
        poly(3, square, label="green"),
        poly(4, mirror(square), label="red"),  # the red shape's "reflection" is the square's
        poly(5, mirror(TRIANGLE), label="green"),
    ]
    assert run_check(check(), state(swapped)).score == 0.0
    # by position alone (label_field null) the same outlines are two true pairs
    labelless = NamedCheck(name="mirrored", args={"axis_y_px": AXIS_Y, "label_field": None})
    assert run_check(labelless, state(swapped[1:])).score == 1.0
    alone = run_check(check(), state([water(), poly(2, TRIANGLE, label="red")]))
    assert alone.score == 0.0 and "without a reflection across the line: #2" in alone.trace


def test_every_way_to_name_the_line() -> None:
    pair = [poly(2, TRIANGLE, label="red"), poly(3, mirror(TRIANGLE), label="red")]
    given = NamedCheck(name="mirrored", args={"axis_y_px": AXIS_Y})
    assert run_check(given, state(pair)).score == 1.0
    by_points = NamedCheck(name="mirrored", args={"axis_px": [[0, AXIS_Y], [10, AXIS_Y]]})
    assert run_check(by_points, state(pair)).score == 1.0
    # another question grounded the shoreline as a line
    shore = Element(id=1, kind="line", points_px=[[0, AXIS_Y], [300, AXIS_Y]])
    other = NamedCheck(name="mirrored", args={"axis_question": "g2"})
    trace = run_check(other, state(pair), extra_states={"g2": state([shore], "g2")})
    assert trace.score == 1.0 and "of 'g2'" in trace.trace
    # a vertical mirror: the left edge of a box region; left-right mirror images
    left = [[10.0, 10.0], [40.0, 10.0], [10.0, 50.0]]
    right = [[200 - x, y] for x, y in left]
    wall = Element(id=1, kind="box", xyxy_px=[100, 0, 300, 240], fields={"label": "water"})
    sideways = check(axis_edge="left")
    assert run_check(sideways, state([wall, poly(2, left), poly(3, right)])).score == 1.0
    assert run_check(sideways, state([wall, poly(2, left), poly(3, mirror(left))])).score == 0.0


def test_a_tilted_line_and_a_region_crossing_it() -> None:
    theta = np.radians(30)
    d, n = np.array([np.cos(theta), np.sin(theta)]), np.array([-np.sin(theta), np.cos(theta)])
    p0 = np.array([150.0, 120.0])
    obj = [p0 + 30 * d - 40 * n, p0 + 60 * d - 40 * n, p0 + 45 * d - 80 * n]
    refl = [q - 2 * float(n @ (q - p0)) * n for q in obj]
    args = {"axis_px": [p0.tolist(), (p0 + 50 * d).tolist()], "tolerance_px": 0.5}
    pair = [poly(1, [q.tolist() for q in obj]), poly(2, [q.tolist() for q in refl])]
    assert run_check(NamedCheck(name="mirrored", args=args), state(pair)).score == 1.0
    # one region over the line (object touching its reflection) must be its own mirror image
    kite = [[60.0, 60.0], [80.0, 100.0], [60.0, 140.0], [40.0, 100.0]]
    assert run_check(check(), state([water(), poly(2, kite, label="red")])).score == 1.0
    lopsided = [[60.0, 60.0], [80.0, 100.0], [60.0, 120.0], [40.0, 100.0]]
    trace = run_check(check(), state([water(), poly(2, lopsided, label="red")]))
    assert trace.score == 0.0 and "crossing the line" in trace.trace


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "give exactly one reflecting line"),
        ({"axis_y_px": 3, "axis_label": "water"}, "got axis_y_px, axis_label"),
        ({"axis_y_px": "low"}, "'axis_y_px' must be a number"),
        ({"axis_px": [[0, 0], [0, 0]]}, "two points coincide"),
        ({"axis_px": [[0, 0]]}, "'axis_px' must be two points"),
        ({"axis_label": "water", "axis_edge": "middle"}, "'axis_edge' must be one of"),
        ({"axis_label": "water", "tolerance_px": 0}, "'tolerance_px' must be positive"),
        ({"axis_label": "water", "label_field": ""}, "'label_field' must be a field name"),
        ({"axis_label": "water", "toleranse_px": 3}, "accepted arguments"),
    ],
)
def test_bad_arguments_are_refused_before_a_run(args: dict[str, Any], message: str) -> None:
    with pytest.raises(CheckError, match=message):
        validate_check(NamedCheck(name="mirrored", args=args))


def test_unusable_evidence_is_an_error_never_a_fail() -> None:
    pair = [poly(2, TRIANGLE, label="red"), poly(3, mirror(TRIANGLE), label="red")]
    with pytest.raises(CheckError, match="0 elements have label = 'water'"):
        run_check(check(), state(pair))
    with pytest.raises(CheckError, match="2 elements have label = 'water'"):
        run_check(check(), state([water(1), water(4), *pair]))
    with pytest.raises(CheckError, match="no elements besides the reflecting line"):
        run_check(check(), state([water()]))
    with pytest.raises(CheckError, match="no grounding state for question 'g9'"):
        run_check(NamedCheck(name="mirrored", args={"axis_question": "g9"}), state(pair))
    bare = [water(), poly(2, TRIANGLE, label="red"), poly(3, mirror(TRIANGLE))]
    with pytest.raises(CheckError, match="have no 'label' field while others do"):
        run_check(check(), state(bare))
    dot = Element(id=1, kind="point", points_px=[[5, 5]], fields={"label": "water"})
    with pytest.raises(CheckError, match="needs a line or a region"):
        run_check(check(), state([dot, *pair]))


def test_the_catalogue_lists_mirrored_with_its_arguments() -> None:
    entry = {c["name"]: c for c in build_catalogue()["checks"]}["mirrored"]
    assert entry["about"].startswith("Each object and its reflection are mirror images")
    assert entry["reads_other_questions"] is True
    assert entry["args"]["tolerance_px"] == {"type": "float", "default": 10.0}


# ----------------------------------------------------------------------------- the scene


def test_scene_is_deterministic_with_exact_truth_both_ways() -> None:
    a, b = generate("reflection", "hard", 7), generate("reflection", "hard", 7)
    assert encode_png(a.image_bgr) == encode_png(b.image_bgr) and a.truth == b.truth
    outcomes = set()
    for seed in range(12):
        s = generate("reflection", "clean", seed)
        outcomes.add(s.truth["answers"][f"{s.id}/h1"])
        y = s.truth["water_line_y_px"]
        for shape in s.truth["shapes"]:
            obj, refl = np.array(shape["object_px"]), np.array(shape["reflection_px"])
            right = obj * [1, -1] + [0, 2 * y]
            miss = shapely.hausdorff_distance(
                shapely.Polygon(right).boundary, shapely.Polygon(refl).boundary, densify=0.1
            )
            if shape["fault"] is None:
                assert miss < 0.05
            else:
                assert shape["fault"] in scene_mod.FAULTS
                assert miss >= scene_mod.MIN_ERROR_PX and not s.truth["mirrored"]
            assert obj[:, 1].max() < y < refl[:, 1].min()
    assert outcomes == {"pass", "fail"}


def _grade(scenes: list[Any], images: Path, out: Path) -> dict[str, dict[str, Any]]:
    programs = [p for s in scenes for p in s.programs]
    images.mkdir(parents=True, exist_ok=True)
    for s in scenes:
        (images / f"{s.id}.png").write_bytes(encode_png(s.image_bgr))
    judge = wrap_judge(ScriptedJudge(on_call=lambda call: "never asked"))
    items = items_from_images(programs, images)
    asyncio.run(run_items(items, judge=judge, out=out, concurrency=2))
    lines = (out / "results.jsonl").read_text().split("\n")
    results = [ItemResult.model_validate_json(line) for line in lines if line.strip()]
    return {
        f"{r.item_id}/{d.question_id}": {"outcome": d.outcome, "reason": d.reason}
        for r in results
        for d in r.decisions
    }


def test_scenes_decide_their_truth_offline(tmp_path: Path) -> None:
    picked = [generate("reflection", level, seed) for level in ("clean", "moderate", "hard")
              for seed in (3, 4, 6)]  # fmt: skip
    truth = {k: v for s in picked for k, v in s.truth["answers"].items()}
    assert {truth[f"{s.id}/h1"] for s in picked} == {"pass", "fail"}
    decided = _grade(picked, tmp_path / "images", tmp_path / "run")
    assert set(decided) == set(truth)
    for key, expected in truth.items():
        assert decided[key]["outcome"] == expected, (key, decided[key]["reason"])


def test_a_missing_reflection_is_withheld_not_failed(tmp_path: Path) -> None:
    s = generate("reflection", "clean", 3)
    assert s.truth["mirrored"]
    y = s.truth["water_line_y_px"]
    refl = np.array(s.truth["shapes"][0]["reflection_px"])
    x1, y1 = (refl.min(axis=0) - 4).astype(int)
    x2, y2 = (refl.max(axis=0) + 4).astype(int)
    s.image_bgr[y1:y2, x1:x2] = s.image_bgr[y + 3, 2]  # painted over with the lake's colour
    decided = _grade([s], tmp_path / "images", tmp_path / "run")
    gate = decided[f"{s.id}/g1"]
    assert gate["outcome"] == "withheld" and "more boundary needed" in gate["reason"], gate
    assert all(d["outcome"] == "withheld" for d in decided.values()), decided  # never 'fail'


def test_physics_examples_include_reflection_programs() -> None:
    programs = load_programs(REPO / "examples" / "axes" / "physics.yaml")
    scenes = {p.tags["scene"] for p in programs}
    assert scenes == {"shadows", "reflection"}
    checks = {q.check.name for p in programs for q in p.hard if isinstance(q.check, NamedCheck)}
    assert {"lines_concurrent", "mirrored"} <= checks
