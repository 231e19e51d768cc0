"""``ocr``: text lines as boxes with ``text`` and ``confidence``, read by RapidOCR (offline).

RapidOCR 3.x runs PaddleOCR's detection and recognition models on onnxruntime;
the models ship inside the ``rapidocr`` wheel, so nothing is downloaded. The
engine is loaded once per process, on first use, and calls are serialised by a
lock (the engine already uses every core). Its ``vis()`` is never called: it
downloads a font.

Every line the engine keeps (its own ``text_score`` cut) is returned with its
confidence, so a program can refuse uncertain readings with a field schema
(``confidence: {minimum: 0.8}``): the offline verifier rejects those elements
and the question is withheld rather than decided on a misread.

The text-direction classifier is off by default (``use_cls``): on upright
charts it turned a blurred "90" into "06".

Self-check: digits split by a line-like mark (``2-1``) most likely read a
dashed grid line through a number as characters; a line whose ink has a gap
nearly as wide as the text is tall (a word space is about a third) most likely
merged two separate labels into one. Either reading loses its
``text`` (``None``, so the verifier rejects it and the retry reads again) and
the proposal carries a problem, so the question is withheld unless the retry
reads cleanly.

Feedback: on a retry the image is upscaled by ``retry_scale`` before reading
(small text reads better), and boxes are mapped back to original pixels.
"""

from __future__ import annotations

import re
import threading
from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._geometry import element_xyxy, where_label
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.state import Element, GroundSpec

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()
_CALL_LOCK = threading.Lock()

RULED_NUMBER = re.compile(r"\d[-_|~=\u2013\u2014]+\d")
"""Digits split by a line-like mark: a grid line or rule through a number read as a dash."""
MAX_GAP_PER_HEIGHT = 0.8
"""Widest inner ink gap of one label, in ink heights (word spaces measured up to 0.42)."""


def ocr_engine() -> Any:
    """The process-wide RapidOCR engine (built on first use, quiet logging)."""
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                try:
                    from rapidocr import RapidOCR
                except ImportError as exc:  # pragma: no cover - core dependency
                    raise ImportError(
                        "the ocr proposer needs rapidocr and onnxruntime: "
                        "pip install 'rapidocr>=3' onnxruntime"
                    ) from exc
                _ENGINE = RapidOCR(params={"Global.log_level": "error"})
    return _ENGINE


@register_proposer("ocr")
class OCRProposer(CVProposer):
    """Line boxes with the recognised text and its confidence."""

    name: ClassVar[str] = "ocr"
    defaults: ClassVar[dict[str, Any]] = {
        "scale": 1.0,
        "text_score": 0.5,
        "strip": True,
        "use_cls": False,
        "retry_scale": 2.0,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: read an upscaled copy of the image."""
        params["scale"] = float(params["retry_scale"])
        return params

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection, then doubtful readings blanked (``text: None``) with a problem each."""
        elements = self.detect(image_bgr, spec, params)
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        review = Review()
        checked: list[Element] = []
        for e in elements:
            doubt = reading_doubt(grey, e)
            if doubt:
                review.problems.append(f"text {e.fields['text']!r} at {where_label(e)}: {doubt}")
                e = e.model_copy(update={"fields": {**e.fields, "text": None}})
            checked.append(e)
        return checked, review

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Run detection + recognition; one box element per text line."""
        scale = float(params["scale"])
        if scale <= 0:
            raise ValueError(f"ocr: scale must be positive, got {scale}")
        image = image_bgr
        if scale != 1.0:
            image = cv2.resize(image_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
        engine = ocr_engine()
        with _CALL_LOCK:
            result = engine(
                image, text_score=float(params["text_score"]), use_cls=bool(params["use_cls"])
            )
        if result.boxes is None or result.txts is None or result.scores is None:
            return []
        found: list[Element] = []
        for quad, text, score in zip(result.boxes, result.txts, result.scores, strict=True):
            pts = np.asarray(quad, dtype=float) / scale
            value = str(text).strip() if params["strip"] else str(text)
            if not value:
                continue
            xyxy = (pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max())
            found.append(box(xyxy, text=value, confidence=round(float(score), 4)))
        return found


def reading_doubt(grey: np.ndarray, element: Element) -> str:
    """Why a text line's reading is doubtful ("" when it is not)."""
    text = str(element.fields.get("text", ""))
    if RULED_NUMBER.search(text):
        return "digits split by a line-like mark (a grid line read as a character?)"
    x1, y1, x2, y2 = (round(v) for v in element_xyxy(element))
    gap, height = widest_ink_gap(grey[max(0, y1) : max(0, y2), max(0, x1) : max(0, x2)])
    if height > 0 and gap > MAX_GAP_PER_HEIGHT * height:
        return f"an ink gap of {gap} px in {height} px tall text (two labels merged?)"
    return ""


def widest_ink_gap(crop: np.ndarray) -> tuple[int, int]:
    """Widest run of inkless columns between inked ones, and the ink's height (px).

    Ink is what Otsu's cut separates from the crop's majority (the background).
    """
    if crop.size == 0 or min(crop.shape) < 2:
        return 0, 0
    _, mask = cv2.threshold(crop, 0, 1, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if mask.mean() > 0.5:  # the majority is the background: ink is the minority
        mask = 1 - mask
    cols = np.flatnonzero(mask.any(axis=0))
    rows = np.flatnonzero(mask.any(axis=1))
    if cols.size < 2:
        return 0, 0
    return int(np.diff(cols).max()) - 1, int(rows[-1] - rows[0] + 1)
