"""Intervals for summary.json: ``m_ci95: [low, high]`` next to every metric ``m`` of every cell.

Each protocol's cells are rebuilt from the item results exactly as its summary
computes them (same items, same means), then resampled over items. A metric
that is null gets a null interval; so does one with fewer than 2 items behind it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from groundeval.programs.scoring._checklist import (
    DIMENSION_ORDER,
    DOMAIN_ORDER,
    TRACKS,
    ChecklistScoring,
    display_name,
)
from groundeval.programs.scoring._dependency import DependencyScoring
from groundeval.programs.scoring._rubric import SCORE_KEYS
from groundeval.programs.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    LEVEL,
    Interval,
    StatsInputError,
    bca_intervals,
    cell_seed,
    mean_of_means_interval,
)
from groundeval.state import ItemResult

NAN = float("nan")


def interval_options(config: dict[str, Any]) -> tuple[int, int]:
    """(resamples, seed) from a run's configuration (``ci_resamples``, ``ci_seed``)."""
    resamples = config.get("ci_resamples", DEFAULT_RESAMPLES)
    seed = config.get("ci_seed", DEFAULT_SEED)
    if not isinstance(resamples, int) or isinstance(resamples, bool) or resamples < 1:
        raise StatsInputError(
            f"run.json: field 'ci_resamples' must be a positive integer, got {resamples!r}"
        )
    if not isinstance(seed, int) or isinstance(seed, bool):
        raise StatsInputError(f"run.json: field 'ci_seed' must be an integer, got {seed!r}")
    return resamples, seed


def ci_note(resamples: int, seed: int) -> dict[str, Any]:
    """How the intervals were computed (kept in the summary next to them)."""
    return {
        "method": "BCa bootstrap over items",
        "level": LEVEL,
        "resamples": resamples,
        "seed": seed,
    }


def value(result: ItemResult, key: str, *, scored_only: bool = True) -> float:
    """An item's score ``key`` as a float, NaN when the item does not count for it."""
    if scored_only and result.status != "scored":
        return NAN
    v = result.scores.get(key)
    return NAN if v is None else float(v)


def score_matrix(results: Sequence[ItemResult], keys: Sequence[str]) -> np.ndarray:
    """Rows per item: each score key (NaN unless scored), then withheld, error, gate-failed 0/1."""
    rows = [
        [
            *(value(r, k) for k in keys),
            r.status == "withheld",
            r.status == "error",
            r.gate_failed is not None,
        ]
        for r in results
    ]
    return np.array(rows, dtype=np.float64).reshape(len(results), len(keys) + 3)


RATE_NAMES = ("withheld_rate", "error_rate", "gate_failed_rate")


class _Cells:
    """Attaches intervals to summary cells, one seeded generator per cell."""

    def __init__(self, protocol: str, resamples: int, seed: int) -> None:
        self.protocol, self.resamples, self.seed = protocol, resamples, seed

    def attach(
        self, cell: Any, path: Sequence[str], names: Sequence[str], matrix: np.ndarray
    ) -> None:
        """Set ``name_ci95`` in ``cell`` for every name it holds (null where it is null)."""
        if not isinstance(cell, dict):
            return
        wanted = [i for i, name in enumerate(names) if name in cell]
        if not wanted:
            return
        rng = cell_seed(self.seed, self.protocol, *path)
        found = bca_intervals(matrix[:, wanted], resamples=self.resamples, rng=rng)
        for i, interval in zip(wanted, found, strict=True):
            cell[f"{names[i]}_ci95"] = None if cell[names[i]] is None else interval

    def of_means(self, path: Sequence[str], strata: Sequence[np.ndarray]) -> Interval:
        """Interval of a mean of group means, items resampled within their groups."""
        rng = cell_seed(self.seed, self.protocol, *path)
        return mean_of_means_interval(strata, resamples=self.resamples, rng=rng)

    def single(self, path: Sequence[str], values: np.ndarray) -> Interval:
        """Interval of one mean."""
        rng = cell_seed(self.seed, self.protocol, *path)
        return bca_intervals(values, resamples=self.resamples, rng=rng)[0]


def _by_tag(results: Sequence[ItemResult]) -> dict[str, dict[str, list[ItemResult]]]:
    out: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
    for r in results:
        for key, tag in r.tags.items():
            out[key][tag].append(r)
    return out


def _grounded(cells: _Cells, results: list[ItemResult], section: dict[str, Any]) -> None:
    names = ("strict", "relaxed", "withheld_rate", "error_rate")

    def matrix(group: Sequence[ItemResult]) -> np.ndarray:
        return score_matrix(group, ["strict", "relaxed"])[:, :4]

    cells.attach(section.get("overall"), ["overall"], names, matrix(results))
    for key, groups in _by_tag(results).items():
        for tag, members in groups.items():
            cell = section.get("by_tag", {}).get(key, {}).get(tag)
            cells.attach(cell, ["by_tag", key, tag], names, matrix(members))


