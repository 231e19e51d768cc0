"""The ``groundeval`` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(
    help="Grade AI-generated images from visible evidence.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def _load_checks(checks: list[Path] | None) -> None:
    from groundeval.programs._checks import load_check_module

    for path in checks or []:
        load_check_module(path)


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="Program files (.yaml, .json, .jsonl).")],
    checks: Annotated[
        list[Path] | None, typer.Option("--checks", help="Python module with named checks.")
    ] = None,
) -> None:
    """Check program files; print every problem with file, place, expected and got."""
    from groundeval.programs._loaders import ProgramFileError, load_program_files

    _load_checks(checks)
    try:
        programs = load_program_files(files)
    except ProgramFileError as exc:
        for issue in exc.issues:
            typer.echo(str(issue), err=True)
        typer.echo(f"{len(exc.issues)} problem(s) found", err=True)
        raise typer.Exit(1) from exc
    questions = sum(len(p.questions) for p in programs)
    typer.echo(f"ok: {len(programs)} program(s), {questions} question(s)")


@app.command()
def run(
    programs: Annotated[list[Path], typer.Argument(help="Program files.")],
    out: Annotated[Path, typer.Option(help="Run folder to write.")],
    images: Annotated[
        Path | None, typer.Option(help="Folder with <program id>.png|jpg|webp.")
    ] = None,
    manifest: Annotated[
        Path | None, typer.Option(help="JSONL: {id, program?, images: [...], answer?}.")
    ] = None,
    judge: Annotated[
        str,
        typer.Option(help="offline | gemini:<model> | openai:<model>@<url> | replay:<cassette>"),
    ] = "offline",
    concurrency: Annotated[int, typer.Option(min=1, help="Items graded at once.")] = 8,
    resume: Annotated[bool, typer.Option(help="Keep finished items, redo errors.")] = False,
    shard: Annotated[str | None, typer.Option(help="i/n: grade one shard of the items.")] = None,
    checks: Annotated[
        list[Path] | None, typer.Option(help="Python module with named checks.")
    ] = None,
    cache_dir: Annotated[
        Path | None, typer.Option(help="Judge-call cache (default: ~/.cache/groundeval/calls).")
    ] = None,
    no_cache: Annotated[
        bool, typer.Option(help="Do not read or write the judge-call cache.")
    ] = False,
    record: Annotated[
        Path | None, typer.Option(help="Write every judge call to this cassette.")
    ] = None,
    rpm: Annotated[float | None, typer.Option(help="Judge requests per minute.")] = None,
    tpm: Annotated[float | None, typer.Option(help="Judge tokens per minute.")] = None,
    judge_concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight.")] = 8,
    prices: Annotated[
        Path | None, typer.Option(help="Price table (JSON/YAML) overriding the built-in one.")
    ] = None,
    judge_param: Annotated[
        list[str] | None, typer.Option(help="k=v judge option, e.g. temperature=0 (repeatable).")
    ] = None,
    executor: Annotated[str, typer.Option(help="local | ray (grade on a Ray cluster).")] = "local",
    ray_address: Annotated[
        str | None,
        typer.Option(
            help="Ray cluster: auto or ray://head:10001 (default: join or start one here)."
        ),
    ] = None,
    items_per_task: Annotated[
        int,
        typer.Option(
            min=1, help="Ray: items one task grades at once (raise for judge-bound runs)."
        ),
    ] = 1,
) -> None:
    """Grade items into a run folder (resumable, shardable)."""
    from groundeval.grounding._command import parse_params
    from groundeval.judges import build_judge
    from groundeval.programs._loaders import ProgramFileError, load_program_files
    from groundeval.programs._run import (
        ItemsError,
        Shard,
        items_from_images,
        items_from_manifest,
        progress_printer,
        run_items,
    )
    from groundeval.state._store import RunStoreError

    _load_checks(checks)
    if (images is None) == (manifest is None):
        raise _fail("give exactly one of --images DIR or --manifest FILE", 2)
    try:
        loaded = load_program_files(programs)
        items = (
            items_from_images(loaded, images)
            if images is not None
            else items_from_manifest(loaded, manifest)  # type: ignore[arg-type]
        )
        shard_spec = Shard.parse(shard) if shard else None
        judge_options: dict[str, Any] = dict(
            cache_dir=None if no_cache else str(cache_dir or default_cache_dir()),
            record=record,
            rpm=rpm,
            tpm=tpm,
            concurrency=judge_concurrency,
            prices=str(prices) if prices else None,
            **parse_params(judge_param or []),
        )
        backend = build_judge(judge, **judge_options)
        runner = _executor(executor, ray_address, judge, judge_options, checks, items_per_task)
        config: dict[str, Any] = {
            "programs": [str(p) for p in programs],
            "images": str(images) if images else None,
            "manifest": str(manifest) if manifest else None,
            "checks": [str(c) for c in checks or []],
        }
        report = asyncio.run(
            run_items(
                items,
                judge=backend,
                out=out,
                config=config,
                concurrency=concurrency,
                resume=resume,
                shard=shard_spec,
                progress=progress_printer("grading"),
                executor=runner,
            )
        )
    except ProgramFileError as exc:
        for issue in exc.issues:
            typer.echo(str(issue), err=True)
        raise typer.Exit(1) from exc
    except (ItemsError, RunStoreError, ValueError, ImportError) as exc:
        raise _fail(str(exc)) from exc
    _print_run(report.summary, out, report.graded, report.skipped)


def _executor(
    name: str,
    ray_address: str | None,
    judge: str,
    judge_options: dict[str, Any],
    checks: list[Path] | None,
    items_per_task: int,
) -> Any:
    """None for the local executor; a Ray executor that rebuilds the judge on each worker."""
    if name == "local":
        return None
    if name != "ray":
        raise ValueError(f"--executor: expected local or ray, got {name!r}")
    from groundeval.programs._ray import JudgeRecipe, RayExecutor

    return RayExecutor(
        ray_address,
        judge=JudgeRecipe(judge, judge_options),
        checks=checks or [],
        items_per_task=items_per_task,
    )


def default_cache_dir() -> Path:
    """Where judge calls are cached across runs (``$XDG_CACHE_HOME`` honoured)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundeval" / "calls"


