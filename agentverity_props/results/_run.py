
"""The ``run`` result file format."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ._base import Document, Model
from ._common import CandidateCounts, Stationarity, Tokens
from ._migrations import migrate_run_v1, migrate_run_v2


class HistoryItem(Model):
    draws: Annotated[int, Field(ge=0)]
    ci_low: float
    ci_high: float


class PerInputItem(Model):
    fp: Annotated[str, Field(pattern="^(sha256|hmac-sha256):[0-9a-f]{64}$")]
    draws: Annotated[int, Field(ge=0)]
    pairs: Annotated[int, Field(ge=0)]
    flips: Annotated[int, Field(ge=0)]
    failures: Annotated[int, Field(ge=0)]
    counts: dict[str, Annotated[int, Field(ge=0)]]


class Noise(Model):
    """The agent's pair disagreement over every source draw of the run: the mean, over the
    inputs drawn twice or more, of the share of their pairs of draws that disagree (the figure
    to give ``plan``; the meter's own estimate stops early on a run of disagreements and
    overstates it). The interval is exact (95%, Clopper-Pearson) at the effective number of
    independent pairs of an input-averaged rate (``N^2 / sum 1/n_i``, ``n_i`` disjoint pairs
    within input ``i``); descriptive, outside the run's family-wise alpha."""
    pair_disagreement: Annotated[float, Field(ge=0.0, le=1.0)]
    pairs: Annotated[int, Field(ge=0)]
    inputs: Annotated[int, Field(ge=0)]
    ci_low: Annotated[float, Field(ge=0.0, le=1.0)]
    ci_high: Annotated[float, Field(ge=0.0, le=1.0)]
    source: str


class Meter(Model):
    call: Literal["verdict-deterministic", "verdict-stochastic", "undecided"]
    estimand: str
    guarantee: str
    epsilon: Annotated[float, Field(gt=0.0, lt=0.5)]
    alpha: Annotated[float, Field(gt=0.0, lt=0.5)]
    indifference: Annotated[float, Field(gt=1.0)]
    layer: Literal["verdict", "text", "tools"]
    calls: Annotated[int, Field(ge=0)]
    draws: Annotated[int, Field(ge=0)]
    pairs: Annotated[int, Field(ge=0)]
    disagreements: Annotated[int, Field(ge=0)]
    estimate: float | None
    ci_low: Annotated[float, Field(ge=0.0, le=1.0)]
    ci_high: Annotated[float, Field(ge=0.0, le=1.0)]
    e_value: float | None
    complete: bool
    failures: Annotated[int, Field(ge=0)]
    failure_kinds: dict[str, Annotated[int, Field(ge=0)]]
    advice: str
    stop_reason: str
    history: list[HistoryItem]
    per_input: list[PerInputItem]
    caveat: str | None = None
    """
    '' when every draw gave a verdict; else 'incomplete: N draws without a verdict ...': what the
    call and its error rate rest on.
    """


class Blindness(Model):
    status: Literal["blind", "ok", "undecided", "suppressed"]
    estimand: str
    threshold: float
    alpha: float
    modal_verdict: str | None
    share: float | None
    ci_low: float | None
    ci_high: float | None
    sample: Annotated[int, Field(ge=0)]
    method: Literal["mixture", "census"]
    distribution: dict[str, Annotated[int, Field(ge=0)]]


class Input(Model):
    source: str
    blocks: Annotated[int, Field(ge=0)]
    informative_blocks: Annotated[int, Field(ge=0)]
    switches: Annotated[int, Field(ge=0)]
    expected_switches: float
    e_value: float | None


