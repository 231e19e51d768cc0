"""The blind style: seeded, in-style programs, truth that agrees with what was drawn."""

from __future__ import annotations

import ast
import itertools
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from groundeval.benchmarks.synthetic import _coins, _dice, _latent, blind
from groundeval.benchmarks.synthetic._common import Scene
from groundeval.benchmarks.synthetic.blind import _coin, _die
from groundeval.benchmarks.synthetic.blind._paint import extent
from groundeval.programs import Program

PACKAGE = Path(blind.__file__).parent
KINDS = [*blind.SCENES, *blind.AXIS_SCENES]
SEEDS = range(blind.REPORT_SEED0, blind.REPORT_SEED0 + 3)
MARGIN = 4


@cache
def scene_of(kind: str, seed: int) -> Scene:
    return blind.generate(kind, seed)


def _counted(s: Scene) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = s.truth["coins"] if s.scene == "coins" else s.truth["dice"]
    return objects


def _overlap(a: list[float], b: list[float]) -> bool:
    """Whether two boxes share area (touching edges do not)."""
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _int(check: object, pattern: str) -> int:
    match = re.fullmatch(pattern, str(check))
    assert match, check
    return int(match.group(1))


def _rebuilt(s: Scene) -> Program:
    """The in-style builder's program from the claims this scene's program makes."""
    p = s.programs[0]
    hard = {q.id: q for q in p.hard}
    if s.scene == "dice_math":
        check = hard["h1"].check
        assert not isinstance(check, str)
        return _latent.program_for(s.id, "blind", len(s.truth["dice"]), check.args["equals"])
    claim_n = _int(hard["h1"].check, r"count\(elements\) == (\d+)")
    if s.scene == "coins":
        where = re.fullmatch(r"\w+ coins? (.+)\.", p.prompt)
        assert where
        return _coins.program_for(s.id, "blind", where.group(1), claim_n)
    claim_sum = _int(hard["h2"].check, r"sum\(e\.pips for e in elements\) == (\d+)")
    where = re.fullmatch(r"\w+ dic?e (.+) whose pips add up to \d+\.", p.prompt)
    assert where
    return _dice.program_for(s.id, "blind", where.group(1), claim_n, claim_sum)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_bytes_other_seed_other_picture(kind: str) -> None:
    a, b = scene_of(kind, SEEDS[0]), blind.generate(kind, SEEDS[0])
    assert np.array_equal(a.image_bgr, b.image_bgr) and a.truth == b.truth
    assert a.id == b.id == f"{kind}-blind-{SEEDS[0]}" == blind.scene_id(kind, SEEDS[0])
    assert a.difficulty == "blind" and a.scene == kind
    assert a.image_bgr.dtype == np.uint8 and a.image_bgr.ndim == 3 and a.image_bgr.shape[2] == 3
    assert a.image_bgr.std() > 5  # a real picture
    others = [scene_of(kind, s) for s in SEEDS[1:]]
    assert all(not np.array_equal(a.image_bgr, o.image_bgr) for o in others)


def test_kinds_and_sizes() -> None:
    assert list(blind.SCENES) == ["dice", "coins"] and list(blind.AXIS_SCENES) == ["dice_math"]
    assert blind.DIFFICULTY == "blind" and blind.REPORT_SEED0 == 200_000
    sizes = {scene_of(k, s).image_bgr.shape[:2] for k in KINDS for s in SEEDS}
    assert len(sizes) > 1  # sizes and aspect ratios vary


@pytest.mark.parametrize(("kind", "seed"), list(itertools.product(KINDS, SEEDS)))
def test_programs_are_the_in_style_builders(kind: str, seed: int) -> None:
    s = scene_of(kind, seed)
    assert len(s.programs) == 1
    assert s.programs[0].model_dump() == _rebuilt(s).model_dump()


@pytest.mark.parametrize(("kind", "seed"), list(itertools.product(KINDS, SEEDS)))
def test_truth_and_answers_agree_with_the_claims(kind: str, seed: int) -> None:
    s = scene_of(kind, seed)
    t, p = s.truth, s.programs[0]
    objects = _counted(s)
    assert t["count"] == len(objects) >= 1 and t["surface"]
    hard = {q.id: q.check for q in p.hard}
    verdict = {True: "pass", False: "fail"}
    expected = {f"{s.id}/g1": "pass"}
    if kind == "dice_math":
        pips = [d["pips"] for d in sorted(objects, key=lambda d: d["xyxy_px"][0])]
        assert t["pips_left_to_right"] == pips and t["product"] == math.prod(pips)
        h1 = hard["h1"]
        assert not isinstance(h1, str)
        expected[f"{s.id}/h1"] = verdict[h1.args["equals"] == t["product"]]
        expected[f"{s.id}/h2"] = verdict[all(b > a for a, b in itertools.pairwise(pips))]
    else:
        claim_n = _int(hard["h1"], r"count\(elements\) == (\d+)")
        expected[f"{s.id}/h1"] = verdict[claim_n == len(objects)]
    if kind == "dice":
        assert t["pip_sum"] == sum(d["pips"] for d in objects)
        claim = _int(hard["h2"], r"sum\(e\.pips for e in elements\) == (\d+)")
        expected[f"{s.id}/h2"] = verdict[claim == t["pip_sum"]]
    assert t["answers"] == expected
    for o in objects:
        if kind == "coins":
            assert {"xyxy_px", "center_px", "radius_px", "metal"} <= set(o)
        else:
            assert 1 <= o["pips"] <= 6 and o["face"] and o["pip_colour"]


