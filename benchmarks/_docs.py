"""Replace one marked section of docs/benchmarks.md, leaving every other section as it is.

A section is the text between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` (markers
included), the same convention ``benchmarks/overhead.py`` uses for its ``overhead`` section, so
each benchmark script owns its section and none of them touches another's figures.

Standard library only: ``meter_calls.py`` imports this module and also runs, as a worker, in
a throwaway virtual environment that has nothing but agentverity installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

HEADER = "# Benchmarks\n"


def markers(name: str) -> tuple[str, str]:
    """The start and end markers of section ``name``."""
    if not name or any(c in name for c in "<>\n") or "--" in name:
        raise ValueError(f"section name {name!r} cannot be used inside an HTML comment")
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


def replace_section(text: str, name: str, body: str) -> str:
    """Return ``text`` with section ``name`` holding ``body``; append the section if absent.

    ``body`` is what goes between the markers (markers must not be in it). Text outside the
    section is kept byte for byte, except that the section is separated from what follows it
    by one blank line.

    Raises:
        ValueError: the section's markers are malformed (a start without an end, an end
            before its start, or either marker inside ``body``).

    >>> doc = replace_section("# B\\n\\nintro\\n", "x", "new")
    >>> doc
    '# B\\n\\nintro\\n\\n<!-- x:start -->\\nnew\\n<!-- x:end -->\\n'
    >>> replace_section(doc, "x", "newer").count("new")
    1
    """
    start, end = markers(name)
    if start in body or end in body:
        raise ValueError(f"the body of section {name!r} must not contain its markers")
    section = f"{start}\n{body.strip(chr(10))}\n{end}\n"
    i, j = text.find(start), text.find(end)
    if i == -1 and j == -1:
        head = text.rstrip("\n")
        return (head + "\n\n" if head else HEADER + "\n") + section
    if i == -1 or j < i:
        raise ValueError(f"section {name!r}: markers out of order or one of them missing; "
                         f"fix the file by hand ({start} ... {end})")
    rest = text[j + len(end):].lstrip("\n")
    return text[:i] + section + ("\n" + rest if rest else "")


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Serialise read-modify-write of the doc between concurrently running benchmarks."""
    # the lock lives outside the repository so that it never shows up in a diff
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    lock = Path(tempfile.gettempdir()) / f"agentverity-props-docs-{digest}.lock"
    try:
        import fcntl
    except ImportError:  # not POSIX: no concurrent runs to guard against in practice
        yield
        return
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def write_section(path: Path, name: str, body: str) -> None:
    """Replace (or append) section ``name`` of the Markdown file at ``path``, atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        text = path.read_text(encoding="utf-8") if path.exists() else ""
        new = replace_section(text, name, body)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(new, encoding="utf-8")
        os.replace(tmp, path)


def cpus() -> int:
    """CPUs this process may run on (the figure benchmark headers print)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else \
        (os.cpu_count() or 1)
