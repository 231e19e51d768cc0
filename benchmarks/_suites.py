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

import numpy as np

from groundeval.benchmarks._agree import AgreeInputError, load_ratings, rank_correlation
from groundeval.programs.intervals import score_matrix
from groundeval.programs.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bca_intervals,
    cell_seed,
    rank_stability,
    spearman,
)
from groundeval.state import ItemResult, RunStore

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


def group_stats(
    results: Sequence[ItemResult],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    cell: Sequence[str] = ("all",),
) -> dict[str, Any]:
    """Strict/relaxed means over scored items; withheld, error and grounding-failure rates.

    Strict, relaxed and the withheld rate carry ``_ci95`` intervals (BCa, items
    resampled); ``cell`` names the group so its generator is its own.
    """
    n = len(results)
    scored = [r for r in results if r.status == "scored"]
    grounded = [d for r in results for d in r.decisions if d.source == "check"]
    failed = sum(d.outcome in ("withheld", "error") for d in grounded)
    stats: dict[str, Any] = {
        "items": n,
        "scored": len(scored),
        "strict": _mean([r.scores.get("strict") for r in scored]),
        "relaxed": _mean([r.scores.get("relaxed") for r in scored]),
        "withheld_rate": round(sum(r.status == "withheld" for r in results) / n, 4) if n else None,
        "error_rate": round(sum(r.status == "error" for r in results) / n, 4) if n else None,
        "grounding_failure_rate": round(failed / len(grounded), 4) if grounded else None,
    }
    matrix = score_matrix(results, ["strict", "relaxed"])[:, :3]
    found = bca_intervals(matrix, resamples=resamples, rng=cell_seed(seed, "suite", *cell))
    for name, interval in zip(("strict", "relaxed", "withheld_rate"), found, strict=True):
        stats[f"{name}_ci95"] = None if stats[name] is None else interval
    return stats


def axis_table(
    results: Sequence[ItemResult],
    axes: Sequence[str] = AXES,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[dict[str, Any]]:
    """One row per axis (known axes first, then any other axis found), then ``all``."""
    found = {a for r in results for a in item_axes(r)}
    order = [*axes, *sorted(found - set(axes))]
    rows = []
    for axis in order:
        members = [r for r in results if axis in item_axes(r)]
        if members:
            stats = group_stats(members, resamples=resamples, seed=seed, cell=("axis", axis))
            rows.append({"axis": axis, **stats})
    rows.append({"axis": "all", **group_stats(results, resamples=resamples, seed=seed)})
    return rows


def _results(run_dir: Path) -> list[ItemResult]:
    store = RunStore(Path(run_dir))
    if not store.results_path.is_file():
        raise AgreeInputError(f"{run_dir}: not a run folder (no results.jsonl)")
    return store.results()


def run_row(
    run_dir: Path,
    name: str | None = None,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """One leaderboard row: overall stats and strict/relaxed per axis, each with its interval."""
    store = RunStore(Path(run_dir))
    results = _results(run_dir)
    config = store.config() if store.config_path.is_file() else {}
    row: dict[str, Any] = {"run": name or Path(run_dir).name, "judge": config.get("judge", "")}
    for axis_row in axis_table(results, resamples=resamples, seed=seed):
        if axis_row["axis"] == "all":
            row |= {k: v for k, v in axis_row.items() if k != "axis"}
            continue
        for key in ("strict", "relaxed"):
            row[f"{axis_row['axis']}.{key}"] = axis_row[key]
            row[f"{axis_row['axis']}.{key}_ci95"] = axis_row[f"{key}_ci95"]
    return row


def leaderboard(
    run_dirs: Sequence[Path],
    *,
    sort_by: str = "relaxed",
    names: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> list[dict[str, Any]]:
    """Rows for several runs (one per model), best first, with a 1-based rank."""
    if names is not None and len(names) != len(run_dirs):
        raise ValueError(f"got {len(names)} names for {len(run_dirs)} runs")
    rows = [
        run_row(d, names[i] if names else None, resamples=resamples, seed=seed)
        for i, d in enumerate(run_dirs)
    ]
    rows.sort(key=lambda r: (r.get(sort_by) is None, -(r.get(sort_by) or 0.0), r["run"]))
    return [{"rank": i, **r} for i, r in enumerate(rows, start=1)]


def withheld_vs_strict(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Spearman's rho of the withheld rate against the strict score across runs (GenOlympiad).

    Runs without a strict score are left out and named; rho is null (with a note) below 3 runs.
    """
    kept = [r for r in rows if r.get("strict") is not None and r.get("withheld_rate") is not None]
    out = spearman([r["withheld_rate"] for r in kept], [r["strict"] for r in kept])
    out["runs"] = [r["run"] for r in kept]
    left_out = [r["run"] for r in rows if r not in kept]
    if left_out:
        out["left_out"] = left_out
    return out


def rank_rows(
    run_dirs: Sequence[Path],
    rows: Sequence[dict[str, Any]],
    *,
    key: str = "relaxed",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Rank stability per run: share of resamples keeping its rank, and its 95 % rank interval.

    Runs over the same item ids are resampled together (paired), else each on its own.
    """
    if key not in ("strict", "relaxed"):
        raise ValueError(f"ranks are by strict or relaxed, got {key!r}")
    per_run = [{r.item_id: r for r in _results(d)} for d in run_dirs]
    ids = [sorted(p) for p in per_run]
    paired = all(i == ids[0] for i in ids)
    columns = [
        np.array([_scored_value(p[i], key) for i in sorted(p)], dtype=np.float64) for p in per_run
    ]
    found = rank_stability(columns, paired=paired, resamples=resamples, seed=seed)
    names = [Path(d).name for d in run_dirs]
    by_name = {n: f for n, f in zip(names, found, strict=True)}
    out = {
        "key": key,
        "resampling": "paired" if paired else "independent",
        "resamples": resamples,
        "seed": seed,
    }
    for row in rows:
        if row["run"] in by_name:
            row.update({k: v for k, v in by_name[row["run"]].items() if k != "rank"})
    return out


def _scored_value(result: ItemResult, key: str) -> float:
    value = result.scores.get(key)
    return float(value) if result.status == "scored" and value is not None else float("nan")


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
