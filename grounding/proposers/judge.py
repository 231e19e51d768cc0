"""The judge proposer: a multimodal model marks the help lines, in its own coordinates.

The image, the target and last round's feedback go to the judge; its boxes,
polygons, lines or points come back in the model's native convention and are
converted once (in :mod:`groundeval.judges`) into pixels of the original image.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import PositiveInt

from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.judges import (
    QWEN_MAX_PIXELS,
    QWEN_MIN_PIXELS,
    JudgeCall,
    JudgeError,
    JudgeRefusal,
    build_propose_prompt,
    guess_convention,
    parse_proposal,
    propose_schema,
    qwen25_input_wh,
)


@register_proposer("judge")
class JudgeProposer:
    """Asks the run's judge for help lines of the spec's helper kind."""

    name = "judge"
    defaults: ClassVar[dict[str, Any]] = {
        "min_pixels": QWEN_MIN_PIXELS,
        "max_pixels": QWEN_MAX_PIXELS,
    }
    """Qwen2.5-VL's resize budget (read only for judges that answer in ``qwen25_px``)."""
    param_types: ClassVar[dict[str, Any]] = {"min_pixels": PositiveInt, "max_pixels": PositiveInt}

    async def propose(self, request: ProposeRequest) -> Proposal:
        """One proposal call; each unusable proposal goes into ``Proposal.dropped`` with its reason.

        NaN, infinite, negative, swapped or out-of-image coordinates are never
        kept and never dropped silently: the loop counts them as rejected. A
        declared field that is missing or ill-typed is left out of a kept element
        and noted in ``params["notes"]`` (a check that needs it errs, never fails).
        """
        judge = request.judge
        if judge is None:
            raise JudgeRefusal("the judge proposer needs a model judge (--judge ...)")
        spec = request.spec
        size_wh = (int(request.image.size_wh[0]), int(request.image.size_wh[1]))
        convention = getattr(judge, "box_convention", None) or guess_convention(
            judge.spec, judge.model
        )
        input_wh = None
        if convention == "qwen25_px":
            input_wh = qwen25_input_wh(
                size_wh,
                min_pixels=int(spec.params.get("min_pixels", QWEN_MIN_PIXELS)),
                max_pixels=int(spec.params.get("max_pixels", QWEN_MAX_PIXELS)),
            )
        fb = request.feedback
        prompt = build_propose_prompt(
            helper=spec.helper,
            target=spec.target,
            ask=request.ask,
            fields=spec.fields,
            convention=convention,
            size_wh=size_wh,
            input_wh=input_wh,
            accepted=fb.accepted,
            rejected=fb.rejected,
            missing=fb.missing,
        )
        call = JudgeCall(
            task="propose",
            prompt=prompt,
            images=(request.image,),
            response_schema=propose_schema(spec.helper, spec.fields, convention),
            item_id=request.item_id,
            context={
                "question_id": request.question_id,
                "helper": spec.helper,
                "target": spec.target,
                "round": fb.round_index,
                "box_convention": convention,
                "size_wh": list(size_wh),
                "input_wh": list(input_wh) if input_wh else None,
                "fields": spec.fields,
            },
        )
        reply = await judge.generate(call)
        try:
            parsed = parse_proposal(
                reply.text,
                helper=spec.helper,
                fields=spec.fields,
                convention=convention,
                size_wh=size_wh,
                input_wh=input_wh,
            )
        except ValueError as exc:
            raise JudgeError(
                f"judge proposal for {request.question_id}: {exc}", reason="bad proposal"
            ) from None
        params: dict[str, Any] = {"box_convention": convention}
        if input_wh:
            params["input_wh"] = list(input_wh)
        if parsed.notes:  # kept elements without a declared field (the field is left out)
            params["notes"] = parsed.notes
        return Proposal(
            elements=parsed.elements, raw=reply.text, params=params, dropped=parsed.dropped
        )