@pytest.mark.parametrize(("kind", "seed"), list(itertools.product(KINDS, SEEDS)))
def test_boxes_inside_and_apart(kind: str, seed: int) -> None:
    s = scene_of(kind, seed)
    h, w = s.image_bgr.shape[:2]
    objects = _counted(s)
    for o in objects:
        x1, y1, x2, y2 = o["xyxy_px"]
        assert MARGIN <= x1 < x2 <= w - MARGIN and MARGIN <= y1 < y2 <= h - MARGIN
    for a, b in itertools.combinations(objects, 2):
        if kind == "coins":  # coins may touch, overlapping at most 5 % of the smaller radius
            least = a["radius_px"] + b["radius_px"] - 0.05 * min(a["radius_px"], b["radius_px"])
            assert math.dist(a["center_px"], b["center_px"]) >= least
        else:
            assert not _overlap(a["xyxy_px"], b["xyxy_px"])
    for d in s.truth["distractors"]:
        assert d["kind"] and all(not _overlap(d["xyxy_px"], o["xyxy_px"]) for o in objects), d
    if kind == "dice_math":
        boxes = sorted((o["xyxy_px"] for o in objects), key=lambda b: b[0])
        assert all(b[0] - a[2] > 10 for a, b in itertools.pairwise(boxes))  # clear gaps


@pytest.mark.parametrize("look", ["studio", "flat", "painterly"])
def test_boxes_are_the_painted_extent(look: str) -> None:
    # a die's and a coin's truth box is what its sprite covers (to the anti-aliased pixel)
    outline = 3.0 if look == "flat" else 0.0
    for angle in (0.0, 17.0, 45.0, 128.0):
        d = _die.Die(70.0, angle, 9.0, "red", "white", 5, 0.2, False, cx=200.3, cy=150.6)
        c = _coin.Coin(33.0, "bimetal", "gold", "numeral", "10", angle, cx=90.2, cy=80.7)
        for box, sprite in (
            (d.box(), _die.sprite(d, look, outline)),
            (c.box(), _coin.sprite(c, look, outline)),
        ):
            drawn = extent(sprite, (400, 300), floor=0.5)
            assert drawn is not None
            assert np.abs(np.array(drawn) - np.array(box)).max() <= 1.0, (look, angle, box, drawn)


def test_unknown_scene_and_negative_seed_raise() -> None:
    with pytest.raises(ValueError, match="unknown scene 'clock'"):
        blind.generate("clock", 200_000)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        blind.generate("dice", -1)
    with pytest.raises(ValueError, match="unknown scene"):
        blind.write_suite("/nonexistent", n_per_scene=1, scenes=["bars"])


def test_write_suite_writes_every_file(tmp_path: Path) -> None:
    manifest = blind.write_suite(tmp_path, n_per_scene=2, seed=SEEDS[0])
    assert manifest["style"] == "blind" and manifest["scenes"] == KINDS
    assert len(manifest["items"]) == 2 * len(KINDS)
    for item in manifest["items"]:
        assert (tmp_path / item["image"]).stat().st_size > 1000
    truths = [json.loads(line) for line in (tmp_path / "truth.jsonl").read_text().splitlines()]
    programs = (tmp_path / "programs.jsonl").read_text().splitlines()
    assert len(truths) == len(programs) == 2 * len(KINDS)
    assert truths[0]["id"] == f"dice-blind-{SEEDS[0]}" and truths[0]["scene"] == "dice"
    assert json.loads((tmp_path / "manifest.json").read_text())["items"] == manifest["items"]


def test_code_is_independent_of_proposers_and_other_renderers() -> None:
    allowed = {"_common", "_coins", "_dice", "_latent"}  # program builders and helpers
    own = {p.stem for p in PACKAGE.glob("_*.py")}
    banned = {"grounding", "_effects", "_tuning", "outstyle", "heldout", "tuningdice"}
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [*(node.module or "").split("."), *(a.name for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [p for a in node.names for p in a.name.split(".")]
            else:
                continue
            assert not banned & set(names), (path.name, names)
            private = {n for n in names if n.startswith("_") and not n.startswith("__")}
            assert private <= allowed | own, (path.name, names)
