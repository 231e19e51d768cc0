"""Plots of the index page, drawn with matplotlib into SVG files (no pyplot, no global state)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib
from matplotlib.figure import Figure

from groundeval.benchmarks import AXES, axis_table, item_axes, withheld_vs_strict
from groundeval.benchmarks import group_stats as suite_stats
from groundeval.programs.intervals import interval_options
from groundeval.state._records import Usage
from groundeval.state.report._collect import OUTCOMES, RunData, score_keys
from groundeval.state.report._tables import group_intervals, group_stats, groups

MAX_GROUPS = 24
"""Tag values drawn per score plot; the table below it lists them all."""
COLOURS = {
    "pass": "#3a923a",
    "fail": "#c8402f",
    "withheld": "#d9a21b",
    "error": "#7a5195",
    "pending": "#9a9a9a",
}


@dataclass(frozen=True)
class Plot:
    """An SVG written under the report folder, and what it shows."""

    file: str
    title: str


def write_plots(runs: list[RunData], folder: Path) -> list[Plot]:
    """Draw every plot of the index into ``folder``; return them in page order."""
    folder.mkdir(parents=True, exist_ok=True)
    plots: list[Plot] = []
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "ge", "font.size": 9}):
        for n, protocol in enumerate(sorted({r.scoring for run in runs for r in run.results})):
            fig = _scores_figure(runs, protocol)
            plots.append(_save(fig, folder, f"scores-{n}.svg", f"{protocol}: mean scores by tag"))
        axes = _axes_found(runs)
        if axes:
            plots.append(
                _save(_axes_figure(runs, axes), folder, "axes.svg", "Strict score per axis")
            )
        if len(runs) > 1:
            fig, title = _withheld_figure(runs)
            plots.append(_save(fig, folder, "withheld-vs-strict.svg", title))
        plots.append(
            _save(_rates_figure(runs), folder, "rates.svg", "Withheld, error, gate-failed rates")
        )
        plots.append(_save(_outcomes_figure(runs), folder, "outcomes.svg", "Decision outcomes"))
        plots.append(_save(_usage_figure(runs), folder, "usage.svg", "Calls, tokens and cost"))
    return plots


def _axes_found(runs: list[RunData]) -> list[str]:
    """Axes tagged on any item, known axes first."""
    found = {a for run in runs for r in run.results for a in item_axes(r)}
    return [*(a for a in AXES if a in found), *sorted(found - set(AXES))]


def _save(fig: Figure, folder: Path, name: str, title: str) -> Plot:
    fig.savefig(folder / name, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return Plot(f"{folder.name}/{name}", title)


def _scores_figure(runs: list[RunData], protocol: str) -> Figure:
    """Horizontal bars: each score key per run, overall and per tag; whiskers: 95 % interval."""
    per_run = [[r for r in run.results if r.scoring == protocol] for run in runs]
    keys = score_keys([r for rs in per_run for r in rs])
    names = list(dict.fromkeys(g for rs in per_run for g in groups(rs)))[:MAX_GROUPS]
    series = [(k, run, rs) for k in keys for run, rs in zip(runs, per_run, strict=True)]
    height = max(2.0, 0.22 * len(names) * max(1, len(series)) + 0.8)
    fig = Figure(figsize=(7.0, min(height, 14.0)))
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for s, (key, run, results) in enumerate(series):
        grouped = groups(results)
        values = [group_stats(grouped.get(g, []), [key]).get(key) for g in names]
        cis = [group_intervals(run, protocol, g, grouped.get(g, []), [key]).get(key) for g in names]
        ys = [i + s * width for i in range(len(names))]
        xs = [float(v or 0.0) for v in values]
        ax.barh(
            ys,
            xs,
            height=width,
            label=_legend(key, run.label, runs),
            xerr=_whiskers(xs, cis),
            error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333"},
        )
    ax.set_yticks([i + 0.4 - width / 2 for i in range(len(names))], labels=names)
    ax.invert_yaxis()
    ax.set_xlabel("mean over scored items (whiskers: 95 % interval)")
    if series:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _whiskers(values: list[float], intervals: list[list[float] | None]) -> list[list[float]]:
    """Error-bar lengths below and above each value (0 where there is no interval)."""
    below = [max(0.0, v - ci[0]) if ci else 0.0 for v, ci in zip(values, intervals, strict=True)]
    above = [max(0.0, ci[1] - v) if ci else 0.0 for v, ci in zip(values, intervals, strict=True)]
    return [below, above]


def _axes_figure(runs: list[RunData], axes: list[str]) -> Figure:
    """Strict score per axis and run, with 95 % whiskers (GenOlympiad's per-axis bars)."""
    fig = Figure(figsize=(7.0, max(2.0, 0.3 * len(axes) * len(runs) + 0.8)))
    ax = fig.subplots()
    width = 0.8 / len(runs)
    for n, run in enumerate(runs):
        resamples, seed = interval_options(run.config)
        table = {r["axis"]: r for r in axis_table(run.results, resamples=resamples, seed=seed)}
        rows = [table.get(a) for a in axes]
        xs = [float(r["strict"] or 0.0) if r else 0.0 for r in rows]
        cis = [r["strict_ci95"] if r else None for r in rows]
        ax.barh(
            [i + n * width for i in range(len(axes))],
            xs,
            height=width,
            label=run.label,
            xerr=_whiskers(xs, cis),
            error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333"},
        )
    ax.set_yticks([i + 0.4 - width / 2 for i in range(len(axes))], labels=axes)
    ax.invert_yaxis()
    ax.set_xlabel("strict score (whiskers: 95 % interval)")
    ax.legend(fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    return fig


def withheld_rows(runs: list[RunData]) -> list[dict[str, Any]]:
    """Per run: its strict score and withheld rate over all items (for the rank correlation)."""
    rows = []
    for run in runs:
        stats = suite_stats(run.results, resamples=1)
        rows.append(
            {"run": run.label, "strict": stats["strict"], "withheld_rate": stats["withheld_rate"]}
        )
    return rows


def _withheld_figure(runs: list[RunData]) -> tuple[Figure, str]:
    """Withheld rate against strict score, one point per run, with Spearman's rho."""
    rows = withheld_rows(runs)
    rho = withheld_vs_strict(rows)
    fig = Figure(figsize=(5.0, 3.2))
    ax = fig.subplots()
    for r in rows:
        if r["strict"] is not None and r["withheld_rate"] is not None:
            ax.scatter([r["withheld_rate"]], [r["strict"]], color="#4c72b0")
            ax.annotate(
                r["run"],
                (r["withheld_rate"], r["strict"]),
                fontsize=7,
                xytext=(3, 3),
                textcoords="offset points",
            )
    ax.set_xlabel("withheld rate (grounding failures)")
    ax.set_ylabel("strict score")
    ax.grid(alpha=0.3)
    if rho["rho"] is None:
        title = f"Withheld rate vs strict score across runs (Spearman ρ: {rho['note']})"
    else:
        title = (
            f"Withheld rate vs strict score across runs: Spearman ρ = {rho['rho']:.2f} "
            f"(p = {rho['p_value']:.2g}, n = {rho['n']})"
        )
    return fig, title


def _legend(key: str, label: str, runs: list[RunData]) -> str:
    return f"{key} · {label}" if len(runs) > 1 else key


def _rates_figure(runs: list[RunData]) -> Figure:
    fig = Figure(figsize=(7.0, 2.6))
    ax = fig.subplots()
    rates = ["withheld_rate", "error_rate", "gate_failed_rate"]
    width = 0.8 / len(runs)
    highest = 0.0
    for n, run in enumerate(runs):
        stats = group_stats(run.results, [])
        values = [float(stats[r] or 0.0) for r in rates]
        highest = max(highest, *values)
        ax.bar([i + n * width for i in range(len(rates))], values, width=width, label=run.label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(rates))], labels=rates)
    ax.set_ylabel("share of items")
    ax.set_ylim(0.0, max(0.1, 1.15 * highest))
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return fig


