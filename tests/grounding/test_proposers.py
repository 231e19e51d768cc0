"""CV and OCR proposers on generated scenes with known truth, on a real photo, and in the loop."""

from __future__ import annotations

import asyncio
import math

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import encode_png, generate
from groundeval.grounding._loop import run_grounding
from groundeval.grounding._protocol import Feedback, ProposeRequest, get_proposer
from groundeval.grounding.proposers import (
    ocr,
    opencv_circles,
    opencv_color,
    opencv_contours,
    opencv_dice,
    opencv_lines,
)
from groundeval.grounding.proposers._cv import drop_accepted
from groundeval.judges._protocol import ImagePart
from groundeval.programs._model import GroundSpec
from groundeval.state import Provenance

SEEDS = range(20)


def _spec(helper: str = "boxes", **params: object) -> GroundSpec:
    return GroundSpec(helper=helper, params=params)  # type: ignore[arg-type]


def _part(image: np.ndarray) -> ImagePart:
    h, w = image.shape[:2]
    return ImagePart(encode_png(image), "image/png", (w, h))


def test_dice_count_and_pip_sum_exact_on_clean_scenes() -> None:
    dice = opencv_dice.DiceProposer()
    for seed in SEEDS:
        s = generate("dice", "clean", seed)
        elements = dice.run(s.image_bgr, _spec()).elements
        assert len(elements) == s.truth["count"], s.id
        assert sum(e.fields["pips"] for e in elements) == s.truth["pip_sum"], s.id
        assert [e.id for e in elements] == list(range(1, len(elements) + 1))


def test_dice_refuses_a_face_it_cannot_read() -> None:
    img = np.full((200, 200, 3), (40, 120, 40), np.uint8)
    cv2.rectangle(img, (50, 50), (130, 130), (240, 240, 240), -1)
    cv2.rectangle(img, (62, 62), (118, 118), (20, 20, 20), -1)  # one huge dark patch
    (element,) = opencv_dice.DiceProposer().run(img, _spec()).elements
    assert element.fields["pips"] is None and "pip" in element.fields["problem"]


def test_pips_as_blobs_on_clean_dice() -> None:
    blobs = get_proposer("opencv.blobs")
    for seed in range(10):
        s = generate("dice", "clean", seed)
        found = asyncio.run(blobs.propose(_request(s.image_bgr, _spec(min_area_px=40))))
        assert len(found.elements) == s.truth["pip_sum"], s.id


@pytest.mark.parametrize("proposer", ["opencv.contours", "opencv.circles"])
def test_coin_count_on_clean_scenes(proposer: str) -> None:
    p = get_proposer(proposer)
    params = {"min_radius_px": 18, "max_radius_px": 45} if proposer == "opencv.circles" else {}
    for seed in SEEDS:
        s = generate("coins", "clean", seed)
        found = asyncio.run(p.propose(_request(s.image_bgr, _spec(**params))))
        assert len(found.elements) == s.truth["count"], s.id
        for e in found.elements:
            assert e.fields["radius_px"] > 15


def test_watershed_separates_touching_coins() -> None:
    img = np.full((480, 640, 3), 40, np.uint8)
    for cx in (260, 320, 380):  # three coins in a row, each touching the next
        cv2.circle(img, (cx, 240), 30, (190, 190, 195), -1, cv2.LINE_AA)
    contours = opencv_contours.ContoursProposer()
    assert len(contours.run(img, _spec()).elements) == 3
    merged = contours.run(img, _spec(split_touching=False)).elements
    assert len(merged) == 1, "without watershed the row is one blob"
    strict = contours.run(img, _spec(split_touching=False, min_circularity=0.7)).elements
    assert len(strict) == 1 and strict[0].fields["radius_px"] is None, "refused, not counted"


def test_dark_clutter_does_not_make_the_cloth_foreground() -> None:
    img = np.full((240, 320, 3), (30, 25, 80), np.uint8)  # maroon cloth
    cv2.rectangle(img, (0, 0), (150, 240), (12, 12, 12), -1)  # a large dark card
    cv2.circle(img, (240, 120), 30, (190, 190, 195), -1, cv2.LINE_AA)
    (coin,) = opencv_contours.ContoursProposer().run(img, _spec()).elements
    assert coin.fields["radius_px"] == pytest.approx(30, abs=2)


