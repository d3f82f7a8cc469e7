"""Markdown reports (``--format markdown``): a job summary or a pull-request comment.

The bodies of run, snapshot, check, bench and compare (``<kind>_lines``; the other kinds'
are in ``_markdown_kinds``); the registry (``_registry``) holds which goes with which kind
and ``render_markdown`` (``_kinds``) frames it. Each kind is a heading with the exit code
and its meaning, a table of the decisions (status, estimate or interval, calls), the
counterexamples (minimal ones first), the calls and the privacy line, and a relative link
to the HTML report when one was written beside it. Every value an agent or a file supplied
goes through :mod:`._md` (code spans, escaped text); inputs appear by text only where the
JSON holds their text (``--include-inputs``), else by fingerprint, as in the text and HTML
reports written to a file.
"""

from __future__ import annotations

from typing import Any

from ..decide import account
from ._md import code, esc, head, label, meaning, num, table

__all__ = ["bench_lines", "check_lines", "compare_lines", "run_lines", "snapshot_lines"]

# -- run (and assess) ----------------------------------------------------------------------


def run_lines(d: dict[str, Any], labels: dict[str, str] | None = None) -> list[str]:
    from ._text import (
        bounds_text,
        confirmed_inputs_of,
        edits_text,
        exit_meaning,
        inputs_of,
        shown_effect,
    )

    m, b = d.get("meter") or {}, d.get("blindness") or {}
    names = {**(d.get("inputs") or {}), **(labels or {})}
    ev = (d.get("ledger") or {}).get("evidence")
    title = "assess" if isinstance(ev, dict) else "run"
    calls = d.get("calls") or {}
    out = head(title, d, exit_meaning(d), f"Agent {code(d.get('agent'))} · "
                f"{len(m.get('per_input') or ())} inputs · {calls.get('total', 0)} agent calls"
                + (f" · recorded evidence from {code(ev.get('source'))}, no agent call"
                   if isinstance(ev, dict) else ""))
    rows = []
    level = f"{(1 - float(m.get('alpha') or 0.05)) * 100:g}%"
    if m:
        rows.append(["meter", f"**{esc(m.get('call'))}** at epsilon {num(m.get('epsilon'), 'g')}",
                     f"pair disagreement {num(m.get('estimate'))}, {level} CI "
                     f"[{num(m.get('ci_low'))}, {num(m.get('ci_high'))}] ({m.get('pairs')} "
                     "pairs)" + _whole_run(d.get("noise")),
                     str(calls.get("meter", m.get("calls", "–")))])
    if b:
        share = (f"{code(b.get('modal_verdict'))} {num(b.get('share'), '.0%')} of "
                 f"{b.get('sample')}, CI [{num(b.get('ci_low'))}, {num(b.get('ci_high'))}]"
                 if b.get("sample") else "no sample")
        rows.append(["blindness", f"**{esc(b.get('status'))}** (threshold "
                     f"{num(b.get('threshold'), 'g')})", share, str(calls.get("blindness", "–"))])
    dep = d.get("dependence")
    if isinstance(dep, dict):
        rows.append(["dependent draws", f"**{esc(dep.get('status'))}**",
                     f"e-value {num(dep.get('e_value'), '.3g', 'inf')} vs 1/"
                     f"{num(dep.get('alpha'), 'g')}", str(calls.get("dependence", "–"))])
    ch = d.get("stationarity")
    if isinstance(ch, dict):
        rows.append(["agent changed during the run", f"**{esc(ch.get('status'))}**",
                     f"e-value {num(ch.get('e_value'), '.3g', 'inf')}",
                     str(calls.get("stationarity", "–"))])
    jd = d.get("judge")
    if isinstance(jd, dict):  # the judge's noise beside the agent's, its own calls
        noise = jd.get("noise") or {}
        iv = [*(noise.get("interval") or ()), None, None]
        rows.append(["judge (identical answers)", f"**{esc(jd.get('dominant') or 'n/a')}** "
                     "dominates", f"disagreement {num(noise.get('disagreement'))}, CI "
                     f"[{num(iv[0])}, {num(iv[1])}]; error rate "
                     f"{num(noise.get('error_rate'))}",
                     str((jd.get("calls") or {}).get("judge", "–"))])
    out += ["#### Diagnostics", "", *table(("check", "status", "estimate / interval", "calls"),
                                            rows, align="lllr"), ""]
    rels = d.get("relations") or []
    if rels:
        rrows = []
        for r in rels:
            e = shown_effect(r)
            rrows.append([code(r.get("name")), f"**{esc(r.get('status'))}**",
                          num(e.get("estimate"), "+.3f") if e else "–",
                          esc(bounds_text(e, (d.get("config") or {}).get("tolerance")))
                          if e else "–", str(inputs_of(r)),
                          str(confirmed_inputs_of(r)), str(r.get("draws", "–")),
                          esc(edits_text(r["edits"])) if r.get("edits") else "–"])
        tolerance = (d.get("config") or {}).get("tolerance")
        out += [f"#### Relations (effect = excess disagreement; tolerance "
                f"{num(tolerance, 'g')})", "",
                *table(("relation", "status", "effect", "bounds", "inputs", "confirmed",
                        "draws", "edits tried"), rrows, align="llllrrrl"), ""]
        prof = d.get("profile") or {}
        if prof.get("guarantee"):
            g = str(prof["guarantee"])
            out += [esc(g[:1].upper() + g[1:]), ""]
        cx = []
        follow = d.get("follow_ups") or {}
        for r in rels:
            for o in r.get("outcomes") or ():
                if o.get("status") != "confirmed":
                    continue
                c = o.get("decision") or {}
                text = names.get(str(o.get("fp")))
                cx.append((len(text) if isinstance(text, str) else 10**9, [
                    code(r.get("name")) + (f" ({esc(o['edit'])})" if o.get("edit") else ""),
                    label(o.get("fp"), names),
                    code(follow.get(o.get("follow_up_fp"))) if o.get("follow_up_fp") in follow
                    else "–",
                    f"{code(o.get('source_value'))} → {code(o.get('follow_up_value'))}",
                    f"{c.get('follow_up_violations')}/{c.get('follow_up_draws')} vs "
                    f"{c.get('source_violations')}/{c.get('source_draws')}",
                    account(c).inequality()]))
        if cx:
            cx.sort(key=lambda t: t[0])  # the shortest (most minimal) inputs first
            out += ["#### Counterexamples (confirmed beyond the agent's noise)", "",
                    *table(("relation", "input", "follow-up", "verdict", "follow-up vs source "
                            "re-draws violating", "e-value"), [r for _, r in cx], align="lllllr"),
                    ""]
    findings = d.get("findings") or []
    if findings:
        out += ["#### Findings", "", *[f"- {esc(f)}" for f in findings], ""]
    if d.get("guarantee"):
        out += [f"Guarantee: {esc(d['guarantee'])}", ""]
    out += [_calls_line(calls, d.get("ledger") or {}), ""]
    return out


