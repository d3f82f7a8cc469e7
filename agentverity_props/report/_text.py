"""Terminal report (rich): diagnostics first, relations after, honest about what is unknown."""

from __future__ import annotations

import io
from typing import Any

from .._internal.settings import setting
from ..decide import account

EXIT_MEANING = {0: "clean: no finding",
                1: "finding: blind probe set, confirmed violation, dependent draws or a "
                   "changed agent",
                2: "incomplete or undecided evidence"}


def exit_meaning(d: dict[str, Any]) -> str:
    """The exit line's meaning for a run dict, naming the finding(s) behind an exit 1.

    >>> exit_meaning({"exit_code": 1, "blindness": {"status": "ok"}, "relations": [
    ...     {"name": "case", "status": "VIOLATED"}], "dependence": None})
    'finding: relation violated (case)'
    """
    code = d.get("exit_code")
    untested = [str(r.get("name")) for r in d.get("relations") or []
                if r.get("status") == "NOT TESTED"]
    if code == 2 and untested:
        return (f"{EXIT_MEANING[2]}: requested relation(s) not tested "
                f"({', '.join(untested)})")
    if code == 0:
        return clean_meaning(d)
    if code != 1:
        return EXIT_MEANING.get(int(code), f"exit {code}") if isinstance(code, int) \
            else f"exit {code}"
    named: list[str] = []
    dep = d.get("dependence") or {}
    if dep.get("status") == "dependent":
        named.append("dependent draws")
    if (d.get("blindness") or {}).get("status") == "blind":
        named.append("blind probe set")
    rels = d.get("relations") or []
    violated = [str(r.get("name")) for r in rels if r.get("status") == "VIOLATED"]
    if violated:
        named.append(f"relation violated ({', '.join(violated)})")
    unexercised = [str(r.get("name")) for r in rels if r.get("status") == "NOT EXERCISED"
                   and any("not exercised" in f and f"'{r.get('name')}'" in f
                           for f in d.get("findings") or [])]
    if unexercised:
        named.append(f"relation not exercised ({', '.join(unexercised)})")
    routes = d.get("routes") or {}
    missing = list(routes.get("missing") or [])
    if missing:
        named.append(f"required verdict never produced ({', '.join(map(str, missing))})")
    if not named:
        return f"finding: {'; '.join(d.get('findings') or ['see Findings'])}"
    return "finding: " + "; ".join(named)


def shown_effect(r: dict[str, Any]) -> dict[str, Any] | None:
    """A relation's effect as every renderer shows it: none (a dash) for a relation that was
    not exercised (its bounds say nothing: no input moved), else its estimate and bounds.

    >>> shown_effect({"status": "NOT EXERCISED", "effect": {"estimate": 0.0, "lower": -1.0,
    ...                                                      "upper": 0.33}}) is None
    True
    """
    e = r.get("effect")
    if not isinstance(e, dict) or e.get("estimate") is None or r.get("status") == "NOT EXERCISED":
        return None
    return e


def bounds_text(e: dict[str, Any], tolerance: Any) -> str:
    """A relation's bounds ``[lower, upper]``, to as many decimals (two at least, 15 at
    most) as show each bound on its own side of the tolerance ``tolerance`` (and of ``-tolerance``):
    an upper bound of 0.095 under a tolerance of 0.1 prints ``+0.095``, not ``+0.10``.

    >>> bounds_text({"lower": -0.0951, "upper": 0.0949}, 0.1)
    '[-0.095, +0.095]'
    >>> bounds_text({"lower": -0.2, "upper": 0.3}, 0.1)
    '[-0.20, +0.30]'
    """
    lo, hi = e.get("lower"), e.get("upper")
    if not isinstance(lo, (int, float)) or not isinstance(hi, (int, float)):
        return f"[{_signed(lo, 2)}, {_signed(hi, 2)}]"
    digits = 2
    if isinstance(tolerance, (int, float)) and not isinstance(tolerance, bool) and tolerance > 0:
        while digits < 15 and not all(
                (abs(b) < tolerance) == (abs(round(b, digits)) < tolerance) for b in (lo, hi)):
            digits += 1
    return f"[{lo:+.{digits}f}, {hi:+.{digits}f}]"


