"""Migrations of older result files to the current version of their kind, one step each.

Each takes the older version's dict and returns the next version's (a new dict; nothing of
the input is dropped or changed in place). The models apply them before validating
(``Document.MIGRATIONS``), so every reader of a file — ``report``, ``check`` reading a
snapshot, a user's ``RunDocument.model_validate`` — sees the current version.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["migrate_bench_v1", "migrate_compare_v1", "migrate_run_v1", "migrate_run_v2",
           "migrate_snapshot"]


def migrate_run_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``run/1`` result as ``run/2``: each outcome's Fisher ``confirmation`` becomes a
    ``decision`` (its p-value kept; the e-value is its reciprocal, which is what version 2
    compares with ``1/alpha``), ``raw`` is set for the screen flips version 1 counted, and
    ``not-confirmed`` outcomes become ``pass`` (version 1 dismissed them). Nothing is dropped:
    the original confirmation stays under ``decision.v1_confirmation``."""
    out = dict(d)
    rels = []
    for r in d.get("relations") or []:
        outcomes = []
        for old in r.get("outcomes") or []:
            o = dict(old)
            c = o.pop("confirmation", None)
            status = o.get("status")
            o["raw"] = status in ("raw", "confirmed", "not-confirmed")
            o["status"] = {"not-confirmed": "pass", "raw": "pending"}.get(str(status), status)
            if isinstance(c, dict):
                p = c.get("p_value") or 1.0
                o["decision"] = {
                    "test": str(c.get("test", "one-sided Fisher exact (version 1)")),
                    "call": o["status"], "alpha": c.get("alpha_per_look", c.get("alpha")),
                    "beta": None, "alternative": None,
                    "e_violation": 1.0 / p if p else math.inf, "e_pass": None,
                    **{k: c.get(k) for k in ("follow_up_violations", "follow_up_draws",
                                             "source_violations", "source_draws")},
                    "rounds": c.get("follow_up_draws"), "p_value": p, "v1_confirmation": c}
            else:
                o["decision"] = None
            outcomes.append(o)
        rels.append({**r, "undecided": 0, "outcomes": outcomes})
    out["relations"] = rels
    out.setdefault("advice", [])
    return out


def migrate_run_v2(d: dict[str, Any]) -> dict[str, Any]:
    """A ``run/2`` result as ``run/3``. Version 2 decided each (relation, input) on its own and
    had no pooled effect: ``effect`` is null, the statement says what version 2's status meant
    (HOLDS = every input dismissed against a violation that shows almost every time), and
    nothing else changes."""
    out = dict(d)
    meaning = {"HOLDS": "version 2: every input dismissed against a violation showing almost "
                        "every time; no effect size was bounded",
               "VIOLATED": "version 2: input(s) confirmed violating beyond the agent's noise"}
    rels = []
    for r in d.get("relations") or []:
        outcomes = [{**o, "suspicion": None} for o in r.get("outcomes") or []]
        rels.append({**r, "effect": None, "unexercised": "", "suspects": [],
                     "statement": meaning.get(str(r.get("status")),
                                              f"version 2: {r.get('status')}"),
                     "outcomes": outcomes})
    out["relations"] = rels
    return out


def migrate_bench_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``bench/1`` result as ``bench/2``. Version 1 decided a sequential task at the run cap
    on its point estimate and computed reliability, pass@k and pass^k as proportions of the
    runs made (biased when a task stopped early): its verdicts and figures are kept as they
    were, ``observed_rate`` is its reliability, and the estimator and guarantee say so."""
    v1_est = "proportions of the runs made (version 1: biased when a task stopped early)"
    out = dict(d)
    cfg: dict[str, Any] = d["config"] if isinstance(d.get("config"), dict) else {}
    out["guarantee"] = (
        "version 1 benchmark: a sequential task not decided by the --runs cap was decided on "
        "its point estimate, so no error rate is guaranteed for it; rerun for one"
        if cfg.get("early_stop") == "sequential" else
        "version 1 benchmark: each task's verdict describes its runs; no error rate claimed")
    out["tasks"] = [{**t, "observed_rate": t.get("reliability"), "estimator": v1_est}
                    for t in d.get("tasks") or [] if isinstance(t, dict)]
    s = dict(d.get("summary") or {})
    s.setdefault("undecided", 0)
    s.update(observed_rate=s.get("reliability"), estimator=v1_est,
             reliability_method="pooled passes / attempts (version 1)",
             pass_k_tasks={f"pass{c}{k}": int(s.get("tasks") or 0)
                           for k in s.get("pass_hat_k") or {} for c in "@^"})
    out["summary"] = s
    return out


def migrate_plan_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``plan/1`` result as ``plan/2``. Version 1's ``noise`` was the synthetic agent's
    per-call flip share; version 2's is the pair disagreement ``run`` prints, and the flip
    share is ``flip``. The figures are kept; each level's noise is converted
    (``2 flip - 1.5 flip^2``)."""
    out = dict(d)
    levels = []
    for lv in d.get("levels") or []:
        if isinstance(lv, dict) and isinstance(lv.get("noise"), (int, float)):
            p = float(lv["noise"])
            levels.append({**lv, "noise": 2 * p - 1.5 * p * p, "flip": p})
        else:
            levels.append(lv)
    out["levels"] = levels
    return out


