"""Checklist scoring (BizGenEval): per track ``max(0, 1 - alpha * errors)``, tables per group.

A question counts as right only when its decision passed; a fail, a judge error,
a withheld question or a question with no decision at all is an *error* in
BizGenEval's sense. Errors stay errors in the stored records; this protocol counts
them as wrong and its summary says how many it counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import mean
from typing import Any, Literal

from groundeval.programs._model import Program
from groundeval.programs.scoring._base import ItemScore, register_protocol
from groundeval.state import Decision, ItemResult

TRACKS: tuple[str, ...] = ("easy", "hard", "all")
ALPHA: Mapping[str, float] = {"easy": 0.2, "hard": 0.2, "all": 0.1}
"""Penalty per error: 0.2 on the 10-question easy and hard tracks, 0.1 on all 20."""
DOMAIN_ORDER: tuple[str, ...] = ("slides", "webpage", "poster", "chart", "scientific_figure")
DIMENSION_ORDER: tuple[str, ...] = ("layout", "attribute", "text", "knowledge")
Missing = Literal["skip", "zero"]


def track_score(errors: int, alpha: float) -> float:
    """BizGenEval's track score.

    >>> round(track_score(3, 0.2), 4)
    0.4
    >>> track_score(7, 0.2)
    0.0
    """
    return max(0.0, 1.0 - alpha * errors)


def display_name(key: str) -> str:
    """Column title as the reference prints it.

    >>> display_name("scientific_figure")
    'Scientific Figure'
    """
    return key.replace("_", " ").title()


@dataclass(frozen=True)
class ChecklistRecord:
    """One item's track scores and accuracies, with the groups it belongs to."""

    item_id: str
    domain: str
    dimension: str
    scores: Mapping[str, float]
    """Track -> ``max(0, 1 - alpha * errors)``."""
    accuracy: Mapping[str, float]
    """Track -> share of the track's questions answered right."""
    errors: Mapping[str, int]


def records_table(
    records: Sequence[ChecklistRecord], group: str, order: Sequence[str]
) -> list[dict[str, str]]:
    """Rows easy / hard / all, one column per group in ``order``, then Average (4 decimals).

    A group with no item is an empty cell and is left out of Average, as in the reference.
    """
    header = ["Split", *(display_name(k) for k in order), "Average"]
    rows: list[dict[str, str]] = []
    for track in TRACKS:
        row = {h: "" for h in header} | {"Split": track}
        means: list[float] = []
        for key in order:
            values = [r.scores[track] for r in records if getattr(r, group) == key]
            if values:
                means.append(mean(values))  # exact mean, as the reference computes it
                row[display_name(key)] = f"{means[-1]:.4f}"
        row["Average"] = f"{mean(means):.4f}" if means else ""
        rows.append(row)
    return rows


def group_stats(records: Sequence[ChecklistRecord], group: str) -> dict[str, dict[str, Any]]:
    """Per group value (sorted): count, mean accuracy and mean score over all 20 questions."""
    out: dict[str, dict[str, Any]] = {}
    for key in sorted({getattr(r, group) for r in records}):
        members = [r for r in records if getattr(r, group) == key]
        out[key] = {
            "count": len(members),
            "accuracy": mean(r.accuracy["all"] for r in members),
            "error_score": mean(r.scores["all"] for r in members),
        }
    return out


def summary_payload(
    records: Sequence[ChecklistRecord],
    *,
    total_items: int,
    missing: Sequence[str],
    convention: Missing,
    counted_errors: int,
) -> dict[str, Any]:
    """summary.json in the reference's shape plus what groundeval adds (missing, tables)."""
    return {
        "total_items": total_items,
        "total_scored": len(records),
        "easy_scored": len(records),
        "hard_scored": len(records),
        "error_alpha": ALPHA["all"],
        "by_domain": group_stats(records, "domain"),
        "by_dimension": group_stats(records, "dimension"),
        "missing_items": list(missing),
        "missing_convention": convention,
        "missing_note": (
            "items without a result are left out of every mean (the reference's behaviour)"
            if convention == "skip"
            else "items without a result score 0 on every track"
        ),
        "answer_errors_counted_as_wrong": counted_errors,
        "tables": {
            "by_domain": records_table(records, "domain", DOMAIN_ORDER),
            "by_dimension": records_table(records, "dimension", DIMENSION_ORDER),
        },
    }


