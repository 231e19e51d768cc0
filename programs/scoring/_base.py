"""The scoring-protocol interface: pure functions over stored decisions.

Scoring never calls a judge, so a run can be rescored from its files alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from groundeval.programs._model import Program
from groundeval.state import Decision, ItemResult

ItemStatus = Literal["scored", "withheld", "error"]


@dataclass(frozen=True)
class ItemScore:
    """An item's status and its protocol scores (None where undefined)."""

    status: ItemStatus
    scores: dict[str, float | None]


class ScoringProtocol(Protocol):
    """Turns decisions into item scores, and item results into run summaries."""

    name: str

    def score_item(
        self, program: Program, decisions: list[Decision], gate_failed: str | None
    ) -> ItemScore:
        """Score one item from its decisions."""
        ...

    def summarize(self, results: list[ItemResult]) -> dict[str, Any]:
        """The protocol's part of summary.json for a list of item results."""
        ...

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """Rows of summary.csv (flat, one per group)."""
        ...


_PROTOCOLS: dict[str, Callable[[], ScoringProtocol]] = {}


def register_protocol(
    name: str,
) -> Callable[[Callable[[], ScoringProtocol]], Callable[[], ScoringProtocol]]:
    """Make a scoring protocol available to programs under ``name``."""

    def wrap(factory: Callable[[], ScoringProtocol]) -> Callable[[], ScoringProtocol]:
        _PROTOCOLS[name] = factory
        return factory

    return wrap


def get_protocol(name: str) -> ScoringProtocol:
    """The scoring protocol registered as ``name``."""
    if name not in _PROTOCOLS:
        raise KeyError(f"unknown scoring protocol {name!r}; known: {', '.join(sorted(_PROTOCOLS))}")
    return _PROTOCOLS[name]()
