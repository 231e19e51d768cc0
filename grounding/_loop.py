"""The verify loop: propose -> draw numbered marks -> verify -> feedback, within a budget.

Accepted elements are kept between rounds; only rejected or missing ones are
proposed again. Every round is recorded with its overlay, so the state file is
the whole story of how the evidence was found. Budget spent -> withheld; a
proposer or verifier that fails (bad data, unreadable image, judge error) ->
status ``error`` with the reason, never an exception out of the run.

A round is verified only when nothing is left open, whatever the verifier says:
no rejected element, nothing missing, no region the proposer could not explain
(``Proposal.unexplained``, drawn dashed with a ``?``), no problem it reported
(``Proposal.problems``) and no proposal dropped as unusable
(``Proposal.dropped``). This is the one place that rule lives, for every verifier.
A retry never buys confidence: a later round whose accepted count drifts far
from round 1's, beyond what round 1 itself reported as open, is withheld; a
region an earlier round flagged stays open until an element covers it (a retry's
looser parameters may shift the proposer's own look so that it stops seeing it);
so does the place of an element a code verifier rejected (its rejection says the
evidence is unusable, not that nothing is there: probe 109663, a small coin's blob
under the least radius, dropped by the retry); and a round with a problem ends the
loop, withheld: a problem is the proposer's doubt about its own evidence, and
looking again with other parameters only moves the evidence until the doubt no
longer fires (probe 109520: a blob on a yellow note, doubted, then shifted by
looser filters and "verified").
With ``agree_with`` (consensus), the other proposers run once, in round 1, and
their elements are drawn beside the main ones and handed to the verifier.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

import cv2
import numpy as np

from groundeval.grounding._draw import draw_marks
from groundeval.grounding._geometry import (
    covered_share,
    element_xyxy,
    holds_centre,
    same_object,
    where_label,
)
from groundeval.grounding._protocol import (
    Feedback,
    Proposal,
    Proposer,
    ProposeRequest,
    Verification,
    Verifier,
    VerifyRequest,
    get_proposer,
    get_verifier,
    param_problems,
)
from groundeval.judges import ImagePart, Judge
from groundeval.state import (
    Element,
    GroundingTarget,
    GroundSpec,
    Provenance,
    Round,
    SecondOpinion,
    StateFile,
)


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
    others: dict[str, Proposal] = field(default_factory=dict)
    """Proposals of the ``agree_with`` proposers (round 1), by name."""
    last_offer: tuple[Any, ...] | None = None
    """What the previous round's proposal offered (to stop when a retry repeats it)."""
    flagged: list[Element] = field(default_factory=list)
    """Regions the last round left open: unexplained, or where an element was rejected
    without a look (a retry must cover them)."""

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

    async def overlay(
        self, index: int, elements: list[Element], unexplained: list[Element]
    ) -> tuple[bytes, str | None]:
        """Draw and encode the numbered overlay; write it when there is a target."""
        drawn = await asyncio.to_thread(
            partial(
                draw_marks,
                self.image_bgr,
                elements,
                self.spec.helper,
                unexplained=unexplained,
                others=[p.elements for p in self.others.values()],
            )
        )
        png = await asyncio.to_thread(encode_png, drawn)
        if self.overlays is None:
            return png, None
        self.overlays.folder.mkdir(parents=True, exist_ok=True)
        name = f"{self.question_id}.round{index}.png"
        (self.overlays.folder / name).write_bytes(png)
        return png, f"{self.overlays.relative}/{name}"


DRIFT_SHARE = 0.25
"""A retry may move the accepted count by this share of round 1's (at least DRIFT_MIN) ..."""
DRIFT_MIN = 1
"""... beyond what round 1 itself left open (rejected, missing, unexplained, unusable)."""
DOUBLE_IOU = 0.3
"""A retry's element overlapping a kept one this much, yet not the same object, is doubtful."""
DOUBLE_PX = 12.0
"""Likewise for points, lines and rays within this many pixels of a kept one."""


