"""What moved between two bench results of one benchmark (``bench --baseline OLD.json``).

Per task, the status and the share of passing runs then and now, and which of two kinds a
move is:

- ``changed``: the task's verdict moved and every run of it agreed, in both results (all
  passed, or none did): no sign of the agent's own noise in these runs;
- ``flaky``: its runs disagreed within a result (some passed, some did not): the verdict is
  stochastic, so a move may be that noise rather than a change of the agent.

The split is **descriptive**: it states what the runs show and claims no error rate. Few runs
can hide a rarely flaky task (one that stopped at its first failing run shows no disagreement);
for a decision with an error rate on whether the agent got worse, run
``agentverity-props compare OLD NEW`` (paired, anytime-valid) or ``bench --early-stop
sequential`` (per-task error rate ``alpha / tasks``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MOVES_NOTE", "bench_moves"]

MOVES_NOTE = ("descriptive, no error rate: changed = the verdict moved and every run agreed "
              "within each result; flaky = some runs passed and some did not, so a move may "
              "be the agent's own noise. For a decision with an error rate: agentverity-props "
              "compare OLD NEW, or bench --early-stop sequential")


def _flaky(t: dict[str, Any]) -> bool:
    runs, passes = int(t.get("runs") or 0), int(t.get("passes") or 0)
    return 0 < passes < runs


def _rate(t: dict[str, Any]) -> float | None:
    runs = int(t.get("runs") or 0)
    return int(t.get("passes") or 0) / runs if runs else None


def bench_moves(before: dict[str, Any], after: dict[str, Any], *,
                baseline: str | None = None) -> dict[str, Any]:
    """Per task of ``after``, what moved since ``before`` (two bench result dicts).

    >>> t = lambda id_, status, passes, runs: {"id": id_, "status": status, "passes": passes,
    ...                                       "runs": runs}
    >>> m = bench_moves({"tasks": [t("a", "PASS", 5, 5), t("b", "PASS", 4, 5)]},
    ...                 {"tasks": [t("a", "FAIL", 0, 1), t("b", "FAIL", 3, 5)]})
    >>> [(r["id"], r["kind"]) for r in m["tasks"]], m["changed"], m["flaky"]
    ([('a', 'changed'), ('b', 'flaky')], 1, 1)
    """
    prev = {str(t.get("id")): t for t in before.get("tasks") or ()}
    rows = []
    for t in after.get("tasks") or ():
        tid = str(t.get("id"))
        b = prev.pop(tid, None)
        now = [int(t.get("passes") or 0), int(t.get("runs") or 0)]
        if b is None:
            rows.append({"id": tid, "kind": "new", "before_status": None,
                         "status": t.get("status"), "before": None, "now": now, "delta": None})
            continue
        then = [int(b.get("passes") or 0), int(b.get("runs") or 0)]
        r0, r1 = _rate(b), _rate(t)
        delta = None if r0 is None or r1 is None else r1 - r0
        moved = b.get("status") != t.get("status") or (delta is not None and delta != 0)
        kind = ("flaky" if _flaky(t) or _flaky(b) else "changed") if moved else "same"
        rows.append({"id": tid, "kind": kind, "before_status": b.get("status"),
                     "status": t.get("status"), "before": then, "now": now, "delta": delta})
    for tid, b in prev.items():
        rows.append({"id": tid, "kind": "gone", "before_status": b.get("status"),
                     "status": None, "before": [int(b.get("passes") or 0),
                                                int(b.get("runs") or 0)],
                     "now": None, "delta": None})
    order = {"changed": 0, "flaky": 1, "new": 2, "gone": 3, "same": 4}
    rows.sort(key=lambda r: order[r["kind"]])
    bench_then = (before.get("benchmark") or {}).get("name")
    bench_now = (after.get("benchmark") or {}).get("name")
    return {"baseline": baseline, "baseline_agent": before.get("agent"),
            "same_benchmark": bench_then == bench_now,
            "changed": sum(r["kind"] == "changed" for r in rows),
            "flaky": sum(r["kind"] == "flaky" for r in rows),
            "note": MOVES_NOTE, "tasks": rows}
