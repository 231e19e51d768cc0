"""Specs every layer shares: how to ground a question and where overlays go.

They live here, at the bottom, so grounding (which reads a ``GroundSpec``), the
store (which hands out a ``GroundingTarget``) and the program model (which holds
both) import them without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Helper = Literal["boxes", "boundary", "line", "points", "text"]
"""Kinds of help line a question can ask for."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _names_or_opinions(schema: dict[str, Any]) -> None:
    """The JSON Schema takes a bare name too, as the model does (``agree_with: [yolo.dice]``)."""
    schema["items"] = {"anyOf": [{"type": "string", "minLength": 1}, schema["items"]]}


class SecondOpinion(_Strict):
    """An independent proposer a consensus verifier compares the main proposal with."""

    proposer: str = Field(min_length=1)
    """Registered proposer name (``yolo.dice``)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Its own parameters (the spec's ``params`` belong to the main proposer)."""


class GroundSpec(_Strict):
    """How to ground a question: which help lines to ask for and how to verify them."""

    helper: Helper
    """Kind of help line: boxes, boundary (polygon), line (ray), points or text (OCR boxes)."""
    target: str = ""
    """What the help lines mark, in words ("each die"): sent to a judge proposer."""
    fields: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """Typed fields per element, each a JSON Schema (``{"type": "integer", "minimum": 1}``)."""
    proposer: str = "judge"
    """Registered proposer name (``opencv.dice``, ``ocr``, ``judge``)."""
    params: dict[str, Any] = Field(default_factory=dict)
    """Parameters passed to the proposer; recorded in the state file."""
    budget: int = Field(default=3, ge=1, le=20)
    """Maximum propose-verify rounds before the question is withheld."""
    verifier: str = "offline"
    """Verifier name: ``offline`` (geometric sanity) or ``judge``."""
    min_count: int | None = Field(default=None, ge=0)
    """Fewest elements the verifier accepts (``None``: no lower bound beyond zero)."""
    max_count: int | None = Field(default=None, ge=0)
    """Most elements the verifier accepts (``None``: unbounded)."""
    agree_with: list[SecondOpinion] = Field(
        default_factory=list, json_schema_extra=_names_or_opinions
    )
    """Independent proposers whose elements must agree (``verifier: consensus``)."""

    @field_validator("agree_with", mode="before")
    @classmethod
    def _opinions(cls, value: Any) -> Any:
        """A bare name (``yolo.dice``) is short for ``{proposer: yolo.dice}``."""
        if isinstance(value, list):
            return [{"proposer": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _consensus(self) -> GroundSpec:
        if self.verifier == "consensus" and not self.agree_with:
            raise ValueError(
                "ground.verifier 'consensus' needs 'agree_with': the proposers that must "
                "agree with the main one, e.g. agree_with: [yolo.dice]"
            )
        if self.agree_with and self.verifier != "consensus":
            raise ValueError(
                f"ground.agree_with is only read by verifier 'consensus' (got verifier "
                f"{self.verifier!r}); set verifier: consensus or drop agree_with"
            )
        return self


@dataclass
class GroundingTarget:
    """Where the loop writes overlays: an absolute folder and its path inside the run."""

    folder: Path
    relative: str


__all__ = ["GroundSpec", "GroundingTarget", "Helper", "SecondOpinion"]