@dataclass
class _Open:
    """What a proposal itself left open, whatever the verifier says."""

    unexplained: list[Element]
    problems: list[str]
    dropped: list[str]

    def __bool__(self) -> bool:
        return bool(self.unexplained or self.problems or self.dropped)

    def as_missing(self) -> list[str]:
        """The open points in words, for the next round's feedback and the final reason."""
        return [
            *(f"unexplained region at {where_label(u)}: {u.reason or 'no element covers it'}"
              for u in self.unexplained),
            *(f"problem: {p}" for p in self.problems),
            *(f"unusable proposal: {d}" for d in self.dropped),
        ]  # fmt: skip


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
        proposer = get_proposer(spec.proposer)
        verifier = get_verifier(spec.verifier)
        seconds = [(o, get_proposer(o.proposer)) for o in spec.agree_with]
    except KeyError as exc:
        return run.finish("error", str(exc.args[0]))
    problems = param_problems(spec)  # what `validate` says, before a round is spent
    if problems:
        said = [text if at.startswith("params") else f"{at}: {text}" for at, text in problems]
        return run.finish("error", "; ".join(said))
    feedback = Feedback()
    for index in range(1, spec.budget + 1):
        feedback.round_index = index
        try:
            proposal = await _propose(run, proposer, spec, feedback, f"proposer {spec.proposer!r}")
            if index == 1 and seconds:
                run.others = await _second_opinions(run, seconds)
        except _Failed as exc:
            return run.finish("error", str(exc))
        run.params = dict(proposal.params)
        left = _open_of(proposal, run.others)
        fresh = [e for e in proposal.elements if not _already_kept(e, run.accepted)]
        stale = _still_open(run.flagged, [*run.accepted, *fresh], left.unexplained)
        left.unexplained = renumber([*left.unexplained, *stale])
        run.flagged = left.unexplained
        offer = _offer(proposal.elements, left)
        if index > 1 and _repeats(offer, run.last_offer, fresh, feedback.rejected):
            return run.finish("withheld", _stalled(run, index))
        run.last_offer = offer
        candidates = renumber([*run.accepted, *fresh])
        try:
            png, path = await _stage(
                "drawing the overlay",
                index,
                tuple,
                partial(run.overlay, index, candidates, left.unexplained),
            )
        except _Failed as exc:
            return run.finish("error", str(exc))
        if not proposal.elements and _dropped(proposal):
            raw = f"(not verified: every proposal in round {index} was unusable)"
            verdicts = Verification(candidates, [], raw)
        else:
            check = VerifyRequest(
                image_bgr, png, spec, ask, candidates, judge, item_id, question_id,
                others={name: p.elements for name, p in run.others.items()},
            )  # fmt: skip
            try:
                verdicts = await _verify(verifier, check, spec, index)
            except _Failed as exc:
                run.rounds.append(
                    _round(spec, ask, index, feedback, proposal, candidates, path, None, left)
                )
                return run.finish("error", str(exc))
        record = _round(spec, ask, index, feedback, proposal, candidates, path, verdicts, left)
        run.rounds.append(record)
        accepted = [e for e in verdicts.elements if e.verdict == "accepted"]
        rejected = [e for e in verdicts.elements if e.verdict != "accepted"]
        drift = (
            _drift(run, len(accepted), index) or _doubled(run.accepted, accepted, index)
            if index > 1
            else ""
        )
        run.accepted = [] if left.problems else accepted
        if not verdicts.looked:
            run.flagged = [*run.flagged, *_places(rejected, image.size_wh)]
        if drift:
            record.problems.append(drift)
            return run.finish("withheld", drift)
        if not rejected and not verdicts.missing and not left:
            return run.finish("grounded", f"verified in round {index}")
        if left.problems:
            return run.finish("withheld", _doubted(run, index))
        missing = [*verdicts.missing, *left.as_missing()]
        feedback = Feedback(run.accepted, rejected, missing, index + 1)
    return run.finish("withheld", f"budget of {spec.budget} rounds spent: {_open_points(run)}")


async def _propose(
    run: _Run, proposer: Proposer, spec: GroundSpec, feedback: Feedback, who: str
) -> Proposal:
    """One proposer call, its result checked so that bad plugin data is a reason, not a crash."""
    index = feedback.round_index
    request = ProposeRequest(
        run.image_bgr, run.image, spec, run.ask, feedback, run.judge, run.item_id, run.question_id
    )
    proposal: Proposal = await _stage(who, index, Proposal, partial(proposer.propose, request))
    for what, kind in (("elements", Element), ("unexplained", Element), ("problems", str),
                       ("dropped", str)):  # fmt: skip
        items = getattr(proposal, what)
        if not isinstance(items, list) or not all(isinstance(x, kind) for x in items):
            raise _Failed(
                f"{who} returned a Proposal whose {what} is not a list of {kind.__name__} "
                f"in round {index}"
            )
    return proposal


async def _verify(
    verifier: Verifier, check: VerifyRequest, spec: GroundSpec, index: int
) -> Verification:
    """One verifier call, its result checked like a proposal's."""
    who = f"verifier {spec.verifier!r}"
    verdicts: Verification = await _stage(who, index, Verification, partial(verifier.verify, check))
    for what, kind in (("elements", Element), ("missing", str)):
        items = getattr(verdicts, what)
        if not isinstance(items, list) or not all(isinstance(x, kind) for x in items):
            raise _Failed(
                f"{who} returned a Verification whose {what} is not a list of {kind.__name__} "
                f"in round {index}"
            )
    if not isinstance(verdicts.raw, str):
        raise _Failed(f"{who} returned a Verification whose raw is not text in round {index}")
    return verdicts


