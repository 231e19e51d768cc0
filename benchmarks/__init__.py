"""Benchmarks: BizGenEval, UEval, DSG, grounded suites, a synthetic benchmark, agreement.

Adapters live in subpackages (``groundeval.benchmarks.bizgeneval`` ...); the
agreement statistics and suite tables are re-exported here.
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
    stability,
)
from groundeval.benchmarks._suites import AXES, axis_table, compare_ranking, leaderboard

__all__ = [
    "AXES",
    "Labels",
    "agreement",
    "axis_table",
    "cohen_kappa",
    "compare_ranking",
    "confusion_matrix",
    "correlate_scores",
    "leaderboard",
    "load_labels",
    "load_ratings",
    "rank_correlation",
    "stability",
]
