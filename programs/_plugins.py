"""Plugin files: a Python module the user names with ``--plugins FILE`` (alias ``--checks``).

A plugin registers whatever it defines through the usual decorators
(``register_proposer``, ``register_verifier``, ``register_check``,
``register_protocol``, ``register_judge``). Each file is imported once per
process, under a module name derived from its absolute path, so Ray workers
that load the same path unpickle the same classes and functions.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import sys
from pathlib import Path

from groundeval.state import Registry, RegistryError

_LOADED: dict[Path, dict[str, list[str]]] = {}


def plugin_module_name(path: Path) -> str:
    """The module name a plugin file is imported under (stable for one absolute path)."""
    resolved = Path(path).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:10]
    stem = re.sub(r"\W", "_", resolved.stem)
    return f"groundeval_plugin_{stem}_{digest}"


def load_plugin(path: str | Path) -> dict[str, list[str]]:
    """Import a user's plugin file so its decorators register; a second call is a no-op.

    Only call this for a file the user named: it runs that file's code.

    Returns:
        What the file registered, by kind (``{"proposer": ["my.stars"], "check": [...]}``).

    Raises:
        ValueError: the file is missing, not ``.py``, fails to import, or registers
            a name that is taken (the message names the file and both origins).
    """
    resolved = Path(path).expanduser().resolve()
    if resolved in _LOADED:
        return {kind: list(names) for kind, names in _LOADED[resolved].items()}
    if not resolved.is_file() or resolved.suffix != ".py":
        raise ValueError(f"--plugins {path}: expected an existing .py file")
    already = _imported_as(resolved)
    if already is not None:  # imported normally (e.g. a test's conftest): already registered
        _LOADED[resolved] = _registered_by(already)
        return {kind: list(names) for kind, names in _LOADED[resolved].items()}
    name = plugin_module_name(resolved)
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise ValueError(f"--plugins {path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up here
    try:
        spec.loader.exec_module(module)
    except RegistryError as exc:
        sys.modules.pop(name, None)
        raise ValueError(f"--plugins {path}: {exc}") from exc
    except Exception as exc:
        sys.modules.pop(name, None)
        raise ValueError(
            f"--plugins {path}: importing it failed: {type(exc).__name__}: {exc}"
        ) from exc
    added = _registered_by(name)
    _LOADED[resolved] = added
    return {kind: list(names) for kind, names in added.items()}


def _registered_by(module: str) -> dict[str, list[str]]:
    return {
        kind: names
        for kind, registry in Registry.registries().items()
        if (names := registry.from_module(module))
    }


def _imported_as(path: Path) -> str | None:
    """The name of an already imported module loaded from ``path``, if any."""
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and Path(file).resolve() == path:
            return name
    return None


def load_plugins(paths: list[Path] | None) -> dict[str, list[str]]:
    """Load every named plugin file in order; what they registered, by kind."""
    added: dict[str, list[str]] = {}
    for path in paths or []:
        for kind, names in load_plugin(path).items():
            added.setdefault(kind, []).extend(names)
    return added


__all__ = ["load_plugin", "load_plugins", "plugin_module_name"]
