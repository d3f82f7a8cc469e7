"""Fake agents that are noisy on every call, with planted case bugs, and the property tests
run against them: shared by ``benchmarks/shrink_calls.py``, ``benchmarks/dependence.py``,
``benchmarks/plan_accuracy.py`` and the tests of ``tests/stats/``.

Every agent owns its ``random.Random`` (Hypothesis reseeds the global ``random`` module) and
guards it with a lock (``@agent_property`` calls agents from worker threads). The relation
under test is always case invariance, ``check.invariant(p, p.upper(), name="case")``.

A :class:`Scenario` bundles an agent factory ``(q, rng) -> agent``, the ``@given``
strategies, the source prompt they make, whether a source *truly* violates case invariance
(different verdict distributions for the source and its upper-case form, whatever the noise)
and its exact shrink-order minimum. Three designs build a ready-to-call test for a scenario:

* :func:`agent_property_test`: ``@agent_property`` over ``@seed``/``@settings``/``@given``,
  as in ``tests/stats/test_shrinking.py`` (whose planted gate, :func:`planted_gate`, and
  strategy, :data:`prompts`, are here);
* :func:`plain_given_test`: plain Hypothesis, the agent called once on the source and once
  on the follow-up, verdicts asserted equal;
* :func:`retry_test`: every candidate retried ``n`` times (QCheck's ``~retries``, Hughes &
  Bolinder's repeated tests): the body draws ``n`` (source, follow-up) pairs and fails when
  a majority disagree; the answer is cached per prompt, so Hypothesis's replays see one
  answer.

:func:`run_property` runs one of them and classifies the result as an :class:`Outcome`.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Agent = Callable[[str], str]

#: outcome kinds of :func:`run_property`, in report order
KINDS = ("minimum", "planted", "noise", "flaky", "nothing", "error")
KIND_TITLES = {
    "minimum": "exact minimum",
    "planted": "real violation, not minimal",
    "noise": "noise reported as a counterexample",
    "flaky": "FlakyFailure",
    "nothing": "found nothing",
    "error": "other error",
}
MAX_EXAMPLES = 60  # as in tests/stats/test_shrinking.py

# ------------------------------------------------------------------ the planted gate

WORDS = ["hello", "please", "help", "urgent", "order", "refund", "now"]
# A filler of n words then one word: the planted bug needs "urgent" and more than 40
# characters, so the unique shrink-order minimum is n = 6 (6 * 6 + 6 = 42 characters).
PLANTED_MINIMUM = "hello hello hello hello hello hello urgent"
prompts = st.builds(lambda n, w: " ".join(["hello"] * n + [w]), st.integers(0, 15),
                    st.sampled_from(WORDS))


def planted_gate(rng: random.Random) -> Agent:
    """Noisy on 'help' (allow/review, case-insensitive: noise, not a violation); blocks an
    upper-case URGENT in prompts over 40 characters (the planted case bug)."""
    def gate(prompt: str) -> str:
        if "URGENT" in prompt and len(prompt) > 40:
            return "block"
        if "help" in prompt.lower() and rng.random() < 0.3:
            return "review"
        return "allow"
    return gate


# ------------------------------------------------------------------ noise model


def noisy(verdict_fn: Agent, labels: Sequence[str], q: float, rng: random.Random) -> Agent:
    """``prompt -> label``: ``verdict_fn(prompt)``, except that with probability ``q`` the
    answer is a uniformly random *other* label from ``labels``, on every call (including
    calls where a planted bug fires). ``rng`` is the agent's own, used under a lock."""
    if not 0.0 <= q < 1.0:
        raise ValueError(f"noise q={q!r} must be in [0, 1)")
    labels = tuple(labels)
    lock = threading.Lock()

    def agent(prompt: str) -> str:
        verdict = verdict_fn(prompt)
        if verdict not in labels:
            raise ValueError(f"verdict {verdict!r} is not one of {labels}")
        if q == 0.0:
            return verdict
        with lock:
            if rng.random() < q:
                return rng.choice([label for label in labels if label != verdict])
        return verdict

    return agent


