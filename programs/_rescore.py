"""Rescoring a run from its files (zero judge calls), human overrides, and shard merges."""

from __future__ import annotations

import gc
import getpass
import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundeval.programs._expressions import ViewCache
from groundeval.programs._model import Program, Question, dependency_order
from groundeval.programs._run import load_run_programs, write_summary
from groundeval.programs._runner import Kind, decide_by_check, skipped_decision
from groundeval.programs.scoring import ScoringProtocol, get_protocol
from groundeval.state import (
    Decision,
    ItemResult,
    ItemUsage,
    Override,
    RunStore,
    RunStoreError,
    StateFile,
    atomic_write,
    iter_jsonl,
    record_line,
)

OverrideOutcome = Literal["pass", "fail", "withheld", "error"]


class OverrideRow(BaseModel):
    """One line of an overrides JSONL: a human's decision on one question of one item."""

    model_config = ConfigDict(extra="forbid")

    item: str
    question: str
    outcome: OverrideOutcome
    note: str = ""
    author: str = ""
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    """Partial mark; defaults to 1 for pass and 0 otherwise."""


def load_overrides(path: Path) -> dict[tuple[str, str], OverrideRow]:
    """Read an overrides file; later lines win."""
    rows: dict[tuple[str, str], OverrideRow] = {}
    for number, raw in iter_jsonl(path):
        try:
            row = OverrideRow.model_validate(raw)
        except ValidationError as exc:
            raise RunStoreError(f"{path}:{number}: invalid override: {exc}") from exc
        rows[(row.item, row.question)] = row
    return rows


@dataclass
class RescoreReport:
    """What a rescore did: items, re-run checks, overrides, and what still needs work."""

    items: int
    rechecked: int
    overridden: int
    unknown_overrides: list[str]
    pending: list[str] = field(default_factory=list)
    """``item/question`` awaiting a judge answer or a grounding (``run --resume`` asks them)."""
    broken_states: dict[str, str] = field(default_factory=dict)
    """State files that do not parse -> the problem (their decisions became ``error``)."""
    changed: int = 0
    """Items whose result changed."""
    archived: int = 0
    """Overrides appended to the run's overrides.jsonl."""


def rescore_run(
    run: Path,
    overrides: Path | None = None,
    *,
    author: str = "",
    now: datetime | None = None,
) -> RescoreReport:
    """Recompute every decision a check makes and every score; apply and archive overrides.

    Checks get the states the run gave them (own, ``uses``, grounded ``requires``,
    other questions' states for ``question=``). Questions below an overridden parent
    are decided again: by their check when its state exists, else they become
    ``pending`` for ``run --resume``. Applied overrides are appended to
    ``RUN/overrides.jsonl`` with author (row, else ``author``, else the login
    name), note and time. With nothing to change, results.jsonl and summary.json
    come out byte-identical. The run folder is locked while this runs.
    """
    store = RunStore(run)
    store.config()
    rows = load_overrides(overrides) if overrides else {}
    with store.lock("rescore"), _gc_paused():
        return _rescore_locked(store, rows, overrides, author, now)


