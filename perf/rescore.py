"""Rescore speed: 10,000 items x 10 decisions, against a bare json.loads of the same files.

Builds a run folder (2 judge gates, 4 judge hard questions, 4 checks over one
grounding state per item), then times `rescore_run` and a plain json.loads of
results.jsonl plus every state file, alternating. Prints items/s, peak RSS and the
ratio of the medians, in wall-clock time (the goal) and in CPU time (steadier on a
shared machine). `--run DIR` keeps the folder to time again without rebuilding it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _fake_run import (  # perf/ is on sys.path when a script runs
    dice_decisions,
    dice_elements,
    dice_state,
    program,
)

from groundeval.programs._loaders import dump_programs_jsonl
from groundeval.programs._rescore import rescore_run
from groundeval.programs._run import write_summary
from groundeval.state import ItemResult, ItemUsage
from groundeval.state._store import RunStore


def build(root: Path, n: int) -> None:
    store = RunStore(root)
    prog = program()
    store.start({"judge": "scripted"}, dump_programs_jsonl([prog]), resume=False)
    for i in range(n):
        item = f"item-{i:05d}"
        state = dice_state(item, dice_elements(i))
        decisions = dice_decisions(i, prog, state, store.write_state(state))
        result = ItemResult(
            item_id=item,
            program_id="dice",
            scoring="grounded",
            status="scored",
            decisions=decisions,
            scores={"strict": 0.0, "relaxed": 0.0},
        )
        store.append(result, ItemUsage(item_id=item))
    write_summary(store, store.finalize())


def bare_json(root: Path) -> None:
    for line in (root / "results.jsonl").read_text().split("\n")[:-1]:
        json.loads(line)
    for path in sorted((root / "state").rglob("*.json")):
        json.loads(path.read_bytes())


def timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall-clock, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def measure(root: Path, items: int, repeat: int) -> None:
    """Alternate a bare load and a rescore ``repeat`` times; print the medians and ratios."""
    rescore_runs, bare_runs = [], []
    for _ in range(repeat):
        bare_runs.append(timed(lambda: bare_json(root)))
        rescore_runs.append(timed(lambda: rescore_run(root)))
    (rescore_s, rescore_cpu), (bare_s, bare_cpu) = (
        tuple(statistics.median(run[k] for run in runs) for k in (0, 1))
        for runs in (rescore_runs, bare_runs)
    )
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rescore: median {rescore_s:.2f} s = {items / rescore_s:,.0f} items/s")
    print(f"bare json.loads of the same files: median {bare_s:.2f} s")
    print(f"ratio rescore / json.loads: {rescore_s / bare_s:.2f}x (goal <= 2x)")
    print(f"  in CPU time: {rescore_cpu:.2f} s / {bare_cpu:.2f} s = {rescore_cpu / bare_cpu:.2f}x")
    pairs = zip(rescore_runs, bare_runs, strict=True)
    print("  each run: " + ", ".join(f"{r[0] / b[0]:.2f}x" for r, b in pairs))
    print(f"peak RSS: {rss_mb:.0f} MB")
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load} on {os.cpu_count()} CPUs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--run", type=Path, help="keep the run folder here (reused if present)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.run or Path(tmp) / "run"
        if not (root / "run.json").exists():
            t0 = time.perf_counter()
            build(root, args.items)
            print(f"built {args.items} items x 10 decisions in {time.perf_counter() - t0:.1f} s")
            rescore_run(root)  # the build's placeholder scores become real ones: a run's state
        items = sum(1 for _ in (root / "results.jsonl").open("rb"))
        measure(root, items, args.repeat)


if __name__ == "__main__":
    main()
