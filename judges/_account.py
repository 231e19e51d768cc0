"""What a run spent on judges: calls, tokens, seconds and dollars, per item and in total.

Prices are US dollars per million tokens. The defaults are list prices at the
time of writing and will go stale: pass ``prices=`` (a mapping or a JSON/YAML
file) to override them. A model with no price costs 0 and is listed in
``Account.unpriced`` so a report can say so instead of showing a false total.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from groundeval.state import Usage


class Price(BaseModel):
    """Dollars per million tokens; thinking tokens default to the output price."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    thinking: float | None = Field(default=None, ge=0)


DEFAULT_PRICES: dict[str, Price] = {
    "gemini-2.5-pro": Price(input=1.25, output=10.0),
    "gemini-2.5-flash-lite": Price(input=0.10, output=0.40),
    "gemini-2.5-flash": Price(input=0.30, output=2.50),
    "gemini-2.0-flash": Price(input=0.10, output=0.40),
    "gemini-3-pro": Price(input=2.0, output=12.0),
    "gemini-3-flash": Price(input=0.50, output=3.0),
    "gpt-4o-mini": Price(input=0.15, output=0.60),
    "gpt-4o": Price(input=2.50, output=10.0),
}


def load_prices(prices: Mapping[str, Any] | str | Path | None) -> dict[str, Price]:
    """Default prices updated with the user's (a mapping or a JSON/YAML file of them).

    Raises:
        ValueError: a price entry is malformed (names the model and the field).
    """
    table = dict(DEFAULT_PRICES)
    if prices is None:
        return table
    source = str(prices)
    if isinstance(prices, (str, Path)):
        text = Path(prices).read_text(encoding="utf-8")
        raw = yaml.safe_load(text) if str(prices).endswith((".yaml", ".yml")) else json.loads(text)
        if not isinstance(raw, dict):
            raise ValueError(f"{source}: a price table maps model names to prices")
        prices = raw
    for model, value in prices.items():
        try:
            table[str(model)] = value if isinstance(value, Price) else Price.model_validate(value)
        except Exception as exc:
            raise ValueError(f"price for {model!r}: {exc}") from None
    return table


def price_for(model: str, table: Mapping[str, Price]) -> Price | None:
    """The price whose name is the longest prefix of ``model`` (``models/`` ignored)."""
    name = model.removeprefix("models/").lower()
    best = None
    for key, price in table.items():
        if name.startswith(key.lower()) and (best is None or len(key) > len(best[0])):
            best = (key, price)
    return best[1] if best else None


def cost_usd(usage: Usage, price: Price | None) -> float:
    """Dollars for the tokens in ``usage``."""
    if price is None:
        return 0.0
    thinking = price.thinking if price.thinking is not None else price.output
    return (
        float(
            usage.input_tokens * price.input
            + usage.output_tokens * price.output
            + usage.thinking_tokens * thinking
        )
        / 1e6
    )


@dataclass
class Account:
    """Running totals for one judge (one run): the middleware adds every reply here."""

    total: Usage = field(default_factory=Usage)
    per_item: dict[str, Usage] = field(default_factory=dict)
    retries: int = 0
    """Attempts beyond the first, over all calls."""
    errors: Counter[str] = field(default_factory=Counter)
    """Calls that ended in an error, by reason."""
    unpriced: set[str] = field(default_factory=set)

    def add(self, item_id: str, usage: Usage) -> None:
        """Count one reply against its item and the run."""
        self.total = self.total.add(usage)
        self.per_item[item_id] = self.per_item.get(item_id, Usage()).add(usage)

    def summary(self) -> dict[str, Any]:
        """Plain numbers for summary.json."""
        return {
            **self.total.model_dump(),
            "retries": self.retries,
            "errors": dict(sorted(self.errors.items())),
            "unpriced_models": sorted(self.unpriced),
        }
