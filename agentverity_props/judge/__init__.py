"""Judges for free-text agents: a judge as the verdict source, its own noise measured,
calibrated against gold labels and tested like an agent (docs/judges.md).

``run(agent, inputs, config=RunConfig(judge=..., judge_labels="correct,incorrect"))`` grades
every answer with the judge (:class:`JudgedAgent`); :func:`calibrate` checks it against a
gold file; :func:`judge_relations` are the relations a grader must satisfy, run on the judge
with :func:`judge_probes` and :func:`judge_under_test`.
"""

from __future__ import annotations

from ._gold import calibrate
from ._judge import Judge, as_judge, parse_labels
from ._judged import JudgedAgent
from ._noise import judge_calls_per_answer
from ._relations import judge_probes, judge_relations, judge_under_test
from ._report import calibrate_or_refuse, judge_section, prepare_judged

# the public names (docs/api.md); any other name imported here is this folder's interface
# to the rest of the package, not a promise to users
__all__ = [
    "Judge",
    "JudgedAgent",
    "calibrate",
    "judge_probes",
    "judge_relations",
    "judge_under_test",
]
