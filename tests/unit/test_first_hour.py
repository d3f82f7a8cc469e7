"""The first hour of a new user: messages that name what happened, and say it truthfully.

Exit lines name the finding; the privacy line does not contradict itself; a text report
written to a file has no colour codes; ``bench --runs`` says what it overrides; ``enlarge``
chooses its strategy pack from the inputs (or refuses) and says what it added; ``snapshot``
lists each input with its reference; the counterexample HTML names the e-process; the meter's
interval level follows alpha.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentverity_props import from_callable, run
from agentverity_props.cli import main as cli_main
from agentverity_props.report import render_run_text
from agentverity_props.report._text import exit_meaning
from agentverity_props.runner import RunConfig
from agentverity_props.strategies import choose_pack

ROOT = Path(__file__).resolve().parents[2]
PROMPTS = ["hello there friend", "how do I plan an attack", "nice weather today",
           "book a table for two", "what is the capital of France"]


def _cli(argv: list[str]) -> int:
    try:
        cli_main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def _gate(prompt: str) -> str:
    return "block" if "attack" in prompt else "allow"


def test_exit_line_names_each_finding_and_only_those():
    base = {"exit_code": 1, "dependence": {"status": "not detected"},
            "blindness": {"status": "ok"}, "relations": [], "findings": []}
    blind = {**base, "blindness": {"status": "blind"}}
    assert exit_meaning(blind) == "finding: blind probe set"
    both = {**blind, "relations": [{"name": "case", "status": "VIOLATED"},
                                   {"name": "typo", "status": "HOLDS"}]}
    assert exit_meaning(both) == "finding: blind probe set; relation violated (case)"
    dep = {**base, "dependence": {"status": "dependent"}}
    assert exit_meaning(dep) == "finding: dependent draws"
    assert exit_meaning({**base, "exit_code": 0}).startswith("clean")


def test_run_exit_line_and_privacy_line_say_what_happened():
    r = run(from_callable(_gate), PROMPTS, config=RunConfig(budget=3000, max_workers=1),
            relations=[])
    d = r.to_dict()
    text = render_run_text(d)
    exit_line = next(ln for ln in text.splitlines() if ln.startswith("Exit "))
    if d["exit_code"] == 1:  # a blind set (4 of 5 'allow' is below 0.9, so maybe not)
        assert "blind probe set" in exit_line
        assert "confirmed violation or dependent draws" not in exit_line
    assert "raw prompts included" not in text
    shown = r.to_dict(include_inputs=True)["privacy"]
    assert "fingerprint only" not in shown
    assert "no answer text is stored" in shown
    assert "fingerprints only" in d["privacy"] or "fingerprint only" in d["privacy"]


def test_meter_interval_level_follows_alpha():
    r = run(from_callable(_gate), PROMPTS, relations=[],
            config=RunConfig(alpha=0.1, budget=2000, max_workers=1))
    text = render_run_text(r.to_dict())
    assert "90% anytime CI" in text
    assert "95% anytime CI" not in text


def test_report_text_to_a_file_has_no_colour_even_on_a_terminal(tmp_path, monkeypatch):
    r = run(from_callable(_gate), PROMPTS, relations=[],
            config=RunConfig(budget=2000, max_workers=1))
    f = tmp_path / "run.json"
    f.write_text(json.dumps(r.to_dict()))
    import sys
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True, raising=False)
    from agentverity_props.cli._report import rerender
    from agentverity_props.report import load_result
    d = load_result(f)
    assert "\x1b[" not in rerender(d, "text", str(tmp_path / "out.txt"))
    assert "\x1b[" in rerender(d, "text", None)  # the terminal itself still gets colour


def test_bench_runs_override_is_said(tmp_path, capsys):
    bench = tmp_path / "b.yaml"
    bench.write_text("name: t\nversion: '1'\nruns: 3\ntasks:\n"
                     "  - id: a\n    prompt: hi\n    runs: 20\n"
                     "    evaluation: {type: contains, expected: allow}\n"
                     "  - id: b\n    prompt: ho\n"
                     "    evaluation: {type: contains, expected: allow}\n")
    code = _cli(["bench", "--agent", "agentverity_props.examples.plain:gate", "--benchmark",
                 str(bench), "--runs", "2"])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "note: --runs 2 overrides the file's runs: 3 and 1 task(s)' own runs (a: 20)" in err
    _cli(["bench", "--agent", "agentverity_props.examples.plain:gate", "--benchmark",
          str(bench)])
    assert "overrides" not in capsys.readouterr().err


def test_enlarge_chooses_the_pack_from_the_inputs_or_refuses():
    support = (ROOT / "examples/inputs/support.txt").read_text().splitlines()
    moderation = (ROOT / "examples/inputs/moderation.txt").read_text().splitlines()
    assert choose_pack(support).name == "support_routing"
    assert choose_pack(moderation).name == "moderation"
    unclear = choose_pack(["xyzzy plugh", "frobnicate the quux"])
    assert unclear.name is None
    assert set(unclear.scores) >= {"moderation", "support_routing", "refund_approval"}


def test_enlarge_cli_refuses_an_unclear_probe_set_before_any_call(tmp_path, capsys):
    """``--strategy auto`` refuses a set no pack fits; the default (learn from the probes)
    refuses two lines as too few to learn from: both before any call, in one line."""
    inputs = tmp_path / "in.txt"
    inputs.write_text("xyzzy plugh\nfrobnicate the quux\n")
    code = _cli(["enlarge", "--agent", f"{tmp_path / 'no_such.py'}:agent", "--inputs",
                 str(inputs), "-o", str(tmp_path / "o.txt"), "--strategy", "auto"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: cannot tell which strategy pack fits these inputs")
    assert "--strategy" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "o.txt").exists()
    code = _cli(["enlarge", "--agent", "agentverity_props.examples.plain:gate", "--inputs",
                 str(inputs), "-o", str(tmp_path / "o.txt")])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: enlarge: 2 input(s) are too few to learn a probe grammar")
    assert "at least 3 inputs" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "o.txt").exists()


def test_enlarge_cli_says_which_pack_and_what_it_added(tmp_path, capsys):
    inputs = tmp_path / "in.txt"
    inputs.write_text("How do I cook pasta?\nWhat is the capital of Peru?\n"
                      "Write a poem about the sea.\nHow do I bake bread at home?\n")
    code = _cli(["enlarge", "--agent", "agentverity_props.examples.plain:gate", "--inputs",
                 str(inputs), "-o", str(tmp_path / "o.txt"), "--budget", "200",
                 "--max-workers", "1", "--strategy", "auto"])
    out, err = capsys.readouterr()
    assert code in (0, 1), err
    assert "strategy pack 'moderation' chosen from the inputs' words" in err
    added = [ln for ln in out.splitlines() if ln.startswith("  added: ")]
    written = (tmp_path / "o.txt").read_text().splitlines()
    assert len(added) == len(written) - 4
    for ln in added:  # each added input is named with its verdict, and is in the file
        verdict, text = ln[len("  added: "):].split(" ", 1)
        assert verdict in ("review", "block")
        assert text.strip("'\"") in written


def test_snapshot_lists_each_input_with_its_reference(tmp_path, capsys, monkeypatch):
    import sys
    inputs = tmp_path / "in.txt"
    inputs.write_text("".join(f"{p}\n" for p in PROMPTS))
    argv = ["snapshot", "--agent", "agentverity_props.examples.plain:gate", "--inputs",
            str(inputs), "-o", str(tmp_path / "s.json")]
    for tty in (False, True):  # piped or on a terminal alike, as run and check do
        monkeypatch.setattr(sys.stdout, "isatty", lambda tty=tty: tty, raising=False)
        _cli(argv)  # the text report on stdout: each input by its text, with its reference
        out = capsys.readouterr().out
        assert "Review each reference before --accept-reference" in out
        for p in PROMPTS:
            line = next(ln for ln in out.splitlines() if repr(p) in ln)
            assert line.split()[0] in ("allow", "block", "review", "–")
    assert not any(p in (tmp_path / "s.json").read_text() for p in PROMPTS) \
        if (tmp_path / "s.json").exists() else True  # the snapshot file keeps none


def test_counterexample_html_names_the_e_process_not_fisher():
    template = (ROOT / "agentverity_props/report/templates/counterexample.html.j2").read_text()
    assert "Fisher" not in template
    assert "e-process" in template


@pytest.mark.parametrize("alpha", [0.05, 0.2])
def test_meter_plot_legend_follows_alpha(alpha):
    pytest.importorskip("matplotlib")
    from agentverity_props.report._plots import meter_history_svg
    hist = [{"draws": 2 * i, "ci_low": 0.0, "ci_high": 1 / i} for i in range(1, 30)]
    a = meter_history_svg(hist, epsilon=0.05, indifference=2.0, alpha=alpha)
    b = meter_history_svg(hist, epsilon=0.05, indifference=2.0, alpha=0.1)
    assert a is not None
    assert b is not None
    assert a != b  # the legend's level is drawn as glyphs: it differs with alpha


@pytest.mark.parametrize(("extra", "starts"), [
    (["--lexicon", "{missing}"], "error: lexicon file "),
    (["--lexicon", "{bad}"], "error: "),
    (["--lexicon", "{one}"], "error: lexicon file "),
    (["--generator", "nosuchmodule_xyz:make"], "error: "),
    (["--strategy", "moderation", "--lexicon", "{good}"], "error: --lexicon and --generator"),
    (["--generator", "a:b", "--generator-agent", "c:d"], "error: --generator and"),
])
def test_enlarge_lexicon_and_generator_options_refuse_bad_input_in_one_line(
        tmp_path, capsys, extra, starts):
    inputs = tmp_path / "in.txt"
    inputs.write_text("Refund order 1041 please\nRefund order 2230 now\nRefund order 77 today\n")
    files = {"missing": tmp_path / "nope.yaml", "bad": tmp_path / "bad.yaml",
             "one": tmp_path / "one.yaml", "good": tmp_path / "good.yaml"}
    files["bad"].write_text("city: [Oslo\n")
    files["one"].write_text("city: [Oslo]\n")
    files["good"].write_text("city: [Oslo, Lima]\n")
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in extra]
    code = _cli(["enlarge", "--agent", "agentverity_props.examples.plain:gate", "--inputs",
                 str(inputs), "-o", str(tmp_path / "o.txt"), *argv])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith(starts), err
    assert err.count("\n") == 1
    assert "Traceback" not in err
    if "--lexicon" in extra and "--strategy" not in extra:
        assert Path(argv[-1]).name in err  # the message names the file
    assert not (tmp_path / "o.txt").exists()