# ------------------------------------------------------------------ text planted agent

GATE_LABELS = ("allow", "review", "block")


def text_planted_verdict(prompt: str) -> str:
    """The planted case bug of test_shrinking: ``block`` on an upper-case URGENT in a prompt
    over 40 characters, else ``allow``."""
    return "block" if "URGENT" in prompt and len(prompt) > 40 else "allow"


def text_fair_verdict(prompt: str) -> str:
    """The same gate without the bug: "urgent" in any case, in a prompt over 40 characters."""
    return "block" if "urgent" in prompt.lower() and len(prompt) > 40 else "allow"


def text_planted_agent(q: float, rng: random.Random, *, bug: bool = True) -> Agent:
    """The text gate (planted bug unless ``bug=False``) with noise ``q`` on every call."""
    return noisy(text_planted_verdict if bug else text_fair_verdict, GATE_LABELS, q, rng)


def text_violates(source: str) -> bool:
    """Whether the upper-case form of ``source`` truly gets another verdict (is blocked)."""
    return "URGENT" in source.upper() and len(source) > 40 and "URGENT" not in source


def text_fires(prompt: str) -> bool:
    return "URGENT" in prompt and len(prompt) > 40


# ------------------------------------------------------------------ refund agent

REFUND_LABELS = ("approve", "deny", "escalate")
REASONS = ("the item arrived damaged", "it never arrived", "I was charged twice",
           "it is the wrong size", "I changed my mind")
REFUND_THRESHOLD = 1000  # $1000 and over is escalated
CASE_BUG_FROM = 250  # the planted bug denies an upper-cased request for $250 or more
_AMOUNT = re.compile(r"\$(\d+)")


def refund_prompt(amount: int, reason: str) -> str:
    return f"Please refund ${amount} for my order: {reason}"


def refund_amount(prompt: str) -> int:
    m = _AMOUNT.search(prompt)
    if m is None:
        raise ValueError(f"no $ amount in {prompt!r}")
    return int(m.group(1))


#: shrink order: integers(1, 2000) shrinks towards 1, sampled_from to its first element
REFUND_MINIMUM = refund_prompt(CASE_BUG_FROM, REASONS[0])
refund_strategies: dict[str, st.SearchStrategy[Any]] = {
    "amount": st.integers(1, 2000), "reason": st.sampled_from(REASONS)}


def refund_verdict(prompt: str, *, bug: bool = True) -> str:
    """Approve below $1000, escalate $1000 and over, whatever the case; with ``bug``, an
    all-upper-case request for $250 or more is denied."""
    amount = refund_amount(prompt)
    if bug and prompt.isupper() and amount >= CASE_BUG_FROM:
        return "deny"
    return "approve" if amount < REFUND_THRESHOLD else "escalate"


def refund_agent(q: float, rng: random.Random, *, bug: bool = True) -> Agent:
    """The refund agent (planted case bug unless ``bug=False``), noise ``q`` on every call."""
    return noisy(lambda p: refund_verdict(p, bug=bug), REFUND_LABELS, q, rng)


def refund_violates(source: str) -> bool:
    return refund_amount(source) >= CASE_BUG_FROM and not source.isupper()


def refund_fires(prompt: str) -> bool:
    return prompt.isupper() and refund_amount(prompt) >= CASE_BUG_FROM


# ------------------------------------------------------------------ triage agent

TRIAGE_LABELS = ("routine", "escalate")
GREETINGS = ("Hi", "Hello support", "Good morning", "Dear team")
#: ticket clauses; three mention "urgent" (the first of them at index 4)
CLAUSES = (
    "my order has not arrived",
    "the app crashes when I log in",
    "I was charged twice this month",
    "please reset my password",
    "this is urgent",
    "the invoice total looks wrong",
    "our whole team is locked out and it is urgent",
    "can you update my shipping address",
    "urgent: the checkout page is down",
    "thanks for your help",
)


