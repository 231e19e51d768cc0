"""Items per second on a local Ray instance with 1 and 2 worker CPUs, and their ratio.

Workloads:

* CPU-bound: synthetic dice images graded offline by the ``opencv.dice``
  proposer (about 0.1 s of OpenCV per item; OpenCV already spreads some work
  over both cores), and a pure-Python proposer that burns 0.1 s of CPU per item
  while holding the GIL (what one process cannot parallelise).
* judge-bound: two direct questions per item (two sequential calls) to a local
  OpenAI-compatible fake server that answers after 200 ms; also with
  ``items_per_task=8`` (eight items graded concurrently in one worker).

Each case: one warm-up run (worker start-up, imports), then the median of
``--runs`` timed runs. The local asyncio executor is shown for reference.

    .venv/bin/python perf/ray_scaling.py [--items 24] [--runs 3] [--cases cpu]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests._support.ray_fixtures: the fake server and the spin proposer

from groundeval.judges import build_judge  # noqa: E402
from groundeval.programs import ItemInput, Program  # noqa: E402
from groundeval.programs._ray import JudgeRecipe, RayExecutor, import_ray  # noqa: E402
from groundeval.programs._run import LocalExecutor, run_items  # noqa: E402
from tests._support.ray_fixtures import FakeChatServer  # noqa: E402

IMPORTS = ["tests._support.ray_fixtures"]


def dice_items(folder: Path, count: int) -> list[ItemInput]:
    """Synthetic dice scenes graded by opencv.dice (empty when the benchmark is missing)."""
    try:
        from groundeval.benchmarks.synthetic import _dice
    except ImportError:
        return []
    items = []
    for n in range(count):
        scene = _dice.make(f"dice{n:03d}", "hard", n, np.random.default_rng(n))
        path = folder / f"{scene.id}.png"
        cv2.imwrite(str(path), scene.image_bgr)
        items.append(ItemInput(scene.id, scene.programs[0], [path]))
    return items


def spin_items(folder: Path, count: int) -> list[ItemInput]:
    """Items whose proposer burns 0.1 s of pure-Python CPU (holds the GIL)."""
    path = folder / "spin.png"
    cv2.imwrite(str(path), np.full((96, 128, 3), 90, np.uint8))
    items = []
    for n in range(count):
        program = Program.model_validate({"id": f"spin{n:03d}", "hard": [{
            "id": "h1", "ask": "One box?", "check": "count(elements) == 1",
            "ground": {"helper": "boxes", "proposer": "test.spin", "params": {"seconds": 0.1}},
        }]})  # fmt: skip
        items.append(ItemInput(program.id, program, [path]))
    return items


def judge_items(folder: Path, count: int) -> list[ItemInput]:
    """Items with one gate and one hard question: two sequential judge calls each."""
    path = folder / "judge.png"
    cv2.imwrite(str(path), np.full((48, 64, 3), 120, np.uint8))
    items = []
    for n in range(count):
        program = Program.model_validate({
            "id": f"j{n:03d}", "gates": [{"id": "g1", "ask": f"Item {n}: a die?"}],
            "hard": [{"id": "h1", "ask": f"Item {n}: two dice?"}],
        })  # fmt: skip
        items.append(ItemInput(program.id, program, [path]))
    return items


def timed(items: list[ItemInput], spec: str, executor: Any, runs: int, scratch: Path) -> float:
    """Median items/s over ``runs`` fresh run folders (after one warm-up run)."""
    rates = []
    for attempt in range(runs + 1):
        out = scratch / f"run{attempt}"
        start = time.perf_counter()
        asyncio.run(run_items(items, judge=build_judge(spec), out=out, executor=executor))
        elapsed = time.perf_counter() - start
        shutil.rmtree(out)
        if attempt:
            rates.append(len(items) / elapsed)
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=24)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    args = parser.parse_args()
    ray = import_ray()
    scratch = Path(tempfile.mkdtemp(prefix="ray-scaling-"))
    with FakeChatServer(delay_s=0.2) as server:
        spec = f"openai:fake@{server.url}"
        cases = {
            "cpu opencv.dice": (dice_items(scratch, args.items), "offline", 1),
            "cpu python/GIL": (spin_items(scratch, args.items), "offline", 1),
            "judge 200 ms": (judge_items(scratch, args.items), spec, 1),
            "judge, 8 per task": (judge_items(scratch, args.items), spec, 8),
        }
        cases = {n: c for n, c in cases.items() if c[0] and args.cases in n}
        rows: dict[str, dict[str, float]] = {name: {} for name in cases}
        for name, (items, judge, _) in cases.items():
            if "per task" not in name:
                rows[name]["local"] = timed(items, judge, LocalExecutor(8), args.runs, scratch)
        for workers in (1, 2):
            ray.init(num_cpus=workers, include_dashboard=False, logging_level="warning",
                     _node_ip_address="127.0.0.1")  # fmt: skip
            for name, (items, judge, per_task) in cases.items():
                recipe = JudgeRecipe(judge)
                executor = RayExecutor(judge=recipe, imports=IMPORTS, items_per_task=per_task)
                rows[name][f"{workers}w"] = timed(items, judge, executor, args.runs, scratch)
            ray.shutdown()
    shutil.rmtree(scratch)
    print(f"{args.items} items per case, items/s, median of {args.runs} timed runs")
    print(f"{'case':<18}{'local':>8}{'1 worker':>10}{'2 workers':>11}{'2w/1w':>8}")
    for case, row in rows.items():
        local = f"{row['local']:.2f}" if "local" in row else "-"
        ratio = row["2w"] / row["1w"]
        print(f"{case:<18}{local:>8}{row['1w']:>10.2f}{row['2w']:>11.2f}{ratio:>8.2f}")
    print("(items/s; 'local' is the asyncio executor in one process, 8 items in flight)")


if __name__ == "__main__":
    main()
