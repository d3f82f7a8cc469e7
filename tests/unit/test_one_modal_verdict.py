"""One modal verdict, one tie rule: every decision that reads an input's reference verdict
calls :func:`agentverity_props.decide.modal`; a second copy of the rule (which could break ties
differently, as one did) fails here."""

from __future__ import annotations

import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "agentverity_props"
HOME = PACKAGE / "decide" / "_modal.py"
#: the shapes a hand-written modal verdict takes
COPIES = [
    re.compile(r"most_common\(1\)\[0\]\[0\]"),
    re.compile(r"most_common\(1\)\[0\]\s*$", re.M),
    re.compile(r"next\(\s*k\s+for\s+k\s+in\s+\w+\s+if\s+\w+\[k\]\s*==\s*\w+\s*\)"),
    re.compile(r"max\(\s*\w+\s*,\s*key\s*=\s*lambda\s+k\s*:\s*\(\s*\w+\[k\]"),
    re.compile(r"min\(\s*k\s+for\s+k\s*,\s*v\s+in\s+\w+\.items\(\)\s+if\s+v\s*==\s*\w+\s*\)"),
    re.compile(r"max\(\s*set\(\s*\w+\s*\)\s*,\s*key\s*=\s*lambda\s+k\s*:\s*\(\s*\w+\.count\(k\)"),
    # a verdict's modal by set order (ties broken by hashing): not for counting reasons
    re.compile(r"modal\s*=\s*max\(\s*set\("),
]


def copies_in(text: str) -> list[str]:
    return [m.group(0) for pat in COPIES for m in pat.finditer(text)]


def test_no_module_writes_the_modal_verdict_itself() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == HOME:
            continue
        for hit in copies_in(path.read_text(encoding="utf-8")):
            found.append(f"{path.relative_to(PACKAGE.parent)}: {hit}")
    assert found == [], "write agentverity_props.decide.modal(keys) instead:\n" + "\n".join(found)


def test_the_scan_finds_each_old_copy() -> None:
    # the shapes the package held before the rule was one (so the scan cannot pass vacuously)
    assert copies_in("ref = Counter(keys).most_common(1)[0][0]")
    assert copies_in("    return next(k for k in keys if counts[k] == best)")
    assert copies_in("ref = max(counts, key=lambda k: (counts[k], -sources.index(k)))")
    assert copies_in("return min(k for k, v in counts.items() if v == top)")
    assert copies_in("x = max(set(fkeys), key=lambda k: (fkeys.count(k), -fkeys.index(k)))")
    assert copies_in("        self.modal = max(set(known), key=known.count) if known else None")
    assert not copies_in("label = modal(keys)")