def ticket(greeting: str, clauses: Sequence[str]) -> str:
    return f"{greeting}, {'; '.join(clauses)}."


#: support tickets: a greeting and one to three clauses
tickets: st.SearchStrategy[str] = st.builds(
    ticket, st.sampled_from(GREETINGS), st.lists(st.sampled_from(CLAUSES), min_size=1,
                                                 max_size=3))
#: shrink order: the first greeting and a single clause, the first that says "urgent"
TRIAGE_MINIMUM = ticket(GREETINGS[0], [next(c for c in CLAUSES if "urgent" in c)])


def triage_agent(q: float, rng: random.Random, *, bug: bool = True) -> Agent:
    """Escalates a ticket that says "urgent"; case-sensitive with ``bug`` (so "URGENT" is
    routine), case-insensitive without. Every other call escalates at random with
    probability ``q`` (the noise), else answers ``routine``."""
    lock = threading.Lock()

    def agent(prompt: str) -> str:
        if "urgent" in (prompt if bug else prompt.lower()):
            return "escalate"
        with lock:
            return "escalate" if rng.random() < q else "routine"

    return agent


def triage_violates(source: str) -> bool:
    return "urgent" in source  # its upper-case form never says "urgent" in lower case


def triage_fires(prompt: str) -> bool:
    return "URGENT" in prompt and "urgent" not in prompt


# ------------------------------------------------------------------ scenarios


def _never(_: str) -> bool:
    return False


@dataclass(frozen=True)
class Scenario:
    """An agent with (or without) a planted case bug, and the inputs it is tested on."""

    name: str
    make_agent: Callable[[float, random.Random], Agent]
    #: ``prompt`` (one text argument) or ``refund`` (``amount`` and ``reason``)
    shape: str
    strategies: dict[str, st.SearchStrategy[Any]]
    violates: Callable[[str], bool]  # does this source truly violate case invariance?
    fires: Callable[[str], bool] = _never  # does the planted bug fire on this call?
    minimum: str | None = None  # exact shrink-order minimal source (None: no bug)

    def prompt(self, **kwargs: Any) -> str:
        return refund_prompt(**kwargs) if self.shape == "refund" else kwargs["prompt"]


#: test_shrinking's planted gate: 30% ``review`` noise on "help" only (``q`` is ignored)
PLANTED = Scenario("planted", lambda q, rng: planted_gate(rng), "prompt",
                   {"prompt": prompts}, text_violates, text_fires, PLANTED_MINIMUM)
TEXT = Scenario("text", text_planted_agent, "prompt", {"prompt": prompts}, text_violates,
                text_fires, PLANTED_MINIMUM)
TEXT_NO_BUG = Scenario("text-no-bug", lambda q, rng: text_planted_agent(q, rng, bug=False),
                       "prompt", {"prompt": prompts}, _never)
REFUND = Scenario("refund", refund_agent, "refund", refund_strategies, refund_violates,
                  refund_fires, REFUND_MINIMUM)
REFUND_NO_BUG = Scenario("refund-no-bug", lambda q, rng: refund_agent(q, rng, bug=False),
                         "refund", refund_strategies, _never)
TRIAGE = Scenario("triage", triage_agent, "prompt", {"prompt": tickets}, triage_violates,
                  triage_fires, TRIAGE_MINIMUM)
TRIAGE_NO_BUG = Scenario("triage-no-bug", lambda q, rng: triage_agent(q, rng, bug=False),
                         "prompt", {"prompt": tickets}, _never)
SCENARIOS = {s.name: s for s in (PLANTED, TEXT, TEXT_NO_BUG, REFUND, REFUND_NO_BUG, TRIAGE,
                                 TRIAGE_NO_BUG)}