def _rescore_locked(
    store: RunStore,
    rows: dict[tuple[str, str], OverrideRow],
    overrides: Path | None,
    author: str,
    now: datetime | None,
) -> RescoreReport:
    programs = load_run_programs(store)
    work = _Rescore(store, rows, author or _login())
    as_read = store.result_lines()
    read = sorted(_with_lines(as_read), key=lambda pair: pair[0].item_id)
    same_file = _is_whole_file(store, as_read, read)
    results: list[ItemResult] = []
    lines: list[bytes] = []
    changed = 0
    for result, line in read:
        program = programs.get(result.program_id)
        if program is None:
            raise RunStoreError(f"{store.programs_path}: no program {result.program_id!r}")
        new = work.item(program, result)
        results.append(new)
        if new is result or new == result:
            lines.append(line)  # an unchanged item keeps its line, byte for byte
        else:
            changed += 1
            lines.append(record_line(new).encode())
    # as RunStore.finalize: sorted, one line per item; rescoring changes grades, never costs
    data = b"".join(lines)
    if changed or not (same_file or store.results_path.read_bytes() == data):
        atomic_write(store.results_path, data)  # one buffered write, fsync'd
    write_summary(store, results, changed=changed > 0)
    archived = _archive(store, work.applied, overrides, now or datetime.now(UTC))
    unknown = sorted(
        f"{i}/{q}" + (f" ({work.unreached[(i, q)]})" if (i, q) in work.unreached else "")
        for i, q in set(rows) - {(a.item, a.question) for a, _, _ in work.applied}
    )
    return RescoreReport(
        items=len(results),
        rechecked=work.rechecked,
        overridden=len(work.applied),
        unknown_overrides=unknown,
        pending=work.pending,
        broken_states=work.broken,
        changed=changed,
        archived=archived,
    )


@contextmanager
def _gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while a rescore builds its (acyclic) records.

    Tens of thousands of small records trigger the collector again and again,
    each pass walking every live record (a quarter of the time at 2,000 items);
    reference counting still frees everything, and the collector runs again after.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _with_lines(
    as_read: list[tuple[ItemResult, bytes]],
) -> list[tuple[ItemResult, bytes]]:
    """The latest result per item with its line as written (``RunStore.results`` rules).

    Each line is parsed once (pydantic's JSON parser, straight into the records).
    Keeping the bytes lets an unchanged item be written back without encoding it
    again (lines are written canonical, so the bytes are the same); a torn last
    line is ignored, as a run does.
    """
    return [
        (result, line if line.endswith(b"\n") else record_line(result).encode())
        for result, line in as_read
    ]


def _is_whole_file(
    store: RunStore,
    as_read: list[tuple[ItemResult, bytes]],
    ordered: list[tuple[ItemResult, bytes]],
) -> bool:
    """Whether the sorted lines, joined, are results.jsonl as it is (no second read needed).

    ``result_lines`` gives slices of the file in file order, skipping blank, torn and
    superseded lines; when every line came back terminated, already in sorted order,
    and their lengths add up to the file's size, nothing was skipped or moved.
    """
    if len(as_read) != len(ordered):
        return False
    if any(a[0] is not b[0] for a, b in zip(as_read, ordered, strict=True)):
        return False
    if not all(line.endswith(b"\n") for _, line in as_read):
        return False
    try:
        size = store.results_path.stat().st_size
    except OSError:
        return False
    return sum(len(line) for _, line in as_read) == size


def _login() -> str:
    try:
        return getpass.getuser()
    except (OSError, KeyError):
        return ""


@dataclass(frozen=True)
class _Plan:
    """What a rescore needs of one program, worked out once rather than once per item."""

    program: Program
    order: list[Question]
    """Hard questions in dependency order (parents first)."""
    sources: dict[str, str | None]
    """Question id -> the question whose state its check reads (None: a judge answers it)."""
    protocol: ScoringProtocol
    answered: frozenset[str]
    """Questions no check decides and nothing gates (no ``requires``): a judge answers them."""

    @classmethod
    def of(cls, program: Program) -> _Plan:
        sources = {
            q.id: None if q.is_direct else program.state_source(q) for q in program.questions
        }
        order = dependency_order(program.hard)
        answered = frozenset(
            q.id for q in program.questions if sources[q.id] is None and not q.requires
        )
        return cls(program, order, sources, get_protocol(program.scoring), answered)


