"""The probe style: seeded, in-style programs, truth that agrees with what was drawn."""

from __future__ import annotations

import itertools
import json
import re
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from groundeval.benchmarks.synthetic import _coins, _dice, _latent, probe
from groundeval.benchmarks.synthetic._common import Scene

KINDS = [*probe.SCENES, *probe.AXIS_SCENES]
SEEDS = range(probe.REPORT_SEED0, probe.REPORT_SEED0 + 3)


@cache
def scene_of(kind: str, seed: int) -> Scene:
    return probe.generate(kind, seed)


def _boxes(scene: Scene) -> list[list[float]]:
    return [o["xyxy_px"] for o in scene.truth.get("dice", scene.truth.get("coins", []))]


def _overlap(a: list[float], b: list[float]) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


@pytest.mark.parametrize("kind", KINDS)
def test_same_seed_same_bytes_other_seed_other_image(kind: str) -> None:
    a, b = scene_of(kind, SEEDS[0]), probe.generate(kind, SEEDS[0])
    assert np.array_equal(a.image_bgr, b.image_bgr) and a.truth == b.truth
    assert a.id == f"{kind}-probe-{SEEDS[0]}" and a.difficulty == "probe"
    assert a.image_bgr.dtype == np.uint8 and a.image_bgr.shape[2] == 3 and a.image_bgr.std() > 5
    assert not np.array_equal(a.image_bgr, scene_of(kind, SEEDS[1]).image_bgr)


@pytest.mark.parametrize("seed", SEEDS)
def test_programs_are_the_in_style_builders(seed: int) -> None:
    d, c, m = scene_of("dice", seed), scene_of("coins", seed), scene_of("dice_math", seed)
    n, total = (
        int(v) for v in re.findall(r"== (\d+)", " ".join(q.check for q in d.programs[0].hard))
    )  # type: ignore[union-attr]
    where = d.programs[0].prompt.split(" whose")[0].split(" ", 2)[2]
    assert d.programs[0] == _dice.program_for(d.id, "probe", where, n, total)
    claim = int(re.findall(r"== (\d+)", c.programs[0].hard[0].check)[0])  # type: ignore[arg-type]
    where = c.programs[0].prompt.rstrip(".").split(" ", 2)[2]
    assert c.programs[0] == _coins.program_for(c.id, "probe", where, claim)
    product = int(re.findall(r"multiply to (\d+)", m.programs[0].prompt)[0])
    assert m.programs[0] == _latent.program_for(m.id, "probe", m.truth["count"], product)


@pytest.mark.parametrize("seed", SEEDS)
def test_answers_agree_with_the_claims_and_the_drawing(seed: int) -> None:
    d = scene_of("dice", seed)
    assert d.truth["count"] == len(d.truth["dice"]) >= 1
    assert d.truth["pip_sum"] == sum(o["pips"] for o in d.truth["dice"])
    n, total = (
        int(v) for v in re.findall(r"== (\d+)", " ".join(q.check for q in d.programs[0].hard))
    )  # type: ignore[union-attr]
    answers = d.truth["answers"]
    assert answers[f"{d.id}/h1"] == ("pass" if n == d.truth["count"] else "fail")
    assert answers[f"{d.id}/h2"] == ("pass" if total == d.truth["pip_sum"] else "fail")
    m = scene_of("dice_math", seed)
    by_x = [o["pips"] for o in sorted(m.truth["dice"], key=lambda o: o["xyxy_px"][0])]
    assert by_x == m.truth["pips_left_to_right"] and m.truth["product"] == np.prod(by_x)
    rising = all(b > a for a, b in itertools.pairwise(by_x))
    assert m.truth["answers"][f"{m.id}/h2"] == ("pass" if rising else "fail")


@pytest.mark.parametrize("kind", KINDS)
def test_objects_inside_apart_and_clear_of_distractors(kind: str) -> None:
    for seed in SEEDS:
        s = scene_of(kind, seed)
        h, w = s.image_bgr.shape[:2]
        boxes = _boxes(s)
        for x1, y1, x2, y2 in boxes:
            assert x1 >= 4 and y1 >= 4 and x2 <= w - 4 and y2 <= h - 4
        if kind != "coins":  # dice never overlap (a turned square's box may meet another's)
            assert all(
                _overlap(a, b) < 0.3 * (a[2] - a[0]) ** 2
                for i, a in enumerate(boxes)
                for b in boxes[i + 1 :]
            )
        for d in s.truth["distractors"]:
            if d["kind"] != "reflection":
                assert all(_overlap(d["xyxy_px"], b) == 0 for b in boxes), (seed, d)


def test_coins_overlap_at_most_a_twentieth_of_a_radius() -> None:
    for seed in range(0, 20):
        coins = probe.generate("coins", seed).truth["coins"]
        for i, a in enumerate(coins):
            for b in coins[i + 1 :]:
                gap = np.hypot(*np.subtract(a["center_px"], b["center_px"]))
                assert (
                    gap
                    >= a["radius_px"]
                    + b["radius_px"]
                    - 0.05 * min(a["radius_px"], b["radius_px"])
                    - 0.01
                )


def test_bad_arguments_name_the_problem() -> None:
    with pytest.raises(ValueError, match="unknown scene 'cards'"):
        probe.generate("cards", 1)
    with pytest.raises(ValueError, match="seed must be >= 0"):
        probe.generate("dice", -1)
    with pytest.raises(ValueError, match="unknown scene"):
        probe.write_suite("unused", scenes=["cards"])


def test_write_suite_writes_images_programs_and_truth(tmp_path: Path) -> None:
    manifest = probe.write_suite(tmp_path, n_per_scene=2, scenes=["coins"])
    assert manifest["style"] == "probe" and len(manifest["items"]) == 2
    assert all((tmp_path / it["image"]).is_file() for it in manifest["items"])
    truths = (tmp_path / "truth.jsonl").read_text(encoding="utf-8").split("\n")
    assert json.loads(truths[0])["id"] == "coins-probe-100000"
