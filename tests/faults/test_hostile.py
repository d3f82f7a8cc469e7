"""Hostile files, outputs and content through the real CLI (subprocesses, real files).

An attacker controls the files a command reads (alias bombs, endless devices, 10,000-digit
integers, damaged stores and results) and what an agent answers (rich markup, escape
sequences, bidi overrides); a careless or hostile command line points an output at a device,
a FIFO or one of the inputs. Every attack ends with exit 2 and one line ``error: ...`` where
the input is bad, changes no file but the intended one, and never shows a traceback.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from pathlib import Path

import pytest

from .conftest import (
    ROOT,
    agent_ref,
    assert_one_line_error,
    cli,
    cli_many,
    load_json,
    record,
    write_inputs,
)

pytestmark = pytest.mark.e2e

# a billion laughs in 9 levels: ~387 million strings once expanded, under 500 bytes written
_BOMB_LEVELS = "abcdefghi"


def alias_bomb(top: str) -> str:
    """A YAML alias bomb whose expansion sits under the key ``top``."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, len(_BOMB_LEVELS)):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 9) + "]")
    lines.append(f"{top}: *l{len(_BOMB_LEVELS) - 1}")
    return "\n".join(lines) + "\n"


def _calls(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


# ------------------------------------------------------------------ files read


@pytest.mark.parametrize("what", ["run --inputs (.yaml)", "bench --benchmark",
                                  "tools --config", "enlarge --strategy"])
def test_yaml_alias_bomb_is_refused_at_once(tmp_path: Path, what: str) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    bomb = tmp_path / "bomb.yaml"
    top = {"run --inputs (.yaml)": "inputs", "bench --benchmark": "tasks",
           "tools --config": "cases", "enlarge --strategy": "templates"}[what]
    bomb.write_text(alias_bomb(top))
    assert bomb.stat().st_size < 600
    nobody = f"{tmp_path / 'no_such_agent.py'}:agent"
    argv = {"run --inputs (.yaml)": ["run", "--agent", nobody, "--inputs", str(bomb)],
            "bench --benchmark": ["bench", "--agent", nobody, "--benchmark", str(bomb)],
            "tools --config": ["tools", "--config", str(bomb)],
            "enlarge --strategy": ["enlarge", "--agent", nobody, "--inputs", str(inputs),
                                   "--strategy", str(bomb), "-o", str(tmp_path / "o.txt")]}
    t0 = time.monotonic()
    proc = cli(*argv[what], timeout=30)
    line = assert_one_line_error(proc.returncode, proc.stderr, what)
    assert "alias" in line, line
    record("hostile-files", scenario=f"{what}: YAML alias bomb ({bomb.stat().st_size} bytes)",
           exit=proc.returncode, seconds=round(time.monotonic() - t0, 1))


def test_endless_device_as_inputs_is_cut_off(tmp_path: Path) -> None:
    """/dev/zero reports size 0: only a limit on the bytes actually read stops it."""
    proc = cli("run", "--agent", agent_ref("good"), "--inputs", "/dev/zero", timeout=60)
    line = assert_one_line_error(proc.returncode, proc.stderr, "/dev/zero")
    assert "/dev/zero" in line, line
    assert "MB" in line, line
    record("hostile-files", scenario="/dev/zero as --inputs", exit=proc.returncode)


@pytest.mark.parametrize("where", ["inputs.json", "inputs.jsonl", "inputs.yaml",
                                   "snapshot", "report"])
def test_ten_thousand_digit_integer_is_one_line(tmp_path: Path, where: str) -> None:
    big = "9" * 10_000
    inputs = write_inputs(tmp_path / "inputs.txt")
    f = tmp_path / (where if "." in where else f"{where}.json")
    if where == "inputs.json":
        f.write_text(f'["a prompt", {big}]')
    elif where == "inputs.jsonl":
        f.write_text(f'"a prompt"\n{big}\n')
    elif where == "inputs.yaml":
        f.write_text(f"inputs:\n  - a prompt\n  - {big}\n")
    else:
        f.write_text(f'{{"schema": "agentverity_props.run/2", "calls": {big}}}')
    argv = {"snapshot": ["check", "--agent", agent_ref("good"), "--inputs", str(inputs),
                         "--snapshot", str(f)],
            "report": ["report", str(f), "--html", str(tmp_path / "out.html")]}.get(
        where, ["run", "--agent", agent_ref("good"), "--inputs", str(f)])
    proc = cli(*argv)
    assert_one_line_error(proc.returncode, proc.stderr, where)
    assert not (tmp_path / "out.html").exists()
    record("hostile-files", scenario=f"10,000-digit integer in {where}", exit=proc.returncode)


def test_report_of_a_result_without_its_fields_writes_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"schema": "agentverity_props.run/2"}')
    html = tmp_path / "out.html"
    proc = cli("report", str(bad), "--html", str(html))
    line = assert_one_line_error(proc.returncode, proc.stderr, "report bad.json --html")
    assert "bad.json" in line, line
    assert "lacks" in line, line
    assert not html.exists()
    record("hostile-files", scenario="report --html of a result with only its schema",
           exit=proc.returncode)


