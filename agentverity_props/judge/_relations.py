"""The judge tested like an agent: relations every grader must satisfy.

The judge's inputs are its own prompts (:func:`judge_probes`: the template filled with a
question and one answer, or two for a pairwise judge); the relations edit only the tagged
answers (``<answer>``, ``<answer_a>``, ``<answer_b>``) and say how the label must move:

* ``judge-order`` (pairwise): swapping the two answers swaps the label (``A`` <-> ``B``,
  anything else such as ``tie`` stays) — a judge that prefers the first answer breaks it;
* ``judge-padding``: a neutral padding sentence added to the answer (answer B of a pair)
  leaves the label as it is (verbosity bias breaks it);
* ``judge-case``: the answer upper- or lower-cased leaves the label as it is;
* ``judge-whitespace``: extra spaces, line breaks or indentation in the answer leave it.

Run them with the same machinery as any agent:
``run(judge_under_test(judge), judge_probes(judge, items), judge_relations())``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from ..adapters import as_adapter
from ..errors import InvalidArgument
from ..observation import Observation
from ..relations import Edit, Relation
from ._judge import Judge, as_judge, compose

__all__ = ["JUDGE_RELATION_NAMES", "judge_probes", "judge_relations", "judge_under_test"]

JUDGE_RELATION_NAMES = ("judge-order", "judge-padding", "judge-case", "judge-whitespace")
PADDING = ("To restate the question in my own words before I conclude: the answer above is "
           "my complete and final answer to it.")
_SWAP = {"A": "B", "B": "A", "a": "b", "b": "a"}


def _section(text: str, tag: str) -> re.Match[str] | None:
    return re.search(rf"(<{tag}>\n?)(.*?)(\n?</{tag}>)", text, re.S)


def _edit_answers(text: str, fn: Callable[[str], str], *, pairwise_tag: str = "answer_b"
                  ) -> str:
    """``text`` with ``fn`` applied to its ``<answer>`` (or ``<answer_b>``) section."""
    for tag in ("answer", pairwise_tag):
        m = _section(text, tag)
        if m is not None:
            return text[:m.start(2)] + fn(m.group(2)) + text[m.end(2):]
    return text


def swap_answers(text: str) -> str:
    """The pairwise prompt with its two answers swapped (unchanged without both tags)."""
    a, b = _section(text, "answer_a"), _section(text, "answer_b")
    if a is None or b is None or a.start() > b.start():
        return text
    return (text[:a.start(2)] + b.group(2) + text[a.end(2):b.start(2)] + a.group(2)
            + text[b.end(2):])


def _swap_label(label: str) -> str:
    return _SWAP.get(label, label)


def _pad(answer: str) -> str:
    return f"{answer.rstrip()} {PADDING}"


def _spaced(answer: str) -> str:
    return re.sub(r" ", "  ", answer)


def _broken(answer: str) -> str:
    return re.sub(r"([.!?]) ", r"\1\n", answer) + "\n"


def _indented(answer: str) -> str:
    return "\n".join("    " + line for line in answer.splitlines()) if answer else answer


def judge_relations(*names: str) -> list[Relation]:
    """The grader relations (fresh objects), all four or the ones named
    (:data:`JUDGE_RELATION_NAMES`).

    >>> [r.name for r in judge_relations()]
    ['judge-order', 'judge-padding', 'judge-case', 'judge-whitespace']
    """
    def on_answer(fn: Callable[[str], str]) -> Callable[[str], str]:
        return lambda text: _edit_answers(text, fn)

    upper, lower = on_answer(str.upper), on_answer(str.lower)
    spaced, broken, indented = on_answer(_spaced), on_answer(_broken), on_answer(_indented)
    every = {
        "judge-order": Relation(
            "judge-order", "directional", swap_answers, expected=_swap_label,
            description="swapping the two answers of a pairwise judge swaps its label"),
        "judge-padding": Relation(
            "judge-padding", "invariant", on_answer(_pad),
            description="a neutral padding sentence added to the answer leaves the label"),
        "judge-case": Relation(
            "judge-case", "invariant", upper,
            edits=(Edit("upper", upper), Edit("lower", lower)),
            description="the answer's letter case leaves the label"),
        "judge-whitespace": Relation(
            "judge-whitespace", "invariant", spaced,
            edits=(Edit("doubled spaces", spaced), Edit("line breaks", broken),
                   Edit("indented", indented)),
            description="the answer's spacing leaves the label"),
    }
    wanted = names or JUDGE_RELATION_NAMES
    unknown = [n for n in wanted if n not in every]
    if unknown:
        raise InvalidArgument(f"unknown judge relation(s) {', '.join(unknown)}; choose from "
                              + ", ".join(JUDGE_RELATION_NAMES))
    return [every[n] for n in wanted]


def judge_probes(judge: Any, items: Sequence[Sequence[str]]) -> list[str]:
    """The judge's prompts for ``items``: ``(prompt, answer[, reference])`` each, or
    ``(prompt, answer_a, answer_b[, reference])`` for a pairwise template
    (``PAIRWISE_TEMPLATE``). Distinct prompts, in order."""
    j = as_judge(judge)
    pairwise = "{answer_a}" in j.template
    out: list[str] = []
    for n, item in enumerate(items, 1):
        if isinstance(item, str) or not isinstance(item, Sequence):
            raise InvalidArgument(f"judge_probes item {n} must be a tuple (prompt, answer"
                                  f"{', answer_b' if pairwise else ''}[, reference])")
        parts = [str(x) for x in item]
        need = 3 if pairwise else 2
        if not (need <= len(parts) <= need + 1):
            raise InvalidArgument(f"judge_probes item {n} has {len(parts)} fields; a "
                                  f"{'pairwise' if pairwise else 'single-answer'} judge takes "
                                  f"{need} or {need + 1}")
        ref = parts[need] if len(parts) > need else j.reference(parts[0])
        if pairwise:
            text = compose(j.template, prompt=parts[0], answer_a=parts[1], answer_b=parts[2],
                           reference=ref, labels=j.labels)
        else:
            text = compose(j.template, prompt=parts[0], answer=parts[1], reference=ref,
                           labels=j.labels)
        if text not in out:
            out.append(text)
    return out


class _JudgeUnderTest:
    """The judge as the agent under test: one call per draw, its label as the verdict (a
    label outside ``labels`` is a no-decision)."""

    def __init__(self, judge: Judge) -> None:
        self._inner = as_adapter(judge.agent)
        self._extract = judge.label_extractor().apply
        self.identity = "judge:" + self._inner.identity
        self.is_async = bool(self._inner.is_async)

    def _label(self, obs: Any) -> Observation:
        from ..observation import coerce_output
        obs = obs if isinstance(obs, Observation) else coerce_output(obs)
        got = self._extract(obs)
        if got.decided:
            return Observation(text=obs.text, verdict=got.verdict, tools=obs.tools,
                               latency_s=obs.latency_s, usage=obs.usage)
        # no verdict to extract: the run's default extractor says "no verdict found"
        return Observation(text="", raw={"judge_text": obs.text[:200]},
                           latency_s=obs.latency_s, usage=obs.usage)

    def invoke(self, prompt: str) -> Observation:
        return self._label(self._inner.invoke(prompt))

    async def ainvoke(self, prompt: str) -> Observation:
        return self._label(await self._inner.ainvoke(prompt))


def judge_under_test(judge: Any, labels: str | Sequence[str] | None = None) -> Any:
    """An adapter calling the judge once per draw, its label the verdict: pass it to ``run``
    (or ``measure``) with :func:`judge_probes` and :func:`judge_relations`."""
    return _JudgeUnderTest(as_judge(judge, labels))
