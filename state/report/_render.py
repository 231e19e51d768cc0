"""Writing the report folder: jinja2 templates (autoescaped), static files, plots, list data."""

from __future__ import annotations

import json
import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from groundeval.state._version import toolkit_version
from groundeval.state.report._collect import (
    ReportError,
    RunData,
    load_runs,
    overrides_key,
)
from groundeval.state.report._pages import ITEMS_DIR, item_context, list_rows, page_name
from groundeval.state.report._plots import write_plots
from groundeval.state.report._tables import (
    agreement_table,
    overview_table,
    protocol_tables,
    protocols,
    score_table,
)

MARKER = ".groundeval-report"
"""File that marks a folder as a report this module wrote (and may therefore replace)."""
STATIC_FILES = ("report.css", "storage.js", "overrides.js", "list.js", "item.js")
PAGE_SIZES = (10, 25, 50, 100, 200)


def _environment() -> jinja2.Environment:
    """Templates from the package; autoescape on for every template, undefined is an error."""
    folder = resources.files("groundeval.state.report") / "templates"
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(folder)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def write_report(runs: list[Path], out: Path | None = None) -> Path:
    """Write a static report of ``runs`` (the first is audited) and return its index.html.

    The folder (default ``RUN/report``) opens from file:// without a server or
    network: pages link each other and the run's overlays by relative paths.
    Overrides made in it are exported as the JSONL ``groundeval rescore
    --overrides`` reads. Several runs are shown side by side.
    """
    data = load_runs([Path(r) for r in runs])
    target = Path(out) if out is not None else data[0].root / "report"
    _prepare(target)
    env = _environment()
    common = {
        "runs": data,
        "first": data[0],
        "overrides_key": overrides_key(data[0]),
        "version": toolkit_version(),
    }
    _copy_static(target / "static")
    _write_items(env, data, target, common)
    _write_list(data, target / "data" / "items.js")
    plots = write_plots(data, target / "plots")
    index = target / "index.html"
    page = env.get_template("index.html.j2").render(
        **common,
        root="",
        overview=overview_table(data),
        agreement=agreement_table(data),
        score_tables=[score_table(data, p) for p in protocols(data)],
        protocol_tables=[t for run in data for t in protocol_tables(run)],
        plots=plots,
        page_sizes=PAGE_SIZES,
        item_pages={r.item_id: f"{ITEMS_DIR}/{page_name(r.item_id)}" for r in data[0].results},
    )
    index.write_text(page, encoding="utf-8")
    (target / MARKER).write_text("groundeval report\n")
    return index


def _prepare(target: Path) -> None:
    """Replace an earlier report; refuse to touch a folder this module did not write."""
    if target.exists():
        if not target.is_dir():
            raise ReportError(f"{target}: exists and is not a folder")
        if any(target.iterdir()) and not (target / MARKER).is_file():
            raise ReportError(
                f"{target}: folder is not empty and holds no earlier report; choose another --out"
            )
        for sub in ("items", "data", "plots", "static"):
            shutil.rmtree(target / sub, ignore_errors=True)
    (target / ITEMS_DIR).mkdir(parents=True, exist_ok=True)


def _copy_static(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    source = resources.files("groundeval.state.report") / "static"
    for name in STATIC_FILES:
        (folder / name).write_bytes((source / name).read_bytes())


def _write_items(
    env: jinja2.Environment, runs: list[RunData], target: Path, common: dict[str, Any]
) -> None:
    template = env.get_template("item.html.j2")
    folder = target / ITEMS_DIR
    results = runs[0].results
    names = [page_name(r.item_id) for r in results]
    for n, result in enumerate(results):
        nav = {
            "prev": names[n - 1] if n > 0 else None,
            "next": names[n + 1] if n + 1 < len(results) else None,
        }
        page = template.render(**common, root="../", **item_context(runs, result, folder, nav))
        (folder / names[n]).write_text(page, encoding="utf-8")


def _write_list(runs: list[RunData], path: Path) -> None:
    """The list data as a script (file:// pages cannot fetch JSON); ASCII-only JSON."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = json.dumps(list_rows(runs), ensure_ascii=True, separators=(",", ":"))
    path.write_text(f"window.groundevalReceiveItems({payload});\n", encoding="ascii")
