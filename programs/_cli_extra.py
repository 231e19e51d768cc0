"""Subcommands that come from other packages (grounding, benchmarks), mounted on the CLI."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Annotated

import typer


def mount(app: typer.Typer) -> None:
    """Add the ground/demo commands and the benchmark sub-apps."""
    from groundeval.state.report._cli import report_command

    app.command("ground")(ground)
    app.command("demo")(demo)
    app.command("report")(report_command)
    try:
        bench = importlib.import_module("groundeval.benchmarks.cli")
    except ImportError:
        return
    for name in ("bizgeneval_app", "dsg_app", "ueval_app"):
        sub = getattr(bench, name, None)
        if sub is not None:
            app.add_typer(sub, name=name.removesuffix("_app"))
    for name in ("agree_command", "leaderboard_command", "compare_command"):
        command = getattr(bench, name, None)
        if command is not None:
            app.command(name.removesuffix("_command"))(command)


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
    verifier: Annotated[str, typer.Option(help="offline | judge")] = "offline",
    budget: Annotated[int, typer.Option(min=1)] = 1,
) -> None:
    """Run one grounding on one image and print its elements as JSON."""
    from groundeval.grounding._command import ground_image, parse_params
    from groundeval.grounding._images import ImageError

    try:
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


def demo(
    out: Annotated[Path, typer.Option(help="Run folder to write.")] = Path("runs/demo"),
    per_scene: Annotated[int, typer.Option(min=1, help="Items per scene and difficulty.")] = 4,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Grade synthetic dice, coins, bars, compass and sun scenes offline, end to end."""
    from groundeval.benchmarks.synthetic._demo import run_demo

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
