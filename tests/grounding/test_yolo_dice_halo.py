"""yolo.dice drops a looser second box centred on a read die, never a box over two dice."""

from __future__ import annotations

import pytest

from groundeval.grounding.models import train_dice
from groundeval.grounding.proposers import yolo_dice
from groundeval.grounding.proposers._cv import box


def face(x1: float, y1: float, x2: float, y2: float, pips: int | None = 3):
    return box([x1, y1, x2, y2], pips=pips, confidence=0.9)


def test_a_loose_unread_box_centred_on_a_read_face_is_a_halo():
    read = face(509, 111, 570, 172)
    halo = face(493, 98, 589, 188, pips=None)  # the same die, boxed with its surroundings
    assert yolo_dice._is_halo(halo, [read, halo], 0.25)
    assert not yolo_dice._is_halo(halo, [read, halo], 0.0)  # the parameter switches it off


def test_an_unread_box_over_two_touching_dice_is_not_a_halo():
    left = face(100, 100, 160, 160)
    merged = face(98, 98, 222, 162, pips=None)  # holds the left die whole, centred between both
    assert not yolo_dice._is_halo(merged, [left, merged], 0.25)


def test_a_read_box_or_one_not_holding_the_face_is_never_a_halo():
    read = face(100, 100, 160, 160)
    other = face(95, 95, 165, 165, pips=4)
    partial = face(120, 120, 200, 200, pips=None)
    assert not yolo_dice._is_halo(other, [read, other], 0.25)
    assert not yolo_dice._is_halo(partial, [read, partial], 0.25)


def test_halo_dropping_is_the_default():
    assert yolo_dice.YoloDiceProposer.defaults["halo_centre_share"] > 0


@pytest.mark.parametrize("seed0, n", [(699_990, 20), (700_000, 1), (-1, 5)])
def test_training_refuses_the_reported_out_of_style_seeds(seed0: int, n: int):
    with pytest.raises(ValueError, match="700000"):
        train_dice.outstyle_seeds(seed0, n)


def test_training_accepts_low_out_of_style_seeds():
    assert train_dice.outstyle_seeds(1100, 200) == range(1100, 1300)
    assert train_dice.outstyle_seeds(1100, 0) == range(1100, 1100)
