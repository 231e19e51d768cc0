"""The offline verifier: each rule rejects what it should, with a reason, and nothing else."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest

from groundeval.grounding._protocol import VerifyRequest, get_verifier
from groundeval.grounding.verifiers.offline import OfflineVerifier
from groundeval.programs._model import GroundSpec
from groundeval.state import Element

IMAGE = np.zeros((100, 200, 3), np.uint8)  # 200 wide, 100 high; tolerance 2% of 200 = 4 px


def _box(i: int, xyxy: list[float], **fields: Any) -> Element:
    return Element(id=i, kind="box", xyxy_px=xyxy, fields=fields)


def _pts(i: int, kind: str, pts: list[list[float]]) -> Element:
    return Element(id=i, kind=kind, points_px=pts)


def _verify(elements: list[Element], **spec: Any):
    spec.setdefault("helper", "boxes")
    request = VerifyRequest(IMAGE, b"", GroundSpec(**spec), "q", elements)
    return asyncio.run(OfflineVerifier().verify(request))


def _reasons(result) -> dict[int, str]:
    return {e.id: e.reason for e in result.elements if e.verdict == "rejected"}


@pytest.mark.parametrize(
    ("helper", "element", "reason"),
    [
        ("boxes", _box(1, [10, 10, 50, 50]), None),
        ("boxes", _box(1, [-3, -3, 50, 103]), None),  # within the 4 px tolerance
        ("boxes", _box(1, [-9, 10, 50, 50]), "outside the 200x100 image"),
        ("boxes", _box(1, [150, 10, 210, 50]), "outside"),
        ("boxes", _box(1, [10, 10, 12, 50]), "smaller than 3 px"),
        ("text", _box(1, [10, 10, 50, 20]), None),
        ("boxes", _pts(1, "polygon", [[10, 10], [50, 10], [50, 50]]), "not a boxes help line"),
        ("boundary", _pts(1, "polygon", [[10, 10], [50, 10], [50, 50]]), None),
        ("boundary", _pts(1, "polygon", [[10, 10], [30, 30], [50, 50]]), "encloses less"),
        ("boundary", _pts(1, "polygon", [[10, 10], [50, 10], [50, 11]]), "smaller than"),
        ("line", _pts(1, "ray", [[10, 10], [30, 40]]), None),
        ("line", _pts(1, "line", [[10, 10], [11, 11]]), "shorter than 3 px"),
        ("line", _pts(1, "point", [[10, 10]]), "not a line help line"),
        ("points", _pts(1, "point", [[10, 10]]), None),
        ("points", _pts(1, "point", [[float("nan"), 10]]), "not finite"),
        ("points", _pts(1, "point", [[10, 1e9]]), "outside"),
    ],
)
def test_geometry_rules(helper: str, element: Element, reason: str | None):
    result = _verify([element], helper=helper)
    (judged,) = result.elements
    if reason is None:
        assert judged.verdict == "accepted", judged.reason
    else:
        assert judged.verdict == "rejected"
        assert reason in judged.reason


def test_later_near_duplicate_is_rejected_and_distinct_boxes_kept():
    result = _verify(
        [
            _box(1, [10, 10, 50, 50]),
            _box(2, [12, 11, 51, 50]),  # IoU ~0.9 with #1
            _box(3, [60, 10, 100, 50]),
            _box(4, [30, 10, 70, 50]),  # IoU 1/3 with #1: a neighbour, not a copy
        ]
    )
    assert _reasons(result) == {2: "near-duplicate of #1"}


def test_a_rejected_element_does_not_shadow_its_duplicate():
    result = _verify([_box(1, [10, 10, 50, 50], pips=9), _box(2, [11, 10, 50, 50], pips=3)],
                     fields={"pips": {"type": "integer", "maximum": 6}})  # fmt: skip
    assert set(_reasons(result)) == {1}


def test_duplicate_lines_and_rays():
    lines = _verify(
        [_pts(1, "line", [[10, 10], [80, 60]]), _pts(2, "line", [[81, 61], [11, 9]])],
        helper="line",
    )
    assert _reasons(lines) == {2: "near-duplicate of #1"}
    rays = _verify(
        [_pts(1, "ray", [[10, 10], [80, 60]]), _pts(2, "ray", [[80, 60], [10, 10]])],
        helper="line",
    )
    assert _reasons(rays) == {}  # opposite directions are different rays


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"pips": 4}, None),
        ({}, "field 'pips' is missing"),
        ({"pips": 7}, "field 'pips': 7 is greater than the maximum of 6"),
        ({"pips": "four"}, "field 'pips': 'four' is not of type 'integer'"),
    ],
)
def test_fields_follow_their_schema(fields: dict[str, Any], reason: str | None):
    result = _verify(
        [_box(1, [10, 10, 50, 50], **fields, confidence=0.9)],
        fields={"pips": {"type": "integer", "minimum": 1, "maximum": 6}},
    )
    assert _reasons(result).get(1) == reason


def test_invalid_field_schema_is_a_clear_error():
    with pytest.raises(ValueError, match=r"ground.fields.pips: not a valid JSON Schema"):
        _verify([_box(1, [10, 10, 50, 50], pips=1)], fields={"pips": {"type": "integr"}})


def test_too_few_says_what_is_missing():
    result = _verify([_box(1, [10, 10, 50, 50]), _box(2, [10, 10, 11, 11])], min_count=3)
    assert [e.verdict for e in result.elements] == ["accepted", "rejected"]
    assert result.missing == ["2 more boxes needed: 1 passed the checks, the spec wants at least 3"]


def test_too_many_rejects_least_confident_then_smallest():
    boxes = [
        _box(1, [0, 0, 40, 40], confidence=0.9),
        _box(2, [50, 0, 60, 10], confidence=0.9),  # smallest
        _box(3, [100, 0, 140, 40], confidence=0.2),  # least confident
        _box(4, [150, 0, 190, 40], confidence=0.9),
    ]
    result = _verify(boxes, max_count=2)
    assert set(_reasons(result)) == {2, 3}
    assert "at most 2" in _reasons(result)[3]
    assert result.missing == []


def test_settings_come_from_params():
    tiny = [_box(1, [10, 10, 13, 13])]
    assert _reasons(_verify(tiny)) == {}
    assert set(_reasons(_verify(tiny, params={"offline_verifier": {"min_size_px": 8}}))) == {1}
    with pytest.raises(ValueError, match="unknown setting"):
        _verify(tiny, params={"offline_verifier": {"min_size": 8}})
    with pytest.raises(ValueError, match=r"min_size_px: expected a number >= 0, got 'big'"):
        _verify(tiny, params={"offline_verifier": {"min_size_px": "big"}})


def test_registered_as_offline():
    assert isinstance(get_verifier("offline"), OfflineVerifier)


def test_polygon_duplicates_use_true_overlap():
    # Two thin diagonal triangles share most of their bounds but barely overlap.
    upper = _pts(1, "polygon", [[10, 10], [90, 10], [90, 90]])
    lower = _pts(2, "polygon", [[10, 12], [10, 90], [88, 90]])
    copy = _pts(3, "polygon", [[11, 10], [90, 11], [90, 90]])
    result = _verify([upper, lower, copy], helper="boundary")
    assert _reasons(result) == {3: "near-duplicate of #1"}
