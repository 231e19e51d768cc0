"""The runner for one item: gates, then hard questions in dependency order, then scoring.

Judge calls are few and batched: all judge-decided gates in one call, the direct
hard questions of each dependency wave in one call. A failed gate stops the item;
a question whose ``requires`` did not pass is never asked. Errors stay errors.

Resuming an item (``ItemInput.prior``) keeps its settled decisions (pass, fail,
withheld and every human override) and the state files they read, and decides
only the rest: ``error`` and ``pending`` questions, skips, and what they unblock.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from groundeval.grounding import GroundingTarget, ImageError, LoadedImage, load_image, run_grounding
from groundeval.judges import Account, Judge, QuestionRef, ask_questions
from groundeval.programs._checks import CheckError, check_fields
from groundeval.programs._expressions import ViewCache
from groundeval.programs._model import Program, Question, dependency_order
from groundeval.programs._views import TooCloseToCall
from groundeval.programs.scoring import get_protocol
from groundeval.state import (
    CheckTrace,
    Decision,
    ItemResult,
    ItemUsage,
    Outcome,
    Provenance,
    StateFile,
    Usage,
    toolkit_version,
)

Kind = Literal["gate", "hard"]


@dataclass
class ItemInput:
    """One item to grade: a program, its images and (for rubric answers) its text."""

    item_id: str
    program: Program
    images: list[Path] = field(default_factory=list)
    answer_text: str | None = None
    prior: ItemResult | None = None
    """The item's earlier result when resuming: settled decisions are kept."""
    prior_states: dict[str, tuple[StateFile, str]] = field(default_factory=dict)
    """Source question id -> (state, path in the run) of ``prior``'s readable state files."""


class EvidenceSink(Protocol):
    """Where grounding state files and overlays go (the run store implements it)."""

    def overlay_target(self, item_id: str) -> GroundingTarget:
        """Folder for this item's overlays and its path inside the run."""
        ...

    def write_state(self, state: StateFile) -> str:
        """Write a state file atomically; return its path inside the run."""
        ...


@dataclass
class _ItemContext:
    item: ItemInput
    judge: Judge
    sink: EvidenceSink | None
    images: list[LoadedImage]
    provenance: Provenance
    usage: Usage = field(default_factory=Usage)
    states: dict[str, StateFile] = field(default_factory=dict)
    state_paths: dict[str, str] = field(default_factory=dict)
    kept: dict[str, Decision] = field(default_factory=dict)
    """Decisions carried over from ``item.prior`` (resume): never decided again."""
    prior_states: dict[str, tuple[StateFile, str]] = field(default_factory=dict)


async def grade_item(
    item: ItemInput, *, judge: Judge, sink: EvidenceSink | None = None
) -> tuple[ItemResult, ItemUsage]:
    """Grade one item end to end; never raises on bad data (the result says ``error``)."""
    started = time.perf_counter()
    program = item.program
    base = ItemResult(
        item_id=item.item_id,
        program_id=program.id,
        scoring=program.scoring,
        tags=dict(program.tags),
        images=[str(p) for p in item.images],
        status="error",
    )
    try:
        images = await asyncio.to_thread(lambda: [load_image(p) for p in item.images])
    except ImageError as exc:
        result = base.model_copy(update={"error": str(exc)})
        return result, ItemUsage(item_id=item.item_id, seconds=time.perf_counter() - started)
    provenance = Provenance(
        toolkit_version=toolkit_version(),
        judge=judge.spec,
        model=judge.model,
        parameters=dict(judge.params),
    )
    ctx = _ItemContext(item, judge, sink, images, provenance)
    if item.prior is not None and item.prior.image_sha256 == [i.part.sha256 for i in images]:
        ctx.kept = settled_decisions(item.prior, item.prior_states)
        ctx.prior_states = dict(item.prior_states)  # else new images: nothing earlier counts
    decisions, gate_failed = await _decide(ctx)
    scored = get_protocol(program.scoring).score_item(program, decisions, gate_failed)
    errors = [f"{d.question_id}: {d.reason}" for d in decisions if d.outcome == "error"]
    result = base.model_copy(
        update={
            "image_sha256": [img.part.sha256 for img in images],
            "status": scored.status,
            "gate_failed": gate_failed,
            "decisions": decisions,
            "scores": scored.scores,
            "error": "; ".join(errors) or None,
        }
    )
    usage = ItemUsage(
        item_id=item.item_id,
        usage=_item_usage(judge, item.item_id, ctx.usage),
        seconds=round(time.perf_counter() - started, 4),
    )
    return result, usage


