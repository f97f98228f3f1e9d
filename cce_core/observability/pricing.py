"""The embedded, offline price table behind every estimated-dollars figure.

The table ships with the package (``cce_core/data/pricing.json``) and is never
fetched; it carries the same id and numbers as the other engines, so a dollar
estimate is the same whichever engine printed it. Only the default model's
input rate is used: a saved token is an input token the agent did not read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

from cce_core.foundation.textrules import round2

PRICING_RESOURCE = "data/pricing.json"
PRICING_DISPLAY_PATH = "cce_core/data/pricing.json"


@dataclass(frozen=True)
class ModelPrice:
    """One model's list prices, in US dollars per million tokens."""

    input_per_million_usd: float  # the rate savings are priced at: a saved token is an input token not read
    output_per_million_usd: float


@dataclass(frozen=True)
class PriceTable:
    """The table as shipped: its id (printed beside every dollar figure), the default model, every model's prices."""

    id: str
    default_model: str
    models: dict[str, ModelPrice]

    def default_input_price_per_million(self) -> float | None:
        model = self.models.get(self.default_model)
        return model.input_per_million_usd if model is not None else None

    def dollars_saved(self, saved_tokens: int) -> float:
        """``saved_tokens`` at the default model's input rate, rounded to cents (halves away from zero)."""
        return dollars_at(saved_tokens, self.default_input_price_per_million() or 0.0)


def dollars_at(saved_tokens: int, rate_per_million: float) -> float:
    """``saved_tokens`` at ``rate_per_million`` dollars per million tokens, rounded to cents (halves away from zero)."""
    return round2(saved_tokens / 1_000_000.0 * rate_per_million)


@cache
def builtin_table() -> PriceTable:
    raw = json.loads(resources.files("cce_core").joinpath(PRICING_RESOURCE).read_text(encoding="utf-8"))
    models = {name: ModelPrice(float(m["input_per_million_usd"]), float(m["output_per_million_usd"]))
              for name, m in sorted(raw["models"].items())}
    return PriceTable(raw["id"], raw["default_model"], models)
