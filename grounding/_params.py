"""Typed parameters of proposers and verifiers: one pydantic model each, known before a run.

A proposer declares its parameters once, as ``defaults`` (name -> default value);
the model is derived from them: the type of each default is the parameter's type
(an ``int`` where a ``float`` is declared is fine, ``bool`` is strict, a list of
ints is ``list[int]``, ``None`` accepts anything). Where a default cannot say the
type (``None``) or a bound is part of the meaning, ``param_types`` names it
(``{"weights": str | None, "threads": PositiveInt | None}``); a proposer that needs
more declares a whole pydantic model as ``Params``. A verifier with settings names
the ``ground.params`` key holding them (``params_key``) and declares them the same
way, or as dataclass fields.

``validate`` and the verify loop both check through :func:`param_errors`, so a
misspelt or ill-typed parameter reads the same before a run and in an ``error``
state: ``min_radius_px: expected int, got str 'twelve'``.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Union

import annotated_types
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

PARAMS_CONFIG = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
"""Derived models refuse unknown names and never coerce ('12' is not an int; 12 is a float)."""

_CONSTRAINTS: dict[type, tuple[str, str]] = {
    annotated_types.Ge: (">=", "ge"),
    annotated_types.Gt: (">", "gt"),
    annotated_types.Le: ("<=", "le"),
    annotated_types.Lt: ("<", "lt"),
    annotated_types.MinLen: ("min length", "min_length"),
    annotated_types.MaxLen: ("max length", "max_length"),
}
"""Constraint classes a type may carry -> how they read and the attribute holding the bound."""
_cache: dict[Any, tuple[tuple[Any, Any], type[BaseModel]]] = {}
"""Owner -> (its ``defaults`` and ``param_types`` objects, the model built from them)."""


class ParamsDeclarationError(TypeError):
    """A proposer or verifier declares its parameters in a way no model can be built from."""


@dataclass
class ParamErrors:
    """What is wrong with a set of parameters: unknown names and ill-typed values."""

    unknown: list[str] = field(default_factory=list)
    """Names the model does not declare, sorted."""
    known: list[str] = field(default_factory=list)
    """Every declared name, sorted (for the message about unknown ones)."""
    bad: dict[str, str] = field(default_factory=dict)
    """Name -> ``expected int, got str 'twelve'``."""

    def __bool__(self) -> bool:
        return bool(self.unknown or self.bad)


def inferred_type(default: Any) -> Any:
    """The parameter type a default value stands for (``None``: anything).

    >>> inferred_type(3), inferred_type(0.5), inferred_type([1, 2]), inferred_type(None)
    (<class 'int'>, <class 'float'>, list[int], typing.Any)
    """
    if default is None:
        return Any
    if isinstance(default, bool | int | float | str):
        return type(default)
    if isinstance(default, list | tuple):
        kinds = {inferred_type(v) for v in default}
        if kinds <= {int, float} and float in kinds:
            return list[float]
        return types.GenericAlias(list, (kinds.pop(),)) if len(kinds) == 1 else list[Any]
    if isinstance(default, Mapping):
        return dict[str, Any]
    return Any


def _declared_defaults(owner: Any) -> dict[str, Any] | None:
    """Name -> default of what ``owner`` declares (``defaults`` or dataclass fields)."""
    defaults = getattr(owner, "defaults", None)
    if isinstance(defaults, Mapping):
        return dict(defaults)
    if getattr(owner, "params_key", None) and dataclasses.is_dataclass(owner):
        return {
            f.name: f.default
            for f in dataclasses.fields(owner)
            if f.init and f.name != "name" and f.default is not dataclasses.MISSING
        }
    return None


def _field_types(owner: Any, defaults: dict[str, Any]) -> dict[str, Any]:
    """Declared types: ``param_types`` first, then dataclass annotations, then the defaults."""
    hints: dict[str, Any] = {}
    if dataclasses.is_dataclass(owner) and isinstance(owner, type):
        try:
            hints = typing.get_type_hints(owner, include_extras=True)
        except (NameError, TypeError):
            hints = {}
    declared = getattr(owner, "param_types", None) or {}
    if not isinstance(declared, Mapping):
        raise ParamsDeclarationError("param_types must be a dict of name -> type")
    own = vars(owner).get("param_types") if isinstance(owner, type) else declared
    stray = sorted(set(own or {}) - set(defaults))  # inherited extras are the parent's business
    if stray:
        raise ParamsDeclarationError(
            f"param_types names {stray}, which have no default (add them to the defaults)"
        )
    return {
        name: declared.get(name, hints.get(name, inferred_type(default)))
        for name, default in defaults.items()
    }


def declared_params(owner: Any) -> type[BaseModel] | None:
    """The pydantic model of the parameters ``owner`` declares; ``None`` when it declares none.

    ``owner`` is a proposer or verifier class (or any object with ``Params``,
    ``defaults`` or, for a verifier with ``params_key``, dataclass fields).

    Raises:
        ParamsDeclarationError: the declaration cannot become a model.
    """
    explicit = getattr(owner, "Params", None)
    if isinstance(explicit, type) and issubclass(explicit, BaseModel):
        return explicit
    declared = (getattr(owner, "defaults", None), getattr(owner, "param_types", None))
    cached = _cache.get(owner)
    if cached is not None and all(a is b for a, b in zip(cached[0], declared, strict=True)):
        return cached[1]  # the same declaration objects: declared once, read many times
    defaults = _declared_defaults(owner)
    if defaults is None:
        return None
    kinds = _field_types(owner, defaults)
    who = getattr(owner, "__name__", type(owner).__name__)
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{who}Params",
            __config__=PARAMS_CONFIG,
            **{name: (kinds[name], default) for name, default in defaults.items()},
        )
    except Exception as exc:  # a plugin's declaration: say which, never crash the caller
        raise ParamsDeclarationError(f"{type(exc).__name__}: {exc}") from exc
    _cache[owner] = (declared, model)
    result: type[BaseModel] = model
    return result


def _plain(value: Any) -> Any:
    """Tuples as lists, recursively (program files have lists; Python callers may pass tuples)."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def param_errors(model: type[BaseModel], values: Mapping[str, Any]) -> ParamErrors:
    """Unknown names and ill-typed values of ``values`` under ``model`` (empty when all is well)."""
    known = sorted(model.model_fields)
    errors = ParamErrors(unknown=sorted(set(values) - set(known)), known=known)
    given = {k: _plain(v) for k, v in values.items() if k in model.model_fields}
    try:
        model.model_validate(given)
    except ValidationError as exc:
        for err in exc.errors():
            name = str(err["loc"][0]) if err["loc"] else ""
            if name not in model.model_fields or name in errors.bad:
                continue
            expected = type_text(model.model_fields[name].annotation, model, name)
            if err["type"] == "missing":
                errors.bad[name] = f"expected {expected}, got nothing (it is required)"
            else:
                errors.bad[name] = f"expected {expected}, got {got_text(values[name])}"
    except Exception as exc:  # a plugin's own validator raising something else: still a message
        errors.bad["(all)"] = f"the parameter model raised {type(exc).__name__}: {exc}"
    return errors


