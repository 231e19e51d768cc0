"""The tuning dice renderer: seeded, exact truth, dice really drawn where the truth says."""

from __future__ import annotations

from functools import cache

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic._common import Scene
from groundeval.benchmarks.synthetic.tuningdice import STYLE_VERSION, generate

SEEDS = range(30)


@cache
def scene(seed: int) -> Scene:
    return generate(seed)


def _gap(a: list[int], b: list[int]) -> int:
    """Empty pixels between two [x1, y1, x2, y2) boxes along the axis they are apart on."""
    return max(b[0] - a[2], a[0] - b[2], b[1] - a[3], a[1] - b[3])


def test_same_seed_same_bytes_and_seeds_differ():
    a, b = generate(7), generate(7)
    assert a.image_bgr.tobytes() == b.image_bgr.tobytes() and a.truth == b.truth
    assert not np.array_equal(scene(7).image_bgr, scene(8).image_bgr)
    assert a.id == "dice-tuningdice-7" and a.scene == "dice" and a.difficulty == "tuning"
    assert a.seed == 7 and a.programs == [] and STYLE_VERSION == 1


def test_negative_seed_is_refused():
    with pytest.raises(ValueError):
        generate(-1)


@pytest.mark.parametrize("seed", SEEDS)
def test_truth_is_consistent_and_boxes_are_disjoint(seed):
    s = scene(seed)
    truth, (h, w) = s.truth, s.image_bgr.shape[:2]
    dice = truth["dice"]
    assert truth["count"] == len(dice) >= 1 and len(dice) <= 7
    assert truth["pip_sum"] == sum(d["pips"] for d in dice)
    assert isinstance(truth["table"], str) and truth["table"]
    for d in dice:
        assert 1 <= d["pips"] <= 6 and isinstance(d["face"], str)
        x1, y1, x2, y2 = d["xyxy_px"]
        assert all(isinstance(v, int) for v in d["xyxy_px"])
        assert 0 < x1 < x2 < w and 0 < y1 < y2 < h  # never cut by the border
    for i, a in enumerate(dice):
        for b in dice[i + 1 :]:
            assert _gap(a["xyxy_px"], b["xyxy_px"]) >= 2


@pytest.mark.parametrize("seed", SEEDS)
def test_image_holds_the_dice(seed):
    img = scene(seed).image_bgr
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    h, w = img.shape[:2]
    assert 480 <= w <= 960 and 360 <= h <= 720
    assert abs(w / h - 4 / 3) < 0.01 or abs(w / h - 16 / 9) < 0.01
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
    short = min(w, h)
    sides = []
    for d in scene(seed).truth["dice"]:
        x1, y1, x2, y2 = d["xyxy_px"]
        crop = grey[y1:y2, x1:x2]
        assert crop.std() > 4.0  # a face with contrasting pips, not flat table
        sides.append(max(x2 - x1, y2 - y1))
    # a box holds a die of side 6-18% of the short side (plus rotation and side strip)
    assert 0.05 * short <= min(sides) and max(sides) <= 0.18 * short * 1.7


def test_styles_vary_over_seeds():
    scenes = [scene(s) for s in SEEDS]
    tables = {s.truth["table"].split("-")[0] for s in scenes}
    faces = {d["face"] for s in scenes for d in s.truth["dice"]}
    sizes = {s.image_bgr.shape[:2] for s in scenes}
    assert len(tables) >= 4 and len(faces) >= 6 and len(sizes) >= 10
    assert {d["pips"] for s in scenes for d in s.truth["dice"]} == set(range(1, 7))
    near = [
        s
        for s in scenes
        if any(
            _gap(a["xyxy_px"], b["xyxy_px"]) <= 6
            for i, a in enumerate(s.truth["dice"])
            for b in s.truth["dice"][i + 1 :]
        )
    ]
    assert near  # some images have dice that nearly touch
