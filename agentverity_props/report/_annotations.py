"""Findings as CI annotations: one per finding, in GitHub Actions' workflow-command syntax.

One ``<kind>_findings`` per kind (the registry, ``_registry``, holds which goes with which;
``findings`` in ``_kinds`` reads it) lists what a CI user should see on the run's page:
an ``error`` for a finding (a VIOLATED relation, a blind probe set, drift on a snapshot
input, a failed bench task or tool-call case, a refused snapshot, a regression), a
``warning`` for evidence that decided nothing (incomplete, undecided, inconclusive).
:func:`github_commands` writes them as ``::error title=...::message`` lines, escaped as
GitHub's toolkit escapes them: ``%``, CR and LF in the message; those and ``:`` and ``,`` in
a property. Control characters are written out first (``visible``), so an agent's answer
cannot inject a workflow command of its own: every line break in a value is ``%0A``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .._internal.fingerprint import short
from .._internal.shown import visible

__all__ = ["Finding", "bench_findings", "boundary_findings", "check_findings", "compare_findings",
           "enlarge_findings", "github_commands", "run_findings", "snapshot_findings",
           "tests_findings", "tools_findings"]


@dataclass(frozen=True)
class Finding:
    """One annotation: ``level`` is ``error`` or ``warning``."""

    level: str
    title: str
    message: str


def _fp(d: dict[str, Any], fp: Any) -> str:
    names = d.get("inputs") if isinstance(d.get("inputs"), dict) else {}
    text = names.get(str(fp)) if names else None
    return repr(text) if isinstance(text, str) else short(str(fp))


def run_findings(d: dict[str, Any]) -> list[Finding]:
    out = []
    if not d.get("complete", True):
        out.append(Finding("warning", "run incomplete", d.get("stop_reason") or
                           "some draws gave no evidence"))
    b = d.get("blindness") or {}
    if b.get("status") == "blind":
        out.append(Finding("error", "blind probe set",
                           f"verdict {b.get('modal_verdict')!r} is {b.get('share', 0):.0%} of "
                           f"the sampled verdicts (threshold {b.get('threshold')})"))
    elif b.get("status") == "undecided":
        out.append(Finding("warning", "blindness undecided",
                           "the sample could not tell whether the probe set is blind"))
    m = d.get("meter") or {}
    if m.get("call") == "undecided":
        out.append(Finding("warning", "meter undecided", m.get("advice") or
                           "the meter did not decide within its budget"))
    for key, title in (("dependence", "dependent draws"), ("stationarity", "agent changed")):
        x = d.get(key) or {}
        if x.get("status") in ("dependent", "changed"):
            out.append(Finding("error", title, x.get("warning") or title))
    for r in d.get("relations") or ():
        st = r.get("status")
        if st == "VIOLATED":
            confirmed = [o for o in r.get("outcomes") or () if o.get("status") == "confirmed"]
            ex = "; ".join(f"{_fp(d, o.get('fp'))}: {o.get('source_value')!r} -> "
                           f"{o.get('follow_up_value')!r}" for o in confirmed[:3])
            out.append(Finding("error", f"relation {r.get('name')} VIOLATED",
                               (r.get("statement") or "") + (f" Inputs: {ex}" if ex else "")))
        elif st in ("UNDECIDED", "INCOMPLETE", "NOT TESTED"):
            out.append(Finding("warning", f"relation {r.get('name')} {st}",
                               r.get("statement") or r.get("not_tested") or st))
    missing = (d.get("routes") or {}).get("missing") or []
    if missing:
        out.append(Finding("error", "required verdict never produced", ", ".join(missing)))
    return out


def snapshot_findings(d: dict[str, Any]) -> list[Finding]:
    adm = d.get("admission") or {}
    if adm.get("admitted"):
        return []
    return [Finding("error", f"snapshot refused: {r.get('rule')}", r.get("message") or "")
            for r in adm.get("rules") or () if not r.get("passed")]


def check_findings(d: dict[str, Any]) -> list[Finding]:
    from ._snapshot import check_moves

    out = [Finding("warning", f"check not admissible: {r.get('rule')}", r.get("message") or "")
           for r in d.get("inadmissible") or ()]
    ch = d.get("stationarity") or {}
    if ch.get("status") == "changed":
        out.append(Finding("error", "agent changed during the check", ch.get("warning") or ""))
    for r in check_moves(d):
        if r["kind"] == "changed":
            out.append(Finding("error", f"snapshot input changed: {short(str(r['fp']))}",
                               f"reference {r['reference']!r} now {r['current']!r}: "
                               f"{r['now'][0]}/{r['now'][1]} draws differ (recorded "
                               f"{r['then'][0]}/{r['then'][1]})" if r["now"] and r["then"]
                               else f"reference {r['reference']!r} now {r['current']!r}"))
        elif r["kind"] in ("incomplete", "unscreened"):
            out.append(Finding("warning", f"snapshot input {r['kind']}: "
                               f"{short(str(r['fp']))}", "no decision for this input"))
    return out


def baseline_said(d: dict[str, Any], task_id: Any) -> str:
    """Against ``bench --baseline``: whether a failing task is a new failure or one already
    in the baseline (and how it stood there); '' without a baseline."""
    moved = d.get("moved")
    if not isinstance(moved, dict):
        return ""
    t = next((t for t in moved.get("tasks") or () if t.get("id") == task_id), None)
    if t is None or t.get("kind") == "new" or t.get("before_status") is None:
        return "new failure: the task is not in the baseline"
    before = t.get("before_status")
    then = t.get("before")
    runs = f", {then[0]}/{then[1]} runs passed" if isinstance(then, list) and len(then) == 2 \
        else ""
    if before in ("FAIL", "ERROR"):
        return f"already failing in the baseline ({before}{runs})"
    return f"new failure: {before} in the baseline{runs}"


def bench_findings(d: dict[str, Any]) -> list[Finding]:
    out = []
    for t in d.get("tasks") or ():
        st = t.get("status")
        if st in ("FAIL", "ERROR"):
            msg = next((a.get("message") for a in t.get("attempts") or ()
                        if a.get("status") != "PASS" and a.get("message")), None)
            was = baseline_said(d, t.get("id"))
            out.append(Finding("error", f"bench task {t.get('id')} {st}"
                               + (f" ({was.split(':')[0].split(' (')[0]})" if was else ""),
                               (f"{was}; " if was else "")
                               + f"{t.get('passes')}/{t.get('runs')} runs passed "
                               f"({t.get('evaluation')})" + (f": {msg}" if msg else "")))
        elif st in ("UNDECIDED", "INCOMPLETE"):
            out.append(Finding("warning", f"bench task {t.get('id')} {st}",
                               str(t.get("decided_by") or t.get("stop_reason") or st)))
    for t in (d.get("moved") or {}).get("tasks") or ():
        if t.get("kind") == "changed" and t.get("status") not in ("FAIL", "ERROR"):
            out.append(Finding("warning", f"bench task {t.get('id')} moved",
                               f"{t.get('before_status')} -> {t.get('status')}"))
    return out


def compare_findings(d: dict[str, Any]) -> list[Finding]:
    out = [Finding("error", "regression", str(r)) for r in d.get("regressions") or ()]
    if not d.get("complete", True):
        out.append(Finding("warning", "compare incomplete", d.get("stop_reason") or ""))
    return out


def tools_findings(d: dict[str, Any]) -> list[Finding]:
    out = []
    for c in d.get("cases") or ():
        st = c.get("status")
        if st in ("fail", "error", "inconclusive"):
            why = "; ".join(str(r) for r in (c.get("reasons") or [])[:3])
            out.append(Finding("error" if st != "inconclusive" else "warning",
                               f"tool-call case {st}: {c.get('name')}",
                               f"{c.get('decided_by')}" + (f": {why}" if why else "")))
    return out


def tests_findings(d: dict[str, Any]) -> list[Finding]:
    out = []
    for t in d.get("tests") or ():
        st = t.get("status")
        if st == "failed":
            ce = t.get("minimal")
            ce = ce[0] if isinstance(ce, list) and ce else ce
            what = (ce.get("relation") or ce.get("check")) if isinstance(ce, dict) else None
            out.append(Finding("error", f"property test failed: {t.get('test')}",
                               f"confirmed violation of {what!r}" if what else "confirmed "
                               "violation"))
        elif st in ("inconclusive", "error"):
            out.append(Finding("warning", f"property test {st}: {t.get('test')}", st))
    return out


def enlarge_findings(d: dict[str, Any]) -> list[Finding]:
    if not d.get("complete", True):
        return [Finding("warning", "enlarge incomplete", d.get("cause") or "failed calls")]
    if not d.get("success", True):
        status = {"ok": "decided not blind, above the target share", "blind": "still blind",
                  "undecided": "blindness undecided"}.get(str(d.get("status")), "near blind")
        return [Finding("warning", f"enlarge not done: probe set {status}",
                        f"modal share {d.get('skew_after') or 0:.0%} (threshold "
                        f"{d.get('threshold')}; {d.get('stop_reason') or 'stopped'})")]
    return []


def boundary_findings(d: dict[str, Any]) -> list[Finding]:
    st = d.get("status")
    return [] if st == "located" else [Finding("warning", f"boundary {st}",
                                               str(d.get("reason") or st))]


def _data(s: str) -> str:
    return visible(s).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


#: the longest message GitHub shows in full on the run page; longer ones are cut here
LONGEST_MESSAGE = 4000


def github_commands(items: list[Finding], *, tool: str = "agentverity-props") -> list[str]:
    """One workflow command per finding, every value escaped.

    >>> github_commands([Finding("error", "relation case, VIOLATED", "50% of\\ninputs")])
    ['::error title=agentverity-props%3A relation case%2C VIOLATED::50%25 of%0Ainputs']
    """
    out = []
    for f in items:
        level = f.level if f.level in ("error", "warning", "notice") else "warning"
        msg = f.message if len(f.message) <= LONGEST_MESSAGE else \
            f.message[:LONGEST_MESSAGE - 1] + "…"
        out.append(f"::{level} title={_prop(f'{tool}: {f.title}')}::{_data(msg or f.title)}")
    return out
