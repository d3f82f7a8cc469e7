"""Text rendering of a ``plan`` result dict (today's version, ``PlanDocument``)."""

from __future__ import annotations

from typing import Any

from .._internal.settings import setting
from .._internal.shown import for_text

_PHASES = (("meter", "meter"), ("blindness", "blindness (+top-up)"),
           ("dependence", "dependence check"), ("relations", "relations (+localisation)"),
           ("stationarity", "change check"), ("total", "total"))


#: what each exit code of ``plan`` means (a plan makes no agent call and finds nothing)
PLAN_EXIT = {0: "plan simulated: no agent was called", 2: "bad input: nothing was simulated"}


def plan_exit(d: dict[str, Any]) -> int:
    """The exit code of the command that wrote a plan (a plan records none): always 0, as a
    plan is written only once simulated."""
    return 0



def _pct(p: float) -> str:
    """A noise level (a pair disagreement) as run prints it over the whole run."""
    return f"{p:.3g}"


def _spread(s: dict[str, float], *, se: bool = False) -> str:
    mean, lo, hi = round(s["mean"]), int(s["low"]), int(s["high"])
    if lo == hi:
        return f"{mean}"
    pm = f" ±{round(2 * s['se'])}" if se else ""
    return f"{mean}{pm} ({lo}-{hi})"


def _duration(seconds: float) -> str:
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def _big(x: float) -> str:
    return f"{round(x):,}"


def _source(tpc: dict[str, Any]) -> str:
    if tpc.get("calls"):
        return f"the mean over {tpc['calls']} call(s) of {tpc['source']}"
    return "stated"


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
            for r in rows]


def render_plan_text(d: dict[str, Any], *, color: bool = False) -> str:
    """The plan as plain text: calls per phase x noise, the budget that makes each decision
    reachable, wall time, and the assumptions behind every figure (``color`` is accepted
    like every text renderer's; the plan has no colour)."""
    d = for_text(d)
    levels = d["levels"]
    heads = [f"noise {_pct(lv['noise'])}" for lv in levels]
    out = _plan_header(d)
    out += _phase_rows(levels, heads)
    out += _reach_rows(levels, heads, d["config"].get("budget_margin"))
    out += _screen_lines(d)
    out += _cost_lines(d)
    out += _budget_lines(d)
    out += ["", "assumptions:"]
    out += [f"  - {a}" for a in d["assumptions"]]
    return "\n".join(out) + "\n"


def _plan_header(d: dict[str, Any]) -> list[str]:
    """What was planned (inputs, relations, tolerance, alpha, workers) and what noise means."""
    cfg = d["config"]
    levels = d["levels"]
    n_ex = sum(1 for v in d["exercised"].values() if v)
    rels = (f"{len(d['relations'])} relation(s) ({n_ex} change at least one input)"
            if d["relations"] else "no relation")
    prof = f", profile {cfg['profile']}" if cfg.get("profile") else ""
    out = [f"plan: {d['inputs']} inputs, {rels}, tolerance {cfg['tolerance']:g}, alpha "
           f"{cfg['alpha']:g}, {cfg['max_workers']} worker(s){prof}",
           *(f"warning: {for_text(w)}" for w in d.get("warnings") or ()),
           "no agent was called: every figure comes from the run pipeline on a synthetic "
           "agent (assumptions below)",
           "noise = pair disagreement, as run prints it over the whole run (" + "; ".join(
               f"{_pct(lv['noise'])}: each call flipped with probability "
               f"{lv.get('flip', lv['noise']):.3g}" for lv in levels if lv["noise"]) + ")"
           if any(lv["noise"] for lv in levels) else "noise = pair disagreement, as run "
           "prints it over the whole run", "",
           "calls per phase (mean over the seeds, ±2 standard errors on the total; the range "
           "low-high of single runs):"]
    return out


def _phase_rows(levels: list[dict[str, Any]], heads: list[str]) -> list[str]:
    """Calls per phase at each noise level (mean, ±2 standard errors, range)."""
    rows = [["phase", *heads]]
    for key, title in _PHASES:
        if any(key not in lv["calls"] for lv in levels):
            continue  # a file written before the phase had a row
        rows.append([title, *(_spread(lv["calls"][key], se=key == "total")
                             for lv in levels)])
    if all(lv.get("judge") for lv in levels):  # the judge's calls: their own phase
        rows.append(["judge (own calls)", *(
            f"{lv['judge']['calls']['mean']:.0f} ({lv['judge']['per_answer']:.1f}/answer)"
            for lv in levels)])
    return _table(rows)


