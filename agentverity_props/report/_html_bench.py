"""View models of the bench/2 and compare/2 HTML reports (see ``_html_kinds`` for the rest)."""

from __future__ import annotations

from typing import Any

from . import _plots as P
from ._bench import BENCH_EXIT, COMPARE_EXIT
from ._html_kinds import _int, _num

_STATUS_CLASS = {"PASS": "good", "FAIL": "bad", "ERROR": "bad", "INCOMPLETE": "warn",
                 "UNDECIDED": "warn"}
_METRICS = (("pass_rate", "pass rate"), ("error_rate", "error rate"), ("latency", "latency"))


def _k_points(d: Any) -> list[tuple[float, float]]:
    """Plottable (k, estimate) points; an n/a estimate (null: k > runs) is not a point."""
    if not isinstance(d, dict):
        return []
    out = []
    for k, v in d.items():
        if v is None:
            continue
        try:
            out.append((float(k), float(v)))
        except (TypeError, ValueError):
            continue
    return out


def _k_rows(s: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per k: pass@k and pass^k as printed (n/a where k > runs)."""
    at, hat = s.get("pass_at_k") or {}, s.get("pass_hat_k") or {}
    over = s.get("pass_k_tasks") or {}
    return [{"k": k, "at": at.get(k), "hat": hat.get(k),
             "at_tasks": over.get(f"pass@{k}", s.get("tasks")),
             "hat_tasks": over.get(f"pass^{k}", s.get("tasks"))} for k in at]


def _task_label(t: dict[str, Any]) -> str:
    name = str(t.get("name") or t.get("id"))
    return name if not t.get("category") else f"{name} ({t['category']})"


def bench_context(d: dict[str, Any]) -> dict[str, Any]:
    s = d["summary"]
    tasks, marks = [], []
    thresholds = {_num(t.get("threshold")) for t in d["tasks"]}
    single = len(thresholds) == 1 and None not in thresholds
    for t in d["tasks"]:
        cls = _STATUS_CLASS.get(t.get("status"), "muted")
        tasks.append({**t, "cls": cls, "label": _task_label(t),
                      "attempt_rows": [{**a, "cls": _STATUS_CLASS.get(a.get("status"), "muted")}
                                       for a in t.get("attempts") or []]})
        if _int(t.get("runs")):
            marks.append(P.Interval(_task_label(t), _num(t.get("observed_rate")),
                                    _num(t.get("ci_low")), _num(t.get("ci_high")),
                                    color={"good": P.GREEN, "bad": P.RED}.get(cls, P.ORANGE),
                                    ref=None if single else _num(t.get("threshold"))))
    vlines: list[tuple[float, str, str]] = []
    if single and marks:
        t = float(next(iter(thresholds)) or 0.0)
        vlines.append((t, P.RED, f"threshold {t:g}"))
    curves = [("pass@k (any of k passes)", _k_points(s.get("pass_at_k")), P.BLUE, "-"),
              ("pass^k (all k pass)", _k_points(s.get("pass_hat_k")), P.ORANGE, "--")]
    plots = {
        "tasks": P.intervals_svg(marks, title="per-task pass rates with intervals",
                                 xlabel="share of the runs made that passed", xlim=(-0.02, 1.02),
                                 vlines=vlines,
                                 legend=[] if single else [("d", P.RED, "task's threshold")]),
        "passk": P.lines_svg(curves, title="pass@k and pass^k", xlabel="k (attempts)",
                             ylabel="probability", log_x=True),
    }
    counts = [("passed", s.get("passed"), "good"), ("failed", s.get("failed"), "bad"),
              ("errored", s.get("errored"), "bad"), ("undecided", s.get("undecided"), "warn"),
              ("incomplete", s.get("incomplete"), "warn")]
    bm = d.get("benchmark") or {}
    moved = d.get("moved") if isinstance(d.get("moved"), dict) else None
    if moved is not None:  # the tasks that moved (changed, then flaky, then new and gone)
        moved = {**moved, "rows": [
            {**m, "cls": {"changed": "bad", "flaky": "warn"}.get(str(m.get("kind")), "muted")}
            for m in moved.get("tasks") or () if m.get("kind") != "same"]}
    return {"exit_meanings": BENCH_EXIT, "s": s, "tasks": tasks, "plots": plots, "bm": bm,
            "moved": moved,
            "k_rows": _k_rows(s), "guarantee": d.get("guarantee"),
            "summary": [(k, str(v), c if v else "muted") for k, v, c in counts]
            + [("runs passed", f"{_int(s.get('passes')) or 0}/{_int(s.get('attempts')) or 0}",
                "muted")]}


def _e_shown(m: dict[str, Any]) -> Any:
    """The e-value a verdict rests on: at its decision once decided, else the current one."""
    return m.get("verdict_e_value", m.get("decided_e_value") or m.get("e_value"))


def _pair_rows(pair: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for key, label in _METRICS:
        m = (pair.get("metrics") or {}).get(key)
        if isinstance(m, dict):
            row = {**m, "metric": label, "e_shown": _e_shown(m),
                   "cls": "info" if m.get("better") else "muted", "equivalent": False}
            got = m.get("equivalence")
            eq: dict[str, Any] = got if isinstance(got, dict) else {}
            if eq.get("decided_at_round") and not m.get("better"):
                # the row shows the evidence the equivalence verdict rests on (the text
                # report's rule): the smaller e-value of the two one-sided tests, its round
                row.update(equivalent=True, e_shown=min(eq.get("e_value_upper") or 0,
                                                        eq.get("e_value_lower") or 0),
                           threshold=eq.get("threshold"),
                           decided_at_round=eq.get("decided_at_round"), cls="info")
            rows.append(row)
    return rows


def _short_ref(ref: Any, width: int = 28) -> str:
    """A reference as typed, cut from the left (the end names the agent: file.py:attr)."""
    text = str(ref)
    return text if len(text) <= width else "…" + text[-(width - 1):]


def compare_context(d: dict[str, Any]) -> dict[str, Any]:
    agents = d["agents"]
    colors = {a.get("label"): P.PALETTE[i % len(P.PALETTE)] for i, a in enumerate(agents)}
    n = max(1, len(agents))
    offsets = {a.get("label"): (i - (n - 1) / 2) * min(0.5 / n, 0.2)
               for i, a in enumerate(agents)}
    # per-task pass rates of every agent, side by side
    task_marks = []
    for a in agents:
        for t in a.get("tasks") or []:
            if _int(t.get("runs")):
                task_marks.append(P.Interval(str(t.get("name") or t.get("id")),
                                             _num(t.get("reliability")), _num(t.get("ci_low")),
                                             _num(t.get("ci_high")),
                                             color=colors.get(a.get("label"), P.BLUE),
                                             offset=offsets.get(a.get("label"), 0.0)))
    # effects: positive always favours the first agent of the pair (see effect_label)
    pairs, effect_marks, task_effects = [], [], []
    np_ = max(1, len(d["pairs"]))
    for i, p in enumerate(d["pairs"]):
        name = f"{p.get('a')} vs {p.get('b')}"
        color = P.PALETTE[i % len(P.PALETTE)]
        off = (i - (np_ - 1) / 2) * min(0.5 / np_, 0.2)
        rows = _pair_rows(p)
        for r in rows:
            iv = r.get("interval") or [None, None]
            effect_marks.append(P.Interval(r["metric"], _num(r.get("effect")),
                                           _num(iv[0]) if len(iv) == 2 else None,
                                           _num(iv[1]) if len(iv) == 2 else None,
                                           color=color, offset=off))
        for t in p.get("tasks") or []:
            m = (t.get("metrics") or {}).get("pass_rate") or {}
            iv = m.get("interval") or []
            if len(iv) == 2:
                task_effects.append(P.Interval(str(t.get("name") or t.get("id")),
                                               _num(m.get("effect")), _num(iv[0]),
                                               _num(iv[1]), color=color, offset=off))
        pairs.append({**p, "name": name, "rows": rows, "color": color,
                      "task_rows": [{**t, "m": (t.get("metrics") or {}).get("pass_rate") or {}}
                                    for t in p.get("tasks") or []],
                      "a_name": p.get("a_ref") or p.get("a_agent"),
                      "b_name": p.get("b_ref") or p.get("b_agent")})
    pair_legend = [("o", pp["color"], pp["name"]) for pp in pairs]
    # legends stay short: the agents table maps each label to its full reference
    agent_legend = [("o", colors[a.get("label")],
                     f"{a.get('label')}: {_short_ref(a.get('ref') or a.get('agent'))}")
                    for a in agents]
    zero = [(0.0, P.GREY, "no difference")]
    plots = {
        "effects": P.intervals_svg(effect_marks, title="A-vs-B effects with intervals",
                                   xlabel="effect (positive = the first agent of the pair is "
                                          "better)", xlim=(-1.02, 1.02), vlines=zero,
                                   legend=pair_legend),
        "task_effects": P.intervals_svg(task_effects, title="per-task pass-rate effects",
                                        xlabel="pass rate of the first agent minus the second",
                                        xlim=(-1.02, 1.02), vlines=zero, legend=pair_legend),
        "tasks": P.intervals_svg(task_marks, title="per-task pass rates of each agent",
                                 xlabel="pass rate", xlim=(-0.02, 1.02), legend=agent_legend),
    }
    label = " vs ".join(f"{a.get('label')} = {a.get('ref') or a.get('agent')}"
                        for a in agents)
    regress = d.get("regressions") or []
    task_winners = [f"{p['name']} {name} on task {t.get('id')}: {m.get('verdict')}"
                    for p in pairs for t in p.get("tasks") or []
                    for name, m in (t.get("metrics") or {}).items()
                    if isinstance(m, dict) and m.get("better")]
    return {"exit_meanings": COMPARE_EXIT, "agent": label, "agents": agents, "pairs": pairs,
            "task_winners": task_winners, "mult": d.get("multiplicity") or {},
            "plots": plots, "bm": d.get("benchmark") or {}, "regressions": regress,
            "summary": [("agents", str(len(agents)), "muted"),
                        ("rounds", str(d.get("rounds")), "muted"),
                        ("regressions", str(len(regress)), "bad" if regress else "good"),
                        ("complete", "yes" if d.get("complete") else "no",
                         "good" if d.get("complete") else "bad")]}