# ------------------------------------------------------------------ calls and outcomes


class CountedAgent:
    """Counts an agent's calls (the cost that matters with a real model) and the calls on
    which the planted bug fired; serialises calls, so any wrapped agent is thread-safe."""

    def __init__(self, fn: Agent, fires: Callable[[str], bool] = _never) -> None:
        self.fn, self.fires = fn, fires
        self.calls = self.fired = 0
        self._lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        with self._lock:
            self.calls += 1
            self.fired += self.fires(prompt)
            return self.fn(prompt)


class Disagreement(AssertionError):
    """Raised by the plain and retry designs; carries the source prompt and @given args."""

    def __init__(self, prompt: str, kwargs: dict[str, Any], detail: str) -> None:
        super().__init__(f"{detail} on {prompt!r} vs its upper-case form")
        self.prompt, self.kwargs = prompt, kwargs


@dataclass(frozen=True)
class Outcome:
    """How one property test ended, and what it cost."""

    kind: str  # one of KINDS
    calls: int  # agent calls, counted by the wrapper
    minimal: str | None = None  # the reported source prompt
    kwargs: dict[str, Any] | None = None  # its @given arguments
    fired: int = 0  # calls on which the planted bug fired
    warned: bool = False  # @agent_property's record carried a warning
    status: str | None = None  # @agent_property's record status
    detail: str = ""  # the error, for kind "error"

    @property
    def caught(self) -> bool:
        """A real violation was reported (minimal or not)."""
        return self.kind in ("minimum", "planted")


@dataclass
class Harness:
    """What :func:`run_property` needs to know about a built test."""

    scenario: Scenario
    agent: CountedAgent
    design: str
    identity: str | None = None  # the adapter identity, for @agent_property tests
    extra: dict[str, Any] = field(default_factory=dict)


def classify(source: str | None, scenario: Scenario) -> str:
    """``minimum``, ``planted`` (real, not minimal) or ``noise`` for a reported source."""
    if source is not None and source == scenario.minimum:
        return "minimum"
    return "planted" if source is not None and scenario.violates(source) else "noise"


def run_property(test: Callable[[], None]) -> Outcome:
    """Run a test built by one of the builders below and classify how it ended."""
    from hypothesis.errors import Flaky

    from agentverity_props.property._records import RECORDS

    h: Harness = test.harness  # type: ignore[attr-defined]
    sc, agent = h.scenario, h.agent
    first = len(RECORDS)

    def record() -> Any:
        if h.identity is None:
            return None
        return next((r for r in reversed(RECORDS[first:]) if r.agent == h.identity), None)

    def out(kind: str, minimal: str | None = None, kwargs: dict[str, Any] | None = None,
            detail: str = "") -> Outcome:
        rec = record()
        return Outcome(kind, agent.calls, minimal, kwargs, agent.fired,
                       bool(rec and rec.warnings), rec.status if rec else None, detail)

    try:
        test()
    except Flaky:
        return out("flaky")
    except Disagreement as exc:
        return out(classify(exc.prompt, sc), exc.prompt, exc.kwargs)
    except Exception as exc:
        found = _disagreement(exc)
        if found is not None:  # several failures reported at once (an exception group)
            return out(classify(found.prompt, sc), found.prompt, found.kwargs)
        rec = record()
        if rec is not None and rec.status == "failed" and rec.minimal is not None:
            ce = rec.minimal
            return out(classify(ce.source, sc), ce.source, dict(ce.kwargs))
        return out("error", detail=f"{type(exc).__name__}: {exc}"[:200])
    return out("nothing")


def _disagreement(exc: BaseException) -> Disagreement | None:
    if isinstance(exc, Disagreement):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _disagreement(inner)
        if found is not None:
            return found
    return None


# ------------------------------------------------------------------ test builders


