"""A retry that draws a kept object again with a shifted box is withheld, never counted twice."""

from __future__ import annotations

from tests.grounding.test_loop_open_points import GOOD, HIDDEN, TINY, TINY_FIXED, _ground

SHIFTED = [14, 10, 34, 30]  # GOOD[0] moved 4 px: IoU 0.67, under the same-object 0.7
MERGED = [40, 10, 80, 50]  # round 1 keeps a region holding an object and more
PIECE = [42, 12, 52, 22]  # the retry cuts a piece out of it: IoU 0.06, centre inside


def test_a_shifted_copy_of_a_kept_box_in_a_retry_is_withheld():
    rounds = [{"boxes": [*GOOD, TINY]}, {"boxes": [SHIFTED, GOOD[1], HIDDEN]}]
    state = _ground(params={"rounds": rounds}, budget=3)
    assert state.status == "withheld"
    assert "overlaps element 1 accepted before without being the same object" in state.reason
    assert state.rounds[1].problems == [state.reason]


def test_a_retry_that_redraws_kept_boxes_exactly_still_grounds():
    rounds = [{"boxes": [*GOOD, TINY]}, {"boxes": [*GOOD, TINY_FIXED]}]
    state = _ground(params={"rounds": rounds}, budget=3)
    assert state.status == "grounded"
    assert len([e for e in state.elements if e.verdict == "accepted"]) == 3


def test_a_retry_piece_inside_a_kept_box_is_withheld():
    # a looser retry splits a region kept whole: the piece overlaps it too little for the
    # IoU rule, but its centre lies inside the kept box, so it may be one object twice
    rounds = [{"boxes": [GOOD[0], MERGED, TINY]}, {"boxes": [GOOD[0], MERGED, PIECE]}]
    state = _ground(params={"rounds": rounds}, budget=3)
    assert state.status == "withheld"
    assert "overlaps element 2 accepted before" in state.reason


def test_a_retry_box_beside_a_kept_box_still_grounds():
    rounds = [{"boxes": [GOOD[0], MERGED, TINY]}, {"boxes": [GOOD[0], MERGED, HIDDEN]}]
    state = _ground(params={"rounds": rounds}, budget=3)
    assert state.status == "grounded", state.reason
