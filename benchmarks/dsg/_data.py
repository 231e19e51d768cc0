"""DSG question graphs as dependency programs, recorded VQA answers, human Likert ratings.

``dsg-1k-anns.csv`` has one row per question: ``item_id``, ``text`` (the prompt),
``proposition_id`` and ``dependency`` (comma-separated parent ids, 0 = none).
As in the DSG reference, an item whose ``dependency`` values are not all integers
has no dependencies at all. A question listed as its own parent, or a parent id
the item does not have, is dropped (in the reference neither can change a score).
"""

from __future__ import annotations

import csv
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean
from typing import Literal

from groundeval.programs import Program, Question

Dependencies = Literal["gate", "transitive", "after", "none"]
"""How parents act, all scored by the dependency protocol:

- ``gate``: a question no other question depends on carries ``requires`` and the
  runner never asks it after a parent's "no"; a question that is itself a parent is
  always asked (DSG scores a child by its parents' *own* answers) and zeroed after.
  Same scores as DSG's reference, fewer questions asked.
- ``transitive``: every child carries ``requires``: the runner skips whole subtrees.
  Fewest questions, but a grandchild of a "no" is zeroed even when its own parent
  said yes, which DSG's reference does not do.
- ``after``: every question asked; children of a "no" zeroed afterwards (the reference).
- ``none``: no dependencies (DSG "without dependency")."""


class DSGDataError(ValueError):
    """A DSG file that cannot be read as asked (names file, row and field)."""


@dataclass
class DSGGraph:
    """One prompt's questions and their parents."""

    item_id: str
    prompt: str
    questions: dict[str, str] = field(default_factory=dict)
    """Proposition id -> question text, in file order."""
    parents: dict[str, list[str]] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per question: category_broad / category_detailed."""
    valid_dependencies: bool = True


def _rows(path: Path, need: tuple[str, ...]) -> list[dict[str, str]]:
    try:
        with Path(path).open(newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            missing = [c for c in need if c not in (reader.fieldnames or [])]
            if missing:
                raise DSGDataError(f"{path}: missing column(s) {missing}")
            return list(reader)
    except OSError as exc:
        raise DSGDataError(f"{path}: cannot read: {exc}") from exc


def read_graphs(path: Path) -> dict[str, DSGGraph]:
    """Question graphs per item id from ``dsg-1k-anns.csv``."""
    need = ("item_id", "text", "proposition_id", "dependency", "question_natural_language")
    graphs: dict[str, DSGGraph] = {}
    raw_deps: dict[str, dict[str, str]] = defaultdict(dict)
    for number, row in enumerate(_rows(path, need), start=2):
        item = row["item_id"]
        graph = graphs.setdefault(item, DSGGraph(item, row["text"]))
        qid = row["proposition_id"].strip()
        if not qid.isdigit() or qid in graph.questions:
            raise DSGDataError(f"{path}:{number}: proposition_id {qid!r} is not a new integer id")
        graph.questions[qid] = row["question_natural_language"]
        graph.tags[qid] = {k: row[k] for k in ("category_broad", "category_detailed") if row.get(k)}
        raw_deps[item][qid] = row["dependency"]
    for item, deps in raw_deps.items():
        graph = graphs[item]
        try:
            parsed = {q: [int(x) for x in d.split(",")] for q, d in deps.items()}
        except ValueError:
            graph.valid_dependencies = False
            parsed = {}
        for q in graph.questions:
            graph.parents[q] = [
                str(p) for p in parsed.get(q, []) if p != 0 and str(p) != q and str(p) in deps
            ]
    return graphs


def graph_program(graph: DSGGraph, dependencies: Dependencies = "gate") -> Program:
    """A dependency program (see :data:`Dependencies`).

    A ``transitive`` graph with a cycle falls back to ``after`` for that item.
    """
    mode = dependencies
    inner = {p for parents in graph.parents.values() for p in parents}
    for attempt in ("first", "fallback"):
        questions = []
        for qid, text in graph.questions.items():
            parents = graph.parents[qid] if mode != "none" else []
            gated = mode == "transitive" or (mode == "gate" and qid not in inner)
            tags = dict(graph.tags[qid])
            if parents and not gated:
                tags["parents"] = ",".join(parents)
            questions.append(
                Question(id=qid, ask=text, requires=parents if gated else [], tags=tags)
            )
        try:
            return Program(
                id=graph.item_id,
                prompt=graph.prompt,
                tags={"split": graph.item_id.rsplit("_", 1)[0]},
                scoring="dependency",
                hard=questions,
            )
        except ValueError as exc:
            if attempt == "fallback" or mode != "transitive" or "cycle" not in str(exc):
                raise DSGDataError(f"DSG item {graph.item_id}: {exc}") from exc
            mode = "after"
    raise AssertionError("unreachable")


def load_dsg_programs(path: Path, dependencies: Dependencies = "gate") -> dict[str, Program]:
    """Programs per DSG item id."""
    return {item: graph_program(g, dependencies) for item, g in read_graphs(path).items()}


def image_id(item_id: str, t2i_model: str) -> str:
    """The item id of one generated image: ``<prompt item>:<t2i model>``."""
    return f"{item_id}:{t2i_model}"


def read_answers(path: Path, split: str | None = None) -> dict[tuple[str, str], str]:
    """(image id, question id) -> the VQA model's raw answer text."""
    need = ("dsg_prompt_split", "t2i_model", "item_id", "question_id", "answer")
    answers: dict[tuple[str, str], str] = {}
    for number, row in enumerate(_rows(path, need), start=2):
        if split is not None and row["dsg_prompt_split"] != split:
            continue
        key = (image_id(row["item_id"], row["t2i_model"]), row["question_id"].strip())
        if key in answers:
            raise DSGDataError(f"{path}:{number}: second answer for {key}")
        answers[key] = row["answer"]
    return answers


def read_likert(path: Path, split: str | None = None) -> dict[str, float]:
    """Image id -> mean human Likert rating (``answer`` column, several workers)."""
    need = ("dsg_prompt_split", "t2i_model", "item_id", "answer")
    ratings: dict[str, list[float]] = defaultdict(list)
    for number, row in enumerate(_rows(path, need), start=2):
        if split is not None and row["dsg_prompt_split"] != split:
            continue
        try:
            value = float(row["answer"])
        except ValueError as exc:
            raise DSGDataError(
                f"{path}:{number}: answer expected a number, got {row['answer']!r}"
            ) from exc
        ratings[image_id(row["item_id"], row["t2i_model"])].append(value)
    return {k: fmean(v) for k, v in ratings.items()}
