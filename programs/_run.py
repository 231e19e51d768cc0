"""A run: many items graded concurrently into one resumable, shardable run folder."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from groundeval.judges import Judge
from groundeval.programs._loaders import dump_programs_jsonl
from groundeval.programs._model import Program, check_id
from groundeval.programs._runner import ItemInput, grade_item
from groundeval.programs.intervals import add_intervals, interval_config
from groundeval.programs.scoring import get_protocol
from groundeval.state import (
    ItemResult,
    ItemUsage,
    RunStore,
    RunStoreError,
    RunSummary,
    StateFile,
    SummaryError,
    Usage,
    iter_jsonl,
    read_summary,
    shard_of,
    toolkit_version,
    validate_summary,
)

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".webp")


class ItemsError(ValueError):
    """Items that cannot be assembled (missing image, bad manifest line)."""


@dataclass(frozen=True)
class Shard:
    """``i/n``: this run grades the items whose stable hash falls in shard ``i`` of ``n``."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """Parse ``i/n`` (0 <= i < n)."""
        try:
            index, count = (int(x) for x in text.split("/"))
        except ValueError as exc:
            raise ValueError(f"--shard expects i/n such as 0/4, got {text!r}") from exc
        if not 0 <= index < count:
            raise ValueError(f"--shard {text}: need 0 <= i < n")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def items_from_images(programs: list[Program], images_dir: Path) -> list[ItemInput]:
    """One item per program, its image ``DIR/<program id>.<png|jpg|jpeg|webp>``."""
    items = []
    for program in programs:
        found = [images_dir / f"{program.id}{s}" for s in IMAGE_SUFFIXES]
        image = next((p for p in found if p.is_file()), None)
        if image is None:
            raise ItemsError(
                f"{images_dir}: no image for program {program.id!r} "
                f"(looked for {program.id}.png/.jpg/.jpeg/.webp)"
            )
        items.append(ItemInput(program.id, program, [image]))
    return items


def items_from_manifest(programs: list[Program], manifest: Path) -> list[ItemInput]:
    """Items from a JSONL manifest: ``{"id", "program"?, "images": [...], "answer"?}``.

    Relative image paths are relative to the manifest's folder. ``program``
    defaults to ``id``, so several items (one per model) can share a program.
    """
    by_id = {p.id: p for p in programs}
    items: list[ItemInput] = []
    seen: set[str] = set()
    for number, row in iter_jsonl(manifest, ItemsError):
        where = f"{manifest}:{number}"
        try:
            item_id = check_id(str(row["id"]), "item id")
            program_id = str(row.get("program", item_id))
            images = row.get("images", [row["image"]] if "image" in row else [])
        except (KeyError, ValueError) as exc:
            raise ItemsError(f"{where}: {exc}") from exc
        if program_id not in by_id:
            raise ItemsError(f"{where}: program {program_id!r} is not in the program files")
        if item_id in seen:
            raise ItemsError(f"{where}: duplicate item id {item_id!r}")
        if not isinstance(images, list) or not all(isinstance(i, str) for i in images):
            raise ItemsError(f"{where}: 'images' must be a list of paths")
        answer = row.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise ItemsError(f"{where}: 'answer' must be text")
        seen.add(item_id)
        paths = [(manifest.parent / i) if not Path(i).is_absolute() else Path(i) for i in images]
        items.append(ItemInput(item_id, by_id[program_id], paths, answer))
    return items


ResultCallback = Callable[[ItemResult, ItemUsage], None]


class Executor(Protocol):
    """Where items are graded: this process (default) or a cluster (``--executor ray``).

    An executor grades every item once, writes evidence through ``store`` and hands
    each finished result to ``on_result`` in the driver, which alone appends to the
    run folder (so nothing is written twice).
    """

    async def grade(
        self, items: list[ItemInput], *, judge: Judge, store: RunStore, on_result: ResultCallback
    ) -> None:
        """Grade all items, calling ``on_result`` once per item."""
        ...


class LocalExecutor:
    """Items graded concurrently on this process's event loop."""

    def __init__(self, concurrency: int = 8) -> None:
        self.concurrency = max(1, concurrency)

    async def grade(
        self, items: list[ItemInput], *, judge: Judge, store: RunStore, on_result: ResultCallback
    ) -> None:
        """Grade with at most ``concurrency`` items in flight."""
        limit = asyncio.Semaphore(self.concurrency)

        async def one(item: ItemInput) -> None:
            async with limit:
                result, item_usage = await grade_item(item, judge=judge, sink=store)
            on_result(result, item_usage)

        await asyncio.gather(*(one(i) for i in items))


