"""Rubric scoring (UEval): ``100 * satisfied / K`` per question, means per task and overall.

Each hard question of a rubric program is one criterion, tagged ``modality:
image|text``. An answer is scored on all its criteria and, separately, on its
image criteria and its text criteria. A criterion the judge could not decide
makes the item ``error`` (``withheld`` for a withheld criterion): it is left out
of the means and counted in every summary cell, never scored as unmet.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from groundeval.programs._model import Program
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult

MODALITIES: tuple[str, ...] = ("image", "text")
SCORE_KEYS: tuple[str, ...] = ("score", "image", "text")


def rubric_score(satisfied: int, total: int) -> float | None:
    """``100 * satisfied / total`` (None when there is no criterion).

    >>> rubric_score(3, 4)
    75.0
    """
    return 100.0 * satisfied / total if total else None


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(fmean(kept), 4) if kept else None


@register_protocol("rubric")
class RubricScoring:
    """UEval: per-question rubric score, per task type (item tag ``task_type``), overall."""

    name = "rubric"

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Score one answer on all its criteria, its image criteria and its text criteria."""
        by_id = {d.question_id: d for d in decisions}
        if any(d.outcome == "error" for d in decisions):
            return ItemScore("error", dict.fromkeys(SCORE_KEYS))
        if gate_failed is None:
            if any(d.outcome == "withheld" for d in decisions):
                return ItemScore("withheld", dict.fromkeys(SCORE_KEYS))
            if any(d.outcome == "pending" for d in decisions):
                return ItemScore("pending", dict.fromkeys(SCORE_KEYS))
            if any(q.id not in by_id for q in program.hard):
                return ItemScore("error", dict.fromkeys(SCORE_KEYS))  # undecided criterion
        met = {m: 0 for m in MODALITIES}
        count = {m: 0 for m in MODALITIES}
        for q in program.hard:
            modality = q.tags.get("modality", "")
            if modality not in MODALITIES:
                raise ValueError(
                    f"program {program.id}: criterion {q.id} needs tag modality: image|text, "
                    f"got {modality!r}"
                )
            d = by_id.get(q.id)
            count[modality] += 1
            met[modality] += int(gate_failed is None and d is not None and d.outcome == "pass")
        scores: dict[str, float | None] = {
            "score": rubric_score(sum(met.values()), sum(count.values())),
            **{m: rubric_score(met[m], count[m]) for m in MODALITIES},
        }
        return ItemScore(
            "scored", {k: None if v is None else round(v, 6) for k, v in scores.items()}
        )

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """Overall, image and text means over scored answers; the same per task type.

        Every cell carries ``errors`` and ``withheld``: the answers left out of it.
        """
        by_task: dict[str, list[ItemResult]] = defaultdict(list)
        for r in results:
            by_task[r.tags.get("task_type", "")].append(r)
        tasks = {task: self._group(group) for task, group in sorted(by_task.items())}
        return {
            "overall": self._group(results),
            "task_mean": _mean([t["score"] for t in tasks.values()]),
            "by_task": tasks,
            "items": len(results),
            "errors": sum(r.status == "error" for r in results),
            "withheld": sum(r.status == "withheld" for r in results),
            "pending": sum(r.status == "pending" for r in results),
            "error_note": "answers with an undecided criterion are left out of every mean",
        }

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """One row overall, then one per task type."""
        summary = self.summarize(results)
        rows = [{"task_type": "overall", **summary["overall"]}]
        rows += [{"task_type": task, **stats} for task, stats in summary["by_task"].items()]
        return rows

    @staticmethod
    def _group(results: list[ItemResult]) -> dict[str, Any]:
        scored = [r for r in results if r.status == "scored"]
        return (
            {"items": len(scored)}
            | {key: _mean([r.scores.get(key) for r in scored]) for key in SCORE_KEYS}
            | {
                "errors": sum(r.status == "error" for r in results),
                "withheld": sum(r.status == "withheld" for r in results),
                "pending": sum(r.status == "pending" for r in results),
            }
        )
