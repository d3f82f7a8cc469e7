"""How reports say what they know about tokens: one phrase and one line, shared by the
engine (which writes the ``tokens`` part of a report) and the renderers (which print it)."""

from __future__ import annotations

from typing import Any

NOT_REPORTED = "not reported by the adapter"




def _n(x: int) -> str:
    return f"{x:,}"


def tokens_line(tokens: dict[str, Any] | None) -> str:
    """One line for a text report: ``Tokens: 1,200 in + 300 out = 1,500 over 40 calls
    (meter 800, relations 700) · cost 0.36 USD at ...``; what is missing said plainly."""
    if not tokens:
        return "Tokens: not recorded (a file written before token totals)"
    if not tokens.get("reported"):
        priced = " (so no cost at the price given)" if tokens.get("price") else ""
        return f"Tokens: {tokens.get('note') or NOT_REPORTED}{priced}"
    if tokens.get("input") is not None and tokens.get("output") is not None:
        head = (f"{_n(tokens['input'])} in + {_n(tokens['output'])} out = "
                f"{_n(tokens['total'])}")
    else:
        head = f"{_n(tokens['total'])} total"
    head += f" over {_n(tokens['calls_reporting'])} live call(s)"
    phases = tokens.get("phases") or {}
    if len(phases) > 1:
        head += " (" + ", ".join(f"{k} {_n(v['total'])}" for k, v in phases.items()
                                 if v.get("total") is not None) + ")"
    price = tokens.get("price")
    if price is not None:
        cur = price.get("currency") or "USD"
        at = (f"{price['input_per_1k']:g}/{price['output_per_1k']:g} {cur} per 1k in/out"
              + (f", {price['model']}" if price.get("model") else ""))
        if tokens.get("cost") is not None:
            head += f" · cost {tokens['cost']:.4f} {cur} (at {at})"
        else:
            head += f" · cost unknown (at {at})"
    if tokens.get("adapter_cost") is not None:
        head += f" · adapter-reported cost {tokens['adapter_cost']:.4f}"
    if tokens.get("note"):
        head += f" · {tokens['note']}"
    return "Tokens: " + head
