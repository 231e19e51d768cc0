"""Grade one generated dice image with examples/dice.yaml, offline, and print the verdicts.

    python examples/quickstart.py [OUT_DIR]

The image comes from the synthetic benchmark (five dice whose pips are known), so
the result can be checked by eye in OUT_DIR/run/evidence/.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

import cv2

from groundeval.benchmarks.synthetic import generate
from groundeval.judges import build_judge
from groundeval.programs import items_from_images, load_programs, run_items

HERE = Path(__file__).resolve().parent


def main(out: Path) -> dict[str, object]:
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    scene = next(
        s for seed in range(100) if (s := generate("dice", "clean", seed)).truth["count"] == 5
    )
    cv2.imwrite(str(images / "dice-0001.png"), scene.image_bgr)
    programs = load_programs(HERE / "dice.yaml")
    report = asyncio.run(
        run_items(
            items_from_images(programs, images), judge=build_judge("offline"), out=out / "run"
        )
    )
    result = report.results[0]
    print(f"truth: {scene.truth['count']} dice, pips add up to {scene.truth['pip_sum']}")
    for d in result.decisions:
        print(f"{d.question_id}: {d.outcome:8} {d.reason}")
    print(f"scores: {result.scores}  (evidence in {out / 'run'})")
    return {"truth": scene.truth, "result": result}


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))
