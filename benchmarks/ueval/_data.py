"""UEval items as rubric programs: one hard question per criterion, tagged by modality.

Published field names: ``id``, ``prompt``, ``task_type``, ``question_type``,
``text_rubrics`` and ``image_rubrics`` (lists of ``{"criterion", "tags"}``),
``text_ref``, ``image_ref``. Rows come from a local JSONL or a parquet export.
The answers (text plus one or several images per item) come from a manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundeval.programs import ItemInput, Program, Question, check_id, items_from_manifest
from groundeval.state import iter_jsonl

INSTRUCTIONS = (
    "You are checking an answer to the prompt below against rubric criteria. The answer "
    "is made of the attached image(s) and the text shown. Judge each criterion on its "
    "own: true only when the answer clearly satisfies it (image criteria from the images, "
    "text criteria from the text), false when it is missing, wrong or only partly met."
)


class UEvalDataError(ValueError):
    """A UEval row that cannot become a program (names file, row and field)."""


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Rows from ``.jsonl`` or ``.parquet`` (pyarrow)."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError as exc:  # pragma: no cover - pyarrow is a dev dependency
            raise UEvalDataError(
                f"{path}: reading parquet needs pyarrow: pip install pyarrow"
            ) from exc
        try:
            rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
            return rows
        except Exception as exc:  # pyarrow raises several types for bad files
            raise UEvalDataError(f"{path}: cannot read parquet: {exc}") from exc
    return [row for _, row in iter_jsonl(path, UEvalDataError)]


def _criteria(row: dict[str, Any], key: str, where: str) -> list[tuple[str, list[str]]]:
    value = row.get(key)
    if value is None:
        return []
    if isinstance(value, str):  # some exports keep nested lists as JSON text
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise UEvalDataError(f"{where}: field {key!r} is text but not JSON") from exc
    if not isinstance(value, list):
        raise UEvalDataError(f"{where}: field {key!r} expected a list, got {type(value).__name__}")
    out = []
    for n, entry in enumerate(value, start=1):
        if isinstance(entry, str):
            entry = {"criterion": entry}
        if not isinstance(entry, dict) or not str(entry.get("criterion", "")).strip():
            raise UEvalDataError(f"{where}: {key}[{n}] needs a non-empty 'criterion'")
        tags = entry.get("tags") or []
        tags = [tags] if isinstance(tags, str) else [str(t) for t in tags]
        out.append((str(entry["criterion"]).strip(), tags))
    return out


def row_program(row: dict[str, Any], where: str = "row") -> Program:
    """A rubric program for one UEval row."""
    for key in ("id", "prompt"):
        if row.get(key) is None:
            raise UEvalDataError(f"{where}: missing field {key!r}")
    try:
        program_id = check_id(str(row["id"]), "UEval id")
    except ValueError as exc:
        raise UEvalDataError(f"{where}: {exc}") from exc
    questions = []
    for modality, key, prefix in (("image", "image_rubrics", "i"), ("text", "text_rubrics", "t")):
        for n, (criterion, tags) in enumerate(_criteria(row, key, where), start=1):
            q_tags = {"modality": modality}
            if tags:
                q_tags["rubric_tags"] = ",".join(tags)
            questions.append(Question(id=f"{prefix}{n}", ask=criterion, tags=q_tags))
    if not questions:
        raise UEvalDataError(f"{where}: item {program_id} has no image_rubrics or text_rubrics")
    item_tags = {"benchmark": "ueval"}
    for key in ("task_type", "question_type"):
        if row.get(key) is not None:
            item_tags[key] = str(row[key])
    return Program(
        id=program_id,
        prompt=str(row["prompt"]),
        tags=item_tags,
        scoring="rubric",
        instructions=INSTRUCTIONS,
        hard=questions,
    )


def load_ueval(path: Path) -> list[Program]:
    """Rubric programs for every row of a UEval JSONL or parquet export."""
    programs, seen = [], set()
    for number, row in enumerate(read_rows(path), start=1):
        program = row_program(row, f"{path}: row {number}")
        if program.id in seen:
            raise UEvalDataError(f"{path}: row {number}: duplicate id {program.id!r}")
        seen.add(program.id)
        programs.append(program)
    return programs


def ueval_items(programs: list[Program], manifest: Path) -> list[ItemInput]:
    """Answers from a manifest JSONL: ``{"id", "images": [...], "answer": "text"}``."""
    items: list[ItemInput] = items_from_manifest(programs, manifest)
    return items
