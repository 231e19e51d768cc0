"""The out-of-style benchmark: seeded, independent of the in-style code, truth that grades right."""

from __future__ import annotations

import ast
import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from groundeval.benchmarks.synthetic import generate as generate_in
from groundeval.benchmarks.synthetic import outstyle
from groundeval.grounding._loop import run_grounding
from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.grounding.models.train_dice import TRAIN_SEED0, VAL_SEED0
from groundeval.judges._protocol import ImagePart
from groundeval.programs._checks import run_check
from groundeval.programs._loaders import load_programs
from groundeval.state import Element, Provenance

PACKAGE = Path(outstyle.__file__).parent
SEEDS = range(outstyle.REPORT_SEED0, outstyle.REPORT_SEED0 + 4)


def test_same_seed_same_bytes_and_seeds_differ():
    for scene in outstyle.SCENES:
        a, b = outstyle.generate(scene, SEEDS[0]), outstyle.generate(scene, SEEDS[0])
        assert np.array_equal(a.image_bgr, b.image_bgr) and a.truth == b.truth
        c = outstyle.generate(scene, SEEDS[1])
        assert not np.array_equal(a.image_bgr, c.image_bgr)
        assert a.id == f"{scene}-outstyle-{SEEDS[0]}" and a.difficulty == "outstyle"


def test_report_seeds_are_disjoint_from_training_and_in_style_seeds():
    # in-style tests and tuning use seeds 0..N (N well below 10^5); the detector trains on
    # 900000+ and validates on 910000+; the report range is 700000..799999
    assert 100_000 < outstyle.REPORT_SEED0
    assert outstyle.REPORT_SEED0 + 100_000 <= min(TRAIN_SEED0, VAL_SEED0)


def test_code_is_independent_of_the_in_style_generators():
    in_style = {"_dice", "_coins", "_bars", "_compass", "_sun", "_effects"}
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            for name in names:
                assert not in_style & set(name.split(".")), f"{path.name} imports {name}"


def test_images_differ_in_style_from_the_in_style_suite():
    # the out-of-style dice are on textured, JPEG-compressed backgrounds: far more distinct
    # colours than the in-style flat tables
    def colours(img: np.ndarray) -> int:
        return len(np.unique(img.reshape(-1, 3), axis=0))

    ours = [colours(outstyle.generate("dice", s).image_bgr) for s in SEEDS]
    theirs = [colours(generate_in("dice", "clean", s).image_bgr) for s in range(4)]
    assert min(ours) > 3 * max(theirs), (ours, theirs)


def test_truth_objects_are_inside_the_image_and_apart():
    faces, metals = set(), set()
    for seed in range(outstyle.REPORT_SEED0, outstyle.REPORT_SEED0 + 12):
        dice = outstyle.generate("dice", seed)
        coins = outstyle.generate("coins", seed)
        for scene, key in ((dice, "dice"), (coins, "coins")):
            h, w = scene.image_bgr.shape[:2]
            boxes = [o["xyxy_px"] for o in scene.truth[key]]
            assert len(boxes) == scene.truth["count"] >= 1
            for x1, y1, x2, y2 in boxes:
                assert 0 <= x1 < x2 <= w and 0 <= y1 < y2 <= h
            for i, a in enumerate(boxes):
                for b in boxes[i + 1 :]:
                    ix = min(a[2], b[2]) - max(a[0], b[0])
                    iy = min(a[3], b[3]) - max(a[1], b[1])
                    assert min(ix, iy) <= 0 or ix * iy < 0.05 * (a[2] - a[0]) * (a[3] - a[1])
        assert 1 <= min(d["pips"] for d in dice.truth["dice"])
        assert max(d["pips"] for d in dice.truth["dice"]) <= 6
        faces |= {d["face"] for d in dice.truth["dice"]}
        metals |= {c["metal"] for c in coins.truth["coins"]}
    assert len(faces) >= 4 and len(metals) >= 4, (faces, metals)


def test_a_die_box_holds_the_die_and_the_corners_hold_the_table():
    scene = outstyle.generate("dice", SEEDS[2])
    lab = scene.image_bgr.astype(np.float32)
    for die in scene.truth["dice"]:
        x1, y1, x2, y2 = (round(v) for v in die["xyxy_px"])
        inside = lab[
            y1 + (y2 - y1) // 3 : y2 - (y2 - y1) // 3, x1 + (x2 - x1) // 3 : x2 - (x2 - x1) // 3
        ]
        ring = np.concatenate([lab[max(y1 - 6, 0) : y1 - 2, x1:x2].reshape(-1, 3),
                               lab[y2 + 2 : y2 + 6, x1:x2].reshape(-1, 3)])  # fmt: skip
        if len(ring) == 0:
            continue
        gap = np.linalg.norm(np.median(inside.reshape(-1, 3), 0) - np.median(ring, 0))
        spread = np.linalg.norm(ring.std(0))
        assert gap > 15 or spread > 15, die  # a face differs from the table next to it


