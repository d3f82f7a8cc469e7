"""Standalone HTML reports: one file, inline CSS and SVG plots, no script, no network.

Every kind of saved result (run, tools, bench, compare, counterexample, ...) renders from its
versioned JSON dict, so ``agentverity-props report FILE.json --html OUT.html`` shows a saved
result exactly. Strings from the JSON are escaped by jinja2's autoescape; plots are SVG made
by :mod:`._plots` from numbers (labels inside them are drawn as glyph paths, not markup).

A kind without a dedicated view, or a file whose dedicated view fails on an unexpected
shape, falls back to a readable table tree of the JSON, so a known schema never fails.
"""

from __future__ import annotations

import datetime as _dt
import math
from pathlib import Path
from typing import Any

from ..errors import BadInput

__all__ = ["render_html"]

_EXTRA_MSG = ("HTML reports need the html extra", "pip install 'agentverity-props[html]'")
_TEMPLATES = Path(__file__).with_name("templates")
_RAW_JSON_LIMIT = 300_000

_GENERIC_EXIT = {0: "clean: nothing found", 1: "finding: a property failed",
                 2: "incomplete or undecided evidence"}

#: JSON keys that may carry the time the result was made, most specific first
_DATE_KEYS = ("created_at", "created", "finished_at", "started_at", "date", "timestamp",
              "time")


def _deps() -> tuple[Any, Any]:
    try:
        import jinja2
        import markupsafe
    except ImportError:
        raise BadInput(*_EXTRA_MSG) from None
    import importlib.util
    if importlib.util.find_spec("matplotlib") is None:  # checked up front, not imported: a
        raise BadInput(*_EXTRA_MSG)                      # run report does not need it
    return jinja2, markupsafe


def _env() -> Any:
    jinja2, _ = _deps()
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.ChainableUndefined)
    env.filters.update(num=fmt_num, pct=fmt_pct, ci=fmt_ci, cipct=fmt_ci_pct, fp=short_fp,
                       plain=fmt_plain)
    return env


def fmt_num(v: Any, digits: int = 3) -> str:
    """Numbers for people: ints as-is, floats to ``digits`` significant places, None as a dash."""
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "–"
        return f"{v:.{digits}g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.{max(digits - 1, 0)}e}"
    return str(v)


def fmt_pct(v: Any, digits: int = 1) -> str:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return "–"
    return f"{100 * v:.{digits}f}%"


def fmt_ci(pair: Any, digits: int = 3) -> str:
    """``[lo, hi]`` from a 2-list, a dict with low/high or ci_low/ci_high, else a dash."""
    lo = hi = None
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        lo, hi = pair
    elif isinstance(pair, dict):
        lo = pair.get("ci_low", pair.get("low", pair.get("lo")))
        hi = pair.get("ci_high", pair.get("high", pair.get("hi")))
    if not all(isinstance(x, (int, float)) for x in (lo, hi)):
        return "–"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def fmt_ci_pct(pair: Any) -> str:
    """``[lo, hi]`` as whole percentages, like ``[1-16%]`` (with an en dash)."""
    text = fmt_ci(pair, 6)
    if text == "–":
        return text
    lo, hi = (float(x) for x in text.strip("[]").split(", "))
    return f"[{100 * lo:.0f}–{100 * hi:.0f}%]"


def short_fp(fp: Any) -> str:
    """``sha256:0123abcd…`` -> ``0123abcd4567`` (enough to tell inputs apart on a page)."""
    s = str(fp or "")
    return s.split(":", 1)[-1][:12] if ":" in s else s[:12]


def fmt_plain(v: Any) -> str:
    """Scalars and short lists/dicts as one line of text (escaped later by autoescape)."""
    if isinstance(v, dict):
        return ", ".join(f"{k}: {fmt_plain(x)}" for k, x in v.items()) or "–"
    if isinstance(v, (list, tuple)):
        return ", ".join(fmt_plain(x) for x in v) or "–"
    return fmt_num(v)


def kind_of(schema: str) -> tuple[str, str]:
    """``agentverity_props.<kind>/<n>`` -> (``<kind>``, ``<n>``)."""
    name, _, version = str(schema).partition("/")
    return name.rsplit(".", 1)[-1], version or "?"


