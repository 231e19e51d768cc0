"""Plots of the index page, drawn with matplotlib into SVG files (no pyplot, no global state)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib
from matplotlib.figure import Figure

from groundeval.state._records import Usage
from groundeval.state.report._collect import OUTCOMES, RunData, score_keys
from groundeval.state.report._tables import group_stats, groups

MAX_GROUPS = 24
"""Tag values drawn per score plot; the table below it lists them all."""
COLOURS = {"pass": "#3a923a", "fail": "#c8402f", "withheld": "#d9a21b", "error": "#7a5195"}


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
        plots.append(
            _save(_rates_figure(runs), folder, "rates.svg", "Withheld, error, gate-failed rates")
        )
        plots.append(_save(_outcomes_figure(runs), folder, "outcomes.svg", "Decision outcomes"))
        plots.append(_save(_usage_figure(runs), folder, "usage.svg", "Calls, tokens and cost"))
    return plots


def _save(fig: Figure, folder: Path, name: str, title: str) -> Plot:
    fig.savefig(folder / name, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return Plot(f"{folder.name}/{name}", title)


def _scores_figure(runs: list[RunData], protocol: str) -> Figure:
    """Horizontal bars: each score key per run, overall and per tag value."""
    per_run = [[r for r in run.results if r.scoring == protocol] for run in runs]
    keys = score_keys([r for rs in per_run for r in rs])
    names = list(dict.fromkeys(g for rs in per_run for g in groups(rs)))[:MAX_GROUPS]
    series = [(k, run.label, rs) for k in keys for run, rs in zip(runs, per_run, strict=True)]
    height = max(2.0, 0.22 * len(names) * max(1, len(series)) + 0.8)
    fig = Figure(figsize=(7.0, min(height, 14.0)))
    ax = fig.subplots()
    width = 0.8 / max(1, len(series))
    for s, (key, label, results) in enumerate(series):
        grouped = groups(results)
        values = [group_stats(grouped.get(g, []), [key]).get(key) for g in names]
        ys = [i + s * width for i in range(len(names))]
        ax.barh(ys, [v or 0.0 for v in values], height=width, label=_legend(key, label, runs))
    ax.set_yticks([i + 0.4 - width / 2 for i in range(len(names))], labels=names)
    ax.invert_yaxis()
    ax.set_xlabel("mean over scored items")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    ax.grid(axis="x", alpha=0.3)
    return fig


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
