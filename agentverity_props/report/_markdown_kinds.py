"""Markdown for the kinds beside run, snapshot, check, bench and compare: plan, tools,
enlarge, the pytest plugin's property-test reports (counterexample, conversation) and the
``boundary`` command's result (a dict with no schema, told by its shape). Each is one
kind's body; the registry (``_registry``) holds which goes with which kind and ``_kinds``
frames it."""

from __future__ import annotations

from typing import Any

from .._internal.fingerprint import short
from ..decide import account
from ._md import code, esc, fence, head, meaning, num, table

__all__ = ["boundary_exit", "boundary_lines", "conversation_lines", "counterexample_lines",
           "enlarge_lines", "plan_lines", "tools_lines"]


def plan_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._plan import _PHASES, PLAN_EXIT

    cfg = d.get("config") or {}
    out = head("plan", d, meaning(PLAN_EXIT, d),
                f"{d.get('inputs')} inputs · {len(d.get('relations') or ())} relation(s) · "
                f"tolerance {num(cfg.get('tolerance'), 'g')} · alpha {num(cfg.get('alpha'), 'g')}"
                " · no agent was called")
    levels = d.get("levels") or []
    heads = ["phase", *[f"noise {num(lv.get('noise'), 'g')}" for lv in levels]]
    rows = []
    for key, label in _PHASES:
        if not any(key in (lv.get("calls") or {}) for lv in levels):
            continue
        row = [esc(label)]
        for lv in levels:
            c = (lv.get("calls") or {}).get(key) or {}
            lo, hi = c.get("low"), c.get("high")
            row.append(num(c.get("mean"), ".0f")
                       + (f" ({num(lo, '.0f')}–{num(hi, '.0f')})" if lo != hi else ""))
        rows.append(row)
    out += ["#### Calls per phase (mean over the simulated runs; range of single runs)", "",
            *table(heads, rows, align="l" + "r" * len(levels)), ""]
    reach = [["the whole run, complete",
              *[num(((lv.get("reach") or {}).get("run") or {}).get("budget"), ".0f")
                for lv in levels]]]
    out += ["#### Budget that makes the whole run reachable", "",
            *table(heads[:1] + heads[1:], reach, align="l" + "r" * len(levels)), ""]
    out += [f"- {esc(a)}" for a in d.get("assumptions") or ()]
    return [*out, ""]


def tools_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._tools import TOOLS_EXIT

    k = d.get("summary") or {}
    out = head("tools", d, meaning(TOOLS_EXIT, d),
                f"Cases {code(d.get('config'))} · {k.get('pass', 0)} passed, {k.get('fail', 0)} "
                f"failed, {k.get('error', 0)} errors, {k.get('inconclusive', 0)} inconclusive")
    order = {"fail": 0, "error": 1, "inconclusive": 2, "pass": 3}
    cases = sorted(d.get("cases") or (), key=lambda c: order.get(str(c.get("status")), 4))
    rows = []
    for c in cases:
        n = int(c.get("passed") or 0) + int(c.get("failed") or 0)
        iv = c.get("interval")
        rate = f"{c.get('passed', 0)}/{n}" + (f" [{num(iv[0], '.2f')}, {num(iv[1], '.2f')}]"
                                               if iv and n > 1 else "")
        rows.append([code(c.get("name")), f"**{esc(str(c.get('status')).upper())}**", rate,
                     str(c.get("calls", "–")),
                     ", ".join(code(t) for t in c.get("tools_seen") or ()) or "none"])
    out += ["#### Cases", "", *table(("case", "result", "passed [CI]", "calls", "tools seen"),
                                     rows, align="llrrl"), ""]
    for c in cases:
        if c.get("status") == "pass" and not c.get("reasons"):
            continue
        out.append(f"- **{esc(str(c.get('status')).upper())}** {code(c.get('name'))}: "
                   f"{esc(c.get('decided_by'))}")
        out += [f"  - {esc(why, limit=300)}" for why in (c.get("reasons") or [])[:5]]
    return [*out, "", f"Calls: {d.get('calls', 0)}", ""]


def _confirmed(e: dict[str, Any] | None) -> str:
    """An added input's confirmation, in a few words (nothing for files without it)."""
    if not e:
        return ""
    return (f" (confirmed: {e.get('agreeing')}/{e.get('draws')} fresh draws, e "
            f"{num(e.get('e_value'), '.3g')} ≥ {num(e.get('threshold'), '.3g')})")


def _interval(b: Any) -> str:
    """`` [0.43, 0.89]`` from a blindness test's dict (nothing for files without it)."""
    if not isinstance(b, dict) or b.get("ci_low") is None:
        return ""
    return f" [{num(b.get('ci_low'), '.2f')}, {num(b.get('ci_high'), '.2f')}]"


