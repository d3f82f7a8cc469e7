"""The outputs README.md and docs/*.md show, captured from real runs and compared.

A document shows an output in a ``text`` fenced block announced by an HTML comment (invisible
once rendered) on the line(s) above it::

    <!-- output: python -->                    the nearest ``python`` block above, as a script
    <!-- output: agentverity-props demo -->    a command line (``2>&1`` at its end: stderr too)
    <!-- output: none, commands with placeholders -->   a text block that is not an output

and a ``console`` block shows, under each ``$ `` command, what that command prints (stdout and
stderr, as a terminal shows them). Every
``text`` block must carry one of these comments (``check_markers``), so no shown output
escapes the comparison.

The blocks of one document run in document order in one scratch directory holding a copy of
``examples/`` and a link to the package (a file one command writes is there for the next),
never in the repository; ``PYTHONHASHSEED`` is 0.
Comparison is exact, numbers included, after two explicit masks: timings (``12.3 s``,
``450 ms``) and the scratch directory's path. A line holding only ``...`` in a shown block
stands for any number of lines: the lines above it are compared with the output's first
lines, those below it with its last lines.

Re-capturing every shown output is one command, from the repository root::

    python tests/e2e/shown_outputs.py            # compare; list the differences; exit 1 if any
    python tests/e2e/shown_outputs.py --update   # rewrite every shown block from a real run
    python tests/e2e/shown_outputs.py --update README.md docs/assess.md   # these documents

``--update`` keeps each block's elision: as many head and tail lines as it showed before.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             ROOT / "examples" / "README.md"]
MARKER = re.compile(r"^<!--\s*output:\s*(.*?)\s*-->\s*$")
TIMING = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:ms|s)\b")
ELISION = "..."
TIMEOUT_S = 600


@dataclass
class Block:
    """One fenced block of a document: ``lines[start]`` is its opening fence."""

    lang: str
    start: int
    end: int  # the closing fence's line
    body: list[str]
    marker: str | None = None  # the output comment above a text block


@dataclass
class Shown:
    """A shown output and how to produce it: ``source`` is 'python' (``code``) or a command."""

    document: Path
    block: Block
    source: str
    code: str = ""


@dataclass
class ConsoleBlock:
    """A console block: its commands, each with the output lines shown under it."""

    document: Path
    block: Block
    # each command, the lines shown under it, its first and last line in the body
    commands: list[tuple[str, list[str], int, int]] = field(default_factory=list)


def blocks(lines: list[str]) -> list[Block]:
    """The fenced blocks of a document, each text block with the marker above it (if any)."""
    out: list[Block] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            lang = lines[i][3:].strip()
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            marker = None
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            if k >= 0 and (m := MARKER.match(lines[k])):
                marker = m.group(1)
            out.append(Block(lang, i, j, lines[i + 1:j], marker))
            i = j + 1
        else:
            i += 1
    return out


def check_markers(document: Path) -> list[str]:
    """Problems: a text block without an output comment, a comment with no text block."""
    lines = document.read_text(encoding="utf-8").splitlines()
    found = blocks(lines)
    problems = [f"{document.name}:{b.start + 1}: a text block without an '<!-- output: ... -->' "
                f"comment above it" for b in found if b.lang == "text" and b.marker is None]
    marked = {b.start for b in found if b.marker is not None}
    for n, line in enumerate(lines):
        if MARKER.match(line):
            following = [b for b in found if b.start > n]
            if not following or following[0].start not in marked or following[0].lang != "text":
                problems.append(f"{document.name}:{n + 1}: an output comment not followed by a "
                                f"text block")
    return problems


def shown(document: Path) -> list[Shown | ConsoleBlock]:
    """What ``document`` shows, in document order."""
    found = blocks(document.read_text(encoding="utf-8").splitlines())
    out: list[Shown | ConsoleBlock] = []
    last_python = None
    for b in found:
        if b.lang == "python":
            last_python = b
        elif b.lang == "console":
            console = ConsoleBlock(document, b)
            continued = False
            for n, line in enumerate(b.body):
                if continued:  # a command continued with a backslash
                    cmd, out_lines, at, _ = console.commands[-1]
                    console.commands[-1] = (cmd[:-1] + " " + line.strip(), out_lines, at, n)
                elif line.startswith("$ "):
                    console.commands.append((line[2:].rstrip(), [], n, n))
                elif console.commands and line.strip():
                    console.commands[-1][1].append(line)
                continued = bool(console.commands) and console.commands[-1][0].endswith("\\")
            if any(shown_lines for _, shown_lines, _, _ in console.commands):
                out.append(console)
        elif b.lang == "text" and b.marker and not b.marker.startswith("none"):
            if b.marker == "python":
                if last_python is None:
                    raise ValueError(f"{document.name}:{b.start + 1}: no python block above")
                out.append(Shown(document, b, "python", "\n".join(last_python.body) + "\n"))
            else:
                out.append(Shown(document, b, b.marker))
    return out


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("AGENTVERITY_PROPS_", "PYTEST_", "HYPOTHESIS"))}
    env.update(NO_COLOR="1", TERM="dumb", COLUMNS="120", PYTHONHASHSEED="0")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    return env


def _argv(command: str) -> tuple[list[str], bool]:
    """A document's command as argv (``agentverity-props`` and ``python`` from this
    interpreter), and whether it merges stderr (``2>&1``)."""
    lex = shlex.shlex(command, posix=True)
    lex.whitespace_split = True
    lex.commenters = "#"
    words = list(lex)
    merge = bool(words) and words[-1] == "2>&1"
    if merge:
        words = words[:-1]
    if words[:1] == ["agentverity-props"]:
        words = [sys.executable, "-m", "agentverity_props", *words[1:]]
    elif words[:1] in (["python"], ["python3"]):
        words = [sys.executable, *words[1:]]
    return words, merge


def run(item: Shown | tuple[str, Path], scratch: Path) -> str:
    """The output of one shown block (or one console command), from a real run in ``scratch``."""
    if isinstance(item, Shown) and item.source == "python":
        script = scratch / "_shown_example.py"
        script.write_text(item.code, encoding="utf-8")
        argv, merge = [sys.executable, str(script)], False
    elif isinstance(item, Shown):
        argv, merge = _argv(item.source)
    else:  # a console command: the terminal shows stdout and stderr
        argv, merge = _argv(item[0])[0], True
    proc = subprocess.run(argv, cwd=scratch, env=_environment(), capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
    if "Traceback (most recent call last)" in proc.stderr:
        raise AssertionError(f"{argv}: traceback\n{proc.stderr[-3000:]}")
    text = proc.stdout + (proc.stderr if merge else "")
    return text.replace(str(scratch), ".")


def _mask(lines: list[str]) -> list[str]:
    return [TIMING.sub("<time>", line.rstrip()) for line in lines]


def matches(expected: list[str], actual: list[str]) -> bool:
    """Whether an output matches a shown block (masks and ``...`` applied)."""
    expected, actual = _mask(expected), _mask(actual)
    while actual and not actual[-1]:
        actual.pop()
    if ELISION not in [line.strip() for line in expected]:
        return expected == actual
    cut = [line.strip() for line in expected].index(ELISION)
    head, tail = expected[:cut], expected[cut + 1:]
    return (len(head) + len(tail) <= len(actual) and actual[:len(head)] == head
            and (not tail or actual[-len(tail):] == tail))


def _elided(old: list[str], new: list[str]) -> list[str]:
    """``new`` shown as ``old`` was: the same number of head and tail lines around ``...``."""
    while new and not new[-1].strip():
        new.pop()
    stripped = [line.strip() for line in old]
    if ELISION not in stripped:
        return new
    cut = stripped.index(ELISION)
    head, tail = cut, len(old) - cut - 1
    if head + tail >= len(new):
        return new
    return new[:head] + [old[cut]] + (new[-tail:] if tail else [])


@dataclass
class Outcome:
    """The comparison of one document: the differing blocks and the document as it should be."""

    document: Path
    differences: list[str]
    updated: str


def _scratch() -> Path:
    scratch = Path(tempfile.mkdtemp(prefix="agentverity-shown-"))
    shutil.copytree(ROOT / "examples", scratch / "examples",
                    ignore=shutil.ignore_patterns("__pycache__"))
    # documents name the packaged examples from the repository root (the same package)
    (scratch / "agentverity_props").symlink_to(ROOT / "agentverity_props")
    return scratch


def compare(document: Path) -> Outcome:
    """Run every block ``document`` shows (in order, in one scratch directory) and compare."""
    lines = document.read_text(encoding="utf-8").splitlines()
    scratch = _scratch()
    differences: list[str] = []
    replacements: list[tuple[int, int, list[str]]] = []  # first, last (exclusive), lines
    try:
        for item in shown(document):
            if isinstance(item, Shown):
                actual = run(item, scratch).splitlines()
                old = item.block.body
                if not matches(old, actual):
                    differences.append(_diff(document, item.block.start, old, actual))
                    replacements.append((item.block.start + 1, item.block.end,
                                         _elided(old, actual)))
                continue
            body = item.block.body
            for index, (command, shown_lines, n, last) in enumerate(item.commands):
                actual = run((command, scratch), scratch).splitlines()
                if shown_lines and not matches(shown_lines, actual):
                    differences.append(_diff(document, item.block.start + 1 + n, shown_lines,
                                             actual))
                    nxt = (item.commands[index + 1][2] if index + 1 < len(item.commands)
                           else len(body))
                    first = item.block.start + 1 + last + 1
                    replacements.append((first, item.block.start + 1 + nxt,
                                         _elided(shown_lines, actual)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for first, last, new in sorted(replacements, reverse=True):
        lines[first:last] = new
    return Outcome(document, differences, "\n".join(lines) + "\n")


def _diff(document: Path, line: int, expected: list[str], actual: list[str]) -> str:
    import difflib

    rel = _rel(document)
    diff = difflib.unified_diff(expected, actual, f"{rel}:{line + 1} (shown)",
                                "real run", lineterm="")
    return "\n".join(diff)


def _rel(document: Path) -> Path:
    return document.relative_to(ROOT) if document.is_relative_to(ROOT) else document


def documents_with_outputs() -> list[Path]:
    """The documents that show an output."""
    return [d for d in DOCUMENTS if d.exists() and shown(d)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--update", action="store_true",
                        help="rewrite the shown outputs from real runs")
    parser.add_argument("documents", nargs="*", type=Path,
                        help="documents to compare (default: every one showing an output)")
    args = parser.parse_args(argv)
    docs = [d.resolve() for d in args.documents] or documents_with_outputs()
    problems = [p for d in docs for p in check_markers(d)]
    for problem in problems:
        print(problem, file=sys.stderr)
    status = 1 if problems else 0
    for doc in docs:
        outcome = compare(doc)
        rel = _rel(doc)
        if not outcome.differences:
            print(f"{rel}: every shown output matches")
            continue
        if args.update:
            doc.write_text(outcome.updated, encoding="utf-8")
            print(f"{rel}: rewrote {len(outcome.differences)} block(s)")
        else:
            status = 1
            print("\n\n".join(outcome.differences))
            print(f"{rel}: {len(outcome.differences)} block(s) differ")
    return status


if __name__ == "__main__":
    sys.exit(main())
