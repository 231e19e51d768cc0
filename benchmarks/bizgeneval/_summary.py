"""Summaries in BizGenEval's shape, from reference-format result files or from a run.

The reference evaluator writes one JSON per image, ``<domain>_<dimension>_<id>.json``::

    {"meta_info": {"1": {"result": true, "raw_description": "...", "reason": "..."}, ...},
     "prompt": "...", "accuracy": 0.9, "is_correct": false, "n_questions": 20}

A question counts as right only when its ``result`` is exactly ``true``. A
question with no ``result`` in its file is *unanswered*: by default it counts as
wrong, which is the reference evaluator's rule (its published numbers depend on
it), and the summary says how many it counted; ``unanswered="error"`` makes its
item an error instead, left out (or zeroed) and counted like a run's. An item
whose file is absent, unreadable or has an empty ``meta_info`` is *missing*.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from groundeval.benchmarks.bizgeneval._data import BizGenEvalItem, read_rows, row_item
from groundeval.programs.scoring import (
    DIMENSION_ORDER,
    DOMAIN_ORDER,
    ChecklistRecord,
    ChecklistScoring,
    LeftOut,
    Missing,
    count_rows,
    record_from_outcomes,
    records_table,
    summary_payload,
    zero_record,
)
from groundeval.state import ItemResult, atomic_write

Unanswered = Literal["wrong", "error"]
"""A question missing from a reference file: wrong (the reference's rule) or an item error."""


@dataclass
class ReferenceScan:
    """What a folder of reference result files holds for the benchmark's items."""

    records: list[ChecklistRecord] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    """Item id -> why it has no usable result."""
    left_out: list[LeftOut] = field(default_factory=list)
    """Every item without track scores (missing, or ``error`` under ``unanswered="error"``)."""
    answer_errors: int = 0
    """Questions with no ``result`` in their file counted as wrong (``unanswered="wrong"``)."""


def _load_result(path: Path) -> tuple[dict[str, Any] | None, str]:
    if not path.is_file():
        return None, "no result file"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"unreadable result file: {exc}"
    meta = data.get("meta_info") if isinstance(data, dict) else None
    if not isinstance(meta, dict) or not meta:
        return None, "result file has no meta_info"
    return meta, ""


def _right(meta: dict[str, Any], number: int) -> tuple[bool, bool]:
    """(right, missing) for one 1-based question number."""
    entry = meta.get(str(number))
    if not isinstance(entry, dict) or "result" not in entry:
        return False, True
    return entry["result"] is True, False


def scan_reference(
    items: list[BizGenEvalItem],
    results_dir: Path,
    missing: Missing,
    unanswered: Unanswered = "wrong",
) -> ReferenceScan:
    """Score every item that has a usable result file; note the others."""
    if unanswered not in ("wrong", "error"):
        raise ValueError(f"unanswered must be 'wrong' or 'error', got {unanswered!r}")
    scan = ReferenceScan()
    for item in items:
        meta, why = _load_result(results_dir / f"{item.item_id}.json")
        status = "missing"
        right: dict[str, list[bool]] = {}
        if meta is not None:
            gone: list[int] = []
            for track, numbers in (("easy", item.easy), ("hard", item.hard)):
                flags = [_right(meta, j) for j in numbers]
                right[track] = [ok for ok, _ in flags]
                gone += [j for j, (_, lost) in zip(numbers, flags, strict=True) if lost]
            if gone and unanswered == "error":
                meta, status = None, "error"
                why = "no result for question(s) " + ", ".join(map(str, sorted(gone)))
            else:
                scan.answer_errors += len(gone)
        if meta is None:
            scan.missing[item.item_id] = why
            scan.left_out.append(LeftOut(item.item_id, item.domain, item.dimension, status, why))
            if missing == "zero":
                n = {"easy": len(item.easy), "hard": len(item.hard), "all": item.n_questions}
                scan.records.append(zero_record(item.item_id, item.domain, item.dimension, n))
            continue
        scan.records.append(record_from_outcomes(item.item_id, item.domain, item.dimension, right))
    return scan


def reference_labels(data: Path, results_dir: Path) -> list[dict[str, Any]]:
    """Label rows (``item``, ``question``, ``outcome``, ``tags``, ``score``) for ``agree``.

    ``outcome`` is ``pass``/``fail``, or ``error`` for an answer missing from its
    file; ``score`` is the item's 20-question score. Items without a result are left out.
    """
    rows: list[dict[str, Any]] = []
    items = [row_item(r) for r in read_rows(data)]
    for item in items:
        meta, _ = _load_result(Path(results_dir) / f"{item.item_id}.json")
        if meta is None:
            continue
        tags = {"domain": item.domain, "dimension": item.dimension}
        flags = {j: _right(meta, j) for j in range(1, item.n_questions + 1)}
        record = record_from_outcomes(
            item.item_id,
            item.domain,
            item.dimension,
            {"easy": [flags[j][0] for j in item.easy], "hard": [flags[j][0] for j in item.hard]},
        )
        for j, (ok, gone) in flags.items():
            outcome = "error" if gone else ("pass" if ok else "fail")
            rows.append(
                {"item": item.item_id, "question": str(j), "outcome": outcome, "tags": tags}
            )
        rows[-1]["score"] = record.scores["all"]
    return rows


def _csv_text(rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def write_tables(
    records: list[ChecklistRecord],
    summary: dict[str, Any],
    out: Path,
    left_out: list[LeftOut] | None = None,
) -> None:
    """summary_by_{domain,dimension}.csv (the reference's), their counts, summary.json.

    counts_by_domain.csv / counts_by_dimension.csv have the tables' columns and
    rows errors / withheld / pending / missing: the items left out of (or zeroed in) each
    column's cells.
    """
    out.mkdir(parents=True, exist_ok=True)
    for group, order in (("domain", DOMAIN_ORDER), ("dimension", DIMENSION_ORDER)):
        atomic_write(
            out / f"summary_by_{group}.csv", _csv_text(records_table(records, group, order))
        )
        atomic_write(
            out / f"counts_by_{group}.csv", _csv_text(count_rows(left_out or [], group, order))
        )
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def summarize_reference(
    data: Path,
    results_dir: Path,
    out: Path | None = None,
    *,
    missing: Missing = "skip",
    unanswered: Unanswered = "wrong",
) -> dict[str, Any]:
    """Summarise a folder of reference-format result JSONs; write the tables when ``out``.

    ``missing="skip"`` leaves items without a result out of every mean (the
    reference's behaviour); ``"zero"`` scores them 0. The summary lists them and
    counts them per cell. ``unanswered`` decides what a question absent from its
    file is (see the module docstring).
    """
    if missing not in ("skip", "zero"):
        raise ValueError(f"missing must be 'skip' or 'zero', got {missing!r}")
    if not Path(results_dir).is_dir():
        raise FileNotFoundError(f"{results_dir}: results folder not found")
    items = [row_item(r) for r in read_rows(data)]
    scan = scan_reference(items, Path(results_dir), missing, unanswered)
    summary: dict[str, Any] = summary_payload(
        scan.records,
        total_items=len(items),
        left_out=sorted(scan.left_out, key=lambda x: x.item_id),
        convention=missing,
        counted_errors=scan.answer_errors,
    )
    summary["unanswered_convention"] = unanswered
    if out is not None:
        write_tables(scan.records, summary, Path(out), scan.left_out)
    return summary


def summarize_run(
    results: list[ItemResult], out: Path | None = None, *, missing: Missing = "skip"
) -> dict[str, Any]:
    """The same summary and tables from a groundeval run's checklist results."""
    protocol = ChecklistScoring(missing)
    records, left_out = protocol.records(results)
    summary: dict[str, Any] = protocol.summarize(results)
    if out is not None:
        write_tables(records, summary, Path(out), left_out)
    return summary