# The coins photo that ships in scikit-image (303 x 384 grey): looked at by a person,
# it shows 24 coins in 4 rows of 6. Its background brightens towards the top right,
# so the contours proposer uses an adaptive threshold (mean of a 101 px window).
REAL_COINS = 24
REAL_CONTOURS_PARAMS = {"adaptive_block_px": 101}
REAL_HOUGH_PARAMS = {"min_radius_px": 15, "max_radius_px": 40}


def test_real_photo_coin_count() -> None:
    data = pytest.importorskip("skimage.data")
    photo = data.coins()
    found = opencv_contours.ContoursProposer().run(photo, _spec(**REAL_CONTOURS_PARAMS))
    assert len(found.elements) == REAL_COINS
    assert found.params["adaptive_block_px"] == 101
    circles = opencv_circles.CirclesProposer().run(photo, _spec(**REAL_HOUGH_PARAMS)).elements
    assert len(circles) == REAL_COINS
    # one Hough circle per contour box: the two methods agree coin by coin
    boxes = [e.xyxy_px for e in found.elements]
    owners = []
    for c in circles:
        x, y = c.fields["center_px"]
        inside = [i for i, (x1, y1, x2, y2) in enumerate(boxes) if x1 <= x <= x2 and y1 <= y <= y2]
        assert len(inside) == 1
        owners.append(inside[0])
    assert sorted(owners) == list(range(REAL_COINS))


def test_needle_bearing_on_clean_compasses() -> None:
    lines = opencv_lines.LinesProposer()
    for seed in SEEDS:
        s = generate("compass", "clean", seed)
        (ray,) = lines.run(s.image_bgr, _spec("line")).elements
        assert ray.kind == "ray"
        err = abs((ray.fields["bearing_deg"] - s.truth["bearing_deg"] + 540) % 360 - 180)
        assert err < 4, s.id
        tip = np.array(ray.points_px[1])
        assert np.hypot(*(tip - np.array(s.truth["needle_px"][1]))) < 12, "tip at the pointed end"


def test_symmetric_needle_is_refused() -> None:
    img = np.full((400, 400, 3), 230, np.uint8)
    cv2.circle(img, (200, 200), 180, (40, 40, 40), 4)
    cv2.line(img, (200, 70), (200, 330), (30, 30, 30), 7)  # same length both ways
    (ray,) = opencv_lines.LinesProposer().run(img, _spec("line")).elements
    assert ray.fields["bearing_deg"] is None


def test_sun_and_ground_regions_decide_touching() -> None:
    color = opencv_color.ColorRegionProposer()
    for seed in SEEDS:
        s = generate("sun", "clean", seed)
        spec = s.programs[0].gates[0].ground
        assert spec is not None
        regions = {e.fields["label"]: e for e in color.run(s.image_bgr, spec).elements}
        assert set(regions) == {"sun", "ground"} and regions["sun"].kind == "polygon"
        sun_bottom = max(p[1] for p in regions["sun"].points_px)
        ground_top = min(p[1] for p in regions["ground"].points_px)
        assert abs(ground_top - s.truth["horizon_y_px"]) <= 2
        assert (sun_bottom >= ground_top - 6) == s.truth["touching"], s.id


def test_color_ranges_wrap_red_and_bad_ranges_are_named() -> None:
    img = np.zeros((100, 100, 3), np.uint8)
    cv2.circle(img, (50, 50), 20, (0, 0, 230), -1)
    red = {"label": "red", "hsv_lower": [170, 100, 100], "hsv_upper": [10, 255, 255]}
    (e,) = opencv_color.ColorRegionProposer().run(img, _spec("boundary", ranges=[red])).elements
    assert e.fields["label"] == "red" and 1100 < e.fields["area_px"] < 1400
    with pytest.raises(ValueError, match=r"ranges\[0\] needs hsv_lower"):
        opencv_color.ColorRegionProposer().run(img, _spec("boundary", ranges=[{"label": "x"}]))


