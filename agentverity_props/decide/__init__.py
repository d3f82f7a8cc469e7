"""Sequential decision rules: pure numpy/scipy, no agents, no I/O.

Every yes/no/undecided in agentverity-props is one of these rules fed one outcome at a time.
Each rule states its estimand and its error rate, and stays valid under optional stopping
(the user may stop or continue at any time, and the run may check after every outcome):
all of them are e-processes, bounded by Ville's inequality.
"""

from ._relation_test import (
    MAX_DRAWS,
    MISS_FLOOR,
    Alternative,
    CandidateTest,
    EvidenceLearner,
    round_bets,
)
from ._rules import (
    BernoulliSPRT,
    BetaCS,
    Decision,
    PairedSignTest,
    SequentialRule,
    beta_cs_interval,
    pass_rate_rule,
    sprt_expected_n,
)

__all__ = [
    "MAX_DRAWS",
    "MISS_FLOOR",
    "Alternative",
    "BernoulliSPRT",
    "BetaCS",
    "CandidateTest",
    "Decision",
    "EvidenceLearner",
    "PairedSignTest",
    "SequentialRule",
    "beta_cs_interval",
    "pass_rate_rule",
    "round_bets",
    "sprt_expected_n",
]
