"""``plan`` in tokens and money: the planned calls times a tokens-per-call, at a price.

The tokens a call takes come from the user: stated (``--tokens-per-call IN,OUT``), or
measured on evidence they already have: a recorded store (the mean over its stored draws
whose adapter reported input and output tokens) or the JSON report of an earlier run,
bench, check or enlarge (its ``tokens`` totals over the calls that reported them). A plan
then multiplies each noise level's calls (mean, low, high) by it; with a price, by the price
too. It assumes every call takes the mean tokens: a probe set whose follow-ups are much
longer than its inputs (relations) costs somewhat more than the mean of a run without them.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._internal.settings import setting
from ..errors import BadInput, InvalidArgument

__all__ = ["TokensPerCall"]

_PAIR = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*,\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class TokensPerCall:
    """Mean input and output tokens of one agent call, and where the figure comes from.

    Example:
        >>> TokensPerCall(input=420.0, output=12.5).total
        432.5
    """

    input: float
    output: float
    source: str = "stated"
    calls: int | None = None
    """how many calls the mean is over (None: stated)"""

    def __post_init__(self) -> None:
        for name in ("input", "output"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
                    or v < 0:
                raise InvalidArgument(f"TokensPerCall: {name} must be a finite number >= 0, "
                                      f"got {v!r}")
            object.__setattr__(self, name, float(v))

    @property
    def total(self) -> float:
        return self.input + self.output

    def to_dict(self) -> dict[str, Any]:
        return {"input": self.input, "output": self.output, "source": self.source,
                "calls": self.calls}

    @classmethod
    def stated(cls, spec: str) -> TokensPerCall:
        """``IN,OUT`` (``--tokens-per-call 420,12``)."""
        m = _PAIR.match(spec)
        if m is None:
            raise BadInput(f"{setting('tokens_per_call', repr(spec))} is not IN,OUT",
                           "give the input and output tokens of one call, e.g. 420,12")
        return cls(float(m.group(1)), float(m.group(2)), source="stated")

    @classmethod
    def measured(cls, path: str) -> TokensPerCall:
        """The mean tokens per call in a recorded store or an earlier report's JSON."""
        p = Path(path)
        if p.suffix.lower() == ".json" and p.is_file():
            return _from_report(p, path)
        return _from_store(path)


def _from_report(p: Path, shown: str) -> TokensPerCall:
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{setting('tokens_from', shown)}: not a readable JSON report "
                       f"({type(exc).__name__})", "give a run/bench/check/enlarge "
                       f"{setting('format_json')} report, or a recorded store") from None
    tokens = doc.get("tokens") if isinstance(doc, dict) else None
    if tokens is None and isinstance(doc, dict) and isinstance(doc.get("agents"), list):
        raise BadInput(f"{setting('tokens_from', shown)} is a comparison of several agents",
                       "give the report of one agent's run (or bench), or a recorded store")
    if not isinstance(tokens, dict):
        raise BadInput(f"{setting('tokens_from', shown)} has no token totals (a report written "
                       "before them, or not an agentverity-props report)",
                       f"re-run it with this version, or give {setting('tokens_per_call')}")
    n, tin, tout = tokens.get("calls_reporting"), tokens.get("input"), tokens.get("output")
    if not (isinstance(n, int) and n > 0 and isinstance(tin, int) and isinstance(tout, int)):
        why = tokens.get("note") or "no input/output split"
        raise BadInput(f"{setting('tokens_from', shown)}: the adapter's token usage is not there "
                       f"({why})", f"give {setting('tokens_per_call')}")
    return TokensPerCall(tin / n, tout / n, source=f"report {p.name}", calls=n)


def _from_store(spec: str) -> TokensPerCall:
    from ..engine import open_store

    store = open_store(spec, mode="replay")
    try:
        n = tin = tout = 0
        agents: set[str] = set()
        for row in store.rows():
            u = row.observation.usage
            if not row.ok or u is None or u.input_tokens is None or u.output_tokens is None:
                continue
            agents.add(row.agent)
            n += 1
            tin += u.input_tokens
            tout += u.output_tokens
        location = store.location
    finally:
        store.close()
    if not n:
        raise BadInput(f"{setting('tokens_from', spec)}: no recorded draw carries input and "
                       "output tokens (the adapter reports none)",
                       f"give {setting('tokens_per_call')}")
    pooled = f", {len(agents)} agents pooled" if len(agents) > 1 else ""
    return TokensPerCall(tin / n, tout / n, source=f"store {location}{pooled}", calls=n)


def level_tokens(calls_total: dict[str, float], per_call: TokensPerCall,
                 price: Any) -> dict[str, Any]:
    """One noise level's tokens (and cost) from its total calls (mean, low, high)."""
    keys = ("mean", "low", "high")
    out: dict[str, Any] = {
        "tokens": {"input": {k: calls_total[k] * per_call.input for k in keys},
                   "output": {k: calls_total[k] * per_call.output for k in keys},
                   "total": {k: calls_total[k] * per_call.total for k in keys}}}
    if price is not None:
        out["cost"] = {k: price.cost(calls_total[k] * per_call.input,
                                     calls_total[k] * per_call.output) for k in keys}
    return out
