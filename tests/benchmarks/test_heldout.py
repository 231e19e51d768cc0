"""The held-out benchmark: seeded, independent code, in-style programs, truth that grades right."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import itertools
import json
import math
import re
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

import cv2
import numpy as np
import pytest
from shapely.geometry import Polygon
from typer.testing import CliRunner

from groundeval.benchmarks import synthetic as in_style
from groundeval.benchmarks.synthetic import _clock, _reflection, _shadows, _sun, heldout
from groundeval.benchmarks.synthetic._common import Scene
from groundeval.benchmarks.synthetic.heldout import _programs as prog
from groundeval.grounding._loop import run_grounding
from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.judges._protocol import ImagePart
from groundeval.programs import Program
from groundeval.programs._checks import run_check
from groundeval.programs._loaders import load_programs
from groundeval.programs.cli import app
from groundeval.state import Element, Provenance
from tests._support.paths import REPO

PACKAGE = Path(heldout.__file__).parent
KINDS = [*heldout.SCENES, *heldout.AXIS_SCENES]
SEEDS = range(heldout.REPORT_SEED0, heldout.REPORT_SEED0 + 3)


@cache
def scene_of(kind: str, seed: int) -> Scene:
    return heldout.generate(kind, seed)


def test_kinds_are_the_in_style_kinds():
    assert list(heldout.SCENES) == list(in_style.SCENES)
    assert set(heldout.AXIS_SCENES) <= set(in_style.AXIS_SCENES)
    assert {"clock", "shadows", "rows", "dice_math", "reflection"} <= set(heldout.AXIS_SCENES)


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_bytes_and_ids(kind: str):
    a, b = scene_of(kind, SEEDS[0]), heldout.generate(kind, SEEDS[0])
    assert np.array_equal(a.image_bgr, b.image_bgr) and a.truth == b.truth
    assert a.id == f"{kind}-heldout-{SEEDS[0]}" and a.difficulty == "heldout"
    assert a.image_bgr.dtype == np.uint8 and a.image_bgr.ndim == 3 and a.image_bgr.shape[2] == 3
    assert min(a.image_bgr.shape[:2]) >= 300 and a.image_bgr.std() > 5  # a real picture


def test_seeds_differ_and_sizes_vary():
    dice = [scene_of("dice", s) for s in SEEDS]
    assert not np.array_equal(dice[0].image_bgr, dice[1].image_bgr)
    assert len({d.image_bgr.shape for d in dice}) > 1  # image sizes and aspect ratios vary


def test_code_is_independent_of_renderers_and_proposers():
    # only the in-style modules that hold program builders, constants and truth helpers
    allowed = {
        *("_common", "_clock", "_compass", "_dice", "_reflection", "_rows", "_shadows", "_sun"),
        *("_bars", "_coins", "_latent"),  # for their program builders (``_programs.py``)
    }
    banned = {"_effects", "outstyle", "proposers", "models"}
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [*(node.module or "").split("."), *(a.name for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [p for a in node.names for p in a.name.split(".")]
            else:
                continue
            assert not banned & set(names), f"{path.name} imports {names}"
            private = {n for n in names if n.startswith("_") and not n.startswith("__")}
            assert private <= allowed | {p.stem for p in PACKAGE.glob("_*.py")}, (path, names)
    # nothing that trains or tunes may read this style
    for folder in ("grounding", "programs", "judges", "state"):
        for path in (REPO / folder).rglob("*.py"):
            assert "heldout" not in path.read_text(encoding="utf-8"), path


def _bearing(c: list[float], p: list[float]) -> float:
    return math.degrees(math.atan2(p[0] - c[0], -(p[1] - c[1]))) % 360


def _off(a: float, b: float) -> float:
    return abs((a - b + 540) % 360 - 180)


@pytest.mark.parametrize("seed", SEEDS)
def test_truth_is_consistent_with_what_was_drawn(seed: int):
    dice = scene_of("dice", seed)
    t = dice.truth
    h, w = dice.image_bgr.shape[:2]
    assert t["count"] == len(t["dice"]) >= 1
    assert t["pip_sum"] == sum(d["pips"] for d in t["dice"])
    tops = [Polygon(d["top_face_px"]) for d in t["dice"]]
    for d in t["dice"]:
        x1, y1, x2, y2 = d["xyxy_px"]
        assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h and 1 <= d["pips"] <= 6
        assert set(d["side_face_pips"]).isdisjoint({d["pips"], 7 - d["pips"]})
    assert all(a.distance(b) > 2 for i, a in enumerate(tops) for b in tops[i + 1 :])

    math_scene = scene_of("dice_math", seed).truth
    pips = [d["pips"] for d in math_scene["dice"]]
    assert math_scene["product"] == math.prod(pips)
    xs = sorted(sum(d["xyxy_px"][::2]) / 2 for d in math_scene["dice"])
    assert all(b - a > 10 for a, b in itertools.pairwise(xs))  # left to right is plain

    coins = scene_of("coins", seed).truth
    assert coins["count"] == len(coins["coins"]) >= 1
    cs = coins["coins"]
    for i, a in enumerate(cs):
        for b in cs[i + 1 :]:
            gap = math.dist(a["center_px"], b["center_px"])
            assert gap >= 0.9 * (a["radius_px"] + b["radius_px"])  # at most a small overlap

    rows = scene_of("rows", seed).truth
    radii = [d["radius_px"] for d in sorted(rows["discs"], key=lambda d: d["center_px"][0])]
    if rows["mode"] == "same":
        assert (len({round(r, 1) for r in radii}) > 1) == rows["broken"]
    else:
        rising = all(b > a for a, b in itertools.pairwise(radii))
        assert rising != rows["broken"]

    shadows = scene_of("shadows", seed).truth
    assert len(shadows["pillars"]) >= 3
    assert shadows["consistent"] == all(p["turned_deg"] == 0 for p in shadows["pillars"])

    clock = scene_of("clock", seed).truth
    hour, minute = _clock.hand_angles(_clock.parse(clock["time"]))
    c = clock["center_px"]
    assert _off(_bearing(c, clock["hands"]["hour"]["tip_px"]), hour) < 0.5
    assert _off(_bearing(c, clock["hands"]["minute"]["tip_px"]), minute) < 0.5

    compass = scene_of("compass", seed).truth
    step = 360 / len(compass["letters"])
    target = compass["letters"].index(compass["target"])
    assert _off(compass["bearing_deg"], target * step) <= 11  # 8 off the letter + dial turn
    assert _off(_bearing(compass["center_px"], compass["needle_px"][1]), compass["bearing_deg"]) < 1

    sun = scene_of("sun", seed).truth
    assert sun["touching"] == (sun["gap_px"] <= 0)
    assert sun["touching"] or sun["gap_px"] >= 24

    bars = scene_of("bars", seed).truth
    assert [b["label"] for b in bars["bars"]] == [f"Q{i + 1}" for i in range(len(bars["bars"]))]
    for b in bars["bars"]:
        assert 10 <= b["value"] <= 99 and b["value_box_px"][3] < b["label_box_px"][1]


@pytest.mark.parametrize("seed", SEEDS)
def test_colour_found_regions_keep_to_the_programs_colour_ranges(seed: int):
    # the sun, clock and shadows programs find regions by colour: those ranges are the
    # program's inputs, so the drawing keeps the objects inside them and the rest outside
    s = scene_of("sun", seed)
    hsv = cv2.cvtColor(s.image_bgr, cv2.COLOR_BGR2HSV).astype(int)
    hy = s.truth["horizon_y_px"]
    assert _in_colour_range(hsv[hy + 3 :], _sun.GROUND_RANGE).mean() > 0.97
    cx, cy = (round(v) for v in s.truth["sun"]["center_px"])
    r = round(s.truth["sun"]["radius_px"] * 0.5)
    core = hsv[max(cy - r, 0) : min(cy + r, hy - 2), cx - r : cx + r]
    assert _in_colour_range(core, _sun.SUN_RANGE).mean() > 0.95
    sky = _in_colour_range(hsv[: hy - 2], _sun.SUN_RANGE)
    assert sky.sum() < 1.6 * math.pi * s.truth["sun"]["radius_px"] ** 2  # the sun, little else

    c = scene_of("clock", seed)
    hsv = cv2.cvtColor(c.image_bgr, cv2.COLOR_BGR2HSV).astype(int)
    centre = np.array(c.truth["center_px"])
    for label, colour_range in zip(("hour", "minute"), _clock.HAND_RANGES, strict=True):
        tip = np.array(c.truth["hands"][label]["tip_px"])
        hits = [
            bool(_in_colour_range(hsv[round(p[1]), round(p[0])], colour_range))
            for p in (centre + (tip - centre) * t for t in (0.45, 0.6, 0.75))
        ]
        assert sum(hits) >= 2, (label, hits)
        outside = _in_colour_range(hsv, colour_range).sum()
        assert outside < 0.05 * hsv.shape[0] * hsv.shape[1]

    sh = scene_of("shadows", seed)
    hsv = cv2.cvtColor(sh.image_bgr, cv2.COLOR_BGR2HSV).astype(int)
    for p in sh.truth["pillars"]:
        mid = (np.array(p["center_px"]) * 0.35 + np.array(p["shadow_tip_px"]) * 0.65).round()
        assert _in_colour_range(hsv[int(mid[1]), int(mid[0])], _shadows.SHADOW_RANGE)
    assert _in_colour_range(hsv, _shadows.SHADOW_RANGE).mean() < 0.2


def _in_colour_range(hsv: np.ndarray, r: dict[str, Any]) -> np.ndarray:
    """Inside an HSV range as ``opencv.color_region`` reads it (red's hue wraps past 179)."""
    lo, hi = np.array(r["hsv_lower"]), np.array(r["hsv_upper"])
    hue = hsv[..., 0]
    hue_ok = (hue >= lo[0]) & (hue <= hi[0]) if lo[0] <= hi[0] else (hue >= lo[0]) | (hue <= hi[0])
    rest = np.all((hsv[..., 1:] >= lo[1:]) & (hsv[..., 1:] <= hi[1:]), axis=-1)
    return np.asarray(hue_ok & rest)


def _polygon_mask(shape: tuple[int, ...], pts: list[list[float]], grow: int) -> np.ndarray:
    """A polygon's pixels, eroded (``grow`` < 0) or dilated (``grow`` > 0) by that many px."""
    m = np.zeros(shape[:2], np.uint8)
    cv2.fillPoly(m, [np.round(np.array(pts)).astype(np.int32)], 1)
    k = np.ones((2 * abs(grow) + 1, 2 * abs(grow) + 1), np.uint8)
    return (cv2.dilate(m, k) if grow > 0 else cv2.erode(m, k)).astype(bool)


@pytest.mark.parametrize("seed", SEEDS)
def test_reflection_colours_keep_to_the_programs_colour_ranges(seed: int):
    # water, shapes and (darker, bluer, rippled) reflections inside their ranges; the sky
    # and hills inside none
    s = scene_of("reflection", seed)
    hsv = cv2.cvtColor(s.image_bgr, cv2.COLOR_BGR2HSV).astype(int)
    hy = s.truth["water_line_y_px"]
    near = np.zeros(hsv.shape[:2], bool)
    for p in s.truth["shapes"]:
        colour_range = _reflection.COLOURS[p["colour"]][1]
        for key, grow in (("object_px", -3), ("reflection_px", -5)):
            inner = _polygon_mask(hsv.shape, p[key], grow)
            assert inner.sum() > 200, (p, key)
            assert _in_colour_range(hsv[inner], colour_range).mean() > 0.95, (p["colour"], key)
            near |= _polygon_mask(hsv.shape, p[key], 6)
        shape_v = hsv[_polygon_mask(hsv.shape, p["object_px"], -3)][:, 2].mean()
        refl_v = hsv[_polygon_mask(hsv.shape, p["reflection_px"], -5)][:, 2].mean()
        assert refl_v < 0.85 * shape_v  # the reflection is darker
    water = np.zeros_like(near)
    water[hy + 3 :] = True
    assert _in_colour_range(hsv[water & ~near], _reflection.WATER_RANGE).mean() > 0.97
    above = np.zeros_like(near)
    above[: hy - 3] = True
    ranges = [_reflection.WATER_RANGE, *(r for _, r in _reflection.COLOURS.values())]
    stray = np.zeros(hsv.shape[:2], bool)
    for r in ranges:
        stray |= _in_colour_range(hsv, r)
    assert stray[above & ~near].mean() < 0.005


def test_reflection_faults_are_clear_and_right_ones_exact():
    seeds = range(heldout.REPORT_SEED0, heldout.REPORT_SEED0 + 16)
    faults = []
    for seed in seeds:
        t = scene_of("reflection", seed).truth
        hy = t["water_line_y_px"]
        for p in t["shapes"]:
            obj, refl = np.array(p["object_px"]), np.array(p["reflection_px"])
            mirror = np.column_stack([obj[:, 0], 2 * hy - obj[:, 1]])
            miss = Polygon(mirror).hausdorff_distance(Polygon(refl))
            assert obj[:, 1].max() < hy  # shapes float above the water
            if p["fault"] is None:
                assert miss < 0.05
            else:
                assert miss >= 25 and p["fault"] in {"shifted", "sunk", "resized", "unflipped"}
                faults.append(p["fault"])
        assert t["mirrored"] == (not any(p["fault"] for p in t["shapes"]))
    assert 4 <= len(faults) <= 12, faults  # about half the images are wrong
    assert len(set(faults)) >= 3, faults


_TRUTH: dict[str, list[Element]] = {}


@register_proposer("test.heldout_truth")
class _TruthProposer:
    name: ClassVar[str] = "test.heldout_truth"

    async def propose(self, request: ProposeRequest) -> Proposal:
        return Proposal(elements=_TRUTH["now"], params={})


def _quad(a: list[float], b: list[float], width: float) -> list[list[float]]:
    p, q = np.array(a), np.array(b)
    d = (q - p) / np.linalg.norm(q - p)
    n = np.array([-d[1], d[0]]) * width / 2
    return [list(p + n), list(q + n), list(q - n), list(p - n)]


def truth_elements(scene: Scene) -> list[Element]:
    t, out = scene.truth, []
    h, w = scene.image_bgr.shape[:2]

    def add(kind: str, fields: dict[str, Any], **geometry: Any) -> None:
        out.append(Element(id=len(out) + 1, kind=kind, fields=fields, **geometry))

    if scene.scene in ("dice", "dice_math"):
        for d in t["dice"]:
            add("box", {"pips": d["pips"]}, xyxy_px=d["xyxy_px"])
    elif scene.scene == "coins":
        for c in t["coins"]:
            add("box", {"radius_px": c["radius_px"]}, xyxy_px=c["xyxy_px"])
    elif scene.scene == "rows":
        for d in t["discs"]:
            (x, y), r = d["center_px"], d["radius_px"]
            add("box", {"radius_px": r}, xyxy_px=[x - r, y - r, x + r, y + r])
    elif scene.scene == "bars":
        add("box", {"text": t["title"], "confidence": 1.0}, xyxy_px=t["title_box_px"])
        for b in t["bars"]:
            for key, text in (("value_box_px", str(b["value"])), ("label_box_px", b["label"])):
                add("box", {"text": text, "confidence": 1.0}, xyxy_px=b[key])
    elif scene.scene == "compass":
        add("ray", {"bearing_deg": t["bearing_deg"]}, points_px=t["needle_px"])
    elif scene.scene.startswith("clock"):
        for label in ("hour", "minute"):
            hand = t["hands"][label]
            add("polygon", {"label": label}, points_px=_quad(hand["tail_px"], hand["tip_px"], 6))
    elif scene.scene == "shadows":
        for p in t["pillars"]:
            pts = _quad(p["center_px"], p["shadow_tip_px"], 1.4 * p["radius_px"])
            add("polygon", {}, points_px=pts)
    elif scene.scene == "reflection":
        hy = t["water_line_y_px"]
        add("polygon", {"label": "water"}, points_px=[[0, hy], [w, hy], [w, h], [0, h]])
        for p in t["shapes"]:
            for key in ("object_px", "reflection_px"):
                add("polygon", {"label": p["colour"]}, points_px=p[key])
    else:
        x1, y1, x2, y2 = t["sun"]["xyxy_px"]
        hy = t["horizon_y_px"]
        add("polygon", {"label": "sun"}, points_px=[[x1, y1], [x2, y1], [x2, y2], [x1, y2]])
        add("polygon", {"label": "ground"}, points_px=[[0, hy], [w, hy], [w, h], [0, h]])
    return out


def test_grading_the_truth_gives_every_truth_answer():
    outcomes = {"pass": 0, "fail": 0}
    for kind in KINDS:
        for seed in SEEDS:
            scene = scene_of(kind, seed)
            _TRUTH["now"] = truth_elements(scene)
            h, w = scene.image_bgr.shape[:2]
            image = ImagePart(b"x", "image/png", (w, h))
            for program in scene.programs:
                for q in program.questions:
                    source = program.state_source(q)
                    if source is None:  # a judge gate (clock_world, clock_counterfactual)
                        continue
                    spec = program.question(source).ground
                    assert spec is not None
                    spec = spec.model_copy(update={"proposer": "test.heldout_truth", "params": {}})
                    state = asyncio.run(
                        run_grounding(
                            image_bgr=scene.image_bgr,
                            image=image,
                            spec=spec,
                            ask=q.ask,
                            item_id=scene.id,
                            question_id=source,
                            provenance=Provenance(toolkit_version="test"),
                        )
                    )
                    assert state.status == "grounded", (scene.id, state.reason)
                    said = "pass" if run_check(q.check, state).score >= 1.0 else "fail"
                    assert said == scene.truth["answers"][f"{program.id}/{q.id}"], (scene.id, q.id)
                    outcomes[said] += 1
    assert outcomes["pass"] and outcomes["fail"], outcomes


def _num(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    assert match, (pattern, text)
    return int(match.group(1))


def _rebuilt(s: Scene) -> Program:
    """The held-out builder's program for the facts of an in-style scene."""
    p, t = s.programs[0], s.truth
    qs = {q.id: q for q in p.questions}
    if s.scene == "dice":
        return prog.dice(
            s.id,
            s.difficulty,
            f"on a {t['table']} table",
            _num(r"== (\d+)", str(qs["h1"].check)),
            _num(r"== (\d+)", str(qs["h2"].check)),
        )
    if s.scene == "coins":
        return prog.coins(
            s.id, s.difficulty, f"on a {t['cloth']} cloth", _num(r"== (\d+)", str(qs["h1"].check))
        )
    if s.scene == "bars":
        claims = [(q.ask.split()[2], int(q.ask.split()[-1].rstrip("?"))) for q in p.hard]
        tol = float(re.findall(r"< ([\d.]+)", str(p.hard[0].check))[0])
        return prog.bars(s.id, s.difficulty, t["colour"], t["title"], len(t["bars"]), tol, claims)
    if s.scene == "compass":
        asked = p.prompt.rstrip(".").split()[-1]
        return prog.compass(s.id, s.difficulty, t["letters"], t["letters"].index(asked))
    if s.scene == "sun":
        return prog.sun(
            s.id, s.difficulty, t["sun"]["colour"], t["ground"], "touching" in p.hard[0].ask
        )
    if s.scene == "shadows":
        return prog.shadows(s.id, s.difficulty, len(t["pillars"]))
    if s.scene == "rows":
        return prog.rows(s.id, s.difficulty, len(t["discs"]), t["mode"])
    if s.scene == "reflection":
        return prog.reflection(s.id, s.difficulty, [(q["colour"], q["shape"]) for q in t["shapes"]])
    if s.scene == "dice_math":
        return prog.dice_math(s.id, s.difficulty, len(t["dice"]), p.hard[0].check.args["equals"])
    expected = p.hard[0].check.args["expected"]
    if s.scene == "clock":
        return prog.clock(s.id, s.difficulty, _clock.parse(expected))
    if s.scene == "clock_world":
        event = p.prompt.removeprefix("A station clock showing the moment ").rstrip(".")
        return prog.clock_world(
            s.id,
            s.difficulty,
            event,
            expected,
            p.instructions.removeprefix(_clock.RATIONALE_HEADER),
        )
    base = _clock.parse(re.findall(r"starts at (\d+:\d\d)", p.prompt)[0])
    moved = _num(r"moved (\d+) minutes", p.prompt)
    return prog.clock_counterfactual(
        s.id, s.difficulty, base, moved if "later" in p.prompt else -moved
    )


@pytest.mark.parametrize("kind", KINDS)
def test_programs_are_the_in_style_programs(kind: str):
    # same facts in, the same program out: the held-out graders are the in-style graders
    for difficulty in in_style.DIFFICULTIES:
        for seed in range(2):
            s = in_style.generate(kind, difficulty, seed)
            assert _rebuilt(s) == s.programs[0], (kind, difficulty, seed)


def test_write_suite_layout_loads_and_validates(tmp_path: Path):
    manifest = heldout.write_suite(tmp_path, n_per_scene=1, scenes=["dice", "clock", "rows"])
    programs = load_programs(tmp_path / "programs.jsonl")
    assert [p.id for p in programs] == [i["id"] for i in manifest["items"]]
    text = (tmp_path / "truth.jsonl").read_text(encoding="utf-8")
    truth = [json.loads(line) for line in text.split("\n") if line]
    assert [t["scene"] for t in truth] == ["dice", "clock", "rows"]
    assert manifest["seed"] == heldout.REPORT_SEED0 and manifest["style"] == "heldout"
    for item in manifest["items"]:
        png = (tmp_path / item["image"]).read_bytes()
        assert hashlib.sha256(png).hexdigest() == item["sha256"]
        assert cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR) is not None
    result = CliRunner().invoke(app, ["validate", str(tmp_path / "programs.jsonl")])
    assert result.exit_code == 0, result.output
    assert "ok: 3 program(s)" in result.output


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="unknown scene 'cards'"):
        heldout.generate("cards", 1)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        heldout.generate("dice", -1)
    with pytest.raises(ValueError, match="n_per_scene"):
        heldout.write_suite("unused", n_per_scene=0)
    with pytest.raises(ValueError, match="unknown scene"):
        heldout.write_suite("unused", scenes=["cards"])
