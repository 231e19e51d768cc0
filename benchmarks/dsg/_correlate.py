"""DSG's human-correlation study through groundeval: programs, runner, scoring, agreement.

Every image with human ratings in the split becomes an item; the recorded VQA
answers are the judge; the runner asks (and, with ``gate``, skips) questions;
the dependency protocol scores; Spearman and Kendall come from the agreement code.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from groundeval.benchmarks._agree import correlate_scores
from groundeval.benchmarks.dsg._data import (
    Dependencies,
    DSGDataError,
    graph_program,
    read_answers,
    read_graphs,
    read_likert,
)
from groundeval.benchmarks.dsg._replay import RecordedAnswersJudge
from groundeval.programs import ItemInput, Program, grade_item, run_items
from groundeval.programs.scoring import DependencyScoring, Missing
from groundeval.state import ItemResult


def dsg_items(anns: Path, likert: dict[str, float], dependencies: Dependencies) -> list[ItemInput]:
    """One item per rated image (``<prompt item>:<t2i model>``), no image file needed."""
    graphs = read_graphs(anns)
    programs: dict[str, Program] = {}
    items = []
    for image in sorted(likert):
        prompt_item = image.split(":", 1)[0]
        if prompt_item not in graphs:
            raise DSGDataError(f"{anns}: no questions for rated item {prompt_item!r}")
        if prompt_item not in programs:
            programs[prompt_item] = graph_program(graphs[prompt_item], dependencies)
        items.append(ItemInput(image, programs[prompt_item], []))
    return items


async def grade_dsg(items: list[ItemInput], judge: RecordedAnswersJudge) -> list[ItemResult]:
    """Grade every item with the runner (in memory; no run folder)."""
    graded = await asyncio.gather(*(grade_item(item, judge=judge) for item in items))
    return [result for result, _ in graded]


def correlate(
    anns: Path,
    answers: Path,
    likert: Path,
    *,
    split: str | None = "tifa160",
    dependencies: Dependencies = "gate",
    out: Path | None = None,
    missing: Missing = "skip",
) -> dict[str, Any]:
    """Spearman and Kendall between DSG item scores and mean human Likert ratings.

    An image with an unanswered question (e.g. no recorded answers) is ``error``:
    ``missing="skip"`` leaves it out of the correlation, ``"zero"`` scores it 0 as
    DSG's reference does (needed for its published table); both count it.
    With ``out``, the items are graded into a resumable run folder as well.
    """
    protocol = DependencyScoring(missing)
    ratings = read_likert(likert, split)
    if not ratings:
        raise DSGDataError(f"{likert}: no ratings for split {split!r}")
    items = dsg_items(anns, ratings, dependencies)
    judge = RecordedAnswersJudge(read_answers(answers, split), name=Path(answers).stem)
    if out is None:
        results = asyncio.run(grade_dsg(items, judge))
    else:
        config = {"benchmark": "dsg", "dependencies": dependencies, "split": split}
        report = asyncio.run(run_items(items, judge=judge, out=out, config=config))
        results = report.results
    scores = {r.item_id: v for r in results if (v := protocol.item_score(r)) is not None}
    corr = correlate_scores(scores, ratings)
    decisions = [d for r in results for d in r.decisions]
    return {
        "spearman": round(corr["spearman"], 6),
        "kendall": round(corr["kendall"], 6),
        "n": corr["n"],
        "questions": sum(len(i.program.hard) for i in items),
        "asked": judge.asked,
        "skipped": sum(d.source == "skipped" for d in decisions),
        "calls": judge.calls,
        "errors": sum(r.status == "error" for r in results),
        "withheld": sum(r.status == "withheld" for r in results),
        "error_items": sorted(r.item_id for r in results if r.status != "scored"),
        "answer_errors": sum(d.outcome == "error" for d in decisions),
        "missing_convention": missing,
        "dependencies": dependencies,
        "split": split,
        "answers": str(answers),
        "mean_score": round(sum(scores.values()) / len(scores), 6) if scores else None,
    }
