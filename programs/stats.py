"""Numbers you can defend: item-level bootstrap intervals, paired tests and rank stability.

Everything here is seeded and vectorised with numpy. A *cell* is a matrix with
one row per item and one column per metric; NaN marks an item a metric does not
count (an unscored item in a mean over scored items). Resampling draws items
(rows) with replacement, so every metric of a cell is resampled together and a
mean over scored items is the ratio ``sum(values) / count`` of the drawn rows.

When a cell has few distinct rows (scores are usually 0/1 or a few partial
marks), resampling n rows is drawn as multinomial counts over the distinct
rows, which has exactly the same distribution and costs ``resamples x distinct``
instead of ``resamples x n``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special, stats

DEFAULT_RESAMPLES = 2000
"""Bootstrap resamples per interval unless ``--ci-resamples`` says otherwise."""
DEFAULT_SEED = 0
LEVEL = 0.95
PERMUTATIONS = 10_000
"""Sign flips of the paired permutation test (p-value resolution 1 / 10,001)."""
EXACT_MCNEMAR_BELOW = 25
"""Discordant pairs under which McNemar's test is the exact binomial test."""
_BLOCK = 4_000_000
"""Gathered values per block when rows are resampled one by one."""

Float = NDArray[np.float64]
Interval = list[float] | None
"""``[low, high]`` rounded to 4 decimals, or None where the metric is undefined."""


class StatsInputError(ValueError):
    """Data a statistic cannot be computed from (names what is missing)."""


def cell_seed(seed: int, *path: object) -> np.random.Generator:
    """A generator for one cell: the run's seed and the cell's name, so cells are independent.

    Adding or removing a cell never changes another cell's interval.
    """
    key = zlib.crc32("\x1f".join(str(p) for p in path).encode("utf-8"))
    return np.random.default_rng([int(seed), key])


def replicates(matrix: ArrayLike, resamples: int, rng: np.random.Generator) -> Float:
    """Bootstrap replicates of each column's NaN-ignoring mean: shape (resamples, columns).

    A replicate is NaN when the drawn rows hold no value for that column.
    """
    data = _as_matrix(matrix)
    n, m = data.shape
    if resamples < 1:
        raise StatsInputError(f"resamples must be at least 1, got {resamples}")
    if n == 0:
        return np.full((resamples, m), np.nan)
    mask = ~np.isnan(data)
    values = np.where(mask, data, 0.0)
    joint = np.concatenate([values, mask.astype(np.float64)], axis=1)
    distinct, counts = np.unique(joint, axis=0, return_counts=True)
    if distinct.shape[0] * 10 <= n:
        draws = rng.multinomial(n, counts / n, size=resamples).astype(np.float64)
        sums = draws @ distinct
    else:
        sums = _gather_sums(joint, resamples, rng)
    total, count = sums[:, :m], sums[:, m:]
    with np.errstate(invalid="ignore", divide="ignore"):
        out: Float = np.where(count > 0, total / np.where(count > 0, count, 1.0), np.nan)
    return out


