"""Confidence intervals for the mean of a few runs (Student t), without SciPy.

Sweeps repeat each point with a handful of seeds, so the interval must use the t
distribution with n − 1 degrees of freedom; with n = 3 the normal 1.96 would be 2.2× too
narrow. The t quantile is found by bisection on the exact closed-form distribution for an
integer number of degrees of freedom (Abramowitz and Stegun 26.7.3–26.7.4).

Why not `scipy.stats.t.ppf`: it is the one function buflab would take from SciPy, a
dependency of tens of megabytes whose `stats` module costs sweep workers and `buflab sweep`
a noticeable import on start; the closed form is exact for the integer degrees of freedom a
sweep has (runs − 1), and `tests/test_stats.py` checks it against the printed t table.

Plain arithmetic: it must not know buflab's runs or results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def t_two_sided_probability(t: float, dof: int) -> float:
    """P(|T| <= t) for Student's T with `dof` degrees of freedom (A&S 26.7.3/26.7.4)."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be at least 1, got {dof}")
    theta = math.atan(abs(t) / math.sqrt(dof))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if dof % 2 == 0:
        # sinθ · (1 + 1/2 cos²θ + 1·3/(2·4) cos⁴θ + … up to cos^(ν−2)θ)
        total, term = 0.0, 1.0
        for k in range(dof // 2):
            total += term
            term *= (2 * k + 1) / (2 * k + 2) * cos2
        return sin * total
    # (2/π) · (θ + sinθ · (cosθ + 2/3 cos³θ + 2·4/(3·5) cos⁵θ + … up to cos^(ν−2)θ))
    total, term = 0.0, math.cos(theta)
    for k in range((dof - 1) // 2):
        total += term
        term *= (2 * k + 2) / (2 * k + 3) * cos2
    return 2 / math.pi * (theta + sin * total)


def t_quantile_two_sided(confidence: float, dof: int) -> float:
    """The t with P(|T| <= t) = confidence, e.g. 12.706 for 95 % and 1 degree of freedom."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    low, high = 0.0, 1.0
    while t_two_sided_probability(high, dof) < confidence:
        high *= 2
    for _ in range(200):  # the interval halves each time; 200 steps reach float precision
        middle = (low + high) / 2
        if t_two_sided_probability(middle, dof) < confidence:
            low = middle
        else:
            high = middle
        if high - low <= 1e-12 * high:
            break
    return (low + high) / 2


def mean_ci(values: Sequence[float], confidence: float = 0.95) -> tuple[float, float]:
    """Mean and the half-width of its confidence interval; the half-width is nan for n < 2."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan
    mean = math.fsum(values) / n
    if n < 2:
        return mean, math.nan
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, t_quantile_two_sided(confidence, n - 1) * math.sqrt(variance / n)
