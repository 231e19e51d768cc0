"""``groundeval author``: draft programs from prompts, review them, apply the decisions.

``groundeval author PROMPTS --judge SPEC --out DIR`` is the default command of
the group (same as ``groundeval author draft ...``); ``review`` and ``apply`` are
its other commands.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from groundeval.programs._author import (
    DEFAULT_BUDGET,
    Outcome,
    PromptFileError,
    author_all,
    read_prompts,
)
from groundeval.programs._model import Program
from groundeval.state import Usage

PROGRAMS_FILE = "programs.jsonl"
FAILED_FILE = "failed.jsonl"
SUMMARY_FILE = "summary.json"

Plugins = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugins",
        "--checks",
        help="Python file registering proposers, verifiers, checks, scoring protocols or "
        "judge backends: they join the catalogue, and drafts naming them validate "
        "(repeatable; --checks is an alias).",
    ),
]


def _load_plugins(plugins: list[Path] | None) -> None:
    """Import every --plugins file once; a broken file stops the command, naming it."""
    from groundeval.programs._plugins import load_plugins

    try:
        load_plugins(plugins)
    except (ValueError, ImportError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from exc


class _DefaultDraft(TyperGroup):
    """A group whose first argument, when it is not a command, is the prompts file of ``draft``."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["draft", *args]
        return super().parse_args(ctx, args)


author_app = typer.Typer(
    cls=_DefaultDraft,
    help=(
        "Draft programs from prompts with a judge, review them, apply the review. "
        "'groundeval author PROMPTS --judge SPEC --out DIR' is short for 'author draft ...'."
    ),
    no_args_is_help=True,
    add_completion=False,
)


def write_outcomes(out: Path, outcomes: list[Outcome], kept: list[Program]) -> dict[str, Any]:
    """Write programs.jsonl (valid drafts only, re-validated), failed.jsonl and summary.json."""
    from groundeval.programs._loaders import dump_programs_jsonl, load_programs
    from groundeval.state import atomic_write

    out.mkdir(parents=True, exist_ok=True)
    programs = [*kept, *(o.program for o in outcomes if o.program is not None)]
    text = dump_programs_jsonl(programs)
    staged = out / ".programs.check.jsonl"
    staged.write_text(text, encoding="utf-8")
    try:
        if programs:
            load_programs(staged)  # the file as written must pass validate, or nothing is written
    finally:
        staged.unlink(missing_ok=True)
    atomic_write(out / PROGRAMS_FILE, text)
    failed = [o.failed_record() for o in outcomes if o.program is None]
    atomic_write(
        out / FAILED_FILE,
        "".join(json.dumps(f, ensure_ascii=False, sort_keys=True) + "\n" for f in failed),
    )
    usage = Usage()
    for o in outcomes:
        usage = usage.add(o.usage)
    rounds = sum(o.rounds for o in outcomes)
    summary = {
        "authored": len(programs),
        "authored_now": len(programs) - len(kept),
        "kept": len(kept),
        "failed": len(failed),
        "prompts_drafted": len(outcomes),
        "judge_calls": rounds,
        "calls_per_prompt": round(rounds / len(outcomes), 4) if outcomes else 0.0,
        "backend_calls": usage.calls,
        "cached_calls": usage.cached_calls,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "thinking_tokens": usage.thinking_tokens,
        "cost_usd": round(usage.cost_usd, 6),
    }
    atomic_write(out / SUMMARY_FILE, json.dumps(summary, indent=2, sort_keys=True) + "\n")
    return summary


def summary_line(summary: dict[str, Any]) -> str:
    """Authored / failed / calls / tokens / cost on one line."""
    tokens = summary["input_tokens"] + summary["output_tokens"] + summary["thinking_tokens"]
    return (
        f"authored {summary['authored']} ({summary['kept']} kept from before), "
        f"failed {summary['failed']}, calls {summary['judge_calls']} "
        f"({summary['cached_calls']} from cache or cassette, "
        f"{summary['calls_per_prompt']:.2f} per prompt), tokens {tokens}, "
        f"cost ${summary['cost_usd']:.4f}"
    )


def _kept(out: Path, resume: bool) -> list[Program]:
    from groundeval.programs._loaders import ProgramFileError, load_programs

    path = out / PROGRAMS_FILE
    if not resume or not path.exists():
        return []
    try:
        return load_programs(path)
    except ProgramFileError as exc:
        raise ValueError(f"--resume: {path} does not validate:\n{exc}") from exc


