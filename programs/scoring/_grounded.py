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
        outcomes = {d.outcome for d in decisions}  # one pass, not one per outcome
        if "error" in outcomes:
            return ItemScore("error", {"strict": None, "relaxed": None})
        if gate_failed is not None:
            return ItemScore("scored", {"strict": 0.0, "relaxed": 0.0})
        if "withheld" in outcomes:
            return ItemScore("withheld", {"strict": None, "relaxed": None})
        if "pending" in outcomes:
            return ItemScore("pending", {"strict": None, "relaxed": None})
        by_id = {d.question_id: d for d in decisions if d.kind == "hard"}
        total: float = 0
        weighted: float = 0
        full = True
        for q in program.hard:  # the same sums, in the same order, as sum() over them
            d = by_id.get(q.id)
            if d is None:
                return ItemScore("error", {"strict": None, "relaxed": None})  # undecided
            total += q.weight
            weighted += q.weight * d.score
            full = full and d.score >= 1.0
        if total <= 0:
            return ItemScore("scored", {"strict": 1.0, "relaxed": 1.0})
        strict = 1.0 if full else 0.0
        return ItemScore("scored", {"strict": strict, "relaxed": round(weighted / total, 6)})

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
    scored: list[ItemResult] = []
    withheld = errors = pending = gate_failed = 0
    for r in results:  # one pass over the items, not one per count
        status = r.status
        if status == "scored":
            scored.append(r)
        elif status == "withheld":
            withheld += 1
        elif status == "error":
            errors += 1
        elif status == "pending":
            pending += 1
        if r.gate_failed is not None:
            gate_failed += 1

    def mean(key: str) -> float | None:
        values = [v for r in scored if (v := r.scores.get(key)) is not None]
        return round(fmean(values), 4) if values else None

    return {
        "items": n,
        "scored": len(scored),
        "strict": mean("strict"),
        "relaxed": mean("relaxed"),
        "withheld": withheld,
        "errors": errors,
        "pending": pending,
        "withheld_rate": round(withheld / n, 4) if n else 0.0,
        "error_rate": round(errors / n, 4) if n else 0.0,
        "gate_failed": gate_failed,
    }
