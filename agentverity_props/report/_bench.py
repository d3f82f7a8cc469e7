"""Terminal and JUnit renderers for bench/2 and compare/2 result dicts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rich.markup import escape as _e

from .._internal.settings import setting
from .._internal.shown import for_text
from ._text import _console, tokens_text

BENCH_EXIT = {0: "every task passed", 1: "a task failed or errored",
              2: "incomplete evidence (budget, interrupt, failed call) or a task undecided at "
                 "the --runs cap"}
COMPARE_EXIT = {0: "no agent is worse than the baseline (A) on pass rate",
                1: "regression: an agent is worse than the baseline (A) on pass rate",
                2: "incomplete evidence (budget or interrupt)"}
_STATUS = {"PASS": "[green]PASS[/]", "FAIL": "[red]FAIL[/]", "ERROR": "[red]ERROR[/]",
           "INCOMPLETE": "[yellow]INCOMPLETE[/]", "UNDECIDED": "[yellow]UNDECIDED[/]"}


def _f(x: Any, fmt: str = ".3f", none: str = "–") -> str:
    return none if x is None else format(x, fmt)


def _ms(x: Any) -> str:
    return "–" if x is None else f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def render_bench_text(d: dict[str, Any], *, color: bool = False, width: int = 120) -> str:
    from rich.table import Table

    d = for_text(d)  # control and bidi characters of answers and names made visible
    con = _console(color, width)
    b, s, calls = d["benchmark"], d["summary"], d["calls"]
    con.print(f"[bold]agentverity-props bench[/] · agent [cyan]{_e(d['agent'])}[/] · benchmark "
              f"[cyan]{_e(b['name'])}[/] · {b['tasks']} tasks · early stop "
              f"{d['config']['early_stop']}")
    con.print()
    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("task", "status", "pass", "fail", "err", "runs", "rate", "CI",
                "consist.", "p50", "p95", "decided by"):
        t.add_column(col, no_wrap=True, overflow="ellipsis",
                     max_width=30 if col in ("task", "decided by") else None,
                     justify="right" if col in ("pass", "fail", "err", "runs", "rate",
                                                "consist.", "p50", "p95") else "left")
    for r in d["tasks"]:
        t.add_row(_e(r["id"]), _STATUS.get(r["status"], _e(r["status"])), str(r["passes"]),
                  str(r["failures"]), str(r["errors"]), f"{r['runs']}/{r['planned_runs']}",
                  _f(r["observed_rate"], ".2f"), f"{r['ci_low']:.2f}–{r['ci_high']:.2f}",
                  _f(r["consistency"], ".2f"), _ms(r["latency_p50_s"]),
                  _ms(r["latency_p95_s"]), _e(r["decided_by"] or r["stop_reason"] or "–"))
    con.print(t)
    con.print()
    failing = [r for r in d["tasks"] if r["status"] in ("FAIL", "ERROR")]
    for r in failing[:20]:
        msg = next((a["message"] for a in r["attempts"] if a["status"] != "PASS"), "")
        con.print(f"  [red]✗[/] {_e(r['id'])} ({_e(r['evaluation'])}): {_e(msg or '')}")
    undecided = [r for r in d["tasks"] if r["status"] == "UNDECIDED"]
    for r in undecided[:20]:
        con.print(f"  [yellow]?[/] {_e(r['id'])}: {r['passes']}/{r['runs']} passed, "
                  f"{_e(r['decided_by'])}; raise {setting('runs', '')} or widen "
                  f"{setting('margin', '')}")
    if failing or undecided:
        con.print()
    if isinstance(d.get("moved"), dict):
        _print_moves(con, d["moved"])
    con.print("[dim]rate = passes / runs made, descriptive (biased when a task stopped early); "
              "CI = its interval (anytime-valid after an early stop).[/]")
    con.print(f"Tasks: {s['passed']} passed · {s['failed']} failed · {s['errored']} errored"
              + (f" · {s['undecided']} undecided" if s.get("undecided") else "")
              + (f" · {s['incomplete']} incomplete" if s["incomplete"] else ""))
    con.print(f"Runs: {s['passes']}/{s['attempts']} passed (pooled rate "
              f"{_f(s['observed_rate'], '.3f')} [{s['ci_low']:.3f}, {s['ci_high']:.3f}], "
              f"descriptive) · error rate {_f(s['error_rate'], '.3f')} · consistency "
              f"{_f(s['consistency'], '.3f')}")
    exact = str(s.get("estimator", "")).startswith("unbiased")
    how = "unbiased under the stopping rule" if exact else s.get("estimator", "")
    early = calls["saved"] > 0
    con.print(f"Reliability {_f(s['reliability'], '.3f')} (mean over tasks of each task's pass "
              f"rate, {_e(how)}" + ("; a task that stopped early counts only the runs its "
                                    "stopping rule could not have chosen, so with few tasks "
                                    "this is noisy)" if early else ")"))
    for name, key in (("pass@", "pass_at_k"), ("pass^", "pass_hat_k")):
        if s[key]:
            con.print("      " + ", ".join(_k_cell(name, k, v, s) for k, v in s[key].items()))
    if s["pass_at_k"]:
        con.print(f"[dim]pass@k: any of k runs passes; pass^k: all k pass; means over tasks "
                  f"({_e(how)}); n/a (k > runs) when a task stopped before k runs without "
                  "settling them.[/]")
    extra = ""
    if s["tokens"] is not None:
        extra += f" · tokens {s['tokens']}"
    if s["cost_usd"] is not None:
        extra += f" · cost ${s['cost_usd']:.4f}"
    con.print(f"Latency p50 {_ms(s['latency_p50_s'])} · p95 {_ms(s['latency_p95_s'])}{extra}")
    con.print(f"Calls: {calls['attempts']} runs of {calls['planned']} planned "
              f"(early stopping saved {calls['saved']}); {calls['ledger_calls']} live calls"
              + (f"; {calls['judge_calls']} judge calls" if calls.get("judge_calls") else ""))
    con.print(tokens_text(d.get("tokens")))
    code = d["exit_code"]
    con.print(f"Exit {code}: {BENCH_EXIT[code]}"
              + (_e(f" [{d['stop_reason']}]") if d.get("stop_reason") else ""))
    con.print(f"[dim]Guarantee: {_e(d['guarantee'])}[/]")
    con.print(f"[dim]Privacy: {d['privacy']}[/]")
    out: str = con.file.getvalue()
    return out


def _share(c: Any) -> str:
    return "–" if not c or not c[1] else f"{c[0]}/{c[1]} ({c[0] / c[1]:.0%})"


def _print_moves(con: Any, m: dict[str, Any]) -> None:
    """Per task, what moved since the baseline (``bench --baseline``), changed before flaky."""
    from rich.table import Table

    moved = [t for t in m.get("tasks") or () if t.get("kind") != "same"]
    con.print(f"[bold]What moved[/] since {_e(str(m.get('baseline')))}: "
              f"[red]{m.get('changed', 0)} changed[/] · [yellow]{m.get('flaky', 0)} flaky[/]"
              + ("" if m.get("same_benchmark", True) else
                 " [yellow](the baseline ran another benchmark)[/]"))
    if moved:
        t = Table(show_edge=False, pad_edge=False, box=None)
        for col in ("task", "kind", "status", "passed then", "now", "change"):
            t.add_column(col, justify="right" if col in ("passed then", "now", "change")
                         else "left")
        style = {"changed": "red", "flaky": "yellow"}
        for r in moved:
            k = str(r.get("kind"))
            t.add_row(_e(str(r.get("id"))), f"[{style.get(k, 'dim')}]{k}[/]",
                      _e(f"{r.get('before_status') or '–'} -> {r.get('status') or '–'}"),
                      _share(r.get("before")), _share(r.get("now")),
                      _f(r.get("delta"), "+.2f"))
        con.print(t)
    con.print(f"[dim]{_e(str(m.get('note') or ''))}[/]")
    con.print()


def _k_cell(name: str, k: str, v: Any, s: dict[str, Any]) -> str:
    if v is not None:
        return f"{name}{k} {v:.2f}"
    have = (s.get("pass_k_tasks") or {}).get(f"{name}{k}", 0)
    return f"{name}{k} n/a (k > runs for {s['tasks'] - have} of {s['tasks']} tasks)"


def _verdict_style(v: str) -> str:
    return "[yellow]inconclusive[/]" if v == "inconclusive" else f"[bold]{v}[/]"


def _more(m: dict[str, Any]) -> str:
    fr = m.get("further_runs")
    if not fr:
        return ""
    if fr.get("rounds") is None:
        return str(fr["note"])
    return (f"~{fr['rounds']} more runs per task likely decide it "
            f"({setting('max_runs', fr.get('max_runs_hint', '?'))}; {fr['note']})")


def _e_shown(m: dict[str, Any]) -> Any:
    """The e-value a verdict rests on: at its decision once decided, else the current one."""
    return m.get("verdict_e_value", m.get("decided_e_value") or m.get("e_value"))


def _alphas_line(mult: dict[str, Any]) -> str:
    fam = mult.get("family_alpha")
    per = mult.get("alpha_per_verdict") or {}
    each = ", ".join(f"{k.replace('_', ' ')} {v:.3g}" for k, v in per.items())
    if fam is None:
        return f"alpha per verdict: {each} (version 1 file: not family-wise)"
    pairs = mult.get("pairs")
    scope = (f"the {mult.get('verdicts')} verdicts it may reach (each pair's metrics below, "
             "and the same per task, a task printed only once decided)") if pairs else \
        f"all {mult.get('verdicts')} verdicts it may reach"
    return (f"family-wise alpha {fam:g} over {scope}; {mult.get('method')}; alpha per "
            f"verdict: {each}")


def render_compare_text(d: dict[str, Any], *, color: bool = False, width: int = 120) -> str:
    """The compare result as terminal text: the agents, the design, the verdicts table and
    its notes, regressions and the exit code."""
    d = for_text(d)  # control and bidi characters of answers and names made visible
    con = _console(color, width)
    b, calls = d["benchmark"], d["calls"]
    warm = calls.get("warmup") or 0
    con.print(f"[bold]agentverity-props compare[/] · benchmark [cyan]{_e(b['name'])}[/] · "
              f"{b['tasks']} tasks · {d['rounds']} paired runs per task · "
              f"{calls['total']} agent calls" + (f" ({warm} warm-up)" if warm else ""))
    _agent_lines(con, d)
    con.print()
    _design_line(con, d)
    mult = d["multiplicity"]
    con.print(f"[bold]Verdicts[/] (anytime-valid paired sign tests on discordant runs; "
              f"{_e(_alphas_line(mult))})")
    t, notes = _verdicts_table(d)
    con.print(t)
    if notes:
        con.print()
        for n in notes:
            con.print(_e(n))
    con.print()
    _compare_footer(con, d)
    out: str = con.file.getvalue()
    return out


def _agent_lines(con: Any, d: dict[str, Any]) -> None:
    """Each agent: its label and reference, pass and error rates, p50 latency, tokens."""
    for a in d["agents"]:
        s = a["summary"]
        ident = f" ({_e(a['agent'])})" if a.get("agent") != a.get("ref") else ""
        con.print(f"  {_e(a['label'])} = [cyan]{_e(a.get('ref') or a['agent'])}[/]{ident}: "
                  f"pass rate {_f(s['reliability'], '.3f')} ({s['passes']}/{s['attempts']}), "
                  f"error rate {_f(s['error_rate'], '.3f')}, p50 {_ms(s['latency_p50_s'])}")
        con.print(f"    {_e(a['label'])} " + tokens_text(a.get("tokens")))


def _design_line(con: Any, d: dict[str, Any]) -> None:
    """The paired design: the random order, the latency margin, the warm-up."""
    cfg = d["config"]
    orders = "; ".join(f"{p['a']} first in {p['order']['a_first']}, {p['b']} first in "
                       f"{p['order']['b_first']}" for p in d["pairs"] if p.get("order"))
    if "latency_margin" in cfg:
        con.print(f"Design: each pair runs in random order ({_e(orders)}); a latency win needs "
                  f"the other call to take more than {1 + cfg['latency_margin']:g}x as long; "
                  f"{cfg.get('warmup', 0)} warm-up call(s) per agent, not in the statistics.")


def _verdicts_table(d: dict[str, Any]) -> tuple[Any, list[str]]:
    """The verdicts of every pair and metric, and the notes under the table (an equivalence's
    evidence, what an inconclusive pass rate needs, the tasks decided)."""
    from rich.table import Table

    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("pair", "metric", "verdict", "effect", "interval", "E", "E vs 1/alpha",
                "wins:losses"):
        t.add_column(col, justify="right" if col in ("effect", "E", "E vs 1/alpha",
                                                     "wins:losses")
                     else "left")
    notes = []
    for p in d["pairs"]:
        for name, m in p["metrics"].items():
            e = _e_shown(m)
            at = f" @{m['decided_at_round']}" if m.get("decided_at_round") else ""
            eq = m.get("equivalence") or {}
            equivalent = bool(eq.get("decided_at_round")) and not m["better"]
            verdict_cell = f"≥ {m['threshold']:.3g}: decided" if m['better'] \
                else f"< {m['threshold']:.3g}: open"
            if equivalent:  # the row shows the evidence the equivalence verdict rests on
                e = min(eq["e_value_upper"], eq["e_value_lower"])
                at = f" @{eq['decided_at_round']}"
                verdict_cell = f"≥ {eq['threshold']:.3g}: equivalent"
            t.add_row(_e(f"{p['a']} vs {p['b']}"), name, _verdict_style(_e(m["verdict"])),
                      _f(m["effect"], "+.3f"),
                      _e(f"[{m['interval'][0]:+.3f}, {m['interval'][1]:+.3f}]"
                         + ("*" if equivalent else "")),
                      _f(e, ".3g") + at, verdict_cell, f"{m['wins']}:{m['losses']}")
            if equivalent:
                notes.append(f"  {p['a']} vs {p['b']} pass rate: {m['verdict']} at run "
                             f"{eq['decided_at_round']} (E+ {eq['e_value_upper']:.3g} and E- "
                             f"{eq['e_value_lower']:.3g} ≥ {eq['threshold']:.3g}: |pass rate "
                             f"difference| ≥ {eq['margin']:g} rejected on both sides, at "
                             f"alpha {eq['alpha']:.3g}); *the interval "
                             f"[{m['interval'][0]:+.3f}, {m['interval'][1]:+.3f}] is not the "
                             f"evidence of this verdict: it is the difference test's confidence "
                             f"sequence (alpha {m['alpha']:.3g}), wider than the two one-sided "
                             f"equivalence tests that decided")
            elif m["verdict"] == "inconclusive" and name == "pass_rate":
                notes.append(f"  {p['a']} vs {p['b']} pass rate: {_more(m)}")
        for tk in p["tasks"]:
            for name, m in tk["metrics"].items():
                if m["better"]:
                    notes.append(f"  task {tk['id']} {name}: {m['verdict']} (effect "
                                 f"{m['effect']:+.2f}, E {_e_shown(m):.3g} ≥ "
                                 f"{m['threshold']:.3g})")
    return t, notes


def _compare_footer(con: Any, d: dict[str, Any]) -> None:
    """Regressions, the exit code, what effects and E are, the guarantee."""
    if d["regressions"]:
        for r in d["regressions"]:
            con.print(f"[red]Regression[/]: {_e(r)}")
    code = d["exit_code"]
    con.print(f"Exit {code}: {COMPARE_EXIT[code]} " + _e(f"[{d['stop_reason']}]"))
    con.print("[dim]Effects are differences of rates (positive favours the first agent of "
              "the pair); no weighted score is computed. E is the e-value at the decision "
              "for a decided verdict, else the current one.[/]")
    if d.get("guarantee"):
        con.print(f"[dim]Guarantee: {_e(d['guarantee'])}[/]")


def _finish(suites: ET.Element, suite: ET.Element) -> str:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") \
        + "\n"


def render_bench_junit(d: dict[str, Any]) -> str:
    """One testcase per task: failure for FAIL, error for ERROR / INCOMPLETE / UNDECIDED."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite",
                          name=f"bench {d['benchmark']['name']} {d['agent']}")
    props = ET.SubElement(suite, "properties")
    ET.SubElement(props, "property", name="guarantee", value=str(d.get("guarantee", "")))
    ET.SubElement(props, "property", name="exit_code", value=str(d["exit_code"]))
    for r in d["tasks"]:
        tc = ET.SubElement(suite, "testcase", name=r["id"], classname=r["category"] or "bench",
                           time=f"{sum(a['latency_s'] for a in r['attempts']):.3f}")
        msg = next((a["message"] for a in r["attempts"] if a["status"] != "PASS"), "") or ""
        text = f"{r['passes']}/{r['runs']} runs passed (threshold {r['threshold']:g})" + (
            f"; {msg}" if msg else "")
        if r["status"] == "UNDECIDED":
            text = f"{text}; {r['decided_by']}"
        if r["status"] == "FAIL":
            ET.SubElement(tc, "failure", message=text[:500], type="fail").text = text
        elif r["status"] in ("ERROR", "INCOMPLETE", "UNDECIDED"):
            ET.SubElement(tc, "error", message=text[:500], type=r["status"].lower()).text = text
        else:
            ET.SubElement(tc, "system-out").text = text
    return _finish(suites, suite)


