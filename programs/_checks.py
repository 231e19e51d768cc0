"""Deterministic checks: a registry of named checks plus the safe expression language.

A question's ``check`` is either a string (a safe expression, see
:mod:`groundeval.programs._expressions`) or a :class:`NamedCheck` looked up here.
Every check reads element views of the grounding state and returns a score in
[0, 1] with a trace a person can read; it never calls a model.

Writing a named check (in a plugin file the user names with ``--plugins``)::

    from groundeval.programs import register_check

    @register_check("all_red")
    def all_red(elements, state, *, min_share=1.0):
        share = sum(e.colour == "red" for e in elements) / max(len(elements), 1)
        return (1.0 if share >= min_share else 0.0), f"{share:.0%} red"

A check that needs other questions' elements declares a keyword parameter
``states``; it receives a mapping from question id to element views.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from groundeval.programs._expr_static import parse_expression
from groundeval.programs._expressions import (
    StatesView,
    ViewCache,
    _compiled,
    evaluate_expression,
)
from groundeval.programs._model import NamedCheck
from groundeval.programs._plugins import load_plugin
from groundeval.programs._views import CheckError, ElementView
from groundeval.state import CheckTrace, Registry, StateFile, origin_of

CheckFn = Callable[..., tuple[float, str]]
ArgsValidator = Callable[[dict[str, Any]], None]
RESERVED_ARGS = frozenset({"states"})


@dataclass(frozen=True)
class RegisteredCheck:
    """A named check: the function, its optional static argument validator, its origin."""

    name: str
    fn: CheckFn
    validate_args: ArgsValidator | None
    wants_states: bool
    origin: str


def _adopt(name: str, fn: Any) -> None:
    """An entry point naming a bare function registers it as a check of that name."""
    register_check(name)(fn)


_REGISTRY: Registry[RegisteredCheck] = Registry(
    "check",
    group="groundeval.checks",
    builtins=[
        "groundeval.programs._check_library",
        "groundeval.programs._check_spatial",
        "groundeval.programs._check_physics",
    ],
    unwrap=lambda entry: entry.fn,
    adopt=_adopt,
)


def _registry() -> Registry[RegisteredCheck]:
    return _REGISTRY


def register_check(
    name: str, *, validate: ArgsValidator | None = None
) -> Callable[[CheckFn], CheckFn]:
    """Register ``fn(elements, state, **args) -> (score, trace)`` under ``name``.

    ``validate`` (optional) receives the argument dict and raises ``ValueError`` for
    bad arguments, so ``groundeval validate`` can catch them before a run. A second
    function under a taken name is refused, naming both.
    """
    _REGISTRY.check_name(name)

    def decorator(fn: CheckFn) -> CheckFn:
        params = inspect.signature(fn).parameters
        origin = origin_of(fn)
        entry = RegisteredCheck(name, fn, validate, "states" in params, origin)
        _REGISTRY.add(name, entry, origin=origin)
        return fn

    return decorator


def check_names() -> list[str]:
    """Names of all registered checks, sorted."""
    return _REGISTRY.names()


def _lookup(name: str) -> RegisteredCheck:
    registry = _registry()
    if name not in registry:
        raise CheckError(
            f"unknown check {name!r}; registered checks: {', '.join(sorted(registry))}"
        )
    return registry[name]


def _as_named(check: Any) -> NamedCheck:
    if isinstance(check, NamedCheck):
        return check
    if isinstance(check, Mapping):
        try:
            return NamedCheck.model_validate(dict(check))
        except ValueError as exc:
            raise CheckError(f"bad named check {dict(check)!r}: {exc}") from None
    raise CheckError(
        f"a check must be an expression string or a named check, got {type(check).__name__}"
    )


def _check_args(entry: RegisteredCheck, args: dict[str, Any]) -> None:
    reserved = RESERVED_ARGS & set(args)
    if reserved:
        raise CheckError(f"check {entry.name!r}: argument {sorted(reserved)[0]!r} is reserved")
    signature = inspect.signature(entry.fn)
    try:
        extra = {"states": None} if entry.wants_states else {}
        bound = signature.bind(None, None, **args, **extra)
    except TypeError as exc:
        accepted = [
            p.name
            for p in list(signature.parameters.values())[2:]
            if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in RESERVED_ARGS
        ]
        raise CheckError(
            f"check {entry.name!r}: {exc} (accepted arguments: {', '.join(accepted) or 'none'})"
        ) from None
    del bound
    if entry.validate_args is not None:
        try:
            entry.validate_args(dict(args))
        except (TypeError, ValueError) as exc:
            raise CheckError(f"check {entry.name!r}: {exc}") from None


def check_label(check: str | NamedCheck) -> str:
    """How a check is named in a trace: the expression, or ``name(arg=value, ...)``."""
    if isinstance(check, str):
        return check
    args = ", ".join(f"{k}={v!r}" for k, v in sorted(check.args.items()))
    return f"{check.name}({args})"


def validate_check(check: str | NamedCheck | Mapping[str, Any]) -> None:
    """Static validation used by ``groundeval validate``: nothing is evaluated.

    Raises:
        ValueError: (a :class:`CheckError`) naming the problem.
    """
    if isinstance(check, str):
        parse_expression(check)
        return
    named = _as_named(check)
    _check_args(_lookup(named.name), dict(named.args))


def run_check(
    check: str | NamedCheck | Mapping[str, Any],
    state: StateFile | None,
    *,
    extra_states: Mapping[str, StateFile] | None = None,
    views: ViewCache | None = None,
) -> CheckTrace:
    """Run one check over a grounding state (``None``: no elements, size unknown).

    ``extra_states`` maps other question ids to their states, for checks that
    compare groundings (``states["h1"]`` in an expression, ``question=`` in
    ``line_hits``).

    Raises:
        CheckError: the check cannot be evaluated; the runner records ``error``.
    """
    return _new_trace(check_fields(check, state, extra_states=extra_states, views=views))


def check_fields(
    check: str | NamedCheck | Mapping[str, Any],
    state: StateFile | None,
    *,
    extra_states: Mapping[str, StateFile] | None = None,
    views: ViewCache | None = None,
) -> dict[str, Any]:
    """:func:`run_check`'s fields (``check``, ``score``, ``trace``), already checked.

    A rescore compares them with the trace on record and keeps that record when
    they agree, rather than building and validating a new one for every check.

    Raises:
        CheckError: the check cannot be evaluated.
    """
    if views is None:
        views = ViewCache()  # a caller checking one item many times passes its own
    elements = views.of(state.elements) if state is not None else []
    if isinstance(check, str):
        if state is None:
            names: dict[str, Any] = dict(_NO_STATE, elements=elements)
        else:
            width, height = state.image_size_wh
            names = {
                "elements": elements,
                "image_w": width,
                "image_h": height,
                "state_status": state.status,
            }
        if _reads_states(check):  # most expressions never read other states
            names["states"] = _states_view(extra_states, views)
        score, trace = evaluate_expression(check, names)
        return {"check": check, "score": score, "trace": trace}
    named = _as_named(check)
    entry = _lookup(named.name)
    _checked_args(entry, named)
    args = dict(named.args)
    if entry.wants_states:
        args["states"] = _states_view(extra_states, views)
    try:
        result = entry.fn(elements, state, **args)
    except CheckError as exc:  # TooCloseToCall stays itself: the runner withholds it
        raise type(exc)(f"check {check_label(named)}: {exc}") from None
    except Exception as exc:
        raise CheckError(f"check {check_label(named)} raised {type(exc).__name__}: {exc}") from exc
    return {"check": check_label(named), **_result(named, result)}


_NO_STATE: dict[str, Any] = {"image_w": None, "image_h": None, "state_status": None}
_new_trace: Callable[[dict[str, Any]], CheckTrace] = (
    CheckTrace.__pydantic_validator__.validate_python
)
"""``CheckTrace(**fields)``, validated the same, without the keyword layer (once per check)."""
_READS_STATES: dict[str, bool] = {}
"""Expression text -> whether it reads ``states`` (bounded; the text is compiled once)."""


def _reads_states(text: str) -> bool:
    """Whether an expression reads ``states`` (its views are then made for it)."""
    found = _READS_STATES.get(text)
    if found is None:
        found = "states" in _compiled(text).params  # validates: a bad text raises here
        if len(_READS_STATES) >= 1024:
            _READS_STATES.clear()
        _READS_STATES[text] = found
    return found


def _states_view(extra_states: Mapping[str, StateFile] | None, views: ViewCache) -> StatesView:
    """``states`` for a check: other questions' elements, their views built on first read."""
    extra = {k: s.elements for k, s in (extra_states or {}).items()}
    return StatesView.of_elements(extra, views)