@dataclass
class RunReport:
    """What a run did: results, how many items were graded now, usage."""

    results: list[ItemResult]
    graded: int
    skipped: int
    usage: Usage
    summary: RunSummary
    """summary.json, typed (``summary.as_json()`` for the written dict)."""
    reasked: dict[str, list[str]] = field(default_factory=dict)
    """Resume: items graded again although they had a result, and why (error, pending...)."""


async def run_items(
    items: list[ItemInput],
    *,
    judge: Judge,
    out: Path,
    config: dict[str, Any] | None = None,
    concurrency: int = 8,
    resume: bool = False,
    shard: Shard | None = None,
    progress: Callable[[int, int], None] | None = None,
    executor: Executor | None = None,
    repeat_index: int = 0,
) -> RunReport:
    """Grade items into ``out``; with ``resume``, finished items are kept and the rest redone.

    On resume an item is graded again when it has status ``error``, any ``error``
    or ``pending`` decision, or a state file that does not parse; its settled
    decisions (and every human override) are kept, so only the rest is asked.
    ``repeat_index`` is recorded in run.json (the judge folds it into its cache key),
    so ``agree`` can tell repeats that share cached replies from fresh samples.
    The run folder is locked for the whole run: a second writer is refused.
    """
    if shard is not None:
        items = [i for i in items if shard_of(i.item_id, shard.count) == shard.index]
    store = RunStore(out)
    with store.lock("resume" if resume else "write into"):
        return await _run_locked(
            items,
            store=store,
            judge=judge,
            config=config,
            concurrency=concurrency,
            resume=resume,
            shard=shard,
            progress=progress,
            executor=executor,
            repeat_index=repeat_index,
        )


async def _run_locked(
    items: list[ItemInput],
    *,
    store: RunStore,
    judge: Judge,
    config: dict[str, Any] | None,
    concurrency: int,
    resume: bool,
    shard: Shard | None,
    progress: Callable[[int, int], None] | None,
    executor: Executor | None,
    repeat_index: int,
) -> RunReport:
    programs = list({i.program.id: i.program for i in items}.values())
    full_config = {
        "toolkit_version": toolkit_version(),
        "judge": judge.spec,
        "model": judge.model,
        "parameters": judge.params,
        "shard": str(shard) if shard else None,
        "repeat_index": repeat_index,
        **(config or {}),
    }
    store.start(full_config, dump_programs_jsonl(programs), resume=resume)
    prior = {r.item_id: r for r in store.results()} if resume else {}
    earlier_usage = {u.item_id: u for u in store.usages()} if resume else {}
    reasked: dict[str, list[str]] = {}
    todo: list[ItemInput] = []
    for item in items:
        before = prior.get(item.item_id)
        if before is None:
            todo.append(item)
            continue
        why = store.needs_work(before)
        if why:
            reasked[item.item_id] = why
            todo.append(_with_prior(store, item, before))
    usage = Usage()
    finished = 0

    def on_result(result: ItemResult, item_usage: ItemUsage) -> None:
        nonlocal usage, finished
        spent = earlier_usage.get(result.item_id)
        if spent is not None:  # a re-graded item's usage counts every call it ever made
            item_usage = item_usage.model_copy(
                update={
                    "usage": spent.usage.add(item_usage.usage),
                    "seconds": round(spent.seconds + item_usage.seconds, 4),
                }
            )
        store.append(result, item_usage)
        usage = usage.add(item_usage.usage)
        finished += 1
        if progress is not None:
            progress(finished, len(todo))

    runner = executor or LocalExecutor(concurrency)
    await runner.grade(todo, judge=judge, store=store, on_result=on_result)
    wanted = {i.item_id for i in items}
    results = store.finalize([r for r in store.results() if r.item_id in wanted])
    summary = write_summary(store, results, changed=bool(todo) and bool(prior))
    return RunReport(results, len(todo), len(items) - len(todo), usage, summary, reasked)