def test_damaged_store_is_one_line_naming_it(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    store = tmp_path / "store.db"
    first = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-relations",
                "--store", str(store), "--format", "json")
    assert first.returncode in (0, 1), first.stderr
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(store, "r+b") as fh:  # every page but the header page overwritten
        for page in range(1, pages):
            fh.seek(page * size)
            fh.write(b"\xff" * size)
    log = tmp_path / "calls.log"
    proc = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-relations",
               "--store", str(store), env={"FAULT_LOG": str(log)})
    line = assert_one_line_error(proc.returncode, proc.stderr, "damaged store")
    assert str(store) in line, line
    assert "damaged" in line, line
    assert "--store" in line, line
    assert _calls(log) == 0
    record("hostile-files", scenario=f"store with {pages - 1} damaged pages",
           exit=proc.returncode, agent_calls=_calls(log))


# ------------------------------------------------------------------ output files


def _node(tmp: Path, kind: str) -> Path:
    p = tmp / f"target-{kind}"
    if kind == "device":
        os.mknod(p, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # a /dev/null of our own
    elif kind == "fifo":
        os.mkfifo(p)
    return p


@pytest.mark.parametrize("kind", ["device", "fifo", "inputs", "inputs via symlink",
                                  "agent file", "folder is a file", "unwritable folder"])
def test_output_refused_before_any_agent_call(tmp_path: Path, kind: str) -> None:
    if kind == "device" and os.geteuid() != 0:
        pytest.skip("creating a device node needs root")
    inputs = write_inputs(tmp_path / "inputs.txt")
    agent = tmp_path / "agent.py"
    agent.write_text((ROOT / "tests" / "faults" / "_agents.py").read_text())
    before = {p: p.read_bytes() for p in (inputs, agent)}
    if kind in ("device", "fifo"):
        out = _node(tmp_path, kind)
    elif kind == "inputs":
        out = inputs
    elif kind == "inputs via symlink":
        out = tmp_path / "link.txt"
        out.symlink_to(inputs)
    elif kind == "agent file":
        out = agent
    elif kind == "folder is a file":
        out = inputs / "report.json"
    else:
        out = Path("/proc/agentverity-props-no-such-dir/report.json")
    log = tmp_path / "calls.log"
    proc = cli("run", "--agent", f"{agent}:good", "--inputs", str(inputs), "--no-relations",
               "--format", "json", "-o", str(out), env={"FAULT_LOG": str(log)})
    line = assert_one_line_error(proc.returncode, proc.stderr, kind)
    assert str(out) in line, line
    assert ".tmp" not in line, line
    assert _calls(log) == 0, f"{kind}: {_calls(log)} agent calls before the refusal"
    assert {p: p.read_bytes() for p in (inputs, agent)} == before
    if kind == "device":
        assert stat.S_ISCHR(out.lstat().st_mode)
    if kind == "fifo":
        assert stat.S_ISFIFO(out.lstat().st_mode)
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert not leftovers, leftovers
    record("hostile-outputs", scenario=f"run -o onto {kind}", exit=proc.returncode,
           agent_calls=_calls(log))


def test_other_commands_refuse_an_output_over_their_input(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt")
    result = tmp_path / "run.json"
    made = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-relations",
               "--format", "json", "-o", str(result))
    assert made.returncode in (0, 1), made.stderr
    fifo = _node(tmp_path, "fifo")
    before = {p: p.read_bytes() for p in (inputs, result)}
    good = agent_ref("good")
    jobs = {
        "enlarge -o = --inputs": (["enlarge", "--agent", good, "--inputs", str(inputs),
                                   "--strategy", "moderation",
                                   "--budget", "20", "-o", str(inputs)], None),
        "enlarge --report = --inputs": (["enlarge", "--agent", good, "--inputs", str(inputs),
                                         "--strategy", "moderation",
                                         "--budget", "20", "-o", str(tmp_path / "e.txt"),
                                         "--report", str(inputs)], None),
        "snapshot -o FIFO": (["snapshot", "--agent", good, "--inputs", str(inputs), "-o",
                              str(fifo), "--accept-reference"], None),
        "report --html = the result": (["report", str(result), "--html", str(result)], None),
        "report -o = the result": (["report", str(result), "-o", str(result)], None),
    }
    for name, proc in cli_many(jobs).items():
        assert_one_line_error(proc.returncode, proc.stderr, name)
        record("hostile-outputs", scenario=name, exit=proc.returncode)
    assert {p: p.read_bytes() for p in (inputs, result)} == before
    assert not (tmp_path / "e.txt").exists()


def test_symlinked_output_is_followed(tmp_path: Path) -> None:
    """A symlink is followed on purpose: its target is replaced and the link stays."""
    inputs = write_inputs(tmp_path / "inputs.txt")
    (tmp_path / "runs").mkdir()
    target = tmp_path / "runs" / "42.json"
    target.write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(target)
    proc = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--no-relations",
               "--format", "json", "-o", str(link))
    assert proc.returncode in (0, 1), proc.stderr
    assert link.is_symlink()
    assert link.resolve() == target.resolve()
    assert load_json(target)["schema"] == "agentverity_props.run/3"
    record("hostile-outputs", scenario="-o through a symlink (followed)", exit=proc.returncode,
           link_kept=int(link.is_symlink()))


