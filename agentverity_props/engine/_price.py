"""What tokens cost: a price per 1,000 input and output tokens, given by the user.

The toolkit knows no provider's prices (they change, and differ by contract); the user
states them, inline (``--price 0.15,0.60``) or in a file mapping model names to prices
(YAML or JSON), validated strictly::

    gpt-4o-mini: {input_per_1k: 0.00015, output_per_1k: 0.0006}
    claude-haiku: {input_per_1k: 0.0008, output_per_1k: 0.004, currency: USD}

A file of one model needs no name; with several, ``--price-model NAME`` (or
``Price.load(path, model=NAME)``) picks one.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from .._internal.settings import setting
from ..errors import BadInput, InvalidArgument

__all__ = ["Price", "parse_price"]

_INLINE = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*,\s*"
                     r"([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$")
_FORMAT = ("write the file as 'MODEL: {input_per_1k: X, output_per_1k: Y}' (YAML or JSON), "
           "prices per 1,000 tokens")


@dataclass(frozen=True)
class Price:
    """A price per 1,000 input tokens and per 1,000 output tokens.

    Attributes:
        input_per_1k: the price of 1,000 input (prompt) tokens, >= 0.
        output_per_1k: the price of 1,000 output (completion) tokens, >= 0.
        model: the model the price is for (named in reports), or None.
        currency: the unit of the prices (default ``"USD"``); reports print it.

    Example:
        >>> p = Price(input_per_1k=0.15, output_per_1k=0.60)
        >>> round(p.cost(2000, 500), 6)
        0.6
    """

    input_per_1k: float
    output_per_1k: float
    model: str | None = None
    currency: str = "USD"

    def __post_init__(self) -> None:
        for name in ("input_per_1k", "output_per_1k"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value) or value < 0:
                raise InvalidArgument(f"Price: {name} must be a finite number >= 0, got "
                                      f"{value!r} (a price per 1,000 tokens)")
            object.__setattr__(self, name, float(value))
        if self.model is not None and (not isinstance(self.model, str) or not self.model):
            raise InvalidArgument(f"Price: model must be a non-empty str or None, got "
                                  f"{self.model!r}")
        if not isinstance(self.currency, str) or not re.fullmatch(r"[A-Za-z$€£¥]{1,8}",
                                                                  self.currency):
            raise InvalidArgument(f"Price: currency must be a short code such as 'USD', got "
                                  f"{self.currency!r}")

    def cost(self, input_tokens: float, output_tokens: float) -> float:
        """The price of ``input_tokens`` in and ``output_tokens`` out."""
        return input_tokens / 1000.0 * self.input_per_1k \
            + output_tokens / 1000.0 * self.output_per_1k

    def to_dict(self) -> dict[str, Any]:
        return {"model": self.model, "input_per_1k": self.input_per_1k,
                "output_per_1k": self.output_per_1k, "currency": self.currency}

    def describe(self) -> str:
        """``0.15/0.6 USD per 1k tokens in/out (gpt-4o-mini)``."""
        who = f" ({self.model})" if self.model else ""
        return (f"{self.input_per_1k:g}/{self.output_per_1k:g} {self.currency} per 1k tokens "
                f"in/out{who}")

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, model: str | None = None) -> Price:
        """The price of ``model`` in the price file ``path`` (YAML or JSON).

        Raises:
            BadInput: the file is missing or malformed, or ``model`` is not in it (or not
                given while the file lists several models); one line naming the fix.
        """
        return _load(Path(path), model, source=str(path))


def parse_price(spec: str, *, model: str | None = None, option: str | None = None) -> Price:
    """``IN,OUT`` (prices per 1k input and output tokens) or the path of a price file.

    >>> parse_price("0.15,0.6").output_per_1k
    0.6
    """
    if option is None:
        option = setting("price")
    m = _INLINE.match(spec)
    if m is not None:
        try:
            return Price(float(m.group(1)), float(m.group(2)), model=model)
        except InvalidArgument as exc:
            raise BadInput(f"{option} {spec}: {exc}", "give IN,OUT, e.g. 0.15,0.60") from None
    path = Path(spec)
    if not path.is_file():
        raise BadInput(f"{option} {spec!r} is neither IN,OUT nor a price file",
                       "give two prices per 1,000 tokens (input,output), e.g. 0.15,0.60, or "
                       "the path of a YAML/JSON price file")
    return _load(path, model, source=spec, option=option)


def _entry_model() -> Any:
    from pydantic import BaseModel, ConfigDict, Field

    class PriceEntry(BaseModel):
        model_config = ConfigDict(extra="forbid")

        input_per_1k: Annotated[float, Field(ge=0, allow_inf_nan=False)]
        output_per_1k: Annotated[float, Field(ge=0, allow_inf_nan=False)]
        currency: str = "USD"

    return PriceEntry


def _load(path: Path, model: str | None, *, source: str, option: str = "price file") -> Price:
    from pydantic import ValidationError

    from .._internal.yaml import read_yaml
    doc = read_yaml(path, what="price file", source=source)  # JSON is YAML too
    data = doc.data
    if not isinstance(data, dict) or not data:
        raise BadInput(f"{option} {source}: expected a mapping of model names to prices",
                       _FORMAT)
    if model is None:
        if len(data) > 1:
            names = ", ".join(sorted(map(str, data))[:8])
            raise BadInput(f"{option} {source} lists {len(data)} models ({names})",
                           f"pick one with {setting('price_model')}")
        model = str(next(iter(data)))
    if model not in data:
        names = ", ".join(sorted(map(str, data))[:8])
        raise BadInput(f"{option} {source} has no model {model!r} (it lists {names})",
                       "pass one of those names, or add the model to the file")
    entry_cls = _entry_model()
    try:
        entry = entry_cls.model_validate(data[model])
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in (model, *err["loc"]))
        try:
            at = f"{source}:{doc.line_of([model, *err['loc']])}"
        except Exception:  # no line for that path: name the file alone
            at = source
        raise BadInput(f"{at}: {where}: {err['msg']}", _FORMAT) from None
    try:
        return Price(entry.input_per_1k, entry.output_per_1k, model=model,
                     currency=entry.currency)
    except InvalidArgument as exc:
        raise BadInput(f"{source}: {model}: {exc}", _FORMAT) from None