class _Rescore:
    """One rescore pass: the run's rule for every question, overrides on top."""

    def __init__(self, store: RunStore, rows: dict[tuple[str, str], OverrideRow], author: str):
        self.store = store
        self.rows = rows
        self.author = author
        self.rechecked = 0
        self.applied: list[tuple[OverrideRow, Decision, Override]] = []
        self.unreached: dict[tuple[str, str], str] = {}
        self.pending: list[str] = []
        self.broken: dict[str, str] = {}
        self._plans: dict[int, _Plan] = {}

    def _plan(self, program: Program) -> _Plan:
        plan = self._plans.get(id(program))
        if plan is None or plan.program is not program:
            plan = self._plans[id(program)] = _Plan.of(program)
        return plan

    def item(self, program: Program, result: ItemResult) -> ItemResult:
        """The item re-decided: gates, then hard questions in dependency order."""
        if result.status == "error" and not result.decisions:
            return result  # never graded (no image): nothing to rescore
        plan = self._plan(program)
        item = _ItemState(result)
        for d in result.decisions:
            if d.state_file and d.state_file not in item.paths.values():
                if d.state_file in item.broken:
                    continue
                try:
                    state = self.store.read_state(d.state_file)
                except RunStoreError as exc:
                    item.broken[d.state_file] = str(exc)
                    continue
                item.states[state.question_id] = state
                item.paths[state.question_id] = d.state_file
        if item.broken:
            self.broken.update(item.broken)
        gates: list[Decision] = []
        stopped: Decision | None = None
        for g in program.gates:
            if stopped is not None and g.id not in item.stored:
                self._unreached(result.item_id, g.id, stopped)
                continue
            d = self._settle(plan, item, g, "gate", {})
            gates.append(d)
            if d.outcome != "pass" and stopped is None:
                stopped = d
        if stopped is not None:  # as in a run, the hard questions are not part of the item
            for q in program.hard:
                self._unreached(result.item_id, q.id, stopped)
            # ... but a human's word is never dropped (and comes back if the gate passes)
            human = [item.stored[q.id] for q in program.hard if q.id in item.stored]
            human = [d for d in human if d.source == "human"]
            gate_failed = stopped.question_id if stopped.outcome == "fail" else None
            return self._scored(plan, result, [*gates, *human], gate_failed)
        decided: dict[str, Decision] = {}
        for q in plan.order:
            decided[q.id] = self._settle(plan, item, q, "hard", decided)
        gates.extend([decided[q.id] for q in program.hard])
        return self._scored(plan, result, gates, None)

    def _unreached(self, item_id: str, question_id: str, gate: Decision) -> None:
        why = f"not applied: gate {gate.question_id} is {gate.outcome}"
        self.unreached[(item_id, question_id)] = why

    def _settle(
        self,
        plan: _Plan,
        item: _ItemState,
        q: Question,
        kind: Kind,
        decided: dict[str, Decision],
    ) -> Decision:
        """The question decided again (:meth:`_redecide`), then a human override on top."""
        d = item.stored.get(q.id) if q.id in plan.answered and not item.broken else None
        if d is None or d.source == "skipped":  # else the judge's or a human's word, kept
            d = self._redecide(plan, item, q, kind, decided)
        if self.rows:
            row = self.rows.get((item.result.item_id, q.id))
            if row is not None:
                before = Override(
                    outcome=d.outcome, score=d.score, source=d.source, reason=d.reason
                )
                d = _apply(d, row, self.author)
                self.applied.append((row, d, before))
        if d.outcome == "pending":
            self.pending.append(f"{item.result.item_id}/{q.id}")
        return d

    def _redecide(
        self,
        plan: _Plan,
        item: _ItemState,
        q: Question,
        kind: Kind,
        decided: dict[str, Decision],
    ) -> Decision:
        d = item.stored.get(q.id)
        if d is not None:
            if d.source == "human":
                return d
            if item.broken and d.state_file in item.broken:
                return d.model_copy(
                    update={
                        "outcome": "error",
                        "score": 0.0,
                        "reason": f"state file cannot be read ({item.broken[d.state_file]}); "
                        "`groundeval run --resume` grounds this question again",
                        "check": None,
                    }
                )
        for r in q.requires:
            if decided[r].outcome != "pass":
                return skipped_decision(q, decided[r])
        source = plan.sources[q.id]
        if source is not None and source in item.states:
            self.rechecked += 1
            # the item's states are only read, so every check shares them (and their views)
            # an unchanged decision comes back as the record read (no copy, no re-encoding)
            return decide_by_check(
                q, kind, item.states[source], item.paths[source], item.states, item.views, d
            )
        if d is not None and d.source != "skipped":
            return d  # a judge's answer, or an error that left no state file
        was = (
            f"was not asked before (the decision said: {d.reason})"
            if d is not None
            else "was never decided"
        )
        needs = "a judge answer" if q.is_direct else "its grounding"
        return Decision(
            question_id=q.id,
            kind=kind,
            outcome="pending",
            score=0.0,
            source="judge" if q.is_direct else "check",
            reason=f"pending: needs {needs}; it {was}; "
            "`groundeval run --resume` with the run's arguments decides it",
        )

    @staticmethod
    def _scored(
        plan: _Plan, result: ItemResult, decisions: list[Decision], gate_failed: str | None
    ) -> ItemResult:
        errors: list[str] = []
        pending: list[str] = []
        for d in decisions:
            if d.outcome == "error":
                errors.append(f"{d.question_id}: {d.reason}")
            elif d.outcome == "pending":
                pending.append(d.question_id)
        scores: dict[str, float | None]
        error: str | None
        if pending:
            note = (
                f"pending: {', '.join(pending)} await(s) a judge answer or grounding after an "
                "override; run `groundeval run --resume` with the run's arguments"
            )
            status, scores, error = "pending", {}, "; ".join([note, *errors])
        else:
            scored = plan.protocol.score_item(plan.program, decisions, gate_failed)
            status, scores, error = scored.status, scored.scores, "; ".join(errors) or None
        if (
            status == result.status
            and gate_failed == result.gate_failed
            and error == result.error
            and scores == result.scores
            and _same(result.decisions, decisions)
        ):
            return result  # nothing changed: the record as read, no copy
        update = {
            "decisions": decisions,
            "gate_failed": gate_failed,
            "status": status,
            "scores": scores,
            "error": error,
        }
        return result.model_copy(update=update)


