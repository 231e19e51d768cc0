"""The scoring-protocol interface: pure functions over stored decisions.

Scoring never calls a judge, so a run can be rescored from its files alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from groundeval.programs._model import Program
from groundeval.programs._protocols import PROTOCOLS
from groundeval.state import Decision, ItemResult

ItemStatus = Literal["scored", "withheld", "error", "pending"]
"""``error``: a question went unanswered; ``withheld``: grounding could not be trusted;
``pending``: a question awaits a judge answer after an override. Only ``scored``
items have scores; the others are left out of means and counted in every cell."""


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
        """The protocol's part of summary.json for a list of item results.

        A built-in protocol's section is checked against its model in
        ``groundeval.state.PROTOCOL_SUMMARIES`` when summary.json is written (and
        published in ``summary.schema.json``); a plugin's section is free-form.
        """
        ...

    def summary_rows(self, results: list[ItemResult]) -> list[dict[str, Any]]:
        """Rows of summary.csv (flat, one per group)."""
        ...


_PROTOCOLS = PROTOCOLS
_F = TypeVar("_F", bound=Callable[[], ScoringProtocol])


def register_protocol(name: str) -> Callable[[_F], _F]:
    """Make a scoring protocol available to programs under ``name`` (``scoring: name``).

    The decorator sets the class's ``name``; a taken name is refused naming both origins.
    """
    return PROTOCOLS.register(name)


def get_protocol(name: str) -> ScoringProtocol:
    """The scoring protocol registered as ``name`` (``KeyError`` naming the known ones)."""
    protocol: ScoringProtocol = PROTOCOLS.lookup(name)()
    return protocol
