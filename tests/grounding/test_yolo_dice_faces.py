"""yolo.dice reads the face under each box: by its colour, or by the box on a table alike."""

from __future__ import annotations

import cv2
import numpy as np

from groundeval.grounding.proposers import yolo_dice
from groundeval.grounding.proposers._cv import box
from groundeval.state import GroundSpec

FELT = (40, 110, 50)


def _read(img: np.ndarray, xyxy: list[float]) -> dict:
    proposer = yolo_dice.YoloDiceProposer()
    params = proposer.resolve(GroundSpec(helper="boxes", proposer=proposer.name))
    found = proposer.read_faces(img, [box(xyxy, class_name="die", confidence=0.9)], params)
    assert len(found) == 1
    return found[0].fields


def _felt_die(pips: list[tuple[float, float]]) -> np.ndarray:
    """A die the felt's colour: only a thin shade line and its dark pips show it."""
    img = np.full((240, 320, 3), FELT, np.uint8)
    cv2.rectangle(img, (120, 80), (180, 140), (30, 80, 36), 1)
    for u, v in pips:
        cv2.circle(img, (round(120 + u * 60), round(80 + v * 60)), 6, (20, 20, 20), -1)
    return img


def test_a_face_the_colour_of_its_table_is_read_inside_the_box() -> None:
    three = [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)]
    fields = _read(_felt_die(three), [120, 80, 181, 141])
    assert fields["pips"] == 3, fields.get("problem")
    assert fields["detector_xyxy_px"] == [120, 80, 181, 141]


def test_a_box_on_bare_table_of_one_colour_reads_no_pips() -> None:
    fields = _read(_felt_die([]), [120, 80, 181, 141])
    assert fields["pips"] is None and fields["problem"]


def test_pips_off_a_die_layout_in_a_box_on_the_table_are_refused() -> None:
    # two specks on one side of the box: no face of a die shows that
    fields = _read(_felt_die([(0.2, 0.2), (0.2, 0.5)]), [120, 80, 181, 141])
    assert fields["pips"] is None and "not laid out" in fields["problem"]


def test_a_face_colour_spreading_to_twice_the_box_is_bounded_by_the_box() -> None:
    # a felt-coloured die inside a felt patch 1.4x its side, framed by a darker cloth: the
    # colour's region is twice the box, and the box, not the patch, is the face
    img = np.full((240, 320, 3), (90, 60, 40), np.uint8)
    cv2.rectangle(img, (108, 68), (193, 153), FELT, -1)
    img[80:141, 120:181] = _felt_die([(0.5, 0.5)])[80:141, 120:181]
    proposer = yolo_dice.YoloDiceProposer()
    params = proposer.resolve(GroundSpec(helper="boxes", proposer=proposer.name))
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)
    face, problem = yolo_dice.find_face(lab, [120, 80, 181, 141], params)
    assert face is not None and not problem
    assert cv2.boundingRect(face) == (120, 80, 62, 62)
