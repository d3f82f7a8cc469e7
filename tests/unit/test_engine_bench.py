"""benchmarks/overhead.py rewrites only its own section of docs/benchmarks.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("overhead_bench",
                                                  ROOT / "benchmarks" / "overhead.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_write_section_creates_replaces_and_keeps_other_sections(tmp_path):
    bench = _bench()
    path = tmp_path / "docs" / "benchmarks.md"
    first = f"{bench.START}\n## Engine overhead\n\nold numbers\n{bench.END}\n"
    bench.write_section(path, first)
    text = path.read_text()
    assert text.startswith("# Benchmarks\n")
    assert "old numbers" in text
    path.write_text("# Benchmarks\n\n## Meter\n\nmeter table\n\n" + first
                    + "\n## Relations\n\nrelations table\n")
    second = f"{bench.START}\n## Engine overhead\n\nnew numbers\n{bench.END}\n"
    bench.write_section(path, second)
    text = path.read_text()
    assert "new numbers" in text
    assert "old numbers" not in text
    assert text.count(bench.START) == 1
    assert "meter table" in text
    assert "relations table" in text
    assert text.index("meter table") < text.index("new numbers") < text.index("relations")


def test_write_section_appends_when_markers_are_missing(tmp_path):
    bench = _bench()
    path = tmp_path / "benchmarks.md"
    path.write_text("# Benchmarks\n\n## Something else\n")
    bench.write_section(path, f"{bench.START}\nx\n{bench.END}\n")
    text = path.read_text()
    assert text.startswith("# Benchmarks\n\n## Something else\n")
    assert text.rstrip().endswith(bench.END)
