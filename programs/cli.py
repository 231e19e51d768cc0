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


PLUGINS_HELP = (
    "Python file registering proposers, verifiers, checks, scoring protocols or judge "
    "backends (repeatable; --checks is an alias)."
)
Plugins = Annotated[list[Path] | None, typer.Option("--plugins", "--checks", help=PLUGINS_HELP)]


def _load_plugins(plugins: list[Path] | None) -> None:
    """Import every --plugins file once; a broken file stops the command, naming it."""
    from groundeval.programs._plugins import load_plugins

    try:
        load_plugins(plugins)
    except ValueError as exc:
        raise _fail(str(exc), 2) from exc


MODELS_DIR_HELP = "Directory whose .pt weights programs may load (pickles run code)."


def _trust_models(models_dir: Path | None) -> None:
    """Trust the user's --models-dir for pickled weights (none otherwise; .onnx always)."""
    from groundeval.grounding.proposers.yolo import WeightsError, set_models_dir

    if models_dir is None:
        return
    try:
        set_models_dir(models_dir)
    except WeightsError as exc:
        raise _fail(str(exc), 2) from exc


@app.command()
def validate(
    files: Annotated[list[Path], typer.Argument(help="Program files (.yaml, .json, .jsonl).")],
    plugins: Plugins = None,
    models_dir: Annotated[Path | None, typer.Option(help=MODELS_DIR_HELP)] = None,
) -> None:
    """Check program files; print every problem with file, place, expected and got."""
    _trust_models(models_dir)
    from groundeval.programs._loaders import ProgramFileError, load_program_files

    _load_plugins(plugins)
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
        typer.Option(
            help="offline | gemini:<model> | openai:<model>@<url> | replay:<cassette> | "
            "<prefix>:<...> of a backend a plugin registered with register_judge"
        ),
    ] = "offline",
    concurrency: Annotated[int, typer.Option(min=1, help="Items graded at once.")] = 8,
    resume: Annotated[
        bool,
        typer.Option(
            help="Keep finished items; re-grade items with error or pending decisions "
            "or damaged state files (only those questions are asked again)."
        ),
    ] = False,
    shard: Annotated[str | None, typer.Option(help="i/n: grade one shard of the items.")] = None,
    plugins: Plugins = None,
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
    allow_drafts: Annotated[
        bool, typer.Option(help="Grade programs still marked status: draft (groundeval author).")
    ] = False,
    ci_resamples: Annotated[
        int, typer.Option(min=1, help="Bootstrap resamples per interval in summary.json.")
    ] = 2000,
    repeat_index: Annotated[
        int,
        typer.Option(
            min=0,
            help="Repeat k of a stability study: k > 0 samples the judge again instead of "
            "replaying cached replies (recorded in run.json).",
        ),
    ] = 0,
    models_dir: Annotated[Path | None, typer.Option(help=MODELS_DIR_HELP)] = None,
) -> None:
    """Grade items into a run folder (resumable, shardable)."""
    _trust_models(models_dir)
    from groundeval.grounding import parse_params
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
    from groundeval.state import RunStoreError

    _load_plugins(plugins)
    if (images is None) == (manifest is None):
        raise _fail("give exactly one of --images DIR or --manifest FILE", 2)
    try:
        loaded = load_program_files(programs)
        drafts = [p.id for p in loaded if p.status == "draft"]
        if drafts and not allow_drafts:
            raise _fail(
                f"{len(drafts)} program(s) are unreviewed drafts ({', '.join(drafts[:5])}"
                f"{', ...' if len(drafts) > 5 else ''}): approve them with groundeval author "
                "review/apply, or pass --allow-drafts",
                2,
            )
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
        if repeat_index:
            judge_options["repeat_index"] = repeat_index  # folded into the cache key
        backend = build_judge(judge, **judge_options)
        runner = _executor(executor, ray_address, judge, judge_options, plugins, items_per_task)
        config: dict[str, Any] = {
            "programs": [str(p) for p in programs],
            "images": str(images) if images else None,
            "manifest": str(manifest) if manifest else None,
            "checks": [str(c) for c in plugins or []],  # the --plugins files (old key kept)
            # only when asked, so runs made before --ci-resamples still resume
            **({"ci_resamples": ci_resamples} if ci_resamples != 2000 else {}),
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
                repeat_index=repeat_index,
            )
        )
    except ProgramFileError as exc:
        for issue in exc.issues:
            typer.echo(str(issue), err=True)
        raise typer.Exit(1) from exc
    except (ItemsError, RunStoreError, ValueError, ImportError) as exc:
        raise _fail(str(exc)) from exc
    _print_run(report.summary.as_json(), out, report.graded, report.skipped)
    if report.reasked:
        typer.echo(
            f"  re-asked {len(report.reasked)} item(s) that had error or pending decisions "
            "or damaged state files:"
        )
        for item_id, why in sorted(report.reasked.items())[:10]:
            typer.echo(f"    {item_id}: {'; '.join(why)[:160]}")


def _executor(
    name: str,
    ray_address: str | None,
    judge: str,
    judge_options: dict[str, Any],
    plugins: list[Path] | None,
    items_per_task: int,
) -> Any:
    """None for the local executor; a Ray executor that rebuilds the judge on each worker.

    Every worker loads the same ``--plugins`` files before it builds the judge, so a
    backend registered with ``register_judge`` works there too.
    """
    if name == "local":
        return None
    if name != "ray":
        raise ValueError(f"--executor: expected local or ray, got {name!r}")
    from groundeval.programs._ray import JudgeRecipe, RayExecutor

    return RayExecutor(
        ray_address,
        judge=JudgeRecipe(judge, judge_options),
        checks=plugins or [],
        items_per_task=items_per_task,
    )


