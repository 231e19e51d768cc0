"""The judge verifier: a model looks at the numbered overlay and rules on every mark.

Works behind any proposer, so a CV proposer with this verifier is the hybrid mode.
"""

from __future__ import annotations

from groundeval.grounding._protocol import Verification, VerifyRequest, register_verifier
from groundeval.judges import (
    VERIFY_SCHEMA,
    ImagePart,
    JudgeCall,
    JudgeError,
    JudgeRefusal,
    build_verify_prompt,
    parse_verification,
)


@register_verifier("judge")
class JudgeVerifier:
    """Sends the overlay PNG; gets a verdict per mark and a list of what is missing."""

    name = "judge"

    async def verify(self, request: VerifyRequest) -> Verification:
        """One verification call; a mark without a clear verdict is rejected, not accepted."""
        judge = request.judge
        if judge is None:
            raise JudgeRefusal("the judge verifier needs a model judge (--judge ...)")
        spec = request.spec
        height, width = request.image_bgr.shape[:2]
        call = JudgeCall(
            task="verify",
            prompt=build_verify_prompt(
                helper=spec.helper,
                target=spec.target,
                ask=request.ask,
                elements=request.elements,
                min_count=spec.min_count,
                max_count=spec.max_count,
            ),
            images=(ImagePart(request.overlay_png, "image/png", (int(width), int(height))),),
            response_schema=VERIFY_SCHEMA,
            item_id=request.item_id,
            context={
                "question_id": request.question_id,
                "helper": spec.helper,
                "elements": [e.model_dump() for e in request.elements],
            },
        )
        reply = await judge.generate(call)
        try:
            elements, missing = parse_verification(reply.text, request.elements)
        except ValueError as exc:
            raise JudgeError(
                f"judge verification for {request.question_id}: {exc}", reason="bad verification"
            ) from None
        accepted = sum(e.verdict == "accepted" for e in elements)
        if spec.min_count is not None and accepted < spec.min_count:
            missing.append(f"at least {spec.min_count} marks expected, {accepted} accepted")
        if spec.max_count is not None and accepted > spec.max_count:
            missing.append(f"at most {spec.max_count} marks expected, {accepted} accepted")
        return Verification(elements=elements, missing=missing, raw=reply.text, looked=True)