def _signed(x: Any, digits: int) -> str:
    return f"{x:+.{digits}f}" if isinstance(x, (int, float)) else "–"


def clean_meaning(d: dict[str, Any]) -> str:
    """The exit line of a clean run, from the statuses the body prints (never a claim the
    body does not make: blindness undecided is said, not called "not blind").

    >>> clean_meaning({"meter": {"call": "verdict-stochastic"},
    ...                "blindness": {"status": "undecided"}, "relations": []})
    'clean: no finding (meter verdict-stochastic; blindness undecided; no relation tested)'
    >>> clean_meaning({"meter": {"call": "verdict-deterministic"}, "blindness": {"status": "ok"},
    ...                "relations": [{"status": "HOLDS"}]})
    'clean: no finding (meter verdict-deterministic; not blind; no confirmed violation)'
    """
    meter = (d.get("meter") or {}).get("call")
    blind = (d.get("blindness") or {}).get("status")
    rels = d.get("relations")
    parts = [f"meter {meter}" if meter else "",
             {"ok": "not blind", None: ""}.get(blind, f"blindness {blind}"),
             ("no confirmed violation" if rels else "no relation tested")
             if isinstance(rels, list) else ""]
    said = "; ".join(p for p in parts if p)
    return f"clean: no finding ({said})" if said else EXIT_MEANING[0]


def _print_routes(con: Any, d: dict[str, Any]) -> None:
    """The per-route breakdown (run JSON ``routes``): the meter's pairs and the relations'
    confirmed inputs and raw flips, per majority verdict; descriptive intervals."""
    from rich.table import Table

    routes = d.get("routes")
    if not routes or not routes.get("meter"):
        return
    level = f"{float(routes.get('confidence') or 0.95) * 100:g}%"
    con.print(f"[bold]Per route[/] (inputs grouped by their majority verdict in this run; "
              f"{level} Clopper-Pearson intervals, descriptive: outside the family-wise alpha)")
    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("route", "inputs", "pairs", "disagreement", "interval", "confirmed",
                "raw flips"):
        t.add_column(col, no_wrap=col != "confirmed", justify="left" if col in (
            "route", "interval", "confirmed") else "right")
    rels = routes.get("relations") or {}
    for r in routes["meter"]:
        label = r["label"]
        est = "–" if r["estimate"] is None else f"{r['estimate']:.3f}"
        confirmed, raw, tried = [], 0, 0
        for name, rows in rels.items():
            for row in rows:
                if row["label"] == label:
                    raw += row["raw"]
                    tried += row["inputs"]
                    if row["confirmed"]:
                        confirmed.append(f"{name} {row['confirmed']}")
        shown = label if len(label) <= 24 else label[:21] + "..."
        t.add_row(shown, str(r["inputs"]), str(r["pairs"]), est,
                  f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]", ", ".join(confirmed) or "–",
                  f"{raw}/{tried}" if tried else "–")
    con.print(t)
    if routes.get("unrouted"):
        con.print(f"  [dim]{routes['unrouted']} input(s) had no usable draw (no route)[/]")
    required = routes.get("required") or []
    if required:
        missing = routes.get("missing") or []
        produced = routes.get("produced") or {}
        have = ", ".join(f"{v} x{produced.get(v, 0)}" for v in required)
        style = "red" if missing else "green"
        con.print(f"  Required verdicts [{style}]"
                  f"{'missing: ' + ', '.join(missing) if missing else 'all produced'}[/] "
                  f"({have} draws)")
    con.print()


def tokens_text(tokens: dict[str, Any] | None) -> str:
    """The report's ``Tokens:`` line, as rich markup safe to print (a model name from the
    user's price file is data: its control characters written out, its brackets escaped)."""
    from rich.markup import escape

    from .._internal.shown import visible
    from .._internal.tokens import tokens_line
    return escape(visible(tokens_line(tokens)))