@author_app.command("draft")
def draft(
    prompts: Annotated[Path, typer.Argument(help="Prompts: .jsonl, .csv or plain text.")],
    out: Annotated[Path, typer.Option(help="Folder for programs.jsonl and failed.jsonl.")],
    judge: Annotated[
        str, typer.Option(help="gemini:<model> | openai:<model>@<url> | replay:<cassette>")
    ],
    budget: Annotated[
        int, typer.Option(min=1, max=20, help="Judge calls per prompt (drafts + fixes).")
    ] = DEFAULT_BUDGET,
    concurrency: Annotated[int, typer.Option(min=1, help="Prompts drafted at once.")] = 8,
    resume: Annotated[bool, typer.Option(help="Keep programs already in DIR; redo the rest.")] = (
        False
    ),
    plugins: Plugins = None,
    cache_dir: Annotated[Path | None, typer.Option(help="Judge-call cache folder.")] = None,
    no_cache: Annotated[bool, typer.Option(help="Do not use the judge-call cache.")] = False,
    record: Annotated[Path | None, typer.Option(help="Write every call to this cassette.")] = None,
    rpm: Annotated[float | None, typer.Option(help="Judge requests per minute.")] = None,
    tpm: Annotated[float | None, typer.Option(help="Judge tokens per minute.")] = None,
    judge_concurrency: Annotated[int, typer.Option(min=1, help="Judge calls in flight.")] = 8,
    prices: Annotated[Path | None, typer.Option(help="Price table (JSON/YAML).")] = None,
    judge_param: Annotated[
        list[str] | None, typer.Option(help="k=v judge option, e.g. temperature=0.")
    ] = None,
) -> None:
    """Draft one program per prompt; only drafts that validate reach programs.jsonl."""
    from groundeval.grounding import parse_params
    from groundeval.judges import build_judge
    from groundeval.programs._run import progress_printer
    from groundeval.programs.cli import default_cache_dir

    _load_plugins(plugins)
    try:
        items = read_prompts(prompts)
        kept = _kept(out, resume)
        done = {p.id for p in kept}
        todo = [p for p in items if p.id not in done]
        backend = build_judge(
            judge,
            cache_dir=None if no_cache else str(cache_dir or default_cache_dir()),
            record=record,
            rpm=rpm,
            tpm=tpm,
            concurrency=judge_concurrency,
            prices=str(prices) if prices else None,
            **parse_params(judge_param or []),
        )
        outcomes = asyncio.run(
            author_all(
                backend,
                todo,
                budget=budget,
                concurrency=concurrency,
                progress=progress_printer("authoring"),
            )
        )
        summary = write_outcomes(out, outcomes, kept)
    except PromptFileError as exc:
        for problem in exc.problems:
            typer.echo(problem, err=True)
        raise typer.Exit(1) from exc
    except (ValueError, ImportError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"{out}: {summary_line(summary)}")
    if summary["failed"]:
        typer.echo(f"failed prompts and their last errors: {out / FAILED_FILE}", err=True)
        raise typer.Exit(1)


@author_app.command("review")
def review(
    folder: Annotated[Path, typer.Argument(help="Folder written by groundeval author.")],
    out: Annotated[Path | None, typer.Option(help="Page folder (default DIR/review).")] = None,
    plugins: Plugins = None,
) -> None:
    """Write a static review page: each draft beside its prompt; exports decisions.jsonl."""
    from groundeval.programs._author_review import ReviewError, write_review

    _load_plugins(plugins)
    try:
        index = write_review(folder, out)
    except ReviewError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(f"review page: {index}")


@author_app.command("apply")
def apply(
    folder: Annotated[Path, typer.Argument(help="Folder written by groundeval author.")],
    decisions: Annotated[Path, typer.Argument(help="decisions.jsonl exported by the page.")],
    plugins: Plugins = None,
) -> None:
    """Approve (with edited weights), or remove, drafts as the reviewer decided."""
    from groundeval.programs._author_review import ReviewError, apply_decisions

    _load_plugins(plugins)
    try:
        report = apply_decisions(folder, decisions)
    except ReviewError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(
        f"{folder / PROGRAMS_FILE}: approved {report.approved}, rejected {report.rejected}, "
        f"still draft {report.pending}"
    )


@author_app.command("catalogue")
def catalogue(
    out: Annotated[Path | None, typer.Option(help="Write the JSON here (default: print).")] = None,
    plugins: Plugins = None,
) -> None:
    """Print the catalogue a drafting judge is shown (with what --plugins files add)."""
    from groundeval.programs._catalogue import build_catalogue

    _load_plugins(plugins)
    text = json.dumps(build_catalogue(), indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    out.write_text(text, encoding="utf-8")
    typer.echo(f"catalogue: {out}")


__all__ = ["author_app", "summary_line", "write_outcomes"]
