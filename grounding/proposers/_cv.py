"""Shared base of the OpenCV and OCR proposers: sync detection wrapped into the async protocol.

A CV proposer is a plain ``detect(image_bgr, spec, params) -> list[Element]``.
The base merges its ``defaults`` with ``spec.params`` (unknown keys are an error
naming them), lets the proposer adapt the parameters to the loop's feedback on a
retry, runs detection in a worker thread, drops proposals that repeat elements
the verifier already accepted, and returns the parameters actually used so the
state file records them.
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import numpy as np

from groundeval.grounding._protocol import RESERVED_PARAMS, Feedback, Proposal, ProposeRequest
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


class CVProposer:
    """Base class: subclasses set ``name`` and ``defaults`` and implement ``detect``."""

    name: ClassVar[str] = "cv"
    defaults: ClassVar[dict[str, Any]] = {}

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find elements in one image (synchronous, runs in a worker thread)."""
        raise NotImplementedError

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Change parameters for a retry after rejected or missing elements (default: none)."""
        return params

    def resolve(self, spec: GroundSpec, feedback: Feedback | None = None) -> dict[str, Any]:
        """Defaults overridden by ``spec.params``, then adapted to the feedback of a retry."""
        own = {k: v for k, v in spec.params.items() if k not in RESERVED_PARAMS}
        unknown = sorted(set(own) - set(self.defaults))
        if unknown:
            raise ValueError(
                f"proposer {self.name}: unknown params {unknown}; known: {sorted(self.defaults)}"
            )
        params = {**self.defaults, **own}
        if feedback is not None and is_retry(feedback):
            params = self.adapt(dict(params), feedback)
        return params

    def run(
        self, image_bgr: np.ndarray, spec: GroundSpec, feedback: Feedback | None = None
    ) -> Proposal:
        """Synchronous one-shot proposal (tests, scripts, the ``ground`` command)."""
        params = self.resolve(spec, feedback)
        image = as_bgr(image_bgr, self.name)
        elements = self.detect(image, spec, params)
        if feedback is not None:
            elements = drop_accepted(elements, feedback.accepted)
        return Proposal(elements=number(elements), raw="", params=params)

    async def propose(self, request: ProposeRequest) -> Proposal:
        """Protocol entry point: detection runs in a thread so the event loop stays free."""
        return await asyncio.to_thread(self.run, request.image_bgr, request.spec, request.feedback)


def is_retry(feedback: Feedback) -> bool:
    """True when the last round left rejected or missing elements."""
    return bool(feedback.rejected or feedback.missing)


def as_bgr(image: np.ndarray, who: str) -> np.ndarray:
    """Accept 8-bit grey, BGR or BGRA arrays; anything else is a clear error."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8:
        raise ValueError(f"proposer {who}: image must be a uint8 numpy array")
    if image.ndim == 2:
        return np.repeat(image[:, :, None], 3, axis=2)
    if image.ndim == 3 and image.shape[2] == 3:
        return image
    if image.ndim == 3 and image.shape[2] == 4:
        return np.ascontiguousarray(image[:, :, :3])
    raise ValueError(f"proposer {who}: image shape {image.shape} is not grey, BGR or BGRA")


def box(xyxy_px: tuple[float, float, float, float] | list[float], **fields: Any) -> Element:
    """A provisional box element (id 1; the loop renumbers)."""
    x1, y1, x2, y2 = (round(float(v), 2) for v in xyxy_px)
    return Element(id=1, kind="box", xyxy_px=[x1, y1, x2, y2], fields=fields)


def number(elements: list[Element]) -> list[Element]:
    """Ids 1..n in order, so a proposal is valid on its own."""
    return [e.model_copy(update={"id": i}) for i, e in enumerate(elements, start=1)]


def bounds(element: Element) -> tuple[float, float, float, float]:
    """Axis-aligned bounds of any element kind."""
    if element.xyxy_px is not None:
        x1, y1, x2, y2 = element.xyxy_px
        return x1, y1, x2, y2
    pts = np.asarray(element.points_px, dtype=float)
    return (
        float(pts[:, 0].min()),
        float(pts[:, 1].min()),
        float(pts[:, 0].max()),
        float(pts[:, 1].max()),
    )


def iou(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """Intersection over union of two xyxy boxes."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def same_place(a: Element, b: Element, threshold: float = 0.5, near_px: float = 5.0) -> bool:
    """Boxes and polygons by bounds IoU; rays, lines and points by all points within ``near_px``."""
    if a.kind != b.kind:
        return False
    if a.kind in ("box", "polygon"):
        return iou(bounds(a), bounds(b)) >= threshold
    pa, pb = np.asarray(a.points_px, float), np.asarray(b.points_px, float)
    return pa.shape == pb.shape and bool(np.all(np.hypot(*(pa - pb).T) <= near_px))


def drop_accepted(elements: list[Element], accepted: list[Element]) -> list[Element]:
    """Leave out proposals that repeat an accepted element (the loop keeps those)."""
    return [e for e in elements if not any(same_place(e, a) for a in accepted)]
