"""One registry for everything a program or a command line may name.

Proposers, verifiers, checks, scoring protocols, judge backends and benchmarks are
each a :class:`Registry`: a decorator registers an object under a name (set once,
by the decorator), a second object under a taken name is refused with both
origins named, and installed packages add theirs through entry points
(``[project.entry-points."groundeval.proposers"]``), discovered on first use.

This module imports nothing from groundeval, so every layer can hold a registry.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import re
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel

T = TypeVar("T")
O = TypeVar("O")  # noqa: E741  (the decorated object)

NAME_PATTERN = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$")
"""Registered names: letters, digits, ``_``, ``.`` and ``-`` (no ``:``, no spaces)."""


class RegistryError(ValueError):
    """A registration was refused: a bad name, a taken name, or a name set twice."""


class UnknownNameError(KeyError):
    """A name no registry entry has; the message lists the known ones."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def origin_of(obj: Any) -> str:
    """Where an object was defined, as ``module:qualname`` (what duplicate errors name)."""
    target = inspect.unwrap(obj) if callable(obj) else obj
    module = getattr(target, "__module__", None) or type(target).__module__
    qualname = getattr(target, "__qualname__", None) or type(target).__qualname__
    return f"{module}:{qualname}"


def _where(origin: str) -> str:
    """``module:qualname``, plus the file it came from when the module has one."""
    module = sys.modules.get(origin.partition(":")[0])
    path = getattr(module, "__file__", None)
    return f"{origin} ({path})" if path else origin


def first_doc_line(obj: Any) -> str:
    """The first line of an object's docstring ('' when it has none)."""
    return (inspect.getdoc(obj) or "").strip().split("\n", 1)[0]