def settled_decisions(
    prior: ItemResult, states: dict[str, tuple[StateFile, str]]
) -> dict[str, Decision]:
    """Decisions a resume keeps: human ones, and pass/fail/withheld with readable evidence.

    Errors, pending questions and skips are decided again (a skip is free and its
    parent may change); a decision whose state file is missing or damaged is too.
    """
    readable = {path for state, path in states.values() if state.status != "error"}
    return {
        d.question_id: d
        for d in prior.decisions
        if d.source == "human"
        or (
            d.outcome in ("pass", "fail", "withheld")
            and d.source != "skipped"
            and (d.state_file is None or d.state_file in readable)
        )
    }


def _item_usage(judge: Judge, item_id: str, asked: Usage) -> Usage:
    """All the item's judge calls (grounding included) when the judge keeps accounts."""
    account = getattr(judge, "account", None)
    if isinstance(account, Account):
        return account.per_item.pop(item_id, Usage())
    return asked


async def _decide(ctx: _ItemContext) -> tuple[list[Decision], str | None]:
    program = ctx.item.program
    gates = await _decide_wave(ctx, program.gates, "gate", {})
    for d in gates:
        if d.outcome != "pass":
            return gates, (d.question_id if d.outcome == "fail" else None)
    decided: dict[str, Decision] = {}
    remaining = dependency_order(program.hard)
    while remaining:
        wave = [q for q in remaining if all(r in decided for r in q.requires)]
        remaining = [q for q in remaining if q not in wave]
        for d in await _decide_wave(ctx, wave, "hard", decided):
            decided[d.question_id] = d
    return [*gates, *(decided[q.id] for q in program.hard)], None


async def _decide_wave(
    ctx: _ItemContext, questions: list[Question], kind: Kind, decided: dict[str, Decision]
) -> list[Decision]:
    """Decide questions whose parents are decided: skips, checks, then one judge call."""
    out: dict[str, Decision] = {}
    direct: list[Question] = []
    for q in questions:
        blocker = next((decided[r] for r in q.requires if decided[r].outcome != "pass"), None)
        if q.id in ctx.kept:
            out[q.id] = ctx.kept[q.id]
            source = ctx.item.program.state_source(q)
            if source is not None:
                _reuse_state(ctx, source)  # later checks and ``uses`` read it
        elif blocker is not None:
            out[q.id] = _skipped(q, blocker)
        elif q.is_direct:
            direct.append(q)
        else:
            out[q.id] = await _decide_grounded(ctx, q, kind)
        if kind == "gate" and q.id in out and out[q.id].outcome != "pass":
            return list(out.values())  # a failed grounded gate stops before any judge call
    if direct:
        out.update(await _ask(ctx, direct, kind))
    return [out[q.id] for q in questions]


def skipped_decision(q: Question, blocker: Decision) -> Decision:
    """A question not asked because its parent did not pass (outcome: the parent's)."""
    return _skipped(q, blocker)


def _skipped(q: Question, blocker: Decision) -> Decision:
    return Decision(
        question_id=q.id,
        kind="hard",
        outcome=blocker.outcome,
        score=0.0,
        source="skipped",
        reason=f"not asked: requires {blocker.question_id}, which is {blocker.outcome}",
    )


async def _ask(ctx: _ItemContext, questions: list[Question], kind: Kind) -> dict[str, Decision]:
    item, program = ctx.item, ctx.item.program
    answers, ctx.usage = await ask_questions(
        ctx.judge,
        [img.part for img in ctx.images],
        [QuestionRef(q.id, q.ask) for q in questions],
        item_id=item.item_id,
        prompt=program.prompt,
        instructions=program.instructions,
        answer_text=item.answer_text,
        usage=ctx.usage,
    )
    out: dict[str, Decision] = {}
    for q in questions:
        a = answers[q.id]
        if a.result is None:
            out[q.id] = Decision(
                question_id=q.id,
                kind=kind,
                outcome="error",
                score=0.0,
                source="judge",
                reason=a.error or "no answer",
                raw=a.raw,
            )
        else:
            out[q.id] = Decision(
                question_id=q.id,
                kind=kind,
                outcome="pass" if a.result else "fail",
                score=1.0 if a.result else 0.0,
                source="judge",
                reason=a.reason,
                raw=a.raw,
            )
    return out


