"""The scoring-protocol registry, kept apart so the program model can check ``scoring:``.

Protocols register with :func:`groundeval.programs.scoring.register_protocol`; the
built-ins (grounded, checklist, rubric, dependency) load on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from groundeval.state import Registry

PROTOCOLS: Registry[Callable[[], Any]] = Registry(
    "scoring protocol", group="groundeval.protocols", builtins=["groundeval.programs.scoring"]
)
"""Factories of scoring protocols (``ScoringProtocol``), by the name a program gives."""


def protocol_names() -> list[str]:
    """Every registered scoring protocol (built-ins, entry points, loaded plugins)."""
    return PROTOCOLS.names()


__all__ = ["PROTOCOLS", "protocol_names"]
