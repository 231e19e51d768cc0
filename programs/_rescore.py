"""Rescoring a run from its files (zero judge calls), human overrides, and shard merges."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from groundeval.programs._model import Program
from groundeval.programs._run import load_run_programs, write_summary
from groundeval.programs.scoring import get_protocol
from groundeval.state._records import Decision, ItemResult, ItemUsage, Outcome, Override, StateFile
from groundeval.state._store import RunStore, RunStoreError, atomic_write, iter_jsonl


class OverrideRow(BaseModel):
    """One line of an overrides JSONL: a human's decision on one question of one item."""

    model_config = ConfigDict(extra="forbid")

    item: str
    question: str
    outcome: Outcome
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
    """How many items and decisions a rescore touched."""

    items: int
    rechecked: int
    overridden: int
    unknown_overrides: list[str]


def rescore_run(run: Path, overrides: Path | None = None) -> RescoreReport:
    """Recompute every score from state files and stored decisions; apply overrides."""
    from groundeval.programs._checks import CheckError, run_check

    store = RunStore(run)
    store.config()
    programs = load_run_programs(store)
    rows = load_overrides(overrides) if overrides else {}
    used: set[tuple[str, str]] = set()
    rechecked = overridden = 0
    results: list[ItemResult] = []
    for result in sorted(store.results(), key=lambda r: r.item_id):
        program = programs.get(result.program_id)
        if program is None:
            raise RunStoreError(f"{store.programs_path}: no program {result.program_id!r}")
        decisions: list[Decision] = []
        states: dict[str, StateFile] = {}
        for d in result.decisions:
            if d.source == "check" and d.state_file and d.check is not None:
                if d.state_file not in states:
                    states[d.state_file] = store.read_state(d.state_file)
                state = states[d.state_file]
                question = program.question(d.question_id)
                if question.check is not None:
                    try:
                        trace = run_check(question.check, state)
                    except CheckError as exc:
                        raise RunStoreError(f"{d.state_file}: check no longer runs: {exc}") from exc
                    d = d.model_copy(
                        update={
                            "check": trace,
                            "score": trace.score,
                            "reason": trace.trace,
                            "outcome": "pass" if trace.score >= 1.0 else "fail",
                        }
                    )
                    rechecked += 1
            key = (result.item_id, d.question_id)
            if key in rows:
                d = _apply(d, rows[key])
                used.add(key)
                overridden += 1
            decisions.append(d)
        results.append(_rescored(program, result, decisions))
    store.finalize(results, usage=False)  # rescoring changes grades, never costs
    write_summary(store, results)
    unknown = sorted(f"{i}/{q}" for i, q in set(rows) - used)
    return RescoreReport(len(results), rechecked, overridden, unknown)


def _apply(d: Decision, row: OverrideRow) -> Decision:
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
            "author": row.author,
            "original": original,
        }
    )


def _rescored(program: Program, result: ItemResult, decisions: list[Decision]) -> ItemResult:
    gates = [d for d in decisions if d.kind == "gate"]
    gate_failed = next((d.question_id for d in gates if d.outcome == "fail"), None)
    asked = {d.question_id for d in decisions}
    missing = [q.id for q in program.questions if q.id not in asked]
    if gate_failed is None and missing:
        error = (
            f"no decision for {', '.join(missing)} (a gate was overridden to pass?): "
            "grade the item again with `groundeval run --resume` after removing it"
        )
        return result.model_copy(
            update={
                "decisions": decisions,
                "gate_failed": None,
                "status": "error",
                "scores": {},
                "error": error,
            }
        )
    scored = get_protocol(program.scoring).score_item(program, decisions, gate_failed)
    errors = [f"{d.question_id}: {d.reason}" for d in decisions if d.outcome == "error"]
    return result.model_copy(
        update={
            "decisions": decisions,
            "gate_failed": gate_failed,
            "status": scored.status,
            "scores": scored.scores,
            "error": "; ".join(errors) or None,
        }
    )


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
        usages = {u.item_id: u for u in source.usages()}
        for result in source.results():
            target.append(result, usages.get(result.item_id, ItemUsage(item_id=result.item_id)))
    final = target.finalize()
    write_summary(target, final)
    return len(final)
