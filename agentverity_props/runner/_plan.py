"""``plan``: the calls a ``run`` will need, before its first call to the agent.

The figures are not a formula: ``plan`` runs the real ``run`` pipeline (the same code, the
same options: meter, blindness and its top-up, the dependence check, every relation's pooled
effect and localisation) against a *synthetic* offline agent, and counts each phase's calls
in the engine's ledger. The user's agent is never called.

**Noise is the pair disagreement**: the probability that two calls of one input give different
verdicts. ``run`` prints it under its meter over the whole run ("over the whole run: pair
disagreement 0.081 ... the figure to plan with", JSON ``noise``: every source draw of the run,
averaged input by input); a user copies it into ``plan --noise`` or reads it with
``--noise-from`` the run's JSON report. (The meter's own figure rests on a few pairs and
stops early on a run of disagreements: it overstates the noise.) The synthetic agent at pair
disagreement ``d`` flips each call with probability ``p = flip_share(d)``, that is
``(2 - sqrt(4 - 6 d)) / 3`` (the inverse of ``d = 2p - 1.5 p^2``: a call flipped to one of
two other labels at random), so it prints the same pair disagreement as the agent it stands
for. The synthetic agent, at flip share ``p``:

* gives every input a base verdict (a share ``modal_share`` of the inputs get the same
  one, the others a second one) and every follow-up a relation makes the base verdict of its
  source, so **every relation holds** (a run that finds a violation spends more: the
  violating inputs are tested one by one);
* on every call, with probability ``p``, answers one of the two other labels instead (at
  random), independently of every other call, so every input is equally noisy;
* calls one tool named after its answer when ``tool_calls`` is set (tools-layer relations
  are then exercised like verdict ones); otherwise none, and a tools-layer relation is
  costed as not exercised, as a run on an agent without tools reports it.

Each noise level is simulated with several seeds of the synthetic agent: a figure is the
mean over them (the expected calls; its standard error says how well the seeds pin it down),
with the lowest and the highest: single runs spread widely (sequential tests stop at random
times), so a run may well cost twice another. The budget that makes a decision
reachable is the *highest* total of calls made when that decision was taken (every
simulated run reached it within that budget). Wall time is ``calls x latency / workers``:
it assumes every call takes the stated latency and that the ``max_workers`` concurrent
calls are always busy (the phases draw in waves, so a real run is somewhat slower).
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .._internal.inputs import clean_inputs
from .._internal.settings import setting
from ..errors import InvalidArgument
from ..results import PlanDocument
from ._plan_tokens import TokensPerCall, level_tokens

if TYPE_CHECKING:
    from ..relations import Relation
    from ._run import RunConfig, RunResult

PLAN_SCHEMA = PlanDocument.SCHEMA
#: The noise levels (pair disagreements, as ``run`` prints them) every plan shows: a
#: noise-free agent, 0.1 and 0.25 (about 5% and 15% of calls flipped); ``noise=`` adds the
#: user's own.
DEFAULT_NOISES = (0.0, 0.1, 0.25)
#: the largest pair disagreement the synthetic agent can have (every call flipped 2/3)
MAX_PAIR_DISAGREEMENT = 2 / 3
#: Seeds of the synthetic agent per noise level (a mean, its standard error and a range).
DEFAULT_SEEDS = 10
#: Share of the inputs whose base verdict is the most common one (below the blindness
#: threshold of 0.9: a probe set that is not blind).
DEFAULT_MODAL_SHARE = 0.75
LABELS = ("verdict-a", "verdict-b", "verdict-c")
PHASES = ("meter", "blindness", "dependence", "relations", "stationarity")
#: The budget plan names covers this many standard deviations above the mean run (and never
#: less than the largest simulated run): at normal spread, 20 runs all within it with
#: probability about 0.97 ...
BUDGET_SDS = 3.0
#: ... and then this share more: the synthetic agent is not the user's, and plan's mean
#: misses a real agent's by up to about this much (docs/benchmarks.md, "plan against real
#: runs": an agent noisy on a few inputs costs more than an equally noisy uniform one, and a
#: real run's calls spread wider than the simulated ones).
MODEL_MARGIN = 0.25


def pair_disagreement(flip: float) -> float:
    """The pair disagreement of the synthetic agent flipping each call with probability
    ``flip`` to one of the two other labels: ``2 flip - 1.5 flip^2``.

    >>> round(pair_disagreement(0.05), 5)
    0.09625
    """
    return 2 * flip - 1.5 * flip * flip


def flip_share(noise: float) -> float:
    """The per-call flip share of the synthetic agent whose pair disagreement is ``noise``
    (what ``run`` prints), the inverse of :func:`pair_disagreement` on ``[0, 2/3]``.

    >>> round(flip_share(0.09625), 5)
    0.05
    """
    if not 0.0 <= noise <= MAX_PAIR_DISAGREEMENT:
        raise InvalidArgument(f"noise={noise!r} must be a pair disagreement in [0, 2/3)")
    return (2 - math.sqrt(max(0.0, 4 - 6 * noise))) / 3


def synthetic_agent(inputs: Sequence[str], relations: Sequence[Relation], *, noise: float,
                    seed: int | str, modal_share: float = DEFAULT_MODAL_SHARE,
                    tool_calls: bool = False) -> Any:
    """The offline agent ``plan`` simulates: every relation holds, every call is flipped to
    another label with probability ``noise`` (a per-call flip share, not the pair
    disagreement: :func:`flip_share` converts; module docstring). An ``async`` callable
    ``prompt -> Observation``, drawing from its own ``random.Random(seed)``."""
    from ..observation import Observation, ToolCall

    if not 0.0 <= noise < 1.0:
        raise InvalidArgument(f"noise={noise!r} must be in [0, 1)")
    texts = list(inputs)
    n_modal = round(modal_share * len(texts))
    base: dict[str, str] = {}
    for i, t in enumerate(texts):
        base.setdefault(t, LABELS[0] if i < n_modal else LABELS[1])
    for r in relations:
        # every follow-up a run may make of an input: each kind of the relation's family
        for t in texts:
            made = [r.apply(t)] + [e.transform(t) for e in r.edits]
            made += list((r.pairs or {}).get(t, ()))
            for y in made:
                base.setdefault(y, base[t])
    rng = random.Random(seed)

    async def agent(prompt: str) -> Observation:
        v = base.get(prompt, LABELS[0])
        if noise and rng.random() < noise:
            v = rng.choice([x for x in LABELS if x != v])
        tools = (ToolCall(f"tool_{v}"),) if tool_calls else ()
        return Observation(text=f"VERDICT: {v}", verdict=v, tools=tools)

    return agent


@dataclass(frozen=True)
class SimulatedRun:
    """What one simulated run spent: calls per phase, and the total made when each decision
    was taken (``reach``; ``None`` for a decision the run did not take)."""

    phase_calls: dict[str, int]
    total: int
    reach: dict[str, int | None]
    decisions: dict[str, str]


async def simulate_once(inputs: Sequence[str], relations: Sequence[Relation],
                        config: RunConfig, *, noise: float, seed: int | str,
                        modal_share: float = DEFAULT_MODAL_SHARE,
                        tool_calls: bool = False) -> SimulatedRun:
    """One real ``arun`` against :func:`synthetic_agent`, with no budget, no store and no
    retries (the synthetic agent never fails), everything else as ``config`` says."""
    from ..adapters import from_callable
    from ..engine import Engine
    from ..observation import DEFAULT_EXTRACTOR
    from ._run import RunConfig, arun

    agent = from_callable(synthetic_agent(inputs, relations, noise=noise, seed=seed,
                                          modal_share=modal_share, tool_calls=tool_calls),
                          identity="plan:synthetic")
    eng_cfg = replace(config.engine, budget=None, store_path=None, store_mode="off",
                      retries=0, extractor=DEFAULT_EXTRACTOR)
    cfg = RunConfig(engine=eng_cfg, epsilon=config.epsilon, precision=config.precision,
                    alpha=config.alpha, indifference=config.indifference, layer=config.layer,
                    max_meter_calls=config.max_meter_calls,
                    blindness_threshold=config.blindness_threshold,
                    suppress_health_check=config.suppress_health_check,
                    tolerance=config.tolerance, profile=config.profile,
                    edits_per_input=config.edits_per_input)
    async with Engine(agent, eng_cfg, offline=True) as eng:  # no provider's slots
        res = await arun(agent, inputs, relations, config=cfg, engine=eng)
    return _summarise(res)


def _summarise(res: RunResult) -> SimulatedRun:
    pc = {k: int(res.phase_calls.get(k, 0)) for k in PHASES}
    total = int(res.ledger.get("calls", 0))
    reach: dict[str, int | None] = {
        "meter": pc["meter"] if res.meter.call != "undecided" else None,
        "blindness": (pc["meter"] + pc["blindness"]
                      if res.blindness.status not in ("undecided", "suppressed") else None),
    }
    decisions: dict[str, str] = {"meter": str(res.meter.call),
                                 "blindness": str(res.blindness.status)}
    before = pc["meter"] + pc["blindness"] + pc["dependence"]
    for r in res.relations:
        key = f"relation:{r.relation.name}"
        decisions[key] = str(r.status)
        e = r.effect or {}
        flagged = ((e.get("per_input") or {}).get("flagged") or 0) > 0
        if r.status in ("HOLDS", "VIOLATED") and e.get("decided_at_call") is not None:
            # the pooled test decided after the per-input screen; inputs the screen flagged
            # are tested one by one afterwards, so such a relation needs the whole run
            reach[key] = total if flagged else int(e["decided_at_call"])
        elif r.status in ("HOLDS", "VIOLATED"):  # decided with no epoch of its own: at once
            reach[key] = before
        else:
            reach[key] = None
    reach["run"] = total
    decisions["run"] = "complete" if res.complete else "incomplete"
    return SimulatedRun(phase_calls=pc, total=total, reach=reach, decisions=decisions)


def covering(values: Sequence[int], margin: float = MODEL_MARGIN) -> int:
    """A budget that covers the runs to come, not only the ones simulated, on an agent that
    is not the synthetic one: the larger of the largest simulated run and the mean plus
    ``BUDGET_SDS`` standard deviations, plus ``margin`` of it (none at noise 0, where the
    synthetic agent is deterministic and the calls are those of any deterministic agent).

    >>> covering([100, 110, 90]), covering([50]), covering([50], margin=0.0)
    (163, 63, 50)
    """
    top = float(max(values))
    if len(values) >= 2:
        top = max(top, statistics.fmean(values) + BUDGET_SDS * statistics.stdev(values))
    return math.ceil(top * (1.0 + margin) - 1e-9)


def phase_covering(runs: Sequence[SimulatedRun], margin: float = MODEL_MARGIN) -> int:
    """The sum over the phases of each phase's :func:`covering` bound (without its margin),
    plus ``margin``: at least :func:`covering` of the totals' when the phases vary
    independently, and it keeps each phase's own spread where few runs showed it."""
    top = 0.0
    for k in PHASES:
        vals = [r.phase_calls[k] for r in runs]
        top += covering(vals, 0.0)
    return math.ceil(top * (1.0 + margin) - 1e-9)