def _with_prior(store: RunStore, item: ItemInput, before: ItemResult) -> ItemInput:
    """The item with its earlier result and readable state files (for a partial re-grade)."""
    if before.program_id != item.program.id:
        return item
    states: dict[str, tuple[StateFile, str]] = {}
    for d in before.decisions:
        if d.state_file and all(path != d.state_file for _, path in states.values()):
            try:
                state = store.read_state(d.state_file)
            except RunStoreError:
                continue  # damaged or missing: that question is grounded again
            states[state.question_id] = (state, d.state_file)
    return dataclasses.replace(item, prior=before, prior_states=states)


STATUSES = ("scored", "withheld", "error", "pending")
_PROBLEMS = ("error", "withheld", "pending")


def problem_counts(results: list[ItemResult]) -> dict[str, int]:
    """Items and decisions that are error, withheld or pending, for one summary cell."""
    statuses: Counter[str] = Counter(r.status for r in results)
    outcomes: Counter[str] = Counter(d.outcome for r in results for d in r.decisions)
    return _cell(len(results), statuses, outcomes)


def _cell(items: int, statuses: Counter[str], outcomes: Counter[str]) -> dict[str, int]:
    cell = {"items": items}
    for outcome in _PROBLEMS:
        cell[f"{outcome}_items"] = statuses[outcome]
        cell[f"{outcome}_decisions"] = outcomes[outcome]
    return cell


def problems_section(
    results: list[ItemResult], top: int = 20, *, statuses: Counter[str] | None = None
) -> dict[str, Any]:
    """Error/withheld/pending counts overall and per tag value, and their commonest reasons.

    Every cell of every table can say how many of its items and decisions are not
    scores; the reasons (with an example item) lead to the item pages. One pass over
    the decisions counts them and collects the reasons (``statuses``: the items'
    status counts, when the caller has them already).
    """
    by_tag: dict[str, dict[str, list[ItemResult]]] = {}
    reasons: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    outcomes: Counter[str] = Counter()
    for r in results:
        for key, value in r.tags.items():
            by_tag.setdefault(key, {}).setdefault(value, []).append(r)
        found: list[tuple[str, str, str]] = []
        for d in r.decisions:
            outcomes[d.outcome] += 1
            if d.outcome in _PROBLEMS:
                found.append((d.outcome, d.question_id, d.reason))
        if r.status == "error" and not r.decisions:
            found.append(("error", "", r.error or "no reason recorded"))
        for outcome, question, reason in found:
            slot = (outcome, " ".join(reason.split())[:160])
            reasons[slot] += 1
            example.setdefault(slot, f"{r.item_id}/{question}" if question else r.item_id)
    if statuses is None:
        statuses = Counter(r.status for r in results)
    return {
        "overall": _cell(len(results), statuses, outcomes),
        "by_tag": {
            key: {value: problem_counts(group) for value, group in sorted(groups.items())}
            for key, groups in sorted(by_tag.items())
        },
        "reasons": [
            {"outcome": o, "reason": text, "count": n, "example": example[(o, text)]}
            for (o, text), n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        ],
    }


