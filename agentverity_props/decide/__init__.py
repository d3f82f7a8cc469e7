"""The statistics of agentverity-props: pure numpy/scipy, no agents, no I/O (the per-input
local test of relations, :class:`LocalTest`, included; the relation procedures that feed these
tests live in :mod:`agentverity_props.relations`).

Each function or rule states its estimand and its error rate.

- Sequential decision rules, fed one outcome at a time (:class:`BernoulliSPRT`,
  :func:`pass_rate_rule`, :class:`PairedSignTest`, :class:`PooledSign`, the relation test
  :class:`CandidateTest`): e-processes, bounded by Ville's inequality, so they stay valid
  under optional stopping (the user may stop or continue at any time, and the run may check
  after every outcome).
- Anytime-valid confidence sequences: :class:`BetaCS` / :func:`beta_cs_interval`, the
  paired :func:`difference_interval`, and the blindness bounds built on them
  (:func:`mixture_share_bounds`, :func:`census_share_bounds`).
- The draw-dependence health check's test martingale (:class:`DependenceTest`): are the
  draws of one input independent, the assumption every other rule rests on?
- The changed-agent check's e-process (:class:`ChangeTest`): did the agent become noisier
  after the meter (early pairs against later draws)?
- Fixed-sample procedures, valid only when the sample size is fixed in advance (or the
  stop cannot change the decision): :func:`wilson`, :func:`clopper_pearson`, and the
  curtailed exact binomial test (:func:`confirmation_plan`), and the curtailed two-sample
  drift test of ``check`` against an input's own recorded rate (:func:`drift_plan`,
  :func:`drift_p_value`, p-values that account for the stopping rule), and a relation's
  pooled effect on a recording, decided once on all its draws (:class:`FixedEffect`).
"""

from ._account import account
from ._alpha import (
    BLINDNESS_BOUND_SHARE,
    CHECK_CHANGE_SHARE,
    COMPARE_METRICS,
    COMPARE_WEIGHTS,
    RELATION_SHARES,
    RUN_SHARES,
    bonferroni,
    candidate_alpha,
    check_alpha_split,
    compare_alpha_split,
    enlarge_alpha_split,
    find_alpha,
    local_family_split,
    relation_alpha_split,
    spending_alpha,
)
from ._binomial import (
    binomial_quantile,
    binomial_tail,
    confirmation_plan,
    confirmation_settled,
)
from ._blindness import (
    ShareCall,
    blindness_call,
    census_share_bounds,
    mixture_share_bounds,
)
from ._candidate import Alternative, CandidateTest, EvidenceLearner, round_bets
from ._clearing import Clearing, against_holding, quiet_clearance
from ._dependence import DependenceTest, block_e_value
from ._drift import curtailed_reject_probability, drift_p_value, drift_plan, fisher_tail
from ._effect import EffectTest, holds_bet, min_scores_to_hold
from ._estimate import (
    UNBIASED,
    Estimates,
    StopRule,
    estimate,
    pass_at_k,
    pass_hat_k,
    stop_distribution,
)
from ._fixed_effect import MIN_DRAWS, FixedEffect, Kernel, u_statistic
from ._fixed_local import exact_split_p, holm
from ._intervals import clopper_pearson, mean_interval, wilson
from ._local import LocalTest
from ._modal import modal
from ._paired import (
    PairedSignTest,
    PooledEquivalence,
    PooledSign,
    difference_interval,
    runs_needed,
    sign_log_e,
    sign_reachable,
)
from ._rules import BernoulliSPRT, BetaCS, beta_cs_interval, pass_rate_rule, sprt_expected_n
from ._stationarity import ChangeTest, early_upper_bound, pair_disagreement
from ._task_rule import EarlyStop, TaskRule, cap_cuts, clean_pass_runs, runs_to_pass

# internal: no public names (docs/api.md); the imports above are this folder's interface
# to the rest of the package, not a promise to users
__all__: list[str] = []
