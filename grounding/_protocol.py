"""Interfaces of the grounding loop: proposers propose elements, verifiers judge them.

Both are registered by name so a program file can say ``proposer: opencv.dice``.
CV proposers are synchronous underneath; the loop runs them in a worker thread.
Each declares its parameters (see :mod:`groundeval.grounding._params`), so
:func:`param_problems` tells a misspelt or ill-typed one before anything runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
from pydantic import BaseModel, NonNegativeInt

from groundeval.grounding._params import (
    PARAMS_CONFIG,
    ParamsDeclarationError,
    declared_params,
    got_text,
    param_errors,
)
from groundeval.judges import ImagePart, Judge
from groundeval.state import Element, GroundSpec, Registry

RESERVED_PARAMS = frozenset({"image", "offline_verifier", "consensus"})
"""``ground.params`` keys read by the runner and the verifier, not by proposers.

A registered verifier's own ``params_key`` is reserved too (:func:`reserved_params`).
"""


class SpecParams(BaseModel):
    """``ground.params`` keys the runner reads itself, whatever the proposer."""

    model_config = PARAMS_CONFIG

    image: NonNegativeInt = 0
    """Which of the item's images the grounding reads (0: the first)."""


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
    """Why the proposal cannot be trusted as a whole (clutter, weak support): withhold, with
    no retry (a retry with other parameters cannot answer a doubt about the evidence)."""
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
    looked: bool = False
    """Whether the verifier looked at the image at each mark (a judge): its rejection then
    says no object is there. A rejection by code says the evidence is unusable, so the loop
    keeps the place open until an element covers it."""


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
    "proposer",
    group="groundeval.proposers",
    builtins=["groundeval.grounding.proposers"],
    params=declared_params,
)
"""Proposer classes (factories) by name: built-ins, entry points, loaded plugins."""
VERIFIERS: Registry[VerifierFactory] = Registry(
    "verifier",
    group="groundeval.verifiers",
    builtins=["groundeval.grounding.verifiers"],
    params=declared_params,
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


def verifier_settings_keys() -> dict[str, str]:
    """``ground.params`` key -> name of the verifier whose settings it holds."""
    keys: dict[str, str] = {}
    for name in _VERIFIERS.names():
        key = getattr(_VERIFIERS.lookup(name), "params_key", None)
        if isinstance(key, str) and key:
            keys.setdefault(key, name)
    return keys


def reserved_params() -> frozenset[str]:
    """``ground.params`` keys that are not the proposer's: the runner's and verifier settings."""
    return RESERVED_PARAMS | frozenset(verifier_settings_keys())


def proposer_param_problems(name: str, values: dict[str, Any]) -> list[str]:
    """Unknown or ill-typed parameters of the registered proposer ``name``.

    ``values`` are the proposer's own (leave out :func:`reserved_params` first).
    Each message starts ``proposer NAME:``; an unknown proposer or one that
    declares no parameters gives none (the caller reports unknown names).
    """
    if name not in _PROPOSERS:
        return []
    return declared_param_problems(_PROPOSERS.lookup(name), name, values)


def declared_param_problems(owner: Any, name: str, values: dict[str, Any]) -> list[str]:
    """Unknown or ill-typed ``values`` for what ``owner`` (a proposer class) declares."""
    try:
        model = declared_params(owner)
    except ParamsDeclarationError as exc:
        return [f"proposer {name} declares its parameters wrongly: {exc}"]
    if model is None:
        return []
    errors = param_errors(model, values)
    found = [f"unknown params {errors.unknown}; known: {errors.known}"] if errors.unknown else []
    found += [f"{key}: {text}" for key, text in errors.bad.items()]
    return [f"proposer {name}: {text}" for text in found]


def _settings_problems(key: str, verifier: str, values: Any) -> list[str]:
    """Unknown or ill-typed settings under ``ground.params[key]`` of ``verifier``."""
    where = f"params.{key}"
    if not isinstance(values, dict):
        return [f"{where}: expected dict of settings, got {got_text(values)}"]
    try:
        model = _VERIFIERS.params_model(verifier)
    except ParamsDeclarationError as exc:
        return [f"verifier {verifier} declares its settings wrongly: {exc}"]
    if model is None:
        return []
    errors = param_errors(model, values)
    found = (
        [f"{where}: unknown setting(s) {errors.unknown}; known: {errors.known}"]
        if errors.unknown
        else []
    )
    return found + [f"{where}.{name}: {text}" for name, text in errors.bad.items()]


def param_problems(spec: GroundSpec) -> list[tuple[str, str]]:
    """Every unknown or ill-typed parameter of a spec, as ``(place, message)`` pairs.

    Places are relative to the spec: ``params``, ``params.offline_verifier``,
    ``agree_with[0].params``. ``validate`` reports each at its place; the loop
    turns them into an ``error`` state with the same words.
    """
    reserved = reserved_params()
    problems: list[tuple[str, str]] = []
    own = {k: v for k, v in spec.params.items() if k not in reserved}
    problems += [("params", m) for m in proposer_param_problems(spec.proposer, own)]
    runner = param_errors(SpecParams, {k: v for k, v in spec.params.items() if k == "image"})
    problems += [(f"params.{k}", f"params.{k}: {text}") for k, text in runner.bad.items()]
    for key, verifier in verifier_settings_keys().items():
        if key in spec.params:
            found = _settings_problems(key, verifier, spec.params[key])
            problems += [(f"params.{key}", m) for m in found]
    for k, opinion in enumerate(spec.agree_with):
        theirs = {n: v for n, v in opinion.params.items() if n not in reserved}
        place = f"agree_with[{k}].params"
        problems += [(place, m) for m in proposer_param_problems(opinion.proposer, theirs)]
    return problems