class Dependence(Model):
    """The dependent-draws health check (docs/statistics.md)."""

    status: Literal["dependent", "not detected", "not run", "suppressed"]
    estimand: str
    guarantee: str
    alpha: float
    e_value: float | None
    blocks: Annotated[int, Field(ge=0)]
    informative_blocks: Annotated[int, Field(ge=0)]
    calls: Annotated[int, Field(ge=0)]
    pattern: Literal["runs", "alternation", "mixed"]
    warning: str
    runs_blocks: Annotated[int | None, Field(ge=0)] = None
    """informative blocks with fewer switches than their mean under independence"""
    alternating_blocks: Annotated[int | None, Field(ge=0)] = None
    """informative blocks with more switches than their mean under independence"""
    inputs: list[Input] | None = None
    """
    what each input's blocks showed, the input that moved the e-value most first (inputs by
    fingerprint)
    """
    verdict: Literal["detected", "not detected", "not ruled out"] | None = None
    """
    whether dependent draws were detected, not detected (a cache living fewer than
    `spacing` calls would have been seen), or could not be ruled out
    """
    stood_in: str | None = None
    """What looked at spaced repeats instead of the check's blocks (the deterministic
    path's audit of a 'deterministic' call), when the check drew no block of its own."""
    spaced_blocks: Annotated[int | None, Field(ge=0)] = None
    """blocks of pairs spaced apart in call order"""
    spacing: Annotated[int | None, Field(ge=0)] = None
    """the fewest calls between two pairs of one input in a spaced block"""
    reach: float | None = None
    """at least the e-value a cache would have given the spaced blocks' answers"""


class Alternative(Model):
    v1: float
    miss: float
    learned_from: Literal["prior", "confirmed"]


class Decision(CandidateCounts):
    """
    A per-input decision: the local test of run (betting e-process on the input's own scores) or the
    two e-processes of the per-candidate test (@agent_property, enlarge); fields of the other kind
    are absent.
    """

    test: str
    call: Literal["pass", "confirmed", "undecided", "incomplete"]
    why: str | None = None
    alpha: Annotated[float, Field(gt=0.0)]
    """false-violation rate of this candidate (the family's share)"""
    beta: Annotated[float | None, Field(gt=0.0)] = None
    """false-pass rate against the alternative"""
    alternative: Alternative | None = None
    e_violation: Annotated[float, Field(ge=0.0)]
    p_value: Annotated[float | None, Field(ge=0.0, le=1.0)] = None
    """anytime-valid p-value min(1, 1/e_violation)"""
    side_means: list[float | None] | None = None
    """The local test's mean score per side (forward, reverse)."""


class Outcome(Model):
    fp: str
    follow_up_fp: str
    edit: str | None = None
    """The kind of edit that made the follow-up (a relation family's kind, or ``pair N`` of
    pairs the user brought); null for a relation of one transform."""
    status: Literal["skipped", "clean", "pass", "confirmed", "undecided", "incomplete", "pending"]
    source_value: str | None
    follow_up_value: str | None
    draws: Annotated[int, Field(ge=0)]
    note: str
    raw: bool
    """
    the screen (first follow-up draw) violated the relation against the source's reference verdict
    """
    decision: Decision | None
    """
    A per-input decision: the local test of run (betting e-process on the input's own scores) or the
    two e-processes of the per-candidate test (@agent_property, enlarge); fields of the other kind
    are absent.
    """
    suspicion: float | None


class PerInputScreen(Model):
    """The per-input screen of a relation (docs/statistics.md, "Every input's own
    evidence"): of its inputs, how many were screened (a violation of ``size`` beyond their
    noise ruled out at error ``screen_beta``: *cleared*; or evidence for one: *flagged* and
    tested on their own), and which were not and why."""

    size: Annotated[float, Field(gt=0.0, le=1.0)]
    power: Annotated[float, Field(ge=0.0, le=1.0)]
    screen_beta: Annotated[float, Field(ge=0.0, le=1.0)]
    inputs: Annotated[int, Field(ge=0)]
    """Distinct inputs with a follow-up."""
    pairs: Annotated[int, Field(ge=0)] | None = None
    """(input, follow-up) pairs; screened, cleared, flagged and not_screened count pairs."""
    screened: Annotated[int, Field(ge=0)]
    cleared: Annotated[int, Field(ge=0)]
    flagged: Annotated[int, Field(ge=0)]
    not_screened: Annotated[int, Field(ge=0)]
    not_screened_reasons: dict[Literal["noise", "budget", "interrupt", "failures"], int]
    not_screened_inputs: list[str]
    path: Literal["deterministic"] | None = None
    """Set when the pairs were screened with one follow-up draw each (the meter certified a
    deterministic verdict; size 1.0 is a deterministic flip)."""
    flip_bound: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    """The meter's bound on a draw's flip rate the deterministic path rests on."""
    audited_pairs: Annotated[int, Field(ge=0)] | None = None
    """Pairs whose source and follow-up were drawn again to audit the certificate."""
    spaced_audit: bool | None = None
    """Whether every audited re-draw came at least the dependence check's spacing of calls
    after its probe's first draw (the audit then stands for that check's look at a
    'deterministic' call)."""


