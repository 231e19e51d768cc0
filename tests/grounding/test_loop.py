"""The verify loop: kept elements, re-proposals, budget, early stop, errors recorded not raised."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from groundeval.grounding._images import ImageError
from groundeval.grounding._loop import GroundingTarget, run_grounding
from groundeval.grounding._protocol import (
    Proposal,
    ProposeRequest,
    Verification,
    VerifyRequest,
    register_proposer,
    register_verifier,
)
from groundeval.judges._protocol import ImagePart, JudgeError
from groundeval.programs._model import GroundSpec
from groundeval.state import Element, Provenance, StateFile

IMAGE = np.full((80, 120, 3), 90, np.uint8)
PART = ImagePart(data=b"image bytes", mime="image/png", size_wh=(120, 80))
GOOD = [[10, 10, 30, 30], [40, 10, 60, 30]]
TINY = [70, 10, 71, 11]
FIXED = [70, 10, 90, 30]


@register_proposer("test.loop.script")
class ScriptedBoxes:
    """Round n returns ``params.rounds[n-1]`` (the last one repeats); raw records the feedback."""

    name = "test.loop.script"

    async def propose(self, request: ProposeRequest) -> Proposal:
        rounds = request.spec.params["rounds"]
        boxes = rounds[min(request.feedback.round_index, len(rounds)) - 1]
        fb = request.feedback
        raw = json.dumps(
            {"round": fb.round_index, "kept": [e.id for e in fb.accepted],
             "redo": [e.id for e in fb.rejected], "missing": fb.missing}
        )  # fmt: skip
        elements = [Element(id=i, kind="box", xyxy_px=b) for i, b in enumerate(boxes, start=1)]
        return Proposal(elements, raw=raw, params={"script_rounds": len(rounds)})


@register_proposer("test.loop.raises")
class Raises:
    """Raises the exception named in ``params.error``."""

    name = "test.loop.raises"

    async def propose(self, request: ProposeRequest) -> Proposal:
        kind = request.spec.params["error"]
        errors = {
            "judge": JudgeError("backend gave up after 3 retries"),
            "image": ImageError("/x/y.png: damaged or truncated image"),
            "data": ValueError("die 3 has pips=None"),
        }
        raise errors[kind]


@register_verifier("test.loop.broken")
class BrokenVerifier:
    """A verifier whose backend fails."""

    name = "test.loop.broken"

    async def verify(self, request: VerifyRequest) -> Verification:
        raise JudgeError("verifier judge timed out")


def _ground(tmp_path: Path | None = None, **spec: Any) -> StateFile:
    spec.setdefault("helper", "boxes")
    spec.setdefault("proposer", "test.loop.script")
    spec.setdefault("verifier", "offline")
    target = GroundingTarget(tmp_path / "overlays", "overlays") if tmp_path else None
    state = asyncio.run(
        run_grounding(
            image_bgr=IMAGE, image=PART, spec=GroundSpec(**spec), ask="how many?",
            item_id="item-1", question_id="q1", provenance=Provenance(toolkit_version="t"),
            overlays=target,
        )
    )  # fmt: skip
    return StateFile.model_validate_json(state.model_dump_json())  # survives a round trip


def test_grounded_in_one_round_with_overlay(tmp_path: Path):
    state = _ground(tmp_path, params={"rounds": [GOOD]}, budget=3)
    assert state.status == "grounded" and state.reason == "verified in round 1"
    assert [e.xyxy_px for e in state.elements] == GOOD
    assert [e.id for e in state.elements] == [1, 2]
    (only,) = state.rounds
    assert only.overlay == "overlays/q1.round1.png"
    overlay = cv2.imread(str(tmp_path / only.overlay))
    assert overlay.shape == IMAGE.shape and not np.array_equal(overlay, IMAGE)
    assert state.provenance.proposer == "test.loop.script"
    assert state.provenance.proposer_params == {"script_rounds": 1}
    assert state.image_sha256 == PART.sha256 and state.image_size_wh == [120, 80]


def test_kept_elements_survive_and_only_the_rejected_is_redone(tmp_path: Path):
    # Round 2 re-proposes the two kept boxes (as a CV proposer would) plus the fix.
    state = _ground(tmp_path, params={"rounds": [[*GOOD, TINY], [*GOOD, FIXED]]}, budget=3)
    assert state.status == "grounded" and state.reason == "verified in round 2"
    first, second = state.rounds
    assert [e.verdict for e in first.elements] == ["accepted", "accepted", "rejected"]
    assert "smaller than" in first.elements[2].reason
    assert json.loads(second.raw) == {"round": 2, "kept": [1, 2], "redo": [3], "missing": []}
    assert "kept 2, redo 1" in second.asked
    assert [e.xyxy_px for e in second.elements] == [*GOOD, FIXED]  # copies were dropped
    assert [e.xyxy_px for e in state.elements] == [*GOOD, FIXED]
    assert (tmp_path / "overlays" / "q1.round2.png").exists()


def test_budget_spent_is_withheld_with_the_reason():
    state = _ground(params={"rounds": [[*GOOD, TINY], [*GOOD, [70, 10, 72, 40]]]}, budget=2)
    assert state.status == "withheld"
    assert state.reason.startswith("budget of 2 rounds spent: #3: smaller than 3 px")
    assert len(state.rounds) == 2
    assert [e.xyxy_px for e in state.elements] == GOOD  # what was verified is kept for audit


def test_same_proposal_again_stops_early():
    state = _ground(params={"rounds": [[*GOOD, TINY]]}, budget=5)
    assert state.status == "withheld"
    assert len(state.rounds) == 1
    assert "offered nothing new" in state.reason and "#3: smaller" in state.reason


def test_missing_elements_are_fed_back_and_withheld():
    state = _ground(params={"rounds": [GOOD, GOOD]}, budget=2, min_count=3)
    assert state.status == "withheld"
    assert len(state.rounds) == 1  # round 2 brought nothing new
    assert state.rounds[0].missing == [
        "1 more boxes needed: 2 passed the checks, the spec wants at least 3"
    ]
    assert "1 more boxes needed" in state.reason


@pytest.mark.parametrize(
    ("error", "words"),
    [
        ("judge", "JudgeError: backend gave up"),
        ("image", "ImageError: /x/y.png: damaged"),
        ("data", "ValueError: die 3 has pips=None"),
    ],
)
def test_proposer_failure_is_an_error_state(error: str, words: str):
    state = _ground(proposer="test.loop.raises", params={"error": error})
    assert state.status == "error"
    assert state.reason.startswith("proposer 'test.loop.raises' failed in round 1: ")
    assert words in state.reason
    assert state.rounds == []


def test_verifier_failure_keeps_the_round_and_its_overlay(tmp_path: Path):
    state = _ground(tmp_path, params={"rounds": [GOOD]}, verifier="test.loop.broken")
    assert state.status == "error"
    assert "verifier 'test.loop.broken' failed in round 1: JudgeError" in state.reason
    (only,) = state.rounds
    assert only.verifier_raw == "(verifier failed)"
    assert (tmp_path / only.overlay).exists()
    assert [e.verdict for e in only.elements] == ["unverified", "unverified"]


def test_bad_verifier_settings_are_an_error_state():
    state = _ground(params={"rounds": [GOOD], "offline_verifier": {"nope": 1}})
    assert state.status == "error" and "unknown setting" in state.reason


def test_unknown_proposer_is_an_error_state():
    state = _ground(proposer="no.such.proposer")
    assert state.status == "error" and "unknown proposer 'no.such.proposer'" in state.reason


@register_proposer("test.loop.sync_raises")
class SyncRaises:
    """A plugin whose ``propose`` is not even a coroutine and fails on call."""

    name = "test.loop.sync_raises"

    def propose(self, request: ProposeRequest) -> Proposal:
        raise KeyError("boxes")


@register_proposer("test.loop.wrong_type")
class WrongType:
    """A plugin that returns a plain list instead of a Proposal."""

    name = "test.loop.wrong_type"

    async def propose(self, request: ProposeRequest) -> Any:
        return [Element(id=1, kind="box", xyxy_px=[1, 1, 9, 9])]


def test_misbehaving_plugins_are_error_states():
    state = _ground(proposer="test.loop.sync_raises")
    assert state.status == "error" and "KeyError: 'boxes'" in state.reason
    state = _ground(proposer="test.loop.wrong_type")
    assert state.status == "error"
    assert "returned list in round 1, expected Proposal" in state.reason