def got_text(value: Any) -> str:
    """A value with its type, short: ``str 'twelve'``, ``list [1, 'a']``."""
    kind = "None" if value is None else type(value).__name__
    text = repr(value)
    return kind if value is None else f"{kind} {text if len(text) <= 60 else text[:57] + '...'}"


def type_text(annotation: Any, model: type[BaseModel] | None = None, name: str = "") -> str:
    """A parameter type as a person reads it: ``int``, ``float >= 0``, ``list[int] | None``.

    With ``model`` and ``name``, the field's own constraints (``Field(ge=0)``) are added.
    """
    text = _type_text(annotation)
    if model is not None and name in model.model_fields:
        bounds = _bounds(model.model_fields[name].metadata)
        text = f"{text} {bounds}" if bounds else text
    return text


def _bounds(metadata: list[Any]) -> str:
    parts = []
    for item in metadata:
        for kind, (sign, attribute) in _CONSTRAINTS.items():
            if isinstance(item, kind):
                parts.append(f"{sign} {getattr(item, attribute)}")
    return ", ".join(parts)


def _type_text(annotation: Any) -> str:
    if annotation is Any:
        return "any"
    if annotation is None or annotation is type(None):
        return "None"
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Annotated:
        bounds = _bounds(list(args[1:]))
        return f"{_type_text(args[0])} {bounds}" if bounds else _type_text(args[0])
    if origin in (Union, types.UnionType):
        return " | ".join(_type_text(a) for a in args)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in args)
    if origin in (list, tuple, set, frozenset, dict):
        inner = [a for a in args if a is not Ellipsis]
        if not inner or all(a is Any for a in inner) or (origin is dict and inner[-1] is Any):
            return str(origin.__name__)
        return f"{origin.__name__}[{', '.join(_type_text(a) for a in inner)}]"
    return str(getattr(annotation, "__name__", None) or annotation)


def describe_params(model: type[BaseModel] | None) -> dict[str, dict[str, Any]] | None:
    """Name -> ``{"type": ..., "default": ...}`` of every parameter (for catalogues)."""
    if model is None:
        return None
    described: dict[str, dict[str, Any]] = {}
    for name, info in sorted(model.model_fields.items()):
        entry: dict[str, Any] = {"type": type_text(info.annotation, model, name)}
        if info.is_required():
            entry["required"] = True
        else:
            entry["default"] = info.get_default(call_default_factory=True)
        described[name] = entry
    return described


__all__ = [
    "PARAMS_CONFIG",
    "ParamErrors",
    "ParamsDeclarationError",
    "declared_params",
    "describe_params",
    "got_text",
    "inferred_type",
    "param_errors",
    "type_text",
]