def _reach_rows(levels: list[dict[str, Any]], heads: list[str],
                margin: float | None = None) -> list[str]:
    """The budget that makes each decision reachable at each noise level."""
    extra = (f", plus {margin:.0%} at a noise above zero for an agent unlike the synthetic "
             "one" if margin else "")
    out = ["", "budget that makes each decision reachable (every simulated run took it "
            "within that many calls, and at least the mean plus 3 standard deviations, so "
            f"that runs not simulated fit too{extra}; '-' = not taken):"]
    rows = [["decision", *heads]]
    for key in levels[0]["reach"]:
        title = ("the whole run, complete" if key == "run"
                 else f"relation '{key.split(':', 1)[1]}'" if key.startswith("relation:")
                 else f"{key} call")
        cells = []
        for lv in levels:
            r = lv["reach"][key]
            took = "/".join(r["decisions"])
            cells.append(f"{r['budget']} {took}" if r["budget"] is not None else f"- {took}")
        rows.append([title, *cells])
    out += _table(rows)
    return out


def _screen_lines(d: dict[str, Any]) -> list[str]:
    """The per-input screen's follow-up draws, and the exact floor of a HOLDS."""
    levels = d["levels"]
    out: list[str] = []
    scr = [lv.get("screen") for lv in levels]
    if all(scr):
        first = scr[0]
        out.append(f"per-input screen at size {first['size']:g}, power {first['power']:.2g} "
                   "(every input of every relation not VIOLATED; included above): follow-up "
                   "draws per input and relation " + "; ".join(
                       f"{_pct(lv['noise'])}: {s['follow_ups'] or 'beyond the cap'}"
                       + (f" (90%: {s['follow_ups_p90']}; {s['added_follow_ups']} beyond the "
                          f"{s['follow_ups'] - s['added_follow_ups']} a quiet input needs)"
                          if s["added_follow_ups"] is not None else "")
                       + (f", {s['not_screened_pct']}% not screened (noise)"
                          if s["not_screened_pct"] else "")
                       for lv, s in zip(levels, scr, strict=True)))
    if d["hold_floor"]:
        out.append(f"no run can reach HOLDS on a relation here in fewer than "
                   f"{d['hold_floor']} calls besides the meter's (the exact floor)")
    return out


def _cost_lines(d: dict[str, Any]) -> list[str]:
    """Wall time, tokens and cost at each noise level, when their rates are given."""
    cfg, levels = d["config"], d["levels"]
    out: list[str] = []
    if cfg["latency_s"] is not None:
        out += ["", f"wall time at {cfg['latency_s']:g} s per call and {cfg['max_workers']} "
                "worker(s) (calls x latency / workers):"]
        out.append("  " + "; ".join(
            f"{_pct(lv['noise'])}: {_duration(lv['wall_s']['mean'])} "
            f"(up to {_duration(lv['wall_s']['high'])})" for lv in levels))
    tpc = d.get("tokens_per_call")
    if tpc is not None:
        out += ["", f"tokens at {tpc['input']:.4g} in + {tpc['output']:.4g} out per call "
                f"({_source(tpc)}):"]
        out.append("  " + "; ".join(
            f"{_pct(lv['noise'])}: {_big(lv['tokens']['total']['mean'])} "
            f"(up to {_big(lv['tokens']['total']['high'])})" for lv in levels if "tokens" in lv))
        price = d.get("price")
        if price is not None:
            cur = price.get("currency") or "USD"
            out += [f"cost at {price['input_per_1k']:g}/{price['output_per_1k']:g} {cur} per "
                    f"1k tokens in/out" + (f" ({price['model']})" if price.get("model") else "")
                    + ":"]
            out.append("  " + "; ".join(
                f"{_pct(lv['noise'])}: {lv['cost']['mean']:.4g} {cur} (up to "
                f"{lv['cost']['high']:.4g})" for lv in levels if "cost" in lv))
    return out


def _budget_lines(d: dict[str, Any]) -> list[str]:
    """Whether ``--budget`` is enough for the whole run at each noise level."""
    cfg, levels = d["config"], d["levels"]
    out: list[str] = []
    if cfg["budget"] is not None:
        ok = [_pct(lv["noise"]) for lv in levels if lv.get("budget_enough")]
        short = [_pct(lv["noise"]) for lv in levels if not lv.get("budget_enough")]
        msg = f"{setting('budget', cfg['budget'])}: "
        if ok:
            msg += f"enough for the whole run at noise {', '.join(ok)}"
            if short:
                msg += f"; not always at {', '.join(short)}"
        else:
            msg += "not always enough for the whole run at any noise level planned"
        out += ["", msg]
    return out
