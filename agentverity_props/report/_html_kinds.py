"""Per-kind view models for the HTML reports: plain dicts and SVG plots from a result dict.

Each ``*_context`` reads only the versioned JSON (docs/schemas/*.schema.json) and returns
the extra template variables of ``templates/<kind>.html.j2``. They read defensively
(``.get`` with defaults) but may raise KeyError/TypeError on a badly malformed file; the
caller then falls back to the generic tree view.
"""

from __future__ import annotations

from typing import Any

from .._internal.fingerprint import short as short_fp
from ..decide import account
from . import _plots as P
from ._text import EXIT_MEANING as RUN_EXIT
from ._text import bounds_text, shown_effect
from ._text import exit_meaning as run_exit_meaning
from ._tools import TOOLS_EXIT

_CALL_CLASS = {"verdict-deterministic": "good", "verdict-stochastic": "warn",
               "undecided": "bad"}
_BLIND_CLASS = {"blind": "bad", "ok": "good", "undecided": "warn", "suppressed": "muted"}
_REL_CLASS = {"UNDECIDED": "warn", "VIOLATED": "bad", "HOLDS": "good", "NOT EXERCISED": "warn",
              "NOT TESTED": "bad",
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
    tolerance = _num(cfg.get("tolerance"))
    for r in d.get("relations") or []:
        # the terminal's rule: a relation not exercised shows no effect (a dash)
        eff = shown_effect(r) or {}
        est, lo, hi = _num(eff.get("estimate")), _num(eff.get("lower")), _num(eff.get("upper"))
        from ._text import edits_text
        relations.append({**r, "cls": _REL_CLASS.get(r.get("status"), "muted"),
                          "estimate": est, "lower": lo, "upper": hi,
                          "edits_line": edits_text(r["edits"]) if r.get("edits") else "",
                          "bounds": bounds_text(eff, tolerance)})
        if est is not None and r.get("status") != "NOT EXERCISED":
            color = {"VIOLATED": P.RED, "HOLDS": P.GREEN}.get(str(r.get("status")), P.GREY)
            marks.append(P.Interval(str(r.get("name")), est, lo, hi, color=color))
        for o in r.get("outcomes") or []:
            if o.get("status") != "confirmed":
                continue
            c = o.get("decision") or {}
            confirmed.append({"relation": r.get("name") + (f" ({o['edit']})" if o.get("edit")
                                                           else ""), "fp": o.get("fp"),
                              "label": inputs.get(o.get("fp")),
                              "follow_up_label": (d.get("follow_ups") or {}).get(
                                  o.get("follow_up_fp")) or inputs.get(o.get("follow_up_fp")),
                              "source_value": o.get("source_value"),
                              "follow_up_value": o.get("follow_up_value"), "c": c,
                              "evidence": account(c).inequality(),
                              "note": o.get("note")})

    hist = m.get("history") or []
    dist = b.get("distribution") or {}
    highs = [x.high for x in marks if x.high is not None]
    plots = {
        "meter": P.meter_history_svg(hist, epsilon=epsilon, indifference=indiff,
                                     estimate=_num(m.get("estimate")),
                                     alpha=_num(m.get("alpha")) or 0.05),
        "verdicts": P.bar_svg(dist, total=_int(b.get("sample")) or None,
                              threshold=_num(b.get("threshold")),
                              highlight=b.get("modal_verdict"),
                              title="verdict distribution (blindness sample)",
                              xlabel="share of sampled verdicts"),
        "relations": P.intervals_svg(
            marks, title="relation effects with their confidence bounds",
            xlabel="effect: excess share of verdicts the transform changes",
            xlim=(min([x.low for x in marks if x.low is not None] + [-0.05]) * 1.08,
                  min(1.0, max([*highs, (tolerance or 0.1)]) * 1.15)),
            vlines=[(tolerance, P.RED, f"tolerance {tolerance:g}")] if tolerance else [],
            legend=[("o", P.GREEN, "HOLDS"), ("o", P.RED, "VIOLATED"),
                    ("o", P.GREY, "undecided")]),
    }
    calls = d.get("calls") or {}
    ledger = d.get("ledger") or {}
    return {
        "exit_meanings": {**RUN_EXIT, 0: run_exit_meaning({**d, "exit_code": 0}),
                          1: run_exit_meaning({**d, "exit_code": 1})},
        "m": m, "b": b, "cfg": cfg, "plots": plots,
        "epsilon": epsilon, "indifference": indiff,
        "lower_bound": epsilon / indiff, "upper_bound": epsilon * indiff,
        "call_class": _CALL_CLASS.get(str(m.get("call")), "muted"),
        "blind_class": _BLIND_CLASS.get(str(b.get("status")), "muted"),
        "flipped": sum(1 for e in per_input if e["mixed"]),
        "per_input": per_input, "relations": relations, "confirmed": confirmed,
        "profile": d.get("profile"),
        "calls": calls, "ledger": {k: v for k, v in ledger.items()
                                   if not isinstance(v, (dict, list)) or v},
        "tokens": _tokens(d.get("tokens")),
        "findings": d.get("findings") or [], "inputs_included": bool(inputs),
        "routes": _routes_view(d.get("routes")),
        "n_inputs": len(per_input), "summary": [
            ("meter", m.get("call"), _CALL_CLASS.get(str(m.get("call")), "muted")),
            ("blindness", b.get("status"), _BLIND_CLASS.get(str(b.get("status")), "muted")),
            ("relations violated", str(sum(r.get("status") == "VIOLATED" for r in relations)),
             "bad" if any(r.get("status") == "VIOLATED" for r in relations) else "good"),
            ("complete", "yes" if d.get("complete", m.get("complete")) else "no",
             "good" if d.get("complete", m.get("complete")) else "bad"),
        ],
    }


def _routes_view(routes: Any) -> dict[str, Any] | None:
    """The per-route rows of the run JSON ``routes``: meter pairs, and per route the
    relations' confirmed inputs and raw flips (descriptive, see docs/statistics.md §3c)."""
    if not isinstance(routes, dict) or not routes.get("meter"):
        return None
    rels = routes.get("relations") or {}
    rows = []
    for r in routes["meter"]:
        label = r.get("label")
        confirmed = [f"{name} {row.get('confirmed')}" for name, rs in rels.items() for row in rs
                     if row.get("label") == label and row.get("confirmed")]
        raw = sum(_int(row.get("raw")) for rs in rels.values() for row in rs
                  if row.get("label") == label)
        tried = sum(_int(row.get("inputs")) for rs in rels.values() for row in rs
                    if row.get("label") == label)
        rows.append({**r, "confirmed": ", ".join(confirmed) or "–",
                     "raw": f"{raw}/{tried}" if tried else "–"})
    return {"rows": rows, "confidence": _num(routes.get("confidence")) or 0.95,
            "required": routes.get("required") or [], "missing": routes.get("missing") or [],
            "unrouted": _int(routes.get("unrouted"))}


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
            color = {"pass": P.GREEN, "fail": P.RED}.get(str(c.get("status")), P.ORANGE)
            marks.append(P.Interval(str(c.get("name")), _num(c.get("pass_rate")),
                                    _num(interval[0]), _num(interval[1]), color=color,
                                    ref=None if single else _num(c.get("min_pass_rate"))))
    vlines: list[tuple[float, str, str]] = []
    if single:
        t = float(next(iter(thresholds)) or 0.0)
        vlines.append((t, P.RED, f"min pass rate {t:g}"))
    summary = d.get("summary") or {}
    plots = {"cases": P.intervals_svg(
        marks, title="per-case pass rates with intervals", xlabel="pass rate",
        xlim=(-0.02, 1.02), vlines=vlines,
        legend=[] if single else [("d", P.RED, "case's min pass rate")])}
    return {"exit_meanings": TOOLS_EXIT, "cases": cases, "plots": plots,
            "summary": [(k, str(v), _CASE_CLASS.get(k, "muted") if v else "muted")
                        for k, v in summary.items()]}


# ----------------------------------------------------------------------------------- check

_MOVE_CLASS = {"changed": "bad", "flaky": "warn"}


def _ratio(c: Any) -> str:
    return "–" if not c else f"{c[0]}/{c[1]} ({c[0] / c[1]:.0%})" if c[1] else "–"


def check_context(d: dict[str, Any]) -> dict[str, Any]:
    """The check's page: the decisions (re-admission, stability, change, refusals), what
    moved and by how much, the clean and drifted counts and the calls, in the words of its
    text and Markdown views (one derivation each: ``check_moves``, ``moves_said``,
    ``screen_said``)."""
    from ._markdown import _calls_line
    from ._snapshot import CHECK_EXIT, check_moves, moves_said, screen_said

    adm, snap = d.get("admission") or {}, d.get("snapshot") or {}
    calls = d.get("calls") or {}
    rows = []
    if adm.get("n"):
        said = {"low": "re-admitted", "high": "not re-admitted"}.get(str(adm.get("call")),
                                                                     "undecided")
        rows.append({"name": "re-admission (SPRT)", "status": said,
                     "cls": {"re-admitted": "good", "not re-admitted": "warn"}.get(said,
                                                                                   "warn"),
                     "evidence": f"{screen_said(d)} (p0 {adm.get('p0')} vs p1 "
                                 f"{adm.get('p1')})", "calls": calls.get("screen", "–")})
    st = d.get("stability")
    if isinstance(st, dict):
        ci = ("–" if st.get("ci_low") is None or st.get("ci_high") is None
              else f"CI [{st['ci_low']:.3f}, {st['ci_high']:.3f}]")
        rows.append({"name": "stability rerun", "status": st.get("call") or "not run",
                     "cls": _CALL_CLASS.get(str(st.get("call")), "muted"), "evidence": ci,
                     "calls": st.get("calls") if st.get("calls") is not None else "–"})
    ch = d.get("stationarity")
    if isinstance(ch, dict):
        rows.append({"name": "agent changed during the check", "status": ch.get("status"),
                     "cls": "bad" if ch.get("status") == "changed" else "muted",
                     "evidence": ch.get("warning") or "", "calls": ch.get("calls")})
    for r in d.get("inadmissible") or ():
        rows.append({"name": f"not admissible: {r.get('rule')}", "status": "refused",
                     "cls": "bad", "evidence": r.get("message"), "calls": "–"})
    literal = not any(str(e.get("reference", "")).startswith(("sha256:", "hmac-sha256:"))
                      for e in d.get("inputs") or ())

    def shown(v: Any) -> Any:
        return v if v is None or literal else str(v)[:19]

    moves = [{**m, "cls": _MOVE_CLASS.get(m["kind"], "warn"), "label": None,
              "reference_shown": shown(m["reference"]), "current_shown": shown(m["current"]),
              "then_text": _ratio(m["then"]), "now_text": _ratio(m["now"])}
             for m in check_moves(d)]
    marks = []
    for m in moves:
        if m["now"] and m["now"][1]:
            lo, hi = P.wilson(m["now"][0], m["now"][1])
            then = m["then"][0] / m["then"][1] if m["then"] and m["then"][1] else None
            marks.append(P.Interval(short_fp(m["fp"]), m["now"][0] / m["now"][1], lo, hi,
                                    color=P.RED if m["kind"] == "changed" else P.ORANGE,
                                    ref=then))
    tol = _num((d.get("drift") or {}).get("tolerance"))
    plots = {"moves": P.intervals_svg(
        marks, title="mismatch rate now, and then (tick)", xlabel="mismatch rate",
        xlim=(-0.02, 1.02), vlines=[] if tol is None else [(tol, P.RED, f"tolerance {tol:g}")],
        legend=[("d", P.RED, "rate recorded in the snapshot")]) if marks else None}
    dr = d.get("drift") or {}
    inputs = d.get("inputs") or []
    clean = sum(1 for e in inputs if e.get("status") == "clean")
    tally = {k: sum(1 for m in moves if m["kind"] == k) for k in ("changed", "flaky")}
    return {"exit_meanings": CHECK_EXIT, "snap": snap, "decisions": rows, "moves": moves,
            "moves_line": moves_said(moves), "plots": plots,
            "counts_line": f"{clean} clean · {dr.get('inputs', 0)} drifted of "
                           f"{len(inputs)} inputs",
            "calls_line": _calls_line({k: v for k, v in calls.items()
                                       if k not in ("full_rerun_estimate", "saved")}, {})
            + f" vs ~{calls.get('full_rerun_estimate', '?')} for a full re-run",
            "summary": [("status", str(d.get("status")),
                         {"clean": "good", "drift": "bad", "changed": "bad"}.get(
                             str(d.get("status")), "warn")),
                        ("clean", str(clean), "good" if clean else "muted"),
                        ("drifted", str(dr.get("inputs", 0)),
                         "bad" if dr.get("inputs") else "muted"),
                        ("changed", str(tally["changed"]),
                         "bad" if tally["changed"] else "muted"),
                        ("flaky", str(tally["flaky"]), "warn" if tally["flaky"] else "muted")]}


# ---------------------------------------------------------------------------- counterexample

_TEST_CLASS = {"passed": "good", "failed": "bad", "error": "bad", "inconclusive": "warn"}
CX_EXIT = {0: "every property test passed", 1: "a property test failed (confirmed violation)",
           2: "a property test errored or was inconclusive"}


def tests_exit(d: dict[str, Any]) -> int:
    """The exit code of a report of tests (counterexample and conversation results record
    none): 1 when a test failed, else 2 when one did not pass, else 0."""
    statuses = {str(t.get("status")) for t in d.get("tests") or ()}
    return 1 if "failed" in statuses else 2 if statuses - {"passed"} else 0


def diff_segments(a: str, b: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """Character diff of ``a`` and ``b`` as (kind, text) runs: kind is ``same`` or ``diff``.

    >>> diff_segments("abc", "aXc")
    ([('same', 'a'), ('diff', 'b'), ('same', 'c')], [('same', 'a'), ('diff', 'X'), ('same', 'c')])
    """
    import difflib
    sa: list[tuple[str, str]] = []
    sb: list[tuple[str, str]] = []
    if len(a) * len(b) > 4_000_000:  # quadratic worst case: skip the highlight on huge inputs
        return [("same", a)], [("same", b)]
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        kind = "same" if op == "equal" else "diff"
        if i2 > i1:
            sa.append((kind, a[i1:i2]))
        if j2 > j1:
            sb.append((kind, b[j1:j2]))
    return sa, sb


def _ce(ce: Any) -> dict[str, Any] | None:
    if not isinstance(ce, dict):
        return None
    src, fu = str(ce.get("source", "")), str(ce.get("follow_up", ""))
    src_seg, fu_seg = diff_segments(src, fu)
    c = ce.get("confirmation") or {}
    return {**ce, "c": c, "evidence": account(c).inequality(), "src_seg": src_seg,
            "fu_seg": fu_seg}


def counterexample_context(d: dict[str, Any]) -> dict[str, Any]:
    tests, marks = [], []
    for t in d["tests"]:
        minimal, first = _ce(t.get("minimal")), _ce(t.get("first"))
        same = (minimal is not None and first is not None
                and minimal.get("source") == first.get("source"))
        tests.append({**t, "cls": _TEST_CLASS.get(t.get("status"), "muted"),
                      "min": minimal, "first_ce": None if same else first})
        c = (minimal or {}).get("c") or {}
        fd, sd = _int(c.get("follow_up_draws")), _int(c.get("source_draws"))
        if minimal is not None and fd and sd:
            label = f"{minimal.get('relation')} · {str(t.get('test')).rsplit('.', 1)[-1]}"
            fv, sv = _int(c.get("follow_up_violations")), _int(c.get("source_violations"))
            marks.append(P.Interval(label, sv / sd, *P.wilson(sv, sd), color=P.GREY,
                                    offset=-0.17))
            marks.append(P.Interval(label, fv / fd, *P.wilson(fv, fd), color=P.RED,
                                    offset=0.17, marker="s"))
    statuses = [t.get("status") for t in d["tests"]]
    counts = {s: statuses.count(s) for s in ("passed", "failed", "error", "inconclusive")}
    agents = list(dict.fromkeys(str(t.get("agent")) for t in d["tests"]))
    plots = {"evidence": P.intervals_svg(
        marks, title="confirmation evidence of each minimal counterexample",
        xlabel="share of re-draws violating the relation",
        xlim=(-0.02, 1.02),
        legend=[("o", P.GREY, "source re-draws (the agent's noise)"),
                ("s", P.RED, "follow-up draws")])}
    return {"exit_meanings": CX_EXIT, "agent": ", ".join(agents) or "–", "tests": tests,
            "plots": plots,
            "summary": [(k, str(v), _TEST_CLASS[k] if v else "muted")
                        for k, v in counts.items()],
            "total_calls": sum(_int(t.get("calls")) for t in d["tests"])}


# ----------------------------------------------------------------------------------- enlarge

ENLARGE_EXIT = {0: "done: the enlarged set was decided not blind at the target share",
                1: "not done: the enlarged set is still blind or its blindness undecided "
                   "when the budget or the search ran out (the partial set is still written)",
                2: "agent calls failed: the evidence is incomplete (the set is still written)"}


def enlarge_exit(d: dict[str, Any]) -> int:
    """The exit code of the command that wrote an enlarged probe set (it records none): 2
    when incomplete, else 0 on success, 1 when the budget ran out first."""
    return 2 if not d.get("complete", True) else 0 if d.get("success") else 1


def enlarge_context(d: dict[str, Any]) -> dict[str, Any]:
    pairs = []
    for p in d["boundary_pairs"]:
        src_seg, fu_seg = diff_segments(str(p.get("source", "")), str(p.get("follow_up", "")))
        edit = p.get("edit") or {}
        pairs.append({**p, "src_seg": src_seg, "fu_seg": fu_seg,
                      "edit_name": edit.get("name", "edit") if isinstance(edit, dict) else edit,
                      "edit_rest": {k: v for k, v in edit.items() if k != "name"}
                      if isinstance(edit, dict) else {}})
    origins = []
    for o in d.get("origins") or []:
        src_seg, fu_seg = diff_segments(str(o.get("parent", "")), str(o.get("text", "")))
        origins.append({**o, "src_seg": src_seg, "fu_seg": fu_seg})
    located = [b for b in d.get("boundaries") or [] if b.get("status") == "located"]
    success = bool(d.get("success"))
    plots = {"shares": P.grouped_shares_svg(
        [("before", d.get("distribution_before") or {}, P.GREY),
         ("after", d.get("distribution_after") or {}, P.BLUE)],
        title="verdict shares before and after enlarging", threshold=_num(d.get("threshold")),
        xlabel="share of the probe set's verdicts")}
    return {"exit_meanings": ENLARGE_EXIT, "agent": "not recorded in this format", "pairs": pairs,
            "origins": origins, "located": located,
            "plots": plots,
            "summary": [("modal verdict", str(d.get("modal_verdict")), "muted"),
                        ("modal share", f"{_num(d.get('skew_before')) or 0:.0%} → "
                         f"{_num(d.get('skew_after')) or 0:.0%}", "good" if success else "warn"),
                        ("added inputs", str(len(d.get("added") or [])), "muted"),
                        ("boundary pairs", str(len(pairs)), "muted"),
                        ("calls", f"{_int(d.get('calls'))} of {_int(d.get('budget'))}",
                         "muted")]}


def _tokens(tokens: Any) -> str:
    """The text report's ``Tokens:`` line (autoescaped by the template; data made visible)."""
    from .._internal.shown import visible
    from .._internal.tokens import tokens_line
    return visible(tokens_line(tokens if isinstance(tokens, dict) else None))