def _spread(values: Sequence[int]) -> dict[str, float]:
    """The mean (the expected calls), its standard error, the median and the range."""
    n = len(values)
    se = statistics.stdev(values) / math.sqrt(n) if n > 1 else 0.0
    return {"mean": float(statistics.fmean(values)), "se": se,
            "median": float(statistics.median(values)), "low": float(min(values)),
            "high": float(max(values))}


@dataclass(frozen=True)
class PlanResult:
    """The calls ``run`` is expected to need, per noise level (see the module docstring)."""

    inputs: int
    relations: tuple[str, ...]
    exercised: dict[str, int]
    levels: tuple[dict[str, Any], ...]
    floor: int
    config: RunConfig
    seeds: int
    latency_s: float | None
    modal_share: float
    tool_calls: bool
    tokens_per_call: TokensPerCall | None = None
    #: what the user should know before trusting the plan (a noise estimate too thin)
    warnings: tuple[str, ...] = ()
    #: with a judge (``config.judge``): its assumed per-call error rate
    judge_error: float | None = None

    @property
    def price(self) -> Any:
        """The user's :class:`~agentverity_props.engine.Price` (``config``'s), or None."""
        return self.config.engine.price

    def assumptions(self) -> list[str]:
        out = [
            "noise is the pair disagreement `run` prints (the probability that two calls of "
            f"one input disagree; copy the figure a run prints 'over the whole run' into "
            f"{setting('noise', '')})",
            f"simulated: the real run pipeline against an offline agent that flips each call "
            f"to another of {len(LABELS)} labels with probability (2 - sqrt(4 - 6 x noise)) "
            f"/ 3, which gives that pair disagreement, equally on every input; "
            f"{self.seeds} seed(s) per noise level (the mean, and the range low-high of single "
            "runs)",
            "an agent whose noise sits on a few inputs only (the others never flip) costs "
            "less than an equally noisy one at the same overall pair disagreement",
            "every relation holds (a violation adds the calls that localise it)",
            f"{self.modal_share:.0%} of the inputs share one verdict, the rest another "
            f"({setting('modal_share', '')})",
            ("the agent calls one tool per answer (tools-layer relations are exercised)"
             if self.tool_calls else "the agent calls no tool (tools-layer relations cost "
             f"nothing: pass {setting('tool_calls')} if yours calls tools)"),
            "a budget makes a decision reachable when every simulated run took it within "
            f"that many calls and it is at least the mean plus {BUDGET_SDS:g} standard "
            "deviations (so that runs not simulated fit too: 20 runs at normal spread all "
            f"within it with probability about 0.97), plus {MODEL_MARGIN:.0%} at a noise above "
            "zero for an agent unlike the synthetic one (noisy on a few inputs, or spreading "
            "wider); the whole run's budget is also at least the sum of that bound taken "
            "phase by phase (the meter's, each health check's, the relations'), so that a "
            "phase's rare long tail is covered where few simulated runs showed it",
            self.config.profile.guarantee(),
        ]
        t = self.tokens_per_call
        if t is not None:
            out.append(f"tokens = calls x {t.input:.4g} in + {t.output:.4g} out per call ("
                       + (f"the mean over {t.calls} call(s) of {t.source}" if t.calls
                          else "as stated") + "): every call takes the mean")
            if self.price is not None:
                out.append(f"cost = those tokens at {self.price.describe()}")
        if self.latency_s is not None:
            out.append(f"wall time = calls x {self.latency_s:g} s / {self.config.max_workers} "
                       "workers: every call takes that long and every worker is always busy")
        if self.judge_error is not None:
            out.append(f"judge calls = agent calls x the judge's calls per answer at a per-call "
                       f"error rate of {self.judge_error:g} (its consensus rule simulated; "
                       "every answer distinct, as free text usually is; the noise-measuring "
                       "re-judging after the run not counted); the noise levels are the "
                       "agent's own, the judge's left in its verdicts being negligible "
                       "(docs/judges.md)")
        return out

    def to_dict(self) -> dict[str, Any]:
        cfg = self.config
        return {
            "schema": PLAN_SCHEMA,
            "inputs": self.inputs,
            "relations": list(self.relations),
            "exercised": dict(self.exercised),
            "config": {"epsilon": cfg.eps, "alpha": cfg.alpha, "tolerance": cfg.tolerance,
                       "budget": cfg.budget, "max_workers": cfg.max_workers,
                       "layer": cfg.layer, "seed": cfg.seed, "latency_s": self.latency_s,
                       "profile": cfg.profile.name, "budget_margin": MODEL_MARGIN},
            "warnings": list(self.warnings),
            "hold_floor": self.floor,
            "tokens_per_call": (None if self.tokens_per_call is None
                                else self.tokens_per_call.to_dict()),
            "price": None if self.price is None else self.price.to_dict(),
            "levels": [self._with_tokens(level) for level in self.levels],
            "assumptions": self.assumptions(),
        }


    def _with_tokens(self, level: dict[str, Any]) -> dict[str, Any]:
        out = dict(level)
        if self.tokens_per_call is not None:
            out.update(level_tokens(level["calls"]["total"], self.tokens_per_call, self.price))
        return out