class Registry(MutableMapping[str, T], Generic[T]):
    """Named objects of one kind, with built-ins and entry points loaded on first use.

    Args:
        kind: what one entry is, in messages (``proposer``, ``check``).
        group: entry-point group of installed plugins (``groundeval.proposers``).
        builtins: modules whose import registers the built-in entries.
        unwrap: the user's object behind an entry (for origins and docs), when the
            registry stores a wrapper around it.
        adopt: registers an object an entry point names that did not register itself
            (default: register it as it is under the entry point's name).
        pattern: what a name may look like.
        params: the pydantic model of the parameters an entry declares (``None``:
            it declares none), so ``validate`` and the authoring catalogue know
            every parameter's type.
    """

    _all: ClassVar[dict[str, Registry[Any]]] = {}

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        builtins: Sequence[str] = (),
        unwrap: Callable[[T], Any] | None = None,
        adopt: Callable[[str, Any], None] | None = None,
        pattern: re.Pattern[str] = NAME_PATTERN,
        params: Callable[[Any], type[BaseModel] | None] | None = None,
    ) -> None:
        self.kind = kind
        self.group = group
        self.builtins = tuple(builtins)
        self.pattern = pattern
        self._unwrap = unwrap or (lambda value: value)
        self._adopt = adopt
        self._params = params
        self._entries: dict[str, T] = {}
        self._origins: dict[str, str] = {}
        self._builtins_loaded = False
        self._loaded = False
        Registry._all[kind] = self

    # registering ---------------------------------------------------------------
    def register(self, name: str, *, origin: str | None = None) -> Callable[[O], O]:
        """Decorator: register the object under ``name``; a class gets ``name`` set to it.

        ``origin`` overrides where the object is said to come from (default: its
        ``module:qualname``; an instance has none of its own).

        Raises:
            RegistryError: the name is malformed or taken by another object, or a
                class sets a different ``name`` itself.
        """
        self.check_name(name)

        def decorator(obj: O) -> O:
            if isinstance(obj, type):
                own = obj.__dict__.get("name")
                if isinstance(own, str) and own != name:
                    raise RegistryError(
                        f"{self.kind} {name!r}: {origin_of(obj)} sets name = {own!r}; the "
                        f"registered name is set by the decorator, drop the 'name =' line"
                    )
            self.add(name, obj, origin=origin)  # type: ignore[arg-type]
            if isinstance(obj, type):
                obj.name = name  # type: ignore[attr-defined]
            return obj

        return decorator

    def check_name(self, name: str) -> None:
        """Refuse a name that does not match :attr:`pattern`."""
        if not isinstance(name, str) or not self.pattern.fullmatch(name):
            raise RegistryError(
                f"{self.kind} name {name!r} must be letters, digits, '_', '.' or '-' "
                "(and not start with '.' or '-')"
            )

    def add(self, name: str, value: T, *, origin: str | None = None) -> T:
        """Register ``value`` under ``name`` (the built-ins load first).

        Registering the same object again, or the same definition re-executed (a
        reloaded module), replaces it; anything else under a taken name is refused.
        """
        self.check_name(name)
        self._ensure_builtins()
        origin = origin or origin_of(self._unwrap(value))
        if name in self._entries:
            old = self._entries[name]
            same = self._unwrap(old) is self._unwrap(value)
            if not same and self._origins[name] != origin:
                raise RegistryError(
                    f"{self.kind} {name!r} is already registered by "
                    f"{_where(self._origins[name])}; {_where(origin)} cannot register it "
                    "too (rename one of them)"
                )
        self._entries[name] = value
        self._origins[name] = origin
        return value

    # reading -------------------------------------------------------------------
    def lookup(self, name: str) -> T:
        """The entry registered as ``name``.

        Raises:
            UnknownNameError: (a ``KeyError``) naming the known entries.
        """
        self._ensure_loaded()
        if name not in self._entries:
            known = ", ".join(sorted(self._entries)) or "none"
            raise UnknownNameError(
                f"unknown {self.kind} {name!r}; known: {known} (a plugin's names appear "
                "once it is loaded: --plugins FILE or an installed entry point)"
            )
        return self._entries[name]

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        self._ensure_loaded()
        return sorted(self._entries)

    def origin(self, name: str) -> str:
        """``module:qualname`` of the object registered as ``name``."""
        self.lookup(name)
        return self._origins[name]

    def params_model(self, name: str) -> type[BaseModel] | None:
        """The model of the parameters the entry ``name`` declares (``None``: none declared).

        Raises:
            UnknownNameError: no entry is registered as ``name``.
            TypeError: the entry declares its parameters in a way no model can be built from.
        """
        entry = self._unwrap(self.lookup(name))
        return self._params(entry) if self._params is not None else None

    def describe(self) -> list[dict[str, str]]:
        """Name, first docstring line and origin of every entry (for catalogues)."""
        return [
            {
                "name": name,
                "about": first_doc_line(self._unwrap(self._entries[name])),
                "origin": self._origins[name],
            }
            for name in self.names()
        ]

    def from_module(self, module: str) -> list[str]:
        """Names whose objects were defined in ``module`` (what a plugin file added)."""
        return sorted(n for n, o in self._origins.items() if o.partition(":")[0] == module)

    @classmethod
    def registries(cls) -> dict[str, Registry[Any]]:
        """Every registry created so far, by kind."""
        return dict(cls._all)

    # mapping -------------------------------------------------------------------
    def __getitem__(self, name: str) -> T:
        self._ensure_loaded()
        return self._entries[name]

    def __setitem__(self, name: str, value: T) -> None:
        self.add(name, value)

    def __delitem__(self, name: str) -> None:
        del self._entries[name]
        del self._origins[name]

    def __iter__(self) -> Iterator[str]:
        self._ensure_loaded()
        return iter(list(self._entries))

    def __len__(self) -> int:
        self._ensure_loaded()
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        self._ensure_loaded()
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {len(self._entries)} entries)"

    # loading -------------------------------------------------------------------
    def _ensure_builtins(self) -> None:
        """Import the modules that register the built-ins, once (before any registration)."""
        if self._builtins_loaded:
            return
        self._builtins_loaded = True  # set first: those imports register through this registry
        for module in self.builtins:
            importlib.import_module(module)

    def _ensure_loaded(self) -> None:
        """Built-ins, then every installed entry point of :attr:`group`, once, on first read.

        Entry points wait for a read, not a registration: a plugin package imports
        groundeval, which may still be importing when its built-ins register.
        """
        self._ensure_builtins()
        if self._loaded:
            return
        self._loaded = True
        if self.group:
            for point in importlib.metadata.entry_points(group=self.group):
                self._load_entry_point(point)

    def _load_entry_point(self, point: importlib.metadata.EntryPoint) -> None:
        dist = getattr(point.dist, "name", None) or "an installed package"
        where = f"entry point {point.name!r} = {point.value!r} of {dist} ({self.group})"
        try:
            obj = point.load()
        except Exception as exc:
            raise RegistryError(
                f"{where} failed to import: {type(exc).__name__}: {exc} (fix or uninstall {dist})"
            ) from exc
        if inspect.ismodule(obj) or any(
            self._unwrap(v) is obj or v is obj for v in self._entries.values()
        ):
            return  # a module (or object) that registered itself on import
        try:
            if self._adopt is not None:
                self._adopt(point.name, obj)
            else:
                self.register(point.name, origin=point.value)(obj)
        except RegistryError as exc:
            raise RegistryError(f"{where}: {exc}") from exc


__all__ = [
    "NAME_PATTERN",
    "Registry",
    "RegistryError",
    "UnknownNameError",
    "first_doc_line",
    "origin_of",
]
