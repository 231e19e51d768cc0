"""One "same object" rule, shared by the duplicate check, the loop and consensus matching."""

from __future__ import annotations

import math

from groundeval.grounding import (
    SAME_OBJECT_IOU,
    SAME_OBJECT_PX,
    point_distance,
    same_object,
)
from groundeval.grounding.verifiers.offline import OfflineVerifier
from groundeval.state import Element


def _box(*xyxy: float) -> Element:
    return Element(id=1, kind="box", xyxy_px=list(xyxy))


def _pts(kind: str, *pts: tuple[float, float]) -> Element:
    return Element(id=1, kind=kind, points_px=[list(p) for p in pts])  # type: ignore[arg-type]


def test_boxes_by_iou_with_named_tolerances():
    a, b = _box(0, 0, 10, 10), _box(1, 0, 11, 10)  # IoU 9/11 = 0.82
    assert same_object(a, b)
    assert not same_object(a, b, min_iou=0.9)
    assert not same_object(a, _box(5, 0, 15, 10))  # IoU 1/3
    assert same_object(a, _box(5, 0, 15, 10), min_iou=0.3)
    assert (SAME_OBJECT_IOU, SAME_OBJECT_PX) == (0.7, 3.0)


def test_a_line_matches_either_way_round_but_a_ray_does_not():
    line = _pts("line", (0, 0), (50, 0))
    assert same_object(line, _pts("line", (50, 1), (0, 1)))
    ray = _pts("ray", (0, 0), (50, 0))
    assert not same_object(ray, _pts("ray", (50, 0), (0, 0)))
    assert point_distance(ray, _pts("ray", (0, 2), (50, 2))) == 2.0


def test_different_kinds_or_point_counts_never_match():
    assert not same_object(_box(0, 0, 10, 10), _pts("point", (5, 5)))
    poly = _pts("polygon", (0, 0), (10, 0), (10, 10))
    assert point_distance(poly, _pts("polygon", (0, 0), (10, 0), (10, 10), (0, 10))) == math.inf


def test_the_verifier_uses_the_shared_rule_with_its_own_settings():
    a, b = _pts("point", (0, 0)), _pts("point", (4, 0))
    assert not OfflineVerifier().same_object(a, b)
    assert OfflineVerifier(duplicate_px=5).same_object(a, b)
    assert same_object(a, b, max_px=5)
