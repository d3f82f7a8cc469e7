"""Evidence: every draw made in a run, per probe, so later phases reuse earlier draws."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidArgument
from .observation import Observation


@dataclass
class ProbeEvidence:
    """All draws of one probe in this run, by draw index."""

    fp: str
    draws: dict[int, Observation] = field(default_factory=dict)

    def keys(self, layer: str) -> list[str | None]:
        return [self.draws[i].key(layer) for i in sorted(self.draws)]

    def counts(self, layer: str) -> Counter[str]:
        return Counter(k for k in self.keys(layer) if k is not None)

    def failures(self) -> int:
        return sum(1 for o in self.draws.values() if not o.ok)


class EvidencePool:
    """Draws of every probe, filled by the meter and read by blindness and relations."""

    def __init__(self) -> None:
        self._by_fp: dict[str, ProbeEvidence] = {}

    def add(self, fp: str, index: int, obs: Observation) -> None:
        self._by_fp.setdefault(fp, ProbeEvidence(fp)).draws[index] = obs

    def get(self, fp: str) -> ProbeEvidence:
        return self._by_fp.get(fp) or ProbeEvidence(fp)

    def __contains__(self, fp: object) -> bool:
        return fp in self._by_fp

    def __iter__(self) -> Any:
        return iter(self._by_fp.values())


def clean_inputs(inputs: Iterable[str], *, what: str = "inputs") -> list[str]:
    """Validate a probe set: non-empty strings, no duplicates (duplicates skew every estimate)."""
    if isinstance(inputs, str):
        raise InvalidArgument(
            f"{what} must be a list of prompts, not one string; wrap it: [prompt]")
    out: list[str] = []
    seen: set[str] = set()
    for i, text in enumerate(inputs):
        if not isinstance(text, str):
            raise InvalidArgument(f"{what}[{i}] is {type(text).__name__}; every input must be str")
        if not text.strip():
            raise InvalidArgument(f"{what}[{i}] is empty; remove blank inputs")
        if text in seen:
            raise InvalidArgument(f"{what}[{i}] duplicates an earlier input; remove duplicates")
        seen.add(text)
        out.append(text)
    if not out:
        raise InvalidArgument(f"{what} is empty; give at least one prompt")
    return out


def majority(keys: Sequence[str | None]) -> str | None:
    c = Counter(k for k in keys if k is not None)
    return c.most_common(1)[0][0] if c else None
