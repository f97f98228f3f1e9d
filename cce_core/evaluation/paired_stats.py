"""A paired t-test over per-query score deltas, with no statistics library.

``cce relevance --compare`` says how much evidence a mean delta between two
rankings carries: the t statistic, its two-sided p-value and a 95% confidence
interval. scipy would be a heavy dependency for three numbers, so the Student
t distribution is computed here from the regularized incomplete beta function
(Lanczos log-gamma, the continued fraction evaluated with the modified Lentz
method) and the critical value by bisection. These are the textbook methods the
family's other engines use, so the six-decimal figures come out the same.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

from cce_core.foundation.textrules import plain_sum

# Lanczos series for ln Γ(x), x > 0 (the classic six-term form, accurate to ~2e-10).
_LANCZOS = (
    76.18009172947146,
    -86.50532032941677,
    24.01409824083091,
    -1.231739572450155,
    0.1208650973866179e-2,
    -0.5395239384953e-5,
)
_LANCZOS_BASE = 1.000000000190015
_SQRT_TWO_PI = 2.5066282746310005

_CF_MAX_TERMS = 300
_CF_EPSILON = 3e-14
_TINY = 1e-300
_BISECTIONS = 200
# Deltas whose spread is within this many ULPs of their magnitude count as constant.
_CONSTANT_ULPS = 16.0


def ln_gamma(x: float) -> float:
    """ln Γ(x) for x > 0."""
    series = _LANCZOS_BASE
    for j, coefficient in enumerate(_LANCZOS):
        series += coefficient / (x + 1.0 + j)
    shifted = x + 5.5
    shifted -= (x + 0.5) * math.log(shifted)
    return -shifted + math.log(_SQRT_TWO_PI * series / x)


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""

    def guard(v: float) -> float:
        return _TINY if abs(v) < _TINY else v

    c = 1.0
    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, _CF_MAX_TERMS + 1):
        two_m = 2.0 * m
        even = m * (b - m) * x / ((a - 1.0 + two_m) * (a + two_m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + two_m) * (a + 1.0 + two_m))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < _CF_EPSILON:
            break
    return h


def regularized_incomplete_beta(a: float, b: float, x: float) -> float:
    """I_x(a, b) for a, b > 0 and x in [0, 1]."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * math.log(x) + b * math.log(1.0 - x)
    front = math.exp(log_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    return regularized_incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_critical(alpha: float, df: float) -> float:
    """The t with two-sided p equal to ``alpha`` (e.g. 2.570582 for 0.05 at df 5), by bisection."""
    lo, hi = 0.0, 1.0
    while t_two_sided_p(hi, df) > alpha and hi < 1e300:
        hi *= 2.0
    for _ in range(_BISECTIONS):
        mid = 0.5 * (lo + hi)
        if t_two_sided_p(mid, df) > alpha:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


@dataclass(frozen=True, slots=True)
class PairedStats:
    """The test over one metric's deltas; ``None`` where a figure is undefined for the input."""

    n: int
    mean_delta: float
    t: float | None
    p: float | None
    ci95: tuple[float, float] | None


def paired_t(deltas: list[float]) -> PairedStats:
    """The paired t-test of ``deltas`` (b - a per query) against a zero mean.

    Fewer than two deltas: only ``n`` and the mean. Deltas that are all the
    same value (allowing for rounding residue, e.g. 0.6 - 0.4 against 0.2):
    no ``t``, ``p`` 1 when that value is zero and 0 otherwise, and the
    interval collapses onto the value.
    """
    n = len(deltas)
    mean = plain_sum(deltas) / n if n else 0.0
    if n < 2:
        return PairedStats(n, mean, None, None, None)
    first = deltas[0]
    lo, hi = min(deltas), max(deltas)
    if hi - lo <= _CONSTANT_ULPS * sys.float_info.epsilon * max(abs(lo), abs(hi)):
        return PairedStats(n, first, None, 1.0 if mean == 0.0 else 0.0, (first, first))
    variance = plain_sum((d - mean) * (d - mean) for d in deltas) / (n - 1)
    se = math.sqrt(variance) / math.sqrt(n)
    df = float(n - 1)
    t = mean / se
    half = t_critical(0.05, df) * se
    return PairedStats(n, mean, t, t_two_sided_p(t, df), (mean - half, mean + half))
