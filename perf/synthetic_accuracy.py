"""Accuracy of offline grounding against exact truth, in-style, out-of-style and held-out.

For every scene kind, generates items from the in-style suite
(``benchmarks/synthetic``: what the proposers are tuned on, ``--n-in`` per
difficulty from seed ``--seed-in``), from the out-of-style suite
(``benchmarks/synthetic/outstyle``: an independent renderer, ``--n`` per scene
from seed 700000, a range nobody tunes on) and from the held-out suite
(``benchmarks/synthetic/heldout``: a third renderer written without reading the
other two or the proposers, ``--n-held`` per scene from seed 900000, used only
for reporting). A style that lacks a scene kind prints it as ``n/a``. Each
question is grounded through the real verify loop (``run_grounding``, offline
verifier, the program's budget) by every proposer that applies to the scene
kind, at its default parameters (only the program's required inputs, such as
colour ranges, are kept), and by the consensus paths (``verifier: consensus``)
when that verifier is installed.
The program's check then decides and the outcome is compared with the truth.

Printed per style, scene kind and proposer: decisions right / wrong / withheld /
error, the wrong share of decided questions (right + wrong) with its one-sided 95 % upper
bound (exact binomial: what the share can honestly claim), and the share of
images whose every question was decided right ("exact").

    .venv/bin/python perf/synthetic_accuracy.py                 # all styles, defaults
    .venv/bin/python perf/synthetic_accuracy.py --n 10 --n-in 3 --scenes dice
    .venv/bin/python perf/synthetic_accuracy.py --styles out --paths opencv.dice --show-wrong
    .venv/bin/python perf/synthetic_accuracy.py --styles held --n-held 40   # report only

A path ``program:<proposer>`` runs the program's ground spec as written (its
parameters kept), for kinds whose programs carry more than required inputs.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import importlib
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from groundeval.programs.stats import rate_upper_bound

PATHS: dict[str, list[str]] = {
    "dice": ["opencv.dice", "yolo.dice", "opencv.dice+yolo.dice"],
    "coins": [
        "opencv.contours",
        "opencv.circles",
        "opencv.blobs",
        "opencv.contours+opencv.circles",
        "yolo.coins",
        "yolo.coins+opencv.contours",
    ],
    "bars": ["ocr"],
    "compass": ["opencv.lines"],
    "sun": ["opencv.color_region"],
    "clock": ["program:opencv.color_region"],
    "shadows": ["program:opencv.color_region"],
    "rows": ["opencv.contours"],
    "dice_math": ["opencv.dice", "yolo.dice", "opencv.dice+yolo.dice"],
    "reflection": ["opencv.color_region"],
}
"""Grounding paths per scene kind: a proposer, or ``main+second`` for consensus."""
CONSENSUS_SETTINGS = {"yolo.coins": {"consensus": {"field_rel_tol": 0.15}}}
"""Consensus settings per main proposer: two coin detectors' radii agree within 15 %."""
REQUIRED_PARAMS = {"opencv.color_region": ("ranges", "max_regions")}
"""Program params that are inputs, not tuning (kept when the proposer is swapped)."""
STYLES = ("in", "out", "held", "probe", "blind")
STYLE_LABELS = {"in": "in-style", "out": "out-of-style", "held": "held-out (reporting only)",
                "probe": "probe style (tuning below its report seed)",
                "blind": "blind style (tuning below its report seed)"}  # fmt: skip
STYLE_MODULES = {"out": "outstyle", "held": "heldout", "probe": "probe", "blind": "blind"}
"""Styles with a renderer of their own: each has SCENES, AXIS_SCENES, DIFFICULTY and
REPORT_SEED0, and numbers, first seeds and report seeds of its own (``--n-<style>``...)."""
BUCKETS = ("right", "wrong", "withheld", "error")


@dataclass(frozen=True)
class Task:
    style: str
    scene: str
    difficulty: str
    seed: int
    path: str


@dataclass
class Tally:
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    images: int = 0
    exact: int = 0
    wrong: list[str] = field(default_factory=list)


def make_scene(task: Task) -> Any:
    if task.style == "in":
        from groundeval.benchmarks.synthetic import generate

        return generate(task.scene, task.difficulty, task.seed)
    return renderer(task.style).generate(task.scene, task.seed)


def renderer(style: str) -> Any:
    """The module of a style drawn by its own renderer (``generate(scene, seed)``)."""
    return importlib.import_module(f"groundeval.benchmarks.synthetic.{STYLE_MODULES[style]}")


