"""Subcommands that come from other packages (grounding, benchmarks), mounted on the CLI."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Annotated

import typer

from groundeval.state import Registry, RegistryError

BENCHMARKS: Registry[typer.Typer] = Registry("benchmark", group="groundeval.benchmarks")
"""Benchmark command groups (``groundeval bizgeneval ...``): the built-ins and every
installed package's ``groundeval.benchmarks`` entry point naming a ``typer.Typer``."""


def mount(app: typer.Typer) -> None:
    """Add the ground/demo commands and the benchmark sub-apps (built-in and installed)."""
    from groundeval.state.report import report_command

    app.command("ground")(ground)
    app.command("demo")(demo)
    app.command("report")(report_command)
    try:
        bench = importlib.import_module("groundeval.benchmarks.cli")
    except ImportError:
        bench = None
    for name in ("bizgeneval_app", "dsg_app", "ueval_app"):
        sub = getattr(bench, name, None)
        if sub is not None:
            origin = f"groundeval.benchmarks.cli:{name}"
            BENCHMARKS.register(name.removesuffix("_app"), origin=origin)(sub)
    for name in ("agree_command", "leaderboard_command", "compare_command"):
        command = getattr(bench, name, None)
        if command is not None:
            app.command(name.removesuffix("_command"))(command)
    try:
        names = BENCHMARKS.names()
    except RegistryError as exc:  # a broken benchmark package must not take every command down
        typer.echo(f"warning: benchmark commands not loaded: {exc}", err=True)
        names = BENCHMARKS.names()  # what loaded before the broken one
    for name in names:
        sub = BENCHMARKS[name]
        if not isinstance(sub, typer.Typer):
            typer.echo(
                f"warning: benchmark {name!r} ({BENCHMARKS.origin(name)}) is not a typer.Typer; "
                "not mounted",
                err=True,
            )
            continue
        app.add_typer(sub, name=name)


def ground(
    image: Annotated[Path, typer.Argument(help="Image file.")],
    helper: Annotated[str, typer.Option(help="boxes | boundary | line | points | text")] = "boxes",
    proposer: Annotated[
        str, typer.Option(help="Registered proposer, e.g. opencv.circles.")
    ] = "opencv.contours",
    param: Annotated[
        list[str] | None, typer.Option(help="k=v proposer parameter (repeatable).")
    ] = None,
    out: Annotated[Path | None, typer.Option(help="Folder for the overlay and state file.")] = None,
    verifier: Annotated[
        str, typer.Option(help="Registered verifier: offline, judge or a plugin's.")
    ] = "offline",
    budget: Annotated[int, typer.Option(min=1)] = 1,
    plugins: Annotated[
        list[Path] | None,
        typer.Option(
            "--plugins",
            "--checks",
            help="Python file registering proposers or verifiers to try (repeatable; "
            "--checks is an alias).",
        ),
    ] = None,
    models_dir: Annotated[
        Path | None,
        typer.Option(help="Directory whose .pt weights the proposer may load (pickles run code)."),
    ] = None,
) -> None:
    """Run one grounding on one image and print its elements as JSON.

    Exits 1 when the grounding ends with status ``error`` (the reason is printed), 2 when
    ``--models-dir`` is not a directory.
    """
    from groundeval.grounding import ImageError, ground_image, parse_params
    from groundeval.grounding.proposers.yolo import WeightsError, set_models_dir
    from groundeval.programs._plugins import load_plugins

    if models_dir is not None:
        try:
            set_models_dir(models_dir)
        except WeightsError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from exc
    try:
        load_plugins(plugins)
        found = ground_image(
            image,
            helper=helper,
            proposer=proposer,
            params=parse_params(param or []),
            out=out,
            verifier=verifier,
            budget=budget,
        )
    except (ImageError, KeyError, ValueError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(json.dumps(found, indent=2))
    if found["status"] == "error":
        typer.echo(f"error: the grounding failed: {found['reason']}", err=True)
        raise typer.Exit(1)


def demo(
    out: Annotated[Path, typer.Option(help="Run folder to write.")] = Path("runs/demo"),
    per_scene: Annotated[int, typer.Option(min=1, help="Items per scene and difficulty.")] = 4,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Grade synthetic dice, coins, bars, compass and sun scenes offline, end to end."""
    from groundeval.benchmarks.synthetic import run_demo

    try:
        summary = run_demo(out, per_scene=per_scene, seed=seed)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    status = summary["status"]
    typer.echo(
        f"graded {summary['items']} synthetic items offline: {status['scored']} scored, "
        f"{status['withheld']} withheld, {status['error']} error"
    )
    typer.echo("decisions against the exact truth (shares):")
    typer.echo(f"{'difficulty':<12}{'right':>8}{'wrong':>8}{'withheld':>10}{'error':>8}{'n':>6}")
    for level, row in summary["accuracy_vs_truth"].items():
        cells = "".join(
            f"{row[k]:>{w}.1%}"
            for k, w in (("right", 8), ("wrong", 8), ("withheld", 10), ("error", 8))
        )
        typer.echo(f"{level:<12}{cells}{row['decisions']:>6}")
    typer.echo(f"run folder: {out}  report: {out / 'report' / 'index.html'}")
