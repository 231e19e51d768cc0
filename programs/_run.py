"""A run: many items graded concurrently into one resumable, shardable run folder."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from groundeval.judges._protocol import Judge
from groundeval.programs._loaders import dump_programs_jsonl
from groundeval.programs._model import Program, check_id
from groundeval.programs._runner import ItemInput, grade_item
from groundeval.programs.scoring import get_protocol
from groundeval.state._records import ItemResult, ItemUsage, Usage
from groundeval.state._store import RunStore, RunStoreError, iter_jsonl, shard_of
from groundeval.state._version import toolkit_version

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
    summary: dict[str, Any]


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
) -> RunReport:
    """Grade items into ``out``; with ``resume``, finished items are kept and errors redone."""
    if shard is not None:
        items = [i for i in items if shard_of(i.item_id, shard.count) == shard.index]
    store = RunStore(out)
    programs = list({i.program.id: i.program for i in items}.values())
    full_config = {
        "toolkit_version": toolkit_version(),
        "judge": judge.spec,
        "model": judge.model,
        "parameters": judge.params,
        "shard": str(shard) if shard else None,
        **(config or {}),
    }
    store.start(full_config, dump_programs_jsonl(programs), resume=resume)
    done = store.finished_ids() if resume else set()
    todo = [i for i in items if i.item_id not in done]
    usage = Usage()
    finished = 0

    def on_result(result: ItemResult, item_usage: ItemUsage) -> None:
        nonlocal usage, finished
        store.append(result, item_usage)
        usage = usage.add(item_usage.usage)
        finished += 1
        if progress is not None:
            progress(finished, len(todo))

    runner = executor or LocalExecutor(concurrency)
    await runner.grade(todo, judge=judge, store=store, on_result=on_result)
    wanted = {i.item_id for i in items}
    results = store.finalize([r for r in store.results() if r.item_id in wanted])
    summary = write_summary(store, results)
    return RunReport(results, len(todo), len(items) - len(todo), usage, summary)


def write_summary(store: RunStore, results: list[ItemResult]) -> dict[str, Any]:
    """summary.json / summary.csv from results, one section per scoring protocol used."""
    by_protocol: dict[str, list[ItemResult]] = {}
    for r in results:
        by_protocol.setdefault(r.scoring, []).append(r)
    summary: dict[str, Any] = {
        "items": len(results),
        "status": {s: sum(r.status == s for r in results) for s in ("scored", "withheld", "error")},
        "protocols": {},
    }
    rows: list[dict[str, Any]] = []
    for name, group in sorted(by_protocol.items()):
        protocol = get_protocol(name)
        summary["protocols"][name] = protocol.summarize(group)
        rows += [{"protocol": name, **row} for row in protocol.summary_rows(group)]
    usages = store.usages()
    total = Usage()
    for u in usages:
        total = total.add(u.usage)
    summary["usage"] = total.model_dump(mode="json", exclude={"seconds"})
    store.write_summary(summary, rows)
    return summary


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
