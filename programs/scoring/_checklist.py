"""Checklist scoring (BizGenEval): per track ``max(0, 1 - alpha * errors)``, tables per group.

A question counts as right when its decision passed and wrong when it failed
(BizGenEval calls a wrong answer an *error*: that is what alpha penalises). A
question the judge did not answer (a judge error, or no decision at all) is never
counted as wrong: the item is ``error`` (``withheld`` for a withheld question),
has no track scores, and every summary cell counts it. ``missing="skip"`` leaves
such items out of the cell's mean (the reference's behaviour for items without a
result); ``missing="zero"`` scores them 0, and still counts them.
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


@dataclass(frozen=True)
class LeftOut:
    """An item with no track scores (unanswered question, withheld, no result) and why."""

    item_id: str
    domain: str
    dimension: str
    status: str
    """``error``, ``withheld``, ``pending`` or ``missing`` (never graded: no result at all)."""
    reason: str = ""


LEFT_OUT_KINDS: tuple[str, ...] = ("error", "withheld", "pending", "missing")
COUNT_NAMES: Mapping[str, str] = {
    "error": "errors",
    "withheld": "withheld",
    "pending": "pending",
    "missing": "missing",
}
"""How each kind of left-out item is counted in summaries (as in the other protocols)."""


def group_stats(
    records: Sequence[ChecklistRecord],
    group: str,
    left_out: Sequence[LeftOut] = (),
    convention: Missing = "skip",
) -> dict[str, dict[str, Any]]:
    """Per group value (sorted): count, mean accuracy and score over all 20, left-out counts.

    ``count`` is the number of items in the means; ``errors``/``withheld``/``missing``
    count the group's items without scores (in ``count`` as zeros under ``zero``).
    """
    out: dict[str, dict[str, Any]] = {}
    keys = {getattr(r, group) for r in records} | {getattr(r, group) for r in left_out}
    for key in sorted(keys):
        members = [r for r in records if getattr(r, group) == key]
        gone = [x for x in left_out if getattr(x, group) == key]
        out[key] = {
            "count": len(members),
            "accuracy": mean(r.accuracy["all"] for r in members) if members else None,
            "error_score": mean(r.scores["all"] for r in members) if members else None,
            **{COUNT_NAMES[k]: sum(x.status == k for x in gone) for k in LEFT_OUT_KINDS},
            "left_out_of_means": len(gone) if convention == "skip" else 0,
        }
    return out


def count_rows(
    left_out: Sequence[LeftOut], group: str, order: Sequence[str]
) -> list[dict[str, str]]:
    """Rows errors / withheld / pending / missing in the tables' columns: left-out items.

    A count holds for every track row of its column (an item is left out whole);
    Average is the table's total.
    """
    header = ["Split", *(display_name(k) for k in order), "Average"]
    rows: list[dict[str, str]] = []
    for kind in LEFT_OUT_KINDS:
        row = {h: "" for h in header} | {"Split": COUNT_NAMES[kind]}
        for key in order:
            row[display_name(key)] = str(
                sum(x.status == kind and getattr(x, group) == key for x in left_out)
            )
        row["Average"] = str(sum(x.status == kind for x in left_out))
        rows.append(row)
    return rows


def summary_payload(
    records: Sequence[ChecklistRecord],
    *,
    total_items: int,
    left_out: Sequence[LeftOut],
    convention: Missing,
    counted_errors: int,
) -> dict[str, Any]:
    """summary.json in the reference's shape plus what groundeval adds (left-out items, tables).

    ``records`` holds the items in the means (with zero records under ``zero``);
    ``left_out`` every item without track scores, whatever the convention.
    """
    scored = len(records) - (len(left_out) if convention == "zero" else 0)
    return {
        "total_items": total_items,
        "total_scored": scored,
        "easy_scored": scored,
        "hard_scored": scored,
        "error_alpha": ALPHA["all"],
        "by_domain": group_stats(records, "domain", left_out, convention),
        "by_dimension": group_stats(records, "dimension", left_out, convention),
        "missing_items": [x.item_id for x in left_out],
        "missing_reasons": {x.item_id: f"{x.status}: {x.reason}" for x in left_out},
        "missing_convention": convention,
        "missing_note": (
            "items without track scores (an unanswered question, a withheld question, no "
            "result) are left out of every mean and counted per cell"
            if convention == "skip"
            else "items without track scores (an unanswered question, a withheld question, no "
            "result) score 0 on every track and are counted per cell"
        ),
        "left_out": {COUNT_NAMES[k]: sum(x.status == k for x in left_out) for k in LEFT_OUT_KINDS},
        "answer_errors_counted_as_wrong": counted_errors,
        "tables": {
            "by_domain": records_table(records, "domain", DOMAIN_ORDER),
            "by_dimension": records_table(records, "dimension", DIMENSION_ORDER),
        },
        "cell_counts": {
            "by_domain": count_rows(left_out, "domain", DOMAIN_ORDER),
            "by_dimension": count_rows(left_out, "dimension", DIMENSION_ORDER),
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

    An item with an unanswered question is ``error`` (a withheld question:
    ``withheld``) and has no track scores; it is never scored as if the judge said
    no. Summaries count such items per cell and, with ``missing="skip"``, leave them
    out of the means (the reference's behaviour for items without a result); with
    ``missing="zero"`` they score 0.
    """

    name = "checklist"

    def __init__(self, missing: Missing = "skip") -> None:
        if missing not in ("skip", "zero"):
            raise ValueError(f"missing must be 'skip' or 'zero', got {missing!r}")
        self.missing: Missing = missing

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Track scores for one item; ``error``/``withheld`` when a question went unanswered."""
        by_id = {d.question_id: d for d in decisions}
        right: dict[str, list[bool]] = {"easy": [], "hard": []}
        for q in program.hard:
            track = q.tags.get("track", "")
            if track not in right:
                raise ValueError(
                    f"program {program.id}: question {q.id} needs tag track: easy|hard, "
                    f"got {track!r}"
                )
        empty: dict[str, float | None] = dict.fromkeys((*TRACKS, "accuracy"))
        if any(d.outcome == "error" for d in decisions):
            return ItemScore("error", empty)
        if gate_failed is None:
            if any(d.outcome == "withheld" for d in decisions):
                return ItemScore("withheld", empty)
            if any(d.outcome == "pending" for d in decisions):
                return ItemScore("pending", empty)
            if any(q.id not in by_id for q in program.hard):
                return ItemScore("error", empty)  # a question with no decision is unanswered
        for q in program.hard:
            d = by_id.get(q.id)
            right[q.tags["track"]].append(
                gate_failed is None and d is not None and d.outcome == "pass"
            )
        record = record_from_outcomes(program.id, "", "", right)
        # unrounded, so means match the reference's to the last digit
        scores: dict[str, float | None] = {t: record.scores[t] for t in TRACKS}
        scores["accuracy"] = record.accuracy["all"]
        return ItemScore("scored", scores)

    def records(self, results: list[ItemResult]) -> tuple[list[ChecklistRecord], list[LeftOut]]:
        """Records for the means (zero records under ``zero``) and the items left out."""
        records: list[ChecklistRecord] = []
        left_out: list[LeftOut] = []
        for r in results:
            domain, dimension = r.tags.get("domain", ""), r.tags.get("dimension", "")
            if r.status != "scored" or r.scores.get("all") is None:
                undecided = [
                    f"{d.question_id} ({d.outcome})"
                    for d in r.decisions
                    if d.outcome in ("error", "withheld", "pending")
                ]
                kind: str = r.status if r.status != "scored" else "error"
                if kind == "error" and not r.decisions:
                    kind = "missing"  # never graded: no image, unreadable input
                reason = r.error or (
                    "unanswered: " + ", ".join(undecided) if undecided else "no track scores"
                )
                left_out.append(LeftOut(r.item_id, domain, dimension, kind, reason))
                if self.missing == "zero":
                    records.append(zero_record(r.item_id, domain, dimension, {}))
                continue
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
        return records, left_out

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """The reference's summary.json content, from item results, with per-cell counts."""
        records, left_out = self.records(results)
        return summary_payload(
            records,
            total_items=len(results),
            left_out=left_out,
            convention=self.missing,
            counted_errors=0,
        )

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """Both tables, stacked, with a ``table`` column; each followed by its count rows."""
        records, left_out = self.records(results)
        rows: list[dict[str, Any]] = []
        for group, order in (("domain", DOMAIN_ORDER), ("dimension", DIMENSION_ORDER)):
            rows += [{"table": group, **row} for row in records_table(records, group, order)]
            rows += [{"table": group, **row} for row in count_rows(left_out, group, order)]
        return rows
