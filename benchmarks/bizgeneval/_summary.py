"""Summaries in BizGenEval's shape, from reference-format result files or from a run.

The reference evaluator writes one JSON per image, ``<domain>_<dimension>_<id>.json``::

    {"meta_info": {"1": {"result": true, "raw_description": "...", "reason": "..."}, ...},
     "prompt": "...", "accuracy": 0.9, "is_correct": false, "n_questions": 20}

A question counts as right only when its ``result`` is exactly ``true``; anything
else, a missing entry included, is an error. An item whose file is absent,
unreadable or has an empty ``meta_info`` is *missing*.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundeval.benchmarks.bizgeneval._data import BizGenEvalItem, read_rows, row_item
from groundeval.programs.scoring._checklist import (
    DIMENSION_ORDER,
    DOMAIN_ORDER,
    ChecklistRecord,
    ChecklistScoring,
    Missing,
    record_from_outcomes,
    records_table,
    summary_payload,
    zero_record,
)
from groundeval.state import ItemResult
from groundeval.state._store import atomic_write


@dataclass
class ReferenceScan:
    """What a folder of reference result files holds for the benchmark's items."""

    records: list[ChecklistRecord] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)
    """Item id -> why it has no usable result."""
    answer_errors: int = 0
    """Questions with no ``result`` in their file (counted as wrong)."""


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
    items: list[BizGenEvalItem], results_dir: Path, missing: Missing
) -> ReferenceScan:
    """Score every item that has a usable result file; note the others."""
    scan = ReferenceScan()
    for item in items:
        meta, why = _load_result(results_dir / f"{item.item_id}.json")
        if meta is None:
            scan.missing[item.item_id] = why
            if missing == "zero":
                n = {"easy": len(item.easy), "hard": len(item.hard), "all": item.n_questions}
                scan.records.append(zero_record(item.item_id, item.domain, item.dimension, n))
            continue
        right: dict[str, list[bool]] = {}
        for track, numbers in (("easy", item.easy), ("hard", item.hard)):
            flags = [_right(meta, j) for j in numbers]
            right[track] = [ok for ok, _ in flags]
            scan.answer_errors += sum(gone for _, gone in flags)
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


def write_tables(records: list[ChecklistRecord], summary: dict[str, Any], out: Path) -> None:
    """summary_by_domain.csv, summary_by_dimension.csv and summary.json, atomically."""
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(
        out / "summary_by_domain.csv", _csv_text(records_table(records, "domain", DOMAIN_ORDER))
    )
    atomic_write(
        out / "summary_by_dimension.csv",
        _csv_text(records_table(records, "dimension", DIMENSION_ORDER)),
    )
    atomic_write(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")


def summarize_reference(
    data: Path, results_dir: Path, out: Path | None = None, *, missing: Missing = "skip"
) -> dict[str, Any]:
    """Summarise a folder of reference-format result JSONs; write the tables when ``out``.

    ``missing="skip"`` leaves items without a result out of every mean (the
    reference's behaviour); ``"zero"`` scores them 0. The summary lists them.
    """
    if missing not in ("skip", "zero"):
        raise ValueError(f"missing must be 'skip' or 'zero', got {missing!r}")
    if not Path(results_dir).is_dir():
        raise FileNotFoundError(f"{results_dir}: results folder not found")
    items = [row_item(r) for r in read_rows(data)]
    scan = scan_reference(items, Path(results_dir), missing)
    summary: dict[str, Any] = summary_payload(
        scan.records,
        total_items=len(items),
        missing=sorted(scan.missing),
        convention=missing,
        counted_errors=scan.answer_errors,
    )
    summary["missing_reasons"] = dict(sorted(scan.missing.items()))
    if out is not None:
        write_tables(scan.records, summary, Path(out))
    return summary


def summarize_run(
    results: list[ItemResult], out: Path | None = None, *, missing: Missing = "skip"
) -> dict[str, Any]:
    """The same summary and tables from a groundeval run's checklist results."""
    protocol = ChecklistScoring(missing)
    records, _, _ = protocol.records(results)
    summary: dict[str, Any] = protocol.summarize(results)
    if out is not None:
        write_tables(records, summary, Path(out))
    return summary
