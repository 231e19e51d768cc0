"""Shared base of the OpenCV and OCR proposers: sync detection wrapped into the async protocol.

A CV proposer is a plain ``detect(image_bgr, spec, params) -> list[Element]``.
The base merges its ``defaults`` with ``spec.params`` (an unknown key, or a value
not of its default's type or of the type ``param_types`` declares, is an error
naming it: see :mod:`groundeval.grounding._params`), lets the proposer adapt the
parameters to the loop's feedback on a retry, runs detection in a worker thread,
drops proposals that repeat elements the verifier already accepted, and returns
the parameters actually used so the state file records them.

After detecting, every proposer checks itself (``self_check``): what in the image
looks like one more object but no element covers (``Proposal.unexplained``, see
:mod:`groundeval.grounding.proposers._residue`), and whether the proposal as a
whole is untrustworthy (``Proposal.problems``: clutter, weak support). Images too
small or too flat to hold an object give a problem, not an exception.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from groundeval.grounding._geometry import same_object
from groundeval.grounding._protocol import (
    Feedback,
    Proposal,
    ProposeRequest,
    declared_param_problems,
    reserved_params,
)
from groundeval.state import Element, GroundSpec

MIN_IMAGE_SIDE_PX = 8
"""Images with a shorter side hold nothing a CV proposer can read."""
FLAT_IMAGE_RANGE = 8.0
"""Images whose every channel spans less than this are one colour plus noise."""


@dataclass
class Review:
    """A proposer's self-check: regions it could not explain, doubts about the whole."""

    unexplained: list[Element] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class CVProposer:
    """Base class: subclasses set ``defaults`` and implement ``detect``.

    Each default's value gives its parameter's type (an int default takes ints, a
    float default ints or floats, a ``None`` default anything); ``param_types``
    declares a type a default cannot show (``{"weights": str | None}``) or a bound
    (``{"blur_px": NonNegativeInt}``).
    """

    name: ClassVar[str] = "cv"
    defaults: ClassVar[dict[str, Any]] = {}
    param_types: ClassVar[dict[str, Any]] = {}

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find elements in one image (synchronous, runs in a worker thread)."""
        raise NotImplementedError

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Change parameters for a retry after rejected or missing elements (default: none)."""
        return params

    def resolve(self, spec: GroundSpec, feedback: Feedback | None = None) -> dict[str, Any]:
        """Defaults overridden by ``spec.params``, then adapted to the feedback of a retry.

        Raises:
            ValueError: an unknown or ill-typed parameter (every one named).
        """
        own = {k: v for k, v in spec.params.items() if k not in reserved_params()}
        problems = declared_param_problems(type(self), self.name, own)
        if problems:
            raise ValueError("; ".join(problems))
        params = {**self.defaults, **own}
        if feedback is not None and is_retry(feedback):
            params = self.adapt(dict(params), feedback)
        return params

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """What the elements leave unexplained and why the whole proposal is doubtful."""
        return Review()

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection followed by the self-check (a proposer may share work between them)."""
        elements = self.detect(image_bgr, spec, params)
        return elements, self.self_check(image_bgr, elements, params)

    def run(
        self,
        image_bgr: np.ndarray,
        spec: GroundSpec,
        feedback: Feedback | None = None,
        *,
        checks: bool = True,
    ) -> Proposal:
        """Synchronous one-shot proposal (tests, scripts, the ``ground`` command).

        ``checks=False`` skips the self-check; only ``perf/grounding_overhead.py``
        should want that (to time it).
        """
        params = self.resolve(spec, feedback)
        image = as_bgr(image_bgr, self.name)
        h, w = image.shape[:2]
        if min(h, w) < MIN_IMAGE_SIDE_PX:
            return Proposal(
                elements=[],
                params=params,
                problems=[f"image is {w}x{h} px: too small to hold a readable object"],
            )
        if checks:
            elements, review = self.analyse(image, spec, params)
        else:
            elements, review = self.detect(image, spec, params), Review()
        if is_flat(image):
            review.problems.append("image is flat (one colour): nothing can be told apart")
        if feedback is not None:
            elements = drop_accepted(elements, feedback.accepted)
        return Proposal(
            elements=number(elements),
            raw="",
            params=params,
            unexplained=number(review.unexplained),
            problems=review.problems,
        )

    async def propose(self, request: ProposeRequest) -> Proposal:
        """Protocol entry point: detection runs in a thread so the event loop stays free."""
        return await asyncio.to_thread(self.run, request.image_bgr, request.spec, request.feedback)


def is_retry(feedback: Feedback) -> bool:
    """True when the last round left rejected or missing elements."""
    return bool(feedback.rejected or feedback.missing)


def is_flat(image_bgr: np.ndarray) -> bool:
    """Whether every channel of a BGR image spans under ``FLAT_IMAGE_RANGE`` (one colour).

    Per channel: a red or green page spans 0 to 200 across its channels and is still one
    colour. Read on a grid of about 64 x 64 pixels, so a huge image costs no more.
    """
    h, w = image_bgr.shape[:2]
    sample = image_bgr[:: max(1, h // 64), :: max(1, w // 64)].reshape(-1, image_bgr.shape[2])
    return bool(np.ptp(sample, axis=0).max() < FLAT_IMAGE_RANGE)


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


def box(
    xyxy_px: tuple[float, float, float, float] | list[float], *, reason: str = "", **fields: Any
) -> Element:
    """A provisional box element (id 1; the loop renumbers).

    ``reason`` says why an unexplained region is one; it is shown with the region.
    """
    x1, y1, x2, y2 = (round(float(v), 2) for v in xyxy_px)
    return Element(id=1, kind="box", xyxy_px=[x1, y1, x2, y2], fields=fields, reason=reason)


def number(elements: list[Element]) -> list[Element]:
    """Ids 1..n in order, so a proposal is valid on its own."""
    return [e.model_copy(update={"id": i}) for i, e in enumerate(elements, start=1)]


def drop_accepted(elements: list[Element], accepted: list[Element]) -> list[Element]:
    """Leave out proposals that repeat an accepted element (the loop keeps those)."""
    return [e for e in elements if not any(same_object(e, a) for a in accepted)]