def write_summary(
    store: RunStore, results: list[ItemResult], *, changed: bool = False
) -> RunSummary:
    """summary.json / summary.csv from results, one section per scoring protocol used.

    Sections something else added to an earlier summary.json (the demo's accuracy
    against the truth) are carried over; with ``changed`` (a rescore that changed
    grades) they are listed under ``not_recomputed``, since they describe the old grades.
    """
    by_protocol: dict[str, list[ItemResult]] = {}
    for r in results:
        by_protocol.setdefault(r.scoring, []).append(r)
    statuses: Counter[str] = Counter(r.status for r in results)
    summary: dict[str, Any] = {
        "items": len(results),
        "status": {s: statuses[s] for s in STATUSES},
        "protocols": {},
        "problems": problems_section(results, statuses=statuses),
    }
    rows: list[dict[str, Any]] = []
    for name, group in sorted(by_protocol.items()):
        protocol = get_protocol(name)
        summary["protocols"][name] = add_intervals(  # m_ci95 beside every metric (issue 14)
            name, group, protocol.summarize(group), interval_config(store)
        )
        rows += [{"protocol": name, **row} for row in protocol.summary_rows(group)]
    summary["usage"] = _total_usage(store).model_dump(mode="json", exclude={"seconds"})
    earlier = _earlier_sections(store, set(summary))
    stale = set(earlier.pop("not_recomputed", []))
    summary.update(earlier)
    if changed:
        stale |= set(earlier)
    if stale:
        summary["not_recomputed"] = sorted(stale)
    typed = validate_summary(summary, f"{store.root / 'summary.json'} (being written)")
    store.write_summary(summary, rows)  # the dict itself: its bytes stay as they were
    return typed


_USAGE_FIELDS = tuple(name for name in Usage.model_fields if name != "seconds")


def _total_usage(store: RunStore) -> Usage:
    """The run's usage: every item's summed as plain numbers (in file order), one model built.

    The same sums as chaining :meth:`Usage.add` (same order, so the same floats),
    without a validated model per item.
    """
    sums: dict[str, Any] = Usage().model_dump(include=set(_USAGE_FIELDS))
    for u in store.usages():
        usage = u.usage.__dict__
        for name in _USAGE_FIELDS:
            sums[name] += usage[name]
    return Usage(**sums)


def _earlier_sections(store: RunStore, own: set[str]) -> dict[str, Any]:
    """Sections of the existing summary.json that this module does not compute.

    Only those are read: the sections written here are rebuilt from results.jsonl,
    so a summary of an older shape is replaced, never a reason to refuse a rescore.
    A file that is not a JSON object is an error naming it, not a silent loss of
    the sections it carries.
    """
    path = store.root / "summary.json"
    if not path.is_file():
        return {}
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunStoreError(
            f"{path}: cannot read the summary to carry its extra sections over: {exc} "
            "(delete the file to rebuild it from results.jsonl)"
        ) from exc
    if not isinstance(earlier, dict):
        raise RunStoreError(f"{path}: expected a JSON object, got {type(earlier).__name__}")
    return {k: v for k, v in earlier.items() if k not in own or k == "not_recomputed"}


def read_run_summary(store: RunStore) -> RunSummary:
    """A run folder's summary.json, checked against the model (RunStoreError naming the field)."""
    path = store.root / "summary.json"
    try:
        return read_summary(path)
    except OSError as exc:
        raise RunStoreError(f"{path}: cannot read the summary: {exc}") from exc
    except SummaryError as exc:
        raise RunStoreError(f"{exc} (delete the file to rebuild it from results.jsonl)") from exc


def load_run_programs(store: RunStore) -> dict[str, Program]:
    """The programs a run folder was graded with."""
    try:
        return {
            p.id: p
            for p in (Program.model_validate(row) for _, row in iter_jsonl(store.programs_path))
        }
    except (OSError, ValueError) as exc:
        raise RunStoreError(
            f"{store.programs_path}: cannot read the run's programs: {exc}"
        ) from exc


def progress_printer(label: str) -> Callable[[int, int], None] | None:
    """A rich progress bar on a terminal, nothing otherwise (batch logs stay clean)."""
    if not sys.stderr.isatty():
        return None
    from rich.progress import Progress

    bar = Progress(transient=True)
    task = bar.add_task(label, total=None)
    bar.start()

    def update(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)
        if done >= total:
            bar.stop()

    return update
