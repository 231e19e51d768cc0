"""What each page shows: item pages and the rows of the lazily loaded item list."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from groundeval.state._records import Decision, ItemResult, ItemUsage, StateFile
from groundeval.state.report._collect import (
    RunData,
    disagrees,
    format_score,
    item_outcome,
    overridden,
)

ITEMS_DIR = "items"


def page_name(item_id: str) -> str:
    """File name of an item page: readable slug plus a hash, never a path (ids are data)."""
    slug = re.sub(r"[^A-Za-z0-9_-]+", "_", item_id)[:48] or "item"
    digest = hashlib.sha256(item_id.encode()).hexdigest()[:10]
    return f"{slug}-{digest}.html"


def url_from(folder: Path, target: Path) -> str:
    """A relative URL from ``folder`` to ``target`` (percent-escaped: run paths hold '%')."""
    rel = os.path.relpath(target.resolve(), folder.resolve())
    return quote(Path(rel).as_posix())


@dataclass
class RoundView:
    """One grounding round as drawn on the page."""

    index: int
    overlay_url: str | None
    asked: str
    missing: list[str]
    elements: list[dict[str, Any]]


@dataclass
class GroundingView:
    """One state file: its rounds, final elements and the JSON itself."""

    anchor: str
    state_file: str
    questions: list[str]
    state: StateFile | None
    problem: str = ""
    image_url: str | None = None
    rounds: list[RoundView] = field(default_factory=list)
    elements: list[dict[str, Any]] = field(default_factory=list)
    state_json: str = ""


@dataclass
class DecisionView:
    """One decision with the question's words and the grounding it read."""

    d: Decision
    ask: str
    anchor: str | None
    others: list[Decision | None]


def _image_url(path_text: str, run: RunData, folder: Path) -> str | None:
    path = Path(path_text)
    candidates = [path] if path.is_absolute() else [Path.cwd() / path, run.root / path]
    found = next((p for p in candidates if p.is_file()), None)
    return url_from(folder, found) if found else None


def element_row(e: Any) -> dict[str, Any]:
    """An element as table cells: id, kind, geometry in pixels, fields, verdict, reason."""
    geometry = e.xyxy_px if e.kind == "box" else e.points_px
    return {
        "id": e.id,
        "kind": e.kind,
        "geometry": json.dumps(geometry),
        "fields": json.dumps(e.fields, ensure_ascii=False, sort_keys=True),
        "verdict": e.verdict,
        "reason": e.reason,
    }


def groundings(run: RunData, result: ItemResult, folder: Path) -> list[GroundingView]:
    """Every state file the item's decisions read, in question order."""
    views: dict[str, GroundingView] = {}
    for d in result.decisions:
        if not d.state_file:
            continue
        if d.state_file in views:
            views[d.state_file].questions.append(d.question_id)
            continue
        anchor = f"grounding-{len(views) + 1}"
        state = run.read_state(d.state_file)
        if isinstance(state, str):
            views[d.state_file] = GroundingView(anchor, d.state_file, [d.question_id], None, state)
            continue
        program = run.programs.get(result.program_id)
        index = program.grounded_image_index(d.question_id) if program else 0
        image = result.images[index] if index < len(result.images) else None
        views[d.state_file] = GroundingView(
            anchor=anchor,
            state_file=d.state_file,
            questions=[d.question_id],
            state=state,
            image_url=_image_url(image, run, folder) if image else None,
            rounds=[
                RoundView(
                    index=r.index,
                    overlay_url=url_from(folder, run.root / r.overlay) if r.overlay else None,
                    asked=r.asked,
                    missing=list(r.missing),
                    elements=[element_row(e) for e in r.elements],
                )
                for r in state.rounds
            ],
            elements=[element_row(e) for e in state.elements],
            state_json=json.dumps(
                state.model_dump(mode="json"), indent=2, sort_keys=True, ensure_ascii=False
            ),
        )
    return list(views.values())


def item_context(
    runs: list[RunData], result: ItemResult, folder: Path, nav: dict[str, str | None]
) -> dict[str, Any]:
    """Everything the item template prints for one item of the first run."""
    first = runs[0]
    program = first.programs.get(result.program_id)
    asks = {q.id: q.ask for q in program.questions} if program else {}
    views = groundings(first, result, folder)
    anchors = {q: v.anchor for v in views for q in v.questions}
    others = [run.by_id.get(result.item_id) for run in runs[1:]]
    decisions = [
        DecisionView(
            d=d,
            ask=asks.get(d.question_id, ""),
            anchor=anchors.get(d.question_id),
            others=[_find(o, d.question_id) for o in others],
        )
        for d in result.decisions
    ]
    usage: ItemUsage | None = first.usage.get(result.item_id)
    script_data = {
        "item": result.item_id,
        "decisions": [
            {"question": d.question_id, "outcome": d.outcome, "source": d.source}
            for d in result.decisions
        ],
    }
    return {
        "result": result,
        "program": program,
        "images": [(p, _image_url(p, first, folder)) for p in result.images],
        "groundings": views,
        "decisions": decisions,
        "usage": usage,
        "other_runs": [(run.label, run.by_id.get(result.item_id)) for run in runs[1:]],
        "nav": nav,
        "outcome": item_outcome(result),
        "script_data": script_data,
        "scores": {k: format_score(v) for k, v in result.scores.items()},
        "archived": {
            d.question_id: found
            for d in result.decisions
            if (found := first.last_override(result.item_id, d.question_id)) is not None
        },
    }


def _find(result: ItemResult | None, question_id: str) -> Decision | None:
    if result is None:
        return None
    return next((d for d in result.decisions if d.question_id == question_id), None)


def list_rows(runs: list[RunData]) -> dict[str, Any]:
    """The item list's data (one JS file, loaded after the page): short keys keep it small."""
    first, rest = runs[0], runs[1:]
    rows = []
    for r in first.results:
        others = [run.by_id.get(r.item_id) for run in rest]
        reasons = " ".join(d.reason[:120] for d in r.decisions if d.outcome != "pass")
        text = " ".join([r.item_id, r.program_id, *r.tags.values(), r.error or "", reasons])
        rows.append({
            "i": r.item_id,
            "u": f"{ITEMS_DIR}/{page_name(r.item_id)}",
            "p": r.program_id,
            "o": item_outcome(r),
            "g": r.gate_failed or "",
            "w": any(d.outcome == "withheld" for d in r.decisions),
            "e": any(d.outcome in ("error", "pending") for d in r.decisions)
            or r.status in ("error", "pending"),
            "v": overridden(r.decisions),
            "d": disagrees(r, others) if rest else False,
            "t": [f"{k}={v}" for k, v in sorted(r.tags.items())],
            "s": [_scores_text(x) for x in [r, *others]],
            "x": text.lower(),
        })  # fmt: skip
    return {"runs": [run.label for run in runs], "rows": rows}


def _scores_text(result: ItemResult | None) -> str:
    if result is None:
        return "(not in run)"
    if not result.scores:
        return result.status
    return " · ".join(f"{k} {format_score(v)}" for k, v in result.scores.items())
