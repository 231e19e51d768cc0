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
    from groundeval.programs._loaders import dump_programs_jsonl
    from groundeval.state._store import atomic_write

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
        str, typer.Option(help="skip (reference: leave out of means) | zero (score 0).")
    ] = "skip",
    as_json: Annotated[
        bool, typer.Option("--json", help="Print summary.json on one line.")
    ] = False,
) -> None:
    """Summarise reference-format results (or a run) into BizGenEval's tables."""
    from groundeval.benchmarks.bizgeneval import summarize_reference, summarize_run

    if missing not in ("skip", "zero"):
        raise _fail(f"--missing expects skip or zero, got {missing!r}")
    try:
        if run is not None:
            from groundeval.state._store import RunStore

            results_list = [r for r in RunStore(run).results() if r.scoring == "checklist"]
            summary = summarize_run(results_list, out, missing=missing)  # type: ignore[arg-type]
        elif data is not None and results is not None:
            summary = summarize_reference(data, results, out, missing=missing)  # type: ignore[arg-type]
        else:
            raise _fail("give --data and --results, or --run")
    except (OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print(summary, True)
        return
    for name in ("summary_by_domain.csv", "summary_by_dimension.csv"):
        typer.echo(f"{name}:\n{(out / name).read_text()}")
    typer.echo(
        f"scored {summary['total_scored']} of {summary['total_items']}; "
        f"missing {len(summary['missing_items'])} ({summary['missing_convention']}); "
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
    from groundeval.state._store import atomic_write

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
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """Spearman/Kendall of DSG scores (replayed answers, runner, dependency protocol) vs humans."""
    from groundeval.benchmarks.dsg import correlate

    mode = "none" if no_dependencies else dependencies
    if mode not in ("gate", "transitive", "after", "none"):
        raise _fail(f"--dependencies expects gate, transitive, after or none, got {mode!r}")
    try:
        result = correlate(anns, answers, likert, split=split, dependencies=mode, out=out)  # type: ignore[arg-type]
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
    paths: Annotated[list[Path], typer.Argument(help="Run folders or label JSONL files.")],
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
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """Agreement between two graders; rank correlation with ratings; stability over 3+ runs."""
    from groundeval.benchmarks._agree import (
        AgreeInputError,
        Labels,
        agreement,
        correlate_scores,
        load_labels,
        load_ratings,
        stability,
    )
    from groundeval.state._store import RunStoreError

    out: dict[str, Any] = {}
    try:
        if score_column is not None:
            first = Labels(str(paths[0]), scores=load_ratings(paths[0], score_column, id_column))
            graders = [first, *(load_labels(p, score_key) for p in paths[1:])]
        else:
            graders = [load_labels(p, score_key) for p in paths]
        if len(graders) == 2:
            out["agreement"] = agreement(graders[0], graders[1])
        if len(graders) >= 3:
            out["stability"] = stability(graders)
        if ratings is not None:
            if column is None:
                raise _fail("--ratings needs --column")
            human = load_ratings(ratings, column, id_column)
            out["correlation"] = correlate_scores(graders[0].scores, human)
    except (AgreeInputError, RunStoreError, OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if not out:
        raise _fail("nothing to compare: give two paths, three or more runs, or --ratings")
    _print(out, as_json)


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
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object on one line.")] = False,
) -> None:
    """One table over several runs: per-axis strict/relaxed, withheld and grounding failures."""
    from groundeval.benchmarks._agree import AgreeInputError
    from groundeval.benchmarks._suites import axis_table, compare_ranking, leaderboard
    from groundeval.state._store import RunStore, RunStoreError

    try:
        rows = leaderboard(runs, sort_by=sort_by)
        result: dict[str, Any] = {"leaderboard": rows}
        if axes:
            result["axes"] = {str(run): axis_table(RunStore(run).results()) for run in runs}
        if external is not None:
            result["external"] = compare_ranking(
                rows, external, column, id_column=id_column, key=sort_by
            )
    except (AgreeInputError, RunStoreError, OSError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    if as_json:
        _print(result, True)
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="leaderboard")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    for name in columns:
        table.add_column(name)
    for r in rows:
        table.add_row(*("" if r.get(c) is None else str(r.get(c)) for c in columns))
    Console().print(table)
    for run, axis_rows in result.get("axes", {}).items():
        per_axis = Table(title=f"axes: {run}")
        for name in axis_rows[0]:
            per_axis.add_column(name)
        for r in axis_rows:
            per_axis.add_row(*("" if v is None else str(v) for v in r.values()))
        Console().print(per_axis)
    if "external" in result:
        ext = result["external"]
        typer.echo(f"spearman vs {column}: {ext['spearman']:.3f} (n={ext['n']})")
