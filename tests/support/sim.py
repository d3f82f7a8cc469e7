"""Simulation helpers: the tolerance of a simulated error rate, and a vectorised simulation of
the meter's design driving the real rule's parameters."""

from __future__ import annotations

import math

import numpy as np

from agentverity_props.decide import BernoulliSPRT


def simulation_se(rate: float, reps: int) -> float:
    """The standard error of a share of ``reps`` independent repetitions at a true ``rate``."""
    return math.sqrt(rate * (1 - rate) / reps)


def sim_tolerance(rate: float, reps: int) -> float:
    """The largest share of ``reps`` repetitions a test accepts for an error rate nominally at
    most ``rate``: the rate plus three simulation standard errors (a true rate of exactly
    ``rate`` exceeds it in about 0.1% of runs, by the normal approximation).

    >>> round(sim_tolerance(0.05, 400), 4)
    0.0827
    """
    return rate + 3 * simulation_se(rate, reps)


def detects_double(rate: float, reps: int) -> bool:
    """Whether ``reps`` repetitions would catch a true rate of twice ``rate``: the tolerance
    lies at least three standard errors (at ``2 * rate``) below it."""
    return 2 * rate - sim_tolerance(rate, reps) >= 3 * simulation_se(2 * rate, reps)


def probe_set_binary(theta: float, icc: float, n_inputs: int = 20) -> np.ndarray:
    """Per-input P(verdict = 'b') for a binary agent with mean pair disagreement ~theta.

    Per-input rates follow Beta quantiles with intraclass correlation ``icc`` (0 = the same
    rate for every input). Returns the rates; the exact theta is ``mean(2 p (1 - p))``.
    """
    if theta == 0:
        return np.zeros(n_inputs)
    if icc == 0:
        mu = (1 - np.sqrt(1 - 2 * theta)) / 2
        return np.full(n_inputs, mu)
    from scipy import optimize, stats
    s = 1 / icc - 1
    q = (np.arange(n_inputs) + 0.5) / n_inputs

    def rates(mu: float) -> np.ndarray:
        return stats.beta.ppf(q, mu * s, (1 - mu) * s)

    # solve for the mean rate whose finite probe set has exactly this theta
    mu = optimize.brentq(lambda m: exact_theta(rates(m)) - theta, 1e-9, 0.5)
    return rates(mu)


def exact_theta(rates: np.ndarray) -> float:
    return float(np.mean(2 * rates * (1 - rates)))


def simulate_meter(rates: np.ndarray, *, epsilon: float = 0.05, alpha: float = 0.05,
                   indifference: float = 2.0, reps: int = 2000, max_pairs: int = 2000,
                   seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Run the meter's design ``reps`` times: random input per trial, a pair of draws, the
    real SPRT's log-likelihood increments and thresholds. Returns (calls, call) where call is
    +1 stochastic, -1 deterministic, 0 undecided."""
    rule = BernoulliSPRT(epsilon / indifference, min(1.0, epsilon * indifference), alpha=alpha)
    rng = np.random.default_rng(seed)
    llr = np.zeros(reps)
    decided = np.zeros(reps, dtype=int)
    n_at = np.full(reps, max_pairs)
    for t in range(max_pairs):
        live = decided == 0
        if not live.any():
            break
        idx = rng.integers(len(rates), size=reps)
        p = rates[idx]
        a = rng.random(reps) < p
        b = rng.random(reps) < p
        dis = a != b
        step = np.where(dis, rule._llr1, rule._llr0)
        llr = np.where(live, llr + step, llr)
        hi = live & (llr >= rule._upper)
        lo = live & (llr <= rule._lower)
        decided[hi] = 1
        decided[lo] = -1
        n_at[hi | lo] = t + 1
    return 2 * n_at, decided