def zero_record(item_id: str, domain: str, dimension: str, n: Mapping[str, int]) -> ChecklistRecord:
    """The record of a missing item under ``--missing zero``: every question wrong."""
    return ChecklistRecord(
        item_id,
        domain,
        dimension,
        {t: 0.0 for t in TRACKS},
        {t: 0.0 for t in TRACKS},
        dict(n),
    )


def record_from_outcomes(
    item_id: str, domain: str, dimension: str, right: Mapping[str, Iterable[bool]]
) -> ChecklistRecord:
    """Score one item from per-track right/wrong flags (``all`` is easy + hard)."""
    flags = {t: list(v) for t, v in right.items()}
    flags["all"] = [*flags.get("easy", []), *flags.get("hard", [])]
    scores, accuracy, errors = {}, {}, {}
    for track in TRACKS:
        wrong = sum(not ok for ok in flags.get(track, []))
        count = len(flags.get(track, []))
        errors[track] = wrong
        scores[track] = track_score(wrong, ALPHA[track])
        accuracy[track] = (count - wrong) / count if count else 0.0
    return ChecklistRecord(item_id, domain, dimension, scores, accuracy, errors)


@register_protocol("checklist")
class ChecklistScoring:
    """BizGenEval: easy / hard / all track scores; tables per domain and dimension.

    Items that could not be scored at all (no image, status ``error`` with no
    scores) are *missing*: left out of the means with ``missing="skip"`` (the
    reference's behaviour), scored 0 with ``missing="zero"``.
    """

    name = "checklist"

    def __init__(self, missing: Missing = "skip") -> None:
        if missing not in ("skip", "zero"):
            raise ValueError(f"missing must be 'skip' or 'zero', got {missing!r}")
        self.missing: Missing = missing

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Track scores for one item; every non-pass answer is an error."""
        by_id = {d.question_id: d for d in decisions}
        right: dict[str, list[bool]] = {"easy": [], "hard": []}
        for q in program.hard:
            track = q.tags.get("track", "")
            if track not in right:
                raise ValueError(
                    f"program {program.id}: question {q.id} needs tag track: easy|hard, "
                    f"got {track!r}"
                )
            d = by_id.get(q.id)
            right[track].append(gate_failed is None and d is not None and d.outcome == "pass")
        record = record_from_outcomes(program.id, "", "", right)
        # unrounded, so means match the reference's to the last digit
        scores: dict[str, float | None] = {t: record.scores[t] for t in TRACKS}
        scores["accuracy"] = record.accuracy["all"]
        return ItemScore("scored", scores)

    def records(self, results: list[ItemResult]) -> tuple[list[ChecklistRecord], list[str], int]:
        """Records for the scored items, the missing item ids, and errors counted as wrong."""
        records: list[ChecklistRecord] = []
        missing: list[str] = []
        counted = 0
        for r in results:
            domain, dimension = r.tags.get("domain", ""), r.tags.get("dimension", "")
            if r.scores.get("all") is None:
                missing.append(r.item_id)
                if self.missing == "zero":
                    records.append(zero_record(r.item_id, domain, dimension, {}))
                continue
            counted += sum(d.outcome in ("error", "withheld") for d in r.decisions)
            records.append(
                ChecklistRecord(
                    r.item_id,
                    domain,
                    dimension,
                    {t: float(r.scores[t] or 0.0) for t in TRACKS},
                    {"all": float(r.scores.get("accuracy") or 0.0)},
                    {},
                )
            )
        return records, missing, counted

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """The reference's summary.json content, from item results."""
        records, missing, counted = self.records(results)
        return summary_payload(
            records,
            total_items=len(results),
            missing=missing,
            convention=self.missing,
            counted_errors=counted,
        )

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """Both tables, stacked, with a ``table`` column."""
        records, _, _ = self.records(results)
        rows: list[dict[str, Any]] = []
        for group, order in (("domain", DOMAIN_ORDER), ("dimension", DIMENSION_ORDER)):
            rows += [{"table": group, **row} for row in records_table(records, group, order)]
        return rows
