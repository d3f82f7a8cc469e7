"""A promptfoo JSON export (``promptfoo eval -o results.json``) as a :class:`Recording`.

The export holds ``results.results[]``, one ``EvaluateResult`` per (test, prompt, provider)
and per repeat (``--repeat N`` or a test's ``options.repeat`` gives each repeat its own
result, with the same ``vars``). Read from each result:

- the input: ``vars`` (a single string variable is the input text; several variables are
  the input as canonical JSON, keys sorted), or the rendered ``prompt.raw`` when there are
  no variables;
- the answer: ``response.output``, its verdict taken as ``run`` takes it;
- a provider error (``failureReason`` 2, or ``response.error``, or no output at all) is a
  failed draw: incomplete evidence. A failed *assertion* (``failureReason`` 1) is not: the
  draw is the answer, whatever promptfoo's graders thought of it;
- ``response.cached`` answers are left out (a cached answer repeats an earlier one; it is
  not a new draw), and said so;
- the draw order: ``testIdx`` — promptfoo numbers each (test, repeat) in the order it
  schedules them, the repeats of one test consecutively.

An export with several providers or prompts is refused unless ``provider`` / ``prompt_id``
selects one: differences between models or prompts are not noise.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .._internal.settings import setting
from ..errors import BadInput
from ._recording import RecordedDraw, Recording, failed, group_draws, observed

__all__ = ["load_promptfoo"]

_FIX = "pass the JSON file written by `promptfoo eval -o results.json`"
#: promptfoo's ResultFailureReason of a provider error (1 is a failed assertion)
_ERROR = 2


def load_promptfoo(path: str | Path, *, extractor: Any, provider: str | None = None,
                   prompt_id: str | None = None) -> Recording:
    """The recording in a promptfoo export.

    Raises:
        BadInput: not a promptfoo export, or several providers/prompts and none selected.
    """
    from .._internal.files import loads_json
    from .._internal.inputs import read_text_file

    p = Path(path)
    data = loads_json(read_text_file(p, what="promptfoo export"), where=f"promptfoo export {p}",
                      fix=_FIX)
    results = _results(data, p)
    rows = [_row(r, i, p) for i, r in enumerate(results)]
    rows = _select(rows, p, "provider", provider, setting("provider"))
    rows = _select(rows, p, "prompt", prompt_id, setting("prompt_id"))
    cached = sum(r["cached"] for r in rows)
    notes = []
    if cached:
        notes.append(f"{cached} cached answer(s) left out: a cached answer repeats an earlier "
                     "one, it is not a new draw (rerun promptfoo with --no-cache)")
    draws = [RecordedDraw(r["input"], r["order"], _observation(r["result"], extractor),
                          f"promptfoo export {p}: results[{r['index']}]")
             for r in rows if not r["cached"]]
    agent = "promptfoo:" + rows[0]["provider"] if rows else "promptfoo"
    return group_draws(draws, source="promptfoo", agent=agent,
                       order="testIdx (promptfoo's schedule: the repeats of a test in turn)",
                       where=f"promptfoo export {p}", notes=notes)


def _results(data: Any, p: Path) -> list[Any]:
    inner = data.get("results") if isinstance(data, Mapping) else None
    if isinstance(inner, Mapping):
        inner = inner.get("results")
    if not isinstance(inner, list):
        raise BadInput(f"promptfoo export {p} has no results.results list", _FIX)
    return inner


def _row(r: Any, i: int, p: Path) -> dict[str, Any]:
    where = f"promptfoo export {p}: results[{i}]"
    if not isinstance(r, Mapping):
        raise BadInput(f"{where} is {type(r).__name__}, not an object", _FIX)
    prov = r.get("provider")
    if isinstance(prov, Mapping):
        prov = prov.get("label") or prov.get("id")
    prompt = _obj(r.get("prompt"))
    prompt_key = r.get("promptId") or prompt.get("label")
    if not prompt_key:
        prompt_key = str(r.get("promptIdx", 0))
    vars_ = r.get("vars") if r.get("vars") is not None else {}
    if not isinstance(vars_, Mapping):
        raise BadInput(f"{where}: vars is {type(vars_).__name__}, not an object", _FIX)
    text = _input_text(vars_, prompt)
    if not text.strip():
        raise BadInput(f"{where} has neither vars nor a prompt: its input is unknown", _FIX)
    idx = r.get("testIdx")
    if idx is not None and (not isinstance(idx, int) or isinstance(idx, bool) or idx < 0):
        raise BadInput(f"{where}: testIdx {idx!r} is not a count", _FIX)
    response = _obj(r.get("response"))
    return {"index": i, "input": text, "order": idx, "provider": str(prov or "unknown"),
            "prompt": str(prompt_key), "prompt_idx": str(r.get("promptIdx", "")),
            "prompt_label": str(prompt.get("label") or ""),
            "cached": bool(response.get("cached")), "result": r}


def _input_text(vars_: Mapping[str, Any], prompt: Mapping[str, Any]) -> str:
    if len(vars_) == 1:
        (value,) = vars_.values()
        if isinstance(value, str):
            return value
    if vars_:
        return json.dumps(vars_, sort_keys=True, ensure_ascii=False, default=str)
    raw = prompt.get("raw")
    return raw if isinstance(raw, str) else ""


def _select(rows: list[dict[str, Any]], p: Path, what: str, chosen: str | None,
            option: str) -> list[dict[str, Any]]:
    names = list(dict.fromkeys(r[what] for r in rows))
    if chosen is not None:
        keep = [r for r in rows if chosen in (r[what], r.get(f"{what}_idx"),
                                              r.get(f"{what}_label"))]
        if not keep:
            raise BadInput(f"promptfoo export {p} has no {what} {chosen!r}",
                           f"use one of {', '.join(repr(n) for n in names[:10])}")
        return keep
    if len(names) > 1:
        raise BadInput(f"promptfoo export {p} holds {len(names)} {what}s "
                       f"({', '.join(repr(n) for n in names[:5])}): differences between them "
                       "are not noise", f"choose one with {option}")
    return rows


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _observation(r: Mapping[str, Any], extractor: Any) -> Any:
    response = _obj(r.get("response"))
    reason = r.get("failureReason")
    error = r.get("error")
    if response.get("error"):
        return failed("provider_error", str(response["error"]))
    if reason == _ERROR:
        return failed("provider_error", str(error or "promptfoo recorded an error"))
    output = response.get("output")
    if output is None:
        if reason is None and error and r.get("gradingResult") is None:
            return failed("provider_error", str(error))  # an export without failureReason
        return failed("no_output", str(error or "no output"))
    latency = r.get("latencyMs")
    lat = float(latency) / 1000 if isinstance(latency, (int, float)) and latency > 0 else 0.0
    return observed(output, extractor, latency_s=lat)