def _level(noise: float, runs: Sequence[SimulatedRun], config: RunConfig,
           latency_s: float | None, judge_per_answer: float | None = None) -> dict[str, Any]:
    prof = config.profile  # the screen it prices: the profile's size and beta
    calls = {k: _spread([r.phase_calls[k] for r in runs]) for k in PHASES}
    calls["total"] = _spread([r.total for r in runs])
    reach: dict[str, Any] = {}
    margin = MODEL_MARGIN if noise else 0.0
    for key in runs[0].reach:
        got = [v for r in runs if (v := r.reach.get(key)) is not None]
        budget = covering(got, margin) if got and len(got) == len(runs) else None
        if key == "run" and budget is not None:
            # a phase's rare long tail (the meter's test running long, the dependence
            # check's second round) seldom shows in a few simulated runs: the whole run's
            # budget also covers every phase at its own bound
            budget = max(budget, phase_covering(runs, margin))
        reach[key] = {"budget": budget,
                      "reached": len(got),
                      "decisions": _count(r.decisions.get(key, "") for r in runs)}
    out: dict[str, Any] = {"noise": noise, "flip": flip_share(noise), "seeds": len(runs),
                           "calls": calls, "reach": reach,
                           "screen": screen_price(flip_share(noise), prof.screen_beta,
                                                  prof.screen_size) if prof.screen else None}
    if latency_s is not None:
        w = config.max_workers
        out["wall_s"] = {k: calls["total"][k] * latency_s / w for k in ("mean", "low", "high")}
    if config.budget is not None:
        out["budget_enough"] = all(r.total <= config.budget for r in runs)
    if judge_per_answer is not None:  # the judge's calls: their own row (docs/judges.md)
        out["judge"] = {"per_answer": judge_per_answer,
                        "calls": {k: calls["total"][k] * judge_per_answer
                                  for k in ("mean", "low", "high")}}
    return out


