"""Grounding through a judge: judge proposer + judge verifier, and hybrid CV + judge."""

from __future__ import annotations

import asyncio
import json

import cv2
import numpy as np
import pytest

import groundeval.grounding.proposers.judge
import groundeval.grounding.verifiers.judge  # noqa: F401
from groundeval.grounding._loop import encode_png, run_grounding
from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.judges import ImagePart, JudgeCall, ScriptedJudge
from groundeval.programs._model import GroundSpec
from groundeval.state import Element, Provenance

W, H = 200, 100
PIPS = {"pips": {"type": "integer", "minimum": 1, "maximum": 6}}


def image() -> tuple[np.ndarray, ImagePart]:
    bgr = np.full((H, W, 3), 40, np.uint8)
    for x in (20, 80, 140):
        cv2.rectangle(bgr, (x, 30), (x + 40, 70), (255, 255, 255), -1)
    return bgr, ImagePart(encode_png(bgr), "image/png", (W, H))


def ground(judge, spec: GroundSpec):
    bgr, part = image()
    return asyncio.run(
        run_grounding(
            image_bgr=bgr,
            image=part,
            spec=spec,
            ask="How many dice are there?",
            item_id="i1",
            question_id="q1",
            provenance=Provenance(toolkit_version="test"),
            judge=judge,
        )
    )


def box_2d(x1, y1, x2, y2):  # original pixels -> Gemini's [ymin, xmin, ymax, xmax] / 1000
    return [y1 / H * 1000, x1 / W * 1000, y2 / H * 1000, x2 / W * 1000]


class DiceJudge:
    """Scripted Gemini-style judge: round 1 misses a die and misplaces one."""

    def __init__(self) -> None:
        self.prompts: list[tuple[str, str]] = []
        self.images: list[ImagePart] = []

    def __call__(self, call: JudgeCall) -> str:
        self.prompts.append((call.task, call.prompt))
        self.images.append(call.images[0])
        if call.task == "propose" and call.context["round"] == 1:
            return (
                "```json\n"
                + json.dumps(
                    {
                        "elements": [
                            {
                                "label": "die",
                                "box_2d": box_2d(20, 30, 60, 70),
                                "fields": {"pips": 3},
                            },
                            {
                                "label": "die",
                                "box_2d": box_2d(100, 0, 110, 10),
                                "fields": {"pips": "2"},
                            },
                            {"label": "die", "box_2d": [1, 2], "fields": {"pips": 1}},
                        ]
                    }
                )
                + "\n```"
            )
        if call.task == "propose":
            return json.dumps(
                {
                    "elements": [
                        {"label": "die", "box_2d": box_2d(80, 30, 120, 70), "fields": {"pips": 5}},
                        {"label": "die", "box_2d": box_2d(140, 30, 180, 70), "fields": {"pips": 9}},
                    ]
                }
            )
        marks = call.context["elements"]
        verdicts = []
        for m in marks:
            ok = m["xyxy_px"][1] >= 25  # the misplaced box sits at the top
            verdicts.append({"id": m["id"], "ok": ok, "reason": "on a die" if ok else "empty area"})
        missing = ["the third die on the right"] if len(marks) < 3 else []
        return json.dumps({"verdicts": verdicts, "missing": missing})