def default_cache_dir() -> Path:
    """Where judge calls are cached across runs (``$XDG_CACHE_HOME`` honoured)."""
    import os

    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "groundeval" / "calls"


def _print_run(summary: dict[str, Any], out: Path, graded: int, skipped: int) -> None:
    status = summary["status"]
    pending = f", {status['pending']} pending" if status.get("pending") else ""
    typer.echo(
        f"{out}: {summary['items']} items ({graded} graded now, {skipped} kept from before): "
        f"{status['scored']} scored, {status['withheld']} withheld, {status['error']} error"
        f"{pending}"
    )
    for name, section in summary["protocols"].items():
        overall = section.get("overall", section)
        shown = {
            k: v
            for k, v in overall.items()
            if isinstance(v, int | float) or v is None or k.endswith("_ci95")  # with intervals
        }
        typer.echo(f"  {name}: {json.dumps(shown, sort_keys=True)}")
    _print_problems(summary.get("problems"), out)


def _print_problems(problems: dict[str, Any] | None, out: Path) -> None:
    """Per cell: items and decisions that are error / withheld / pending, then the reasons."""
    if not problems:
        return
    cells = [("overall", problems["overall"])]
    for key, groups in problems.get("by_tag", {}).items():
        cells += [(f"{key}={value}", cell) for value, cell in groups.items()]
    if not any(c[f"{o}_decisions"] or c[f"{o}_items"] for _, c in cells for o in _PROBLEMS):
        return
    typer.echo("  not scored (items / decisions):")
    typer.echo(f"    {'cell':<28}{'items':>7}{'error':>12}{'withheld':>12}{'pending':>12}")
    for label, c in cells:
        counts = "".join(f"{c[f'{o}_items']:>5} / {c[f'{o}_decisions']:<4}" for o in _PROBLEMS)
        typer.echo(f"    {label[:27]:<28}{c['items']:>7}  {counts}")
    for reason in problems.get("reasons", [])[:5]:
        typer.echo(
            f"    {reason['count']:>4} x {reason['outcome']}: {reason['reason'][:100]} "
            f"(e.g. {reason['example']})"
        )
    typer.echo(f"  all reasons: {out / 'summary.json'} (problems), per item: groundeval report")


_PROBLEMS = ("error", "withheld", "pending")


@app.command()
def rescore(
    run_dir: Annotated[Path, typer.Argument(help="Run folder.")],
    overrides: Annotated[Path | None, typer.Option(help="Overrides JSONL from an audit.")] = None,
    plugins: Plugins = None,
    author: Annotated[
        str,
        typer.Option(help="Who overrules, for rows without an author (default: login name)."),
    ] = "",
) -> None:
    """Recompute every score from the run's files (zero judge calls); apply overrides.

    Applied overrides are archived in RUN/overrides.jsonl with author, note and time.
    """
    from groundeval.programs._rescore import rescore_run
    from groundeval.state import RunStoreError

    _load_plugins(plugins)
    try:
        report = rescore_run(run_dir, overrides, author=author)
    except RunStoreError as exc:
        raise _fail(f"{exc}{_plugins_hint(run_dir, plugins)}") from exc
    typer.echo(
        f"{run_dir}: rescored {report.items} items, re-ran {report.rechecked} checks, "
        f"applied {report.overridden} overrides ({report.changed} items changed)"
    )
    if report.archived:
        typer.echo(f"  archived {report.archived} override(s) in {run_dir / 'overrides.jsonl'}")
    if report.pending:
        typer.echo(
            f"  {len(report.pending)} question(s) now pending (they depend on an override): "
            f"{', '.join(report.pending[:10])}; `groundeval run --resume` asks only these"
        )
    failed = False
    if report.broken_states:
        failed = True
        typer.echo(
            f"error: {len(report.broken_states)} state file(s) cannot be read; their decisions "
            "are now error and `groundeval run --resume` grounds them again:",
            err=True,
        )
        for path, problem in sorted(report.broken_states.items())[:10]:
            typer.echo(f"  {path}: {problem[:200]}", err=True)
    if report.unknown_overrides:
        failed = True
        typer.echo(
            f"warning: overrides for unknown decisions: {', '.join(report.unknown_overrides)}",
            err=True,
        )
    if failed:
        raise typer.Exit(1)


def _plugins_hint(run_dir: Path, plugins: list[Path] | None) -> str:
    """When a run was graded with plugin files and none are given now, name them."""
    try:
        recorded = json.loads((run_dir / "run.json").read_text(encoding="utf-8")).get("checks")
    except (OSError, ValueError, AttributeError):
        return ""
    if plugins or not recorded:
        return ""
    flags = " ".join(f"--plugins {p}" for p in recorded)
    return f"\n(this run was graded with plugin files; pass them again: {flags})"


@app.command()
def merge(
    out: Annotated[Path, typer.Argument(help="New run folder.")],
    shards: Annotated[list[Path], typer.Argument(help="Shard run folders.")],
    plugins: Plugins = None,
) -> None:
    """Join shard folders (``run --shard i/n``) into one run."""
    from groundeval.programs._rescore import merge_runs
    from groundeval.state import RunStoreError

    _load_plugins(plugins)

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
    from groundeval.programs._author_cli import author_app

    _cli_extra.mount(app)
    app.add_typer(author_app, name="author")


_mount_optional()
