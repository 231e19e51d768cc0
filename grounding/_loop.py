"""The verify loop: propose -> draw numbered marks -> verify -> feedback, within a budget.

Accepted elements are kept between rounds; only rejected or missing ones are
proposed again. Every round is recorded with its overlay, so the state file is
the whole story of how the evidence was found. Budget spent -> withheld; a
proposer or verifier that fails (bad data, unreadable image, judge error) ->
status ``error`` with the reason, never an exception out of the run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import cv2
import numpy as np

# The module, not its names: grounding._protocol imports programs, whose package
# imports the runner, which imports this module (a cycle that names would break).
from groundeval.grounding import _protocol as proto
from groundeval.grounding._draw import draw_marks
from groundeval.judges._protocol import ImagePart, Judge
from groundeval.programs._model import GroundSpec
from groundeval.state import Element, Provenance, Round, StateFile


@dataclass
class GroundingTarget:
    """Where the loop writes overlays: an absolute folder and its path inside the run."""

    folder: Path
    relative: str


def renumber(elements: list[Element]) -> list[Element]:
    """Ids 1..n in list order: the numbers drawn are the numbers checks and reports use."""
    return [e.model_copy(update={"id": i}) for i, e in enumerate(elements, start=1)]


def encode_png(image_bgr: np.ndarray) -> bytes:
    """PNG bytes of an image (overlays are always lossless)."""
    ok, buf = cv2.imencode(".png", image_bgr)
    if not ok:
        raise ValueError("could not encode overlay as PNG")
    return bytes(buf.tobytes())


class _Failed(Exception):
    """A stage of a round failed; carries the reason for the state file."""


@dataclass
class _Run:
    """One grounding's inputs and what it has found so far."""

    spec: GroundSpec
    image_bgr: np.ndarray
    image: ImagePart
    ask: str
    item_id: str
    question_id: str
    provenance: Provenance
    judge: Judge | None
    overlays: GroundingTarget | None
    rounds: list[Round] = field(default_factory=list)
    accepted: list[Element] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)

    def finish(self, status: str, reason: str) -> StateFile:
        spec = self.spec
        return StateFile(
            item_id=self.item_id,
            question_id=self.question_id,
            image_sha256=self.image.sha256,
            image_size_wh=list(self.image.size_wh),
            helper=spec.helper,
            target=spec.target,
            elements=renumber(self.accepted),
            rounds=self.rounds,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            provenance=self.provenance.model_copy(
                update={"proposer": spec.proposer, "proposer_params": dict(self.params)}
            ),
        )

    async def overlay(self, index: int, elements: list[Element]) -> tuple[bytes, str | None]:
        """Draw and encode the numbered overlay; write it when there is a target."""
        drawn = await asyncio.to_thread(draw_marks, self.image_bgr, elements, self.spec.helper)
        png = await asyncio.to_thread(encode_png, drawn)
        if self.overlays is None:
            return png, None
        self.overlays.folder.mkdir(parents=True, exist_ok=True)
        name = f"{self.question_id}.round{index}.png"
        (self.overlays.folder / name).write_bytes(png)
        return png, f"{self.overlays.relative}/{name}"


