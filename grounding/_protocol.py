"""Interfaces of the grounding loop: proposers propose elements, verifiers judge them.

Both are registered by name so a program file can say ``proposer: opencv.dice``.
CV proposers are synchronous underneath; the loop runs them in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from groundeval.judges import ImagePart, Judge
from groundeval.state import Element, GroundSpec, Registry

RESERVED_PARAMS = frozenset({"image", "offline_verifier", "consensus"})
"""``ground.params`` keys read by the runner and the verifier, not by proposers."""


@dataclass
class Feedback:
    """What the last round left to do: kept elements, rejected ones, what is missing."""

    accepted: list[Element] = field(default_factory=list)
    rejected: list[Element] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    round_index: int = 1


@dataclass
class ProposeRequest:
    """One proposer call."""

    image_bgr: np.ndarray
    image: ImagePart
    spec: GroundSpec
    ask: str
    """The question the grounding serves, in words."""
    feedback: Feedback
    judge: Judge | None = None
    item_id: str = ""
    question_id: str = ""


@dataclass
class Proposal:
    """Elements a proposer returned (ids may be provisional), with raw text and parameters."""

    elements: list[Element]
    raw: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    unexplained: list[Element] = field(default_factory=list)
    """Object-like regions no element covers (boxes, ``reason`` says why): the loop withholds."""
    problems: list[str] = field(default_factory=list)
    """Why the proposal cannot be trusted as a whole (clutter, weak support): withhold."""
    dropped: list[str] = field(default_factory=list)
    """Proposals that were unusable (NaN, negative or out-of-image coordinates), one reason each."""


@dataclass
class VerifyRequest:
    """One verifier call over the numbered overlay."""

    image_bgr: np.ndarray
    overlay_png: bytes
    spec: GroundSpec
    ask: str
    elements: list[Element]
    judge: Judge | None = None
    item_id: str = ""
    question_id: str = ""
    others: dict[str, list[Element]] = field(default_factory=dict)
    """Independent proposals of the same spec (``agree_with``), by proposer name."""


@dataclass
class Verification:
    """A verdict per element (in ``elements``) and what is missing."""

    elements: list[Element]
    missing: list[str] = field(default_factory=list)
    raw: str = ""


@runtime_checkable
class Proposer(Protocol):
    """Proposes help lines for one grounding spec."""

    @property
    def name(self) -> str:
        """Registered name, recorded in the state file."""
        ...

    async def propose(self, request: ProposeRequest) -> Proposal:
        """Return elements for the spec, taking the feedback into account."""
        ...


@runtime_checkable
class Verifier(Protocol):
    """Gives every proposed element a verdict and lists what is missing."""

    @property
    def name(self) -> str:
        """Registered name, recorded in each round."""
        ...

    async def verify(self, request: VerifyRequest) -> Verification:
        """Return the elements with verdicts set, plus what is missing."""
        ...


ProposerFactory = Callable[[], Proposer]
VerifierFactory = Callable[[], Verifier]
PROPOSERS: Registry[ProposerFactory] = Registry(
    "proposer", group="groundeval.proposers", builtins=["groundeval.grounding.proposers"]
)
"""Proposer classes (factories) by name: built-ins, entry points, loaded plugins."""
VERIFIERS: Registry[VerifierFactory] = Registry(
    "verifier", group="groundeval.verifiers", builtins=["groundeval.grounding.verifiers"]
)
"""Verifier classes (factories) by name: built-ins, entry points, loaded plugins."""
_PROPOSERS, _VERIFIERS = PROPOSERS, VERIFIERS  # the names older code imported
_P = TypeVar("_P", bound=ProposerFactory)
_V = TypeVar("_V", bound=VerifierFactory)


def register_proposer(name: str) -> Callable[[_P], _P]:
    """Class decorator: make a proposer available to programs under ``name``.

    The decorator sets the class's ``name``; a different ``name =`` in the class,
    or a second proposer under the same name, is refused naming both origins.
    """
    return _PROPOSERS.register(name)


def register_verifier(name: str) -> Callable[[_V], _V]:
    """Class decorator: make a verifier available to programs under ``name``."""
    return _VERIFIERS.register(name)


def get_proposer(name: str) -> Proposer:
    """Build the proposer registered as ``name`` (``KeyError`` naming the known ones)."""
    return _PROPOSERS.lookup(name)()


def get_verifier(name: str) -> Verifier:
    """Build the verifier registered as ``name`` (``KeyError`` naming the known ones)."""
    return _VERIFIERS.lookup(name)()


def proposer_names() -> list[str]:
    """Every registered proposer name (built-ins, entry points, loaded plugins)."""
    return _PROPOSERS.names()


def verifier_names() -> list[str]:
    """Every registered verifier name (built-ins, entry points, loaded plugins)."""
    return _VERIFIERS.names()