def enlarge_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._html_kinds import ENLARGE_EXIT

    out = head("enlarge", d, meaning(ENLARGE_EXIT, d),
                f"Modal verdict {code(d.get('modal_verdict'))} share "
                f"{num(d.get('skew_before'), '.0%')}{_interval(d.get('blindness_before'))} → "
                f"{num(d.get('skew_after'), '.0%')}{_interval(d.get('blindness_after'))} "
                f"(threshold {num(d.get('threshold'), 'g')}) · "
                f"{len(d.get('added') or ())} input(s) added · {d.get('calls')} agent calls · "
                f"{esc(d.get('stop_reason'))}")
    pairs = sorted(d.get("boundary_pairs") or (), key=lambda p: len(str(p.get("source"))))
    if pairs:
        rows = [[code(p.get("source")), code(p.get("follow_up")),
                 f"{code(p.get('source_verdict'))} → {code(p.get('follow_up_verdict'))}",
                 code((p.get("edit") or {}).get("name")),
                 num((p.get("decision") or {}).get("p_value"), ".2g")] for p in pairs]
        out += ["#### Boundary pairs (one edit flips the verdict; shortest first)", "",
                *table(("input", "edited", "verdict", "edit", "p"), rows, align="llllr"), ""]
    added = d.get("added") or []
    evidence = {e.get("text"): e for e in d.get("evidence") or []}
    if added:
        out += ["#### Added inputs", "", *[f"- {code(a)}{_confirmed(evidence.get(a))}"
                                            for a in added[:50]]]
        if len(added) > 50:
            out.append(f"- … and {len(added) - 50} more")
        out.append("")
    if d.get("advice"):
        out += [f"Advice: {esc(d['advice'])}", ""]
    return out


def _tests(d: dict[str, Any], title: str, meanings: dict[int, str], unit: str) -> list[str]:
    tests = d.get("tests") or []
    failed = sum(1 for t in tests if t.get("status") == "failed")
    out = head(title, d, meaning(meanings, d), f"{len(tests)} test(s), {failed} failed")
    rows = [[code(t.get("test")), f"**{esc(t.get('status'))}**", code(t.get("agent")),
             str(t.get("confirmed", "–")), str(t.get("calls", "–"))] for t in tests]
    out += ["#### Tests", "", *table(("test", "status", "agent", "confirmed", unit), rows,
                                     align="lllrr"), ""]
    return out


def counterexample_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._html_kinds import CX_EXIT

    out = _tests(d, "property tests", CX_EXIT, "calls")
    for t in d.get("tests") or ():
        for label, ce in (("minimal", t.get("minimal")), ("first found", t.get("first"))):
            if not isinstance(ce, dict):
                continue
            c = ce.get("confirmation") or {}
            out += [f"#### {code(t.get('test'))}: {label} counterexample "
                    f"(relation {code(ce.get('relation'))})", "",
                    *table(("", "input", "verdict"),
                           [["source", code(ce.get("source")), code(ce.get("source_value"))],
                            ["follow-up", code(ce.get("follow_up")),
                             code(ce.get("follow_up_value"))]]), "",
                    f"Evidence: {c.get('follow_up_violations')}/{c.get('follow_up_draws')} "
                    f"follow-up vs {c.get('source_violations')}/{c.get('source_draws')} source "
                    f"re-draws violate; {account(c).inequality()}", ""]
            if label == "minimal" and ce.get("example"):
                out += ["Pin it:", "", *fence(str(ce["example"]), "python"), ""]
            if label == "minimal" and t.get("shrink_complete") is not False:
                break  # the first-found one only when shrinking did not finish
    return out


def conversation_lines(d: dict[str, Any], **_: Any) -> list[str]:
    from ._html_conversation import CONVERSATION_EXIT

    out = _tests(d, "conversation tests", CONVERSATION_EXIT, "turns drawn")
    for t in d.get("tests") or ():
        for ce in sorted(t.get("minimal") or (), key=lambda c: c.get("n_turns") or 0):
            rows = []
            for i, turn in enumerate(ce.get("turns") or (), 1):
                said = turn.get("text")
                rows.append([str(i), code(said) if isinstance(said, str)
                             else code("fp " + short(str(turn.get("fp")))),
                             code(turn.get("verdict")),
                             ", ".join(code(x) for x in turn.get("tools") or ()) or "–"])
            out += [f"#### {code(t.get('test'))}: {esc(ce.get('kind'))} "
                    f"{code(ce.get('check'))} violated, minimal conversation of "
                    f"{ce.get('n_turns')} turn(s)", "",
                    *table(("turn", "user", "verdict", "tools"), rows, align="rlll"), ""]
        blob = (t.get("reproduce") or {}).get("blob")
        if blob:
            out += ["Reproduce:", "", *fence(str(blob), "python"), ""]
    return out


def boundary_exit(d: dict[str, Any]) -> int:
    """The exit code of the ``boundary`` command (its result records none): 0 when a crossing
    was located, 1 when there is none or it stayed undecided, 2 otherwise."""
    return {"located": 0, "no-crossing": 1, "undecided": 1}.get(str(d.get("status")), 2)


#: what each exit code of the ``boundary`` command means
BOUNDARY_EXIT = {0: "crossing located", 1: "no crossing, or it stayed undecided",
                 2: "incomplete evidence"}


def boundary_lines(d: dict[str, Any], **_: Any) -> list[str]:
    out = head("boundary", d, meaning(BOUNDARY_EXIT, d), None)
    dec = d.get("decision") or {}
    if d.get("status") == "located":
        out += table(("side", "input", "verdict"),
                     [["before", code(d.get("low")), code(d.get("low_verdict"))],
                      ["after", code(d.get("high")), code(d.get("high_verdict"))]])
        edit = d.get("edit") or {}
        out += ["", f"Edit: {esc(edit.get('kind'))} {code(edit.get('before'))} → "
                f"{code(edit.get('after'))} · p {num(dec.get('p_value'), '.3g')} (alpha "
                f"{num(dec.get('alpha'), 'g')})", ""]
    else:
        out += [f"Status: **{esc(d.get('status'))}**", ""]
    out += [f"Calls: {d.get('calls', '–')}", ""]
    return out