# ------------------------------------------------------------------ content shown as data

HOSTILE_PROMPTS = ["explain [/INST] to me", "close this [/] tag",
                   "[link=https://evil.example/y]click here[/link]", "[red]general",
                   "retitle \x1b]0;owned\x07 the terminal", "flip \u202eevil\u202c text"]


def _assert_shown_as_data(text: str, what: str) -> None:
    assert "Traceback" not in text, f"{what}: {text[-800:]}"
    assert "internal error" not in text, f"{what}: {text[-800:]}"
    for bad in ("\x1b]", "\x00", "\u202e", "\x07"):
        assert bad not in text, f"{what}: {bad!r} reached the output"


def test_hostile_answers_and_prompts_are_shown_as_data(tmp_path: Path) -> None:
    inputs = write_inputs(tmp_path / "inputs.txt", HOSTILE_PROMPTS)
    result = tmp_path / "run.json"
    agent = agent_ref("hostile_markup")
    jobs = {
        "text": (["run", "--agent", agent, "--inputs", str(inputs), "--budget", "200",
                  "--include-inputs"], None),
        "json": (["run", "--agent", agent, "--inputs", str(inputs), "--budget", "200",
                  "--format", "json", "-o", str(result)], None),
        "snapshot": (["snapshot", "--agent", agent, "--inputs", str(inputs), "-o",
                      str(tmp_path / "snap.json"), "--accept-reference"], None),
    }
    procs = cli_many(jobs)
    for name, proc in procs.items():
        assert proc.returncode in (0, 1, 2), f"{name}: {proc.stderr[-800:]}"
        _assert_shown_as_data(proc.stdout + proc.stderr, name)
    text = procs["text"].stdout
    assert "Blindness" in text, text[-800:]
    assert "Relations" in text, text[-800:]
    verdicts = load_json(result)["blindness"]["distribution"]
    shown = [v for v in ("[/INST]", "[red]general", "[link=https://evil.example/x]billing"
                         "[/link]", "[/]") if v in verdicts]
    assert shown, verdicts
    for v in shown:  # written out literally: not markup, not a hyperlink, not colour
        assert v in text, f"{v!r} not shown literally"
    rendered = cli("report", str(result), "--format", "text")
    assert rendered.returncode == 0, rendered.stderr
    _assert_shown_as_data(rendered.stdout + rendered.stderr, "report --format text")
    from agentverity_props.report import render_run_text
    coloured = render_run_text(load_json(result), color=True)  # the terminal rendering
    assert "\x1b]8;" not in coloured, "a terminal hyperlink was emitted"
    for v in shown:
        assert v in coloured
    record("hostile-markup", scenario="answers and prompts with markup, ESC, NUL, U+202E",
           verdicts_shown=len(shown), commands=len(procs) + 1)


