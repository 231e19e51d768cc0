"""The toolkit version recorded in every state file and run."""

from __future__ import annotations

from functools import cache
from importlib.metadata import PackageNotFoundError, version


@cache
def toolkit_version() -> str:
    """Installed groundeval version (``0+unknown`` when run from an uninstalled tree)."""
    try:
        return version("groundeval")
    except PackageNotFoundError:
        return "0+unknown"