def _same(old: list[Decision], new: list[Decision]) -> bool:
    """Equal decision lists; cheap when the rescore kept the records it read."""
    if len(old) != len(new):
        return False
    for a, b in zip(old, new, strict=True):
        if a is not b and a != b:
            return False
    return True


class _ItemState:
    """One item's stored decisions, its states as read, and views its checks share."""

    __slots__ = ("broken", "paths", "result", "states", "stored", "views")

    def __init__(self, result: ItemResult) -> None:
        self.result = result
        self.states: dict[str, StateFile] = {}
        self.paths: dict[str, str] = {}
        self.broken: dict[str, str] = {}
        """State files that do not parse -> the problem."""
        self.stored = {d.question_id: d for d in result.decisions}
        self.views = ViewCache()
        """Element views shared by the item's checks (its states are read once, never changed)."""


def _apply(d: Decision, row: OverrideRow, author: str) -> Decision:
    original = d.original or Override(
        outcome=d.outcome, score=d.score, source=d.source, reason=d.reason
    )
    score = row.score if row.score is not None else (1.0 if row.outcome == "pass" else 0.0)
    return d.model_copy(
        update={
            "outcome": row.outcome,
            "score": score,
            "source": "human",
            "reason": row.note or f"overridden to {row.outcome}",
            "note": row.note,
            "author": row.author or author,
            "original": original,
        }
    )