def render_compare_junit(d: dict[str, Any]) -> str:
    """One testcase per agent pair and metric: failure when B is decided worse than A."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite", name=f"compare {d['benchmark']['name']}")
    props = ET.SubElement(suite, "properties")
    mult = d.get("multiplicity") or {}
    for key, value in (("family_alpha", mult.get("family_alpha")),
                       ("verdicts", mult.get("verdicts")), ("guarantee", d.get("guarantee"))):
        if value is not None:
            ET.SubElement(props, "property", name=key, value=str(value))
    refs = {a["label"]: a.get("ref") or a["agent"] for a in d["agents"]}
    for p in d["pairs"]:
        for name, m in p["metrics"].items():
            tc = ET.SubElement(suite, "testcase", name=f"{p['a']} vs {p['b']} {name}",
                               classname="compare", time="0")
            text = (f"{m['verdict']}: effect {_f(m['effect'], '+.3f')} interval "
                    f"[{m['interval'][0]:+.3f}, {m['interval'][1]:+.3f}], E "
                    f"{_f(_e_shown(m))} (threshold {m['threshold']:.3g}); {p['a']} = "
                    f"{refs.get(p['a'])}, {p['b']} = {refs.get(p['b'])}")
            if name == "pass_rate" and p["a"] == d["agents"][0]["label"] \
                    and m["better"] == p["a"]:
                ET.SubElement(tc, "failure", message=text[:500], type="regression").text = text
            else:
                ET.SubElement(tc, "system-out").text = text
    if not d["complete"]:
        tc = ET.SubElement(suite, "testcase", name="evidence", classname="compare", time="0")
        ET.SubElement(tc, "error", message=d["stop_reason"], type="incomplete")
    return _finish(suites, suite)