def _console(color: bool, width: int = 100) -> Any:
    from rich.console import Console
    return Console(file=io.StringIO(), force_terminal=color, color_system="standard" if color
                   else None, width=width, highlight=False, soft_wrap=True)


def render_run_text(d: dict[str, Any], *, color: bool = False, width: int = 100) -> str:
    """The text report of a ``run`` result (its ``to_dict()``): evidence notes, header,
    diagnostics, relations, routes, findings and the calls and exit footer."""
    from .._internal.shown import for_markup

    d = for_markup(d)  # agent answers, prompts and names are data, never markup
    con = _console(color, width)
    m = d["meter"]
    n_inputs = len(m["per_input"])
    evidence = (d.get("ledger") or {}).get("evidence")
    if isinstance(evidence, dict):
        shown = d.get("inputs")
        fu = d.get("follow_ups")
        _evidence(con, evidence, shown if isinstance(shown, dict) else {},
                  fu if isinstance(fu, dict) else {}, (d.get("calls") or {}).get("replayed"))
    con.print(f"[bold]agentverity-props run[/] · agent [cyan]{d['agent']}[/] · {n_inputs} "
              f"inputs · {d['calls']['total']} agent calls")
    con.print()
    con.print("[bold]Diagnostics[/]")
    _meter_lines(con, m, d.get("noise"))
    _blindness_lines(con, d["blindness"])
    if d.get("dependence"):
        _dependence_lines(con, d["dependence"])
    if d.get("stationarity"):
        _change_lines(con, d["stationarity"])
    if d.get("judge"):
        _judge_lines(con, d["judge"])
    con.print()
    _relations_section(con, d)
    _print_routes(con, d)
    if d["findings"]:
        con.print("[bold red]Findings[/]")
        for f in d["findings"]:
            con.print(f"  - {f}")
        con.print()
    if d.get("guarantee"):
        con.print(f"[dim]Guarantee: {d['guarantee']}[/]")
    _run_footer(con, d)
    out: str = con.file.getvalue()
    return out


def _judge_lines(con: Any, j: dict[str, Any]) -> None:
    """The judge: its noise beside the agent's (which dominates), its calibration, and its
    calls, tokens and money as their own phase (docs/judges.md)."""
    calls = j["calls"]
    con.print(f"  Judge      {j['judge']} · labels {', '.join(j['labels'] or ['any'])} · "
              f"{j['answers_judged']} answers judged")
    con.print(f"             {j['statement']}")
    cal = j.get("calibration")
    if cal:
        style = "green" if cal["passed"] else "red"
        con.print(f"             [{style}]{cal['statement']}[/]")
    cost = (j.get("tokens") or {}).get("cost_usd")
    tokens = (j.get("tokens") or {}).get("total_tokens")
    con.print(f"             judge calls {calls['judge']} (re-judging {calls['rejudge']}, "
              f"replayed {calls['judge_replayed']}) · agent calls {calls['agent']} "
              f"(replayed {calls['agent_replayed']})"
              + (f" · judge tokens {tokens}" if tokens else "")
              + (f" · judge cost ${cost:.4f}" if cost else ""))