class ArchivedOverride(BaseModel):
    """One line of ``RUN/overrides.jsonl``: who overruled what, when, and what it was."""

    model_config = ConfigDict(extra="forbid")

    time: str
    """UTC, ISO 8601, when the rescore applied it."""
    author: str
    item: str
    question: str
    outcome: OverrideOutcome
    score: float
    note: str = ""
    previous: Override | None = None
    """The decision just before this override (a judge's, a check's or an earlier human's)."""
    original: Override | None = None
    """The machine decision the first override replaced."""
    file: str = ""
    """The overrides file it came from."""


def read_override_archive(store: RunStore) -> list[ArchivedOverride]:
    """Every override ever applied to the run, oldest first (empty when none)."""
    if not store.overrides_path.exists():
        return []
    out = []
    for number, raw in iter_jsonl(store.overrides_path):
        try:
            out.append(ArchivedOverride.model_validate(raw))
        except ValidationError as exc:
            raise RunStoreError(f"{store.overrides_path}:{number}: invalid entry: {exc}") from exc
    return out


def _archive(
    store: RunStore,
    applied: list[tuple[OverrideRow, Decision, Override]],
    source: Path | None,
    when: datetime,
) -> int:
    """Append the applied overrides to ``RUN/overrides.jsonl`` (one fsync'd write)."""
    if not applied:
        return 0
    stamp = when.astimezone(UTC).isoformat(timespec="seconds")
    lines = []
    for row, d, previous in applied:
        entry = ArchivedOverride(
            time=stamp,
            author=d.author,
            item=row.item,
            question=row.question,
            outcome=row.outcome,
            score=d.score,
            note=row.note,
            previous=previous,
            original=d.original,
            file=str(source) if source else "",
        )
        lines.append(record_line(entry))
    with store.overrides_path.open("a", encoding="utf-8") as handle:
        handle.write("".join(lines))
        handle.flush()
        os.fsync(handle.fileno())
    return len(lines)


def merge_runs(out: Path, shards: list[Path]) -> int:
    """Join shard folders into one run folder; returns the number of items."""
    if not shards:
        raise RunStoreError("merge needs at least one shard folder")
    configs = [RunStore(s).config() for s in shards]
    base = {k: v for k, v in configs[0].items() if k != "shard"}
    for shard, config in zip(shards, configs, strict=True):
        other = {k: v for k, v in config.items() if k != "shard"}
        if other != base:
            changed = sorted(k for k in set(base) | set(other) if base.get(k) != other.get(k))
            raise RunStoreError(
                f"{shard}/run.json: differs from {shards[0]} in {', '.join(changed)}"
            )
    target = RunStore(out)
    with target.lock("merge into"):
        return _merge_locked(target, shards, base)


def _merge_locked(target: RunStore, shards: list[Path], base: dict[str, object]) -> int:
    out = target.root
    if target.config_path.exists():
        raise RunStoreError(f"{out}: already holds a run; merge into a new folder")
    programs: dict[str, dict[str, object]] = {}
    for shard in shards:
        for _, row in iter_jsonl(RunStore(shard).programs_path):
            programs[str(row["id"])] = row
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(
        target.config_path, json.dumps({**base, "shard": None}, indent=2, sort_keys=True) + "\n"
    )
    atomic_write(
        target.programs_path,
        "".join(json.dumps(programs[k], sort_keys=True) + "\n" for k in sorted(programs)),
    )
    for shard in shards:
        source = RunStore(shard)
        for folder in ("state", "evidence"):
            if (shard / folder).is_dir():
                shutil.copytree(shard / folder, out / folder, dirs_exist_ok=True)
        if source.overrides_path.exists():  # the audit trail travels with the decisions
            with target.overrides_path.open("a", encoding="utf-8") as handle:
                handle.write("".join(record_line(a) for a in read_override_archive(source)))
        usages = {u.item_id: u for u in source.usages()}
        for result in source.results():
            target.append(result, usages.get(result.item_id, ItemUsage(item_id=result.item_id)))
    final = target.finalize()
    write_summary(target, final)
    return len(final)
