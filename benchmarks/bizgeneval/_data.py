"""BizGenEval's JSONL as checklist programs: 20 yes/no questions per image, 10 easy + 10 hard.

The image of an item is ``<domain>_<dimension>_<id>.png``; the program id is the
same stem, so ``groundeval run --images DIR`` finds it. Question ids are the
1-based question numbers ("1" … "20"), the keys of the reference's ``meta_info``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundeval.programs import Program, Question
from groundeval.state import iter_jsonl

QUESTIONS_PER_ITEM = 20

FAMILY_INSTRUCTIONS: dict[str, str] = {
    "layout": (
        "These questions are about layout: where blocks sit, how they are aligned, split "
        "into columns or rows, grouped, ordered and sized relative to each other. Judge "
        "positions and structure as drawn; ignore whether the wording inside is exact."
    ),
    "attribute": (
        "These questions are about visual attributes: colours, shapes, sizes, styles, "
        "icons, counts and decorations of the elements. Answer true only when the "
        "attribute is plainly visible on the element the question names."
    ),
    "text": (
        "These questions are about rendered text on a slide, web page or poster. Read the "
        "text in the image: answer true only when the asked words are present, legible "
        "and spelled as asked (case and punctuation may differ), in the place asked."
    ),
    "text1": (
        "These questions are about text inside a chart or scientific figure: titles, axis "
        "labels, tick labels, legends, annotations and data labels. Answer true only when "
        "the asked text or number is legible and matches, in the part of the figure asked."
    ),
    "knowledge": (
        "These questions check domain knowledge the image must show correctly (facts, "
        "formulas, data relations, conventions). Answer true only when what is drawn or "
        "written is visibly present and factually right."
    ),
}
"""Judge instructions per ``eval_tag`` family (groundeval's own wording)."""


class BizGenEvalDataError(ValueError):
    """A BizGenEval row that cannot become a program (names file, line and field)."""


@dataclass(frozen=True)
class BizGenEvalItem:
    """One row of the benchmark, as far as scoring needs it."""

    item_id: str
    domain: str
    dimension: str
    n_questions: int
    easy: tuple[int, ...]
    hard: tuple[int, ...]


def image_stem(row: dict[str, Any]) -> str:
    """``<domain>_<dimension>_<id>``: the image and result file name without suffix."""
    return f"{row['domain']}_{row['dimension']}_{row['id']}"


def read_rows(path: Path) -> list[dict[str, Any]]:
    """Raw JSON rows with their line numbers checked."""
    rows = []
    for number, row in iter_jsonl(Path(path), BizGenEvalDataError):
        _check_row(row, f"{path}:{number}")
        rows.append(row)
    return rows


def _check_row(row: dict[str, Any], where: str) -> None:
    for key, kind in (
        ("id", (int, str)),
        ("domain", str),
        ("dimension", str),
        ("prompt", str),
        ("questions", list),
        ("eval_tag", str),
        ("easy_qidxs", list),
        ("hard_qidxs", list),
    ):
        if key not in row:
            raise BizGenEvalDataError(f"{where}: missing field {key!r}")
        if not isinstance(row[key], kind):
            raise BizGenEvalDataError(
                f"{where}: field {key!r} expected {kind}, got {type(row[key]).__name__}"
            )
    questions = row["questions"]
    if not all(isinstance(q, str) and q.strip() for q in questions):
        raise BizGenEvalDataError(f"{where}: field 'questions' must be non-empty strings")
    n = len(questions)
    easy, hard = row["easy_qidxs"], row["hard_qidxs"]
    for key, idxs in (("easy_qidxs", easy), ("hard_qidxs", hard)):
        bad = [i for i in idxs if not isinstance(i, int) or not 1 <= i <= n]
        if bad:
            raise BizGenEvalDataError(f"{where}: {key} expected 1-based indices 1..{n}, got {bad}")
    if sorted([*easy, *hard]) != list(range(1, n + 1)):
        raise BizGenEvalDataError(
            f"{where}: easy_qidxs + hard_qidxs must cover questions 1..{n} exactly once"
        )
    if row["eval_tag"] not in FAMILY_INSTRUCTIONS:
        raise BizGenEvalDataError(
            f"{where}: eval_tag expected one of {sorted(FAMILY_INSTRUCTIONS)}, "
            f"got {row['eval_tag']!r}"
        )


def row_item(row: dict[str, Any]) -> BizGenEvalItem:
    """The scoring facts of one row."""
    return BizGenEvalItem(
        image_stem(row),
        row["domain"],
        row["dimension"],
        len(row["questions"]),
        tuple(row["easy_qidxs"]),
        tuple(row["hard_qidxs"]),
    )


def row_program(row: dict[str, Any]) -> Program:
    """A checklist program: every question a hard direct question tagged with its track."""
    easy = set(row["easy_qidxs"])
    questions = [
        Question(
            id=str(number),
            ask=text,
            tags={"track": "easy" if number in easy else "hard"},
        )
        for number, text in enumerate(row["questions"], start=1)
    ]
    return Program(
        id=image_stem(row),
        prompt=row["prompt"],
        tags={
            "domain": row["domain"],
            "dimension": row["dimension"],
            "eval_tag": row["eval_tag"],
            "benchmark": "bizgeneval",
        },
        scoring="checklist",
        instructions=FAMILY_INSTRUCTIONS[row["eval_tag"]],
        hard=questions,
    )


def load_bizgeneval(path: Path) -> list[Program]:
    """Programs for every row of a BizGenEval JSONL (users pass their own copy)."""
    rows = read_rows(path)
    programs = []
    seen: set[str] = set()
    for row in rows:
        try:
            program = row_program(row)
        except ValueError as exc:
            raise BizGenEvalDataError(f"{path}: item {image_stem(row)}: {exc}") from exc
        if program.id in seen:
            raise BizGenEvalDataError(f"{path}: duplicate item {program.id!r}")
        seen.add(program.id)
        programs.append(program)
    return programs