def _meter_lines(con: Any, m: dict[str, Any], noise: Any = None) -> None:
    """The meter's call, its interval and error rate, the noise over the whole run (the
    figure to plan with), the inputs that split, what is incomplete and the meter's
    advice."""
    style = {"verdict-deterministic": "green", "verdict-stochastic": "yellow",
             "undecided": "red"}[m["call"]]
    est = "n/a" if m["estimate"] is None else f"{m['estimate']:.3f}"
    caveat = m.get("caveat") or ""
    con.print(f"  Meter      [{style}]{m['call']}[/] at epsilon {m['epsilon']:g} "
              f"(layer {m['layer']})" + (f" [red]({caveat.split(';')[0]})[/]" if caveat else ""))
    level = f"{(1 - float(m.get('alpha') or 0.05)) * 100:g}%"
    con.print(f"             pair disagreement {est}, {level} anytime CI "
              f"[{m['ci_low']:.3f}, {m['ci_high']:.3f}] from {m['pairs']} pairs, "
              f"{m['calls']} calls")
    if isinstance(noise, dict) and noise.get("pair_disagreement") is not None:
        con.print(f"             over the whole run: pair disagreement "
                  f"{noise['pair_disagreement']:.3f} on {noise['inputs']} inputs "
                  f"({noise['pairs']} pairs): the figure to plan with "
                  f"({setting('noise', format(noise['pair_disagreement'], '.3f'))})")
    lo_b, hi_b = m["epsilon"] / m["indifference"], min(1.0, m["epsilon"] * m["indifference"])
    con.print(f"             [dim]P(wrong call) <= {m['alpha']:g}: 'deterministic' when theta >= "
              f"{hi_b:g}, 'stochastic' when theta <= {lo_b:g}; anytime-valid, assuming "
              "independent draws given the input"
              + ("; only over the pairs with both verdicts, and only if a verdict is missing "
                 "independently of what it would have been" if caveat else "") + "[/]")
    flipped = sum(1 for e in m["per_input"] if len(e["counts"]) > 1)
    if flipped:
        con.print(f"             {flipped} input(s) gave more than one verdict")
    if not m["complete"]:
        kinds = ", ".join(f"{k} x{v}" for k, v in sorted(m["failure_kinds"].items()))
        con.print(f"  [red]Incomplete[/]: {m['failures']} draw(s) gave no evidence ({kinds})")
    if m["advice"]:
        con.print(f"  [yellow]Advice[/]: {m['advice']}")


def _blindness_lines(con: Any, b: dict[str, Any]) -> None:
    """The blindness status, the modal verdict's share with its interval, the verdicts."""
    bstyle = {"blind": "red", "ok": "green", "undecided": "yellow", "suppressed": "dim"}[
        b["status"]]
    if b["sample"]:
        share = f"'{b['modal_verdict']}' is {b['share']:.0%} of {b['sample']} sampled verdicts"
        share += f", CI [{b['ci_low']:.3f}, {b['ci_high']:.3f}]"
    else:
        share = "no sample"
    con.print(f"  Blindness  [{bstyle}]{b['status']}[/] (threshold {b['threshold']:g}): {share}")
    if b["distribution"]:
        dist = ", ".join(f"{k}: {v}" for k, v in sorted(b["distribution"].items(),
                                                         key=lambda kv: -kv[1]))
        con.print(f"             verdicts: {dist}")


def _dependence_lines(con: Any, dep: dict[str, Any]) -> None:
    """The dependent-draws check: status, blocks, e-value, and its warning."""
    dstyle = {"dependent": "red", "not detected": "green", "not run": "dim",
              "suppressed": "dim"}[dep["status"]]
    kind = ("back-to-back draws" if not dep.get("spaced_blocks")
            else "recorded pairs" if dep.get("spacing") is None
            else f"pairs spaced >= {dep['spacing']} calls apart")
    verdict = {"not detected": f"; a cache living < {dep.get('spacing')} calls would have been "
                               "seen",
               "not ruled out": "; not ruled out: too little variety to see a cache"}.get(
        str(dep.get("verdict")), "") if dep["status"] == "not detected" else ""
    if dep.get("stood_in"):
        from rich.markup import escape
        con.print(f"  Dependence [dim]{dep['status']}[/]: looked at through "
                  f"{escape(dep['stood_in'])}")
        _warning_line(con, dep["warning"])
        return
    con.print(f"  Dependence [{dstyle}]{dep['status']}[/] ({dep['blocks']} block(s) of "
              f"{kind}, {dep['informative_blocks']} with more than one "
              f"answer, {dep['calls']} calls, e-value {_e_value(dep['e_value'])} vs "
              f"1/{dep['alpha']:g}{verdict})")
    _warning_line(con, dep["warning"])