_ARGS_CHECKED: dict[int, tuple[NamedCheck, RegisteredCheck]] = {}
"""Named checks whose arguments passed :func:`_check_args` (by identity; bounded)."""


def _checked_args(entry: RegisteredCheck, named: NamedCheck) -> None:
    """:func:`_check_args` once per (named check, registered function), not once per item.

    A program's named check is the same object for every item it grades; its
    arguments are checked the first time and remembered while that object lives here.
    """
    seen = _ARGS_CHECKED.get(id(named))
    if seen is not None and seen[0] is named and seen[1] is entry:
        return
    _check_args(entry, dict(named.args))
    if len(_ARGS_CHECKED) >= 1024:
        _ARGS_CHECKED.clear()
    _ARGS_CHECKED[id(named)] = (named, entry)


def _result(named: NamedCheck, result: Any) -> dict[str, Any]:
    if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[1], str)):
        raise CheckError(
            f"check {named.name!r} must return (score, trace), got {type(result).__name__}"
        )
    score = result[0]
    if isinstance(score, bool):
        score = 1.0 if score else 0.0
    if not (isinstance(score, int | float) and math.isfinite(score) and 0.0 <= score <= 1.0):
        raise CheckError(f"check {named.name!r} returned score {score!r}; expected 0..1")
    return {"score": float(score), "trace": result[1]}


def load_check_module(path: Path) -> list[str]:
    """Load a plugin file (``--checks`` is the alias of ``--plugins``); see :func:`load_plugin`.

    Only call this for a file the user named: it runs that file's code. Loading
    the same file twice is a no-op.

    Returns:
        The check names the file added.
    """
    return load_plugin(path).get("check", [])


__all__ = [
    "CheckError",
    "ElementView",
    "RegisteredCheck",
    "check_label",
    "check_names",
    "load_check_module",
    "register_check",
    "run_check",
    "validate_check",
]