def _calls_line(calls: dict[str, Any], led: dict[str, Any]) -> str:
    # the live calls per phase, their sum the total; draws replayed from a store are no
    # phase's calls and are said apart
    parts = [f"{k} {v}" for k, v in calls.items()
             if isinstance(v, int) and not isinstance(v, bool)
             and k not in ("total", "live", "replayed")]
    tokens = led.get("total_tokens")
    replayed = calls.get("replayed")
    return (f"Calls: {calls.get('total', led.get('calls', 0))} ("
            + (", ".join(parts) or "–") + ")"
            + (f" · replayed {replayed} draws from the store" if replayed else "")
            + (f" · tokens {tokens}" if isinstance(tokens, int) else ""))


# -- snapshot and check --------------------------------------------------------------------


def snapshot_lines(d: dict[str, Any], labels: dict[str, str] | None = None) -> list[str]:
    from ._snapshot import SNAPSHOT_EXIT

    adm = d.get("admission") or {}
    out = head("snapshot", d, meaning(SNAPSHOT_EXIT, d),
                f"Agent {code(d.get('agent'))} · {len(d.get('inputs') or ())} inputs · "
                f"{(d.get('calls') or {}).get('total', 0)} agent calls")
    rows = [[code(r.get("rule")), "ok" if r.get("passed") else "**refused**",
             esc(r.get("message"))] for r in adm.get("rules") or ()]
    rows.sort(key=lambda r: r[1] == "ok")  # refusals first
    out += ["#### Admission rules", "", *table(("rule", "status", "detail"), rows), ""]
    m = d.get("meter") or {}
    out.append(f"Meter **{esc(m.get('call'))}**: pair disagreement CI "
               f"[{num(m.get('ci_low'))}, {num(m.get('ci_high'))}] from {m.get('pairs')} pairs")
    cal = d.get("calibration") or {}
    for what in ("borderline", "untestable"):
        fps = cal.get(what) or []
        if fps:
            out.append(f"- {len(fps)} {what} input(s): "
                       + ", ".join(label(f, labels) for f in fps[:10])
                       + (" …" if len(fps) > 10 else ""))
    out += ["", _calls_line(d.get("calls") or {}, {}), ""]
    return out


def _ratio(c: tuple[int, int] | None) -> str:
    return "–" if not c else f"{c[0]}/{c[1]} ({c[0] / c[1]:.0%})" if c[1] else "–"


