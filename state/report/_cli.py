"""``groundeval report RUN [RUN2 ...]``: the command the CLI mounts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report_command(
    runs: Annotated[
        list[Path], typer.Argument(help="Run folders; the first is audited, the rest compared.")
    ],
    out: Annotated[
        Path | None, typer.Option(help="Report folder (default: FIRST_RUN/report).")
    ] = None,
) -> None:
    """Write a static HTML report: summary, plots, item pages, overrides to export."""
    from groundeval.state.report import ReportError, write_report

    try:
        index = write_report(runs, out)
    except ReportError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"report: {index}")
    typer.echo(f"open file://{index.resolve()} in a browser")