class Prevalence(Model):
    """The share of a relation's inputs that violate it (relations/_pooled.py
    ``prevalence``)."""

    estimand: str
    inputs: Annotated[int, Field(ge=0)]
    confirmed: Annotated[int, Field(ge=0)]
    flagged_untested: Annotated[int, Field(ge=0)]
    cleared: Annotated[int, Field(ge=0)]
    estimate: Annotated[float, Field(ge=0.0, le=1.0)]
    lower: Annotated[float, Field(ge=0.0, le=1.0)]
    upper: Annotated[float, Field(ge=0.0, le=1.0)]
    upper_level: Annotated[float, Field(gt=0.0, lt=1.0)]


class Effect(Model):
    """
    The relation's pooled effect (excess disagreement, mean over the probe set; docs/statistics.md
    §8). null when the relation was not exercised.
    """

    estimand: str
    tolerance: Annotated[float, Field(gt=0.0, lt=1.0)]
    violation: Annotated[float, Field(gt=0.0, lt=1.0)] | None = None
    """The effect a VIOLATED shows exceeded: the tolerance, or a profile's smaller one."""
    alpha: float
    beta: float
    sides: Annotated[int, Field(ge=1, le=2)]
    estimate: float | None
    lower: float
    upper: float
    shown_above_zero: bool
    status: Literal["holds", "violated", "undecided"]
    scores: list[Annotated[int, Field(ge=0)]]
    upper_scores: list[Annotated[int, Field(ge=0)]] | None = None
    """Upper scores per side (the deterministic path's one follow-up draw a pair, read as
    an upper bound on the effect): they feed the HOLDS side of the test only."""
    batches: Annotated[int, Field(ge=0)]
    epochs: Annotated[int, Field(ge=0)]
    note: str
    incomplete: bool
    side_estimates: list[float | None] | None = None
    side_upper: list[float] | None = None
    side_lower: list[float] | None = None
    per_input: PerInputScreen | None = None
    prevalence: Prevalence | None = None
    """How many inputs violate the relation (set when one is confirmed and the inputs were
    screened): confirmed share (lower), not cleared plus possible misses (upper)."""
    decided_at_call: Annotated[int, Field(ge=0)] | None = None
    """The run's draws (live and replayed) when the pooled test decided (``plan`` reads it)."""
    test: str | None = None
    """How it was decided when not by the sequential test: on a recording, a fixed sample of
    every recorded draw."""
    draws: Annotated[int, Field(ge=0)] | None = None
    """The recorded draws the fixed-sample decision read."""
    inputs_left_out: Annotated[int, Field(ge=0)] | None = None
    """Pairs with too few draws for the fixed sample."""
    profile: str | None = None
    """The profile the relation was decided under (quick, standard, thorough or a user's)."""
    deterministic_path: str | None = None
    """``taken`` (each pair screened with one follow-up draw on the meter's certificate of a
    deterministic verdict) or ``refused: why`` (an audit re-draw differed); absent when not
    tried."""


class EditTally(Model):
    pairs: Annotated[int, Field(ge=0)]
    confirmed: Annotated[int, Field(ge=0)]


class Relation(Model):
    name: str
    rtype: Literal["invariant", "monotone", "directional"]
    layer: Literal["verdict", "text", "tools"]
    description: str
    status: Literal["VIOLATED", "HOLDS", "NOT EXERCISED", "NOT TESTED", "INCOMPLETE",
                    "UNDECIDED"]
    exercised: Annotated[int, Field(ge=0)]
    skipped: Annotated[int, Field(ge=0)]
    raw_violations: Annotated[int, Field(ge=0)]
    calibrated_violations: Annotated[int, Field(ge=0)]
    incomplete: Annotated[int, Field(ge=0)]
    draws: Annotated[int, Field(ge=0)]
    outcomes: list[Outcome]
    undecided: Annotated[int, Field(ge=0)]
    effect: Effect | None
    """
    The relation's pooled effect (excess disagreement, mean over the probe set; docs/statistics.md
    §8). null when the relation was not exercised.
    """
    statement: str
    """What the status says, the hypothesis it rejects and its error rate."""
    unexercised: str
    """
    Why a relation whose transform changed inputs is NOT EXERCISED (its layer never varied), else
    empty.
    """
    suspects: list[str]
    """Fingerprints of the inputs whose follow-ups looked most unlike their sources."""
    inputs_exercised: Annotated[int, Field(ge=0)] | None = None
    """Distinct inputs with a follow-up that differs from them (``exercised`` counts
    (input, follow-up) pairs)."""
    edits: dict[str, EditTally] | None = None
    """Per edit kind of the relation's family: the pairs it made and how many were
    confirmed violating; null for a relation of one transform."""
    not_tested: str | None = None
    """
    Why a requested relation is NOT TESTED (no follow-up recorded, no recorded (source, follow-up)
    pair, left out by a stop), else null: incomplete evidence (exit 2), never clean.
    """
    dependent_draws: str | None = None
    """
    Set on a VIOLATED relation of a run whose dependence check fired: the violation rests on
    draws found dependent, so it is not a finding (exit 2); else absent.
    """


