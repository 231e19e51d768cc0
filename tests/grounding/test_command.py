"""One grounding on one image: parameters from the command line, files written, JSON out."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from groundeval.grounding._command import ground_image, parse_params, safe_item_id
from groundeval.grounding._images import ImageError
from groundeval.state import StateFile
from tests._support.paths import write_image


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["min_radius=12"], {"min_radius": 12}),
        (["dp=1.5", "on=true", "none=null"], {"dp": 1.5, "on": True, "none": None}),
        (["hsv_low=[0, 80, 80]"], {"hsv_low": [0, 80, 80]}),
        (["mode=dark", 'quoted="7"'], {"mode": "dark", "quoted": "7"}),
        (["text=a=b"], {"text": "a=b"}),
        (["empty="], {"empty": ""}),
        (["r=1", "r=2"], {"r": 2}),
        (
            ["offline_verifier.min_size_px=8", "offline_verifier.duplicate_iou=0.5"],
            {"offline_verifier": {"min_size_px": 8, "duplicate_iou": 0.5}},
        ),
    ],
)
def test_parse_params(pairs: list[str], expected: dict):
    assert parse_params(pairs) == expected


@pytest.mark.parametrize("bad", ["novalue", "=3", "a..b=1", ".a=1"])
def test_parse_params_rejects_malformed(bad: str):
    with pytest.raises(ValueError, match="expected key=value"):
        parse_params([bad])


def test_ground_image_writes_overlay_and_state(tmp_path: Path):
    image = write_image(tmp_path / "in" / "my photo.png", width=100, height=60)
    result = ground_image(
        image, helper="boxes", proposer="test.boxes", out=tmp_path / "out",
        params={"boxes": [[10, 10, 30, 30, {"pips": 3}], [50, 10, 70, 40, {"pips": 5}]]},
        fields={"pips": {"type": "integer", "minimum": 1, "maximum": 6}},
    )  # fmt: skip
    assert result["status"] == "grounded"
    assert result["elements"] == [
        {"id": 1, "kind": "box", "xyxy_px": [10.0, 10.0, 30.0, 30.0], "fields": {"pips": 3}},
        {"id": 2, "kind": "box", "xyxy_px": [50.0, 10.0, 70.0, 40.0], "fields": {"pips": 5}},
    ]
    folder = tmp_path / "out" / "my_photo"
    assert result["overlay"] == str(folder / "ground.round1.png")
    assert cv2.imread(result["overlay"]).shape == (60, 100, 3)
    state = StateFile.model_validate_json(Path(result["state"]).read_text())
    assert state.item_id == "my_photo" and state.status == "grounded"
    assert state.provenance.proposer == "test.boxes"
    json.dumps(result)  # printable as it is


def test_ground_image_reports_rejections_and_writes_nothing_without_out(tmp_path: Path):
    image = write_image(tmp_path / "x.png", width=100, height=60)
    result = ground_image(
        image, helper="boxes", proposer="test.boxes", out=None, min_count=3,
        params={"boxes": [[10, 10, 30, 30], [10, 10, 11, 11]]},
    )  # fmt: skip
    assert result["status"] == "withheld"
    assert [e["id"] for e in result["elements"]] == [1]
    assert result["rejected"] == [{"id": 2, "reason": "smaller than 3 px (1.0 x 1.0)"}]
    assert result["missing"] == [
        "2 more boxes needed: 1 passed the checks, the spec wants at least 3"
    ]
    assert result["overlay"] is None and result["state"] is None
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.png"]


def test_ground_image_bad_inputs(tmp_path: Path):
    bad = tmp_path / "bad.png"
    bad.write_text("not an image")
    with pytest.raises(ImageError, match=r"bad\.png"):
        ground_image(bad, helper="boxes", proposer="test.boxes", params={}, out=None)
    good = write_image(tmp_path / "good.png")
    with pytest.raises(ValueError, match="invalid grounding settings: helper"):
        ground_image(good, helper="circles", proposer="test.boxes", params={}, out=None)
    result = ground_image(good, helper="boxes", proposer="nope", params={}, out=None)
    assert result["status"] == "error" and "unknown proposer 'nope'" in result["reason"]


def test_ground_image_with_a_real_proposer(tmp_path: Path):
    img = np.full((120, 160, 3), (40, 110, 40), np.uint8)
    for cx, cy in [(40, 60), (110, 50)]:
        cv2.circle(img, (cx, cy), 20, (200, 200, 210), -1)
    path = tmp_path / "coins.png"
    cv2.imwrite(str(path), img)
    result = ground_image(path, helper="boxes", proposer="opencv.contours", params={}, out=tmp_path)
    assert result["status"] == "grounded", result["reason"]
    centres = sorted(((x1 + x2) / 2, (y1 + y2) / 2) for x1, y1, x2, y2 in
                     (e["xyxy_px"] for e in result["elements"]))  # fmt: skip
    assert len(centres) == 2
    for (x, y), (cx, cy) in zip(centres, [(40, 60), (110, 50)], strict=True):
        assert abs(x - cx) <= 5 and abs(y - cy) <= 5
    assert Path(result["state"]).exists() and Path(result["overlay"]).exists()


@pytest.mark.parametrize(
    ("stem", "expected"),
    [("my photo", "my_photo"), ("../etc/passwd", "etc_passwd"), ("...", "image"), ("a..b", "a_b")],
)
def test_safe_item_id(stem: str, expected: str):
    assert safe_item_id(stem) == expected
