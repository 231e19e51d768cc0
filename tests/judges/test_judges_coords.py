"""Every coordinate convention converted to original pixels, checked with known numbers."""

from __future__ import annotations

import json
import math

import pytest
import supervision as sv
from hypothesis import given, settings
from hypothesis import strategies as st

from groundeval.judges import (
    box_to_xyxy_px,
    guess_convention,
    parse_proposal,
    point_to_px,
    px_to_point,
    qwen25_input_wh,
    xyxy_px_to_box,
)


@pytest.mark.parametrize(
    ("values", "convention", "size_wh", "input_wh", "expected"),
    [
        # Gemini: [ymin, xmin, ymax, xmax] on 0-1000
        ([100, 200, 300, 400], "box_2d_1000", (2000, 1000), None, [400, 100, 800, 300]),
        ([0, 0, 1000, 1000], "box_2d_1000", (640, 480), None, [0, 0, 640, 480]),
        # Qwen2.5-VL: pixels of the resized input (1000x500 is seen as 1008x504)
        ([504, 252, 1008, 504], "qwen25_px", (1000, 500), None, [500, 250, 1000, 500]),
        ([0, 0, 574, 420], "qwen25_px", (4000, 3000), (1148, 840), [0, 0, 2000, 1500]),
        # Qwen3-VL style: [x1, y1, x2, y2] on 0-1000
        ([250, 500, 750, 1000], "xyxy_1000", (800, 600), None, [200, 300, 600, 600]),
        # normalised 0-1
        ([0.25, 0.5, 0.75, 1.0], "xyxy_norm", (800, 600), None, [200, 300, 600, 600]),
        # a small overshoot is clamped
        ([-5, 0, 1010, 500], "box_2d_1000", (100, 100), None, [0, 0, 50, 100]),
    ],
)
def test_box_conventions(values, convention, size_wh, input_wh, expected) -> None:
    got = box_to_xyxy_px(values, convention, size_wh, input_wh=input_wh)
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("values", "convention", "size_wh", "expected"),
    [
        ([250, 500], "box_2d_1000", (2000, 1000), [1000, 250]),  # [y, x]
        ([504, 252], "qwen25_px", (1000, 500), [500, 250]),
        ([500, 250], "xyxy_1000", (2000, 1000), [1000, 250]),
        ([0.5, 0.25], "xyxy_norm", (2000, 1000), [1000, 250]),
    ],
)
def test_point_conventions(values, convention, size_wh, expected) -> None:
    assert point_to_px(values, convention, size_wh) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("size_wh", "kwargs", "expected"),
    [
        ((1000, 500), {}, (1008, 504)),
        ((1920, 1080), {}, (1932, 1092)),
        ((10, 10), {}, (56, 56)),  # below min_pixels: scaled up
        ((4000, 3000), {"max_pixels": 1280 * 28 * 28}, (1148, 840)),  # scaled down
        ((3, 500), {}, (28, 504)),
    ],
)
def test_qwen25_resize_rule(size_wh, kwargs, expected) -> None:
    w, h = qwen25_input_wh(size_wh, **kwargs)
    assert (w, h) == expected and w % 28 == 0 and h % 28 == 0


def test_qwen25_resize_rejects_extreme_aspect() -> None:
    with pytest.raises(ValueError, match="aspect ratio"):
        qwen25_input_wh((10, 5000))


@pytest.mark.parametrize(
    ("values", "match"),
    [
        ([1, 2, 3], "4 numbers"),
        ([1, 2, 3, float("nan")], "^xmax=NaN is not a finite number$"),
        ([1, 2, float("-inf"), 3], "^ymax=-inf is not a finite number$"),
        ([0, 0, 1500, 10], "^ymax=1500 is outside the image"),
        ([0, -50, 10, 10], "^xmin=-50 is negative"),
        ([300, 400, 100, 200], "^corners swapped: ymin=300 > ymax=100$"),
        ([10, 10, 10, 500], "no area"),
        ("10,10,20,20", "list of 4"),
        ([True, 1, 2, 3], "^ymin=True is not a number$"),
        ([None, 1, 2, 3], "^ymin=None is not a number$"),
    ],
)
def test_bad_boxes_say_what_is_wrong(values, match) -> None:
    with pytest.raises(ValueError, match=match):
        box_to_xyxy_px(values, "box_2d_1000", (100, 100))


def test_unknown_convention() -> None:
    with pytest.raises(ValueError, match="unknown box convention"):
        box_to_xyxy_px([1, 2, 3, 4], "yolo", (100, 100))