async def run_grounding(
    *,
    image_bgr: np.ndarray,
    image: ImagePart,
    spec: GroundSpec,
    ask: str,
    item_id: str,
    question_id: str,
    provenance: Provenance,
    judge: Judge | None = None,
    overlays: GroundingTarget | None = None,
) -> StateFile:
    """Ground one question on one image; always returns a state file (never raises on data).

    A failure while writing an overlay (disk full) is recorded like any other.
    """
    run = _Run(spec, image_bgr, image, ask, item_id, question_id, provenance, judge, overlays)
    try:
        proposer = proto.get_proposer(spec.proposer)
        verifier = proto.get_verifier(spec.verifier)
    except KeyError as exc:
        return run.finish("error", str(exc.args[0]))
    feedback = proto.Feedback()
    for index in range(1, spec.budget + 1):
        feedback.round_index = index
        request = proto.ProposeRequest(
            image_bgr, image, spec, ask, feedback, judge, item_id, question_id
        )
        try:
            proposal = await _stage(
                f"proposer {spec.proposer!r}",
                index,
                proto.Proposal,
                partial(proposer.propose, request),
            )
        except _Failed as exc:
            return run.finish("error", str(exc))
        run.params = dict(proposal.params)
        fresh = [e for e in proposal.elements if not _already_kept(e, run.accepted)]
        if index > 1 and _same_geometry(fresh, feedback.rejected):
            return run.finish("withheld", _stalled(run, index))
        candidates = renumber([*run.accepted, *fresh])
        try:
            png, path = await _stage(
                "drawing the overlay", index, tuple, partial(run.overlay, index, candidates)
            )
        except _Failed as exc:
            return run.finish("error", str(exc))
        check = proto.VerifyRequest(
            image_bgr, png, spec, ask, candidates, judge, item_id, question_id
        )
        try:
            verdicts = await _stage(
                f"verifier {spec.verifier!r}",
                index,
                proto.Verification,
                partial(verifier.verify, check),
            )
        except _Failed as exc:
            run.rounds.append(_round(spec, ask, index, feedback, proposal, candidates, path, None))
            return run.finish("error", str(exc))
        run.rounds.append(_round(spec, ask, index, feedback, proposal, candidates, path, verdicts))
        run.accepted = [e for e in verdicts.elements if e.verdict == "accepted"]
        rejected = [e for e in verdicts.elements if e.verdict != "accepted"]
        if not rejected and not verdicts.missing:
            return run.finish("grounded", f"verified in round {index}")
        feedback = proto.Feedback(run.accepted, rejected, list(verdicts.missing), index + 1)
    return run.finish("withheld", f"budget of {spec.budget} rounds spent: {_open_points(run)}")


async def _stage(what: str, index: int, returns: type, call: Callable[[], Awaitable[Any]]) -> Any:
    """Run a proposer, drawing or verifier step, turning any failure into a recorded reason."""
    try:
        result = await call()
    except Exception as exc:  # third-party code on untrusted data: record, never crash the run
        raise _Failed(f"{what} failed in round {index}: {type(exc).__name__}: {exc}") from exc
    if not isinstance(result, returns):
        got = type(result).__name__
        raise _Failed(f"{what} returned {got} in round {index}, expected {returns.__name__}")
    return result


def _round(
    spec: GroundSpec,
    ask: str,
    index: int,
    feedback: proto.Feedback,
    proposal: proto.Proposal,
    candidates: list[Element],
    overlay: str | None,
    verdicts: proto.Verification | None,
) -> Round:
    return Round(
        index=index,
        asked=_asked(spec, ask, feedback),
        proposer=spec.proposer,
        raw=proposal.raw,
        elements=verdicts.elements if verdicts else candidates,
        overlay=overlay,
        missing=list(verdicts.missing) if verdicts else [],
        verifier=spec.verifier,
        verifier_raw=verdicts.raw if verdicts else "(verifier failed)",
    )


def _asked(spec: GroundSpec, ask: str, feedback: proto.Feedback) -> str:
    text = f"{spec.helper} for {spec.target or ask}"
    if feedback.rejected or feedback.missing:
        text += (
            f" (round {feedback.round_index}: kept {len(feedback.accepted)}, "
            f"redo {len(feedback.rejected)}, missing: {'; '.join(feedback.missing) or 'none'})"
        )
    return text


def _already_kept(e: Element, kept: list[Element]) -> bool:
    """A re-proposed copy of an accepted element is dropped, not verified twice."""
    from groundeval.grounding.verifiers.offline import OfflineVerifier

    same = OfflineVerifier().same_object
    return any(same(k, e) for k in kept)


def _same_geometry(a: list[Element], b: list[Element]) -> bool:
    def key(e: Element) -> tuple[Any, ...]:
        return (e.kind, e.xyxy_px, e.points_px, sorted(e.fields.items(), key=lambda kv: kv[0]))

    return [key(e) for e in a] == [key(e) for e in b]


def _open_points(run: _Run) -> str:
    last = run.rounds[-1]
    problems = [
        f"#{e.id}: {e.reason or 'rejected'}" for e in last.elements if e.verdict != "accepted"
    ]
    return "; ".join([*problems, *last.missing]) or "not verified"


def _stalled(run: _Run, index: int) -> str:
    return (
        f"round {index}: the proposer offered nothing new (only what round {index - 1} "
        f"rejected), so the verdicts cannot change; stopped early: {_open_points(run)}"
    )