def test_ocr_reads_bar_labels_and_values() -> None:
    s = generate("bars", "clean", 3)
    found = ocr.OCRProposer().run(s.image_bgr, _spec("text"))
    texts = {e.fields["text"]: e for e in found.elements}
    for bar in s.truth["bars"]:
        for key, text in (("label_box_px", bar["label"]), ("value_box_px", str(bar["value"]))):
            assert text in texts, (text, sorted(texts))
            e = texts[text]
            assert e.fields["confidence"] > 0.9
            x1, y1, x2, y2 = bar[key]
            cx, cy = (e.xyxy_px[0] + e.xyxy_px[2]) / 2, (e.xyxy_px[1] + e.xyxy_px[3]) / 2
            assert x1 - 3 <= cx <= x2 + 3 and y1 - 3 <= cy <= y2 + 3
    assert s.truth["title"] in texts
    assert ocr.ocr_engine() is ocr.ocr_engine(), "loaded once per process"


def test_params_are_merged_recorded_and_checked() -> None:
    p = opencv_circles.CirclesProposer()
    s = generate("coins", "clean", 1)
    found = p.run(s.image_bgr, _spec(param2=45, offline_verifier={"min_size_px": 4}))
    assert found.params["param2"] == 45 and found.params["dp"] == 1.2
    assert "offline_verifier" not in found.params
    with pytest.raises(ValueError, match=r"unknown params \['parm2'\]"):
        p.run(s.image_bgr, _spec(parm2=45))


def test_feedback_changes_params_and_skips_accepted() -> None:
    p = opencv_circles.CirclesProposer()
    s = generate("coins", "clean", 2)
    first = p.run(s.image_bgr, _spec())
    accepted = [e.model_copy(update={"verdict": "accepted"}) for e in first.elements[:2]]
    retry = Feedback(accepted=accepted, missing=["1 more boxes needed"], round_index=2)
    second = p.run(s.image_bgr, _spec(), retry)
    assert second.params["param2"] == pytest.approx(30 * 0.8)
    assert len(drop_accepted(second.elements, accepted)) == len(second.elements)
    assert len(second.elements) >= len(first.elements) - 2


def test_dice_through_the_verify_loop_records_params() -> None:
    s = generate("dice", "moderate", 4)
    spec = s.programs[0].gates[0].ground
    assert spec is not None
    state = asyncio.run(
        run_grounding(
            image_bgr=s.image_bgr,
            image=_part(s.image_bgr),
            spec=spec,
            ask="each die",
            item_id=s.id,
            question_id="g1",
            provenance=Provenance(toolkit_version="test"),
        )
    )
    assert state.status == "grounded"
    assert len(state.elements) == s.truth["count"]
    assert sum(e.fields["pips"] for e in state.elements) == s.truth["pip_sum"]
    assert state.provenance.proposer == "opencv.dice"
    assert state.provenance.proposer_params["max_aspect"] == 1.35


def test_bad_images_are_named() -> None:
    with pytest.raises(ValueError, match="uint8"):
        opencv_dice.DiceProposer().run(np.zeros((10, 10, 3), np.float32), _spec())
    with pytest.raises(ValueError, match="shape"):
        opencv_dice.DiceProposer().run(np.zeros((10, 10, 2), np.uint8), _spec())


def _request(image: np.ndarray, spec: GroundSpec) -> ProposeRequest:
    return ProposeRequest(
        image_bgr=image, image=_part(image), spec=spec, ask="", feedback=Feedback()
    )


def test_every_proposer_is_registered() -> None:
    from groundeval.grounding._protocol import proposer_names

    names = set(proposer_names())
    for name in (
        "opencv.dice",
        "opencv.circles",
        "opencv.blobs",
        "opencv.contours",
        "opencv.lines",
        "opencv.color_region",
        "ocr",
    ):
        assert name in names
    assert math.isfinite(len(names))
