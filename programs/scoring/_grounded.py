"""Grounded programs (GenOlympiad-style): gate x weighted hard marks, strict and relaxed.

- **relaxed** = gate x sum(w*s) / sum(w): partial marks count.
- **strict** = gate x 1 when every hard question has full marks (s = 1), else 0:
  an item either solves the whole task or scores nothing, as GenOlympiad's strict.

The gate is 1 when every gate question passed, 0 when one failed. With yes/no
judges relaxed is the weighted share of hard questions passed; strict is 1 only
when all passed, so strict <= relaxed on every item.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import fmean
from typing import Any

from groundeval.programs._model import Program
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult


@register_protocol("grounded")
class GroundedScoring:
    """relaxed = gate x sum(w*s)/sum(w); strict = gate x (every hard question full marks).

    An item with an error decision is ``error``; else with a withheld decision,
    ``withheld``: both get no scores, are left out of every mean and are counted
    (``errors``/``withheld`` and their rates) in every summary cell.
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
        if any(d.outcome == "withheld" for d in decisions):
            return ItemScore("withheld", {"strict": None, "relaxed": None})
        if any(d.outcome == "pending" for d in decisions):
            return ItemScore("pending", {"strict": None, "relaxed": None})
        by_id = {d.question_id: d for d in decisions if d.kind == "hard"}
        if any(q.id not in by_id for q in program.hard):
            return ItemScore("error", {"strict": None, "relaxed": None})  # undecided question
        total = sum(q.weight for q in program.hard)
        if total <= 0:
            return ItemScore("scored", {"strict": 1.0, "relaxed": 1.0})
        relaxed = sum(q.weight * by_id[q.id].score for q in program.hard) / total
        strict = 1.0 if all(by_id[q.id].score >= 1.0 for q in program.hard) else 0.0
        return ItemScore("scored", {"strict": strict, "relaxed": round(relaxed, 6)})

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
        "withheld": withheld,
        "errors": errors,
        "pending": sum(r.status == "pending" for r in results),
        "withheld_rate": round(withheld / n, 4) if n else 0.0,
        "error_rate": round(errors / n, 4) if n else 0.0,
        "gate_failed": sum(r.gate_failed is not None for r in results),
    }
