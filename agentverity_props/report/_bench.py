"""Terminal and JUnit renderers for bench/1 and compare/1 result dicts."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rich.markup import escape as _e

from ._text import _console

BENCH_EXIT = {0: "every task passed", 1: "a task failed or errored",
              2: "incomplete evidence (budget or interrupt)"}
COMPARE_EXIT = {0: "no agent is worse than the baseline (A) on pass rate",
                1: "regression: an agent is worse than the baseline (A) on pass rate",
                2: "incomplete evidence (budget or interrupt)"}
_STATUS = {"PASS": "[green]PASS[/]", "FAIL": "[red]FAIL[/]", "ERROR": "[red]ERROR[/]",
           "INCOMPLETE": "[yellow]INCOMPLETE[/]"}


def _f(x: Any, fmt: str = ".3f", none: str = "–") -> str:
    return none if x is None else format(x, fmt)


def _ms(x: Any) -> str:
    return "–" if x is None else f"{x * 1000:.0f} ms" if x < 10 else f"{x:.1f} s"


def render_bench_text(d: dict[str, Any], *, color: bool = False, width: int = 120) -> str:
    from rich.table import Table

    con = _console(color, width)
    b, s, calls = d["benchmark"], d["summary"], d["calls"]
    con.print(f"[bold]agentverity-props bench[/] · agent [cyan]{_e(d['agent'])}[/] · benchmark "
              f"[cyan]{_e(b['name'])}[/] · {b['tasks']} tasks · early stop "
              f"{d['config']['early_stop']}")
    con.print()
    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("task", "status", "pass", "fail", "err", "runs", "reliability", "CI",
                "consist.", "p50", "p95", "decided by"):
        t.add_column(col, no_wrap=True, overflow="ellipsis",
                     max_width=24 if col in ("task", "decided by") else None,
                     justify="right" if col in ("pass", "fail", "err", "runs", "reliability",
                                                "consist.", "p50", "p95") else "left")
    for r in d["tasks"]:
        t.add_row(_e(r["id"]), _STATUS[r["status"]], str(r["passes"]), str(r["failures"]),
                  str(r["errors"]), f"{r['runs']}/{r['planned_runs']}",
                  _f(r["reliability"], ".2f"), f"{r['ci_low']:.2f}–{r['ci_high']:.2f}",
                  _f(r["consistency"], ".2f"), _ms(r["latency_p50_s"]),
                  _ms(r["latency_p95_s"]), _e(r["decided_by"] or r["stop_reason"] or "–"))
    con.print(t)
    con.print()
    failing = [r for r in d["tasks"] if r["status"] in ("FAIL", "ERROR")]
    for r in failing[:20]:
        msg = next((a["message"] for a in r["attempts"] if a["status"] != "PASS"), "")
        con.print(f"  [red]✗[/] {_e(r['id'])} ({_e(r['evaluation'])}): {_e(msg or '')}")
    if failing:
        con.print()
    pk = ", ".join(f"pass@{k} {v:.2f}" for k, v in s["pass_at_k"].items())
    ph = ", ".join(f"pass^{k} {v:.2f}" for k, v in s["pass_hat_k"].items())
    con.print(f"Tasks: {s['passed']} passed · {s['failed']} failed · {s['errored']} errored"
              + (f" · {s['incomplete']} incomplete" if s["incomplete"] else ""))
    con.print(f"Runs: {s['passes']}/{s['attempts']} passed, reliability "
              f"{_f(s['reliability'], '.3f')} [{s['ci_low']:.3f}, {s['ci_high']:.3f}] · "
              f"error rate {_f(s['error_rate'], '.3f')} · consistency "
              f"{_f(s['consistency'], '.3f')}")
    if pk:
        con.print(f"      {pk}")
        con.print(f"      {ph}")
    extra = ""
    if s["tokens"] is not None:
        extra += f" · tokens {s['tokens']}"
    if s["cost_usd"] is not None:
        extra += f" · cost ${s['cost_usd']:.4f}"
    con.print(f"Latency p50 {_ms(s['latency_p50_s'])} · p95 {_ms(s['latency_p95_s'])}{extra}")
    con.print(f"Calls: {calls['attempts']} runs of {calls['planned']} planned "
              f"(early stopping saved {calls['saved']}); {calls['ledger_calls']} live calls")
    code = d["exit_code"]
    con.print(f"Exit {code}: {BENCH_EXIT[code]}"
              + (_e(f" [{d['stop_reason']}]") if d.get("stop_reason") else ""))
    con.print(f"[dim]Privacy: {d['privacy']}[/]")
    out: str = con.file.getvalue()
    return out


def _verdict_style(v: str) -> str:
    return "[yellow]inconclusive[/]" if v == "inconclusive" else f"[bold]{v}[/]"


def _more(m: dict[str, Any]) -> str:
    fr = m.get("further_runs")
    if not fr:
        return ""
    if fr.get("rounds") is None:
        return fr["note"]
    return (f"~{fr['rounds']} more runs per task likely decide it (--max-runs "
            f"{fr.get('max_runs_hint', '?')}; {fr['note']})")


def render_compare_text(d: dict[str, Any], *, color: bool = False, width: int = 120) -> str:
    from rich.table import Table

    con = _console(color, width)
    b = d["benchmark"]
    con.print(f"[bold]agentverity-props compare[/] · benchmark [cyan]{_e(b['name'])}[/] · "
              f"{b['tasks']} tasks · {d['rounds']} paired runs per task · "
              f"{d['calls']['total']} agent calls")
    for a in d["agents"]:
        s = a["summary"]
        con.print(f"  {_e(a['label'])} = [cyan]{_e(a['agent'])}[/]: pass rate "
                  f"{_f(s['reliability'], '.3f')} ({s['passes']}/{s['attempts']}), error rate "
                  f"{_f(s['error_rate'], '.3f')}, p50 {_ms(s['latency_p50_s'])}")
    con.print()
    mult = d["multiplicity"]
    con.print(f"[bold]Verdicts[/] (anytime-valid paired sign tests on discordant runs; "
              f"Bonferroni: overall alpha {mult['overall_alpha']:.3g} per metric, per task "
              f"{mult['per_task_alpha']:.2g})")
    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("pair", "metric", "verdict", "effect", "interval", "E", "wins:losses"):
        t.add_column(col, justify="right" if col in ("effect", "E", "wins:losses") else "left")
    notes = []
    for p in d["pairs"]:
        for name, m in p["metrics"].items():
            t.add_row(_e(f"{p['a']} vs {p['b']}"), name, _verdict_style(_e(m["verdict"])),
                      _f(m["effect"], "+.3f"),
                      _e(f"[{m['interval'][0]:+.3f}, {m['interval'][1]:+.3f}]"),
                      _f(m["e_value"], ".3g"), f"{m['wins']}:{m['losses']}")
            if m["verdict"] == "inconclusive" and name == "pass_rate":
                notes.append(f"  {p['a']} vs {p['b']} pass rate: {_more(m)}")
        decided = [(tk["id"], m) for tk in p["tasks"] for name, m in tk["metrics"].items()
                   if name == "pass_rate" and m["better"]]
        for tid, m in decided:
            notes.append(f"  task {tid}: {m['verdict']} (effect {m['effect']:+.2f})")
    con.print(t)
    if notes:
        con.print()
        for n in notes:
            con.print(_e(n))
    con.print()
    if d["regressions"]:
        for r in d["regressions"]:
            con.print(f"[red]Regression[/]: {_e(r)}")
    code = d["exit_code"]
    con.print(f"Exit {code}: {COMPARE_EXIT[code]} " + _e(f"[{d['stop_reason']}]"))
    con.print("[dim]Effects are differences of rates (positive favours the first agent of "
              "the pair); no weighted score is computed.[/]")
    out: str = con.file.getvalue()
    return out


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
    """One testcase per task: failure for FAIL, error for ERROR / INCOMPLETE."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite",
                          name=f"bench {d['benchmark']['name']} {d['agent']}")
    for r in d["tasks"]:
        tc = ET.SubElement(suite, "testcase", name=r["id"], classname=r["category"] or "bench",
                           time=f"{sum(a['latency_s'] for a in r['attempts']):.3f}")
        msg = next((a["message"] for a in r["attempts"] if a["status"] != "PASS"), "") or ""
        text = f"{r['passes']}/{r['runs']} runs passed (threshold {r['threshold']:g})" + (
            f"; {msg}" if msg else "")
        if r["status"] == "FAIL":
            ET.SubElement(tc, "failure", message=text[:500], type="fail").text = text
        elif r["status"] in ("ERROR", "INCOMPLETE"):
            ET.SubElement(tc, "error", message=text[:500], type=r["status"].lower()).text = text
        else:
            ET.SubElement(tc, "system-out").text = text
    return _finish(suites, suite)


def render_compare_junit(d: dict[str, Any]) -> str:
    """One testcase per agent pair and metric: failure when B is decided worse than A."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite", name=f"compare {d['benchmark']['name']}")
    for p in d["pairs"]:
        for name, m in p["metrics"].items():
            tc = ET.SubElement(suite, "testcase", name=f"{p['a']} vs {p['b']} {name}",
                               classname="compare", time="0")
            text = (f"{m['verdict']}: effect {_f(m['effect'], '+.3f')} interval "
                    f"[{m['interval'][0]:+.3f}, {m['interval'][1]:+.3f}], E {_f(m['e_value'])}")
            if name == "pass_rate" and p["a"] == d["agents"][0]["label"] \
                    and m["better"] == p["a"]:
                ET.SubElement(tc, "failure", message=text[:500], type="regression").text = text
            else:
                ET.SubElement(tc, "system-out").text = text
    if not d["complete"]:
        tc = ET.SubElement(suite, "testcase", name="evidence", classname="compare", time="0")
        ET.SubElement(tc, "error", message=d["stop_reason"], type="incomplete")
    return _finish(suites, suite)
