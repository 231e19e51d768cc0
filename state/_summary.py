"""Typed summary.json: the run summary and each built-in protocol's section.

summary.json is written from plain dicts (with sorted keys, so its bytes depend
on values only); these models check what is written and what is read, and are
published as ``state/schemas/summary.schema.json``. They are pure data, so they
live in the lowest layer, where every reader (report, compare, CLI) can import them.
Sections a protocol registered by a plugin writes are free-form; sections other
tools add at the top (the demo's ``accuracy_vs_truth``) are allowed and kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Number = int | float
"""A metric as written (an int stays an int: the file's bytes must not change)."""
Interval = Annotated[list[Number], Field(min_length=2, max_length=2)]
"""``[low, high]``: a 95 % interval next to its metric (``m_ci95``)."""


class _Section(BaseModel):
    """Every key is known: a misspelt or missing key is an error."""

    model_config = ConfigDict(extra="forbid")


class CiNote(_Section):
    """How the ``*_ci95`` intervals were computed."""

    method: str
    level: float
    resamples: int
    seed: int


class GroundedCell(_Section):
    """Grounded: strict/relaxed means over scored items, and the items left out."""

    items: int
    scored: int
    strict: Number | None
    relaxed: Number | None
    withheld: int
    errors: int
    pending: int
    withheld_rate: Number
    error_rate: Number
    gate_failed: int
    strict_ci95: Interval | None = None
    relaxed_ci95: Interval | None = None
    withheld_rate_ci95: Interval | None = None
    error_rate_ci95: Interval | None = None


class GroundedSummary(_Section):
    """Grounded: overall and per tag value (``by_tag[key][value]``)."""

    overall: GroundedCell
    by_tag: dict[str, dict[str, GroundedCell]]
    ci: CiNote | None = None


class ChecklistGroup(_Section):
    """Checklist: one domain or dimension (count in the means, accuracy, score, left out)."""

    count: int
    accuracy: Number | None
    error_score: Number | None
    errors: int
    withheld: int
    pending: int
    missing: int
    left_out_of_means: int
    accuracy_ci95: Interval | None = None
    error_score_ci95: Interval | None = None


class ChecklistTables(_Section):
    """The reference's two tables (rows per track; one text column per group, Average)."""

    by_domain: list[dict[str, str]]
    by_dimension: list[dict[str, str]]


class ChecklistIntervalTables(_Section):
    """The tables' intervals: rows per track, ``Split`` then an interval per column."""

    by_domain: list[dict[str, Interval | str]]
    by_dimension: list[dict[str, Interval | str]]


class ChecklistLeftOut(_Section):
    """Items without track scores, by why."""

    errors: int
    withheld: int
    pending: int
    missing: int


class ChecklistSummary(_Section):
    """Checklist (BizGenEval): the reference's summary.json plus what groundeval adds."""

    total_items: int
    total_scored: int
    easy_scored: int
    hard_scored: int
    error_alpha: Number
    by_domain: dict[str, ChecklistGroup]
    by_dimension: dict[str, ChecklistGroup]
    missing_items: list[str]
    missing_reasons: dict[str, str]
    missing_convention: Literal["skip", "zero"]
    missing_note: str
    left_out: ChecklistLeftOut
    answer_errors_counted_as_wrong: int
    tables: ChecklistTables
    cell_counts: ChecklistTables
    tables_ci95: ChecklistIntervalTables | None = None
    ci: CiNote | None = None


class RubricCell(_Section):
    """Rubric: means over scored answers (all criteria, image, text), and those left out."""

    items: int
    score: Number | None
    image: Number | None
    text: Number | None
    errors: int
    withheld: int
    pending: int
    score_ci95: Interval | None = None
    image_ci95: Interval | None = None
    text_ci95: Interval | None = None


class RubricSummary(_Section):
    """Rubric (UEval): overall, mean of task means, per task type."""

    overall: RubricCell
    task_mean: Number | None
    by_task: dict[str, RubricCell]
    items: int
    errors: int
    withheld: int
    pending: int
    error_note: str
    task_mean_ci95: Interval | None = None
    ci: CiNote | None = None


class DependencyCell(_Section):
    """Dependency: mean item score over the items in the mean, and those left out."""

    score: Number | None
    items: int
    in_mean: int
    errors: int
    withheld: int
    pending: int
    score_ci95: Interval | None = None


class DependencySummary(_Section):
    """Dependency (DSG): mean item score overall and per tag value, with counts."""

    items: int
    score: Number | None
    overall: DependencyCell
    by_tag: dict[str, dict[str, Number | None]]
    by_tag_counts: dict[str, dict[str, DependencyCell]]
    asked: int
    skipped: int
    errors: int
    withheld: int
    pending: int
    missing_convention: Literal["skip", "zero"]
    answer_errors: int
    error_note: str
    score_ci95: Interval | None = None
    by_tag_ci95: dict[str, dict[str, Interval]] | None = None
    ci: CiNote | None = None


PROTOCOL_SUMMARIES: dict[str, type[BaseModel]] = {
    "grounded": GroundedSummary,
    "checklist": ChecklistSummary,
    "rubric": RubricSummary,
    "dependency": DependencySummary,
}
"""The section model of each built-in protocol (a plugin protocol's section is free-form)."""


class ProtocolSections(BaseModel):
    """Per protocol used in the run, its section; other (plugin) protocols' sections as written."""

    model_config = ConfigDict(extra="allow")

    grounded: GroundedSummary | None = None
    checklist: ChecklistSummary | None = None
    rubric: RubricSummary | None = None
    dependency: DependencySummary | None = None

    @model_validator(mode="after")
    def _plugin_sections_are_objects(self) -> ProtocolSections:
        for name, section in (self.model_extra or {}).items():
            if not isinstance(section, dict):
                raise ValueError(f"section of protocol {name!r} must be an object")
        return self


class StatusCounts(_Section):
    """Items per status."""

    scored: int
    withheld: int
    error: int
    pending: int


class ProblemCell(_Section):
    """One cell's items, and its items and decisions that are error, withheld or pending."""

    items: int
    error_items: int
    error_decisions: int
    withheld_items: int
    withheld_decisions: int
    pending_items: int
    pending_decisions: int


class ProblemReason(_Section):
    """A reason items or decisions were not scored, how often, and one example."""

    outcome: Literal["error", "withheld", "pending"]
    reason: str
    count: int
    example: str


class Problems(_Section):
    """Error/withheld/pending counts overall and per tag value, and the commonest reasons."""

    overall: ProblemCell
    by_tag: dict[str, dict[str, ProblemCell]]
    reasons: list[ProblemReason]


class UsageTotals(_Section):
    """Judge calls and cost of the whole run."""

    calls: int
    cached_calls: int
    input_tokens: int
    output_tokens: int
    thinking_tokens: int
    cost_usd: Number


class RunSummary(BaseModel):
    """summary.json: counts, one section per scoring protocol, problems, usage.

    Sections added by other tools (the demo's ``accuracy_vs_truth`` and
    ``accuracy_by_scene``) are kept as written; ``not_recomputed`` lists those a
    rescore that changed grades could not recompute.
    """

    model_config = ConfigDict(extra="allow")

    items: int
    status: StatusCounts
    protocols: ProtocolSections
    problems: Problems
    usage: UsageTotals
    not_recomputed: list[str] | None = Field(
        default=None, description="Carried-over sections that describe older grades."
    )

    def as_json(self) -> dict[str, Any]:
        """The summary as written to summary.json (only the keys it was built from)."""
        data: dict[str, Any] = self.model_dump(mode="json", exclude_unset=True)
        return data


class SummaryError(ValueError):
    """A summary.json that does not parse or does not match the model (file and field named)."""


def _field(loc: tuple[int | str, ...]) -> str:
    return ".".join(str(part) for part in loc) or "(top level)"


def validate_summary(data: Any, where: str = "summary.json") -> RunSummary:
    """``data`` as a :class:`RunSummary`; :class:`SummaryError` naming ``where`` and the field."""
    try:
        return RunSummary.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{_field(e['loc'])}: {e['msg']} (got {e['input']!r:.60})" for e in exc.errors()[:5]
        )
        raise SummaryError(f"{where}: {problems}") from exc


def read_summary(path: Path) -> RunSummary:
    """A summary.json, checked: a damaged file is an error naming the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise SummaryError(f"{path}: not JSON: {exc}") from exc
    return validate_summary(data, str(path))
