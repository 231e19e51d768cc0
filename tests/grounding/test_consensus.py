"""Consensus: decide only when independent proposers agree, withhold (with why) when not."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from groundeval.benchmarks.synthetic import encode_png, generate
from groundeval.grounding._draw import OTHER_COLORS
from groundeval.grounding._loop import GroundingTarget, run_grounding
from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.grounding.verifiers.consensus import ConsensusVerifier
from groundeval.grounding.verifiers.offline import OfflineVerifier
from groundeval.judges._protocol import ImagePart
from groundeval.programs import load_programs
from groundeval.programs._model import GroundSpec, SecondOpinion
from groundeval.programs.cli import app
from groundeval.state import Element, Provenance, StateFile
from tests._support.paths import REPO

IMAGE = np.full((80, 120, 3), 90, np.uint8)
PART = ImagePart(data=b"image bytes", mime="image/png", size_wh=(120, 80))
DICE = [([10, 10, 30, 30], 3), ([40, 10, 60, 30], 5)]
PIPS = {"pips": {"type": "integer", "minimum": 1, "maximum": 6}}


@register_proposer("test.cons.script")
class Scripted:
    """Returns ``params.dice`` as boxes with pips (and ``params.problems``)."""

    name = "test.cons.script"

    async def propose(self, request: ProposeRequest) -> Proposal:
        p = request.spec.params
        elements = [
            Element(id=i, kind="box", xyxy_px=b, fields={"pips": pips})
            for i, (b, pips) in enumerate(p["dice"], start=1)
        ]
        return Proposal(elements, problems=list(p.get("problems", [])))


@register_proposer("test.cons.raises")
class Raises:
    name = "test.cons.raises"

    async def propose(self, request: ProposeRequest) -> Proposal:
        raise RuntimeError("detector weights missing")


def _shift(dice: list[tuple[list[int], int]], dx: int = 2) -> list[tuple[list[int], int]]:
    return [([b[0] + dx, b[1], b[2] + dx, b[3]], pips) for b, pips in dice]


def _ground(
    theirs: list[tuple[list[int], int]] | None = None,
    tmp_path: Path | None = None,
    other: str = "test.cons.script",
    **extra: Any,
) -> StateFile:
    other_params = {"dice": theirs} if theirs is not None else {}
    spec = GroundSpec(
        helper="boxes",
        proposer="test.cons.script",
        params={"dice": DICE, **extra.pop("params", {})},
        verifier="consensus",
        agree_with=[SecondOpinion(proposer=other, params=other_params)],
        fields=PIPS,
        **extra,
    )
    target = GroundingTarget(tmp_path / "overlays", "overlays") if tmp_path else None
    state = asyncio.run(
        run_grounding(
            image_bgr=IMAGE, image=PART, spec=spec, ask="how many dice?", item_id="i",
            question_id="q1", provenance=Provenance(toolkit_version="t"), overlays=target,
        )
    )  # fmt: skip
    return StateFile.model_validate_json(state.model_dump_json())


def test_agreement_grounds_and_says_with_whom():
    state = _ground(_shift(DICE))
    assert state.status == "grounded" and state.reason == "verified in round 1"
    assert [e.fields["pips"] for e in state.elements] == [3, 5]
    assert state.elements[0].reason.startswith("agrees with test.cons.script #1 (IoU 0.")


def test_an_extra_die_is_a_count_mismatch_withheld_with_both_proposals_recorded(tmp_path: Path):
    extra = ([80, 40, 100, 60], 2)
    state = _ground([*DICE, extra], tmp_path, budget=2)
    assert state.status == "withheld"
    (only,) = state.rounds  # the retry offered the same: stopped early
    assert only.missing == [
        "count: test.cons.script has 2, test.cons.script has 3",
        "test.cons.script found a box at [80, 40, 100, 60] that test.cons.script did not mark",
    ]
    assert "count: test.cons.script has 2, test.cons.script has 3" in state.reason
    raw = json.loads(only.verifier_raw)
    assert [e["xyxy_px"] for e in raw["others"]["test.cons.script"]["elements"]] == [
        [10, 10, 30, 30], [40, 10, 60, 30], [80, 40, 100, 60],
    ]  # fmt: skip
    assert raw["others"]["test.cons.script"]["matched"][0][:2] == [1, 1]
    overlay = cv2.imread(str(tmp_path / str(only.overlay)))
    white = np.all(overlay == OTHER_COLORS.by_idx(0).as_bgr(), axis=-1)
    assert white[38:63, 78:103].sum() > 15  # the other proposer's extra die is drawn, dashed


def test_a_pip_disagreement_rejects_that_die_and_withholds():
    theirs = [DICE[0], (DICE[1][0], 4)]
    state = _ground(theirs)
    assert state.status == "withheld"
    first = state.rounds[0].elements
    assert first[0].verdict == "accepted"
    assert first[1].verdict == "rejected"
    assert first[1].reason == "pips: test.cons.script says 5, test.cons.script says 4"
    assert "#2: pips: test.cons.script says 5" in state.reason


def test_a_die_only_the_main_proposer_saw_is_rejected_with_the_best_overlap():
    state = _ground([DICE[0]])
    assert state.status == "withheld"
    second = state.rounds[0].elements[1]
    assert second.verdict == "rejected"
    assert second.reason == "test.cons.script has no matching box (best IoU 0.00)"


def test_a_far_off_box_does_not_match_by_the_consensus_iou():
    state = _ground(_shift(DICE, dx=12))  # IoU 8/32 = 0.25 < 0.5
    assert state.status == "withheld"
    state = _ground(_shift(DICE, dx=12), params={"consensus": {"match_iou": 0.2}})
    assert state.status == "grounded"


def test_a_problem_of_the_other_proposer_withholds_under_its_name():
    spec_other = SecondOpinion(
        proposer="test.cons.script", params={"dice": DICE, "problems": ["weak support"]}
    )
    spec = GroundSpec(
        helper="boxes", proposer="test.cons.script", params={"dice": DICE},
        verifier="consensus", agree_with=[spec_other], fields=PIPS, budget=1,
    )  # fmt: skip
    state = asyncio.run(
        run_grounding(
            image_bgr=IMAGE, image=PART, spec=spec, ask="?", item_id="i", question_id="q",
            provenance=Provenance(toolkit_version="t"),
        )
    )  # fmt: skip
    assert state.status == "withheld"
    assert state.rounds[0].problems == ["test.cons.script: weak support"]


def test_a_failing_other_proposer_is_an_error_state_naming_it():
    state = _ground(other="test.cons.raises")
    assert state.status == "error"
    assert state.reason == (
        "proposer 'test.cons.raises' (agree_with) failed in round 1: "
        "RuntimeError: detector weights missing"
    )


def test_unknown_consensus_setting_is_an_error_state():
    state = _ground(_shift(DICE), params={"consensus": {"match": 0.3}})
    assert state.status == "error" and "params.consensus: unknown setting(s) ['match']" in (
        state.reason
    )


def test_the_spec_requires_agree_with_exactly_for_consensus():
    with pytest.raises(ValidationError, match="'consensus' needs 'agree_with'"):
        GroundSpec(helper="boxes", proposer="opencv.dice", verifier="consensus")
    with pytest.raises(ValidationError, match="only read by verifier 'consensus'"):
        GroundSpec(helper="boxes", proposer="opencv.dice", agree_with=["yolo.dice"])
    spec = GroundSpec(
        helper="boxes", proposer="opencv.dice", verifier="consensus",
        agree_with=["yolo.dice", {"proposer": "opencv.contours", "params": {"min_area_px": 9}}],
    )  # fmt: skip
    assert [o.proposer for o in spec.agree_with] == ["yolo.dice", "opencv.contours"]
    assert spec.agree_with[1].params == {"min_area_px": 9}


def test_matching_is_one_to_one():
    # Two of mine on one of theirs: only the better overlap is matched.
    mine = [
        Element(id=1, kind="box", xyxy_px=[10, 10, 30, 30]),
        Element(id=2, kind="box", xyxy_px=[12, 10, 32, 30]),
    ]
    theirs = [Element(id=1, kind="box", xyxy_px=[12, 10, 32, 30])]
    spec = GroundSpec(helper="boxes", proposer="a", verifier="consensus", agree_with=["b"])
    out = ConsensusVerifier().compare(mine, {"b": theirs}, spec, OfflineVerifier(), (120, 80))
    # The offline duplicate check already rejects #2 (IoU 0.82 with #1); #1 then matches.
    assert [e.verdict for e in out.elements] == ["accepted", "rejected"]
    assert "near-duplicate of #1" in out.elements[1].reason


# --------------------------------------------------------------- real proposers, example


def _ground_scene(scene: str, seed: int, spec: GroundSpec) -> tuple[StateFile, dict[str, Any]]:
    s = generate(scene, "clean", seed)
    h, w = s.image_bgr.shape[:2]
    state = asyncio.run(
        run_grounding(
            image_bgr=s.image_bgr, image=ImagePart(encode_png(s.image_bgr), "image/png", (w, h)),
            spec=spec, ask="count", item_id=s.id, question_id="h1",
            provenance=Provenance(toolkit_version="t"),
        )
    )  # fmt: skip
    return state, s.truth


def _example_specs() -> dict[str, GroundSpec]:
    (program,) = load_programs(REPO / "examples" / "consensus.yaml")
    return {q.id: q.ground for q in program.questions if q.ground is not None}


def test_the_consensus_example_validates_with_the_cli():
    result = CliRunner().invoke(app, ["validate", str(REPO / "examples" / "consensus.yaml")])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(("scene", "question"), [("dice", "h1"), ("coins", "h3")])
def test_the_example_consensus_grounds_clean_scenes_right_or_withholds(scene: str, question: str):
    spec = _example_specs()[question]
    assert spec.verifier == "consensus" and spec.agree_with
    decided = 0
    for seed in range(3):
        state, truth = _ground_scene(scene, seed, spec)
        assert state.status in ("grounded", "withheld"), state.reason
        if state.status == "grounded":
            decided += 1
            assert len(state.elements) == truth["count"]
            raw = json.loads(state.rounds[-1].verifier_raw)
            assert raw["main"] == spec.proposer and set(raw["others"]) == {
                o.proposer for o in spec.agree_with
            }
    assert decided >= 2  # clean renders: both detectors agree on most


def test_numeric_fields_agree_within_the_relative_tolerance():
    spec = GroundSpec(
        helper="boxes", proposer="a", verifier="consensus", agree_with=["b"],
        fields={"radius_px": {"type": "number"}},
    )  # fmt: skip
    mine = [Element(id=1, kind="box", xyxy_px=[10, 10, 30, 30], fields={"radius_px": 10.0})]
    theirs = [Element(id=1, kind="box", xyxy_px=[10, 10, 30, 30], fields={"radius_px": 11.0})]
    strict = ConsensusVerifier().compare(mine, {"b": theirs}, spec, OfflineVerifier(), (120, 80))
    assert strict.elements[0].reason == "radius_px: a says 10.0, b says 11.0"
    loose = ConsensusVerifier(field_rel_tol=0.15)
    assert (
        loose.compare(mine, {"b": theirs}, spec, OfflineVerifier(), (120, 80)).elements[0].verdict
        == "accepted"
    )


def test_numeric_fields_agree_within_their_measured_uncertainties():
    spec = GroundSpec(
        helper="boxes", proposer="a", verifier="consensus", agree_with=["b"],
        fields={"radius_px": {"type": "number"}},
    )  # fmt: skip

    def one(radius: float, **err: float) -> list[Element]:
        fields = {"radius_px": radius, **err}
        return [Element(id=1, kind="box", xyxy_px=[10, 10, 30, 30], fields=fields)]

    def verdict(mine: list[Element], theirs: list[Element]) -> str:
        out = ConsensusVerifier().compare(mine, {"b": theirs}, spec, OfflineVerifier(), (120, 80))
        return out.elements[0].verdict

    # 10 +/- 0.6 and 11 +/- 0.5 overlap; 10 +/- 0.3 and 11 +/- 0.5 do not
    assert verdict(one(10.0, radius_px_err=0.6), one(11.0, radius_px_err=0.5)) == "accepted"
    assert verdict(one(10.0, radius_px_err=0.3), one(11.0, radius_px_err=0.5)) == "rejected"
    # one side's uncertainty is enough when it covers the gap; a bad one counts as none
    assert verdict(one(10.0, radius_px_err=1.0), one(11.0)) == "accepted"
    assert verdict(one(10.0, radius_px_err=-5.0), one(11.0)) == "rejected"


def test_validate_names_an_unknown_agree_with_proposer_and_a_consensus_without_one(
    tmp_path: Path,
):
    head = "id: c\nhard:\n  - id: h1\n    ask: Four dice?\n    check: 'count(elements) == 4'\n"
    bad_name = tmp_path / "bad_name.yaml"
    bad_name.write_text(
        head + "    ground: {helper: boxes, proposer: opencv.dice, verifier: consensus,"
        " agree_with: [yolo.dicee]}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(bad_name)])
    assert result.exit_code == 1
    assert "$.hard[0].ground.agree_with[0]: unknown proposer 'yolo.dicee'" in result.output
    no_other = tmp_path / "no_other.yaml"
    no_other.write_text(
        head + "    ground: {helper: boxes, proposer: opencv.dice, verifier: consensus}\n"
    )
    result = CliRunner().invoke(app, ["validate", str(no_other)])
    assert result.exit_code == 1
    assert "no_other.yaml" in result.output and "needs 'agree_with'" in result.output
