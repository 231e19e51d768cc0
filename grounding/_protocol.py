"""Interfaces of the grounding loop: proposers propose elements, verifiers judge them.

Both are registered by name so a program file can say ``proposer: opencv.dice``.
CV proposers are synchronous underneath; the loop runs them in a worker thread.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np

from groundeval.judges._protocol import ImagePart, Judge
from groundeval.programs._model import GroundSpec
from groundeval.state import Element

RESERVED_PARAMS = frozenset({"image", "offline_verifier"})
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
_PROPOSERS: dict[str, ProposerFactory] = {}
_VERIFIERS: dict[str, VerifierFactory] = {}
_P = TypeVar("_P", bound=ProposerFactory)
_V = TypeVar("_V", bound=VerifierFactory)


def register_proposer(name: str) -> Callable[[_P], _P]:
    """Class decorator: make a proposer available to programs under ``name``."""

    def wrap(factory: _P) -> _P:
        _PROPOSERS[name] = factory
        return factory

    return wrap


def register_verifier(name: str) -> Callable[[_V], _V]:
    """Class decorator: make a verifier available to programs under ``name``."""

    def wrap(factory: _V) -> _V:
        _VERIFIERS[name] = factory
        return factory

    return wrap


def get_proposer(name: str) -> Proposer:
    """Build the proposer registered as ``name``."""
    _load_builtins()
    if name not in _PROPOSERS:
        raise KeyError(f"unknown proposer {name!r}; known: {', '.join(sorted(_PROPOSERS))}")
    return _PROPOSERS[name]()


def get_verifier(name: str) -> Verifier:
    """Build the verifier registered as ``name``."""
    _load_builtins()
    if name not in _VERIFIERS:
        raise KeyError(f"unknown verifier {name!r}; known: {', '.join(sorted(_VERIFIERS))}")
    return _VERIFIERS[name]()


def proposer_names() -> list[str]:
    """Every registered proposer name."""
    _load_builtins()
    return sorted(_PROPOSERS)


def verifier_names() -> list[str]:
    """Every registered verifier name."""
    _load_builtins()
    return sorted(_VERIFIERS)


def _load_builtins() -> None:
    """Import the modules whose decorators register the built-in proposers and verifiers."""
    from groundeval.grounding import proposers, verifiers  # noqa: F401
