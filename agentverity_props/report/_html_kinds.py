"""Per-kind view models for the HTML reports: plain dicts and SVG plots from a result dict.

Each ``*_context`` reads only the versioned JSON (docs/schemas/*.schema.json) and returns
the extra template variables of ``templates/<kind>.html.j2``. They read defensively
(``.get`` with defaults) but may raise KeyError/TypeError on a badly malformed file; the
caller then falls back to the generic tree view.
"""

from __future__ import annotations

from typing import Any

from . import _plots as P

RUN_EXIT = {0: "clean: measured, not blind, no confirmed violation",
            1: "finding: blind probe set or confirmed violation",
            2: "incomplete or undecided evidence (or bad input)"}
TOOLS_EXIT = {0: "every case passed", 1: "at least one case failed",
              2: "incomplete: a case errored or its pass rate is undecided"}

_CALL_CLASS = {"verdict-deterministic": "good", "verdict-stochastic": "warn",
               "undecided": "bad"}
_BLIND_CLASS = {"blind": "bad", "ok": "good", "undecided": "warn", "suppressed": "muted"}
_REL_CLASS = {"VIOLATED": "bad", "HOLDS": "good", "NOT EXERCISED": "warn",
              "INCOMPLETE": "bad"}
_CASE_CLASS = {"pass": "good", "fail": "bad", "error": "bad", "inconclusive": "warn"}


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def _int(v: Any) -> int:
    return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0


def _counts_text(counts: Any) -> str:
    if not isinstance(counts, dict):
        return "–"
    return ", ".join(f"{k} ×{v}" for k, v in sorted(counts.items(), key=lambda kv: -_int(kv[1])))


# --------------------------------------------------------------------------------------- run


def run_context(d: dict[str, Any]) -> dict[str, Any]:
    m = d["meter"]
    b = d.get("blindness") or {}
    cfg = d.get("config") or {}
    inputs = d.get("inputs") or {}
    epsilon = _num(m.get("epsilon")) or _num(cfg.get("epsilon")) or 0.05
    indiff = _num(m.get("indifference")) or _num(cfg.get("indifference")) or 2.0

    per_input = []
    for e in m.get("per_input") or []:
        counts = e.get("counts") or {}
        per_input.append({"fp": e.get("fp"), "label": inputs.get(e.get("fp")),
                          "draws": e.get("draws"), "pairs": e.get("pairs"),
                          "flips": e.get("flips"), "failures": e.get("failures"),
                          "counts": _counts_text(counts), "mixed": len(counts) > 1})
    per_input.sort(key=lambda e: (-_int(e["flips"]), -_int(e["failures"])))

    relations, confirmed, marks = [], [], []
    for r in d.get("relations") or []:
        n = _int(r.get("exercised"))
        raw, cal = _int(r.get("raw_violations")), _int(r.get("calibrated_violations"))
        raw_ci, cal_ci = P.wilson(raw, n), P.wilson(cal, n)
        relations.append({**r, "cls": _REL_CLASS.get(r.get("status"), "muted"),
                          "raw_rate": raw / n if n else None, "raw_ci": raw_ci if n else None,
                          "cal_rate": cal / n if n else None, "cal_ci": cal_ci if n else None})
        if n:
            name = str(r.get("name"))
            marks.append(P.Interval(name, raw / n, *raw_ci, color=P.GREY, offset=-0.17))
            marks.append(P.Interval(name, cal / n, *cal_ci, color=P.RED if cal else P.GREEN,
                                    offset=0.17, marker="s"))
        for o in r.get("outcomes") or []:
            if o.get("status") != "confirmed":
                continue
            c = o.get("confirmation") or {}
            confirmed.append({"relation": r.get("name"), "fp": o.get("fp"),
                              "label": inputs.get(o.get("fp")),
                              "follow_up_label": inputs.get(o.get("follow_up_fp")),
                              "source_value": o.get("source_value"),
                              "follow_up_value": o.get("follow_up_value"), "c": c,
                              "note": o.get("note")})

    hist = m.get("history") or []
    dist = b.get("distribution") or {}
    highs = [x.high for x in marks if x.high is not None]
    plots = {
        "meter": P.meter_history_svg(hist, epsilon=epsilon, indifference=indiff,
                                     estimate=_num(m.get("estimate"))),
        "verdicts": P.bar_svg(dist, total=_int(b.get("sample")) or None,
                              threshold=_num(b.get("threshold")),
                              highlight=b.get("modal_verdict"),
                              title="verdict distribution (blindness sample)",
                              xlabel="share of sampled verdicts"),
        "relations": P.intervals_svg(
            marks, title="relation violation rates with 95% Wilson intervals",
            xlabel="violations / exercised inputs",
            xlim=(0.0, min(1.0, max([*highs, 0.05]) * 1.08)),
            legend=[("o", P.GREY, "raw (screen flips)"),
                    ("s", P.RED, "calibrated (beyond noise)")]),
    }
    calls = d.get("calls") or {}
    ledger = d.get("ledger") or {}
    return {
        "exit_meanings": RUN_EXIT, "m": m, "b": b, "cfg": cfg, "plots": plots,
        "epsilon": epsilon, "indifference": indiff,
        "lower_bound": epsilon / indiff, "upper_bound": epsilon * indiff,
        "call_class": _CALL_CLASS.get(m.get("call"), "muted"),
        "blind_class": _BLIND_CLASS.get(b.get("status"), "muted"),
        "flipped": sum(1 for e in per_input if e["mixed"]),
        "per_input": per_input, "relations": relations, "confirmed": confirmed,
        "calls": calls, "ledger": {k: v for k, v in ledger.items()
                                   if not isinstance(v, (dict, list)) or v},
        "findings": d.get("findings") or [], "inputs_included": bool(inputs),
        "n_inputs": len(per_input), "summary": [
            ("meter", m.get("call"), _CALL_CLASS.get(m.get("call"), "muted")),
            ("blindness", b.get("status"), _BLIND_CLASS.get(b.get("status"), "muted")),
            ("relations violated", str(sum(r.get("status") == "VIOLATED" for r in relations)),
             "bad" if any(r.get("status") == "VIOLATED" for r in relations) else "good"),
            ("complete", "yes" if d.get("complete", m.get("complete")) else "no",
             "good" if d.get("complete", m.get("complete")) else "bad"),
        ],
    }


