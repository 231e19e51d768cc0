"""Reading run folders into what the report shows: runs, items, decisions, usage."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundeval.programs import ArchivedOverride, Program, load_run_programs, read_override_archive
from groundeval.state._records import Decision, ItemResult, ItemUsage, StateFile
from groundeval.state._store import RunStore, RunStoreError

OUTCOMES: tuple[str, ...] = ("pass", "fail", "withheld", "error", "pending")


class ReportError(ValueError):
    """A run folder the report cannot be built from (names the folder and the problem)."""


@dataclass
class RunData:
    """One run folder, read once: config, programs, results by item, usage by item."""

    root: Path
    label: str
    config: dict[str, Any]
    programs: dict[str, Program]
    results: list[ItemResult]
    usage: dict[str, ItemUsage]
    archive: list[ArchivedOverride] = field(default_factory=list)
    """Every override applied to the run (RUN/overrides.jsonl), oldest first."""
    by_id: dict[str, ItemResult] = field(init=False)

    def __post_init__(self) -> None:
        self.by_id = {r.item_id: r for r in self.results}

    def last_override(self, item_id: str, question_id: str) -> ArchivedOverride | None:
        """The latest archived override of one decision (who and when)."""
        found = [a for a in self.archive if a.item == item_id and a.question == question_id]
        return found[-1] if found else None

    @property
    def store(self) -> RunStore:
        """The run store over this folder."""
        return RunStore(self.root)

    def read_state(self, relative: str) -> StateFile | str:
        """The state file, or the reason it cannot be read (shown on the item page)."""
        try:
            return self.store.read_state(relative)
        except RunStoreError as exc:
            return str(exc)


def load_run(root: Path, label: str) -> RunData:
    """Read one run folder; a folder without run.json or results.jsonl is refused."""
    store = RunStore(root)
    for path in (store.config_path, store.results_path):
        if not path.is_file():
            raise ReportError(f"{root}: not a run folder (no {path.name})")
    try:
        config = store.config()
        programs = load_run_programs(store)
        results = sorted(store.results(), key=lambda r: r.item_id)
        usage = {u.item_id: u for u in store.usages()}
        archive = read_override_archive(store)
    except RunStoreError as exc:
        raise ReportError(str(exc)) from exc
    return RunData(root, label, config, programs, results, usage, archive)


def load_runs(roots: list[Path]) -> list[RunData]:
    """Read every run; labels are the folder names, made unique when two share a name."""
    if not roots:
        raise ReportError("give at least one run folder")
    labels: list[str] = []
    for root in roots:
        name = Path(root).resolve().name or "run"
        label, n = name, 2
        while label in labels:
            label, n = f"{name} ({n})", n + 1
        labels.append(label)
    return [load_run(Path(r), lab) for r, lab in zip(roots, labels, strict=True)]


def item_outcome(result: ItemResult) -> str:
    """One word per item for the list: error, withheld, pending, fail (any failed) or pass."""
    if result.status in ("error", "withheld", "pending"):
        return result.status
    if result.gate_failed or any(d.outcome == "fail" for d in result.decisions):
        return "fail"
    return "pass"


def decision_key(result: ItemResult) -> dict[str, str]:
    """Question id -> outcome, what two runs are compared on."""
    return {d.question_id: d.outcome for d in result.decisions}


def disagrees(first: ItemResult, others: list[ItemResult | None]) -> bool:
    """True when another run graded a shared question differently, or the item's status differs."""
    mine = decision_key(first)
    for other in others:
        if other is None:
            continue
        if other.status != first.status:
            return True
        theirs = decision_key(other)
        if any(theirs[q] != o for q, o in mine.items() if q in theirs):
            return True
    return False


def score_keys(results: list[ItemResult]) -> list[str]:
    """Score names in first-seen order (strict, relaxed; easy, hard, all; score ...)."""
    return list(dict.fromkeys(k for r in results for k in r.scores))


def format_score(value: float | None) -> str:
    """A score for a table cell: 4 significant decimals, a dash when undefined."""
    return "–" if value is None else f"{value:.4g}"


def overrides_key(run: RunData) -> str:
    """The localStorage key of a run's pending overrides: stable across re-renders and rescoring."""
    config = json.dumps(run.config, sort_keys=True)
    digest = hashlib.sha256(f"{run.root.resolve()}\n{config}".encode()).hexdigest()[:16]
    return f"groundeval:overrides:{digest}"


def overridden(decisions: list[Decision]) -> int:
    """How many decisions a human overruled."""
    return sum(d.source == "human" for d in decisions)