@pytest.mark.parametrize(
    ("spec", "model", "expected"),
    [
        ("gemini:gemini-2.5-flash", "gemini-2.5-flash", "box_2d_1000"),
        (
            "openai:Qwen/Qwen2.5-VL-7B-Instruct@http://x/v1",
            "Qwen/Qwen2.5-VL-7B-Instruct",
            "qwen25_px",
        ),
        ("openai:qwen2.5vl:7b@http://x/v1", "qwen2.5vl:7b", "qwen25_px"),
        ("openai:Qwen3-VL-8B@http://x/v1", "Qwen3-VL-8B", "xyxy_1000"),
        ("openai:gpt-4o", "gpt-4o", "xyxy_norm"),
    ],
)
def test_guess_convention(spec, model, expected) -> None:
    assert guess_convention(spec, model) == expected


coord = st.floats(0, 1000, allow_nan=False)


@settings(max_examples=300, deadline=None)
@given(a=coord, b=coord, c=coord, d=coord, w=st.integers(8, 4000), h=st.integers(8, 4000))
def test_gemini_conversion_matches_supervision(a, b, c, d, w, h) -> None:
    if math.isclose(a, c, abs_tol=1e-6) or math.isclose(b, d, abs_tol=1e-6):
        return  # no area once scaled to pixels: an error by design, tested elsewhere
    a, c = sorted((a, c))  # swapped corners are an error by design, tested elsewhere
    b, d = sorted((b, d))
    ours = box_to_xyxy_px([a, b, c, d], "box_2d_1000", (w, h))
    reply = json.dumps([{"box_2d": [min(a, c), min(b, d), max(a, c), max(b, d)], "label": "x"}])
    theirs = sv.Detections.from_vlm(sv.VLM.GOOGLE_GEMINI_2_5, reply, resolution_wh=(w, h))
    assert theirs.xyxy.shape == (1, 4)
    assert ours == pytest.approx(theirs.xyxy[0].tolist(), abs=1e-3)


def test_qwen_conversion_matches_supervision() -> None:
    size, seen = (1000, 500), qwen25_input_wh((1000, 500))
    reply = json.dumps([{"bbox_2d": [100, 50, 700, 400], "label": "x"}])
    theirs = sv.Detections.from_vlm(sv.VLM.QWEN_2_5_VL, reply, input_wh=seen, resolution_wh=size)
    ours = box_to_xyxy_px([100, 50, 700, 400], "qwen25_px", size)
    assert ours == pytest.approx(theirs.xyxy[0].tolist())


def test_wrong_shape_is_an_error_not_an_empty_result() -> None:
    """supervision returns nothing for an unexpected shape; our parser says why."""
    reply = json.dumps({"elements": [{"label": "die", "box_2d": [10, 20]}]})
    silent = sv.Detections.from_vlm(sv.VLM.GOOGLE_GEMINI_2_5, reply, resolution_wh=(100, 100))
    assert len(silent) == 0
    parsed = parse_proposal(
        reply, helper="boxes", fields={}, convention="box_2d_1000", size_wh=(100, 100)
    )
    assert parsed.elements == [] and parsed.dropped == [
        "proposal 1: box must have 4 numbers, got 2"
    ]
    with pytest.raises(ValueError, match="no 'elements' list"):
        parse_proposal(
            '{"boxes": 3}', helper="boxes", fields={}, convention="box_2d_1000", size_wh=(100, 100)
        )


@settings(max_examples=200, deadline=None)
@given(
    conv=st.sampled_from(["box_2d_1000", "qwen25_px", "xyxy_1000", "xyxy_norm"]),
    x1=st.floats(0, 0.45),
    y1=st.floats(0, 0.45),
    x2=st.floats(0.55, 1),
    y2=st.floats(0.55, 1),
    w=st.integers(50, 3000),
    h=st.integers(50, 3000),
)
def test_inverse_round_trips(conv, x1, y1, x2, y2, w, h) -> None:
    px = [x1 * w, y1 * h, x2 * w, y2 * h]
    back = box_to_xyxy_px(xyxy_px_to_box(px, conv, (w, h)), conv, (w, h))
    tol = max(w, h) * (2e-3 if conv != "qwen25_px" else 1e-3) + 1
    assert back == pytest.approx(px, abs=tol)
    pt = point_to_px(px_to_point(px[:2], conv, (w, h)), conv, (w, h))
    assert pt == pytest.approx(px[:2], abs=tol)


@pytest.mark.parametrize("module", ["_coords", "_parse", "_errors", "_gemini", "_openai"])
def test_doctests(module: str) -> None:
    import doctest
    import importlib

    result = doctest.testmod(importlib.import_module(f"groundeval.judges.{module}"))
    assert result.failed == 0 and result.attempted > 0