# ------------------------------------------------------------------------------------- tools


def tools_context(d: dict[str, Any]) -> dict[str, Any]:
    cases, marks = [], []
    thresholds = {_num(c.get("min_pass_rate")) for c in d["cases"]}
    single = len(thresholds) == 1 and None not in thresholds
    for c in d["cases"]:
        n = _int(c.get("passed")) + _int(c.get("failed"))
        interval = c.get("interval")
        if not (isinstance(interval, list) and len(interval) == 2) and n:
            interval = list(P.wilson(_int(c.get("passed")), n))
        runs = [{**r, "fired_text": ", ".join(map(str, r.get("fired") or [])) or "none",
                 "cls": _CASE_CLASS.get(r.get("status"), "muted")}
                for r in c.get("runs") or []]
        cases.append({**c, "cls": _CASE_CLASS.get(c.get("status"), "muted"), "n": n,
                      "ci": interval, "run_rows": runs})
        if n:
            marks.append(P.Interval(str(c.get("name")), _num(c.get("pass_rate")),
                                    *interval, color=P.GREEN if c.get("status") == "pass" else
                                    P.RED if c.get("status") == "fail" else P.ORANGE,
                                    ref=None if single else _num(c.get("min_pass_rate"))))
    vlines = []
    if single:
        (t,) = thresholds
        vlines.append((t, P.RED, f"min pass rate {t:g}"))
    elif marks:
        vlines = []
    summary = d.get("summary") or {}
    plots = {"cases": P.intervals_svg(
        marks, title="per-case pass rates with intervals", xlabel="pass rate",
        xlim=(-0.02, 1.02), vlines=vlines,
        legend=[] if single else [("d", P.RED, "case's min pass rate")])}
    return {"exit_meanings": TOOLS_EXIT, "cases": cases, "plots": plots,
            "summary": [(k, str(v), _CASE_CLASS.get(k, "muted") if v else "muted")
                        for k, v in summary.items()]}