def path_spec(spec: Any, path: str) -> Any:
    """The program's ground spec, run by ``path`` at default parameters."""
    main, _, second = path.partition("+")
    as_written = main.startswith("program:")
    main = main.removeprefix("program:")
    keep = {
        k: v for k, v in spec.params.items() if as_written or k in REQUIRED_PARAMS.get(main, ())
    }
    update: dict[str, Any] = {"proposer": main, "params": keep}
    if second:
        update |= {"verifier": "consensus", "agree_with": [{"proposer": second}]}
        update["params"] = {**keep, **CONSENSUS_SETTINGS.get(main, {})}
    else:
        update |= {"verifier": "offline", "agree_with": []}
    return type(spec).model_validate({**spec.model_dump(), **update})


def grade(task: Task) -> list[tuple[str, str, str]]:
    """(item/question, outcome, truth) for every question of one generated item."""
    return asyncio.run(_grade(task))


async def _grade(task: Task) -> list[tuple[str, str, str]]:
    from groundeval.benchmarks.synthetic import encode_png
    from groundeval.grounding._loop import run_grounding
    from groundeval.grounding.proposers import ocr  # noqa: F401  (registers every built-in)
    from groundeval.judges._protocol import ImagePart
    from groundeval.programs import CheckError, TooCloseToCall, run_check
    from groundeval.state import Provenance, StateFile

    s = make_scene(task)
    h, w = s.image_bgr.shape[:2]
    image = ImagePart(encode_png(s.image_bgr), "image/png", (w, h))
    rows = []
    for program in s.programs:
        states: dict[str, StateFile] = {}
        for q in program.questions:
            source = program.state_source(q)
            if source is None:
                continue
            if source not in states:
                spec = program.question(source).ground
                assert spec is not None
                states[source] = await run_grounding(
                    image_bgr=s.image_bgr,
                    image=image,
                    spec=path_spec(spec, task.path),
                    ask=q.ask,
                    item_id=s.id,
                    question_id=source,
                    provenance=Provenance(toolkit_version="perf"),
                )
            state = states[source]
            if state.status != "grounded":
                outcome = "withheld" if state.status != "error" else "error"
            else:
                try:
                    outcome = "pass" if run_check(q.check, state).score >= 1.0 else "fail"
                except TooCloseToCall:
                    outcome = "withheld"
                except CheckError:
                    outcome = "error"
            key = f"{program.id}/{q.id}"
            rows.append((key, outcome, s.truth["answers"][key]))
    return rows


def verdict(outcome: str, truth: str) -> str:
    if outcome in ("withheld", "error"):
        return outcome
    return "right" if outcome == truth else "wrong"


def style_scenes(style: str) -> set[str]:
    """Scene kinds a style can generate."""
    if style == "in":
        from groundeval.benchmarks.synthetic import AXIS_SCENES, SCENES

        return {*SCENES, *AXIS_SCENES}
    module = renderer(style)
    return {*module.SCENES, *getattr(module, "AXIS_SCENES", {})}


def tasks_for(args: argparse.Namespace, paths: dict[str, list[str]]) -> list[Task]:
    from groundeval.benchmarks.synthetic import DIFFICULTIES

    out: list[Task] = []
    for style in args.styles.split(","):
        known = style_scenes(style)
        for scene in args.scenes.split(","):
            if scene not in known:
                continue
            for path in paths[scene]:
                if style == "in":
                    for level in DIFFICULTIES:
                        for seed in range(args.seed_in, args.seed_in + args.n_in):
                            out.append(Task(style, scene, level, seed, path))
                    continue
                module = renderer(style)
                first = getattr(args, f"seed_{style}")
                seed0 = module.REPORT_SEED0 if first is None else first
                for seed in range(seed0, seed0 + getattr(args, f"n_{style}")):
                    out.append(Task(style, scene, module.DIFFICULTY, seed, path))
    return out


def available_paths(wanted: str | None) -> dict[str, list[str]]:
    from groundeval.grounding._protocol import verifier_names
    from groundeval.grounding.proposers import ocr  # noqa: F401

    consensus = "consensus" in verifier_names()
    chosen = set(wanted.split(",")) if wanted else None
    return {
        scene: [p for p in paths if (consensus or "+" not in p) and (chosen is None or p in chosen)]
        for scene, paths in PATHS.items()
    }


