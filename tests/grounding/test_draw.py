"""Numbered help lines: golden overlays (exact pixels) plus properties that could break.

Regenerate the golden PNGs after an intended drawing change with
``GROUNDEVAL_REGEN_GOLDEN=1 .venv/bin/pytest tests/test_draw.py`` and look at them.
"""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

from groundeval.grounding._draw import OKABE_ITO, MarkStyle, draw_marks, ray_to_border
from groundeval.state import Element

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("GROUNDEVAL_REGEN_GOLDEN") == "1"


def _scene(width: int = 160, height: int = 120) -> np.ndarray:
    img = np.full((height, width, 3), 205, np.uint8)
    img[height // 2 :, :] = (50, 80, 40)
    return img


def _mixed() -> list[Element]:
    return [
        Element(id=1, kind="box", xyxy_px=[12, 18, 50, 52]),
        Element(id=2, kind="box", xyxy_px=[0, 0, 24, 10]),
        Element(id=3, kind="polygon", points_px=[[80, 20], [115, 14], [124, 52], [86, 48]]),
        Element(id=4, kind="ray", points_px=[[70, 95], [90, 85]]),
        Element(id=5, kind="line", points_px=[[15, 110], [45, 80]]),
        Element(id=6, kind="point", points_px=[[145, 108]]),
    ]


def _check_golden(name: str, image: np.ndarray) -> None:
    path = GOLDEN / name
    if REGEN:
        GOLDEN.mkdir(exist_ok=True)
        cv2.imwrite(str(path), image)
    assert path.exists(), f"missing golden {path}; run with GROUNDEVAL_REGEN_GOLDEN=1"
    golden = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert golden.shape == image.shape
    diff = np.argwhere(np.any(golden != image, axis=-1))
    assert diff.size == 0, f"{len(diff)} pixels differ from {name}, first at (y, x) {diff[0]}"


@pytest.mark.parametrize(
    ("name", "size_wh", "elements"),
    [
        ("mixed_160x120.png", (160, 120), _mixed()),
        ("mixed_64x48.png", (64, 48), None),
        ("boxes_crowded_200x100.png", (200, 100), None),
    ],
)
def test_golden_overlays(name: str, size_wh: tuple[int, int], elements: list[Element] | None):
    width, height = size_wh
    if elements is None and name.startswith("mixed"):
        s = width / 160
        elements = [
            e.model_copy(
                update={
                    "xyxy_px": [v * s for v in e.xyxy_px] if e.xyxy_px else None,
                    "points_px": [[x * s, y * s] for x, y in e.points_px] if e.points_px else None,
                }
            )
            for e in _mixed()
        ]
    if elements is None:
        elements = [
            Element(id=i + 1, kind="box", xyxy_px=[10 + 18 * i, 30, 26 + 18 * i, 70])
            for i in range(10)
        ]
    _check_golden(name, draw_marks(_scene(width, height), elements, "boxes"))


def test_input_untouched_and_deterministic():
    img = _scene()
    before = img.copy()
    a = draw_marks(img, _mixed())
    b = draw_marks(img, _mixed())
    assert np.array_equal(img, before)
    assert np.array_equal(a, b)
    assert a.dtype == np.uint8 and a.shape == img.shape


def test_label_sits_above_the_box_and_leaves_its_inside_clear():
    img = _scene(200, 200)
    box = Element(id=1, kind="box", xyxy_px=[60, 80, 140, 150])
    out = draw_marks(img, [box])
    inside = (slice(80 + 4, 150 - 3), slice(60 + 4, 140 - 3))
    assert np.array_equal(out[inside], img[inside])
    above = out[40:79, 60:140]
    label_colour = np.array(OKABE_ITO.by_idx(0).as_bgr(), np.uint8)
    assert np.all(above == label_colour, axis=-1).sum() > 50


def test_labels_stay_inside_the_image_for_edge_boxes():
    img = np.zeros((100, 100, 3), np.uint8)
    corners = [
        Element(id=1, kind="box", xyxy_px=[0, 0, 10, 10]),
        Element(id=2, kind="box", xyxy_px=[90, 90, 99, 99]),
    ]
    out = draw_marks(img, corners)
    for i in (0, 1):
        colour = np.array(OKABE_ITO.by_idx(i).as_bgr(), np.uint8)
        assert np.all(out == colour, axis=-1).sum() > 30, f"label {i + 1} not drawn"


def test_ray_runs_to_the_border_but_line_stops():
    img = np.zeros((100, 200, 3), np.uint8)
    ray = draw_marks(img, [Element(id=2, kind="ray", points_px=[[20, 50], [40, 50]])])
    line = draw_marks(img, [Element(id=2, kind="line", points_px=[[20, 50], [40, 50]])])
    colour = np.array(OKABE_ITO.by_idx(1).as_bgr(), np.uint8)
    assert np.all(ray[50, 150:199] == colour, axis=-1).all()
    assert not np.any(line[45:56, 60:199] != 0)


@pytest.mark.parametrize(
    ("ray", "size_wh", "end"),
    [
        ((10, 10, 20, 10), (100, 50), (99, 10)),
        ((50, 25, 50, 20), (100, 50), (50, 0)),
        ((10, 10, 20, 20), (100, 50), (49, 49)),
        ((10, 10, 10, 10), (100, 50), (10, 10)),
        ((10, 10, 200, 10), (100, 50), (200, 10)),
    ],
)
def test_ray_to_border(ray, size_wh, end):
    assert ray_to_border(*ray, *size_wh) == pytest.approx(end)


def test_style_grows_with_the_image():
    small, large = MarkStyle.for_size(64, 48), MarkStyle.for_size(4000, 3000)
    assert small.font_scale >= 0.4 and small.line >= 1
    assert large.font_scale > 3 * small.font_scale
    assert large.line >= 8
    (_, th), _ = cv2.getTextSize("12", cv2.FONT_HERSHEY_SIMPLEX, large.font_scale, 1)
    assert th >= 0.02 * 3000


@pytest.mark.parametrize(
    "element",
    [
        Element(id=1, kind="point", points_px=[[float("nan"), 3]]),
        Element(id=1, kind="box", xyxy_px=[0, 0, float("inf"), 5]),
        Element(id=1, kind="box", xyxy_px=[1e300, 1e300, 1e301, 1e301]),
        Element(id=1, kind="ray", points_px=[[-1e9, -1e9], [1e9, 1e9]]),
        Element(id=1, kind="ray", points_px=[[5, 5], [5, 5]]),
        Element(id=1, kind="polygon", points_px=[[0, 0], [0, 0], [0, 0]]),
        Element(id=1, kind="point", points_px=[[-50, 500]]),
    ],
)
def test_absurd_geometry_never_crashes(element: Element):
    out = draw_marks(_scene(), [element])
    assert out.shape == (120, 160, 3)


def test_grayscale_and_bgra_inputs():
    gray = np.full((40, 60), 128, np.uint8)
    bgra = np.full((40, 60, 4), 128, np.uint8)
    box = [Element(id=1, kind="box", xyxy_px=[10, 15, 30, 35])]
    assert draw_marks(gray, box).shape == (40, 60, 3)
    assert np.array_equal(draw_marks(gray, box), draw_marks(bgra, box))
    with pytest.raises(ValueError, match="uint8"):
        draw_marks(np.zeros((4, 4, 3), np.float32), box)