def _outcomes_figure(runs: list[RunData]) -> Figure:
    """Stacked bars: decision outcomes per run and decision source."""
    fig = Figure(figsize=(7.0, 0.5 + 0.45 * len(runs) * 2))
    ax = fig.subplots()
    labels: list[str] = []
    counts: list[dict[str, int]] = []
    for run in runs:
        for kind in ("gate", "hard"):
            c = dict.fromkeys(OUTCOMES, 0)
            for r in run.results:
                for d in r.decisions:
                    if d.kind == kind:
                        c[d.outcome] += 1
            labels.append(f"{run.label} · {kind}")
            counts.append(c)
    left = [0] * len(labels)
    for outcome in OUTCOMES:
        values = [c[outcome] for c in counts]
        ax.barh(labels, values, left=left, color=COLOURS[outcome], label=outcome)
        left = [a + b for a, b in zip(left, values, strict=True)]
    ax.invert_yaxis()
    ax.set_xlabel("decisions")
    ax.legend(ncol=4, fontsize=7, loc="lower center", bbox_to_anchor=(0.5, 1.0), frameon=False)
    return fig


def _usage_figure(runs: list[RunData]) -> Figure:
    fig = Figure(figsize=(7.0, 2.4))
    axes = fig.subplots(1, 3)
    totals = []
    for run in runs:
        total = Usage()
        for u in run.usage.values():
            total = total.add(u.usage)
        totals.append(total)
    labels = [run.label for run in runs]
    axes[0].bar(labels, [t.calls for t in totals], color="#4c72b0")
    axes[0].set_title("judge calls")
    bottom = [0] * len(runs)
    for name in ("input_tokens", "output_tokens", "thinking_tokens"):
        values = [getattr(t, name) for t in totals]
        axes[1].bar(labels, values, bottom=bottom, label=name.removesuffix("_tokens"))
        bottom = [a + b for a, b in zip(bottom, values, strict=True)]
    axes[1].set_title("tokens")
    axes[1].legend(fontsize=6)
    axes[2].bar(labels, [t.cost_usd for t in totals], color="#55a868")
    axes[2].set_title("cost (USD)")
    peaks = [max(t.calls for t in totals), max(bottom), max(t.cost_usd for t in totals)]
    for ax, peak in zip(axes, peaks, strict=True):
        ax.set_ylim(0.0, 1.15 * peak if peak > 0 else 1.0)
        ax.tick_params(axis="x", labelrotation=20, labelsize=7)
    fig.subplots_adjust(wspace=0.45)
    return fig