def _checklist(cells: _Cells, results: list[ItemResult], section: dict[str, Any]) -> None:
    convention = section.get("missing_convention", "skip")
    scoring = ChecklistScoring(convention if convention == "zero" else "skip")
    records = scoring.records(results)[0]  # the records the means were taken over
    tables: dict[str, list[dict[str, Interval | str]]] = {}
    for group, order in (("domain", DOMAIN_ORDER), ("dimension", DIMENSION_ORDER)):
        members = {k: [r for r in records if getattr(r, group) == k] for k in order}
        cells_of_group = section.get(f"by_{group}", {})
        for key in sorted(cells_of_group):
            rows = [r for r in records if getattr(r, group) == key]
            matrix = np.array([[r.accuracy["all"], r.scores["all"]] for r in rows]).reshape(-1, 2)
            cells.attach(
                cells_of_group[key], [f"by_{group}", key], ("accuracy", "error_score"), matrix
            )
        table = []
        for track in TRACKS:
            row: dict[str, Interval | str] = {"Split": track}
            strata = []
            for key in order:
                if members[key]:
                    values = np.array([r.scores[track] for r in members[key]])
                    strata.append(values)
                    row[display_name(key)] = cells.single([group, track, key], values)
            row["Average"] = cells.of_means([group, track, "average"], strata)
            table.append(row)
        tables[f"by_{group}"] = table
    section["tables_ci95"] = tables


def _rubric(cells: _Cells, results: list[ItemResult], section: dict[str, Any]) -> None:
    def matrix(group: Sequence[ItemResult]) -> np.ndarray:
        return score_matrix(group, SCORE_KEYS)[:, : len(SCORE_KEYS)]

    cells.attach(section.get("overall"), ["overall"], SCORE_KEYS, matrix(results))
    by_task: dict[str, list[ItemResult]] = defaultdict(list)
    for r in results:
        by_task[r.tags.get("task_type", "")].append(r)
    for task, members in sorted(by_task.items()):
        cell = section.get("by_task", {}).get(task)
        cells.attach(cell, ["by_task", task], SCORE_KEYS, matrix(members))
    if "task_mean" in section:
        strata = [matrix(m)[:, 0] for _, m in sorted(by_task.items())]
        interval = cells.of_means(["task_mean"], strata) if strata else None
        section["task_mean_ci95"] = None if section["task_mean"] is None else interval


def _dependency(cells: _Cells, results: list[ItemResult], section: dict[str, Any]) -> None:
    convention = section.get("missing_convention", "skip")
    scorer = DependencyScoring(convention if convention == "zero" else "skip")

    def values(group: Sequence[ItemResult]) -> np.ndarray:
        found = [scorer.item_score(r) for r in group]
        return np.array([np.nan if v is None else v for v in found], dtype=np.float64)

    everything = values(results)
    if "score" in section:
        interval = cells.single(["score"], everything)
        section["score_ci95"] = None if section["score"] is None else interval
    cells.attach(section.get("overall"), ["score"], ("score",), everything[:, None])
    out: dict[str, dict[str, Interval]] = {}
    for key, groups in sorted(_by_tag(results).items()):
        for tag, members in sorted(groups.items()):
            interval = cells.single(["by_tag", key, tag], values(members))
            out.setdefault(key, {})[tag] = interval
            counts = section.get("by_tag_counts", {}).get(key, {}).get(tag)
            if isinstance(counts, dict) and "score" in counts:
                counts["score_ci95"] = None if counts["score"] is None else interval
    section["by_tag_ci95"] = out


_PROTOCOLS: dict[str, Callable[[_Cells, list[ItemResult], dict[str, Any]], None]] = {
    "grounded": _grounded,
    "checklist": _checklist,
    "rubric": _rubric,
    "dependency": _dependency,
}


def add_intervals(
    protocol: str,
    results: list[ItemResult],
    section: dict[str, Any],
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A protocol's summary section with ``m_ci95`` beside each metric, and how they were made.

    ``config`` is the run's configuration (``ci_resamples``, ``ci_seed``). A
    protocol this module does not know is returned unchanged.
    """
    attach = _PROTOCOLS.get(protocol)
    if attach is None:
        return section
    resamples, seed = interval_options(config or {})
    attach(_Cells(protocol, resamples, seed), results, section)
    section["ci"] = ci_note(resamples, seed)
    return section


def interval_config(store: Any) -> dict[str, Any]:
    """The interval settings of a run folder's run.json (empty when it has none yet)."""
    path = getattr(store, "config_path", None)
    if path is None or not path.is_file():
        return {}
    config: dict[str, Any] = store.config()
    return {k: config[k] for k in ("ci_resamples", "ci_seed") if k in config}


__all__ = [
    "RATE_NAMES",
    "add_intervals",
    "ci_note",
    "interval_config",
    "interval_options",
    "score_matrix",
    "value",
]
