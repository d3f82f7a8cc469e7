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
from collections.abc import Iterable, Sequence
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
    from ..store import open_store

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


#: A noise estimate from fewer (input) pairs than this, or whose interval is wider than
#: ``THIN_WIDTH``, is too thin to plan with: plan warns and plans at its upper end too.
THIN_PAIRS = 30
THIN_WIDTH = 0.1


@dataclass(frozen=True)
class NoiseEstimate:
    """A pair disagreement read from evidence (a saved run's meter, or a store's draws)."""

    estimate: float
    pairs: int
    low: float
    high: float
    source: str
    #: the inputs the estimate averages over (0: not known, a meter's pooled pairs)
    inputs: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"pair_disagreement": self.estimate, "pairs": self.pairs, "inputs": self.inputs,
                "ci_low": self.low, "ci_high": self.high, "source": self.source}

    @property
    def thin(self) -> bool:
        return self.pairs < THIN_PAIRS or self.high - self.low > THIN_WIDTH

    def warning(self) -> str:
        if not self.thin:
            return ""
        return (f"the noise {self.estimate:.3g} read from {self.source} rests on "
                f"{self.pairs} pair(s) (95% interval [{self.low:.3g}, {self.high:.3g}]): too "
                f"thin to plan with; planned at its upper end {self.high:.3g} too")

    @classmethod
    def read(cls, path: str) -> NoiseEstimate:
        """From a saved ``run`` JSON report (its meter's pairs) or a recorded store (every
        probe's draws, pairs within each probe)."""
        p = Path(path)
        if p.suffix.lower() == ".json":
            if not p.is_file():
                raise BadInput(f"{setting('noise_from', path)}: no such report",
                               f"check the path of the run {setting('format_json')} report")
            return _noise_from_report(p, path)
        return _noise_from_store(path)


def _interval(k: int, n: int) -> tuple[float, float]:
    from ..decide import clopper_pearson
    lo, hi = clopper_pearson(k, n, alpha=0.05)
    return float(lo), float(hi)


def noise_of_draws(keys_by_input: Iterable[Sequence[str | None]], source: str
                   ) -> NoiseEstimate | None:
    """The pair disagreement of an agent from its verdict draws, input by input: the mean,
    over the inputs drawn twice or more, of the share of their pairs of draws that disagree
    (each input counts once, as in the synthetic agent ``plan`` simulates, however often a
    run drew it). Its interval is exact (Clopper-Pearson) at the effective number of
    independent pairs of an input-averaged rate, ``N^2 / sum_i 1/n_i`` for ``n_i`` disjoint
    pairs within input ``i`` (independent given the input): the estimate always lies inside
    it. None when no input was drawn twice.

    >>> e = noise_of_draws([["a", "a", "b", "a"], ["b", "b"], ["a"]], "draws")
    >>> round(e.estimate, 3), e.pairs, e.inputs
    (0.25, 3, 2)
    >>> e.low <= e.estimate <= e.high
    True
    """
    from ..decide import pair_disagreement

    tot, inputs, pairs, inv = 0.0, 0, 0, 0.0
    for keys in keys_by_input:
        ks = [k for k in keys if k is not None]
        m = len(ks)
        if m < 2:
            continue
        tot += pair_disagreement(ks)
        inputs += 1
        pairs += m // 2
        inv += 1.0 / (m // 2)
    if not inputs:
        return None
    est = tot / inputs
    n_eff = max(1, math.floor(inputs * inputs / inv + 1e-9))
    lo, hi = _interval(min(n_eff, round(est * n_eff)), n_eff)
    return NoiseEstimate(est, pairs, min(lo, est), max(hi, est), source, inputs)


def _noise_from_report(p: Path, shown: str) -> NoiseEstimate:
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput(f"{setting('noise_from', shown)}: not a readable JSON report "
                       f"({type(exc).__name__})", f"give a run {setting('format_json')} "
                       "report, or a recorded store") from None
    whole = doc.get("noise") if isinstance(doc, dict) else None
    if isinstance(whole, dict) and _number(whole.get("pair_disagreement")) \
            and isinstance(whole.get("pairs"), int) and whole["pairs"] > 0 \
            and _number(whole.get("ci_low")) and _number(whole.get("ci_high")):
        # every source draw of the run: the figure to plan with (the meter's alone stops
        # early on a run of disagreements and overstates the noise)
        return NoiseEstimate(float(whole["pair_disagreement"]), whole["pairs"],
                             float(whole["ci_low"]), float(whole["ci_high"]),
                             f"report {p.name} (every source draw)",
                             int(whole.get("inputs") or 0))
    meter = doc.get("meter") if isinstance(doc, dict) else None
    pairs = meter.get("pairs") if isinstance(meter, dict) else None
    dis = meter.get("disagreements") if isinstance(meter, dict) else None
    if not (isinstance(pairs, int) and isinstance(dis, int) and pairs > 0):
        raise BadInput(f"{setting('noise_from', shown)} has no meter pairs (not a run report, "
                       "or a run whose meter made no pair)", f"give a run "
                       f"{setting('format_json')} report, a recorded store, or "
                       f"{setting('noise')}")
    lo, hi = _interval(dis, pairs)
    return NoiseEstimate(dis / pairs, pairs, lo, hi, f"report {p.name} (its meter)")


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and 0.0 <= x <= 1.0


def _noise_from_store(spec: str) -> NoiseEstimate:
    from collections import defaultdict

    from ..store import open_store

    store = open_store(spec, mode="replay")
    try:
        keys: dict[tuple[str, str], list[str]] = defaultdict(list)
        for row in store.rows():
            k = row.observation.key("verdict") if row.ok else None
            if k is not None:
                keys[(row.agent, row.fp)].append(k)
    finally:
        store.close()
    est = noise_of_draws(keys.values(), f"store {spec}")
    if est is None:
        raise BadInput(f"{setting('noise_from', spec)}: the store holds no probe drawn twice",
                       f"record a run first, or give {setting('noise')}")
    return est