def _init_worker() -> None:
    os.environ.setdefault("GROUNDEVAL_THREADS", "1")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--n", "--n-out", dest="n_out", type=int, default=40,
                        help="out-of-style items per scene")  # fmt: skip
    parser.add_argument("--n-in", type=int, default=8, help="in-style items per difficulty")
    parser.add_argument("--seed-in", type=int, default=0, help="first in-style seed")
    parser.add_argument("--seed-out", type=int, default=None, help="first out-of-style seed")
    parser.add_argument("--n-held", type=int, default=40, help="held-out items per scene")
    parser.add_argument("--seed-held", type=int, default=None, help="first held-out seed")
    parser.add_argument("--n-probe", type=int, default=40, help="probe-style items per scene")
    parser.add_argument("--seed-probe", type=int, default=None, help="first probe-style seed")
    parser.add_argument("--n-blind", type=int, default=40, help="blind-style items per scene")
    parser.add_argument("--seed-blind", type=int, default=None, help="first blind-style seed")
    parser.add_argument("--styles", default="in,out,held", help="any of " + ", ".join(STYLES))
    parser.add_argument("--scenes", default=",".join(PATHS))
    parser.add_argument("--paths", default=None, help="only these paths (comma separated)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--json", default=None, help="also write the table to this JSON file")
    parser.add_argument("--show-wrong", action="store_true", help="list every wrong decision")
    args = parser.parse_args()
    paths = available_paths(args.paths)
    tasks = tasks_for(args, paths)
    started = time.perf_counter()
    tallies: dict[tuple[str, str, str], Tally] = collections.defaultdict(Tally)
    with ProcessPoolExecutor(max_workers=max(1, args.jobs), initializer=_init_worker) as pool:
        for task, rows in zip(tasks, pool.map(grade, tasks, chunksize=2), strict=True):
            tally = tallies[(task.style, task.scene, task.path)]
            tally.images += 1
            verdicts = [verdict(o, t) for _, o, t in rows]
            tally.exact += all(v == "right" for v in verdicts)
            for (key, outcome, truth), v in zip(rows, verdicts, strict=True):
                tally.counts[v] += 1
                if v == "wrong":
                    tally.wrong.append(f"[{task.path}] {key}: said {outcome}, truth {truth}")
    missing = {
        style: [s for s in args.scenes.split(",") if s not in style_scenes(style)]
        for style in args.styles.split(",")
    }
    table = print_table(tallies, missing)
    print(f"\n{len(tasks)} gradings in {time.perf_counter() - started:.0f} s")
    if args.show_wrong:
        for (style, _, _), tally in tallies.items():
            if style != "held":  # held-out decisions stay unlisted: it is for reporting only
                print("\n".join(tally.wrong))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(table, fh, indent=1)


def print_table(
    tallies: dict[tuple[str, str, str], Tally], missing: dict[str, list[str]] | None = None
) -> list[dict[str, Any]]:
    header = (
        f"{'style':<6}{'scene':<11}{'proposer':<32}{'images':>7}{'decis.':>7}{'right':>7}"
        f"{'wrong':>7}{'withh.':>7}{'error':>7}{'wrong/dec':>10}{'<=(95%)':>9}{'exact':>8}"
    )
    table = []
    for style in STYLES:
        rows = sorted((k, t) for k, t in tallies.items() if k[0] == style)
        absent = (missing or {}).get(style, [])
        if not rows and not absent:
            continue
        print(f"\n{STYLE_LABELS[style]}\n{header}")
        for scene in absent:
            print(f"{style:<6}{scene:<11}{'n/a (no such scene in this style)':<32}")
            table.append({"style": style, "scene": scene, "path": "n/a", "images": 0})
        for (_, scene, path), t in rows:
            c = t.counts
            decided = c["right"] + c["wrong"]
            share = c["wrong"] / decided if decided else 0.0
            bound = rate_upper_bound(c["wrong"], decided)
            exact = t.exact / t.images if t.images else 0.0
            print(
                f"{style:<6}{scene:<11}{path:<32}{t.images:>7}{sum(c.values()):>7}"
                + "".join(f"{c[b]:>7}" for b in BUCKETS)
                + f"{share:>10.1%}{'-' if bound is None else f'{bound:.1%}':>9}{exact:>8.0%}",
                flush=True,
            )
            table.append({"style": style, "scene": scene, "path": path, "images": t.images,
                          **{b: c[b] for b in BUCKETS}, "wrong_share_of_decided": round(share, 4),
                          "wrong_share_upper_95": None if bound is None else round(bound, 4),
                          "exact_images": round(exact, 4)})  # fmt: skip
    return table


if __name__ == "__main__":
    sys.exit(main())