def _change_lines(con: Any, ch: dict[str, Any]) -> None:
    """The change (stationarity) check: status, the bound it tested, e-value, warning."""
    cstyle = {"changed": "red", "not detected": "green", "incomplete": "yellow",
              "not run": "dim", "suppressed": "dim"}.get(ch["status"], "dim")
    late = "n/a" if ch["late_mean"] is None else f"{ch['late_mean']:.3f}"
    con.print(f"  Change     [{cstyle}]{ch['status']}[/] (meter's pair disagreement <= "
              f"{ch['early_bound']:.3f}; {ch['late_trials']} later {ch['source']}: "
              f"{late}; {ch['calls']} draws, e-value {_e_value(ch['e_value'])} vs "
              f"2/{ch['alpha']:g})")
    _warning_line(con, ch["warning"])


def _e_value(ev: float | None) -> str:
    """An e-value as shown (None: infinite)."""
    return "inf" if ev is None else f"{ev:.3g}"


def _warning_line(con: Any, warning: str | None) -> None:
    """A check's warning, escaped, when it has one."""
    if warning:
        from rich.markup import escape
        con.print(f"  [bold red]Warning[/]: {escape(warning)}")


def inputs_of(r: dict[str, Any]) -> int:
    """Distinct inputs a relation exercised (files written before edit families count
    (input, follow-up) pairs, one per input)."""
    n = r.get("inputs_exercised")
    return int(r["exercised"] if n is None else n)


def confirmed_inputs_of(r: dict[str, Any]) -> int:
    """Distinct inputs with a follow-up confirmed violating."""
    return len({o["fp"] for o in r.get("outcomes") or () if o["status"] == "confirmed"}) \
        if r.get("outcomes") else int(r["calibrated_violations"])


#: Edit kinds listed one by one; beyond it, a count and the confirmed kinds only.
EDITS_LISTED = 8


def edits_text(edits: dict[str, Any]) -> str:
    """``trailing 5, tab 4 (2 confirmed), ...``: the pairs each edit kind made (with many
    kinds, e.g. 21 pairs brought per input: their count and the confirmed ones).

    >>> edits_text({"tab": {"pairs": 4, "confirmed": 2}, "trailing": {"pairs": 5,
    ...             "confirmed": 0}})
    'tab 4 (2 confirmed), trailing 5'
    """
    def one(k: str, v: dict[str, Any]) -> str:
        return f"{k} {v['pairs']}" + (f" ({v['confirmed']} confirmed)" if v["confirmed"]
                                       else "")
    if len(edits) <= EDITS_LISTED:
        return ", ".join(one(k, v) for k, v in edits.items())
    pairs = sum(v["pairs"] for v in edits.values())
    hit = [one(k, v) for k, v in edits.items() if v["confirmed"]]
    return (f"{len(edits)} kinds, {pairs} pairs" + (f"; confirmed: {', '.join(hit)}"
                                                   if hit else "; none confirmed"))


