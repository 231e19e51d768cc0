"""The offline demo: synthetic scenes graded end to end, scored against their exact truth."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

from groundeval.benchmarks.synthetic._effects import DIFFICULTIES
from groundeval.benchmarks.synthetic._suite import write_suite
from groundeval.judges import build_judge
from groundeval.programs import items_from_images, load_programs, run_items
from groundeval.state import ItemResult, RunStore, atomic_write, iter_jsonl
from groundeval.state.report import write_report


def accuracy_vs_truth(
    results: list[ItemResult], truth: dict[str, str], group_of: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Shares of decisions right, wrong and withheld (errors too) per group.

    Only decisions that were made count: a question skipped after a failed gate or
    parent has no verdict of its own. ``truth`` maps ``item/question`` to pass/fail.
    """
    counts: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(_BUCKETS, 0))
    for result in results:
        group = group_of[result.item_id]
        for d in result.decisions:
            expected = truth.get(f"{result.item_id}/{d.question_id}")
            if expected is None or d.source == "skipped":
                continue
            bucket: str = d.outcome
            if d.outcome in ("pass", "fail"):
                bucket = "right" if d.outcome == expected else "wrong"
            counts[group][bucket] += 1
    table: dict[str, dict[str, Any]] = {}
    order = {level: i for i, level in enumerate(DIFFICULTIES)}
    for group in sorted(counts, key=lambda g: (order.get(g, len(order)), g)):
        total = sum(counts[group].values())
        table[group] = {
            **{b: round(n / total, 4) for b, n in counts[group].items()},
            "decisions": total,
        }
    return table


_BUCKETS = ("right", "wrong", "withheld", "error")


def run_demo(out: Path, *, per_scene: int = 4, seed: int = 0) -> dict[str, Any]:
    """Generate scenes, grade them offline into ``out``, write accuracy and the report."""
    out = Path(out)
    _clear_previous_demo(out)
    inputs = out / "inputs"
    write_suite(inputs, n_per_scene=per_scene, difficulties=DIFFICULTIES, seed=seed)
    programs = load_programs(inputs / "programs.jsonl")
    items = items_from_images(programs, inputs)
    config = {"demo": True, "per_scene": per_scene, "seed": seed}
    report = asyncio.run(run_items(items, judge=build_judge("offline"), out=out, config=config))
    truth: dict[str, str] = {}
    difficulty: dict[str, str] = {}
    scene: dict[str, str] = {}
    for _, row in iter_jsonl(inputs / "truth.jsonl"):
        truth.update(row["answers"])
        difficulty[row["id"]] = row["difficulty"]
        scene[row["id"]] = f"{row['scene']}/{row['difficulty']}"
    summary = report.summary.as_json()
    summary["accuracy_vs_truth"] = accuracy_vs_truth(report.results, truth, difficulty)
    summary["accuracy_by_scene"] = accuracy_vs_truth(report.results, truth, scene)
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n")
    write_report([out])
    return summary


def _clear_previous_demo(out: Path) -> None:
    """A demo folder is rebuilt on every run; any other run folder is left alone."""
    store = RunStore(out)
    if not store.config_path.exists():
        return
    if store.config().get("demo") is not True:
        raise ValueError(f"{out}: holds a run that is not a demo; choose another --out")
    shutil.rmtree(out)