def screen_price(flip: float, beta: float, size: float | None = None) -> dict[str, Any]:
    """What the per-input screen asks of every (input, relation) at this per-draw flip rate:
    the follow-up draws that clear a pair (median and 90th percentile, by simulation of the
    clearing process; a noisy input's pairs also take about as many source draws, shared by
    its relations), the draws the first sweep already gives, and the share of pairs the
    screen's cap leaves not screened."""
    from ..decide import quiet_clearance
    from ..relations import SCREEN_SIZE, clearance_cost

    size = SCREEN_SIZE if size is None else size  # the screen's default size
    c = clearance_cost(flip, beta, size=size)
    first = quiet_clearance(beta, size)
    med = c["median"]
    return {"size": size, "power": 1.0 - beta, "follow_ups": med,
            "follow_ups_p90": c["p90"], "sources": med if flip > 0 else 0,
            "added_follow_ups": None if med is None else max(0, med - first),
            "not_screened_pct": c["not_screened_share_pct"]}


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return dict(sorted(out.items()))


async def aplan(inputs: Sequence[str], relations: Sequence[Relation] | None = None, *,
                config: RunConfig | None = None, noises: Sequence[float] = (),
                seeds: int = DEFAULT_SEEDS, latency_s: float | None = None,
                modal_share: float = DEFAULT_MODAL_SHARE,
                tool_calls: bool = False, default_noises: bool = True,
                tokens_per_call: TokensPerCall | None = None,
                judge_error: float = 0.1) -> PlanResult:
    """Async core of :func:`plan`."""
    from ._run import RunConfig, min_relation_calls, relations_given

    config = config or RunConfig()
    texts = clean_inputs(inputs)
    rels = relations_given(relations)
    if not isinstance(seeds, int) or seeds < 1:
        raise InvalidArgument(f"seeds={seeds!r} must be a positive integer")
    if latency_s is not None and not latency_s > 0:
        raise InvalidArgument(f"latency_s={latency_s!r} must be > 0")
    if tokens_per_call is not None and not isinstance(tokens_per_call, TokensPerCall):
        raise InvalidArgument("tokens_per_call must be a TokensPerCall, e.g. "
                              "TokensPerCall(input=420, output=12)")
    if not 0.5 <= modal_share < 1.0:
        raise InvalidArgument(f"modal_share={modal_share!r} must be in [0.5, 1)")
    levels_in = sorted({*(DEFAULT_NOISES if default_noises else ()),
                        *(float(p) for p in noises)})
    if not levels_in:
        raise InvalidArgument("no noise level to plan for: give noises=... or keep "
                              "default_noises=True")
    for d in levels_in:
        if not 0.0 <= d < MAX_PAIR_DISAGREEMENT:
            raise InvalidArgument(f"noise={d!r} must be a pair disagreement in [0, 2/3) (as "
                                  "run prints it): beyond, the flipped answers outnumber the "
                                  "agent's own")
    if not 0.0 <= judge_error < 0.5:
        raise InvalidArgument(f"judge_error={judge_error!r} must be a per-call error rate in "
                              "[0, 0.5)")
    per_answer = None
    if config.judge is not None:
        from ..judge import judge_calls_per_answer
        per_answer = judge_calls_per_answer(config.judge, judge_error, seed=config.seed)
    levels = []
    for d in levels_in:
        p = flip_share(d)
        runs = [await simulate_once(texts, rels, config, noise=p, seed=f"plan:{d}:{k}",
                                    modal_share=modal_share, tool_calls=tool_calls)
                for k in range(1 if d == 0.0 else seeds)]
        levels.append(_level(d, runs, config, latency_s, per_answer))
    exercised = {r.name: sum(r.apply(t) != t for t in texts) for r in rels}
    live = [r for r in rels if tool_calls or r.layer != "tools"]
    return PlanResult(inputs=len(texts), relations=tuple(r.name for r in rels),
                      exercised=exercised, levels=tuple(levels),
                      floor=min_relation_calls(texts, live, config.tolerance,
                                               sampled=not config.profile.screen),
                      config=config,
                      seeds=seeds, latency_s=latency_s, modal_share=modal_share,
                      tool_calls=tool_calls, tokens_per_call=tokens_per_call,
                      judge_error=None if per_answer is None else judge_error)


