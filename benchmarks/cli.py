"""Benchmark commands the main CLI mounts: bizgeneval, dsg, ueval, agree, leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

bizgeneval_app = typer.Typer(
    help="BizGenEval: programs and summaries in the reference's shape.", no_args_is_help=True
)
dsg_app = typer.Typer(
    help="DSG: replay recorded VQA answers and correlate with human ratings.", no_args_is_help=True
)
ueval_app = typer.Typer(
    help="UEval: rubric programs over text + image answers.", no_args_is_help=True
)


@bizgeneval_app.callback()
def _bizgeneval() -> None:
    """BizGenEval: programs and summaries in the reference's shape."""


@dsg_app.callback()
def _dsg() -> None:
    """DSG: replay recorded VQA answers and correlate with human ratings."""


@ueval_app.callback()
def _ueval() -> None:
    """UEval: rubric programs over text + image answers."""


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(1)


def _print(data: Any, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(data, sort_keys=True))
    else:
        typer.echo(json.dumps(data, indent=2, sort_keys=True))


def _write_programs(programs: list[Any], out: Path) -> None:
    from groundeval.programs import dump_programs_jsonl
    from groundeval.state import atomic_write

    atomic_write(out, dump_programs_jsonl(programs))
    typer.echo(
        f"wrote {len(programs)} programs, {sum(len(p.hard) for p in programs)} questions to {out}"
    )


@bizgeneval_app.command("programs")
def bizgeneval_programs(
    data: Annotated[Path, typer.Option(help="BizGenEval JSONL.")],
    out: Annotated[Path, typer.Option(help="Programs JSONL to write (for `groundeval run`).")],
) -> None:
    """Turn the BizGenEval JSONL into checklist programs."""
    from groundeval.benchmarks.bizgeneval import load_bizgeneval

    try:
        _write_programs(load_bizgeneval(data), out)
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc


@bizgeneval_app.command("summarize")
def bizgeneval_summarize(
    out: Annotated[Path, typer.Option(help="Folder for summary_by_*.csv and summary.json.")],
    data: Annotated[Path | None, typer.Option(help="BizGenEval JSONL (with --results).")] = None,
    results: Annotated[
        Path | None, typer.Option(help="Folder of reference-format per-image result JSONs.")
    ] = None,
    run: Annotated[Path | None, typer.Option(help="A groundeval run folder instead.")] = None,
    missing: Annotated[
        str,
        typer.Option(
            help="Items without track scores (no result, unanswered question): skip (reference: "
            "leave out of means) | zero (score 0). Counted per cell either way."
        ),
    ] = "skip",
    unanswered: Annotated[
        str,
        typer.Option(
            help="A question missing from a reference file: wrong (the reference's rule) | error "
            "(its item is left out or zeroed per --missing, and counted)."
        ),
    ] = "wrong",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print summary.json on one line.")
    ] = False,
) -> None:
    """Summarise reference-format results (or a run) into BizGenEval's tables."""
    from groundeval.benchmarks.bizgeneval import summarize_reference, summarize_run

    if missing not in ("skip", "zero"):
        raise _fail(f"--missing expects skip or zero, got {missing!r}")
    if unanswered not in ("wrong", "error"):
        raise _fail(f"--unanswered expects wrong or error, got {unanswered!r}")
    try:
        if run is not None:
            from groundeval.state import RunStore

            results_list = [r for r in RunStore(run).results() if r.scoring == "checklist"]
            summary = summarize_run(results_list, out, missing=missing)  # type: ignore[arg-type]
        elif data is not None and results is not None:
            summary = summarize_reference(
                data,
                results,
                out,
                missing=missing,  # type: ignore[arg-type]
                unanswered=unanswered,  # type: ignore[arg-type]
            )
        else:
            raise _fail("give --data and --results, or --run")
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print(summary, True)
        return
    for name in ("summary_by_domain.csv", "summary_by_dimension.csv"):
        typer.echo(f"{name}:\n{(out / name).read_text()}")
        counts = name.replace("summary_", "counts_")
        left_out = (out / counts).read_text()
        typer.echo(f"{counts} (items left out of / zeroed in each cell):\n{left_out}")
    left = summary.get("left_out", {})
    typer.echo(
        f"scored {summary['total_scored']} of {summary['total_items']}; "
        f"missing {len(summary['missing_items'])} ({summary['missing_convention']}: "
        f"{left.get('errors', 0)} error, {left.get('withheld', 0)} withheld, "
        f"{left.get('missing', 0)} without result); "
        f"answer errors counted as wrong: {summary['answer_errors_counted_as_wrong']}"
    )