async def _decide_grounded(ctx: _ItemContext, q: Question, kind: Kind) -> Decision:
    source = ctx.item.program.state_source(q)
    assert source is not None  # the program validator guarantees a state source
    state = await _state_for(ctx, source)
    path = ctx.state_paths.get(source)
    return decide_by_check(q, kind, state, path, dict(ctx.states))


def decide_by_check(
    q: Question,
    kind: Kind,
    state: StateFile,
    path: str | None,
    states: dict[str, StateFile],
    views: ViewCache | None = None,
    previous: Decision | None = None,
) -> Decision:
    """A grounded question's decision from its state (the runner's and rescore's one rule).

    ``states`` maps question ids to the item's other states (cross-question checks).
    ``previous`` (rescore: the decision on record) is returned itself when the check
    decides exactly the same again, so an unchanged item keeps the record it was read as.
    """
    if state.status != "grounded":
        outcome: Outcome = "withheld" if state.status == "withheld" else "error"
        return Decision(
            question_id=q.id,
            kind=kind,
            outcome=outcome,
            score=0.0,
            source="check",
            reason=f"grounding {state.status}: {state.reason}",
            state_file=path,
        )
    assert q.check is not None
    try:
        found = check_fields(q.check, state, extra_states=states, views=views)
        kept = previous.check if previous is not None else None
        if kept is not None and kept.__dict__ == found:
            trace = kept  # the same trace: the record on file (compared below by identity)
        else:
            trace = CheckTrace.model_validate(found)
    except CheckError as exc:  # too close to call is withheld; anything else an error
        close = isinstance(exc, TooCloseToCall)
        return Decision(
            question_id=q.id,
            kind=kind,
            outcome="withheld" if close else "error",
            score=0.0,
            source="check",
            reason=f"too close to call: {exc}" if close else f"check failed to evaluate: {exc}",
            state_file=path,
        )
    fields: dict[str, Any] = {
        "question_id": q.id,
        "kind": kind,
        "outcome": "pass" if trace.score >= 1.0 else "fail",
        "score": trace.score,
        "source": "check",
        "reason": trace.trace,
        "check": trace,
        "state_file": path,
    }
    if previous is not None and previous.__dict__ == {**_DECISION_DEFAULTS, **fields}:
        return previous
    return Decision.model_validate(fields)


_DECISION_DEFAULTS = {
    name: info.get_default(call_default_factory=True)
    for name, info in Decision.model_fields.items()
    if not info.is_required()
}
"""What a :class:`Decision` holds for the fields :func:`decide_by_check` leaves unset."""


async def _state_for(ctx: _ItemContext, source_id: str) -> StateFile:
    """Ground a question once; later ``uses`` read the same state."""
    if source_id in ctx.states:
        return ctx.states[source_id]
    reused = _reuse_state(ctx, source_id)
    if reused is not None:
        return reused
    q = ctx.item.program.question(source_id)
    assert q.ground is not None
    item_id = ctx.item.item_id
    if not ctx.images:
        state = _error_state(ctx, q, "the item has no image to ground on")
    else:
        image = ctx.images[int(q.ground.params.get("image", 0))]
        state = await run_grounding(
            image_bgr=await asyncio.to_thread(lambda: image.bgr),  # decoded on first use
            image=image.part,
            spec=q.ground,
            ask=q.ask,
            item_id=item_id,
            question_id=q.id,
            provenance=ctx.provenance,
            judge=ctx.judge,
            overlays=ctx.sink.overlay_target(item_id) if ctx.sink else None,
        )
    ctx.states[source_id] = state
    if ctx.sink is not None:
        ctx.state_paths[source_id] = ctx.sink.write_state(state)
    return state


def _reuse_state(ctx: _ItemContext, source_id: str) -> StateFile | None:
    """A resumed item's earlier state for this source, unless it was an error."""
    if source_id in ctx.states:
        return ctx.states[source_id]
    found = ctx.prior_states.get(source_id)
    if found is None or found[0].status == "error":
        return None
    state, path = found
    ctx.states[source_id] = state
    ctx.state_paths[source_id] = path
    return state


def _error_state(ctx: _ItemContext, q: Question, reason: str) -> StateFile:
    assert q.ground is not None
    return StateFile(
        item_id=ctx.item.item_id,
        question_id=q.id,
        image_sha256="",
        image_size_wh=[0, 0],
        helper=q.ground.helper,
        target=q.ground.target,
        status="error",
        reason=reason,
        provenance=ctx.provenance,
    )