def _relations_section(con: Any, d: dict[str, Any]) -> None:
    """The relations table, each relation's statement and confirmed inputs (✗ lines) and
    suspects, or why no relation was tested."""
    from rich.table import Table

    rels = d["relations"]
    if rels:
        cfg = d["config"]
        tolerance = cfg.get("tolerance")
        con.print("[bold]Relations[/] (effect = excess disagreement: how much more often a "
                  "follow-up's verdict differs from a source draw than two source draws "
                  "differ, mean over the inputs"
                  + (f"; tolerance {tolerance:g}" if tolerance else "") + ")")
        t = Table(show_edge=False, pad_edge=False, box=None)
        for col in ("relation", "layer", "status", "effect", "bounds", "inputs", "confirmed",
                    "draws"):
            t.add_column(col, no_wrap=True, justify="right" if col in (
                "effect", "inputs", "confirmed", "draws") else "left")
        for r in rels:
            st = {"VIOLATED": "[red]VIOLATED[/]", "HOLDS": "[green]HOLDS[/]",
                  "NOT EXERCISED": "[yellow]NOT EXERCISED[/]",
                  "NOT TESTED": "[red]NOT TESTED[/]",
                  "INCOMPLETE": "[red]INCOMPLETE[/]",
                  "UNDECIDED": "[yellow]UNDECIDED[/]"}[r["status"]]
            e = shown_effect(r)
            bounds = bounds_text(e, tolerance) if e else "–"
            t.add_row(r["name"], r["layer"], st,
                      f"{e['estimate']:+.3f}" if e else "–", bounds,
                      str(inputs_of(r)), str(confirmed_inputs_of(r)), str(r["draws"]))
        con.print(t)
        prof = d.get("profile") or {}
        if prof.get("screen", True):
            con.print("  [dim]HOLDS rules out an effect at or above the tolerance over these "
                      "inputs, in either direction; every (input, follow-up) pair is also "
                      "screened on its own, and the pairs it flags are tested one by one "
                      "(✗ lines)[/]")
        else:
            con.print(f"  [dim]HOLDS rules out an effect at or above the tolerance over these "
                      f"inputs, in either direction; profile {prof.get('name')}: no input was "
                      "screened on its own (the pooled effect only, estimated from uniform "
                      "samples of the inputs); drawn inputs whose draws differed beyond chance "
                      "were tested one by one (✗ lines)[/]")
        inputs = d.get("inputs") or {}
        for r in rels:
            if r.get("statement"):
                mark = {"VIOLATED": "[red]✗[/]", "HOLDS": "[green]✓[/]"}.get(r["status"], "·")
                con.print(f"  {mark} {r['name']}: {r['statement']}"
                          + (f" [red][{r['dependent_draws']}][/]" if r.get("dependent_draws")
                             else ""))
            if r.get("edits"):
                con.print(f"    edits tried: {edits_text(r['edits'])}")
            for o in r["outcomes"]:
                if o["status"] != "confirmed":
                    continue
                c = o["decision"]
                label = inputs.get(o["fp"]) or o["fp"][:19]
                follow = (d.get("follow_ups") or {}).get(o["follow_up_fp"])
                edited = f" → {follow!r}" if follow is not None else ""
                if o.get("edit"):
                    edited += f" (edit: {o['edit']})"
                con.print(f"    [red]✗[/] input {label!r}{edited}: source "
                          f"{o['source_value']!r} → follow-up "
                          f"{o['follow_up_value']!r} "
                          f"({c['follow_up_violations']}/{c['follow_up_draws']} follow-up vs "
                          f"{c['source_violations']}/{c['source_draws']} source re-draws "
                          f"violate; {account(c).inequality()})"
                          + (" [red][rests on dependent draws][/]"
                             if r.get("dependent_draws") else ""))
            if r["status"] in ("VIOLATED", "UNDECIDED") and not r["calibrated_violations"]:
                sus = [o for o in r["outcomes"] if o["fp"] in set(r.get("suspects") or [])]
                if sus:
                    labels = ", ".join(repr(inputs.get(o["fp"]) or o["fp"][:19])
                                       + f" ({o['suspicion']:.2f})" for o in sus)
                    con.print(f"    most unlike their sources: {labels}")
        con.print()
    elif (d.get("ledger") or {}).get("evidence"):
        con.print("[dim]Relations: none tested (the recording holds no (source, follow-up) "
                  "pair of them: see the evidence notes above)[/]")
        con.print()
    else:
        con.print("[dim]Relations: none requested[/]")
        con.print()


def _run_footer(con: Any, d: dict[str, Any]) -> None:
    """Calls per phase, tokens, the next steps, an early stop, the exit code and privacy."""
    calls = d["calls"]
    budget = d["config"]["budget"]
    led = d["ledger"]
    dep_calls = f" · dependence {calls['dependence']}" if "dependence" in calls else ""
    if "stationarity" in calls and (calls["stationarity"] or d.get("stationarity")):
        dep_calls += f" · stationarity {calls['stationarity']}"
    # live calls per phase, their sum the total; replayed draws are said apart
    con.print(f"Calls: meter {calls['meter']} · blindness {calls['blindness']}{dep_calls} · "
              f"relations {calls['relations']} · total {calls['total']} live"
              f" (replayed {calls.get('replayed', led.get('replayed', 0))} from the store; "
              f"budget {budget if budget is not None else 'none'}, retries "
              f"{led.get('retries', 0)}, failures {led.get('failures', 0)})")
    con.print(tokens_text(d.get("tokens")))
    for line in d.get("advice") or ():
        if not (d.get("ledger") or {}).get("stop_cause"):
            from rich.markup import escape as _esc
            con.print(f"[bold]Next:[/] {_esc(line)}")
    cause = (d.get("ledger") or {}).get("stop_cause")
    if cause:
        from rich.markup import escape
        con.print(f"[bold red]Stopped early:[/] {escape(cause)}")
    code = d["exit_code"]
    con.print(f"Exit {code}: {exit_meaning(d)}"
              + (f" \\[{d['stop_reason'][:60]}]" if d.get("stop_reason") and
                 not (d.get("ledger") or {}).get("stop_cause") else ""))
    con.print(f"[dim]Privacy: {d['privacy']}[/]")