def _print_run(summary: dict[str, Any], out: Path, graded: int, skipped: int) -> None:
    status = summary["status"]
    typer.echo(
        f"{out}: {summary['items']} items ({graded} graded now, {skipped} kept from before): "
        f"{status['scored']} scored, {status['withheld']} withheld, {status['error']} error"
    )
    for name, section in summary["protocols"].items():
        overall = section.get("overall", section)
        shown = {k: v for k, v in overall.items() if isinstance(v, int | float) or v is None}
        typer.echo(f"  {name}: {json.dumps(shown, sort_keys=True)}")


@app.command()
def rescore(
    run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
    overrides: Annotated[Path | None, typer.Option(help="Overrides JSONL from an audit.")] = None,
    checks: Annotated[
        list[Path] | None, typer.Option(help="Python module with named checks.")
    ] = None,
) -> None:
    """Recompute every score from the run's files (zero judge calls); apply overrides."""
    from groundeval.programs._rescore import rescore_run
    from groundeval.state._store import RunStoreError

    _load_checks(checks)
    try:
        report = rescore_run(run_dir, overrides)
    except RunStoreError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(
        f"{run_dir}: rescored {report.items} items, re-ran {report.rechecked} checks, "
        f"applied {report.overridden} overrides"
    )
    if report.unknown_overrides:
        typer.echo(
            f"warning: overrides for unknown decisions: {', '.join(report.unknown_overrides)}",
            err=True,
        )
        raise typer.Exit(1)


@app.command()
def merge(
    out: Annotated[Path, typer.Argument(help="New run folder.")],
    shards: Annotated[list[Path], typer.Argument(help="Shard run folders.")],
) -> None:
    """Join shard folders (``run --shard i/n``) into one run."""
    from groundeval.programs._rescore import merge_runs
    from groundeval.state._store import RunStoreError

    try:
        count = merge_runs(out, shards)
    except RunStoreError as exc:
        raise _fail(str(exc)) from exc
    typer.echo(f"{out}: merged {len(shards)} shards, {count} items")


def main() -> None:
    """Console entry point."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


def _mount_optional() -> None:
    """Subcommands whose modules live in other packages (ground, demo, report, benchmarks)."""
    from groundeval.programs import _cli_extra

    _cli_extra.mount(app)


_mount_optional()