def migrate_compare_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``compare/1`` result as ``compare/2``. Version 1 ran every pair in a fixed order with
    no warm-up and no latency margin, and gave each metric its own alpha: its verdicts are
    kept as they were decided, its multiplicity is stated as it was (``family_alpha`` null:
    not family-wise), each agent's reference is its identity, and the e-value a verdict
    rests on is the one at its decision."""
    out = dict(d)
    found = d.get("multiplicity")
    old: dict[str, Any] = found if isinstance(found, dict) else {}
    overall, per_task = old.get("overall_alpha"), old.get("per_task_alpha")
    metrics = list(old.get("metrics") or ["pass_rate", "error_rate", "latency"])
    pairs_n, tasks_n = int(old.get("pairs") or 0), int(old.get("tasks") or 0)
    out["multiplicity"] = {
        "method": "bonferroni per metric (version 1)", "family_alpha": None,
        "verdicts": pairs_n * len(metrics) * (1 + tasks_n), "pairs": pairs_n,
        "metrics": metrics, "tasks": tasks_n, "weights": {},
        "alpha_per_verdict": {**dict.fromkeys(metrics, overall), "per_task": per_task}}
    out["guarantee"] = ("version 1 comparison: each overall metric at its own alpha and the "
                        "agents run in a fixed order, so neither a family-wise error rate nor "
                        "the latency verdict is guaranteed; rerun to get both")
    out["design"] = {"order": "fixed (version 1): every task ran the agents in command-line "
                              "order", "latency": "any difference (version 1)",
                     "warmup": "none (version 1)"}
    cfg = dict(d.get("config") or {})
    cfg.update(latency_margin=0.0, warmup=0, order_seed=None)
    out["config"] = cfg
    agents = [{**a, "ref": a.get("agent"), "warmup": {"calls": 0, "errors": 0,
                                                      "latency_s": []}}
              for a in d.get("agents") or [] if isinstance(a, dict)]
    out["agents"] = agents

    def metric(m: Any) -> Any:
        if not isinstance(m, dict):
            return m
        shown = m.get("decided_e_value") if m.get("better") else m.get("e_value")
        return {**m, "verdict_e_value": shown}

    winners: list[str] = []
    pairs = []
    for p in d.get("pairs") or []:
        if not isinstance(p, dict):
            continue
        ms = {k: metric(v) for k, v in (p.get("metrics") or {}).items()}
        name = f"{p.get('a')} vs {p.get('b')}"
        winners += [f"{name} {k}" for k, v in ms.items() if isinstance(v, dict) and
                    v.get("better")]
        tasks = []
        for t in p.get("tasks") or []:
            tm = {k: metric(v) for k, v in ((t or {}).get("metrics") or {}).items()}
            winners += [f"{name} {k} task {t.get('id')}" for k, v in tm.items()
                        if isinstance(v, dict) and v.get("better")]
            tasks.append({**t, "metrics": tm})
        pairs.append({**p, "a_ref": p.get("a_agent"), "b_ref": p.get("b_agent"),
                      "order": None, "latency_median_ratio": None, "metrics": ms,
                      "tasks": tasks})
    out["pairs"] = pairs
    out["winners"] = winners
    calls = dict(d.get("calls") or {})
    calls.setdefault("warmup", 0)
    out["calls"] = calls
    return out


def migrate_snapshot(doc: dict[str, Any]) -> dict[str, Any]:
    """A ``snapshot/1`` document as ``snapshot/2``, every field kept (a new dict).

    snapshot/1 has no calibration sample. An input that flipped while measured gets its
    admission counts as its recorded rate (biased low: the reference is their majority), the
    others none (tested against the tolerance only, as snapshot/1 was). ``calibration.source``
    says so, and check repeats it: re-create the snapshot for the full guarantee.
    """
    import copy

    out = copy.deepcopy(doc)
    out["migrated_from"] = doc.get("schema")
    out["calibration"] = {
        "draws_per_input": 0, "source": "admission",
        "note": "this is a snapshot/1 file (no calibration sample): inputs that flipped "
                "while measured are tested against their admission counts (biased low), the "
                "others against the tolerance only; re-create the snapshot for the guarantee "
                "that an unchanged agent shows drift in at most alpha of checks"}
    inputs = out.get("inputs")
    for e in inputs if isinstance(inputs, list) else ():  # else the model names the damage
        if not isinstance(e, dict):
            continue
        counts, ref, draws = e.get("counts"), e.get("reference"), e.get("draws")
        if e.get("flipped") and isinstance(counts, dict) and isinstance(draws, int) \
                and isinstance(ref, str):
            seen = sum(v for v in counts.values() if isinstance(v, int))
            e["calibration"] = {"draws": seen, "mismatches": seen - int(counts.get(ref, 0)),
                                "failures": 0}
        else:
            e["calibration"] = None
    return out