#: the text report names at most this many split inputs (the JSON has every input's counts)
SHOWN_SPLIT = 20


def _evidence(con: Any, ev: dict[str, Any], inputs: dict[str, Any],
              follow_ups: dict[str, Any] | None = None, replayed: Any = None) -> None:
    """``assess``'s evidence, before run's report: what was recorded, how its order was
    taken, and the inputs whose recorded draws gave more than one answer, by text when the
    report holds the inputs (the user's screen, or --include-inputs), else by fingerprint.
    A saved file is data: a field of the wrong shape is shown as it is or skipped.
    Follow-ups (a record store's relations' follow-ups) are counted apart from inputs;
    ``replayed``: the draws the assessment read, said beside the draws recorded."""
    follow_ups = follow_ups or {}
    layer = ev.get("layer", "verdict")
    n_fu = ev.get("follow_ups")
    fus = f" and {n_fu} follow-ups" if isinstance(n_fu, int) and n_fu else ""
    con.print(f"[bold]agentverity-props assess[/] · {ev.get('source')} evidence · agent "
              f"[cyan]{ev.get('agent')}[/] · {ev.get('inputs')} inputs{fus} · "
              f"{ev.get('draws')} recorded draws ({ev.get('failed_draws')} failed)"
              + (f", {replayed} of them replayed" if isinstance(replayed, int)
                 and isinstance(ev.get("draws"), int) and replayed != ev["draws"] else "")
              + " · no agent call")
    if isinstance(replayed, int) and isinstance(ev.get("draws"), int) \
            and replayed < ev["draws"]:
        con.print(f"  {ev['draws'] - replayed} recorded draw(s) not replayed: no decision of "
                  "this assessment needed them (its seed, workers and relations set the draws "
                  "each decision reads)")
    notes = ev.get("notes")
    for note in notes if isinstance(notes, list) else []:
        con.print(f"  {note}")
    rows = ev.get("per_input")
    split = [i for i in (rows if isinstance(rows, list) else [])
             if isinstance(i, dict) and isinstance(i.get("counts"), dict)
             and len(i["counts"]) > 1]
    what = "verdict" if layer == "verdict" else f"answer at layer {layer}"
    n_split_fu = sum(1 for i in split if i.get("follow_up") is True)
    con.print(f"  {len(split) - n_split_fu} input(s)"
              + (f" and {n_split_fu} follow-up(s)" if n_split_fu else "")
              + f" gave more than one {what} in the recording" + (":" if split else ""))
    for i in split[:SHOWN_SPLIT]:
        fp = str(i.get("fp"))
        text = inputs.get(fp, follow_ups.get(fp))
        label = (repr(text) if text is not None else fp[:19]) + (
            " (follow-up)" if i.get("follow_up") is True else "")
        counts = ", ".join(f"{k} {v}" for k, v in sorted(
            i["counts"].items(), key=lambda kv: -kv[1] if isinstance(kv[1], int) else 0))
        con.print(f"    {label}: {counts}")
    if len(split) > SHOWN_SPLIT:
        con.print(f"    ... and {len(split) - SHOWN_SPLIT} more ({setting('format_json')} "
                  "has each input's counts)")
    con.print()
