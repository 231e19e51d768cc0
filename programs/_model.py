"""The program model: what a benchmark author writes, validated before anything runs.

A program is data. Every identifier is checked against a safe pattern so it can
become part of a path (after escaping) and never names a parent folder.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from groundeval.programs._protocols import PROTOCOLS
from groundeval.state import GroundSpec as GroundSpec
from groundeval.state import Helper as Helper
from groundeval.state import SecondOpinion as SecondOpinion

PROGRAM_VERSION = 1
ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:\-]{0,127}$"
_ID_RE = re.compile(ID_PATTERN)

Scoring = str
"""A registered scoring protocol: grounded, checklist, rubric, dependency or a plugin's."""


def check_id(value: str, what: str = "id") -> str:
    """Reject ids that could escape a folder or break a file name."""
    if not _ID_RE.match(value) or ".." in value:
        raise ValueError(
            f"{what} {value!r} is not allowed: use letters, digits and _ . : - "
            "(no '/', no '..', at most 128 characters, starting with a letter or digit)"
        )
    return value


Identifier = Annotated[str, Field(pattern=ID_PATTERN, description="Safe identifier.")]


WEIGHT_DOC = (
    "Weight among the hard questions (ignored for gates). Grounded scoring: relaxed = "
    "gate x sum(w*s) / sum(w) over the hard questions (partial marks count); strict = "
    "gate x 1 only when every hard question has full marks (s = 1), else 0."
)
SCORING_DOC = (
    "Scoring protocol: grounded (gate x weighted hard marks, strict and relaxed), "
    "checklist (BizGenEval), rubric (UEval), dependency (DSG), or a protocol a plugin "
    "registered with register_protocol. In every protocol an item "
    "with an unanswered question (judge error, no decision) is 'error' and with a withheld "
    "one 'withheld': it has no scores, is left out of the means and is counted in every "
    "summary cell; it is never scored as a 'no'."
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NamedCheck(_Strict):
    """A check from the registry, called by name with keyword arguments."""

    name: str
    """Registered check name, e.g. ``count`` or ``argmax_is_leftmost``."""
    args: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments passed to the check."""


Check = Annotated[str, Field(min_length=1, max_length=2000)] | NamedCheck


class Question(_Strict):
    """One gate or hard question."""

    id: Identifier
    ask: str = Field(min_length=1, max_length=4000)
    """The question in words; what a judge sees, what a report shows."""
    weight: float = Field(default=1.0, gt=0, description=WEIGHT_DOC)
    """Weight among the hard questions (ignored for gates); see :data:`WEIGHT_DOC`."""
    requires: list[Identifier] = Field(default_factory=list)
    """Questions that must pass before this one is asked (DSG-style dependencies)."""
    ground: GroundSpec | None = None
    """How to ground the question; ``None`` for a direct question or a ``uses`` reuse."""
    uses: Identifier | None = None
    """Reuse another question's grounding state instead of grounding again."""
    check: Check | None = None
    """Deterministic check over the grounding state; ``None`` asks the judge."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Free tags (``track: easy``, ``modality: image``) that protocols group by."""

    @model_validator(mode="after")
    def _coherent(self) -> Question:
        if self.ground is not None and self.uses is not None:
            raise ValueError(f"question {self.id}: give either 'ground' or 'uses', not both")
        if (self.ground is not None or self.uses is not None) and self.check is None:
            raise ValueError(f"question {self.id}: a grounded question needs a 'check'")
        return self

    @property
    def is_direct(self) -> bool:
        """True when the judge answers this question yes/no."""
        return self.check is None

    @property
    def grounding_source(self) -> str | None:
        """Id of the question whose grounding state this one reads (own, or ``uses``)."""
        if self.ground is not None:
            return self.id
        return self.uses


ProgramStatus = Literal["draft", "approved"]


class Provenance(_Strict):
    """Who wrote a program and who reviewed it (set by ``groundeval author``)."""

    judge: str = ""
    """Spec of the judge that drafted it (``gemini:gemini-2.5-flash``)."""
    model: str = ""
    """Model name the judge reported."""
    prompt_sha256: str = ""
    """Hash of the generation prompt (and hidden rationale) the draft was written for."""
    rounds: int = Field(default=1, ge=1)
    """Judge calls it took to reach a draft that validates (1 = valid at once)."""
    reviewer: str | None = None
    """Who approved it (``groundeval author apply``); ``None`` while a draft."""
    review_note: str = ""
    """The reviewer's note."""


class Program(_Strict):
    """Gate questions plus weighted hard questions for one item (one image prompt)."""

    version: int = PROGRAM_VERSION
    id: Identifier
    prompt: str = ""
    """The generation prompt the image answers."""
    tags: dict[str, str] = Field(default_factory=dict)
    """Item tags (``axis: quantity``, ``domain: Slides``) for summary tables."""
    scoring: Scoring = Field(
        default="grounded",
        description=SCORING_DOC,
        json_schema_extra={"examples": ["grounded", "checklist", "rubric", "dependency"]},
    )
    """Scoring protocol; see :data:`SCORING_DOC`."""
    instructions: str = ""
    """Extra judge instructions for this program's direct questions."""
    gates: list[Question] = Field(default_factory=list)
    hard: list[Question] = Field(default_factory=list)
    status: ProgramStatus | None = None
    """``draft`` (written by ``groundeval author``; ``run`` refuses it without
    ``--allow-drafts``), ``approved`` (reviewed), or ``None`` (written by hand)."""
    provenance: Provenance | None = None
    """How an authored program was made and reviewed."""

    @field_validator("scoring")
    @classmethod
    def _registered_protocol(cls, value: str) -> str:
        if value not in PROTOCOLS:
            raise ValueError(
                f"unknown scoring protocol {value!r}; known: {', '.join(PROTOCOLS.names())} "
                "(a plugin's protocol is known once its file is loaded with --plugins)"
            )
        return value

    @field_validator("version")
    @classmethod
    def _known_version(cls, value: int) -> int:
        if value != PROGRAM_VERSION:
            raise ValueError(f"unsupported program version {value}; expected {PROGRAM_VERSION}")
        return value

    @model_validator(mode="after")
    def _graph(self) -> Program:
        check_id(self.id, "program id")
        questions = [*self.gates, *self.hard]
        seen: set[str] = set()
        for q in questions:
            check_id(q.id, "question id")
            if q.id in seen:
                raise ValueError(f"duplicate question id {q.id!r}")
            seen.add(q.id)
        if not self.hard and not self.gates:
            raise ValueError("a program needs at least one gate or hard question")
        gate_ids = {g.id for g in self.gates}
        hard_ids = {h.id for h in self.hard}
        for q in questions:
            for ref in q.requires:
                if ref not in seen:
                    raise ValueError(f"question {q.id}: 'requires' names unknown question {ref!r}")
                if ref in gate_ids:
                    raise ValueError(
                        f"question {q.id}: 'requires' names gate {ref!r}; gates already gate"
                    )
            if q.uses is not None:
                source = next((x for x in questions if x.id == q.uses), None)
                if source is None:
                    raise ValueError(f"question {q.id}: 'uses' names unknown question {q.uses!r}")
                if source.ground is None:
                    raise ValueError(
                        f"question {q.id}: 'uses' names {q.uses!r}, which has no 'ground'"
                    )
        for q in questions:
            if q.check is not None and self.state_source(q) is None:
                raise ValueError(
                    f"question {q.id}: a 'check' needs grounding state: add 'ground', "
                    "'uses', or 'requires' naming a grounded question"
                )
        for g in self.gates:
            if g.requires:
                raise ValueError(f"gate {g.id}: gates cannot have 'requires'")
        _check_acyclic(self.hard)
        del hard_ids
        return self

    @property
    def questions(self) -> list[Question]:
        """Gates then hard questions."""
        return [*self.gates, *self.hard]

    def state_source(self, question: Question) -> str | None:
        """Question whose grounding state a check reads.

        Its own, ``uses``, or its first grounded ``requires`` (so ``requires: [h1]``
        plus a check reads h1's boxes).
        """
        if question.grounding_source is not None:
            return question.grounding_source
        for ref in question.requires:
            parent = next((q for q in self.questions if q.id == ref), None)
            if parent is not None and parent.grounding_source is not None:
                return parent.grounding_source
        return None

    def question(self, question_id: str) -> Question:
        """Look a question up by id."""
        for q in self.questions:
            if q.id == question_id:
                return q
        raise KeyError(f"program {self.id} has no question {question_id!r}")

    def grounded_image_index(self, question_id: str) -> int:
        """Which of the item's images a question's grounding read (0 when none or unknown)."""
        try:
            source = self.state_source(self.question(question_id))
            ground = self.question(source).ground if source else None
        except KeyError:
            return 0
        return int(ground.params.get("image", 0)) if ground else 0


def _check_acyclic(questions: list[Question]) -> None:
    """Reject cycles through ``requires`` and ``uses`` (both are orderings)."""
    edges = {q.id: [*q.requires, *([q.uses] if q.uses else [])] for q in questions}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        if state.get(node) == 2:
            return
        if state.get(node) == 1:
            cycle = " -> ".join([*path[path.index(node) :], node])
            raise ValueError(f"cycle in requires/uses: {cycle}")
        state[node] = 1
        for nxt in edges.get(node, []):
            visit(nxt, [*path, node])
        state[node] = 2

    for q in questions:
        visit(q.id, [])


def dependency_order(questions: list[Question]) -> list[Question]:
    """Questions sorted so every ``requires``/``uses`` target comes first (stable)."""
    by_id = {q.id: q for q in questions}
    done: set[str] = set()
    ordered: list[Question] = []

    def place(q: Question) -> None:
        if q.id in done:
            return
        for ref in [*q.requires, *([q.uses] if q.uses else [])]:
            if ref in by_id:
                place(by_id[ref])
        done.add(q.id)
        ordered.append(q)

    for q in questions:
        place(q)
    return ordered
