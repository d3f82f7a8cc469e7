"""What a judge is: an agent, the prompt it is given, and the labels it may answer.

A :class:`Judge` is any agent the project can call (``as_adapter``: a callable, an adapter,
a framework agent, an HTTP endpoint) plus how to ask it: the template composing the user's
prompt, the agent's answer and an optional reference into the judge's prompt, the labels it
may answer (anything else is a no-decision, never a verdict) and how many of its calls make
one verdict (the consensus rule, :mod:`agentverity_props.judge._judged`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import InvalidArgument
from ..observation import (
    DEFAULT_EXTRACTOR,
    VERDICT_KEYS,
    NoDecision,
    Observation,
    VerdictExtractor,
)

__all__ = ["DEFAULT_TEMPLATE", "PAIRWISE_TEMPLATE", "Judge", "as_judge", "compose",
           "label_extractor", "parse_labels"]

#: The judge's prompt for one answer. ``{prompt}``, ``{answer}``, ``{reference}`` and
#: ``{labels}`` are replaced (in one pass: braces inside an answer are kept as they are); the
#: ``<answer>`` tags are what the judge relations edit (keep them in your own template).
DEFAULT_TEMPLATE = (
    "You grade an assistant's answer to a user's question.\n"
    "Reply with exactly one label: {labels}.\n\n"
    "<question>\n{prompt}\n</question>\n"
    "<answer>\n{answer}\n</answer>\n"
    "{reference}"
)

#: The judge's prompt comparing two answers (``{answer_a}``, ``{answer_b}``); the labels are
#: usually ``A,B,tie``. The pairwise-order relation swaps the two tagged answers.
PAIRWISE_TEMPLATE = (
    "You compare two answers to a user's question.\n"
    "Reply with exactly one label: {labels}.\n\n"
    "<question>\n{prompt}\n</question>\n"
    "<answer_a>\n{answer_a}\n</answer_a>\n"
    "<answer_b>\n{answer_b}\n</answer_b>\n"
    "{reference}"
)

_FIELD = re.compile(r"\{(prompt|answer|answer_a|answer_b|reference|labels)\}")
#: a labelled last line: ``VERDICT: correct``, ``label = wrong``, ``Grade: A``
_LABELLED = re.compile(r"(?:verdict|label|grade|answer|decision)\s*[:=]\s*\**\s*([\w-]+)",
                       re.IGNORECASE)
#: the judge's calls always made on one answer (the fixed sample its noise is measured on)
DEFAULT_MIN_VOTES = 3
#: default cap on the judge's calls for one answer
DEFAULT_MAX_CALLS = 15
#: with ``margin=None``: a verdict is the label whose lead makes it wrong with at most this
#: probability at the judge's measured noise (its upper confidence bound)
DEFAULT_CONSENSUS_ERROR = 1e-4


def compose(template: str, *, prompt: str, answer: str = "", reference: str | None = None,
            labels: Sequence[str] | None = None, answer_a: str = "",
            answer_b: str = "") -> str:
    """The judge's prompt: ``template`` with its fields replaced in one pass.

    >>> compose("Q={prompt} A={answer}{reference}", prompt="2+2?", answer="{4}")
    'Q=2+2? A={4}'
    """
    ref = "" if reference is None else f"<reference>\n{reference}\n</reference>\n"
    values = {"prompt": prompt, "answer": answer, "answer_a": answer_a, "answer_b": answer_b,
              "reference": ref, "labels": ", ".join(labels) if labels else "one short label"}
    return _FIELD.sub(lambda m: values[m.group(1)], template)


def parse_labels(value: str | Sequence[str] | None) -> tuple[str, ...] | None:
    """``"a,b,c"`` or a sequence -> distinct non-empty labels (None stays None).

    >>> parse_labels("correct, incorrect")
    ('correct', 'incorrect')
    """
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else list(value)
    out = tuple(dict.fromkeys(str(x).strip() for x in items))
    if not out or any(not x for x in out):
        raise InvalidArgument(f"judge labels {value!r} must be non-empty labels, e.g. "
                              "'correct,incorrect'")
    if len(out) < 2:
        raise InvalidArgument(f"judge labels {value!r} name one label; a judge needs at least "
                              "two (e.g. 'correct,incorrect')")
    return out


def label_extractor(labels: Sequence[str]) -> VerdictExtractor:
    """The judge's label, which must be one of ``labels`` (case-insensitive): a dict answer's
    ``verdict``/``decision``/``label``, the whole answer (``Correct.``), a labelled line
    (``VERDICT: correct``) or the one label the text names as a word; anything else, or two
    different labels named, is a :class:`~agentverity_props.observation.NoDecision`."""
    by_lower = {lab.lower(): lab for lab in labels}
    shown = ", ".join(labels)
    words = re.compile(r"(?<![\w-])(" + "|".join(re.escape(lab) for lab in
                                                sorted(labels, key=len, reverse=True))
                       + r")(?![\w-])", re.IGNORECASE)

    def fn(obs: Observation) -> str | NoDecision:
        if isinstance(obs.raw, Mapping):
            for k in VERDICT_KEYS:
                if obs.raw.get(k) is not None:
                    got = by_lower.get(str(obs.raw[k]).strip().lower())
                    return got if got is not None else NoDecision(
                        f"the judge answered {str(obs.raw[k])[:40]!r}, not one of {shown}")
        text = obs.verdict if obs.verdict is not None and not obs.text else obs.text
        whole = by_lower.get(text.strip().strip(".!\"'*`").strip().lower())
        if whole is not None:
            return whole
        for line in reversed(text.strip().splitlines()):
            m = _LABELLED.search(line)
            if m and m.group(1).lower() in by_lower:
                return by_lower[m.group(1).lower()]
        named = {by_lower[m.group(1).lower()] for m in words.finditer(text)}
        if len(named) == 1:
            return named.pop()
        if named:
            return NoDecision(f"the judge named several labels ({', '.join(sorted(named))})")
        return NoDecision(f"the judge answered none of the labels {shown}")

    return VerdictExtractor("judge-labels:" + ",".join(labels), fn, frozenset(labels))


References = Mapping[str, str] | Callable[[str], "str | None"]


@dataclass(frozen=True)
class Judge:
    """A judge: the agent that grades answers, and how it is asked.

    Args:
        agent: anything the project can call (a callable ``fn(prompt)``, an adapter, a
            Strands/LangGraph/pydantic-ai/OpenAI Agents agent, ``from_http(...)``).
        labels: the labels it may answer (``"correct,incorrect"`` or a sequence); a label
            outside them is a no-decision, never a verdict. None: any short answer is a label.
        template: the judge's prompt (:data:`DEFAULT_TEMPLATE`, or :data:`PAIRWISE_TEMPLATE`
            for pairwise probes).
        references: the reference answer of each prompt: a mapping (a follow-up prompt that
            is not a key takes the reference of the longest key it contains) or a function
            of the prompt; None: no reference.
        margin: one verdict is the label that leads every other by ``margin`` of the judge's
            calls on the same recorded answer (1: one call, the judge's noise left in the
            verdicts). None (the default): the lead that makes the verdict wrong with
            probability at most ``consensus_error`` at the judge's noise measured so far (its
            upper confidence bound; before 10 answers are measured, an error rate of 0.25).
        min_votes: the judge's calls always made on an answer (with ``margin=None``): the
            fixed sample its noise is measured on.
        max_calls: at most this many judge calls for one answer; then the leading label (or a
            no-decision on a tie).
        consensus_error: the target of ``margin=None``.
        noise_target: after the run, recorded answers are judged again (never the agent)
            until the judge's error-rate interval is at most this half-width (three rounds
            at most).
        extractor: how a label is read from the judge's answer (default: from ``labels``).
        gold: a file of gold labels (JSONL or CSV of prompt, answer, label[, reference]) the
            judge is calibrated on before a run.
        min_agreement: the least agreement (point estimate) with ``gold`` a run accepts.
        on_low_agreement: ``"refuse"`` (the run stops, exit 2) or ``"warn"``.
        noise_sample: with ``margin=1``, how many recorded answers are judged once more
            after the run to measure the judge's noise.
        budget: a cap on the judge's live calls (None: none).
    """

    agent: Any
    labels: tuple[str, ...] | None = None
    template: str = DEFAULT_TEMPLATE
    references: Any = field(default=None, compare=False)
    margin: int | None = None
    min_votes: int = DEFAULT_MIN_VOTES
    max_calls: int = DEFAULT_MAX_CALLS
    consensus_error: float = DEFAULT_CONSENSUS_ERROR
    noise_target: float = 0.025
    extractor: VerdictExtractor | None = None
    gold: str | Path | None = None
    min_agreement: float = 0.8
    on_low_agreement: str = "refuse"
    noise_sample: int = 300
    budget: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "labels", parse_labels(self.labels))
        for name in ("margin", "min_votes", "max_calls", "noise_sample"):
            v = getattr(self, name)
            if v is None and name == "margin":
                continue
            if not isinstance(v, int) or isinstance(v, bool) or v < (0 if name ==
                                                                     "noise_sample" else 1):
                raise InvalidArgument(f"Judge({name}={v!r}) must be a positive int")
        if self.max_calls < self.fixed_votes:
            raise InvalidArgument(f"Judge(max_calls={self.max_calls}) must be at least "
                                  f"{self.fixed_votes} (margin / min_votes)")
        if not (0.0 < self.consensus_error < 0.5):
            raise InvalidArgument(f"Judge(consensus_error={self.consensus_error!r}) must be in "
                                  "(0, 0.5), e.g. 1e-4")
        if not (0.0 < self.noise_target < 0.5):
            raise InvalidArgument(f"Judge(noise_target={self.noise_target!r}) must be in "
                                  "(0, 0.5), e.g. 0.025")
        if not (0.0 <= self.min_agreement <= 1.0):
            raise InvalidArgument(f"Judge(min_agreement={self.min_agreement!r}) must be in "
                                  "[0, 1]")
        if self.on_low_agreement not in ("refuse", "warn"):
            raise InvalidArgument(f"Judge(on_low_agreement={self.on_low_agreement!r}); use "
                                  "'refuse' or 'warn'")
        if not isinstance(self.template, str) or "{answer" not in self.template:
            raise InvalidArgument("a judge template must contain {answer} (or {answer_a} and "
                                  "{answer_b})")
        if self.references is not None and not (isinstance(self.references, Mapping)
                                                or callable(self.references)):
            raise InvalidArgument("Judge(references=...) must be a mapping prompt -> reference "
                                  "or a function of the prompt")

    #: the two templates, as ``Judge.TEMPLATE`` and ``Judge.PAIRWISE_TEMPLATE``
    TEMPLATE: ClassVar[str] = DEFAULT_TEMPLATE
    PAIRWISE_TEMPLATE: ClassVar[str] = PAIRWISE_TEMPLATE

    @classmethod
    def pairwise(cls, agent: Any, labels: str | Sequence[str] = ("A", "B", "tie"),
                 **kwargs: Any) -> Judge:
        """A judge comparing two answers (:data:`PAIRWISE_TEMPLATE`; labels ``A,B,tie``)."""
        return cls(agent, labels=parse_labels(labels), template=PAIRWISE_TEMPLATE, **kwargs)

    @property
    def fixed_votes(self) -> int:
        """The judge's calls always made on one answer: no verdict can stop it earlier, so
        they are a fixed-size sample of its noise (``margin``, or ``min_votes`` when the
        margin adapts)."""
        return self.min_votes if self.margin is None else self.margin

    def label_extractor(self) -> VerdictExtractor:
        """How one judge call's answer becomes a label (or a no-decision)."""
        if self.extractor is not None:
            if self.labels is None:
                return self.extractor
            return VerdictExtractor(self.extractor.config_id, self.extractor.fn,
                                    frozenset(self.labels))
        if self.labels is not None:
            return label_extractor(self.labels)
        return DEFAULT_EXTRACTOR

    def reference(self, prompt: str) -> str | None:
        """The reference answer of ``prompt`` (None: none)."""
        refs = self.references
        if refs is None:
            return None
        if not isinstance(refs, Mapping):
            got = refs(prompt)
            return None if got is None else str(got)
        if prompt in refs:
            return str(refs[prompt])
        flat = " ".join(prompt.split()).lower()
        best = None
        for key in refs:
            k = " ".join(str(key).split()).lower()
            if k and k in flat and (best is None or len(k) > len(best[0])):
                best = (k, refs[key])
        return None if best is None else str(best[1])

    def prompt_for(self, prompt: str, answer: str, reference: str | None = None) -> str:
        """The judge's prompt grading ``answer`` to ``prompt``."""
        return compose(self.template, prompt=prompt, answer=answer, reference=reference,
                       labels=self.labels)


def as_judge(judge: Any, labels: str | Sequence[str] | None = None) -> Judge:
    """A :class:`Judge` from a judge or any agent; ``labels`` (when given) replace its own."""
    if isinstance(judge, Judge):
        if labels is None:
            return judge
        from dataclasses import replace
        return replace(judge, labels=parse_labels(labels))
    if judge is None:
        raise InvalidArgument("judge=None: pass an agent (a callable, an adapter) or a Judge")
    return Judge(judge, labels=parse_labels(labels))
