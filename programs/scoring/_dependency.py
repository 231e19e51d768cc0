"""Dependency scoring (DSG): a child of a 0-scored parent is zeroed; mean over all questions.

A question scores 1 when its decision passed (the judge said exactly yes), else 0.
Parents are the question's ``requires`` plus any ids in its ``parents`` tag
(comma separated). ``requires`` makes the runner skip the child (a skipped
question is already 0); the ``parents`` tag keeps every question asked and zeroes
afterwards from the parents' own answers, which is DSG's reference behaviour.

A question the judge did not answer (an ``error`` decision, a child skipped
because its parent errored, or no decision at all) is neither yes nor no: the
item is ``error`` with no score (``withheld`` for a withheld question), is left
out of every mean and is counted in every summary cell. ``missing="zero"``
scores such items 0 instead (DSG's reference scores an image without answers 0),
still counted.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any, Literal

from groundeval.programs._model import Program, Question
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult

PARENTS_TAG = "parents"
Missing = Literal["skip", "zero"]


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
    """DSG: item score = mean over all hard questions after zeroing children of a "no".

    ``missing`` is how summaries treat items without a score (``error``/``withheld``):
    ``skip`` leaves them out of the means, ``zero`` scores them 0; both count them.
    """

    name = "dependency"

    def __init__(self, missing: Missing = "skip") -> None:
        if missing not in ("skip", "zero"):
            raise ValueError(f"missing must be 'skip' or 'zero', got {missing!r}")
        self.missing: Missing = missing

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Score one item; a failed gate scores 0; an unanswered question makes it ``error``."""
        if any(d.outcome == "error" for d in decisions):
            return ItemScore("error", {"score": None})
        if gate_failed is not None or not program.hard:
            return ItemScore("scored", {"score": 0.0})
        if any(d.outcome == "withheld" for d in decisions):
            return ItemScore("withheld", {"score": None})
        if any(d.outcome == "pending" for d in decisions):
            return ItemScore("pending", {"score": None})
        by_id = {d.question_id: d for d in decisions}
        if any(q.id not in by_id for q in program.hard):
            return ItemScore("error", {"score": None})  # a question with no decision
        raw = {q.id: 1.0 if by_id[q.id].outcome == "pass" else 0.0 for q in program.hard}
        final = dependency_scores(raw, {q.id: parents_of(q) for q in program.hard})
        return ItemScore("scored", {"score": fmean(final.values())})

    def item_score(self, result: ItemResult) -> float | None:
        """The score a mean uses: the item's, 0 for an unscored item under ``zero``, else None."""
        score = result.scores.get("score")
        if result.status == "scored" and score is not None:
            return float(score)
        return 0.0 if self.missing == "zero" else None

    def _cell(self, results: list[ItemResult]) -> dict[str, Any]:
        values = [v for r in results if (v := self.item_score(r)) is not None]
        return {
            "score": round(fmean(values), 4) if values else None,
            "items": len(results),
            "in_mean": len(values),
            "errors": sum(r.status == "error" for r in results),
            "withheld": sum(r.status == "withheld" for r in results),
            "pending": sum(r.status == "pending" for r in results),
        }

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """Mean item score overall and per tag value, each with its error/withheld counts."""
        by_tag: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
        for r in results:
            for key, value in r.tags.items():
                by_tag[key][value].append(r)
        decisions = [d for r in results for d in r.decisions]
        overall = self._cell(results)
        return {
            "items": len(results),
            "score": overall["score"],
            "overall": overall,
            "by_tag": {
                key: {v: self._cell(group)["score"] for v, group in sorted(groups.items())}
                for key, groups in sorted(by_tag.items())
            },
            "by_tag_counts": {
                key: {v: self._cell(group) for v, group in sorted(groups.items())}
                for key, groups in sorted(by_tag.items())
            },
            "asked": sum(d.source in ("judge", "human") for d in decisions),
            "skipped": sum(d.source == "skipped" for d in decisions),
            "errors": overall["errors"],
            "withheld": overall["withheld"],
            "pending": overall["pending"],
            "missing_convention": self.missing,
            "answer_errors": sum(d.outcome == "error" for d in decisions),
            "error_note": (
                "items with an unanswered question are left out of every mean and counted"
                if self.missing == "skip"
                else "items with an unanswered question score 0 and are counted"
            ),
        }

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """One row overall, then one per tag value, each with its counts."""
        summary = self.summarize(results)
        rows: list[dict[str, Any]] = [{"group": "overall", "value": "", **summary["overall"]}]
        for key, groups in summary["by_tag_counts"].items():
            rows += [{"group": key, "value": v, **cell} for v, cell in groups.items()]
        return rows