def _gather_sums(joint: Float, resamples: int, rng: np.random.Generator) -> Float:
    """Column sums of resampled rows: draw counts per row, then one matrix product per block."""
    n = joint.shape[0]
    block = max(1, _BLOCK // n)
    sums = np.empty((resamples, joint.shape[1]))
    weights = np.empty((block, n))
    for start in range(0, resamples, block):
        stop = min(resamples, start + block)
        index = rng.integers(0, n, size=(stop - start, n))
        for r in range(stop - start):
            weights[r] = np.bincount(index[r], minlength=n)
        sums[start:stop] = weights[: stop - start] @ joint
    return sums


def _as_matrix(matrix: ArrayLike) -> Float:
    data = np.asarray(matrix, dtype=np.float64)
    if data.ndim == 1:
        data = data[:, None]
    if data.ndim != 2:
        raise StatsInputError(f"expected one row per item, got an array of shape {data.shape}")
    if np.isinf(data).any():
        raise StatsInputError("values must be finite (NaN marks an item a metric leaves out)")
    return data


def bca_intervals(
    matrix: ArrayLike,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
    level: float = LEVEL,
) -> list[Interval]:
    """BCa bootstrap interval of each column's mean over the items it counts.

    None for a column with fewer than 2 counted items; ``[v, v]`` when every
    counted value is ``v`` (nothing to resample). Bias correction from the
    replicates (ties count half), acceleration from the jackknife, as in
    ``scipy.stats.bootstrap(method="BCa")``.
    """
    data = _as_matrix(matrix)
    reps = replicates(data, resamples, rng or np.random.default_rng(DEFAULT_SEED))
    return [_bca(data[:, j], reps[:, j], level) for j in range(data.shape[1])]


def _bca(column: Float, reps: Float, level: float) -> Interval:
    kept = column[~np.isnan(column)]
    if kept.size < 2:
        return None
    theta = float(kept.mean())
    if np.ptp(kept) == 0.0:
        return [round(theta, 4), round(theta, 4)]
    reps = reps[~np.isnan(reps)]
    if reps.size == 0:
        return None
    share = (np.count_nonzero(reps < theta) + 0.5 * np.count_nonzero(reps == theta)) / reps.size
    z0 = float(special.ndtri(min(max(float(share), 0.5 / reps.size), 1.0 - 0.5 / reps.size)))
    # jackknife of a mean: leave-one-out means move by (x_i - mean) / (n - 1)
    d = kept - theta
    spread = float(np.sum(d**2))
    accel = float(np.sum(d**3)) / (6.0 * spread**1.5) if spread > 0 else 0.0
    z = special.ndtri([(1.0 - level) / 2.0, (1.0 + level) / 2.0])
    shifted = z0 + (z0 + z) / (1.0 - accel * (z0 + z))
    lo_q, hi_q = special.ndtr(shifted)
    low, high = np.percentile(reps, [100.0 * lo_q, 100.0 * hi_q])
    return [round(float(low), 4), round(float(high), 4)]


def percentile_interval(reps: ArrayLike, level: float = LEVEL) -> Interval:
    """Percentile interval of replicates (NaN replicates left out); None when none is left."""
    kept = np.asarray(reps, dtype=np.float64)
    kept = kept[~np.isnan(kept)]
    if kept.size == 0:
        return None
    low, high = np.percentile(kept, [50.0 * (1.0 - level), 50.0 * (1.0 + level)])
    return [round(float(low), 4), round(float(high), 4)]


def mean_interval(
    values: ArrayLike,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
    level: float = LEVEL,
) -> Interval:
    """BCa interval of the mean of ``values`` (NaN left out)."""
    return bca_intervals(values, resamples=resamples, rng=rng, level=level)[0]


def mean_of_means_interval(
    strata: Sequence[ArrayLike],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
    level: float = LEVEL,
) -> Interval:
    """Percentile interval of an unweighted mean of group means, items resampled within groups.

    Groups without values are left out, as the means themselves leave them out.
    """
    gen = rng or np.random.default_rng(DEFAULT_SEED)
    columns = [c for c in (_as_matrix(s)[:, 0] for s in strata) if np.any(~np.isnan(c))]
    if not columns or sum(int(np.count_nonzero(~np.isnan(c))) for c in columns) < 2:
        return None
    reps = np.stack([replicates(c, resamples, gen)[:, 0] for c in columns], axis=1)
    return percentile_interval(reps.mean(axis=1), level)


def rate_upper_bound(events: int, trials: int, level: float = LEVEL) -> float | None:
    """One-sided exact (Clopper-Pearson) upper bound of a rate seen ``events`` times in ``trials``.

    What a wrong share can honestly claim: 0 wrong of 200 decided is "under 1.5 % at 95 %",
    not "0 %". None when nothing was tried.

    >>> round(rate_upper_bound(0, 200), 4)
    0.0149
    >>> rate_upper_bound(3, 3)
    1.0
    """
    if events < 0 or trials < 0 or events > trials:
        raise StatsInputError(f"need 0 <= events <= trials, got {events} of {trials}")
    if not 0 < level < 1:
        raise StatsInputError(f"level must lie between 0 and 1, got {level}")
    if trials == 0:
        return None
    if events == trials:
        return 1.0
    return float(stats.beta.ppf(level, events + 1, trials - events))


# ---------------------------------------------------------------------------- paired tests


@dataclass(frozen=True)
class PairedResult:
    """A paired comparison of two graders or models on the same items."""

    n_paired: int
    a: float | None
    b: float | None
    diff: float | None
    diff_ci95: Interval
    p_value: float | None
    test: str
    detail: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape ``groundeval compare`` prints."""
        return {
            "n_paired": self.n_paired,
            "a": self.a,
            "b": self.b,
            "diff": self.diff,
            "diff_ci95": self.diff_ci95,
            "p_value": self.p_value,
            "test": self.test,
            **self.detail,
        }


def mcnemar(b: int, c: int) -> tuple[float, str]:
    """Two-sided McNemar p-value from the discordant counts.

    ``b`` pairs pass in A and fail in B, ``c`` the reverse. Exact binomial test
    below 25 discordant pairs, else the chi-square statistic (b - c)^2 / (b + c).

    >>> mcnemar(6, 1)[0]
    0.125
    >>> mcnemar(0, 0)
    (1.0, 'mcnemar-exact')
    """
    if b < 0 or c < 0:
        raise StatsInputError(f"discordant counts must be non-negative, got {b} and {c}")
    if b + c < EXACT_MCNEMAR_BELOW:
        if b + c == 0:
            return 1.0, "mcnemar-exact"
        return float(stats.binomtest(b, b + c, 0.5).pvalue), "mcnemar-exact"
    statistic = (b - c) ** 2 / (b + c)
    return float(stats.chi2.sf(statistic, 1)), "mcnemar-chi2"


def sign_flip_p(
    diffs: ArrayLike, *, permutations: int = PERMUTATIONS, rng: np.random.Generator | None = None
) -> float:
    """Two-sided paired permutation test of mean difference 0 (signs flipped at random).

    p = (1 + flips at least as extreme) / (1 + flips); identical runs give p = 1.
    """
    d = np.asarray(diffs, dtype=np.float64)
    if d.size == 0:
        raise StatsInputError("no paired differences to test")
    gen = rng or np.random.default_rng(DEFAULT_SEED)
    observed = abs(float(d.sum()))
    levels, counts = np.unique(d, return_counts=True)
    # the sum of flipped signs over c equal values is v * (2 * Binomial(c, 1/2) - c)
    positive = gen.binomial(counts, 0.5, size=(permutations, levels.size))
    sums = (2.0 * positive - counts) @ levels
    extreme = int(np.count_nonzero(np.abs(sums) >= observed - 1e-9 * max(1.0, observed)))
    return (1 + extreme) / (1 + permutations)


def paired_scores(
    a: ArrayLike,
    b: ArrayLike,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    rng: np.random.Generator | None = None,
) -> PairedResult:
    """Paired comparison of item scores: diff = mean(a) - mean(b), BCa interval, test.

    Scores that are all 0/1 on both sides are yes/no outcomes: McNemar's test.
    Otherwise a sign-flip permutation test of the per-item differences.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise StatsInputError(f"need two equal-length score lists, got {x.shape} and {y.shape}")
    if x.size == 0:
        raise StatsInputError("no item is scored in both runs")
    if np.isnan(x).any() or np.isnan(y).any():
        raise StatsInputError("paired scores must not hold NaN (leave unscored items out)")
    gen = rng or np.random.default_rng(DEFAULT_SEED)
    d = x - y
    interval = mean_interval(d, resamples=resamples, rng=gen) if d.size >= 2 else None
    binary = bool(np.isin(x, (0.0, 1.0)).all() and np.isin(y, (0.0, 1.0)).all())
    detail: dict[str, Any] = {}
    if binary:
        only_a = int(np.count_nonzero((x == 1.0) & (y == 0.0)))
        only_b = int(np.count_nonzero((x == 0.0) & (y == 1.0)))
        p, test = mcnemar(only_a, only_b)
        detail = {"pass_only_in_a": only_a, "pass_only_in_b": only_b}
    else:
        p, test = sign_flip_p(d, rng=gen), "paired-permutation"
    return PairedResult(
        n_paired=int(x.size),
        a=round(float(x.mean()), 4),
        b=round(float(y.mean()), 4),
        diff=round(float(d.mean()), 4),
        diff_ci95=interval,
        p_value=round(p, 6),
        test=test,
        detail=detail,
    )


# ---------------------------------------------------------------------------- ranks


def rank_stability(
    columns: Sequence[ArrayLike],
    *,
    paired: bool,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    level: float = LEVEL,
) -> list[dict[str, Any]]:
    """Per model: observed rank (1 = highest mean), share of resamples keeping it, rank interval.

    ``paired`` resamples the same items for every model (their columns are rows
    of one table); otherwise each model's items are resampled on their own.
    A model whose resample holds no scored item ranks last in that resample.
    """
    cols = [np.asarray(c, dtype=np.float64) for c in columns]
    if not cols:
        raise StatsInputError("no model to rank")
    observed = np.array([np.nanmean(c) if np.any(~np.isnan(c)) else np.nan for c in cols])
    if paired:
        if len({c.size for c in cols}) != 1:
            raise StatsInputError("paired ranks need the same items in every run")
        reps = replicates(np.stack(cols, axis=1), resamples, np.random.default_rng(seed))
    else:
        reps = np.stack(
            [
                replicates(c, resamples, cell_seed(seed, "rank", i))[:, 0]
                for i, c in enumerate(cols)
            ],
            axis=1,
        )
    rank_obs = stats.rankdata(-np.nan_to_num(observed, nan=-np.inf), method="min")
    ranks = stats.rankdata(-np.nan_to_num(reps, nan=-np.inf), method="min", axis=1)
    out = []
    for i in range(len(cols)):
        low, high = np.percentile(ranks[:, i], [50.0 * (1 - level), 50.0 * (1 + level)])
        out.append(
            {
                "rank": int(rank_obs[i]),
                "keeps_rank": round(float(np.mean(ranks[:, i] == rank_obs[i])), 4),
                "rank_ci95": [math.floor(low), math.ceil(high)],
            }
        )
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho with its p-value, or a reason when it is undefined (never NaN)."""
    n = len(x)
    if n != len(y):
        raise StatsInputError(f"need paired values, got {n} and {len(y)}")
    if n < 3:
        return {"rho": None, "p_value": None, "n": n, "note": f"needs 3 runs, got {n}"}
    if len(set(x)) < 2 or len(set(y)) < 2:
        return {"rho": None, "p_value": None, "n": n, "note": "undefined: one side is constant"}
    result = stats.spearmanr(x, y)
    return {
        "rho": round(float(result.statistic), 4),
        "p_value": round(float(result.pvalue), 6),
        "n": n,
    }


__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "EXACT_MCNEMAR_BELOW",
    "LEVEL",
    "PERMUTATIONS",
    "Float",
    "Interval",
    "PairedResult",
    "StatsInputError",
    "bca_intervals",
    "cell_seed",
    "mcnemar",
    "mean_interval",
    "mean_of_means_interval",
    "paired_scores",
    "percentile_interval",
    "rank_stability",
    "replicates",
    "sign_flip_p",
    "spearman",
]