class RouteMeter(Model):
    label: str
    inputs: Annotated[int, Field(ge=0)]
    pairs: Annotated[int, Field(ge=0)]
    disagreements: Annotated[int, Field(ge=0)]
    estimate: float | None
    ci_low: float
    ci_high: float


class RouteRelation(Model):
    label: str
    inputs: Annotated[int, Field(ge=0)]
    raw: Annotated[int, Field(ge=0)]
    confirmed: Annotated[int, Field(ge=0)]
    mean_suspicion: float | None


class JudgeNoise(Model):
    """The judge's disagreement on identical answers (docs/judges.md)."""

    answers: Annotated[int, Field(ge=0)]
    """Answers with at least one pair of labels."""
    pairs: Annotated[int, Field(ge=0)]
    disagreement: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """Share of pairs of its calls on one answer that disagree (null: not measured)."""
    interval: list[float]
    error_rate: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """The per-call error rate that disagreement implies."""
    error_interval: list[float]
    consensus_error: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """The chance a verdict (a consensus) is wrong, averaged over the answers."""
    worst_consensus_error: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    margin: Annotated[int, Field(ge=1)]
    labels: Annotated[int, Field(ge=2)]
    alpha: float


class JudgeCalibration(Model):
    """The judge's agreement with gold labels."""

    rows: Annotated[int, Field(ge=1)]
    agreed: Annotated[int, Field(ge=0)]
    agreement: Annotated[float, Field(ge=0.0, le=1.0)]
    interval: list[float]
    alpha: float
    confusion: dict[str, dict[str, Annotated[int, Field(ge=0)]]]
    """expected label -> {judged label or "(no decision)": rows}"""
    min_agreement: Annotated[float, Field(ge=0.0, le=1.0)]
    basis: Literal["point estimate"]
    action: Literal["refuse", "warn"]
    passed: bool
    source: str
    judge_calls: Annotated[int, Field(ge=0)]
    statement: str


class JudgeCalls(Model):
    agent: Annotated[int, Field(ge=0)]
    agent_replayed: Annotated[int, Field(ge=0)]
    judge: Annotated[int, Field(ge=0)]
    judge_replayed: Annotated[int, Field(ge=0)]
    rejudge: Annotated[int, Field(ge=0)]
    """Judge calls made after the run to measure its noise (never the agent)."""


class JudgeTokens(Model):
    input_tokens: Annotated[int, Field(ge=0)] | None
    output_tokens: Annotated[int, Field(ge=0)] | None
    total_tokens: Annotated[int, Field(ge=0)] | None
    cost_usd: Annotated[float, Field(ge=0.0)] | None


class Judge(Model):
    """The judge grading a free-text agent (docs/judges.md)."""

    judge: str
    labels: list[str] | None
    margin: Annotated[int, Field(ge=1)]
    """The lead one verdict needed (at the end of the run when it adapts)."""
    adaptive_margin: bool
    consensus_error_target: float | None
    min_votes: Annotated[int, Field(ge=1)]
    max_calls: Annotated[int, Field(ge=1)]
    answers_judged: Annotated[int, Field(ge=0)]
    noise: JudgeNoise
    agent_noise: Annotated[float, Field(ge=0.0, le=1.0)] | None
    """The meter's pair disagreement on the judged verdicts."""
    dominant: Literal["judge", "agent", "neither"] | None
    statement: str
    calibration: JudgeCalibration | None
    calls: JudgeCalls
    tokens: JudgeTokens