async def _second_opinions(
    run: _Run, seconds: list[tuple[SecondOpinion, Proposer]]
) -> dict[str, Proposal]:
    """Run the ``agree_with`` proposers once, each with its own params and no feedback."""
    out: dict[str, Proposal] = {}
    for opinion, proposer in seconds:
        name = opinion.proposer
        if name in out:
            name = f"{name}#{sum(k.split('#')[0] == opinion.proposer for k in out) + 1}"
        spec = run.spec.model_copy(
            update={"proposer": opinion.proposer, "params": dict(opinion.params), "agree_with": []}
        )
        proposal = await _propose(
            run, proposer, spec, Feedback(), f"proposer {name!r} (agree_with)"
        )
        out[name] = replace(proposal, elements=renumber(proposal.elements))
    return out


STILL_OPEN = "flagged by an earlier round and covered by no element since"
COVERED_SHARE = 0.5
"""Share of a flagged region's box that elements must bound to explain it."""


def _still_open(
    flagged: list[Element], elements: list[Element], flagged_now: list[Element]
) -> list[Element]:
    """Regions an earlier round flagged that no element covers and no current flag repeats.

    Covered: the elements (or current flags) whose box and the region's hold each other's
    centre, either way round, together bound ``COVERED_SHARE`` of the region's box. A region
    is explained by elements, never by a retry's look ceasing to see it, nor by a scrap of
    it (a retry's small box on a coin's highlight, probe tuning seed 240).
    """
    kept = []
    for u in flagged:
        touching = [e for e in [*elements, *flagged_now] if holds_centre(e, u)]
        if touching and covered_share(u, touching) >= COVERED_SHARE:
            continue
        reason = u.reason if u.reason.endswith(f"({STILL_OPEN})") else f"{u.reason} ({STILL_OPEN})"
        kept.append(u.model_copy(update={"reason": reason}))
    return kept


def _places(rejected: list[Element], size_wh: tuple[int, int]) -> list[Element]:
    """The places of rejected boxes and polygons, in the image, as regions left open.

    A verifier that judged the evidence by code (``Verification.looked`` false) did not
    look for an object there. Points, lines and rays bound no place; coordinates that are
    not finite, or wholly outside the image, name none.
    """
    width, height = size_wh
    places = []
    for e in rejected:
        if e.kind not in ("box", "polygon"):
            continue
        x1, y1, x2, y2 = element_xyxy(e)
        if not all(math.isfinite(v) for v in (x1, y1, x2, y2)):
            continue
        x1, y1, x2, y2 = max(x1, 0.0), max(y1, 0.0), min(x2, width), min(y2, height)
        if x2 > x1 and y2 > y1:
            reason = f"element #{e.id} was rejected here: {e.reason}"
            places.append(Element(id=1, kind="box", xyxy_px=[x1, y1, x2, y2], reason=reason))
    return places


def _open_of(proposal: Proposal, others: dict[str, Proposal]) -> _Open:
    """The proposal's open points plus those of every independent proposal (named)."""
    found = _Open(list(proposal.unexplained), list(proposal.problems), _dropped(proposal))
    for name, other in others.items():
        found.unexplained += [
            u.model_copy(update={"reason": f"{name}: {u.reason or 'no element covers it'}"})
            for u in other.unexplained
        ]
        found.problems += [f"{name}: {p}" for p in other.problems]
        found.dropped += [f"{name}: {d}" for d in _dropped(other)]
    found.unexplained = renumber(found.unexplained)
    return found


def _dropped(proposal: Proposal) -> list[str]:
    """``Proposal.dropped``, plus notes a proposer still leaves in ``params['dropped']``."""
    legacy = proposal.params.get("dropped")
    extra = [d for d in legacy if isinstance(d, str)] if isinstance(legacy, list) else []
    return [*proposal.dropped, *(d for d in extra if d not in proposal.dropped)]


def _offer(elements: list[Element], left: _Open) -> tuple[Any, ...]:
    return (
        [_key(e) for e in elements],
        [_key(u) for u in left.unexplained],
        sorted(left.problems),
        sorted(left.dropped),
    )