@bizgeneval_app.command("labels")
def bizgeneval_labels(
    data: Annotated[Path, typer.Option(help="BizGenEval JSONL.")],
    results: Annotated[Path, typer.Option(help="Folder of reference-format result JSONs.")],
    out: Annotated[Path, typer.Option(help="Label JSONL to write (input of `groundeval agree`).")],
) -> None:
    """Per-question labels from reference-format results, to compare judges with `agree`."""
    from groundeval.benchmarks.bizgeneval import reference_labels
    from groundeval.state import atomic_write

    try:
        rows = reference_labels(data, results)
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    atomic_write(out, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
    typer.echo(f"wrote {len(rows)} labels to {out}")


@dsg_app.command("correlate")
def dsg_correlate(
    anns: Annotated[Path, typer.Option(help="dsg-1k-anns.csv (question graphs).")],
    answers: Annotated[Path, typer.Option(help="Recorded VQA answers CSV (e.g. mplug_dsg.csv).")],
    likert: Annotated[Path, typer.Option(help="tifa160-likert-anns.csv (human ratings).")],
    split: Annotated[str, typer.Option(help="dsg_prompt_split to use.")] = "tifa160",
    no_dependencies: Annotated[
        bool, typer.Option("--no-dependencies", help="Ignore parents (DSG without dependency).")
    ] = False,
    dependencies: Annotated[
        str, typer.Option(help="gate (default, reference scores) | transitive | after | none")
    ] = "gate",
    out: Annotated[Path | None, typer.Option(help="Also write a run folder here.")] = None,
    missing: Annotated[
        str,
        typer.Option(
            help="Images with an unanswered question: skip (leave out, count) | zero (score 0, "
            "count; DSG's reference, needed for its published table)."
        ),
    ] = "skip",
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """Spearman/Kendall of DSG scores (replayed answers, runner, dependency protocol) vs humans."""
    from groundeval.benchmarks.dsg import correlate

    mode = "none" if no_dependencies else dependencies
    if mode not in ("gate", "transitive", "after", "none"):
        raise _fail(f"--dependencies expects gate, transitive, after or none, got {mode!r}")
    if missing not in ("skip", "zero"):
        raise _fail(f"--missing expects skip or zero, got {missing!r}")
    try:
        result = correlate(
            anns,
            answers,
            likert,
            split=split,
            dependencies=mode,  # type: ignore[arg-type]
            out=out,
            missing=missing,  # type: ignore[arg-type]
        )
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    _print(result, as_json)


@ueval_app.command("programs")
def ueval_programs(
    data: Annotated[Path, typer.Option(help="UEval JSONL or parquet export.")],
    out: Annotated[Path, typer.Option(help="Programs JSONL to write (for `groundeval run`).")],
) -> None:
    """Turn UEval rows into rubric programs (answers go in a --manifest for `groundeval run`)."""
    from groundeval.benchmarks.ueval import load_ueval

    try:
        _write_programs(load_ueval(data), out)
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc


def agree_command(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Run folders or label JSONL files; `sample RUN` draws a study; "
            "`RUN STUDY/labels*.jsonl` scores one."
        ),
    ],
    ratings: Annotated[
        Path | None, typer.Option(help="Ratings table (CSV/JSON/JSONL) to correlate with.")
    ] = None,
    column: Annotated[str | None, typer.Option(help="Numeric column of --ratings.")] = None,
    score_key: Annotated[
        str | None,
        typer.Option(help="Item score key of a run (default: first of score/all/relaxed/strict)."),
    ] = None,
    score_column: Annotated[
        str | None,
        typer.Option(help="Read the first path as a table; item scores from this column."),
    ] = None,
    id_column: Annotated[
        str | None, typer.Option(help="Id column of tables (default item/id/key).")
    ] = None,
    n: Annotated[int, typer.Option("--n", min=1, help="sample: decisions to draw.")] = 365,
    stratify: Annotated[
        str,
        typer.Option(
            help="sample: strata, comma separated (outcome, question, source, "
            "kind, protocol or an item tag such as axis)."
        ),
    ] = "axis,outcome",
    seed: Annotated[int, typer.Option(help="Seed of the sample and of the intervals.")] = 0,
    out: Annotated[Path | None, typer.Option(help="sample: study folder to write.")] = None,
    reference: Annotated[
        Path | None,
        typer.Option(
            help="sample: reference questions JSONL {id, image, question, answer} "
            "mixed in to screen raters."
        ),
    ] = None,
    min_reference_accuracy: Annotated[
        float, typer.Option(help="Flag raters below this accuracy on reference questions.")
    ] = 0.8,
    keep_flagged: Annotated[
        bool, typer.Option("--keep-flagged", help="Count flagged raters' labels too.")
    ] = False,
    ci_resamples: Annotated[
        int, typer.Option(min=1, help="Bootstrap resamples of the kappa interval.")
    ] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """Agreement between graders, with people (a study), with ratings; stability over 3+ runs."""
    from groundeval.benchmarks._agree import (
        AgreeInputError,
        Labels,
        agreement,
        correlate_scores,
        load_labels,
        load_ratings,
        repeat_warnings,
        stability,
    )
    from groundeval.benchmarks._study import is_label_file, sample_study, study_agreement
    from groundeval.state import RunStoreError

    out_data: dict[str, Any] = {}
    try:
        if paths and str(paths[0]) == "sample" and not paths[0].exists():
            if len(paths) != 2 or out is None:
                raise _fail("usage: groundeval agree sample RUN --out STUDY [--n 365 ...]")
            keys = [k.strip() for k in stratify.split(",") if k.strip()]
            meta = sample_study(paths[1], out, n=n, stratify=keys, seed=seed, reference=reference)
            typer.echo(
                f"sampled {meta['n']} of {meta['population']} decisions in "
                f"{len(meta['strata'])} strata (+{len(meta['reference_tasks'])} reference) "
                f"into {out}"
            )
            typer.echo(
                f"send raters {out / 'index.html'} with its folder"
                f"{' (without reference_key.json)' if meta['reference_tasks'] else ''}; "
                f"then: groundeval agree {paths[1]} {out}/labels-*.jsonl"
            )
            return
        if len(paths) >= 2 and paths[0].is_dir() and all(is_label_file(p) for p in paths[1:]):
            result = study_agreement(
                paths[0],
                paths[1:],
                min_reference_accuracy=min_reference_accuracy,
                keep_flagged=keep_flagged,
                resamples=ci_resamples,
                seed=seed,
            )
            for rater in result["flagged_raters"]:
                typer.echo(
                    f"warning: rater {rater!r} is below {min_reference_accuracy:.0%} on "
                    "the reference questions; left out"
                    f"{' (kept: --keep-flagged)' if keep_flagged else ''}",
                    err=True,
                )
            _print({"study": result}, as_json)
            return
        if score_column is not None:
            first = Labels(str(paths[0]), scores=load_ratings(paths[0], score_column, id_column))
            graders = [first, *(load_labels(p, score_key) for p in paths[1:])]
        else:
            graders = [load_labels(p, score_key) for p in paths]
        if len(graders) == 2:
            out_data["agreement"] = agreement(graders[0], graders[1])
        if len(graders) >= 3:
            out_data["stability"] = stability(graders)
            warnings = repeat_warnings([p for p in paths if p.is_dir()])
            out_data["stability"]["warnings"] = warnings
            for line in warnings:
                typer.echo(f"warning: {line}", err=True)
        if ratings is not None:
            if column is None:
                raise _fail("--ratings needs --column")
            human = load_ratings(ratings, column, id_column)
            out_data["correlation"] = correlate_scores(graders[0].scores, human)
    except (AgreeInputError, RunStoreError, OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if not out_data:
        raise _fail("nothing to compare: give two paths, three or more runs, or --ratings")
    _print(out_data, as_json)


def _with_interval(value: Any, interval: Any) -> str:
    """A table cell: the value and its 95 % interval."""
    if value is None:
        return "–"
    if not isinstance(interval, list):
        return f"{value:.4g}" if isinstance(value, float) else str(value)
    if isinstance(value, int):
        return f"{value} [{interval[0]}, {interval[1]}]"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _bar(value: float | None, interval: Any, width: int = 24) -> str:
    """A text bar with its interval as a whisker: ``█`` to the value, ``─`` across the interval."""
    if value is None:
        return ""
    low, high = interval if isinstance(interval, list) else (value, value)
    cells = []
    for k in range(width):
        x = (k + 0.5) / width
        cells.append("█" if x <= value else "─" if low <= x <= high else " ")
    for end in (low, high):
        if isinstance(interval, list):
            cells[min(width - 1, max(0, int(end * width)))] = "┃"
    return "".join(cells)


def _table(title: str, rows: list[dict[str, Any]]) -> Any:
    from rich.table import Table

    table = Table(title=title)
    columns = [k for k in dict.fromkeys(k for r in rows for k in r) if not k.endswith("_ci95")]
    for name in columns:
        table.add_column(name)
    for r in rows:
        table.add_row(*(_with_interval(r.get(c), r.get(f"{c}_ci95")) for c in columns))
    return table


def leaderboard_command(
    runs: Annotated[list[Path], typer.Argument(help="Run folders, one per model.")],
    external: Annotated[
        Path | None, typer.Option(help="Outside ranking (CSV/JSON/JSONL), e.g. arena Elo.")
    ] = None,
    column: Annotated[str, typer.Option(help="Numeric column of --external.")] = "elo",
    id_column: Annotated[str, typer.Option(help="Column naming the run in --external.")] = "model",
    sort_by: Annotated[str, typer.Option(help="relaxed | strict")] = "relaxed",
    axes: Annotated[
        bool, typer.Option("--axes", help="Also one per-axis table per run (withheld etc.).")
    ] = False,
    ranks: Annotated[
        bool, typer.Option("--ranks", help="Rank stability: share of resamples keeping the rank.")
    ] = False,
    ci_resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """One table over runs: per-axis strict/relaxed with 95 % intervals, withheld, ranks."""
    from groundeval.benchmarks._agree import AgreeInputError
    from groundeval.benchmarks._suites import (
        axis_table,
        compare_ranking,
        leaderboard,
        rank_rows,
        withheld_vs_strict,
    )
    from groundeval.programs.stats import StatsInputError
    from groundeval.state import RunStore, RunStoreError

    if sort_by not in ("relaxed", "strict"):
        raise _fail(f"--sort-by expects relaxed or strict, got {sort_by!r}")
    try:
        rows = leaderboard(runs, sort_by=sort_by, resamples=ci_resamples, seed=seed)
        result: dict[str, Any] = {
            "leaderboard": rows,
            "withheld_vs_strict": withheld_vs_strict(rows),
        }
        if ranks:
            result["ranks"] = rank_rows(runs, rows, key=sort_by, resamples=ci_resamples, seed=seed)
        if axes:
            result["axes"] = {
                str(run): axis_table(RunStore(run).results(), resamples=ci_resamples, seed=seed)
                for run in runs
            }
        if external is not None:
            result["external"] = compare_ranking(
                rows, external, column, id_column=id_column, key=sort_by
            )
    except (AgreeInputError, RunStoreError, StatsInputError, OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print(result, True)
        return
    from rich.console import Console

    console = Console()
    overall = [{k: v for k, v in r.items() if "." not in k} for r in rows]
    console.print(_table("leaderboard (95 % intervals: item bootstrap)", overall))
    axis_names = list(dict.fromkeys(k.split(".")[0] for r in rows for k in r if "." in k))
    if axis_names:
        per_axis = [
            {
                "run": r["run"],
                **{a: r.get(f"{a}.{sort_by}") for a in axis_names},
                **{f"{a}_ci95": r.get(f"{a}.{sort_by}_ci95") for a in axis_names},
            }
            for r in rows
        ]
        console.print(_table(f"{sort_by} per axis", per_axis))
    for run, axis_rows in result.get("axes", {}).items():
        console.print(_table(f"axes: {run}", axis_rows))
        for r in axis_rows:
            console.print(
                f"  {r['axis']:>15} strict {_bar(r['strict'], r['strict_ci95'])} "
                f"{_with_interval(r['strict'], r['strict_ci95'])}"
            )
    rho = result["withheld_vs_strict"]
    if rho["rho"] is None:
        typer.echo(f"withheld rate vs strict across runs: {rho['note']}")
    else:
        typer.echo(
            f"withheld rate vs strict across runs: Spearman rho {rho['rho']:.3f} "
            f"(p {rho['p_value']:.3g}, n={rho['n']})"
        )
    if "ranks" in result:
        typer.echo(
            f"ranks by {sort_by}: {result['ranks']['resampling']} resampling, "
            f"{ci_resamples} resamples; keeps_rank = share keeping the rank"
        )
    if "external" in result:
        ext = result["external"]
        typer.echo(f"spearman vs {column}: {ext['spearman']:.3f} (n={ext['n']})")


def compare_command(
    run_a: Annotated[Path, typer.Argument(help="First run folder (A).")],
    run_b: Annotated[Path, typer.Argument(help="Second run folder (B), same items.")],
    metric: Annotated[
        str,
        typer.Option(
            help="Item score (strict, relaxed, all, score ...) or `decision` "
            "(yes/no per question, McNemar)."
        ),
    ] = "strict",
    by: Annotated[
        str | None, typer.Option(help="Also per value of this item tag (axis: comma split).")
    ] = None,
    ci_resamples: Annotated[int, typer.Option(min=1, help="Bootstrap resamples.")] = 2000,
    seed: Annotated[int, typer.Option(help="Seed of the resampling.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """Paired test of two runs over the same items: A - B with its 95 % interval and p-value."""
    from groundeval.benchmarks._compare import CompareError, compare_runs
    from groundeval.state import RunStoreError

    try:
        result = compare_runs(run_a, run_b, metric=metric, by=by, resamples=ci_resamples, seed=seed)
    except (CompareError, RunStoreError, OSError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print(result, True)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{run_a} (A) vs {run_b} (B): {metric}, diff = A - B")
    for name in ("group", "n_paired", "a", "b", "diff", "diff 95 %", "p", "test"):
        table.add_column(name)
    cells = [("all", result), *result.get("groups", {}).items()]
    for name, c in cells:
        interval = c["diff_ci95"]
        table.add_row(
            name,
            str(c["n_paired"]),
            *(_with_interval(c[k], None) for k in ("a", "b", "diff")),
            "–" if interval is None else f"[{interval[0]:.3f}, {interval[1]:.3f}]",
            "–" if c["p_value"] is None else f"{c['p_value']:.3g}",
            c.get("test") or c.get("note", ""),
        )
    Console().print(table)
    typer.echo(
        f"shared items {result['shared_items']}; only in A {result['only_in_a']}, "
        f"only in B {result['only_in_b']}"
    )