def _date(result: dict[str, Any], now: _dt.datetime | None) -> tuple[str, str]:
    for key in _DATE_KEYS:
        v = result.get(key)
        if isinstance(v, str) and v:
            return v, f"from the result's {key!r}"
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 1e9:
            return (_dt.datetime.fromtimestamp(v, _dt.timezone.utc).isoformat(timespec="seconds"),
                    f"from the result's {key!r}")
    stamp = (now or _dt.datetime.now(_dt.timezone.utc)).isoformat(timespec="seconds")
    return stamp, "report rendered (the result carries no date)"


def _agent(result: dict[str, Any]) -> str:
    for key in ("agent", "agent_ref", "target"):
        v = result.get(key)
        if isinstance(v, str) and v:
            return v
        if isinstance(v, dict):
            name = v.get("name") or v.get("ref")
            if isinstance(name, str):
                return name
    agents = result.get("agents")
    if isinstance(agents, dict):
        return " vs ".join(str(v.get("name", v) if isinstance(v, dict) else v)
                           for v in agents.values())
    if isinstance(agents, list):
        return " vs ".join(str(a.get("name", a) if isinstance(a, dict) else a) for a in agents)
    a, b = result.get("agent_a", result.get("a")), result.get("agent_b", result.get("b"))
    if isinstance(a, (str, dict)) and isinstance(b, (str, dict)):
        return f"{_agent({'agent': a})} vs {_agent({'agent': b})}"
    if isinstance(result.get("config"), str):
        return f"cases from {result['config']}"
    return "–"


def _raw_json(result: dict[str, Any]) -> tuple[str, bool]:
    from ._json import dumps
    text = dumps(result, written=False)
    if len(text) > _RAW_JSON_LIMIT:
        return text[:_RAW_JSON_LIMIT], True
    return text, False


def _entry(schema: str) -> Any:
    from ._registry import kind_for
    return kind_for(schema)


def render_html(result: dict[str, Any], *, source: str | None = None,
                now: _dt.datetime | None = None) -> str:
    """One self-contained HTML page for a result dict (any known schema).

    Args:
        result: the versioned JSON dict (``RunResult.to_dict()``, a loaded file, ...).
        source: where it came from, shown in the header (a file name).
        now: the render time shown when the result carries no date (tests pin it).

    Raises:
        BadInput: jinja2 or matplotlib is missing (the ``html`` extra).
    """
    env = _env()
    _, markupsafe = _deps()
    schema = str(result.get("schema", "?"))
    kind, version = kind_of(schema)
    entry = _entry(schema)
    from ._kinds import derived_exit
    from ._md import exit_of
    # the exit code the result records, else the one its kind's registry entry derives (the
    # same derivation as the Markdown heading and `report`'s exit code): no view derives its own
    exit_code = derived_exit(result)
    ctx: dict[str, Any] = {"r": result, "schema": schema, "kind": kind, "version": version,
                           "title": entry.title if entry else kind, "agent": _agent(result),
                           "source": source, "exit_code": exit_code,
                           "exit_derived": exit_of(result) is None and exit_code is not None,
                           "fallback_reason": None}
    ctx["date"], ctx["date_note"] = _date(result, now)
    ctx["raw_json"], ctx["raw_truncated"] = _raw_json(result)
    ctx["exit_meanings"] = dict(entry.exit_meanings) if entry else _GENERIC_EXIT
    builder = entry.html if entry else None
    if builder is not None:
        try:
            return _page(env, markupsafe, f"{kind}.html.j2", {**ctx, **builder(result)}, kind)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError,
                ArithmeticError) as exc:
            # an unexpected shape must not cost the user their report: show the raw tree
            ctx["fallback_reason"] = (f"the {kind} view could not read this file "
                                      f"({type(exc).__name__}: {exc}); showing its contents")
    from ._tree import tree
    ctx["tree"] = tree({k: v for k, v in result.items() if k != "schema"})
    return _page(env, markupsafe, "generic.html.j2", ctx, kind)


def _page(env: Any, markupsafe: Any, template: str, ctx: dict[str, Any], kind: str) -> str:
    exit_code = ctx["exit_code"]
    meanings = ctx.get("exit_meanings") or _GENERIC_EXIT
    if isinstance(exit_code, int):
        ctx["exit_meaning"] = meanings.get(exit_code, "–")
        ctx["exit_class"] = {0: "good", 1: "bad", 2: "warn"}.get(exit_code, "muted")
    else:
        ctx["exit_meaning"], ctx["exit_class"] = "no exit code recorded", "muted"
    ctx["svg"] = {k: markupsafe.Markup(v) for k, v in (ctx.get("plots") or {}).items() if v}
    html: str = env.get_template(template).render(**ctx)
    return html
