"""Dependency scoring (DSG): a child of a 0-scored parent is zeroed; mean over all questions.

A question scores 1 when its decision passed (the judge said exactly yes), else 0.
Parents are the question's ``requires`` plus any ids in its ``parents`` tag
(comma separated). ``requires`` makes the runner skip the child (a skipped
question is already 0); the ``parents`` tag keeps every question asked and zeroes
afterwards from the parents' own answers, which is DSG's reference behaviour.
A judge error is not a yes: it scores 0, and the summary counts such errors.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from groundeval.programs._model import Program, Question
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult

PARENTS_TAG = "parents"


def parents_of(question: Question) -> list[str]:
    """Direct parents: ``requires`` and the ``parents`` tag, in order, without repeats."""
    tagged = [p.strip() for p in question.tags.get(PARENTS_TAG, "").split(",") if p.strip()]
    return list(dict.fromkeys([*question.requires, *tagged]))


def dependency_scores(raw: dict[str, float], parents: dict[str, list[str]]) -> dict[str, float]:
    """Zero every question with a parent whose *own* answer scored 0 (one level, like DSG).

    Parent ids that are not questions of the item are ignored.

    >>> dependency_scores({"1": 0.0, "2": 1.0, "3": 1.0}, {"2": ["1"], "3": ["2"]})
    {'1': 0.0, '2': 0.0, '3': 1.0}
    """
    return {
        qid: 0.0 if any(raw.get(p) == 0.0 for p in parents.get(qid, [])) else score
        for qid, score in raw.items()
    }


@register_protocol("dependency")
class DependencyScoring:
    """DSG: item score = mean over all hard questions after zeroing children of a "no"."""

    name = "dependency"

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Score one item; a failed gate scores 0."""
        if gate_failed is not None or not program.hard:
            return ItemScore("scored", {"score": 0.0})
        by_id = {d.question_id: d for d in decisions}
        raw = {
            q.id: 1.0 if (d := by_id.get(q.id)) is not None and d.outcome == "pass" else 0.0
            for q in program.hard
        }
        final = dependency_scores(raw, {q.id: parents_of(q) for q in program.hard})
        return ItemScore("scored", {"score": fmean(final.values())})

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """Mean item score overall and per tag value, with asked / skipped / error counts."""
        by_tag: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        for r in results:
            for key, value in r.tags.items():
                if r.scores.get("score") is not None:
                    by_tag[key][value].append(float(r.scores["score"] or 0.0))
        decisions = [d for r in results for d in r.decisions]
        return {
            "items": len(results),
            "score": _mean([r.scores.get("score") for r in results]),
            "by_tag": {
                key: {v: round(fmean(s), 4) for v, s in sorted(groups.items())}
                for key, groups in sorted(by_tag.items())
            },
            "asked": sum(d.source in ("judge", "human") for d in decisions),
            "skipped": sum(d.source == "skipped" for d in decisions),
            "answer_errors_counted_as_no": sum(d.outcome == "error" for d in decisions),
        }

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """One row overall, then one per tag value."""
        summary = self.summarize(results)
        rows: list[dict[str, Any]] = [{"group": "overall", "value": "", "score": summary["score"]}]
        for key, groups in summary["by_tag"].items():
            rows += [{"group": key, "value": v, "score": s} for v, s in groups.items()]
        return rows


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(fmean(kept), 4) if kept else None
