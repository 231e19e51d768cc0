"""Judge calls per item on scripted / replayed runs.

Goals: 1 call per BizGenEval image (all 20 questions in one call), at most 2 per UEval
answer (all criteria in one call). Also prints DSG's calls per image through the runner
(recorded answers replayed), where each dependency wave is one call, and authoring calls
per prompt (``groundeval author`` on the 20 example prompts with the scripted drafting
judge of examples/author: goal <= 1.5, i.e. most drafts valid on the first try).

    .venv/bin/python perf/calls_per_item.py [--data data] [--authoring-only]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
from collections import Counter
from pathlib import Path
from statistics import mean, median

import numpy as np
from PIL import Image

from groundeval.benchmarks.bizgeneval import load_bizgeneval
from groundeval.benchmarks.dsg import correlate
from groundeval.benchmarks.ueval import load_ueval, ueval_items
from groundeval.judges import ScriptedJudge
from groundeval.programs._run import run_items
from groundeval.programs._runner import ItemInput

ROOT = Path(__file__).resolve().parents[1]


def _image(path: Path, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    Image.fromarray(rng.integers(0, 255, (96, 128, 3), dtype=np.uint8)).save(path)
    return path


def _calls(judge: ScriptedJudge) -> list[int]:
    return list(Counter(c.item_id for c in judge.calls).values())


def bizgeneval(data: Path, work: Path) -> dict[str, float]:
    programs = load_bizgeneval(data / "bizgeneval" / "bizgeneval.jsonl")
    rng = random.Random(0)
    image = _image(work / "biz.png", 0)
    table = {(p.id, q.id): rng.random() < 0.7 for p in programs for q in p.hard}
    judge = ScriptedJudge(table)
    items = [ItemInput(p.id, p, [image]) for p in programs]
    asyncio.run(run_items(items, judge=judge, out=work / "biz-run", concurrency=16))
    calls = _calls(judge)
    return {"items": len(items), "mean": mean(calls), "median": median(calls), "max": max(calls)}


def ueval(work: Path, n: int = 60) -> dict[str, float]:
    rng = random.Random(1)
    rows, manifest, table = [], [], {}
    for i in range(n):
        n_img, n_txt = rng.randint(1, 6), rng.randint(0, 5)
        rows.append(
            {
                "id": f"u{i:03d}",
                "prompt": f"prompt {i}",
                "task_type": rng.choice(["story", "diagram"]),
                "image_rubrics": [{"criterion": f"image {k}", "tags": []} for k in range(n_img)],
                "text_rubrics": [{"criterion": f"text {k}", "tags": []} for k in range(n_txt)],
            }
        )
        images = [
            _image(work / f"u{i:03d}_{k}.png", 100 * i + k).name for k in range(rng.randint(1, 3))
        ]
        manifest.append({"id": f"u{i:03d}", "images": images, "answer": f"answer text {i}"})
        for q in [*(f"i{k + 1}" for k in range(n_img)), *(f"t{k + 1}" for k in range(n_txt))]:
            table[(f"u{i:03d}", q)] = rng.random() < 0.6
    data = work / "ueval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "manifest.jsonl").write_text("".join(json.dumps(m) + "\n" for m in manifest))
    judge = ScriptedJudge(table)
    items = ueval_items(load_ueval(data), work / "manifest.jsonl")
    asyncio.run(run_items(items, judge=judge, out=work / "ueval-run", concurrency=16))
    calls = _calls(judge)
    return {"items": len(items), "mean": mean(calls), "median": median(calls), "max": max(calls)}


def dsg(data: Path) -> dict[str, dict[str, float]]:
    out = {}
    for mode in ("gate", "none"):
        r = correlate(
            data / "dsg" / "dsg-1k-anns.csv",
            data / "dsg" / "mplug_dsg.csv",
            data / "dsg" / "tifa160-likert-anns.csv",
            dependencies=mode,  # type: ignore[arg-type]
        )
        out[mode] = {
            "calls_per_image": r["calls"] / r["n"],
            "questions_asked_per_image": r["asked"] / r["n"],
            "skipped": r["skipped"],
        }
    return out


def authoring() -> dict[str, float]:
    """Drafting calls per prompt: drafts plus the rounds that fed validation errors back."""
    from groundeval.judges import wrap_judge
    from groundeval.programs._author import author_all, read_prompts
    from groundeval.programs._author_script import read_replies, scripted_author

    folder = ROOT / "examples" / "author"
    prompts = read_prompts(folder / "prompts.jsonl")
    judge = scripted_author(read_replies(folder / "replies.jsonl"))
    outcomes = asyncio.run(author_all(wrap_judge(judge), prompts))
    rounds = [o.rounds for o in outcomes]
    return {
        "prompts": len(prompts),
        "calls": len(judge.calls),
        "mean": len(judge.calls) / len(prompts),
        "max": max(rounds),
        "valid": sum(o.program is not None for o in outcomes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--authoring-only", action="store_true", help="Only the authoring figure.")
    args = parser.parse_args()
    au = authoring()
    print(f"Authoring: {au['prompts']} prompts, {au['calls']} drafting calls, "
          f"{au['mean']:.2f} per prompt, max {au['max']}, {au['valid']} valid drafts "
          "(goal <= 1.5)")  # fmt: skip
    if args.authoring_only:
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        biz = bizgeneval(args.data, work)
        ue = ueval(work)
    print(f"BizGenEval: {biz['items']} images, judge calls per image mean {biz['mean']:.2f}, "
          f"median {biz['median']}, max {biz['max']} (goal 1)")  # fmt: skip
    print(f"UEval: {ue['items']} answers, judge calls per answer mean {ue['mean']:.2f}, "
          f"median {ue['median']}, max {ue['max']} (goal <= 2)")  # fmt: skip
    for mode, r in dsg(args.data).items():
        print(
            f"DSG tifa160 ({mode}): {r['calls_per_image']:.2f} calls and "
            f"{r['questions_asked_per_image']:.2f} questions per image, {r['skipped']} skipped"
        )


if __name__ == "__main__":
    main()
