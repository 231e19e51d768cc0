"""Grounded suites: per-axis tables, a leaderboard over runs, Spearman against an outside ranking.

Items carry an ``axis`` tag (GenOlympiad-style; several axes comma separated).
A run's *withheld rate* is the share of items withheld (grounding spent its
budget); its *grounding-failure rate* is the share of grounded questions
(decided by a check) whose grounding ended withheld or in error.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import fmean
from typing import Any

from groundeval.benchmarks._agree import AgreeInputError, load_ratings, rank_correlation
from groundeval.state import ItemResult
from groundeval.state._store import RunStore

AXES: tuple[str, ...] = (
    "text",
    "counterfactual",
    "symbol",
    "world",
    "physics",
    "quantity",
    "spatial",
    "latent",
    "long",
)


def item_axes(result: ItemResult) -> list[str]:
    """The axes an item belongs to (its ``axis`` tag, comma separated)."""
    return [a.strip() for a in result.tags.get("axis", "").split(",") if a.strip()]


def _mean(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(fmean(kept), 4) if kept else None


def group_stats(results: Sequence[ItemResult]) -> dict[str, Any]:
    """Strict/relaxed means over scored items; withheld, error and grounding-failure rates."""
    n = len(results)
    scored = [r for r in results if r.status == "scored"]
    grounded = [d for r in results for d in r.decisions if d.source == "check"]
    failed = sum(d.outcome in ("withheld", "error") for d in grounded)
    return {
        "items": n,
        "scored": len(scored),
        "strict": _mean([r.scores.get("strict") for r in scored]),
        "relaxed": _mean([r.scores.get("relaxed") for r in scored]),
        "withheld_rate": round(sum(r.status == "withheld" for r in results) / n, 4) if n else None,
        "error_rate": round(sum(r.status == "error" for r in results) / n, 4) if n else None,
        "grounding_failure_rate": round(failed / len(grounded), 4) if grounded else None,
    }


def axis_table(results: Sequence[ItemResult], axes: Sequence[str] = AXES) -> list[dict[str, Any]]:
    """One row per axis (known axes first, then any other axis found), then ``all``."""
    found = {a for r in results for a in item_axes(r)}
    order = [*axes, *sorted(found - set(axes))]
    rows = []
    for axis in order:
        members = [r for r in results if axis in item_axes(r)]
        if members:
            rows.append({"axis": axis, **group_stats(members)})
    rows.append({"axis": "all", **group_stats(results)})
    return rows


def run_row(run_dir: Path, name: str | None = None) -> dict[str, Any]:
    """One leaderboard row: overall stats and strict/relaxed per axis for a run folder."""
    store = RunStore(Path(run_dir))
    if not store.results_path.is_file():
        raise AgreeInputError(f"{run_dir}: not a run folder (no results.jsonl)")
    results = store.results()
    config = store.config() if store.config_path.is_file() else {}
    row: dict[str, Any] = {
        "run": name or Path(run_dir).name,
        "judge": config.get("judge", ""),
        **group_stats(results),
    }
    for axis_row in axis_table(results):
        if axis_row["axis"] != "all":
            row[f"{axis_row['axis']}.strict"] = axis_row["strict"]
            row[f"{axis_row['axis']}.relaxed"] = axis_row["relaxed"]
    return row


def leaderboard(
    run_dirs: Sequence[Path], *, sort_by: str = "relaxed", names: Sequence[str] | None = None
) -> list[dict[str, Any]]:
    """Rows for several runs (one per model), best first, with a 1-based rank."""
    if names is not None and len(names) != len(run_dirs):
        raise ValueError(f"got {len(names)} names for {len(run_dirs)} runs")
    rows = [run_row(d, names[i] if names else None) for i, d in enumerate(run_dirs)]
    rows.sort(key=lambda r: (r.get(sort_by) is None, -(r.get(sort_by) or 0.0), r["run"]))
    return [{"rank": i, **r} for i, r in enumerate(rows, start=1)]


def compare_ranking(
    rows: Sequence[dict[str, Any]],
    ranking_file: Path,
    column: str,
    *,
    id_column: str = "model",
    key: str = "relaxed",
) -> dict[str, Any]:
    """Spearman (and Kendall) between a leaderboard column and an outside ranking (e.g. Elo)."""
    external = load_ratings(ranking_file, column, id_column)
    ours = {r["run"]: r[key] for r in rows if r.get(key) is not None}
    shared = sorted(set(ours) & set(external))
    if len(shared) < 3:
        raise AgreeInputError(
            f"{ranking_file}: need 3 runs named in column {id_column!r}, matched {shared}"
        )
    out = rank_correlation([ours[s] for s in shared], [external[s] for s in shared])
    return {**out, "key": key, "external_column": column, "matched": shared}