def test_judge_proposer_and_verifier_loop_converts_and_uses_feedback() -> None:
    script = DiceJudge()
    judge = ScriptedJudge(on_call=script, spec="gemini:gemini-2.5-flash")
    judge.box_convention = "box_2d_1000"  # type: ignore[attr-defined]
    spec = GroundSpec(
        helper="boxes", target="each die", fields=PIPS, proposer="judge", verifier="judge", budget=3
    )
    state = ground(judge, spec)
    assert state.status == "grounded" and len(state.rounds) == 2
    boxes = [e.xyxy_px for e in state.elements]
    assert boxes[0] == pytest.approx([20, 30, 60, 70])
    assert sorted(b[0] for b in boxes) == pytest.approx([20, 80, 140])
    pips = [e.fields.get("pips") for e in state.elements]
    assert 3 in pips and 5 in pips and 9 not in pips  # 9 breaks the schema: dropped, not kept
    assert state.rounds[0].elements[1].verdict == "rejected"
    # the judge looked at the mark it rejected ("empty area"): its place is not kept open
    assert not state.rounds[1].unexplained
    assert state.rounds[0].missing == ["the third die on the right"]
    round2 = [p for t, p in script.prompts if t == "propose"][1]
    assert "Rejected last round" in round2 and "empty area" in round2
    assert "the third die on the right" in round2 and "Already accepted" in round2
    assert state.provenance.proposer_params["box_convention"] == "box_2d_1000"
    # the verifier saw the numbered overlay, not the original image
    verify_images = [
        img for (t, _), img in zip(script.prompts, script.images, strict=True) if t == "verify"
    ]
    overlay = cv2.imdecode(np.frombuffer(verify_images[0].data, np.uint8), cv2.IMREAD_COLOR)
    assert overlay.shape == (H, W, 3) and verify_images[0].data != image()[1].data


def test_unparseable_proposal_is_a_judge_error() -> None:
    judge = ScriptedJudge(on_call=lambda call: "I see three dice.", spec="gemini:x")
    spec = GroundSpec(helper="boxes", target="each die", proposer="judge", verifier="judge")
    state = ground(judge, spec)  # the loop records the judge error in the state file
    assert state.status == "error"
    assert "JudgeError" in state.reason and "no 'elements' list" in state.reason


def test_verifier_without_verdict_rejects_instead_of_accepting() -> None:
    def script(call: JudgeCall) -> str:
        if call.task == "propose":
            return json.dumps({"elements": [{"label": "die", "box": [0.1, 0.3, 0.3, 0.7]}]})
        return json.dumps({"verdicts": [], "missing": []})

    spec = GroundSpec(helper="boxes", target="die", proposer="judge", verifier="judge", budget=2)
    state = ground(ScriptedJudge(on_call=script), spec)  # scripted -> normalised convention
    assert state.status == "withheld"
    assert state.rounds[0].elements[0].xyxy_px == pytest.approx([20, 30, 60, 70])
    assert "no verdict" in state.rounds[0].elements[0].reason


@register_proposer("test.fixed_boxes")
class FixedBoxes:
    """A stand-in CV proposer: always the same three boxes."""

    name = "test.fixed_boxes"

    async def propose(self, request: ProposeRequest) -> Proposal:
        return Proposal(
            elements=[
                Element(id=i + 1, kind="box", xyxy_px=[x, 30, x + 40, 70])
                for i, x in enumerate((20, 80, 140))
            ],
            params={"fixed": True},
        )


def test_hybrid_cv_proposer_with_judge_verifier() -> None:
    seen: list[JudgeCall] = []

    def script(call: JudgeCall) -> str:
        seen.append(call)
        return json.dumps(
            {
                "verdicts": [
                    {"id": 1, "ok": True, "reason": "die"},
                    {"id": "2", "ok": "yes", "reason": "die"},
                    {"id": 3, "ok": True, "reason": "die"},
                ],
                "missing": [],
            }
        )

    spec = GroundSpec(
        helper="boxes",
        target="each die",
        proposer="test.fixed_boxes",
        verifier="judge",
        min_count=3,
    )
    state = ground(ScriptedJudge(on_call=script), spec)
    assert state.status == "grounded" and len(state.elements) == 3
    assert [c.task for c in seen] == ["verify"]
    assert "#1" in seen[0].prompt and "#3" in seen[0].prompt


def test_verifier_enforces_min_count_through_missing() -> None:
    def script(call: JudgeCall) -> str:
        return json.dumps(
            {
                "verdicts": [
                    {"id": 1, "ok": True, "reason": "ok"},
                    {"id": 2, "ok": False, "reason": "not a die"},
                    {"id": 3, "ok": True, "reason": "ok"},
                ],
                "missing": [],
            }
        )

    spec = GroundSpec(
        helper="boxes",
        target="each die",
        proposer="test.fixed_boxes",
        verifier="judge",
        min_count=3,
        budget=1,
    )
    state = ground(ScriptedJudge(on_call=script), spec)
    assert state.status == "withheld"
    assert "at least 3 marks expected, 2 accepted" in state.rounds[0].missing


