"""Evidence: every draw made in a run, per probe, so later phases reuse earlier draws."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..observation import Observation


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
