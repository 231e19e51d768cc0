"""Overlays of what is not counted: unexplained regions (``?``) and other proposers' marks."""

from __future__ import annotations

import numpy as np

from groundeval.grounding._draw import OTHER_COLORS, UNEXPLAINED_COLOR, draw_marks
from groundeval.state import Element
from tests.grounding.test_draw import _check_golden, _mixed, _scene


def _unexplained() -> list[Element]:
    return [
        Element(id=1, kind="box", xyxy_px=[100, 60, 140, 100], reason="blob"),
        Element(id=2, kind="point", points_px=[[20, 100]]),
    ]


def _others() -> list[list[Element]]:
    return [
        [Element(id=1, kind="box", xyxy_px=[14, 20, 52, 54])],
        [Element(id=1, kind="polygon", points_px=[[82, 22], [117, 16], [122, 50], [88, 46]])],
    ]


def test_golden_overlay_with_unexplained_and_other_proposals():
    drawn = draw_marks(
        _scene(), _mixed()[:3], "boxes", unexplained=_unexplained(), others=_others()
    )
    _check_golden("open_marks_160x120.png", drawn)


def test_without_extras_the_overlay_is_unchanged():
    plain = draw_marks(_scene(), _mixed(), "boxes")
    assert np.array_equal(plain, draw_marks(_scene(), _mixed(), "boxes", unexplained=[], others=[]))


def test_unexplained_regions_are_dashed_magenta_and_never_numbered():
    box = Element(id=1, kind="box", xyxy_px=[40, 30, 120, 90])
    drawn = draw_marks(_scene(), [], "boxes", unexplained=[box])
    magenta = np.all(drawn == UNEXPLAINED_COLOR.as_bgr(), axis=-1)
    top_edge = magenta[30, 40:121]
    assert 0.2 < top_edge.mean() < 0.8  # dashed: coloured runs with gaps
    assert magenta.sum() > top_edge.sum() * 2  # the other edges and the "?" tag
    # the tag holds a "?", not the number 1: it differs from a numbered mark's tag
    numbered = draw_marks(_scene(), [box], "boxes")
    assert not np.array_equal(drawn, numbered)


def test_other_proposers_get_their_own_colour_per_proposer():
    drawn = draw_marks(_scene(), [], "boxes", others=_others())
    for group in (0, 1):
        assert np.all(drawn == OTHER_COLORS.by_idx(group).as_bgr(), axis=-1).sum() > 20


def test_non_finite_extras_are_skipped_not_crashing():
    bad = Element.model_construct(id=1, kind="box", xyxy_px=[float("nan"), 0, 10, 10])
    huge = Element(id=2, kind="line", points_px=[[0, 0], [1e12, 1e12]])
    drawn = draw_marks(_scene(), [], "boxes", unexplained=[bad], others=[[huge]])
    assert drawn.shape == (120, 160, 3)