@pytest.mark.parametrize(
    ("helper", "reply", "kind", "points"),
    [
        (
            "boundary",
            {"elements": [{"label": "sun", "points": [[100, 100], [100, 300], [500, 200]]}]},
            "polygon",
            [[20, 10], [60, 10], [40, 50]],
        ),
        (
            "line",
            {"elements": [{"label": "needle", "points": [[500, 500], [0, 1000]]}]},
            "line",
            [[100, 50], [200, 0]],
        ),
        ("points", {"elements": [{"label": "pip", "point": [500, 250]}]}, "point", [[50, 50]]),
    ],
)
def test_other_helper_kinds_in_gemini_convention(helper, reply, kind, points) -> None:
    from groundeval.judges import parse_proposal

    elements, dropped, notes = parse_proposal(
        json.dumps(reply), helper=helper, fields={}, convention="box_2d_1000", size_wh=(W, H)
    )
    assert dropped == notes == [] and elements[0].kind == kind
    flat = [v for p in elements[0].points_px for v in p]
    assert flat == pytest.approx([v for p in points for v in p])


def test_text_helper_requires_text_field() -> None:
    from groundeval.judges import parse_proposal, propose_schema

    schema = propose_schema("text", {}, "xyxy_norm")
    assert "text" in schema["properties"]["elements"]["items"]["properties"]["fields"]["properties"]
    reply = {
        "elements": [
            {"label": "title", "box": [0, 0, 0.5, 0.2], "fields": {"text": "SALE"}},
            {"label": "x", "box": [0, 0, 0.5, 0.2]},
        ]
    }
    elements, dropped, notes = parse_proposal(
        json.dumps(reply), helper="text", fields={}, convention="xyxy_norm", size_wh=(W, H)
    )
    assert elements[0].fields["text"] == "SALE" and "text" not in elements[1].fields
    assert dropped == [] and notes == ["proposal 2: field 'text' missing"]


def test_gemini_grounding_over_the_wire(httpserver) -> None:
    from werkzeug import Request, Response

    from groundeval.judges import build_judge, propose_schema
    from tests._support.fakeapi import gemini_body, gemini_request_parts

    sent: list[dict] = []

    def handler(request: Request) -> Response:
        body = request.get_json()
        sent.append(body)
        _, text = gemini_request_parts(body)
        if text.startswith("You mark evidence"):
            reply = {
                "elements": [
                    {"label": "die", "box_2d": box_2d(x, 30, x + 40, 70), "fields": {"pips": 2}}
                    for x in (20, 80, 140)
                ]
            }
        else:
            reply = {
                "verdicts": [{"id": i, "ok": True, "reason": "die"} for i in (1, 2, 3)],
                "missing": [],
            }
        return Response(json.dumps(gemini_body(json.dumps(reply))), content_type="application/json")

    httpserver.expect_request("/v1/models/gemini-2.5-flash:generateContent").respond_with_handler(
        handler
    )
    judge = build_judge(
        "gemini:gemini-2.5-flash", api_key="k" * 20, base_url=httpserver.url_for("/")
    )
    spec = GroundSpec(
        helper="boxes", target="each die", fields=PIPS, proposer="judge", verifier="judge"
    )
    state = ground(judge, spec)
    assert state.status == "grounded"
    assert [e.xyxy_px for e in state.elements] == [
        pytest.approx([x, 30, x + 40, 70]) for x in (20, 80, 140)
    ]
    assert [e.fields["pips"] for e in state.elements] == [2, 2, 2]
    propose_images, _ = gemini_request_parts(sent[0])
    verify_images, _ = gemini_request_parts(sent[1])
    assert propose_images == [image()[1].data]
    assert verify_images[0] != propose_images[0]  # the overlay, not the original
    assert sent[0]["generationConfig"]["responseJsonSchema"] == propose_schema(
        "boxes", PIPS, "box_2d_1000"
    )
    assert judge.account.total.calls == 2 and judge.account.total.cost_usd > 0