def check_lines(d: dict[str, Any], labels: dict[str, str] | None = None) -> list[str]:
    from ._snapshot import CHECK_EXIT, check_moves, moves_said, screen_said

    s, adm = d.get("snapshot") or {}, d.get("admission") or {}
    out = head("check", d, meaning(CHECK_EXIT, d),
                f"Agent {code(d.get('agent'))} against the snapshot of "
                f"{code(s.get('created_at'))} ({s.get('inputs')} inputs, agent "
                f"{code(s.get('agent'))})")
    rows = []
    if adm.get("n"):
        said = {"low": "re-admitted", "high": "not re-admitted"}.get(str(adm.get("call")),
                                                                     "undecided")
        rows.append(["re-admission (SPRT)", f"**{said}**",
                     f"{esc(screen_said(d))} (p0 {num(adm.get('p0'), 'g')} vs p1 "
                     f"{num(adm.get('p1'), 'g')})",
                     str((d.get("calls") or {}).get("screen", "–"))])
    st = d.get("stability")
    if isinstance(st, dict):
        rows.append(["stability rerun", f"**{esc(st.get('call'))}**",
                     f"CI [{num(st.get('ci_low'))}, {num(st.get('ci_high'))}]",
                     str(st.get("calls", "–"))])
    ch = d.get("stationarity")
    if isinstance(ch, dict):
        rows.append(["agent changed during the check", f"**{esc(ch.get('status'))}**",
                     f"e-value {num(ch.get('e_value'), '.3g', 'inf')}", str(ch.get("calls"))])
    for r in d.get("inadmissible") or ():
        rows.append([f"not admissible: {code(r.get('rule'))}", "**refused**",
                     esc(r.get("message")), "–"])
    out += ["#### Decisions", "", *table(("decision", "status", "evidence", "calls"), rows,
                                         align="lllr"), ""]
    moves = check_moves(d)
    if moves:
        out += [f"#### What moved: {moves_said(moves)}", "",
                *table(("input", "kind", "reference", "now", "mismatch rate then", "now",
                        "p (family)"),
                       [[label(r["fp"], labels), f"**{r['kind']}**"
                         + (" (borderline in the snapshot)" if r["borderline"] else ""),
                         code(r["reference"]), code(r["current"]) if r["current"] else "–",
                         _ratio(r["then"]), _ratio(r["now"]), num(r["p_family"], ".2g")]
                        for r in moves], align="llllrrr"), "",
                "<sub>changed: drift confirmed (the reference drawn less often than when the "
                "snapshot was made and than 1 − tolerance); flaky: a mismatch in the screen that "
                "the confirmation draws put down to the agent's own noise (a stochastic "
                "verdict), not a change.</sub>", ""]
    dr = d.get("drift") or {}
    clean = sum(1 for e in d.get("inputs") or () if e.get("status") == "clean")
    out.append(f"{clean} clean · {dr.get('inputs', 0)} drifted of {len(d.get('inputs') or ())} "
               "inputs")
    if dr.get("guarantee"):
        out += ["", f"Guarantee: {esc(dr['guarantee'])}"]
    calls = d.get("calls") or {}
    out += ["", _calls_line({k: v for k, v in calls.items()
                             if k not in ("full_rerun_estimate", "saved")}, {})
            + f" vs ~{calls.get('full_rerun_estimate', '?')} for a full re-run", ""]
    return out


# -- bench and compare -----------------------------------------------------------------------


def bench_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._bench import BENCH_EXIT

    b, s = d.get("benchmark") or {}, d.get("summary") or {}
    stop = (d.get("config") or {}).get("early_stop")
    out = head("bench", d, meaning(BENCH_EXIT, d),
                f"Agent {code(d.get('agent'))} · benchmark {code(b.get('name'))} · "
                f"{b.get('tasks')} tasks · early stop {code(stop)}")
    order = {"FAIL": 0, "ERROR": 1, "UNDECIDED": 2, "INCOMPLETE": 3, "PASS": 4}
    tasks = sorted(d.get("tasks") or (), key=lambda t: order.get(str(t.get("status")), 5))
    rows = [[code(t.get("id")), f"**{esc(t.get('status'))}**",
             f"{t.get('passes')}/{t.get('runs')}", num(t.get("observed_rate"), ".2f"),
             f"[{num(t.get('ci_low'), '.2f')}, {num(t.get('ci_high'), '.2f')}]",
             str(t.get("runs")), esc(t.get("decided_by") or t.get("stop_reason"))]
            for t in tasks]
    out += ["#### Tasks", "", *table(("task", "status", "passed", "rate", "interval", "calls",
                                      "decided by"), rows, align="llrrlrl"), ""]
    bad = [t for t in tasks if t.get("status") in ("FAIL", "ERROR")]
    if bad:
        out += ["#### Failing tasks", ""]
        for t in bad[:20]:
            msg = next((a.get("message") for a in t.get("attempts") or ()
                        if a.get("status") != "PASS" and a.get("message")), None)
            out.append(f"- {code(t.get('id'))} ({esc(t.get('evaluation'))})"
                       + (f": {esc(msg, limit=300)}" if msg else ""))
        out.append("")
    moved = d.get("moved")
    if isinstance(moved, dict):
        out += _bench_moves(moved)
    out += [f"Tasks: {s.get('passed')} passed · {s.get('failed')} failed · {s.get('errored')} "
            f"errored" + (f" · {s.get('undecided')} undecided" if s.get("undecided") else "")
            + (f" · {s.get('incomplete')} incomplete" if s.get("incomplete") else ""), ""]
    if d.get("guarantee"):
        out += [f"Guarantee: {esc(d['guarantee'])}", ""]
    calls = d.get("calls") or {}
    out += [f"Calls: {calls.get('ledger_calls', calls.get('attempts'))} (runs "
            f"{calls.get('attempts')} of {calls.get('planned')} planned, early stopping saved "
            f"{calls.get('saved')})", ""]
    return out