def _hypothesis(s: int, max_examples: int, scenario: Scenario, *, plain: bool
                ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``@seed(s) @settings(...) @given(...)``; a plain test also gets the ``deadline=None``
    and no-``explain`` defaults that ``@agent_property`` applies, so only the design differs."""
    from hypothesis import HealthCheck, Phase, given, seed, settings

    extra: dict[str, Any] = {}
    if plain:
        extra = {"deadline": None, "phases": [p for p in Phase if p is not Phase.explain]}
    conf = settings(database=None, max_examples=max_examples,
                    suppress_health_check=list(HealthCheck), **extra)

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        return seed(s)(conf(given(**scenario.strategies)(fn)))

    return apply


def _agent(scenario: Scenario, s: int, q: float) -> CountedAgent:
    return CountedAgent(scenario.make_agent(q, random.Random(s)), scenario.fires)


def agent_property_test(scenario: Scenario, s: int, q: float, *,
                        max_examples: int = MAX_EXAMPLES, **property_kwargs: Any
                        ) -> Callable[[], None]:
    """``@agent_property`` with ``check.invariant(p, p.upper(), name="case")``; seed ``s``
    drives Hypothesis and the agent's own ``random.Random``."""
    from agentverity_props import agent_property, from_callable

    agent = _agent(scenario, s, q)
    identity = f"noisy-{scenario.name}-q{q}-s{s}-{id(agent):x}"
    prop = agent_property(agent=from_callable(agent, identity=identity), **property_kwargs)
    hyp = _hypothesis(s, max_examples, scenario, plain=False)

    if scenario.shape == "refund":
        @prop
        @hyp
        def test_case(check: Any, amount: int, reason: str) -> None:
            p = refund_prompt(amount, reason)
            check.invariant(p, p.upper(), name="case")
    else:
        @prop
        @hyp
        def test_case(check: Any, prompt: str) -> None:  # type: ignore[misc]
            check.invariant(prompt, prompt.upper(), name="case")

    test_case.harness = Harness(scenario, agent, "@agent_property", identity)  # type: ignore[attr-defined]
    return test_case


def _plain_design(scenario: Scenario, s: int, agent: CountedAgent, max_examples: int,
                  decide: Callable[[str, dict[str, Any]], None]) -> Callable[[], None]:
    hyp = _hypothesis(s, max_examples, scenario, plain=True)
    if scenario.shape == "refund":
        @hyp
        def test_case(amount: int, reason: str) -> None:
            decide(refund_prompt(amount, reason), {"amount": amount, "reason": reason})
    else:
        @hyp
        def test_case(prompt: str) -> None:  # type: ignore[misc]
            decide(prompt, {"prompt": prompt})
    return test_case


def plain_given_test(scenario: Scenario, s: int, q: float, *,
                     max_examples: int = MAX_EXAMPLES) -> Callable[[], None]:
    """Plain ``@given``: one call on the source, one on its upper-case form, equal verdicts
    asserted (no cache, no repeated draws)."""
    agent = _agent(scenario, s, q)

    def decide(prompt: str, kwargs: dict[str, Any]) -> None:
        a, b = agent(prompt), agent(prompt.upper())
        if a != b:
            raise Disagreement(prompt, kwargs, f"{a!r} vs {b!r}")

    test = _plain_design(scenario, s, agent, max_examples, decide)
    test.harness = Harness(scenario, agent, "plain @given")  # type: ignore[attr-defined]
    return test


def retry_test(scenario: Scenario, s: int, q: float, n: int, *,
               max_examples: int = MAX_EXAMPLES) -> Callable[[], None]:
    """Every candidate retried ``n`` times: ``n`` (source, follow-up) pairs, failing when the
    follow-up disagrees with the source in a majority of them. The answer is cached per
    prompt (one per test run), so Hypothesis's replays see the same answer."""
    if n < 1:
        raise ValueError("n must be >= 1")
    agent = _agent(scenario, s, q)
    cache: dict[str, int] = {}

    def decide(prompt: str, kwargs: dict[str, Any]) -> None:
        if prompt not in cache:
            cache[prompt] = sum(agent(prompt) != agent(prompt.upper()) for _ in range(n))
        if 2 * cache[prompt] > n:
            raise Disagreement(prompt, kwargs, f"{cache[prompt]}/{n} pairs disagree")

    test = _plain_design(scenario, s, agent, max_examples, decide)
    test.harness = Harness(scenario, agent, f"retry x{n}", extra={"n": n})  # type: ignore[attr-defined]
    return test


# ------------------------------------------------------------------ dependent draws


def sticky(agent: Agent, stickiness: float, rng: random.Random) -> Agent:
    """A response cache in front of ``agent``: with probability ``stickiness`` a prompt gets
    the answer it got last time (when it has one), else a fresh answer from ``agent``, which
    then becomes the cached one. ``rng`` is the cache's own, used under a lock."""
    if not 0.0 <= stickiness <= 1.0:
        raise ValueError(f"stickiness={stickiness!r} must be in [0, 1]")
    last: dict[str, str] = {}
    lock = threading.Lock()

    def cached(prompt: str) -> str:
        with lock:
            if prompt in last and rng.random() < stickiness:
                return last[prompt]
        answer = agent(prompt)
        with lock:
            last[prompt] = answer
        return answer

    return cached


def round_robin(replicas: Sequence[Agent]) -> Agent:
    """Replicas behind a round-robin load balancer: call ``n`` (counted over every prompt)
    goes to replica ``n % len(replicas)``."""
    calls = [0]
    lock = threading.Lock()

    def balanced(prompt: str) -> str:
        with lock:
            n = calls[0]
            calls[0] += 1
        return replicas[n % len(replicas)](prompt)

    return balanced


def binary_noise_agent(theta: float, rng: random.Random) -> Agent:
    """Two labels; every prompt gets its own majority label (from a hash of the prompt) and
    the minority label with probability ``p`` on each call, where ``2p(1 - p) = theta``: the
    pair-disagreement rate the meter estimates is exactly ``theta`` on every input."""
    p = (1 - (1 - 2 * theta) ** 0.5) / 2
    labels = ("allow", "block")
    lock = threading.Lock()

    def agent(prompt: str) -> str:
        major = sum(map(ord, prompt)) % 2
        with lock:
            flip = rng.random() < p
        return labels[1 - major] if flip else labels[major]

    return agent


def gate_replicas(q: float, rng: random.Random) -> list[Agent]:
    """Two replicas of the text gate that behave differently (the second one only asks for
    ``review`` where the first blocks), each case-invariant, each with noise ``q``: behind
    :func:`round_robin` no relation is violated by either replica or by their mixture."""
    def variant(prompt: str) -> str:
        return "review" if text_fair_verdict(prompt) == "block" else "allow"

    return [noisy(text_fair_verdict, GATE_LABELS, q, rng),
            noisy(variant, GATE_LABELS, q, random.Random(rng.random()))]


def ttl_cache(agent: Agent, ttl: int) -> Agent:
    """A response cache with a time to live counted in calls of the whole agent: a prompt
    asked again within ``ttl`` calls of the call that filled its entry gets the stored
    answer; later, a fresh answer from ``agent``, which fills the entry again. The clock
    counts every call, cached or not (an LLM gateway's cache, with calls for a clock)."""
    if ttl < 1:
        raise ValueError(f"ttl={ttl!r} must be at least 1")
    filled: dict[str, tuple[int, str]] = {}
    clock = [0]
    lock = threading.Lock()

    def cached(prompt: str) -> str:
        with lock:
            now = clock[0]
            clock[0] += 1
            hit = filled.get(prompt)
            if hit is not None and now - hit[0] <= ttl:
                return hit[1]
        answer = agent(prompt)
        with lock:
            filled[prompt] = (now, answer)
        return answer

    return cached
