"""A relation's pooled effect from a fixed sample: every recorded draw, one decision.

On a recording (``assess`` of a file) the draws are already made and free, so the
sequential test of :mod:`._effect` (which must pay for every draw it waits for, and whose
bets are capped so that at least ``log(1/beta) / log(1/(1 - tolerance))`` scores are needed)
leaves most of the evidence unread or undecided. This test reads all of it at once.

**Estimand** (the same as the sequential test's, docs/statistics.md §3): per input ``x`` with
``n`` source draws ``s_a`` and ``m`` follow-up draws ``f_b``, the full two-sample
U-statistic

  ``U(x) = mean_ab V(s_a, f_b) - mean_{a != a'} V0(s_a, s_a')``

(forward; reverse: ``mean_ab [s_a != f_b] - mean_{b != b'} [f_b != f_b']``) is unbiased for the
input's effect, and ``D = mean_x U(x)`` for the relation's. Inputs are independent given the
inputs, so ``Var(D) = sum_x Var(U(x)) / N^2``; each ``Var(U(x))`` is estimated by the
two-sample jackknife (delete one source draw, delete one follow-up draw), which is biased
*upwards* for U-statistics (Efron-Stein), so the estimate errs on the safe side.

**Bounds.** A score-type normal bound: under the hypothesis ``effect = m`` the variance is at
least the observed one plus what an effect ``|m - D|`` spread over the draws adds (at most
``|m - D| * k`` with ``k = max_x (1 / draws of the side carrying it) / N``: a share of
violating draws is a binomial share), so ``m`` is rejected when ``|m - D| > z
sqrt(V + |m - D| k)``; solved for ``m`` this gives the printed bounds (Wilson-like, never
narrower than the plug-in normal bound). ``upper`` is at level ``1 - beta``, ``lower`` at
``1 - alpha_side``.

**Decisions** (as the sequential test's): *holds* when every side's upper bound is below the
tolerance; *violated* when some side's lower bound is above it; *shown* when some side's
lower bound is above zero.

**Error rates.** The bounds rest on the normal approximation of a sum over every recorded draw
(hundreds, over the inputs), not on an inequality: the rates are approximate. They are
checked by simulation at the boundary (effect exactly at the tolerance, on noisy inputs, at
``N = 5, 10, 30`` inputs and 6-24 draws a side, rare-violation and one-input cases included):
``tests/stats/test_fixed_effect.py`` fails when the HOLDS or VIOLATED rate exceeds its stated
rate beyond sampling error. An input with fewer than ``MIN_DRAWS`` draws on either side is
left out of the sample (said in the note).

>>> t = FixedEffect(tolerance=0.1, alpha=0.01, beta=0.05, sides=1)
>>> t.add([["allow", "block"] * 12], [["allow", "block"] * 12])
>>> t.decide([lambda a, b: a != b], [lambda a, b: a != b])
'holds'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal

from ..errors import InvalidArgument

if TYPE_CHECKING:
    import numpy as np

#: Fewest draws of an input on each side for it to enter the sample (the jackknife of the
#: source re-draw term deletes one of at least three).
MIN_DRAWS = 3

FixedStatus = Literal["holds", "violated", "undecided"]
Kernel = Callable[[Any, Any], bool]


def _matrix(a: Sequence[Hashable], b: Sequence[Hashable], kernel: Kernel) -> np.ndarray:
    """``kernel(a_i, b_j)`` as a 0/1 matrix, the kernel called once per distinct pair."""
    import numpy as np
    ua, ia = np.unique(np.asarray([str(x) for x in a]), return_inverse=True)
    ub, ib = np.unique(np.asarray([str(x) for x in b]), return_inverse=True)
    first_a = {str(x): x for x in a}
    first_b = {str(x): x for x in b}
    table = np.array([[bool(kernel(first_a[x], first_b[y])) for y in ub] for x in ua], float)
    return table[np.ix_(ia.ravel(), ib.ravel())]


def u_statistic(sources: Sequence[Hashable], follow_ups: Sequence[Hashable], cross: Kernel,
                base: Kernel, *, base_on: Literal["sources", "follow_ups"] = "sources"
                ) -> tuple[float, float]:
    """One input's U-statistic ``mean_ab cross(s_a, f_b) - mean_{i != i'} base(y_i, y_i')``
    (``y`` the sources, or the follow-ups for the reverse side) and its two-sample jackknife
    variance.

    >>> u, v = u_statistic(["a"] * 4, ["a", "a", "b", "b"], lambda s, f: s != f,
    ...                    lambda s, t: s != t)
    >>> u, round(v, 4)
    (0.5, 0.0833)
    """
    import numpy as np
    n, m = len(sources), len(follow_ups)
    c = _matrix(sources, follow_ups, cross)
    ys = sources if base_on == "sources" else follow_ups
    k = len(ys)
    b = _matrix(ys, ys, base)
    np.fill_diagonal(b, 0.0)
    cs, bs = c.sum(), b.sum()
    u = cs / (n * m) - bs / (k * (k - 1))
    # delete one source draw / one follow-up draw
    row_c, col_c = c.sum(axis=1), c.sum(axis=0)
    b_out = b.sum(axis=1) + b.sum(axis=0)  # pairs lost with each base draw
    base_rest = (bs - b_out) / ((k - 1) * (k - 2))
    if base_on == "sources":
        u_s = (cs - row_c) / ((n - 1) * m) - base_rest
        u_f = (cs - col_c) / (n * (m - 1)) - bs / (k * (k - 1))
    else:
        u_s = (cs - row_c) / ((n - 1) * m) - bs / (k * (k - 1))
        u_f = (cs - col_c) / (n * (m - 1)) - base_rest
    var = ((n - 1) / n * float(((u_s - u_s.mean()) ** 2).sum())
           + (m - 1) / m * float(((u_f - u_f.mean()) ** 2).sum()))
    return float(u), var


class FixedEffect:
    """The pooled effect of one relation from a fixed sample (module docstring).

    Add each input's draws with :meth:`add`, then :meth:`decide` once. Reads like
    :class:`~agentverity_props.decide.EffectTest` (``status``, ``upper``, ``lower``,
    ``estimate``, ``state``)."""

    def __init__(self, *, tolerance: float, alpha: float, beta: float, sides: int = 1,
                 violation: float | None = None) -> None:
        if not (0.0 < tolerance < 1.0):
            raise InvalidArgument(f"tolerance={tolerance!r} must be in (0, 1)")
        #: the effect a VIOLATED shows exceeded (at most the tolerance; EffectTest's)
        self.violation = tolerance if violation is None else violation
        if not (0.0 < self.violation <= tolerance):
            raise InvalidArgument(f"violation={violation!r} must be in (0, tolerance]")
        for name, val in (("alpha", alpha), ("beta", beta)):
            if not (0.0 < val < 1.0):
                raise InvalidArgument(f"FixedEffect: {name}={val!r} must be in (0, 1)")
        if sides not in (1, 2):
            raise InvalidArgument("FixedEffect: sides must be 1 or 2")
        self.tolerance, self.alpha, self.beta, self.sides = tolerance, alpha, beta, sides
        self.alpha_side = alpha / sides
        self._inputs: list[tuple[list[Hashable], list[Hashable]]] = []
        self.left_out = 0
        self.draws = 0
        self._est: list[float | None] = [None] * sides
        self._up: list[float] = [1.0] * sides
        self._lo: list[float] = [-1.0] * sides
        self._n = 0
        self.status: FixedStatus = "undecided"
        #: the sequential test's interface: a fixed sample is one batch
        self.batches = 0

    def add(self, sources: Sequence[Sequence[Hashable]],
            follow_ups: Sequence[Sequence[Hashable]]) -> None:
        """Inputs' draws: ``sources[i]`` and ``follow_ups[i]`` are input i's keys."""
        for s, f in zip(sources, follow_ups, strict=True):
            if len(s) < MIN_DRAWS or len(f) < MIN_DRAWS:
                self.left_out += 1
                continue
            self._inputs.append((list(s), list(f)))
            self.draws += len(s) + len(f)

    def decide(self, cross: Sequence[Kernel], base: Sequence[Kernel]) -> FixedStatus:
        """The decision over every input added: ``cross[side]`` and ``base[side]`` are the
        side's kernels (the reverse side's base is taken over the follow-ups)."""
        import numpy as np
        self.batches = 1
        self._n = len(self._inputs)
        if not self._inputs:
            return self.status
        z_up = NormalDist().inv_cdf(1.0 - self.beta)
        z_lo = NormalDist().inv_cdf(1.0 - self.alpha_side)
        n_in = len(self._inputs)
        for side in range(self.sides):
            us, vs, inv = [], [], []
            for s, f in self._inputs:
                u, v = u_statistic(s, f, cross[side], base[side],
                                   base_on="sources" if side == 0 else "follow_ups")
                us.append(u)
                vs.append(v)
                inv.append(1.0 / (len(f) if side == 0 else len(s)))
            d = float(np.mean(us))
            var = float(np.sum(vs)) / n_in ** 2
            k = max(inv) / n_in
            self._est[side] = d
            self._up[side] = min(1.0, d + _half_width(z_up, var, k))
            self._lo[side] = max(-1.0, d - _half_width(z_lo, var, k))
        if any(lo > self.violation for lo in self._lo):
            self.status = "violated"
        elif all(up < self.tolerance for up in self._up):
            self.status = "holds"
        return self.status

    # -- reading (EffectTest's interface) ----------------------------------------------------

    @property
    def holds(self) -> bool:
        return self.status == "holds"

    @property
    def violated(self) -> bool:
        return self.status == "violated"

    @property
    def shown(self) -> bool:
        return self.batches > 0 and any(lo > 0.0 for lo in self._lo[:self.sides]) and bool(
            self._n)

    def estimate(self, side: int | None = None) -> float | None:
        if side is not None:
            return self._est[side]
        ests = [e for e in self._est if e is not None]
        return max(ests) if ests else None

    def upper(self, side: int | None = None) -> float:
        return self._up[side] if side is not None else max(self._up)

    def lower(self, side: int | None = None) -> float:
        return self._lo[side] if side is not None else max(self._lo)

    def scores(self) -> int:
        return self._n

    def state(self) -> dict[str, Any]:
        return {"estimand": "largest side effect (mean over the probe set)",
                "test": "fixed sample: every recorded draw (normal bound on the mean of the "
                        "inputs' U-statistics, jackknife variance)",
                "tolerance": self.tolerance, "violation": self.violation,
                "alpha": self.alpha, "beta": self.beta,
                "sides": self.sides, "estimate": self.estimate(), "lower": self.lower(),
                "upper": self.upper(), "shown_above_zero": self.shown,
                "status": self.status, "scores": [self._n] * self.sides,
                "batches": self.batches, "draws": self.draws, "inputs_left_out": self.left_out,
                "side_estimates": list(self._est),
                "side_upper": list(self._up), "side_lower": list(self._lo)}


def _half_width(z: float, var: float, k: float) -> float:
    """The largest ``t`` with ``t <= z sqrt(var + t k)``: the score-type half-width."""
    a = z * z * k
    return (a + math.sqrt(a * a + 4.0 * z * z * var)) / 2.0
