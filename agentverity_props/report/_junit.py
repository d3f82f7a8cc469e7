"""JUnit XML for CI systems: one testsuite, a testcase per diagnostic and per relation."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any


def _case(suite: ET.Element, name: str, classname: str, *, failure: str | None = None,
          error: str | None = None, skipped: str | None = None, out: str = "") -> None:
    tc = ET.SubElement(suite, "testcase", name=name, classname=classname, time="0")
    if failure:
        ET.SubElement(tc, "failure", message=failure[:500], type="finding").text = failure
    elif error:
        ET.SubElement(tc, "error", message=error[:500], type="incomplete").text = error
    elif skipped:
        ET.SubElement(tc, "skipped", message=skipped[:500])
    if out:
        ET.SubElement(tc, "system-out").text = out


def render_junit(result: dict[str, Any]) -> str:
    """JUnit XML for a run result dict."""
    suites = ET.Element("testsuites", name="agentverity-props")
    suite = ET.SubElement(suites, "testsuite", name=f"agentverity-props run {result['agent']}")
    m = result["meter"]
    meter_msg = (f"{m['call']}: theta CI [{m['ci_low']:.4f}, {m['ci_high']:.4f}] after "
                 f"{m['calls']} calls ({m['pairs']} pairs)")
    if not m["complete"]:
        _case(suite, "meter", "diagnostics", error=f"incomplete evidence: {m['failures']} "
              f"failed draws {m['failure_kinds']}")
    elif m["call"] == "undecided":
        _case(suite, "meter", "diagnostics", error=f"undecided: {m['advice']}")
    else:
        _case(suite, "meter", "diagnostics", out=meter_msg)
    b = result["blindness"]
    if b["status"] == "blind":
        _case(suite, "blindness", "diagnostics",
              failure=f"blind probe set: {b['modal_verdict']!r} is {b['share']:.0%} of verdicts "
                      f"(lower bound {b['ci_low']:.3f} >= {b['threshold']})")
    elif b["status"] == "suppressed":
        _case(suite, "blindness", "diagnostics", skipped="health check suppressed")
    else:
        _case(suite, "blindness", "diagnostics", out=f"blindness {b['status']}")
    for r in result["relations"]:
        name = f"relation {r['name']}"
        said = r.get("statement") or ""
        if r["status"] == "VIOLATED":
            _case(suite, name, "relations", failure=said or (
                f"{r['calibrated_violations']} calibrated violation(s) of {r['exercised']} "
                f"exercised inputs ({r['raw_violations']} raw)"))
        elif r["status"] == "NOT EXERCISED":
            _case(suite, name, "relations", skipped="NOT EXERCISED: " + (
                r.get("unexercised") or "the transform left every input unchanged"))
        elif r["status"] == "NOT TESTED":
            _case(suite, name, "relations", error=f"NOT TESTED: {r.get('not_tested') or said}")
        elif r["status"] == "INCOMPLETE":
            _case(suite, name, "relations", error=f"INCOMPLETE: {said}" if said else
                  f"{r['incomplete']} input(s) lack evidence")
        elif r["status"] == "UNDECIDED":
            _case(suite, name, "relations", error=f"UNDECIDED: {said}")
        else:
            _case(suite, name, "relations", out=f"HOLDS: {said}" if said else
                  f"holds on {r['exercised']} inputs; {r['raw_violations']} raw flips")
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    suite.set("failures", str(sum(1 for c in cases if c.find("failure") is not None)))
    suite.set("errors", str(sum(1 for c in cases if c.find("error") is not None)))
    suite.set("skipped", str(sum(1 for c in cases if c.find("skipped") is not None)))
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"
