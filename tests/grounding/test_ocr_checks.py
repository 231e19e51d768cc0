"""The ocr proposer's self-check: doubtful readings lose their text and carry a problem."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import pytest

from groundeval.grounding.proposers import ocr
from groundeval.grounding.proposers._cv import box
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


def _chart_text() -> np.ndarray:
    """White canvas: "NORTH" and "SOUTH" far apart on one line, "77" above them."""
    img = np.full((120, 320, 3), 255, np.uint8)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(img, "NORTH", (20, 100), font, 0.6, (0, 0, 0), 2)
    cv2.putText(img, "SOUTH", (200, 100), font, 0.6, (0, 0, 0), 2)
    cv2.putText(img, "77", (40, 40), font, 0.6, (0, 0, 0), 2)
    return img


def _run(monkeypatch: pytest.MonkeyPatch, read: list[Element]) -> Any:
    """Run the proposer with the engine's reading replaced by ``read``."""
    monkeypatch.setattr(ocr.OCRProposer, "detect", lambda self, image, spec, params: read)
    return ocr.OCRProposer().run(_chart_text(), GroundSpec(helper="text"))


def test_digits_split_by_a_line_mark_blank_the_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    found = _run(monkeypatch, [box((36, 20, 68, 46), text="7-7", confidence=0.9)])
    assert found.elements[0].fields["text"] is None
    assert found.elements[0].fields["confidence"] == 0.9
    assert len(found.problems) == 1 and "'7-7'" in found.problems[0]


def test_two_labels_merged_into_one_line_are_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    merged = box((15, 80, 280, 106), text="NORTH SOUTH", confidence=0.99)
    kept = box((36, 20, 68, 46), text="77", confidence=0.99)
    found = _run(monkeypatch, [merged, kept])
    assert [e.fields["text"] for e in found.elements] == [None, "77"]
    assert len(found.problems) == 1 and "two labels merged" in found.problems[0]
    apart = [
        box((15, 80, 90, 106), text="NORTH", confidence=0.99),
        box((195, 80, 280, 106), text="SOUTH", confidence=0.99),
    ]
    found = _run(monkeypatch, apart)
    assert [e.fields["text"] for e in found.elements] == ["NORTH", "SOUTH"]
    assert found.problems == []


def test_ink_gap_is_measured_between_inked_columns() -> None:
    crop = np.full((20, 60), 255, np.uint8)
    crop[5:15, 2:10] = 0
    crop[5:15, 40:50] = 0
    assert ocr.widest_ink_gap(crop) == (30, 10)
    assert ocr.widest_ink_gap(np.full((20, 60), 255, np.uint8)) == (0, 0)