class Routes(Model):
    """
    Per-route breakdown (optional): inputs grouped by the majority verdict of their draws in this
    run; the meter's pairs per route with an exact interval and the relations' raw flips and
    confirmed inputs per route. Descriptive: outside the run's family-wise alpha. `missing` lists
    required verdicts (--require-verdicts) no draw produced: a finding.
    """

    by: str
    layer: str
    interval: str
    confidence: float
    error_rate: str
    meter: list[RouteMeter]
    relations: dict[str, list[RouteRelation]]
    produced: dict[str, Annotated[int, Field(ge=0)]]
    required: list[str]
    missing: list[str]
    unrouted: Annotated[int, Field(ge=0)]
    by_input: dict[str, str]


class RunProfile(Model):
    """A profile: how much per-input evidence relations bought (docs/profiles.md)."""

    name: str
    screen: bool
    screen_size: Annotated[float, Field(gt=0.0, le=1.0)]
    screen_beta: Annotated[float, Field(gt=0.0, lt=0.5)]
    edits_per_input: int | str
    deterministic_path: bool = False
    candidate_beta: float | None = None
    """``@agent_property``'s per-example false-pass rate under this profile."""
    tolerance: Annotated[float, Field(gt=0.0, lt=1.0)] | None = None
    """The pooled tolerance the profile sets when none is given (None: the default)."""
    violation: Annotated[float, Field(gt=0.0, lt=1.0)] | None = None
    """With the profile's tolerance in force, the effect a VIOLATED shows exceeded."""
    guarantee: str


class RunDocument(Document):
    """
    Written by `agentverity-props run --format json` and RunResult.to_dict(). Inputs are identified
    by SHA-256 fingerprints (HMAC-SHA-256 when AGENTVERITY_PROPS_SALT is set); raw prompts only
    under `inputs` with --include-inputs.
    """

    TITLE: ClassVar[str] = "agentverity-props run result"
    MIGRATIONS: ClassVar[Mapping[str, Callable[[dict[str, Any]], dict[str, Any]]]] = \
        {"agentverity_props.run/1": migrate_run_v1, "agentverity_props.run/2": migrate_run_v2}


    schema_: Annotated[Literal["agentverity_props.run/3"], Field(alias="schema")]
    agent: str
    complete: bool
    exit_code: Literal[0, 1, 2]
    stop_reason: str
    findings: list[str]
    guarantee: str | None = None
    """
    The run's overall statement: family-wise alpha over every finding, and the independence
    assumption.
    """
    advice: list[str]
    """what to do next when the evidence is incomplete or undecided"""
    config: dict[str, Any]
    profile: RunProfile | None = None
    """The profile relations were decided under and its per-input guarantee (absent in files
    written before profiles)."""
    meter: Meter
    noise: Noise | None = None
    """The pair disagreement over every source draw of the run, the figure to plan with
    (absent in files written before it)."""
    blindness: Blindness
    dependence: Dependence | None = None
    """The dependent-draws health check (docs/statistics.md)."""
    relations: list[Relation]
    calls: dict[str, Annotated[int, Field(ge=0)]]
    ledger: dict[str, Any]
    tokens: Tokens | None = None
    """Token usage per phase and its cost (absent in files written before it)."""
    privacy: str
    routes: Routes | None = None
    """
    Per-route breakdown (optional): inputs grouped by the majority verdict of their draws in this
    run; the meter's pairs per route with an exact interval and the relations' raw flips and
    confirmed inputs per route. Descriptive: outside the run's family-wise alpha. `missing` lists
    required verdicts (--require-verdicts) no draw produced: a finding.
    """
    follow_ups: dict[str, Any] | None = None
    """
    Optional, only with the inputs (--include-inputs, or a report on the terminal): the follow-up
    text of each confirmed or suspected input, by the follow-up's fingerprint.
    """
    inputs: dict[str, Any] | None
    stationarity: Stationarity | None = None
    """
    The changed-agent health check (docs/statistics.md): the meter's pairs against later draws.
    Absent in files written before it.
    """
    judge: Judge | None = None
    """
    With a judge grading a free-text agent (docs/judges.md): the judge, its labels and
    consensus margin, its disagreement on identical answers beside the agent's (and which
    dominates), its calibration against gold labels, and its calls, tokens and money as their own
    phase. Absent without a judge.
    """
