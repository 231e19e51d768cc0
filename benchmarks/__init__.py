"""Benchmarks: BizGenEval, UEval, DSG, grounded suites, a synthetic benchmark, agreement.

Adapters live in subpackages (``groundeval.benchmarks.bizgeneval`` ...); the
agreement statistics, suite tables, intervals, paired comparisons and the
human-agreement study are re-exported here.
"""

from groundeval.benchmarks._agree import (
    Labels,
    agreement,
    cohen_kappa,
    confusion_matrix,
    correlate_scores,
    load_labels,
    load_ratings,
    rank_correlation,
    repeat_warnings,
    stability,
)
from groundeval.benchmarks._compare import CompareError, compare_runs
from groundeval.benchmarks._study import sample_study, study_agreement
from groundeval.benchmarks._suites import (
    AXES,
    axis_table,
    compare_ranking,
    group_stats,
    item_axes,
    leaderboard,
    rank_rows,
    withheld_vs_strict,
)
from groundeval.programs.intervals import add_intervals
from groundeval.programs.stats import (
    StatsInputError,
    bca_intervals,
    mcnemar,
    mean_interval,
    paired_scores,
    rank_stability,
)

__all__ = [
    "AXES",
    "CompareError",
    "Labels",
    "StatsInputError",
    "add_intervals",
    "agreement",
    "axis_table",
    "bca_intervals",
    "cohen_kappa",
    "compare_ranking",
    "compare_runs",
    "confusion_matrix",
    "correlate_scores",
    "group_stats",
    "item_axes",
    "leaderboard",
    "load_labels",
    "load_ratings",
    "mcnemar",
    "mean_interval",
    "paired_scores",
    "rank_correlation",
    "rank_rows",
    "rank_stability",
    "repeat_warnings",
    "sample_study",
    "stability",
    "study_agreement",
    "withheld_vs_strict",
]
