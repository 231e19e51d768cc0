"""Interval speed: BCa bootstrap for 10,000 items x 20 groups (issue 14 budget: <= 2 s).

Every cell (overall + one per group, groups partition the items) gets intervals
for four metrics resampled together: strict (0/1 over scored items), relaxed
(partial marks in eighths), withheld rate and error rate, as summary.json has
them. Also times the same cells with continuous scores (no distinct-value
shortcut), the worst case.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from groundeval.programs.stats import bca_intervals, cell_seed


def data(items: int, groups: int, *, continuous: bool, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    status = rng.choice(3, size=items, p=[0.85, 0.1, 0.05])  # scored, withheld, error
    relaxed = rng.random(items) if continuous else np.round(rng.random(items) * 8) / 8
    strict = rng.random(items) if continuous else (relaxed == 1.0).astype(float)
    scored = status == 0
    matrix = np.column_stack([
        np.where(scored, strict, np.nan), np.where(scored, relaxed, np.nan),
        status == 1, status == 2,
    ]).astype(float)  # fmt: skip
    return matrix, rng.integers(0, groups, size=items)


def run(
    items: int = 10_000, groups: int = 20, resamples: int = 2000, *, continuous: bool = False
) -> int:
    """Intervals for every cell; returns how many (cell, metric) intervals were computed."""
    matrix, group = data(items, groups, continuous=continuous)
    count = len(bca_intervals(matrix, resamples=resamples, rng=cell_seed(0, "overall")))
    for g in range(groups):
        found = bca_intervals(matrix[group == g], resamples=resamples, rng=cell_seed(0, g))
        count += len(found)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--groups", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    for continuous in (False, True):
        times = []
        for _ in range(args.repeats):
            started = time.perf_counter()
            cells = run(args.items, args.groups, args.resamples, continuous=continuous)
            times.append(time.perf_counter() - started)
        kind = "continuous scores" if continuous else "scores as stored (0/1, eighths)"
        print(
            f"{args.items} items x {args.groups} groups, {args.resamples} resamples, {kind}: "
            f"{cells} intervals in {min(times):.3f} s (best of {args.repeats}; "
            f"median {sorted(times)[len(times) // 2]:.3f} s)"
        )


if __name__ == "__main__":
    main()
