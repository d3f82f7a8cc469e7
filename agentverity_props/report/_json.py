"""Versioned JSON for every result kind; the ``schema`` key always comes first."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import BadInput

KNOWN_SCHEMAS = ("agentverity_props.run/3", "agentverity_props.counterexample/1",
                 "agentverity_props.bench/2", "agentverity_props.compare/2",
                 "agentverity_props.tools/1", "agentverity_props.snapshot/1",
                 "agentverity_props.snapshot/2", "agentverity_props.check/2",
                 "agentverity_props.enlarge/1", "agentverity_props.check/1",
                 "agentverity_props.conversation/1", "agentverity_props.plan/1")

#: top-level keys every result of a kind has (the ``required`` lists of docs/schemas/*.json;
#: a unit test keeps them equal): a file without them is refused, not rendered half-empty
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "agentverity_props.run/3": (
        "agent", "complete", "exit_code", "stop_reason", "findings", "advice", "config",
        "meter", "blindness", "relations", "calls", "ledger", "privacy", "inputs"),
    "agentverity_props.bench/2": (
        "agent", "benchmark", "complete", "exit_code", "stop_reason", "config", "guarantee",
        "summary", "calls", "tasks", "ledger", "privacy"),
    "agentverity_props.check/2": (
        "agent", "status", "exit_code", "snapshot", "inadmissible", "admission", "stability",
        "drift", "inputs", "calls", "ledger", "privacy"),
    "agentverity_props.compare/2": (
        "benchmark", "complete", "exit_code", "stop_reason", "rounds", "config",
        "multiplicity", "design", "guarantee", "winners", "agents", "pairs", "regressions",
        "calls", "privacy"),
    "agentverity_props.conversation/1": ("include_inputs", "tests"),
    "agentverity_props.counterexample/1": ("tests",),
    "agentverity_props.plan/1": (
        "inputs", "relations", "exercised", "config", "hold_floor", "levels", "assumptions"),
    "agentverity_props.snapshot/2": (
        "created_at", "tool_version", "agent", "admission", "config", "fingerprints",
        "reference_form", "calibration", "inputs", "meter", "blindness", "calls", "privacy"),
}


def _clean(obj: Any) -> Any:
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


#: list items in a result beyond which its deep parts are written one item per line
_LARGE_ITEMS = 20_000


def dumps(result: dict[str, Any]) -> str:
    """Pretty JSON with ``schema`` first and non-finite floats as null.

    A large result (a 100,000-input run has 800,000 relation outcomes) is indented to four
    levels only, each deeper value on one line: the same JSON, written by the C encoder
    (``indent`` forces Python's pure-Python encoder, ~10x slower and holding every token of
    the output in a list at once). :func:`iter_dumps` gives the same text in pieces.
    """
    return "".join(iter_dumps(result))


def iter_dumps(result: dict[str, Any]) -> Iterator[str]:
    """:func:`dumps` in pieces, for writing a large result without ever holding its text."""
    ordered = {"schema": result.get("schema"),
               **{k: v for k, v in result.items() if k != "schema"}}
    if _items(ordered, 4) <= _LARGE_ITEMS:
        yield json.dumps(_clean(ordered), indent=2, ensure_ascii=False) + "\n"
        return
    yield from _shallow(ordered, 0)  # cleans value by value: no copy of the whole result
    yield "\n"


def _items(obj: Any, depth: int) -> int:
    """How many list items the first ``depth`` levels of ``obj`` hold (a cheap size)."""
    if depth == 0:
        return 0
    if isinstance(obj, dict):
        return sum(_items(v, depth - 1) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return len(obj) + sum(_items(v, depth - 1) for v in obj)
    return 0


def _shallow(obj: Any, level: int) -> Iterator[str]:
    if level >= 4 or not isinstance(obj, (dict, list, tuple)) or not obj:
        yield json.dumps(_clean(obj), ensure_ascii=False)
        return
    pad, inner = "  " * level, "  " * (level + 1)
    items = obj.items() if isinstance(obj, dict) else ((None, v) for v in obj)
    yield "{" if isinstance(obj, dict) else "["
    for i, (k, v) in enumerate(items):
        yield ("," if i else "") + "\n" + inner
        if k is not None:
            yield json.dumps(str(k), ensure_ascii=False) + ": "
        yield from _shallow(v, level + 1)
    yield "\n" + pad + ("}" if isinstance(obj, dict) else "]")


def load_result(path: str | Path) -> dict[str, Any]:
    """Read a saved result; a one-line BadInput for anything that is not one."""
    p = Path(path)
    from .._internal.files import read_file_bytes
    raw = read_file_bytes(p, what="result file")
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise BadInput(f"{p} is not UTF-8 text", "pass a JSON file written by agentverity-props"
                       ) from None
    except json.JSONDecodeError as exc:
        raise BadInput(f"{p} is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                       f"{exc.msg})", "pass a JSON file written by agentverity-props") from None
    except (ValueError, RecursionError):  # a 10,000-digit integer, or nesting too deep
        from .._internal.files import loads_json
        data = loads_json(raw, where=str(p), fix="pass a JSON file written by agentverity-props")
    original = data.get("schema") if isinstance(data, dict) else None
    if isinstance(data, dict) and data.get("schema") == "agentverity_props.run/1":
        data = migrate_run_v1(data)
    if isinstance(data, dict) and data.get("schema") == "agentverity_props.run/2":
        data = migrate_run_v2(data)
    if isinstance(data, dict) and data.get("schema") == "agentverity_props.compare/1":
        data = migrate_compare_v1(data)
    if isinstance(data, dict) and data.get("schema") == "agentverity_props.bench/1":
        data = migrate_bench_v1(data)
    if not isinstance(data, dict) or data.get("schema") not in KNOWN_SCHEMAS:
        got = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise BadInput(f"{p} is not an agentverity-props result (schema {got!r})",
                       "pass a file written with --format json")
    need = REQUIRED_KEYS.get(str(original)) or REQUIRED_KEYS.get(str(data.get("schema")), ())
    missing = [k for k in need if k not in data]
    if missing:
        raise BadInput(f"{p} claims schema {original!r} but lacks "
                       f"{', '.join(missing[:5])}{' and more' if len(missing) > 5 else ''}",
                       "pass an unedited file written by agentverity-props --format json")
    return data


def migrate_run_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``run/1`` result as ``run/2``: each outcome's Fisher ``confirmation`` becomes a
    ``decision`` (its p-value kept; the e-value is its reciprocal, which is what version 2
    compares with ``1/alpha``), ``raw`` is set for the screen flips version 1 counted, and
    ``not-confirmed`` outcomes become ``pass`` (version 1 dismissed them). Nothing is dropped:
    the original confirmation stays under ``decision.v1_confirmation``."""
    out = {**d, "schema": "agentverity_props.run/2"}
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
    out = {**d, "schema": "agentverity_props.run/3"}
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
    out = {**d, "schema": "agentverity_props.bench/2"}
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


def migrate_compare_v1(d: dict[str, Any]) -> dict[str, Any]:
    """A ``compare/1`` result as ``compare/2``. Version 1 ran every pair in a fixed order with
    no warm-up and no latency margin, and gave each metric its own alpha: its verdicts are
    kept as they were decided, its multiplicity is stated as it was (``family_alpha`` null:
    not family-wise), each agent's reference is its identity, and the e-value a verdict
    rests on is the one at its decision."""
    out = {**d, "schema": "agentverity_props.compare/2"}
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
