"""Terminal and JUnit renderers for snapshot and check result dicts (versions 1 and 2)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from rich.markup import escape as _e

from .._internal.fingerprint import short
from .._internal.settings import setting
from .._internal.shown import for_text
from ._bench import _finish
from ._md import privacy_said
from ._text import _console, tokens_text

SNAPSHOT_EXIT = {0: "snapshot admitted and written",
                 2: "snapshot refused: nothing was written"}
CHECK_EXIT = {0: "clean: re-admitted, no drift",
              1: "drift confirmed on at least one input, or the agent changed during the check",
              2: "not admissible or incomplete (each rule that failed is listed as not "
                 "admissible)"}


def snapshot_exit(d: dict[str, Any]) -> int:
    """The exit code of the command that wrote a snapshot (a snapshot records none): 0
    admitted, 2 refused."""
    return 0 if (d.get("admission") or {}).get("admitted") else 2

_IN_STYLE = {"clean": "green", "drift": "red", "noise": "yellow", "incomplete": "red",
             "unconfirmed": "yellow", "unscreened": "red"}


#: the longest list of references printed for review; the JSON lists every input
REVIEW_ROWS = 200


def no_reference_said(rows: list[dict[str, Any]]) -> str:
    """The legend of the dash reference rows, by what each is: an input drawn to a tie
    between verdicts (``flipped``), or one not drawn at all; '' when there is none."""
    none = [e for e in rows if e.get("reference") is None]
    tied = sum(1 for e in none if e.get("flipped") or e.get("counts"))
    parts = []
    if tied:
        parts.append(f"{tied} drawn with no majority verdict (no reference: its draws split "
                     "between verdicts)")
    if len(none) > tied:
        parts.append(f"{len(none) - tied} not drawn before the refusal (no reference yet)")
    return "; ".join(parts)


def _review_table(d: dict[str, Any], labels: dict[str, str] | None) -> Any:
    """Each input with the reference verdict it would be checked against: what
    ``--accept-reference`` approves. Inputs by text when ``labels`` has them."""
    from rich.table import Table

    from .._internal.shown import visible
    t = Table(show_edge=False, pad_edge=False, box=None)
    t.add_column("reference", no_wrap=True)
    t.add_column("flipped", justify="right")
    t.add_column("input")
    rows = sorted(d["inputs"], key=lambda e: (str(e["reference"]), e["fp"]))
    for e in rows[:REVIEW_ROWS]:
        ref = e["reference"]
        ref_s = "–" if ref is None else (str(ref) if d["reference_form"] == "literal"
                                         else short(str(ref)))
        text = (labels or {}).get(e["fp"])
        shown = repr(visible(text)) if text is not None else short(e["fp"])
        t.add_row(_e(ref_s), "yes" if e["flipped"] else "", _e(shown))
    return t


def render_snapshot_text(d: dict[str, Any], *, color: bool = False, width: int = 120,
                         path: str | None = None, labels: dict[str, str] | None = None,
                         routes: dict[str, Any] | None = None) -> str:
    """The snapshot result as terminal text; ``labels`` (fingerprint -> input text) names the
    inputs of the review table by their text (the CLI passes it on a terminal); ``routes``
    (the run's per-route breakdown, ``RunResult.routes.to_dict()``) adds the meter per
    reference verdict."""
    d = for_text(d)  # control and bidi characters of answers and names made visible
    con = _console(color, width)
    cfg, m, b, calls = d["config"], d["meter"], d["blindness"], d["calls"]
    con.print(f"[bold]agentverity-props snapshot[/] · agent [cyan]{_e(d['agent'])}[/] · "
              f"{len(d['inputs'])} inputs · {calls['total']} agent calls")
    con.print(f"  epsilon {cfg['epsilon']:g} · alpha {cfg['alpha']:g} · layer {cfg['layer']} · "
              f"fingerprints {d['fingerprints']['scheme']}")
    con.print()
    con.print(_rules_table(d["admission"]))
    con.print()
    con.print(f"  Meter {m['call']}: pair disagreement CI [{m['ci_low']:.3f}, "
              f"{m['ci_high']:.3f}] from {m['pairs']} pairs")
    con.print(f"  Blindness {b['status']}"
              + _e(f": '{b['modal_verdict']}' is {b['share']:.0%} of {b['sample']} sampled "
                   "verdicts" if b.get("share") is not None else ""))
    _reference_lines(con, d, labels)
    if routes:
        from .._internal.shown import for_markup
        from ._text import _print_routes
        con.print()
        _print_routes(con, for_markup({"routes": routes}))  # verdicts are data, not markup
    _calibration_lines(con, d)
    _snapshot_footer(con, d, path)
    out: str = con.file.getvalue()
    return out


def _rules_table(adm: dict[str, Any]) -> Any:
    """The admission rules, each ok or refused with its detail."""
    from rich.table import Table

    t = Table(show_edge=False, pad_edge=False, box=None)
    t.add_column("rule")
    t.add_column("")
    t.add_column("detail")
    for r in adm["rules"]:
        t.add_row(r["rule"], "[green]ok[/]" if r["passed"] else "[red]refused[/]",
                  _e(r["message"]))
    return t


def _reference_lines(con: Any, d: dict[str, Any], labels: dict[str, str] | None) -> None:
    """The references by verdict, the review table and the inputs that split."""
    refs: dict[str, int] = {}
    for e in d["inputs"]:
        if e["reference"] is not None:
            refs[e["reference"]] = refs.get(e["reference"], 0) + 1
    shown = ", ".join(f"{(k if d['reference_form'] == 'literal' else short(k))} x{v}"
                      for k, v in sorted(refs.items(), key=lambda kv: -kv[1])[:8])
    con.print(f"  References: {_e(shown)}")
    if d["inputs"]:
        if d["admission"]["admitted"]:
            con.print("  The references admitted (sorted by verdict):")
        else:
            con.print(f"  Review each reference before {setting('accept_reference')} (sorted "
                      "by verdict):")
        con.print(_review_table(d, labels))
        legend = no_reference_said(d["inputs"])
        if legend:
            con.print(f"  [dim]– : {legend}[/]")
        if len(d["inputs"]) > REVIEW_ROWS:
            con.print(f"  ... {len(d['inputs']) - REVIEW_ROWS} more: "
                      f"{setting('format_json')} lists every input")
    flipped = sum(1 for e in d["inputs"] if e["flipped"])
    if flipped:
        con.print(f"  {flipped} input(s) gave more than one verdict while measured")


def _calibration_lines(con: Any, d: dict[str, Any]) -> None:
    """The calibration draws and the borderline and untestable inputs (the first's note)."""
    cal = d.get("calibration") or {}
    if cal.get("draws_per_input"):
        con.print(f"  Calibration: {cal['draws_per_input']} fresh draws per input after the "
                  "references were fixed; check tests each input against its own rate")
    for what, style in (("borderline", "yellow"), ("untestable", "red")):
        fps = cal.get(what) or []
        if fps:
            shown = ", ".join(short(f) for f in fps[:5]) + (" ..." if len(fps) > 5 else "")
            con.print(f"  [{style}]{len(fps)} {what}[/] input(s): {shown}")
            note = next((e["note"] for e in d["inputs"] if e["fp"] == fps[0]), "")
            if note:
                con.print(f"    [dim]{_e(note)}[/]")


def _snapshot_footer(con: Any, d: dict[str, Any], path: str | None) -> None:
    """Calls per phase, tokens, admitted or refused, privacy."""
    calls = d["calls"]
    con.print(f"  Calls: meter {calls['meter']} · blindness {calls['blindness']}"
              + (f" · dependence {calls['dependence']}" if calls.get("dependence") else "")
              + f" · reference {calls['reference']}"
              + (f" · calibration {calls['calibration']}" if calls.get("calibration") else "")
              + (f" · change {calls['change']}" if calls.get("change") else "")
              + f" · total {calls['total']} live"
              + (f" (replayed {calls['replayed']} draws from the store)"
                 if calls.get("replayed") else ""))
    con.print("  " + tokens_text(d.get("tokens")))
    con.print()
    if d["admission"]["admitted"]:
        where = f" to {path}" if path else ""
        con.print(f"[green]Snapshot admitted[/]{_e(where)} (exit 0)")
    else:
        con.print("[red]Snapshot refused[/]: nothing was written (exit 2)")
    con.print(f"[dim]Privacy: {d['privacy']}[/]")


def render_check_text(d: dict[str, Any], *, color: bool = False, width: int = 120,
                      labels: dict[str, str] | None = None) -> str:
    """The check result as terminal text; ``labels`` (fingerprint -> input text) names the
    inputs by their text (the CLI passes it for a terminal or ``--include-inputs``)."""
    d = for_text(d)  # control and bidi characters of answers and names made visible
    con = _console(color, width)
    s = d["snapshot"]
    con.print(f"[bold]agentverity-props check[/] · agent [cyan]{_e(d['agent'])}[/] · snapshot of "
              f"{s['created_at']} ({s['inputs']} inputs, epsilon {s['epsilon']:g}, layer "
              f"{s['layer']})")
    if s.get("same_agent") is False:
        con.print(f"  [dim]the snapshot was made with agent {_e(s['agent'])}[/]")
    if s.get("migrated_from"):
        con.print(f"  [yellow]the snapshot is a {s['migrated_from']} file[/] (no calibration "
                  "sample): re-create it for the full guarantee")
    con.print()
    _check_decisions(con, d)
    rows = [e for e in d["inputs"] if e["status"] != "clean"]
    if rows:
        con.print()
        _check_table(con, rows, labels)
    _check_summary(con, d, labels)
    out: str = con.file.getvalue()
    return out


def _check_decisions(con: Any, d: dict[str, Any]) -> None:
    """Re-admission, the stability rerun, the refusals and the change during the check."""
    adm = d["admission"]
    call = {"low": "[green]re-admitted[/]", "high": "[yellow]not re-admitted[/] (mismatch "
            "rate above the snapshot's tolerance)", None: "[yellow]undecided[/]"}[adm["call"]]
    if adm["n"]:
        con.print(f"  Re-admission {call}: {screen_said(d)} (SPRT p0 {adm['p0']:g} vs p1 "
                  f"{adm['p1']:g})")
    st = d.get("stability")
    if st:
        ci = ("–" if st.get("ci_low") is None or st.get("ci_high") is None
              else f"[{st['ci_low']:.3f}, {st['ci_high']:.3f}]")
        con.print(f"  Stability rerun: {st.get('call') or 'not run'} (pair disagreement CI "
                  f"{ci}, {st.get('calls') or 0} calls)")
    for r in d["inadmissible"]:
        con.print(f"  [red]Not admissible[/] {_e('[' + r['rule'] + ']')}: {_e(r['message'])}")
    ch = d.get("stationarity")
    if ch:
        cstyle = {"changed": "red", "not detected": "green", "incomplete": "yellow"}.get(
            ch["status"], "dim")
        late = "n/a" if ch["late_mean"] is None else f"{ch['late_mean']:.3f}"
        con.print(f"  Change during the check [{cstyle}]{_e(ch['status'])}[/] (the screen's "
                  f"mismatch rate <= {ch['early_bound']:.3f}; {ch['late_trials']} later "
                  f"trial(s): {late}; {ch['calls']} calls)")
        if ch["status"] == "changed":
            con.print(f"  [red]Changed during the check[/] (not drift): {_e(ch['warning'])}")


def _check_table(con: Any, rows: list[dict[str, Any]], labels: dict[str, str] | None) -> None:
    """One row for each input that is not clean: status, reference and answer now, the
    calibration ('then'), the confirmation and its p-values."""
    from rich.table import Table

    t = Table(show_edge=False, pad_edge=False, box=None)
    for col in ("input", "status", "reference", "now", "then", "confirmation", "p",
                "p (family)"):
        t.add_column(col)
    lit = True
    for e in rows:
        cf = e["confirmation"]
        ref, cur = e["reference"], e["current"]
        if ref.startswith(("sha256:", "hmac-sha256:")):
            lit = False
        name = (labels or {}).get(e["fp"])
        shown = _e(name[:60]) if name else short(e["fp"])
        cal = e.get("calibration")
        fam = cf.get("p_family")
        t.add_row(shown, f"[{_IN_STYLE[e['status']]}]{e['status']}[/]",
                  _e(ref if lit else short(ref)),
                  "–" if cur is None else _e(cur if lit else short(cur)),
                  f"{cal['mismatches']}/{cal['draws']} differed" if cal else "–",
                  f"{cf['mismatches']}/{cf['draws']} differ (need {cf['c']} of "
                  f"{cf['k']})" if cf["draws"] else "–",
                  "–" if cf["p_value"] is None else f"{cf['p_value']:.2g}",
                  "–" if fam is None else f"{fam:.2g}")
    con.print(t)


def _check_summary(con: Any, d: dict[str, Any],
                   labels: dict[str, str] | None = None) -> None:
    """What moved, the drift count and its rule, calls, tokens, exit code and privacy."""
    calls = d["calls"]
    clean = sum(1 for e in d["inputs"] if e["status"] == "clean")
    moves = check_moves(d)
    if moves:
        kinds = {k: sum(1 for r in moves if r["kind"] == k) for k in ("changed", "flaky")}
        others = moves_said([r for r in moves if r["kind"] not in kinds]).split(", ")[2:]
        con.print(f"  What moved: [red]{kinds['changed']} changed[/] (drift confirmed: 'then' "
                  f"-> 'confirmation' is how much) · [yellow]{kinds['flaky']} flaky[/] (a "
                  "screen mismatch the confirmation put down to the agent's own noise: a "
                  "stochastic verdict, not a change)"
                  + "".join(f" · {o} (not decided)" for o in others))
    con.print()
    dr = d["drift"]
    if "guarantee" in dr:  # check/2: each input against its own recorded rate
        untestable = len(dr.get("untestable") or [])
        con.print(f"  {clean} clean · {dr['inputs']} drifted of {len(d['inputs'])} inputs"
                  + (f" · {untestable} untestable (never called drift)" if untestable else "")
                  + f" (drift = the reference drawn less often than when the snapshot was made "
                  f"and less than 1 - {dr['tolerance']:g} of the time; alpha "
                  f"{dr['alpha_per_input']:.2g} per input)")
        con.print(f"  [dim]p: exact under the curtailed rule; p (family) = p x inputs. "
                  f"{_e(dr['guarantee'])}[/]")
    else:
        con.print(f"  {clean} clean · {dr['inputs']} drifted of {len(d['inputs'])} inputs "
                  f"(drift = reference drawn less than 1 - {dr['tolerance']:g} of the time, "
                  f"alpha {dr['alpha_per_input']:.2g} per input)")
    con.print(f"Calls: {calls['total']} (screen {calls['screen']}, confirm {calls['confirm']}"
              + (f", stability {calls['stability']}" if calls["stability"] else "")
              + (f", change {calls['change']}" if calls.get("change") else "")
              + f") vs ~{calls['full_rerun_estimate']} for a full re-run")
    con.print(tokens_text(d.get("tokens")))
    code = d["exit_code"]
    con.print(f"Exit {code}: {CHECK_EXIT[code]}")
    shown = bool(labels) and any(e["fp"] in (labels or {}) for e in d["inputs"]
                                 if e["status"] != "clean")
    con.print(f"[dim]Privacy: {_e(privacy_said(d['privacy'], shown))}[/]")


def screen_said(d: dict[str, Any]) -> str:
    """What the re-admission SPRT read, beside the screen's calls: the draws it read, and
    the screen's other calls (the rest of a batch, inputs screened once for coverage, failed
    calls), so the two counts add up to the screen's calls."""
    adm = d["admission"]
    screen = (d.get("calls") or {}).get("screen")
    said = (f"{adm['mismatches']} of the {adm['n']} screening draws it read differed from the "
            "reference")
    if isinstance(screen, int) and screen > adm["n"]:
        said += (f"; the screen's other {screen - adm['n']} of its {screen} calls (the rest "
                 "of a batch, every input screened once, failed calls) were not read by it")
    return said


def moves_said(moves: list[dict[str, Any]]) -> str:
    """``2 changed, 1 flaky, 6 unconfirmed``: the moves counted by the kind each row shows."""
    kinds: dict[str, int] = {"changed": 0, "flaky": 0}
    for r in moves:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    return ", ".join(f"{n} {k}" for k, n in kinds.items())


def check_moves(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The inputs of a check that moved, each as ``{fp, kind, status, reference, current,
    then, now, p_family}``: ``changed`` (drift confirmed), ``flaky`` (a screen mismatch the
    confirmation draws put down to the agent's noise: a stochastic verdict), or the status
    itself for inputs the check could not decide (``incomplete``, ``unconfirmed``...).
    ``then`` and ``now`` are the mismatch rates as counts: recorded at the snapshot, and in
    this check's confirmation (else screen) draws. Changed first, then flaky."""
    out = []
    for e in d.get("inputs") or ():
        st = str(e.get("status"))
        if st == "clean":
            continue
        cal = e.get("calibration") or {}
        cf = e.get("confirmation") or {}
        sc = e.get("screen") or {}
        if cf.get("draws"):
            now = (int(cf.get("mismatches") or 0), int(cf["draws"]))
        elif sc.get("draws"):
            now = (int(sc["draws"]) - int(sc.get("matches") or 0), int(sc["draws"]))
        else:
            now = None
        out.append({"fp": e.get("fp"), "status": st,
                    "kind": {"drift": "changed", "noise": "flaky"}.get(st, st),
                    "reference": e.get("reference"), "current": e.get("current"),
                    "then": (int(cal.get("mismatches") or 0), int(cal["draws"]))
                    if cal.get("draws") else None, "now": now,
                    "p_family": cf.get("p_family"),
                    "borderline": e.get("snapshot_status") in ("borderline", "untestable")})
    order = {"changed": 0, "flaky": 1}
    return sorted(out, key=lambda r: order.get(r["kind"], 2))


def render_snapshot_junit(d: dict[str, Any]) -> str:
    """One testcase per admission rule."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite", name=f"snapshot {d['agent']}")
    for r in d["admission"]["rules"]:
        tc = ET.SubElement(suite, "testcase", name=r["rule"], classname="admission", time="0")
        if r["passed"]:
            ET.SubElement(tc, "system-out").text = r["message"]
        else:
            ET.SubElement(tc, "error", message=r["message"][:500], type="refused").text = \
                r["message"]
    return _finish(suites, suite)


def render_check_junit(d: dict[str, Any]) -> str:
    """An admission testcase, then one per input (failure = drift)."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite", name=f"check {d['agent']}")
    tc = ET.SubElement(suite, "testcase", name="admission", classname="check", time="0")
    if d["inadmissible"]:
        msg = "; ".join(f"[{r['rule']}] {r['message']}" for r in d["inadmissible"])
        ET.SubElement(tc, "error", message=msg[:500], type="inadmissible").text = msg
    ch = d.get("stationarity")
    if ch:
        tc = ET.SubElement(suite, "testcase", name="unchanged-during-check", classname="check",
                           time="0")
        if ch["status"] == "changed":
            ET.SubElement(tc, "failure", message=ch["warning"][:500], type="changed").text = \
                ch["warning"]
        elif ch["status"] == "incomplete":
            ET.SubElement(tc, "error", message="the changed-agent check could not finish",
                          type="incomplete")
    for e in d["inputs"]:
        tc = ET.SubElement(suite, "testcase", name=short(e["fp"]), classname="inputs", time="0")
        cf = e["confirmation"]
        if e["status"] == "drift":
            msg = (f"reference {e['reference']!r} drifted to {e['current']!r}: "
                   f"{cf['mismatches']}/{cf['draws']} confirmation draws differ")
            if cf.get("p_family") is not None:
                msg += f" (p {cf['p_value']:.2g}, family p {cf['p_family']:.2g})"
            ET.SubElement(tc, "failure", message=msg[:500], type="drift").text = msg
        elif e["status"] in ("incomplete", "unscreened"):
            ET.SubElement(tc, "error", message=e["note"] or e["status"], type="incomplete")
        elif e["status"] == "unconfirmed":
            ET.SubElement(tc, "skipped", message=e["note"])
    return _finish(suites, suite)
