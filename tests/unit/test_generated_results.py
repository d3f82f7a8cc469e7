"""Generated result documents of every kind, rendered by every renderer: what each prints
adds up (issue 46).

Each document is drawn from its kind's model (``tests/strategies.py``), then made coherent
the way the command writing it makes it (a total is the sum of its phases; a count of rows
is the number of rows) and validated by the model. The invariants are read back from the
printed text, not from the dict: the phases printed sum to the total printed, each printed
inequality holds as printed, text, Markdown, JSON and HTML name the same statuses and counts,
a legend matches its rows, and no count mixes inputs with follow-ups.
"""

from __future__ import annotations

import random
import re
from typing import Any

from hypothesis import HealthCheck, given, settings

from agentverity_props.report import render_html
from agentverity_props.report._kinds import findings, render_markdown
from agentverity_props.report._snapshot import render_check_text, render_snapshot_text
from agentverity_props.results import (
    BenchDocument,
    CheckDocument,
    CounterexampleDocument,
    RunDocument,
    SnapshotDocument,
)
from strategies import FPS, WORDS, build, documents

N = 1000
FAST = settings(max_examples=N, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow])
#: the terminal renderer (rich tables, ~15 ms a document) and the HTML one (templates and
#: plots) read the same documents on a share of them; the Markdown one reads every one
TEXT = settings(FAST, max_examples=N // 5)
HTML = settings(FAST, max_examples=N // 20)
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _unique_inputs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for r in rows:
        seen.setdefault(r["fp"], r)
    return list(seen.values())


def _blindness(rng: random.Random) -> dict[str, Any]:
    share = rng.random()
    return {"status": rng.choice(("ok", "blind", "undecided", "suppressed")),
            "modal_verdict": rng.choice(WORDS), "share": share, "sample": rng.randint(0, 200),
            "ci_low": share / 2, "ci_high": (1 + share) / 2, "threshold": 0.9}


# ------------------------------------------------------------------------------- check


def _coherent_check(d: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(repr(d["calls"]))
    d["inputs"] = _unique_inputs(d["inputs"])
    for e in d["inputs"]:
        sc = e["screen"]
        sc["matches"] = min(sc["matches"], sc["draws"])
        cf = e["confirmation"]
        cf["mismatches"] = min(cf["mismatches"], cf["draws"])
        if e["calibration"]:
            e["calibration"]["mismatches"] = min(e["calibration"]["mismatches"],
                                                 e["calibration"]["draws"])
    drifted = [e["fp"] for e in d["inputs"] if e["status"] == "drift"]
    d["drift"].update(inputs=len(drifted), fps=drifted)
    c = d["calls"]
    adm = d["admission"]
    adm["n"] = rng.randint(0, c["screen"])  # the SPRT reads at most the screen's draws
    adm["mismatches"] = min(adm["mismatches"], adm["n"])
    c["total"] = c["screen"] + c["confirm"] + c["stability"] + (c.get("change") or 0)
    if d["stability"] is not None:
        d["stability"]["calls"] = c["stability"]
    c["saved"] = c["full_rerun_estimate"] - c["total"]
    d["exit_code"] = {"clean": 0, "drift": 1, "changed": 1}.get(d["status"], 2)
    CheckDocument.check(d, where="generated", fix="")
    return d


CHECKS = documents(CheckDocument, {"tokens": lambda r: None,
                                   "stationarity": lambda r: None}).map(_coherent_check)


def _calls_sum(line: str) -> tuple[int, int]:
    """(the phases' sum, the total) of ``Calls: T (screen a, confirm b, ...)``."""
    total = int(re.match(r"Calls: (\d+)", line).group(1))
    inner = line.split("(", 1)[1].split(")", 1)[0]
    return sum(int(n) for n in re.findall(r"[a-z]+ (\d+)", inner)), total


def _screen_parts(text: str) -> tuple[int, int, int] | None:
    """(draws the SPRT read, the screen's other calls, the screen's calls) as printed."""
    m = re.search(r"of the (\d+) screening draws it read", text)
    if not m:
        return None
    o = re.search(r"the screen's other (\d+) of its (\d+) calls", text)
    return int(m.group(1)), int(o.group(1)) if o else 0, int(o.group(2)) if o else int(
        m.group(1))


KINDS = ("changed", "flaky", "incomplete", "unconfirmed", "unscreened", "drift", "noise")


def _moved_header(text: str) -> dict[str, int]:
    """The counts a 'What moved:' heading prints, by kind (its line; an HTML heading's
    text)."""
    m = re.search(r"What moved: ([^\n<]*)", text)
    if not m:
        return {}
    return {k: int(n) for n, k in re.findall(rf"(\d+)(?:\[/[a-z]*\])? ({'|'.join(KINDS)})\b",
                                             m.group(1))}


@FAST
@given(CHECKS)
def test_check_markdown_adds_up(d):
    md = render_markdown(d)
    head = md.splitlines()[0]
    assert "see above" not in head  # the first line of a page has nothing above it
    # the calls line: its phases sum to its total
    line = next(ln for ln in md.splitlines() if ln.startswith("Calls: "))
    assert _calls_sum(line)[0] == _calls_sum(line)[1] == d["calls"]["total"], line
    # the re-admission row: the draws the SPRT read and the other screen calls make the
    # screen's calls, the figure in the row's calls column
    parts = _screen_parts(md)
    if d["admission"]["n"]:
        read, other, screen = parts
        assert read == d["admission"]["n"]
        assert read + other == screen == d["calls"]["screen"], md
    # What moved: the header counts each row by the kind the row shows
    rows = re.findall(r"^\| [^|]+ \| \*\*([a-z]+)\*\*", md, re.M)
    header = _moved_header(md)
    moved = [k for k in rows if k in {e["status"] for e in d["inputs"]}
             | {"changed", "flaky"}]
    assert sum(header.values()) == len(moved), (header, moved)
    for kind in set(moved):
        assert header.get(kind) == moved.count(kind), (kind, header, moved)
    # clean and drifted, as the JSON counts them
    clean = sum(e["status"] == "clean" for e in d["inputs"])
    assert f"{clean} clean · {d['drift']['inputs']} drifted of {len(d['inputs'])} inputs" in md


@TEXT
@given(CHECKS)
def test_check_text_adds_up_and_agrees_with_markdown(d):
    labels = {fp: f"input {i}" for i, fp in enumerate(FPS)}
    text = ANSI.sub("", render_check_text(d, labels=labels, width=200))
    line = next(ln for ln in text.splitlines() if ln.startswith("Calls: "))
    assert _calls_sum(line)[0] == _calls_sum(line)[1] == d["calls"]["total"], line
    parts = _screen_parts(text)
    if d["admission"]["n"]:
        read, other, screen = parts
        assert read + other == screen == d["calls"]["screen"], text
    # the same moves as the Markdown page, each kind counted alike
    md = render_markdown(d)
    t_head = {k: n for k, n in _moved_header(text).items() if n}
    m_head = {k: n for k, n in _moved_header(md).items() if n}
    assert t_head == m_head, (t_head, m_head)
    # the privacy line does not say 'fingerprint only' of a page that prints inputs' text
    shown = [e for e in d["inputs"] if e["status"] != "clean"]
    privacy = next(ln for ln in text.splitlines() if ln.startswith("Privacy:"))
    if shown:
        assert "shows inputs by their text" in privacy, privacy


@HTML
@given(CHECKS)
def test_check_html_is_its_own_view_and_agrees_with_markdown(d):
    html = render_html(d)
    assert "No dedicated view" not in html
    assert "could not read this file" not in html
    page = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")
    md = render_markdown(d)
    clean = sum(e["status"] == "clean" for e in d["inputs"])
    assert f"{clean} clean · {d['drift']['inputs']} drifted of {len(d['inputs'])} inputs" in page
    assert {k: n for k, n in _moved_header(html).items() if n} == \
        {k: n for k, n in _moved_header(md).items() if n}
    line = re.search(r"Calls: \d+ \([^)]*\)", page).group(0)
    assert _calls_sum(line)[0] == _calls_sum(line)[1] == d["calls"]["total"], line
    if d["admission"]["n"]:
        read, other, screen = _screen_parts(page)
        assert read + other == screen == d["calls"]["screen"]


# ---------------------------------------------------------------------------- snapshot


def _coherent_snapshot(d: dict[str, Any]) -> dict[str, Any]:
    d["inputs"] = _unique_inputs(d["inputs"])
    for e in d["inputs"]:
        e["flipped"] = len(e["counts"]) > 1
        if e["calibration"]:
            e["calibration"]["mismatches"] = min(e["calibration"]["mismatches"],
                                                 e["calibration"]["draws"])
    d["admission"]["admitted"] = bool(d["admission"]["rules"]) and all(
        r["passed"] for r in d["admission"]["rules"])
    c = d["calls"]
    c["total"] = sum(c.get(k) or 0 for k in ("meter", "blindness", "dependence",
                                             "reference", "calibration", "change"))
    SnapshotDocument.check(d, where="generated", fix="")
    return d


SNAPSHOTS = documents(SnapshotDocument, {"tokens": lambda r: None,
                                         "stationarity": lambda r: None,
                                         "blindness": _blindness}).map(_coherent_snapshot)


@FAST
@given(SNAPSHOTS)
def test_snapshot_markdown_calls_add_up(d):
    md = render_markdown(d)
    line = next(ln for ln in md.splitlines() if ln.startswith("Calls: "))
    assert _calls_sum(line)[0] == _calls_sum(line)[1] == d["calls"]["total"], line


@TEXT
@given(SNAPSHOTS)
def test_snapshot_text_adds_up(d):
    text = ANSI.sub("", render_snapshot_text(d, width=200))
    line = next(ln.strip() for ln in text.splitlines() if ln.strip().startswith("Calls:"))
    phases = [int(n) for k, n in re.findall(r"(?:^Calls:|·) ([a-z]+) (\d+)", line)
              if k != "total"]
    total = int(re.search(r"total (\d+) live", line).group(1))
    assert sum(phases) == total == d["calls"]["total"], line
    # the legend of the dash rows counts the dash rows, tied apart from not drawn
    dash = [e for e in d["inputs"] if e["reference"] is None]
    legend = next((ln for ln in text.splitlines() if ln.strip().startswith("– :")), "")
    assert sum(int(n) for n in re.findall(r"(\d+) (?:drawn|not drawn)", legend)) == len(dash)
    tied = sum(1 for e in dash if e["counts"])
    if tied:
        assert f"{tied} drawn with no majority verdict" in legend
    # an admitted snapshot's table is what was admitted, not a review still to do
    if d["admission"]["admitted"]:
        assert "Review each reference" not in text


# ---------------------------------------------------------------------- counterexample


def _coherent_counterexample(d: dict[str, Any]) -> dict[str, Any]:
    for t in d["tests"]:
        for ce in (t.get("minimal"), t.get("first")):
            if not isinstance(ce, dict):
                continue
            c = ce["confirmation"]
            # a confirmed candidate: the deciding e-process crossed its threshold
            alpha = c.get("alpha") or 0.001
            c["alpha"] = alpha
            sides = 1 if c.get("e_reverse") is None else 2
            rng = random.Random(str(c))
            crossing = sides / alpha * rng.choice((1.0, 1.0 + 1e-12, 1.7, 40.0))
            other = sides / alpha * rng.choice((0.0, 0.3, 0.999))
            if sides == 2 and rng.random() < 0.5:
                c["e_reverse"], c["e_violation"] = crossing, other
            else:
                c["e_violation"] = crossing
                if sides == 2:
                    c["e_reverse"] = other
    CounterexampleDocument.check(d, where="generated", fix="")
    return d


def _ce_overrides() -> dict[str, Any]:
    def confirmation(rng: random.Random) -> dict[str, Any]:
        fn = rng.randint(1, 40)
        sn = rng.randint(1, 40)
        return {"test": "two e-processes", "alpha": rng.choice((1e-4, 1.11e-4, 0.0025)),
                "e_violation": 1.0, "e_reverse": rng.choice((None, 1.0)),
                "follow_up_violations": rng.randint(0, fn), "follow_up_draws": fn,
                "source_violations": rng.randint(0, sn), "source_draws": sn}
    return {"tests[].minimal.confirmation": confirmation,
            "tests[].first.confirmation": confirmation}


COUNTEREXAMPLES = documents(CounterexampleDocument, _ce_overrides()).map(
    _coherent_counterexample)

INEQUALITY = re.compile(r"e-value ([\d.e+-]+) (≥|>=|<) (\d)/alpha_candidate = ([\d.e+-]+)")


#: the form reports printed before the account named the threshold: ``e 4.4e+04 ≥ 1/0.0001``
BARE = re.compile(r"e(?:-value)? ([\d.e+-]+) (?:≥|>=) (\d)/(\d[\d.e+-]*)(?![\d.e+-]*\s*=)")


def _inequalities_hold(text: str) -> int:
    """Every printed ``e-value E ≥ k/alpha_candidate = T`` (or ``≥ k/alpha``) holds as
    printed; how many there are."""
    n = 0
    for e, rel, _, t in INEQUALITY.findall(text):
        assert rel != "<", text
        assert float(e) >= float(t), text
        n += 1
    for e, k, alpha in BARE.findall(text):
        assert float(e) >= int(k) / float(alpha), text
        n += 1
    return n


@FAST
@given(COUNTEREXAMPLES)
def test_counterexample_inequalities_hold_as_printed(d):
    md = render_markdown(d)
    minimal = [t for t in d["tests"] if isinstance(t.get("minimal"), dict)]
    assert _inequalities_hold(md) >= len(minimal)
    for t in minimal:
        c = t["minimal"]["confirmation"]
        if c.get("e_reverse") is not None:
            assert "2/alpha_candidate" in md  # each direction at alpha_candidate / 2


@HTML
@given(COUNTEREXAMPLES)
def test_counterexample_html_inequalities_hold_as_printed(d):
    html = render_html(d)
    _inequalities_hold(re.sub(r"<[^>]+>", "", html))


# ------------------------------------------------------------------------------ helpers


def test_the_generator_makes_valid_documents_of_every_kind_it_is_given():
    rng = random.Random(0)
    for model in (CheckDocument, SnapshotDocument, RunDocument):
        assert isinstance(build(model, rng), dict)


# ------------------------------------------------------------------------------- bench


def _coherent_bench(d: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(repr(d.get("moved")))
    ids = [f"task-{i}" for i in range(len(d["tasks"]))]
    for t, i in zip(d["tasks"], ids, strict=True):
        t["id"] = i
    if isinstance(d.get("moved"), dict):
        # the baseline's tasks: some of this run's (as they stood then), maybe one gone
        for m in d["moved"]["tasks"]:
            m["id"] = rng.choice([*ids, "gone-task"])
    return d


BENCHES = documents(BenchDocument, {"tokens": lambda r: None}).map(_coherent_bench)


@FAST
@given(BENCHES)
def test_bench_annotations_tell_new_failures_from_ones_in_the_baseline(d):
    moved = d.get("moved")
    for f in findings(d):
        m = re.match(r"bench task (\S+) (FAIL|ERROR)", f.title)
        if not m:
            continue
        if not isinstance(moved, dict):
            assert "baseline" not in f.title
            continue
        then = next((t for t in moved["tasks"] if t["id"] == m.group(1)), None)
        was_failing = then is not None and then["kind"] != "new" \
            and then["before_status"] in ("FAIL", "ERROR")
        assert ("already failing in the baseline" in f.title) == was_failing, (f, then)
        assert ("new failure" in f.title) == (not was_failing), (f, then)


# --------------------------------------------------------------------------------- run


def _run_calls(rng: random.Random) -> dict[str, int]:
    phases = {k: rng.choice((0, rng.randint(0, 40), rng.randint(0, 4000)))
              for k in ("meter", "blindness", "dependence", "stationarity", "relations")}
    return {**phases, "total": sum(phases.values()), "replayed": rng.randint(0, 50)}


def _confirmation(rng: random.Random) -> dict[str, Any]:
    """A confirmed candidate's decision: the deciding e-process at or past its threshold
    (exactly at it too, where printing rounds both sides)."""
    alpha = rng.choice((1e-4, 1.11e-4, 8.9e-4, 0.0025))
    two = rng.random() < 0.5
    sides = 2 if two else 1
    crossing = sides / alpha * rng.choice((1.0, 1.0 + 1e-12, 1.7, 40.0))
    other = sides / alpha * rng.choice((0.0, 0.3, 0.999))
    fn, sn = rng.randint(1, 40), rng.randint(1, 40)
    reverse = two and rng.random() < 0.5
    return {"test": "two e-processes", "call": "confirmed", "alpha": alpha,
            "e_violation": other if reverse else crossing,
            "e_reverse": (crossing if reverse else other) if two else None,
            "follow_up_violations": rng.randint(0, fn), "follow_up_draws": fn,
            "source_violations": rng.randint(0, sn), "source_draws": sn}


def _run_config(rng: random.Random) -> dict[str, Any]:
    return {"epsilon": 0.05, "indifference": 2.0, "alpha": 0.05,
            "tolerance": rng.choice((0.1, 0.05, 0.2, 0.25)),
            "budget": rng.choice((None, 1000))}


def _coherent_run(d: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(d["calls"]["total"] * 7919 + len(d["relations"]))
    tol = d["config"]["tolerance"]
    b = d["blindness"]
    if b["sample"]:  # a sample has its modal verdict's share and interval
        b.update(modal_verdict=b["modal_verdict"] or "allow",
                 share=b["share"] if b["share"] is not None else 0.5,
                 ci_low=b["ci_low"] if b["ci_low"] is not None else 0.2,
                 ci_high=b["ci_high"] if b["ci_high"] is not None else 0.8)
    for i, r in enumerate(d["relations"]):
        r["name"] = f"relation-{i}"
        for o in r["outcomes"]:
            if o["status"] == "confirmed":
                o["decision"] = _confirmation(rng)
        r["calibrated_violations"] = sum(o["status"] == "confirmed" for o in r["outcomes"])
        e = r["effect"]
        if r["status"] == "NOT EXERCISED" or e is None:
            continue
        e["tolerance"] = tol
        # a bound near the tolerance, on either side (0.095 under 0.1: the case that printed
        # as the tolerance itself), or anywhere
        near = tol * rng.choice((0.95, 0.999, 0.9999, 1.0, 1.0001, 1.05, 0.5, 0.1))
        if r["status"] == "HOLDS":
            e["upper"] = min(near, tol * 0.99999)
            e["lower"] = -min(tol * rng.choice((0.95, 0.999, 0.3)), tol * 0.99999)
        elif r["status"] == "VIOLATED" and rng.random() < 0.5:
            e["lower"] = max(near, tol)
            e["upper"] = min(1.0, e["lower"] + rng.random())
        else:
            e["lower"], e["upper"] = sorted((rng.uniform(-1, 1), rng.uniform(-1, 1)))
        e["estimate"] = (e["lower"] + e["upper"]) / 2
    RunDocument.check(d, where="generated", fix="")
    return d


RUNS = documents(RunDocument, {
    "tokens": lambda r: None, "calls": _run_calls, "config": _run_config,
    "ledger": lambda r: {"retries": 0, "failures": 0},
    "inputs": lambda r: {fp: f"input {i}" for i, fp in enumerate(FPS)} if r.random() < 0.5
    else None,
    "follow_ups": lambda r: None, "routes": lambda r: None,
    "meter.per_input[].fp": lambda r: r.choice(FPS)}).map(_coherent_run)

ROW_BOUNDS = re.compile(r"(HOLDS|VIOLATED)\**\s*\|?.*?\[([+-]\d\.\d+), ([+-]\d\.\d+)\]")


def _bounds_on_their_side(text: str, d: dict[str, Any]) -> None:
    tol = d["config"]["tolerance"]
    rows = {r["name"]: r for r in d["relations"]}
    for line in text.splitlines():
        m = ROW_BOUNDS.search(line)
        if not m:
            continue
        name = next((n for n in rows if re.search(rf"(^|[`\s]){re.escape(n)}[`\s]", line)),
                    None)
        r = rows.get(name)
        if r is None or r["status"] != m.group(1):
            continue
        lo, hi = float(m.group(2)), float(m.group(3))
        e = r["effect"]
        # each bound printed on the side of the tolerance it is on
        assert (abs(hi) < tol) == (abs(e["upper"]) < tol), (line, e["upper"], tol)
        assert (abs(lo) < tol) == (abs(e["lower"]) < tol), (line, e["lower"], tol)


def _phases_sum(line: str) -> None:
    """The live phases of a ``Calls:`` line sum to its total (replayed draws said apart)."""
    head = re.split(r" \(replayed| · replayed", line, maxsplit=1)[0]
    phases = [int(n) for k, n in re.findall(r"([a-z]+) (\d+)", head) if k != "total"]
    m = re.search(r"total (\d+) live", head) or re.match(r"Calls: (\d+)", head)
    total = int(m.group(1))
    assert sum(phases) == total, line


@FAST
@given(RUNS)
def test_run_markdown_adds_up(d):
    md = render_markdown(d)
    _phases_sum(next(ln for ln in md.splitlines() if ln.startswith("Calls: ")))
    _bounds_on_their_side(md, d)
    _inequalities_hold(md)


@TEXT
@given(RUNS)
def test_run_text_adds_up(d):
    from agentverity_props.report._text import render_run_text

    text = ANSI.sub("", render_run_text(d, width=250))
    _phases_sum(next(ln for ln in text.splitlines() if ln.startswith("Calls: ")))
    _bounds_on_their_side(text, d)
    _inequalities_hold(text)


def _evidence(rng: random.Random) -> dict[str, Any]:
    """``assess``'s ledger: its inputs, then its follow-ups, each row saying which it is."""
    n_in, n_fu = rng.randint(1, 6), rng.randint(0, 6)
    rows = [{"fp": f"sha256:{i:064x}", "draws": 4, "failures": 0,
             "counts": dict(rng.sample([("allow", 3), ("block", 1), ("review", 2)],
                                       rng.randint(1, 3))),
             "follow_up": i >= n_in} for i in range(n_in + n_fu)]
    return {"retries": 0, "failures": 0,
            "evidence": {"source": "store", "agent": "a", "inputs": n_in, "follow_ups": n_fu,
                         "draws": 4 * (n_in + n_fu), "failed_draws": 0, "order": "x",
                         "order_known": True, "notes": [], "per_input": rows}}


ASSESSED = documents(RunDocument, {
    "tokens": lambda r: None, "calls": _run_calls, "config": _run_config,
    "ledger": _evidence, "inputs": lambda r: None, "follow_ups": lambda r: None,
    "routes": lambda r: None, "relations": lambda r: [],
    "meter.per_input[].fp": lambda r: r.choice(FPS)}).map(_coherent_run)


@TEXT
@given(ASSESSED)
def test_assess_counts_inputs_and_follow_ups_apart(d):
    from agentverity_props.report._text import render_run_text

    ev = d["ledger"]["evidence"]
    text = ANSI.sub("", render_run_text(d, width=250))
    head = text.splitlines()[0]
    assert f"· {ev['inputs']} inputs" in head
    m = re.search(r"(\d+) input\(s\)(?: and (\d+) follow-up\(s\))? gave more than one", text)
    split = [r for r in ev["per_input"] if len(r["counts"]) > 1]
    assert int(m.group(1)) == sum(not r["follow_up"] for r in split) <= ev["inputs"], text
    assert int(m.group(2) or 0) == sum(r["follow_up"] for r in split) <= ev["follow_ups"]
