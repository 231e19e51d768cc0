"""Test-only proposers and verifiers: deterministic elements from the spec's params."""

from __future__ import annotations

import asyncio
import time

from groundeval.grounding._protocol import (
    Proposal,
    ProposeRequest,
    Verification,
    VerifyRequest,
    register_proposer,
    register_verifier,
)
from groundeval.state import Element


@register_proposer("test.boxes")
class ParamBoxes:
    """Boxes listed in ``params.boxes`` as [x1, y1, x2, y2, {fields}] (fields optional)."""

    name = "test.boxes"

    async def propose(self, request: ProposeRequest) -> Proposal:
        delay = float(request.spec.params.get("sleep", 0))
        if delay:
            time.sleep(delay)  # a CPU-bound proposer holds the event loop, like OpenCV would
            await asyncio.sleep(0)
        elements = []
        for i, row in enumerate(request.spec.params.get("boxes", []), start=1):
            fields = row[4] if len(row) > 4 else {}
            elements.append(Element(id=i, kind="box", xyxy_px=row[:4], fields=fields))
        return Proposal(elements, params={"boxes": len(elements)})


@register_verifier("test.accept")
class AcceptAll:
    """Accepts everything unless ``params.reject`` lists element ids."""

    name = "test.accept"

    async def verify(self, request: VerifyRequest) -> Verification:
        reject = set(request.spec.params.get("reject", []))
        elements = [
            e.model_copy(
                update={
                    "verdict": "rejected" if e.id in reject else "accepted",
                    "reason": "test says no" if e.id in reject else "ok",
                }
            )
            for e in request.elements
        ]
        return Verification(elements)
