"""``opencv.lines`` self-check: a tip that the needle's colours contradict is a problem."""

from __future__ import annotations

import cv2
import numpy as np

from groundeval.grounding.proposers.opencv_lines import LinesProposer
from groundeval.state import GroundSpec

SPEC = GroundSpec(helper="line", proposer="opencv.lines")
FACE = (45, 75, 110)
"""A brown dial face (BGR) about as bright in grey as a red needle."""
TAIL = (150, 150, 150)
"""A light grey tail: grey edges see it clearly."""


def _dial(front_bgr: tuple[int, int, int]) -> np.ndarray:
    """A dial whose needle points up (front 120 px) with a short tail down (40 px)."""
    img = np.full((400, 400, 3), (120, 160, 90), np.uint8)
    cv2.circle(img, (200, 200), 180, (60, 110, 170), -1, cv2.LINE_AA)
    cv2.circle(img, (200, 200), 165, FACE, -1, cv2.LINE_AA)
    front = np.array([[200, 80], [191, 200], [209, 200]], np.int32)
    tail = np.array([[200, 240], [191, 200], [209, 200]], np.int32)
    cv2.fillPoly(img, [front], front_bgr, cv2.LINE_AA)
    cv2.fillPoly(img, [tail], TAIL, cv2.LINE_AA)
    cv2.circle(img, (200, 200), 9, (60, 110, 170), -1, cv2.LINE_AA)
    return img


def test_front_invisible_in_grey_is_a_problem() -> None:
    # A red front on a brown face leaves no grey edge: only the tail is seen, taken for the tip.
    proposal = LinesProposer().run(_dial((30, 30, 204)), SPEC)
    (ray,) = proposal.elements
    assert abs((ray.fields["bearing_deg"] - 180 + 540) % 360 - 180) < 10  # grey alone says down
    assert any("swapped" in p for p in proposal.problems)


def test_needle_seen_in_grey_has_no_colour_problem() -> None:
    proposal = LinesProposer().run(_dial((20, 20, 20)), SPEC)
    (ray,) = proposal.elements
    assert abs((ray.fields["bearing_deg"] + 540) % 360 - 180) < 10  # up, the long end
    assert not proposal.problems
