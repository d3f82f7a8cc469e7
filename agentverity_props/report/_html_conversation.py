"""The HTML view of conversation tests (the ``conversation`` kind): each minimal
conversation turn by turn, its evidence, the calls spent and the reproduce line. Reads only
the versioned JSON; an unexpected shape raises and the caller falls back to the tree view."""

from __future__ import annotations

from typing import Any

from ..decide import account

__all__ = ["CONVERSATION_EXIT", "conversation_context"]

CONVERSATION_EXIT = {0: "every conversation test passed",
                     1: "a conversation test failed (confirmed violation)",
                     2: "a conversation test errored or was inconclusive"}
_CLASS = {"passed": "good", "failed": "bad", "error": "bad", "inconclusive": "warn"}


def _turn(t: dict[str, Any]) -> dict[str, Any]:
    text = t.get("text")
    return {"user": text if text is not None else None,
            "fp": str(t.get("fp", "")).split(":", 1)[-1][:12],
            "verdict": t.get("verdict"), "tools": ", ".join(t.get("tools") or ()) or "no tool"}


def conversation_context(d: dict[str, Any]) -> dict[str, Any]:
    tests = []
    for t in d["tests"]:
        ces = []
        for ce in t.get("minimal") or ():
            dec = ce.get("decision") or {}
            ces.append({**ce, "rows": [_turn(x) for x in ce.get("turns") or ()],
                        "edited": [_turn(x) for x in ce.get("follow_up") or ()], "d": dec,
                        "evidence": account(dec).inequality()})
        tests.append({**t, "cls": _CLASS.get(t.get("status"), "muted"), "ces": ces})
    statuses = [t.get("status") for t in d["tests"]]
    counts = {s: statuses.count(s) for s in ("passed", "failed", "error", "inconclusive")}
    return {"exit_meanings": CONVERSATION_EXIT,
            "agent": ", ".join(dict.fromkeys(str(t.get("agent")) for t in d["tests"])) or "–",
            "tests": tests,
            "summary": [(k, str(v), _CLASS[k] if v else "muted") for k, v in counts.items()]}
