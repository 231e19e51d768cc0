"""Records written to disk: grounding state files and item results.

These are the evidence and the verdict. They are versioned pydantic models with
JSON Schemas checked in beside them (``state/schemas/``), validated on write and
on read.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

STATE_VERSION = 1
RESULT_VERSION = 1

ElementKind = Literal["box", "polygon", "line", "ray", "point"]
Verdict = Literal["accepted", "rejected", "unverified"]
Outcome = Literal["pass", "fail", "withheld", "error", "pending"]
"""``pending``: a human override changed a parent; ``run --resume`` asks this question."""
DecisionSource = Literal["judge", "check", "skipped", "gate", "human"]


ERROR_SUFFIX = "_err"
"""A number field ``F`` may carry its measurement's uncertainty as ``F_err`` (same unit,
one side of a +/- interval): a check comparing ``F`` with a tolerance withholds a verdict
that lies within it. Written by proposers (``grounding``), read by checks (``programs``)."""


def error_field(name: str) -> str:
    """The name of the field holding ``name``'s uncertainty (``radius_px`` -> ``radius_px_err``)."""
    return name + ERROR_SUFFIX


_POINTS_NEEDED = {"polygon": 3, "line": 2, "ray": 2, "point": 1}
"""Points each non-box element kind needs (built once: every element read checks it)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Element(_Record):
    """One numbered help line: the mark drawn on the overlay, with its typed fields.

    Geometry is in pixels of the original image, origin top-left. A box uses
    ``xyxy_px``; a polygon, line, ray or point uses ``points_px`` (3+, 2, 2, 1 points).
    """

    id: int = Field(ge=1)
    """1-based number drawn on the overlay."""
    kind: ElementKind
    xyxy_px: list[float] | None = Field(default=None, min_length=4, max_length=4)
    points_px: list[list[float]] | None = None
    fields: dict[str, Any] = Field(default_factory=dict)
    """Typed values per element (``pips``, ``text``, ``confidence``); a number may carry its
    uncertainty as a sibling (``radius_px_err``, see :func:`error_field`)."""
    verdict: Verdict = "unverified"
    reason: str = ""
    """Why the verifier accepted or rejected this element."""

    @model_validator(mode="after")
    def _geometry(self) -> Element:
        need = _POINTS_NEEDED
        if self.kind == "box":
            if self.xyxy_px is None:
                raise ValueError(f"element {self.id}: a box needs xyxy_px")
            x1, y1, x2, y2 = self.xyxy_px
            if not (x2 >= x1 and y2 >= y1):
                raise ValueError(f"element {self.id}: xyxy_px must have x2 >= x1 and y2 >= y1")
        else:
            pts = self.points_px
            if pts is None or any(len(p) != 2 for p in pts):
                raise ValueError(
                    f"element {self.id}: a {self.kind} needs points_px as [x, y] pairs"
                )
            minimum = need[self.kind]
            exact = self.kind in ("line", "ray", "point")
            if (exact and len(pts) != minimum) or len(pts) < minimum:
                raise ValueError(
                    f"element {self.id}: a {self.kind} needs {minimum} points, got {len(pts)}"
                )
        return self


class Round(_Record):
    """One propose -> draw -> verify round of the grounding loop."""

    index: int = Field(ge=1)
    asked: str
    """What the proposer was asked (target plus feedback from the last round)."""
    proposer: str
    raw: str = ""
    """Raw text that came back from a judge proposer (empty for CV proposers)."""
    elements: list[Element]
    """Elements as proposed and verified in this round."""
    overlay: str | None = None
    """Overlay PNG, relative to the run folder."""
    missing: list[str] = Field(default_factory=list)
    """What the verifier says is missing; fed back to the next round."""
    verifier: str = "offline"
    verifier_raw: str = ""
    unexplained: list[Element] = Field(default_factory=list)
    """Object-like regions the proposer found but could not explain (drawn in the overlay)."""
    problems: list[str] = Field(default_factory=list)
    """Why the proposer distrusted its own proposal (clutter, weak support, retry drift)."""
    dropped: list[str] = Field(default_factory=list)
    """Proposals dropped as unusable, each with its reason."""


class Provenance(_Record):
    """Everything that produced the state: reproducibility is checked against this."""

    toolkit_version: str
    judge: str = "offline"
    model: str = ""
    parameters: dict[str, Any] = Field(default_factory=dict)
    proposer: str = ""
    proposer_params: dict[str, Any] = Field(default_factory=dict)


class StateFile(_Record):
    """The evidence for one grounded question: elements, rounds, final status."""

    schema_version: int = STATE_VERSION
    item_id: str
    question_id: str
    image_sha256: str
    image_size_wh: list[int] = Field(min_length=2, max_length=2)
    helper: str
    target: str = ""
    elements: list[Element] = Field(default_factory=list)
    """Final accepted elements, renumbered 1..n; what checks read."""
    rounds: list[Round] = Field(default_factory=list)
    status: Literal["grounded", "withheld", "error"]
    reason: str = ""
    provenance: Provenance


class CheckTrace(_Record):
    """What a deterministic check computed, in words a person can read."""

    check: str
    score: float = Field(ge=0.0, le=1.0)
    trace: str


class Usage(_Record):
    """Judge calls and their cost for one item or one run."""

    calls: int = 0
    cached_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0
    seconds: float = 0.0
    """Wall-clock seconds spent waiting on the judge (kept out of results.jsonl)."""
    cost_usd: float = 0.0

    def add(self, other: Usage) -> Usage:
        """Sum of two usages."""
        return Usage(
            calls=self.calls + other.calls,
            cached_calls=self.cached_calls + other.cached_calls,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            thinking_tokens=self.thinking_tokens + other.thinking_tokens,
            seconds=self.seconds + other.seconds,
            cost_usd=self.cost_usd + other.cost_usd,
        )


class Override(_Record):
    """The decision before a human overruled it."""

    outcome: Outcome
    score: float
    source: DecisionSource
    reason: str


class Decision(_Record):
    """The outcome of one question for one item."""

    question_id: str
    kind: Literal["gate", "hard"]
    outcome: Outcome
    score: float = Field(ge=0.0, le=1.0)
    """1 pass, 0 fail, partial marks in between (relaxed scoring)."""
    source: DecisionSource
    reason: str = ""
    """Judge reason, check trace, skip or error explanation."""
    check: CheckTrace | None = None
    state_file: str | None = None
    """Grounding state file, relative to the run folder."""
    raw: str = ""
    """Raw judge text behind this decision, when a judge decided."""
    note: str = ""
    author: str = ""
    original: Override | None = None
    """Set when a human override replaced this decision."""


class ItemResult(_Record):
    """One line of results.jsonl: every decision for one item and its scores."""

    schema_version: int = RESULT_VERSION
    item_id: str
    program_id: str
    scoring: str
    tags: dict[str, str] = Field(default_factory=dict)
    images: list[str] = Field(default_factory=list)
    """Image paths as given to the run."""
    image_sha256: list[str] = Field(default_factory=list)
    status: Literal["scored", "withheld", "error", "pending"]
    """``pending``: a question awaits a judge answer after an override (``run --resume``)."""
    gate_failed: str | None = None
    decisions: list[Decision] = Field(default_factory=list)
    scores: dict[str, float | None] = Field(
        default_factory=dict,
        description=(
            "Protocol scores, null unless status is 'scored'. grounded: relaxed = gate x "
            "sum(w*s) / sum(w) (partial marks count), strict = gate x 1 only when every hard "
            "question has full marks, else 0; checklist: easy / hard / all = max(0, 1 - "
            "alpha x wrong answers), accuracy; rubric: score / image / text = 100 x met / "
            "criteria; dependency: score = mean over questions after zeroing children of a 'no'."
        ),
    )
    """Protocol scores (``strict``/``relaxed``; ``easy``/``hard``/``all``; ``score``...)."""
    error: str | None = None


class ItemUsage(_Record):
    """One line of usage.jsonl: what grading an item cost.

    Kept apart from results so they are deterministic: a cached or replayed run
    has other costs but the same grades.
    """

    item_id: str
    usage: Usage = Field(default_factory=Usage)
    seconds: float = 0.0
    """Wall-clock seconds for the whole item."""