def _bench_moves(moved: dict[str, Any]) -> list[str]:
    tasks = moved.get("tasks") or []
    shown = [t for t in tasks if t.get("kind") != "same"]
    out = [f"#### What moved since the baseline: {moved.get('changed', 0)} changed, "
           f"{moved.get('flaky', 0)} flaky", ""]
    if shown:
        out += table(("task", "kind", "status then → now", "pass rate then", "now", "Δ"),
                     [[code(t.get("id")), f"**{esc(t.get('kind'))}**",
                       f"{esc(t.get('before_status'))} → {esc(t.get('status'))}",
                       _ratio(tuple(t["before"]) if t.get("before") else None),
                       _ratio(tuple(t["now"]) if t.get("now") else None),
                       num(t.get("delta"), "+.2f")] for t in shown], align="lllrrr")
        out.append("")
    if moved.get("note"):
        out += [f"<sub>{esc(moved['note'])}</sub>", ""]
    return out


def compare_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._bench import COMPARE_EXIT

    b = d.get("benchmark") or {}
    agents = "; ".join(f"{esc(a.get('label'))} = {code(a.get('ref') or a.get('agent'))}"
                       for a in d.get("agents") or ())
    out = head("compare", d, meaning(COMPARE_EXIT, d),
                f"Benchmark {code(b.get('name'))} · {b.get('tasks')} tasks · {d.get('rounds')} "
                f"paired runs per task · {agents}")
    rows = []
    for p in d.get("pairs") or ():
        for name, m in (p.get("metrics") or {}).items():
            iv = m.get("interval") or [None, None]
            eq = m.get("equivalence") or {}
            verdict = m.get("verdict")
            rows.append([f"{esc(p.get('a'))} vs {esc(p.get('b'))}", code(name),
                         f"**{esc(verdict)}**", num(m.get("effect"), "+.3f"),
                         f"[{num(iv[0], '+.3f')}, {num(iv[1], '+.3f')}]",
                         f"{num(m.get('verdict_e_value'), '.3g')} vs "
                         f"{num(m.get('threshold'), '.3g')}"
                         + (f"; equivalence {esc(eq.get('verdict'))}" if eq else ""),
                         f"{m.get('wins')}:{m.get('losses')}"])
    out += ["#### Verdicts", "", *table(("pair", "metric", "verdict", "effect", "interval",
                                          "E vs 1/alpha", "wins:losses"), rows,
                                         align="lllrlll"), ""]
    per_task = [[f"{esc(p.get('a'))} vs {esc(p.get('b'))}", code(t.get("id")), code(name),
                 f"**{esc(m.get('verdict'))}**", num(m.get("effect"), "+.2f")]
                for p in d.get("pairs") or () for t in p.get("tasks") or ()
                for name, m in (t.get("metrics") or {}).items() if m.get("better")]
    if per_task:
        out += ["#### Decided per task", "", *table(("pair", "task", "metric", "verdict",
                                                     "effect"), per_task, align="llllr"), ""]
    for r in d.get("regressions") or ():
        out.append(f"- **Regression**: {esc(r)}")
    if d.get("regressions"):
        out.append("")
    if d.get("guarantee"):
        out += [f"Guarantee: {esc(d['guarantee'])}", ""]
    calls = d.get("calls") or {}
    out += [f"Calls: {calls.get('total')} ("
            + ", ".join(f"{esc(k)} {v}" for k, v in (calls.get("per_agent") or {}).items())
            + f"; warm-up {calls.get('warmup', 0)})", ""]
    return out


def _whole_run(noise: Any) -> str:
    """The pair disagreement over every source draw of the run (the figure to plan with)."""
    if not isinstance(noise, dict) or noise.get("pair_disagreement") is None:
        return ""
    return (f"; over the whole run {num(noise.get('pair_disagreement'))} on "
            f"{noise.get('inputs')} inputs ({noise.get('pairs')} pairs)")
