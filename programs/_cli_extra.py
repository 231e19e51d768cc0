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
    for name in ("agree_command", "leaderboard_command"):
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

    summary = run_demo(out, per_scene=per_scene, seed=seed)
    typer.echo(json.dumps(summary.get("accuracy_vs_truth", summary), indent=2))
    typer.echo(f"run folder: {out}  (report: {out}/report/index.html)")
