"""Reviewing drafts: a static page beside each prompt, and applying the reviewer's decisions.

The page follows the report's conventions: one folder that opens from file://,
autoescaped templates, a Content-Security-Policy that loads nothing from the
network, and scripts that only ever set text. Decisions stay in the browser
until exported as ``decisions.jsonl``; :func:`apply_decisions` turns them into
approved programs (with edited weights and the reviewer recorded) or removes them.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2

from groundeval.programs._checks import _registry, check_label
from groundeval.programs._loaders import ProgramFileError, dump_programs_jsonl, load_programs
from groundeval.programs._model import NamedCheck, Program, Question
from groundeval.state import atomic_write

PROGRAMS_FILE = "programs.jsonl"
REJECTED_FILE = "rejected.jsonl"
MARKER = ".groundeval-author-review"
STATIC_FILES = ("report.css", "storage.js", "author.js")
DECISIONS = ("approve", "reject")


class ReviewError(ValueError):
    """A review folder or decisions file that cannot be used, with file, line and reason."""


@dataclass(frozen=True)
class ApplyReport:
    """What ``author apply`` did."""

    approved: int
    rejected: int
    pending: int


def _programs(folder: Path) -> list[Program]:
    path = Path(folder) / PROGRAMS_FILE
    if not path.is_file():
        raise ReviewError(f"{path}: not found; run groundeval author ... --out {folder} first")
    try:
        return load_programs(path)
    except ProgramFileError as exc:
        raise ReviewError(f"{path} does not validate:\n{exc}") from exc


def ground_words(question: Question, program: Program) -> str:
    """The helper a question asks for, in words."""
    if question.ground is not None:
        g = question.ground
        count = ""
        if g.min_count is not None or g.max_count is not None:
            count = f", {g.min_count if g.min_count is not None else 0}"
            count += f"..{g.max_count if g.max_count is not None else 'any'} of them"
        fields = f", fields {', '.join(g.fields)}" if g.fields else ""
        return (
            f"{g.helper} around {g.target or 'the target'} by {g.proposer} "
            f"(verified by {g.verifier}, budget {g.budget}{count}{fields})"
        )
    source = program.state_source(question)
    return f"reuses the help lines of {source}" if source else "none: the judge answers"


def check_words(question: Question) -> str:
    """The check in words: the expression, or the named check with its purpose."""
    check = question.check
    if check is None:
        return "asked to the judge (yes/no)"
    if isinstance(check, str):
        return f"expression: {check}"
    entry = _registry().get(check.name)
    about = (entry.fn.__doc__ or "").strip().split("\n", 1)[0] if entry else ""
    label = check_label(NamedCheck(name=check.name, args=check.args))
    return f"{label}: {about}" if about else label


def _view(program: Program) -> dict[str, Any]:
    prov = program.provenance
    rows = []
    for kind, questions in (("gate", program.gates), ("hard", program.hard)):
        for q in questions:
            rows.append(
                {
                    "kind": kind,
                    "id": q.id,
                    "ask": q.ask,
                    "weight": q.weight,
                    "ground": ground_words(q, program),
                    "check": check_words(q),
                }
            )
    return {
        "id": program.id,
        "prompt": program.prompt,
        "axis": program.tags.get("axis", ""),
        "instructions": program.instructions,
        "status": program.status or "hand-written",
        "judge": prov.judge if prov else "",
        "model": prov.model if prov else "",
        "rounds": prov.rounds if prov else None,
        "reviewer": prov.reviewer if prov else None,
        "questions": rows,
        "json": json.dumps(program.model_dump(mode="json", exclude_defaults=True), indent=1),
    }


def write_review(folder: Path, out: Path | None = None) -> Path:
    """Write ``DIR/review/index.html`` (or ``out``): every draft with its questions and controls."""
    folder = Path(folder)
    programs = _programs(folder)
    target = Path(out) if out is not None else folder / "review"
    if target.exists() and any(target.iterdir()) and not (target / MARKER).is_file():
        raise ReviewError(f"{target}: folder is not empty and holds no earlier review page")
    (target / "static").mkdir(parents=True, exist_ok=True)
    package = resources.files("groundeval.state.report")
    for name in STATIC_FILES:
        (target / "static" / name).write_bytes((package / "static" / name).read_bytes())
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(package / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    page = env.get_template("author.html.j2").render(
        drafts=[_view(p) for p in programs],
        folder=folder.name or str(folder),
        storage_key=f"groundeval:author:{key}",
        counts={
            "draft": sum(p.status == "draft" for p in programs),
            "approved": sum(p.status == "approved" for p in programs),
        },
    )
    index = target / "index.html"
    index.write_text(page, encoding="utf-8")
    (target / MARKER).write_text("groundeval author review\n", encoding="utf-8")
    return index


# ----------------------------------------------------------------------------- apply


@dataclass(frozen=True)
class _Decision:
    id: str
    decision: str
    weights: dict[str, float]
    note: str
    reviewer: str


def read_decisions(path: Path, programs: list[Program]) -> list[_Decision]:
    """Decisions exported by the page; every problem names the file, line and field."""
    by_id = {p.id: p for p in programs}
    problems: list[str] = []
    out: list[_Decision] = []
    seen: set[str] = set()
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReviewError(f"{path}: cannot read: {exc}") from exc
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{where}: not JSON: {exc.msg}")
            continue
        decision = _decision(where, row, by_id, problems)
        if decision is None:
            continue
        if decision.id in seen:
            problems.append(f"{where}: id: a second decision for {decision.id!r}")
            continue
        seen.add(decision.id)
        out.append(decision)
    if problems:
        raise ReviewError("\n".join(problems))
    return out


def _decision(
    where: str, row: Any, by_id: dict[str, Program], problems: list[str]
) -> _Decision | None:
    if not isinstance(row, dict):
        problems.append(f"{where}: expected an object with id, decision, reviewer")
        return None
    before = len(problems)
    pid = row.get("id")
    if pid not in by_id:
        problems.append(f"{where}: id: no draft {pid!r} in {PROGRAMS_FILE}")
    if row.get("decision") not in DECISIONS:
        problems.append(
            f"{where}: decision: expected approve or reject, got {row.get('decision')!r}"
        )
    reviewer = row.get("reviewer")
    if not isinstance(reviewer, str) or not reviewer.strip():
        problems.append(f"{where}: reviewer: expected the reviewer's name, got {reviewer!r}")
    note = row.get("note", "")
    if not isinstance(note, str):
        problems.append(f"{where}: note: expected text, got {type(note).__name__}")
    weights = row.get("weights", {})
    hard_ids = {q.id for q in by_id[pid].hard} if pid in by_id else set()
    if not isinstance(weights, dict):
        problems.append(f"{where}: weights: expected {{question id: weight}}, got {weights!r}")
        weights = {}
    for qid, w in weights.items():
        if pid in by_id and qid not in hard_ids:
            problems.append(f"{where}: weights.{qid}: no hard question {qid!r} in {pid}")
        if isinstance(w, bool) or not isinstance(w, int | float) or not w > 0:
            problems.append(f"{where}: weights.{qid}: expected a number > 0, got {w!r}")
    if len(problems) > before:
        return None
    return _Decision(
        str(pid),
        str(row["decision"]),
        {k: float(v) for k, v in weights.items()},
        note,
        str(reviewer),
    )


def _approved(program: Program, decision: _Decision) -> Program:
    data = program.model_dump(mode="json", exclude_defaults=True)
    for q in data.get("hard", []):
        if q["id"] in decision.weights:
            q["weight"] = decision.weights[q["id"]]
    data["status"] = "approved"
    provenance = data.get("provenance", {})
    data["provenance"] = {**provenance, "reviewer": decision.reviewer, "review_note": decision.note}
    return Program.model_validate(data)


def apply_decisions(folder: Path, decisions: Path) -> ApplyReport:
    """Approve (with the reviewer's weights) or remove drafts; rejected ones go to rejected.jsonl.

    Everything is checked before anything is written; programs.jsonl is rewritten
    atomically and must still validate.
    """
    folder = Path(folder)
    programs = _programs(folder)
    chosen = {d.id: d for d in read_decisions(decisions, programs)}
    kept: list[Program] = []
    rejected: list[dict[str, Any]] = []
    for program in programs:
        decision = chosen.get(program.id)
        if decision is None:
            kept.append(program)
        elif decision.decision == "approve":
            kept.append(_approved(program, decision))
        else:
            rejected.append(
                {
                    "id": program.id,
                    "reviewer": decision.reviewer,
                    "note": decision.note,
                    "program": program.model_dump(mode="json", exclude_defaults=True),
                }
            )
    text = dump_programs_jsonl(kept)
    staged = folder / ".programs.apply.jsonl"
    staged.write_text(text, encoding="utf-8")
    try:
        if kept:
            load_programs(staged)
    finally:
        staged.unlink(missing_ok=True)
    earlier = folder / REJECTED_FILE
    old = earlier.read_text(encoding="utf-8") if earlier.is_file() else ""
    new_lines = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in rejected)
    atomic_write(folder / REJECTED_FILE, old + new_lines)
    atomic_write(folder / PROGRAMS_FILE, text)
    return ApplyReport(
        approved=sum(p.status == "approved" for p in kept),
        rejected=len(rejected),
        pending=sum(p.status == "draft" for p in kept),
    )


__all__ = [
    "ApplyReport",
    "ReviewError",
    "apply_decisions",
    "check_words",
    "ground_words",
    "read_decisions",
    "write_review",
]
