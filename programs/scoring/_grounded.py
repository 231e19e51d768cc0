"""Grounded programs (GenOlympiad-style): gate x weighted hard marks, strict and relaxed."""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from groundeval.programs._model import Program
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult


@register_protocol("grounded")
class GroundedScoring:
    """Gate x sum(w*s)/sum(w). Strict counts only full marks; relaxed counts partial marks.

    An item with an error is ``error``; with a withheld hard question, ``withheld``:
    both are left out of the means and reported as rates.
    """

    name = "grounded"

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Score one item."""
        if any(d.outcome == "error" for d in decisions):
            return ItemScore("error", {"strict": None, "relaxed": None})
        if gate_failed is not None:
            return ItemScore("scored", {"strict": 0.0, "relaxed": 0.0})
        hard = [d for d in decisions if d.kind == "hard"]
        if any(d.outcome == "withheld" for d in decisions):
            return ItemScore("withheld", {"strict": None, "relaxed": None})
        weights = {q.id: q.weight for q in program.hard}
        total = sum(weights[d.question_id] for d in hard)
        if total <= 0:
            return ItemScore("scored", {"strict": 1.0, "relaxed": 1.0})
        strict = sum(weights[d.question_id] * (d.score >= 1.0) for d in hard) / total
        relaxed = sum(weights[d.question_id] * d.score for d in hard) / total
        return ItemScore("scored", {"strict": round(strict, 6), "relaxed": round(relaxed, 6)})

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """Overall and per-tag strict/relaxed means with withheld and error rates."""
        out: dict[str, Any] = {"overall": _group(results)}
        by_tag: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
        for r in results:
            for key, value in r.tags.items():
                by_tag[key][value].append(r)
        out["by_tag"] = {
            key: {value: _group(items) for value, items in sorted(groups.items())}
            for key, groups in sorted(by_tag.items())
        }
        return out

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """One row overall, then one per tag value."""
        summary = self.summarize(results)
        rows = [{"group": "overall", "value": "", **summary["overall"]}]
        for key, groups in summary["by_tag"].items():
            rows += [{"group": key, "value": value, **stats} for value, stats in groups.items()]
        return rows


def _group(results: list[ItemResult]) -> dict[str, Any]:
    n = len(results)
    scored = [r for r in results if r.status == "scored"]
    withheld = sum(r.status == "withheld" for r in results)
    errors = sum(r.status == "error" for r in results)

    def mean(key: str) -> float | None:
        values = [r.scores[key] for r in scored if r.scores.get(key) is not None]
        return round(fmean(v for v in values if v is not None), 4) if values else None

    return {
        "items": n,
        "scored": len(scored),
        "strict": mean("strict"),
        "relaxed": mean("relaxed"),
        "withheld_rate": round(withheld / n, 4) if n else 0.0,
        "error_rate": round(errors / n, 4) if n else 0.0,
        "gate_failed": sum(r.gate_failed is not None for r in results),
    }
