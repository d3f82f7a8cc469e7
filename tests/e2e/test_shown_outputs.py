"""Every output README.md and docs/*.md show is what the code prints (numbers included).

The machinery, and the one command that re-captures every block, is tests/e2e/shown_outputs.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import shown_outputs as so

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("document", so.DOCUMENTS, ids=lambda d: str(d.relative_to(so.ROOT)))
def test_every_text_block_is_a_marked_output_or_says_it_is_not(document: Path) -> None:
    assert so.check_markers(document) == []


@pytest.mark.docs  # re-runs every shown command: the full job's, with the other doc runs
@pytest.mark.parametrize("document", so.documents_with_outputs(),
                         ids=lambda d: str(d.relative_to(so.ROOT)))
def test_shown_outputs_are_what_a_real_run_prints(document: Path) -> None:
    outcome = so.compare(document)
    assert not outcome.differences, (
        "\n\n".join(outcome.differences)
        + "\n(re-capture with: python tests/e2e/shown_outputs.py --update)")


def test_the_documents_show_the_outputs_they_should() -> None:
    """The harness sees README's demo, Python API and conversation outputs, assess's report
    and the console output of docs/reports.md (a parser that sees nothing compares nothing)."""
    readme = so.shown(so.ROOT / "README.md")
    sources = [s.source for s in readme if isinstance(s, so.Shown)]
    assert sources[0] == "agentverity-props demo"
    assert sources.count("python") >= 3
    assert all(s.code for s in readme if isinstance(s, so.Shown) and s.source == "python")
    names = {d.name for d in so.documents_with_outputs()}
    assert {"README.md", "assess.md", "conversations.md", "strategies.md",
            "reports.md"} <= names


def test_a_changed_number_is_a_difference_and_only_timings_are_masked() -> None:
    assert so.matches(["effect +0.131, 3 input(s)"], ["effect +0.131, 3 input(s)", ""])
    assert not so.matches(["effect +0.131, 3 input(s)"], ["effect +0.097, 3 input(s)"])
    assert not so.matches(["1 input(s)"], ["3 input(s)"])
    assert so.matches(["took 12.3 s, 450 ms per call"], ["took 9.0 s, 38 ms per call"])
    assert not so.matches(["a", "b"], ["a"])


def test_an_elision_stands_for_lines_between_head_and_tail() -> None:
    shown = ["head", "...", "tail"]
    assert so.matches(shown, ["head", "x", "y", "tail"])
    assert not so.matches(shown, ["head", "x", "y", "other tail"])
    assert not so.matches(shown, ["other head", "tail"])
    assert so._elided(shown, ["h2", "x", "y", "t2"]) == ["h2", "...", "t2"]


def test_update_rewrites_a_stale_block_and_then_it_matches(tmp_path: Path) -> None:
    doc = tmp_path / "probe.md"
    doc.write_text("```python\nprint(6 * 7)\nprint('x')\n```\n\n<!-- output: python -->\n"
                   "```text\n41\nx\n```\n\n<!-- output: python -c \"print(1)\" -->\n"
                   "```text\n1\n```\n", encoding="utf-8")
    outcome = so.compare(doc)
    assert len(outcome.differences) == 1
    assert "+42" in outcome.differences[0]
    doc.write_text(outcome.updated, encoding="utf-8")
    assert "```text\n42\nx\n```" in doc.read_text(encoding="utf-8")
    assert so.compare(doc).differences == []


def test_a_text_block_without_a_marker_is_reported(tmp_path: Path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text("```python\nprint(1)\n```\n\n```text\n1\n```\n<!-- output: python -->\n\n"
                   "para\n", encoding="utf-8")
    problems = so.check_markers(doc)
    assert len(problems) == 2
    assert "without an '<!-- output" in problems[0]
    assert "not followed" in problems[1]