def plan(inputs: Sequence[str], relations: Sequence[Relation] | None = None, *,
         config: RunConfig | None = None, noises: Sequence[float] = (),
         seeds: int = DEFAULT_SEEDS, latency_s: float | None = None,
         modal_share: float = DEFAULT_MODAL_SHARE, tool_calls: bool = False,
         default_noises: bool = True,
         tokens_per_call: TokensPerCall | None = None,
         judge_error: float = 0.1) -> PlanResult:
    """The calls ``run`` will need on ``inputs``, at noise 0, 0.1 and 0.25 (and each of
    ``noises``), without calling any agent: the real pipeline is run against a synthetic
    offline agent (module docstring), ``seeds`` times per noise level (once when
    noise-free: the synthetic agent is then deterministic). A noise level is a pair
    disagreement, the figure ``run`` prints over the whole run. ``default_noises=False`` plans for
    ``noises`` only. With a judge (``config.judge``) every level has a ``judge`` row: the
    judge's calls at a per-call error rate ``judge_error``. With ``tokens_per_call`` (a
    :class:`TokensPerCall`: stated, or measured on a store or an earlier report) every level
    is also priced in tokens, and in money at ``config``'s ``price``.

    Example:
        >>> from agentverity_props.runner import plan
        >>> p = plan(["hello there", "plan an attack"], relations=[], seeds=1)
        >>> p.levels[0]["noise"], p.levels[0]["calls"]["meter"]["mean"]
        (0.0, 76.0)
    """
    from ..engine import run_sync
    return run_sync(aplan(inputs, relations, config=config, noises=noises, seeds=seeds,
                          latency_s=latency_s, modal_share=modal_share,
                          tool_calls=tool_calls, default_noises=default_noises,
                          tokens_per_call=tokens_per_call, judge_error=judge_error))
