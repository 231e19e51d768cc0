"""Summary tables of the index page: runs side by side, computed from the stored results."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from statistics import fmean, median
from typing import Any

from groundeval.programs.intervals import RATE_NAMES, interval_options, score_matrix
from groundeval.programs.scoring import get_protocol
from groundeval.programs.stats import StatsInputError, bca_intervals, cell_seed
from groundeval.state._records import ItemResult, Usage
from groundeval.state.report._collect import (
    ReportError,
    RunData,
    format_score,
    overridden,
    score_keys,
)


@dataclass(frozen=True)
class Table:
    """A table as plain cells: the template only prints them (autoescaped)."""

    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""


def group_stats(results: list[ItemResult], keys: list[str]) -> dict[str, float | int | None]:
    """Items, scored count, mean of each score over scored items, withheld/error/gate rates."""
    n = len(results)
    scored = [r for r in results if r.status == "scored"]
    stats: dict[str, float | int | None] = {"items": n, "scored": len(scored)}
    for key in keys:
        values = [v for r in scored if (v := r.scores.get(key)) is not None]
        stats[key] = fmean(values) if values else None
    stats["withheld_rate"] = sum(r.status == "withheld" for r in results) / n if n else None
    stats["error_rate"] = sum(r.status == "error" for r in results) / n if n else None
    stats["gate_failed_rate"] = sum(r.gate_failed is not None for r in results) / n if n else None
    return stats


def groups(results: list[ItemResult]) -> dict[str, list[ItemResult]]:
    """'overall' and one group per ``tag=value``, in sorted order."""
    by_tag: dict[str, list[ItemResult]] = defaultdict(list)
    for r in results:
        for key, value in r.tags.items():
            by_tag[f"{key}={value}"].append(r)
    return {"overall": results, **dict(sorted(by_tag.items()))}


def protocols(runs: list[RunData]) -> list[str]:
    """Scoring protocols used by any run, sorted."""
    return sorted({r.scoring for run in runs for r in run.results})


def group_intervals(
    run: RunData, protocol: str, name: str, results: list[ItemResult], keys: list[str]
) -> dict[str, list[float] | None]:
    """95 % intervals (BCa, items resampled) of each score mean and rate of one group.

    Drawn as summary.json draws them (same columns, same seeded cell), so a
    grounded run shows the same intervals here and there.
    """
    if not results:
        return {}
    try:
        resamples, seed = interval_options(run.config)
    except StatsInputError as exc:
        raise ReportError(f"{run.root}: {exc}") from exc
    path = ["overall"] if name == "overall" else ["by_tag", *name.split("=", 1)]
    first = [k for k in ("strict", "relaxed") if k in keys]  # summary.json's column order
    keys = [*first, *(k for k in keys if k not in first)]
    matrix = score_matrix(results, keys)
    width = len(keys) + 2  # scores, withheld, error: summary.json's columns
    rng = cell_seed(seed, protocol, *path)
    found = bca_intervals(matrix[:, :width], resamples=resamples, rng=rng)
    found += bca_intervals(matrix[:, width:], resamples=resamples, rng=cell_seed(seed, *path))
    return dict(zip([*keys, *RATE_NAMES], found, strict=True))


def with_interval(value: float | None, interval: list[float] | None) -> str:
    """A cell: the value and, when there is one, its 95 % interval."""
    if value is None:
        return format_score(None)
    if interval is None:
        return format_score(value)
    return f"{format_score(value)} [{format_score(interval[0])}, {format_score(interval[1])}]"


def score_table(runs: list[RunData], protocol: str) -> Table:
    """Per group (overall, each tag value): every score and rate with its 95 % interval."""
    per_run = [[r for r in run.results if r.scoring == protocol] for run in runs]
    keys = score_keys([r for rs in per_run for r in rs])
    metrics = ["items", *keys, "withheld_rate", "error_rate", "gate_failed_rate"]
    multi = len(runs) > 1
    header = ["group"] + [f"{m} · {run.label}" if multi else m for m in metrics for run in runs]
    names = list(dict.fromkeys(g for rs in per_run for g in groups(rs)))
    grouped = [groups(rs) for rs in per_run]
    rows = []
    for name in names:
        members = [g.get(name, []) for g in grouped]
        stats = [group_stats(m, keys) for m in members]
        intervals = [
            group_intervals(run, protocol, name, m, keys)
            for run, m in zip(runs, members, strict=True)
        ]
        cells = [name]
        for m in metrics:
            for s, ci in zip(stats, intervals, strict=True):
                value = s.get(m)
                cells.append(
                    str(value) if m == "items" else with_interval(_float(value), ci.get(m))
                )
        rows.append(cells)
    note = (
        "means over scored items; rates over all items of the group; [95 % interval: BCa "
        "bootstrap over the group's items, null when fewer than 2 items count]"
    )
    return Table(f"{protocol}: scores and rates by tag", header, rows, note)


def overview_table(runs: list[RunData]) -> Table:
    """One row per run: status counts, overrides, calls, tokens, cost, time."""
    header = ["run", "judge", "items", "scored", "withheld", "error", "gate failed",
              "overridden", "calls", "cached", "input tok", "output tok", "thinking tok",
              "cost $", "judge s", "median item s"]  # fmt: skip
    rows = []
    for run in runs:
        total = Usage()
        for u in run.usage.values():
            total = total.add(u.usage)
        seconds = [u.seconds for u in run.usage.values()]
        res = run.results
        rows.append([
            run.label, str(run.config.get("judge", "")), str(len(res)),
            *(str(sum(r.status == s for r in res)) for s in ("scored", "withheld", "error")),
            str(sum(r.gate_failed is not None for r in res)),
            str(sum(overridden(r.decisions) for r in res)),
            str(total.calls), str(total.cached_calls), f"{total.input_tokens:,}",
            f"{total.output_tokens:,}", f"{total.thinking_tokens:,}", f"{total.cost_usd:.4f}",
            f"{total.seconds:.1f}", f"{median(seconds):.3f}" if seconds else "–",
        ])  # fmt: skip
    return Table("Runs", header, rows)


def agreement_table(runs: list[RunData]) -> Table | None:
    """Decision agreement of each further run with the first (None for a single run)."""
    if len(runs) < 2:
        return None
    first = runs[0]
    header = ["run", "shared items", "shared decisions", "same outcome", "agreement",
              "items that differ"]  # fmt: skip
    rows = []
    for other in runs[1:]:
        shared = [i for i in first.by_id if i in other.by_id]
        same = total = differ = 0
        for item in shared:
            a = {d.question_id: d.outcome for d in first.by_id[item].decisions}
            b = {d.question_id: d.outcome for d in other.by_id[item].decisions}
            common = [q for q in a if q in b]
            hits = sum(a[q] == b[q] for q in common)
            same, total = same + hits, total + len(common)
            differ += hits != len(common)
        rate = f"{same / total:.1%}" if total else "–"
        rows.append([other.label, str(len(shared)), str(total), str(same), rate, str(differ)])
    return Table(f"Agreement with {first.label}", header, rows)


def protocol_tables(run: RunData) -> list[Table]:
    """The protocols' own summary rows (BizGenEval tables, UEval tasks ...) for one run."""
    tables = []
    by_protocol: dict[str, list[ItemResult]] = defaultdict(list)
    for r in run.results:
        by_protocol[r.scoring].append(r)
    for name, results in sorted(by_protocol.items()):
        rows: list[dict[str, Any]] = get_protocol(name).summary_rows(results)
        header = list(dict.fromkeys(k for row in rows for k in row))
        cells = [[_cell(row.get(h)) for h in header] for row in rows]
        tables.append(Table(f"{run.label}: {name} protocol table", header, cells))
    return tables


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) else None


def _cell(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return format_score(value)
    return str(value)
