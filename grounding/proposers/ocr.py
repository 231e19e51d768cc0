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

Feedback: on a retry the image is upscaled by ``retry_scale`` before reading
(small text reads better), and boxes are mapped back to original pixels.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

import cv2
import numpy as np

from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cv import CVProposer, box
from groundeval.state import Element, GroundSpec

_ENGINE: Any = None
_ENGINE_LOCK = threading.Lock()
_CALL_LOCK = threading.Lock()


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