# A proposer that returns the truth: grading with it must reproduce every truth answer.
_TRUTH: dict[str, list[Element]] = {}


@register_proposer("test.outstyle_truth")
class _TruthProposer:
    name: ClassVar[str] = "test.outstyle_truth"

    async def propose(self, request: ProposeRequest) -> Proposal:
        return Proposal(elements=_TRUTH["now"], params={})


def truth_elements(scene: Any) -> list[Element]:
    t, out = scene.truth, []

    def add(kind: str, **geometry: Any) -> None:
        fields = geometry.pop("fields")
        out.append(Element(id=len(out) + 1, kind=kind, fields=fields, **geometry))

    if scene.scene == "dice":
        for d in t["dice"]:
            add("box", xyxy_px=d["xyxy_px"], fields={"pips": d["pips"]})
    elif scene.scene == "rows":
        for c in t["discs"]:
            add("box", xyxy_px=c["xyxy_px"], fields={"radius_px": c["radius_px"]})
    elif scene.scene == "coins":
        for c in t["coins"]:
            add("box", xyxy_px=c["xyxy_px"], fields={"radius_px": c["radius_px"]})
    elif scene.scene == "bars":
        for b in t["bars"]:
            for key, text in (("value_box_px", str(b["value"])), ("label_box_px", b["label"])):
                add("box", xyxy_px=b[key], fields={"text": text, "confidence": 1.0})
    elif scene.scene == "compass":
        add("ray", points_px=t["needle_px"], fields={"bearing_deg": t["bearing_deg"]})
    else:
        x1, y1, x2, y2 = t["sun"]["xyxy_px"]
        sun = [[x1, y1], [x2, y1], [x2, y2], [x1, y2]]
        hy = t["horizon_y_px"]
        ground = [[0, hy], [640, hy], [640, 480], [0, 480]]
        add("polygon", points_px=sun, fields={"label": "sun"})
        add("polygon", points_px=ground, fields={"label": "ground"})
    return out


@pytest.mark.parametrize("scene_name", list(outstyle.SCENES))
def test_grading_the_truth_gives_every_truth_answer(scene_name: str):
    outcomes = {"pass": 0, "fail": 0}
    for seed in range(outstyle.REPORT_SEED0, outstyle.REPORT_SEED0 + 10):
        scene = outstyle.generate(scene_name, seed)
        _TRUTH["now"] = truth_elements(scene)
        h, w = scene.image_bgr.shape[:2]
        image = ImagePart(b"x", "image/png", (w, h))
        for program in scene.programs:
            for q in program.questions:
                source = program.state_source(q)
                assert source is not None
                spec = program.question(source).ground
                assert spec is not None
                spec = spec.model_copy(update={"proposer": "test.outstyle_truth", "params": {}})
                state = asyncio.run(
                    run_grounding(image_bgr=scene.image_bgr, image=image, spec=spec, ask=q.ask,
                                  item_id=scene.id, question_id=source,
                                  provenance=Provenance(toolkit_version="test"))
                )  # fmt: skip
                assert state.status == "grounded", (scene.id, state.reason)
                said = "pass" if run_check(q.check, state).score >= 1.0 else "fail"
                assert said == scene.truth["answers"][f"{program.id}/{q.id}"], (scene.id, q.id)
                outcomes[said] += 1
    assert outcomes["pass"] and outcomes["fail"], outcomes  # both answers occur


def test_write_suite_layout_loads_as_programs(tmp_path: Path):
    manifest = outstyle.write_suite(tmp_path, n_per_scene=1, scenes=["dice", "sun"])
    programs = load_programs(tmp_path / "programs.jsonl")
    assert [p.id for p in programs] == [i["id"] for i in manifest["items"]]
    truth = [
        json.loads(line) for line in (tmp_path / "truth.jsonl").read_text().split("\n") if line
    ]
    assert {t["scene"] for t in truth} == {"dice", "sun"}
    for item in manifest["items"]:
        png = (tmp_path / item["image"]).read_bytes()
        assert hashlib.sha256(png).hexdigest() == item["sha256"]
    with pytest.raises(ValueError, match="unknown scene"):
        outstyle.generate("cards", 1)
    with pytest.raises(ValueError, match="seed"):
        outstyle.generate("dice", -1)