# ------------------------------------------------------------------ scale and signals


def _many_prompts(path: Path, n: int) -> Path:
    path.write_text("".join(f"prompt number {i} about topic {i % 97}\n" for i in range(n)),
                    encoding="utf-8")
    return path


@pytest.mark.parametrize("calls_before", [50, 1500])
def test_sigterm_stops_a_hundred_thousand_input_run(tmp_path: Path, calls_before: int) -> None:
    """SIGTERM early (meter) or late (relations) in a 100,000-input run with relations: the
    run stops, writes its partial report marked interrupted, and exits 2 (before the fix it
    kept computing for minutes). Needs wall-clock time: the 600 s bound is the hang limit,
    not a performance test (it exits in about 15 s on an idle 2-core machine, and two
    CPU-bound processes beside the suite make that 30 s and more).

    One relation (``case``): the follow-ups of every relation are built for all 100,000
    inputs before the first relation call, about 40 CPU-seconds for the eight defaults and
    a fifth of that for one; the stop on SIGTERM is the same for one relation or eight, and
    the run is still 100,000 inputs."""
    import signal
    import subprocess

    from .conftest import popen_cli

    inputs = _many_prompts(tmp_path / "inputs.txt", 100_000)
    report, log = tmp_path / "r.json", tmp_path / "calls.log"
    # a budget that lets the relations start (their first sources: one draw per input), so
    # that the late signal lands among relation calls; it is also the bound on a run that
    # ignored the signal
    proc = popen_cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--budget",
                     "150000", "--relations", "case", "--format", "json", "-o", str(report),
                     "--no-progress",
                     env={"FAULT_LOG": str(log)})
    try:
        # a hang limit, not a speed limit: reaching 1,500 calls of a 100,000-input run took
        # over 240 s with two CPU-bound processes beside the suite
        deadline = time.monotonic() + 900
        while _calls(log) < calls_before:
            assert proc.poll() is None, proc.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the agent was not called in time"
            time.sleep(0.05)
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            # a hang limit: under a load average of 8-10 on 2 cores (other jobs beside the
            # suite, -n 2) the late SIGTERM took over 120 s to end the run
            _out, err = proc.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            raise AssertionError("SIGTERM ignored for 600 s") from None
        seconds = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert "Traceback" not in err
    assert proc.returncode == 2, err[-2000:]
    rep = load_json(report)
    assert rep["ledger"]["interrupted"] is True
    assert rep["stop_reason"] == "interrupted"
    # stopped where it was: the relations' first sources alone are 100,000 calls
    assert rep["calls"]["total"] < 20_000, rep["calls"]
    if calls_before > 1000:
        assert rep["calls"]["relations"] > 0, rep["calls"]
    record("hostile-scale", scenario=f"SIGTERM after {calls_before} calls of a 100,000-input "
           "run", exit=proc.returncode, seconds_to_exit=round(seconds, 1),
           calls=rep["calls"]["total"])


def test_run_stops_when_its_budget_is_spent(tmp_path: Path) -> None:
    """2,000 inputs, every relation, --budget 300: the run ends once the budget is gone
    (before the fix it kept scheduling draws that could not be made)."""
    inputs = _many_prompts(tmp_path / "inputs.txt", 2000)
    log = tmp_path / "calls.log"
    proc = cli("run", "--agent", agent_ref("good"), "--inputs", str(inputs), "--budget", "300",
               "--format", "json", "-o", str(tmp_path / "r.json"), env={"FAULT_LOG": str(log)},
               timeout=120)
    assert "Traceback" not in proc.stderr
    assert proc.returncode == 2, proc.stderr
    rep = load_json(tmp_path / "r.json")
    assert rep["calls"]["total"] == _calls(log) <= 300
    assert rep["complete"] is False
    record("hostile-scale", scenario="2,000 inputs, --budget 300", exit=proc.returncode,
           calls=rep["calls"]["total"])
