"""Calibration of a judge against gold labels.

A gold file holds (prompt, answer, expected label[, reference]) rows, as JSONL (one object a
line; keys ``prompt``/``input``/``question``, ``answer``/``output``/``response``,
``label``/``expected``/``verdict``, optional ``reference``) or CSV (a header row naming the
same columns). The judge grades every row exactly as it grades a run's answers (its
consensus); the agreement is the share of rows whose verdict is the expected label (a
no-decision counts as a disagreement), with its exact Clopper-Pearson interval, and the
confusion matrix expected x judged. The run's threshold ``min_agreement`` applies to the
**point estimate**; the interval says how sure it is.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._internal.files import loads_json
from ..errors import BadInput

__all__ = ["Calibration", "GoldRow", "acalibrate", "calibrate", "load_gold"]

_PROMPT = ("prompt", "input", "question")
_ANSWER = ("answer", "output", "response")
_LABEL = ("label", "expected", "verdict")
NO_DECISION = "(no decision)"


@dataclass(frozen=True)
class GoldRow:
    prompt: str
    answer: str
    label: str
    reference: str | None = None


def _pick(row: dict[str, Any], keys: Sequence[str], where: str, what: str) -> str:
    for k in keys:
        if row.get(k) not in (None, ""):
            return str(row[k])
    raise BadInput(f"{where}: no {what} (a '{keys[0]}' field)",
                   "give every row 'prompt', 'answer' and 'label'")


def load_gold(path: str | Path) -> list[GoldRow]:
    """The rows of a gold file (``.jsonl``/``.json`` or ``.csv``).

    Raises:
        BadInput: a missing or unreadable file, or a row without prompt, answer or label.
    """
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"gold file {str(p)!r} does not exist",
                       "give a JSONL or CSV file of prompt, answer, label rows")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"gold file {str(p)!r} cannot be read ({exc})") from None
    rows: list[dict[str, Any]] = []
    if p.suffix.lower() == ".csv":
        rows = [dict(r) for r in csv.DictReader(text.splitlines())]
    else:
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            obj = loads_json(line, where=f"gold file {p.name} line {n}",
                             fix="write one JSON object a line")
            if not isinstance(obj, dict):
                raise BadInput(f"gold file {p.name} line {n} is not a JSON object",
                               "write one {\"prompt\", \"answer\", \"label\"} object a line")
            rows.append(obj)
    out = []
    for n, row in enumerate(rows, 1):
        where = f"gold file {p.name} row {n}"
        ref = row.get("reference")
        out.append(GoldRow(_pick(row, _PROMPT, where, "prompt"),
                           _pick(row, _ANSWER, where, "answer"),
                           _pick(row, _LABEL, where, "label").strip(),
                           None if ref in (None, "") else str(ref)))
    if not out:
        raise BadInput(f"gold file {p.name} has no rows", "add prompt, answer, label rows")
    return out


@dataclass(frozen=True)
class Calibration:
    """The judge's agreement with gold labels.

    Attributes:
        rows: gold rows graded.
        agreed: rows whose verdict is the expected label.
        agreement: ``agreed / rows`` (the point estimate the threshold applies to).
        interval: its exact Clopper-Pearson interval at ``1 - alpha``.
        confusion: expected label -> {judged label or "(no decision)": rows}.
        min_agreement: the threshold; ``passed`` is ``agreement >= min_agreement``.
        action: what a run does below it: ``refuse`` or ``warn``.
    """

    rows: int
    agreed: int
    agreement: float
    interval: tuple[float, float]
    confusion: dict[str, dict[str, int]]
    min_agreement: float
    action: str
    alpha: float = 0.05
    source: str = ""
    judge_calls: int = field(default=0, compare=False)

    @property
    def passed(self) -> bool:
        return self.agreement >= self.min_agreement

    def statement(self) -> str:
        lo, hi = self.interval
        head = (f"judge agreement with {self.rows} gold labels {self.agreement:.3f} "
                f"[{lo:.3f}, {hi:.3f}] (exact {1 - self.alpha:.0%} interval)")
        if self.passed:
            return f"{head}: at least the required {self.min_agreement:g}"
        verb = "the run refuses to use it" if self.action == "refuse" else \
            "the run goes on, warned"
        return f"{head}: below the required {self.min_agreement:g}, {verb}"

    def to_dict(self) -> dict[str, Any]:
        return {"rows": self.rows, "agreed": self.agreed, "agreement": self.agreement,
                "interval": list(self.interval), "alpha": self.alpha,
                "confusion": {k: dict(v) for k, v in self.confusion.items()},
                "min_agreement": self.min_agreement, "basis": "point estimate",
                "action": self.action, "passed": self.passed, "source": self.source,
                "judge_calls": self.judge_calls, "statement": self.statement()}


async def acalibrate(judged: Any, rows: Sequence[GoldRow], *, min_agreement: float,
                     action: str, alpha: float = 0.05, source: str = "") -> Calibration:
    """Grade every gold row with ``judged`` (a :class:`JudgedAgent`: its consensus)."""
    import asyncio

    from ..decide import clopper_pearson

    calls = judged.judge_calls
    sem = asyncio.Semaphore(max(1, judged.judge_engine.config.max_workers))

    async def one(row: GoldRow) -> str | None:
        async with sem:
            label, _ = await judged.grade(row.prompt, row.answer, reference=row.reference,
                                          use_reference=row.reference is None)
            return label

    got = await asyncio.gather(*(one(r) for r in rows))
    confusion: dict[str, dict[str, int]] = {}
    agreed = 0
    for row, label in zip(rows, got, strict=False):
        key = label if label is not None else NO_DECISION
        cell = confusion.setdefault(row.label, {})
        cell[key] = cell.get(key, 0) + 1
        agreed += label is not None and label.lower() == row.label.lower()
    n = len(rows)
    lo, hi = clopper_pearson(agreed, n, alpha=alpha)
    return Calibration(n, agreed, agreed / n, (lo, hi), confusion, min_agreement, action,
                       alpha, source, judged.judge_calls - calls)


def calibrate(judge: Any, gold: str | Path | Sequence[GoldRow], *, engine: Any = None,
              min_agreement: float | None = None, alpha: float = 0.05) -> Calibration:
    """The judge's agreement with a gold file (or rows), its interval and confusion matrix.

    Args:
        judge: a :class:`~agentverity_props.judge.Judge` or any agent.
        gold: a JSONL/CSV file of prompt, answer, label[, reference] rows, or the rows.
        engine: an :class:`~agentverity_props.engine.EngineConfig` for the judge's calls.
        min_agreement: the threshold reported on (default: the judge's own).
    """
    from .._internal.aio import run_sync
    from ._judge import as_judge
    from ._judged import JudgedAgent

    j = as_judge(judge)
    rows = load_gold(gold) if isinstance(gold, (str, Path)) else list(gold)
    judged = JudgedAgent(_no_agent, j, engine)
    try:
        return run_sync(acalibrate(judged, rows,
                                   min_agreement=j.min_agreement if min_agreement is None
                                   else min_agreement, action=j.on_low_agreement,
                                   alpha=alpha, source=str(gold) if isinstance(
                                       gold, (str, Path)) else ""))
    finally:
        judged.close()


def _no_agent(prompt: str) -> str:  # calibration grades gold answers: no agent is called
    return ""