def _repeats(
    offer: tuple[Any, ...],
    last: tuple[Any, ...] | None,
    fresh: list[Element],
    rejected: list[Element],
) -> bool:
    """A retry that offers what the last round did (or only what it rejected) cannot help."""
    if last is None:
        return False
    return offer == last or (_same_geometry(fresh, rejected) and offer[1:] == last[1:])


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
    feedback: Feedback,
    proposal: Proposal,
    candidates: list[Element],
    overlay: str | None,
    verdicts: Verification | None,
    left: _Open,
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
        unexplained=list(left.unexplained),
        problems=list(left.problems),
        dropped=list(left.dropped),
    )


def _asked(spec: GroundSpec, ask: str, feedback: Feedback) -> str:
    text = f"{spec.helper} for {spec.target or ask}"
    if feedback.rejected or feedback.missing:
        text += (
            f" (round {feedback.round_index}: kept {len(feedback.accepted)}, "
            f"redo {len(feedback.rejected)}, missing: {'; '.join(feedback.missing) or 'none'})"
        )
    return text


def _already_kept(e: Element, kept: list[Element]) -> bool:
    """A re-proposed copy of an accepted element is dropped, not verified twice."""
    return any(same_object(k, e) for k in kept)


def _key(e: Element) -> tuple[Any, ...]:
    return (e.kind, e.xyxy_px, e.points_px, sorted(e.fields.items(), key=lambda kv: kv[0]))


def _same_geometry(a: list[Element], b: list[Element]) -> bool:
    return [_key(e) for e in a] == [_key(e) for e in b]


def _drift(run: _Run, accepted_now: int, index: int) -> str:
    """Why a retry's accepted count is not believable, or "" when round 1 explains it.

    Round 1 accepted ``a1``. A retry may replace what round 1 rejected, add what it
    said was missing (or short of ``min_count``), cover its unexplained regions and
    redo its unusable proposals, within a small slack; anything beyond, in either
    direction, means the retry's changed parameters found a different answer, not a
    better-checked one.
    """
    first = run.rounds[0]
    a1 = sum(e.verdict == "accepted" for e in first.elements)
    shortfall = max(0, (run.spec.min_count or 0) - a1)
    explained = (
        (len(first.elements) - a1)
        + len(first.unexplained)
        + len(first.dropped)
        + max(shortfall, len(first.missing))
    )
    slack = max(DRIFT_MIN, math.ceil(DRIFT_SHARE * a1))
    low, high = a1 - slack, a1 + explained + slack
    if low <= accepted_now <= high:
        return ""
    way = "more" if accepted_now > high else "fewer"
    return (
        f"retry drift: round {index} accepts {accepted_now} elements where round 1 accepted "
        f"{a1} (of {len(first.elements)} proposed); what round 1 left open explains "
        f"{max(low, 0)} to {high}, so the retry found {way} without saying why "
        "(a retry never buys confidence)"
    )


def _doubled(kept: list[Element], accepted: list[Element], index: int) -> str:
    """Why a retry may count a kept object twice, or "" when every new element stands apart.

    A retry with other parameters can draw an object already accepted with a shifted
    box, or cut a piece out of a region a kept box holds whole: not the same object by
    the one rule, so it would be counted again. An element that overlaps a kept one this
    much, or whose box holds a kept one's centre (or the other way round), is either that
    object again or a second object hidden behind it; the picture cannot say which, so
    the question is withheld.
    """
    for e in accepted:
        if any(same_object(k, e) for k in kept):
            continue
        near = [k for k in kept if same_object(k, e, min_iou=DOUBLE_IOU, max_px=DOUBLE_PX)]
        if e.kind in ("box", "polygon"):  # a piece cut out of a kept box overlaps it little
            near += [k for k in kept if k.kind == e.kind and holds_centre(k, e)]
        if near:
            return (
                f"round {index}: element {e.id} overlaps element {near[0].id} accepted before "
                "without being the same object: the same object drawn twice, or two objects "
                "one behind the other (a retry never buys confidence)"
            )
    return ""


def _open_points(run: _Run) -> str:
    last = run.rounds[-1]
    problems = [
        f"#{e.id}: {e.reason or 'rejected'}" for e in last.elements if e.verdict != "accepted"
    ]
    left = _Open(last.unexplained, last.problems, last.dropped)
    return "; ".join([*problems, *last.missing, *left.as_missing()]) or "not verified"


def _doubted(run: _Run, index: int) -> str:
    return (
        f"round {index}: the proposer doubts its own evidence, and a retry with other "
        f"parameters cannot answer a doubt (a retry never buys confidence): {_open_points(run)}"
    )


def _stalled(run: _Run, index: int) -> str:
    return (
        f"round {index}: the proposer offered nothing new (only what round {index - 1} "
        f"rejected or left open), so the verdicts cannot change; stopped early: "
        f"{_open_points(run)}"
    )
