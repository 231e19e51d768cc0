"""A user's Python checks, loaded only when named.

groundeval run ... --checks examples/mychecks.py
"""

from __future__ import annotations

from typing import Any

from groundeval.programs import register_check


@register_check("pips_all_different")
def pips_all_different(
    elements: list[Any], state: Any, *, field: str = "pips"
) -> tuple[float, str]:
    """Every die shows a different number of pips."""
    values = [e.value(field) for e in elements]
    ok = len(set(values)) == len(values)
    return float(ok), f"{field} {values} → {'pass' if ok else 'fail'}"
