"""Text and JUnit renderers of conversation tests (the ``conversation`` kind's
dict): the minimal failing conversation turn by turn, the evidence, the calls spent and how
to reproduce it.

A turn shows its text when the dict carries it (``include_inputs``: the terminal), else its
fingerprint (files keep fingerprints unless asked for inputs).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from ..decide import account

__all__ = ["render_conversation_junit", "render_conversation_lines",
           "render_conversation_text"]


def _turn(t: dict[str, Any]) -> str:
    text = t.get("text")
    if text is not None:
        return repr(text)
    return "fp " + str(t.get("fp", "?")).split(":", 1)[-1][:12]


def _agent_side(t: dict[str, Any]) -> str:
    tools = ", ".join(t.get("tools") or ()) or "no tool"
    return f"verdict {t.get('verdict')!s:<14} tools: {tools}"


def counterexample_lines(ce: dict[str, Any]) -> list[str]:
    """One counterexample: the conversation turn by turn, then the evidence."""
    d = ce.get("decision") or {}
    n = ce.get("n_turns")
    out = [f"{ce.get('kind')} '{ce.get('check')}' violated — minimal conversation: {n} "
           f"turn{'s' if n != 1 else ''}" + (f" ({ce['description']})"
                                               if ce.get("description") else "")]
    for i, t in enumerate(ce.get("turns") or (), 1):
        out.append(f"  {i}. user: {_turn(t)}")
        out.append(f"     agent: {_agent_side(t)}")
    if ce.get("follow_up"):
        edit = ce.get("edit") or {}
        out.append(f"  edited ({edit.get('edit')} at turn {edit.get('position')}): last verdict "
                   f"{ce.get('source_value')!r} -> {ce.get('follow_up_value')!r}")
        for i, t in enumerate(ce["follow_up"], 1):
            out.append(f"  {i}'. user: {_turn(t)}")
            out.append(f"      agent: {_agent_side(t)}")
    src = (f"{d.get('source_violations')}/{d.get('source_draws')} source replays"
           if ce.get("kind") == "relation" else "a null at the invariant's tolerance")
    out.append(f"  evidence: {d.get('follow_up_violations')}/{d.get('follow_up_draws')} replays "
               f"violate vs {src}; {account(d).inequality()}")
    out.append(f"  calls when first confirmed: {ce.get('calls_at_confirmation')}")
    return out


def render_conversation_lines(test: dict[str, Any]) -> list[str]:
    """One conversation test: its status, every minimal conversation, calls and reproduction."""
    out = [f"{test.get('status', '?').upper()} {test.get('test')} — agent {test.get('agent')}"]
    for ce in test.get("minimal") or ():
        out += counterexample_lines(ce)
    out.append(f"  calls: {test.get('calls')} agent turns ({test.get('shrink_calls')} after the "
               f"first confirmation), {test.get('examples')} examples, "
               f"{test.get('candidates')} conversations decided, {test.get('undecided')} "
               "undecided")
    rep = test.get("reproduce") or {}
    if rep.get("blob"):
        out.append(f"  reproduce: {rep['blob']}")
    elif rep.get("seed") is not None:
        out.append(f"  reproduce: @seed({rep['seed']})")
    for w in test.get("warnings") or ():
        out.append(f"  warning: {w}")
    return out


def render_conversation_text(d: dict[str, Any], *, color: bool = False, width: int = 100
                             ) -> str:
    """Every conversation test of the document, one block each (``color``/``width`` are
    accepted for the CLI's renderer signature; the text is plain)."""
    from .._internal.shown import for_text

    d = for_text(d)  # control and bidi characters of turns and names made visible
    lines: list[str] = []
    for test in d.get("tests") or ():
        lines += render_conversation_lines(test)
        lines.append("")
    failed = sum(1 for t in d.get("tests") or () if t.get("status") == "failed")
    lines.append(f"{len(d.get('tests') or ())} conversation test(s), {failed} failed")
    return "\n".join(lines) + "\n"


def render_conversation_junit(d: dict[str, Any]) -> str:
    """JUnit XML: a failed test -> <failure> with its minimal conversation; inconclusive or
    error -> <error>."""
    tests = d.get("tests") or ()
    suites = ET.Element("testsuites")
    suite = ET.SubElement(suites, "testsuite", {
        "name": "agentverity-props conversations", "tests": str(len(tests)),
        "failures": str(sum(t.get("status") == "failed" for t in tests)),
        "errors": str(sum(t.get("status") in ("inconclusive", "error") for t in tests))})
    for t in tests:
        case = ET.SubElement(suite, "testcase", {"name": str(t.get("test"))})
        body = "\n".join(render_conversation_lines(t))
        if t.get("status") == "failed":
            ET.SubElement(case, "failure", {"message": "conversation check violated"}).text = body
        elif t.get("status") in ("inconclusive", "error"):
            ET.SubElement(case, "error", {"message": str(t.get("status"))}).text = body
    return ET.tostring(suites, encoding="unicode") + "\n"
