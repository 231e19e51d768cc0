"""Report scale: render the audit report of a 2,000-item run; print seconds and page sizes.

Builds the run with the store API (2 judge gates, 4 judge questions, 4 checks over
one grounding state with two rounds and their overlays per item), then times
`write_report` and prints the size of index.html (which must stay small: the item
list is a separate, lazily loaded data file), the list data and a median item page.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np
from _fake_run import (  # perf/ is on sys.path when a script runs
    dice_decisions,
    dice_elements,
    dice_state,
    program,
)

from groundeval.programs._loaders import dump_programs_jsonl
from groundeval.programs._run import write_summary
from groundeval.state import (
    ItemResult,
    ItemUsage,
    Round,
    Usage,
)
from groundeval.state._store import RunStore, safe_name
from groundeval.state.report import write_report


def build(root: Path, n: int) -> None:
    store = RunStore(root)
    prog = program()
    store.start({"judge": "scripted"}, dump_programs_jsonl([prog]), resume=False)
    image = root.parent / "image.png"
    canvas = np.full((96, 160, 3), (40, 110, 40), np.uint8)
    cv2.imwrite(str(image), canvas)
    overlay = cv2.imencode(
        ".png", cv2.rectangle(canvas.copy(), (10, 10), (60, 60), (0, 200, 255), 2)
    )[1]
    for i in range(n):
        item = f"item-{i:05d}"
        elements = dice_elements(i)
        folder = root / "evidence" / safe_name(item)
        folder.mkdir(parents=True, exist_ok=True)
        rounds = []
        for r in (1, 2):
            (folder / f"c0.round{r}.png").write_bytes(overlay.tobytes())
            rounds.append(
                Round(
                    index=r,
                    asked="boxes for each die",
                    proposer="opencv.dice",
                    elements=elements,
                    overlay=f"evidence/{safe_name(item)}/c0.round{r}.png",
                )
            )
        state = dice_state(item, elements, rounds)
        decisions = dice_decisions(i, prog, state, store.write_state(state))
        result = ItemResult(
            item_id=item,
            program_id="dice",
            scoring="grounded",
            status="scored",
            tags={"axis": ["quantity", "spatial", "text"][i % 3], "model": f"m{i % 4}"},
            images=[str(image)],
            decisions=decisions,
            scores={"strict": 0.0, "relaxed": 0.0},
        )
        usage = ItemUsage(
            item_id=item,
            seconds=1.5,
            usage=Usage(calls=2, input_tokens=2400, output_tokens=180, cost_usd=0.001),
        )
        store.append(result, usage)
    write_summary(store, store.finalize())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=2_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "run"
        t0 = time.perf_counter()
        build(root, args.items)
        print(f"built {args.items} items x 10 decisions in {time.perf_counter() - t0:.1f} s")
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            index = write_report([root])
            times.append(time.perf_counter() - t0)
        report = index.parent
        pages = sorted((report / "items").glob("*.html"))
        sizes = [p.stat().st_size for p in pages]
        total = sum(p.stat().st_size for p in report.rglob("*") if p.is_file())
        median_s = statistics.median(times)
        rate = args.items / median_s
        print(f"render: median {median_s:.2f} s over {args.repeat} = {rate:,.0f} items/s")
        print(f"index.html: {index.stat().st_size / 1024:.1f} KiB (item list not inline)")
        data_kib = (report / "data" / "items.js").stat().st_size / 1024
        print(f"data/items.js (lazy list data): {data_kib:.0f} KiB")
        print(f"item pages: {len(pages)}, median {statistics.median(sizes) / 1024:.1f} KiB")
        print(f"whole report folder: {total / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
