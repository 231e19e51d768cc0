"""Intervals and tests: coverage by simulation, agreement with scipy, textbook values, speed."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pytest
from scipy import stats

from groundeval.programs.intervals import add_intervals, interval_options
from groundeval.programs.stats import (
    StatsInputError,
    bca_intervals,
    cell_seed,
    mcnemar,
    mean_interval,
    mean_of_means_interval,
    paired_scores,
    rank_stability,
    rate_upper_bound,
    replicates,
    sign_flip_p,
    spearman,
)
from groundeval.state import Decision, ItemResult
from tests._support.paths import REPO


def test_coverage_by_simulation() -> None:
    """1,000 runs of 60 items from a skewed distribution: the 95 % interval covers 93-97 %."""
    rng = np.random.default_rng(20261201)
    runs, n, true_mean = 1000, 60, 1.0
    data = rng.exponential(true_mean, size=(runs, n))
    covered = 0
    for k in range(runs):
        low, high = mean_interval(data[k], resamples=1000, rng=cell_seed(7, k))  # type: ignore[misc]
        covered += low <= true_mean <= high
    assert 0.93 <= covered / runs <= 0.97, covered / runs


def test_coverage_of_yes_no_scores() -> None:
    """Strict scores are 0/1: the multinomial shortcut keeps coverage for a proportion too."""
    rng = np.random.default_rng(5)
    runs, n, p = 1000, 200, 0.3
    data = (rng.random((runs, n)) < p).astype(float)
    hits = 0
    for k in range(runs):
        interval = mean_interval(data[k], resamples=1000, rng=cell_seed(3, k))
        assert interval is not None
        hits += interval[0] <= p <= interval[1]
    assert 0.93 <= hits / runs <= 0.97, hits / runs


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_agrees_with_scipy_bootstrap(seed: int) -> None:
    """Same data, same draws: BCa endpoints equal scipy.stats.bootstrap's; other draws, close."""
    x = np.random.default_rng(seed).gamma(2.0, 1.5, size=150)
    mine = mean_interval(x, resamples=2000, rng=np.random.default_rng(seed))
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=2000, method="BCa", rng=np.random.default_rng(seed)
    ).confidence_interval
    assert mine == pytest.approx([ref.low, ref.high], abs=1e-4)
    other = mean_interval(x, resamples=2000, rng=np.random.default_rng(seed + 100))
    width = ref.high - ref.low
    assert other is not None
    assert abs(other[0] - ref.low) < 0.1 * width
    assert abs(other[1] - ref.high) < 0.1 * width


def test_discrete_shortcut_matches_resampling_rows() -> None:
    """Multinomial counts over distinct rows give the same replicate distribution."""
    rng = np.random.default_rng(0)
    x = rng.choice([0.0, 0.5, 1.0], size=4000, p=[0.5, 0.2, 0.3])
    fast = replicates(x, 4000, np.random.default_rng(1))[:, 0]
    slow = x[np.random.default_rng(2).integers(0, x.size, (4000, x.size))].mean(axis=1)
    assert fast.mean() == pytest.approx(slow.mean(), abs=2e-3)
    assert fast.std() == pytest.approx(slow.std(), rel=0.05)
    assert fast.std() == pytest.approx(x.std() / math.sqrt(x.size), rel=0.05)


def test_nan_marks_items_a_metric_leaves_out() -> None:
    """A mean over scored items: NaN rows do not count, and the interval sits around it."""
    col = np.array([1.0, 0.0, np.nan, 1.0, 1.0, np.nan, 0.0, 1.0] * 10)
    [interval] = bca_intervals(col, rng=np.random.default_rng(0))
    assert interval is not None
    assert interval[0] < np.nanmean(col) < interval[1]


@pytest.mark.parametrize(
    ("values", "expected"),
    [([], None), ([0.4], None), ([np.nan, np.nan], None), ([0.7, 0.7, 0.7], [0.7, 0.7])],
)
def test_degenerate_cells(values: list[float], expected: list[float] | None) -> None:
    assert mean_interval(np.array(values, dtype=float)) == expected


def test_infinite_values_are_refused() -> None:
    with pytest.raises(StatsInputError, match="finite"):
        mean_interval([1.0, math.inf])


def test_mean_of_means_resamples_within_groups() -> None:
    a, b = np.ones(50), np.r_[np.zeros(25), np.ones(25)]
    interval = mean_of_means_interval([a, b, np.array([np.nan])], rng=np.random.default_rng(0))
    assert interval is not None
    assert interval[0] < 0.75 < interval[1]
    assert interval[1] <= 1.0
    assert mean_of_means_interval([np.array([np.nan])]) is None


def test_mcnemar_textbook() -> None:
    # exact: 6 discordant one way, 1 the other: p = 2 * (1 + 7) / 2**7 = 0.125
    assert mcnemar(6, 1) == (0.125, "mcnemar-exact")
    assert mcnemar(0, 5)[0] == pytest.approx(2 / 2**5)
    # Wikipedia's worked example (b = 121, c = 59): chi2 = 62^2 / 180 = 21.36, p = 3.8e-6
    p, test = mcnemar(121, 59)
    assert test == "mcnemar-chi2"
    assert p == pytest.approx(3.8151e-6, rel=1e-3)
    assert mcnemar(0, 0) == (1.0, "mcnemar-exact")


def test_rate_upper_bound_is_clopper_pearson() -> None:
    # no events: the bound solves (1 - p)^n = 1 - level ("rule of three" near 3 / n)
    assert rate_upper_bound(0, 200) == pytest.approx(1 - 0.05 ** (1 / 200))
    # events seen: the one-sided bound is where the binomial tail falls to 5 %
    bound = rate_upper_bound(2, 255)
    assert bound is not None and stats.binom.cdf(2, 255, bound) == pytest.approx(0.05)
    assert rate_upper_bound(4, 4) == 1.0 and rate_upper_bound(0, 0) is None
    assert rate_upper_bound(0, 200, level=0.99) > rate_upper_bound(0, 200)  # type: ignore[operator]
    for bad in [(3, 2), (-1, 5)]:
        with pytest.raises(StatsInputError, match="events <= trials"):
            rate_upper_bound(*bad)
    with pytest.raises(StatsInputError, match="level"):
        rate_upper_bound(0, 5, level=1.0)


def test_paired_identical_runs() -> None:
    x = np.random.default_rng(0).random(40)
    same = paired_scores(x, x)
    assert (same.diff, same.p_value, same.diff_ci95) == (0.0, 1.0, [0.0, 0.0])
    assert same.test == "paired-permutation"
    yes_no = paired_scores([1, 0, 1, 1], [1, 0, 1, 1])
    assert (yes_no.diff, yes_no.p_value, yes_no.test) == (0.0, 1.0, "mcnemar-exact")


def test_sign_flip_detects_a_shift_and_agrees_with_a_t_test() -> None:
    rng = np.random.default_rng(1)
    assert sign_flip_p(np.full(50, 0.1), rng=np.random.default_rng(0)) < 0.001
    for shift in (0.0, 0.1, 0.2):
        d = rng.normal(shift, 1.0, 300)
        p = sign_flip_p(d, rng=np.random.default_rng(0))
        assert p == pytest.approx(stats.ttest_1samp(d, 0.0).pvalue, abs=0.03)


def test_sign_flip_matches_exact_enumeration() -> None:
    d = np.array([0.5, -0.25, 1.0, 0.75, 0.5, -0.5, 1.0, 0.25])
    signs = np.array(np.meshgrid(*[[-1, 1]] * d.size)).reshape(d.size, -1).T
    exact = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-12)
    assert sign_flip_p(d, permutations=50_000) == pytest.approx(exact, abs=0.01)


def test_rank_stability() -> None:
    rng = np.random.default_rng(0)
    clear = [rng.normal(m, 0.1, 300) for m in (0.9, 0.5, 0.1)]
    out = rank_stability(clear, paired=True, resamples=500)
    assert [r["rank"] for r in out] == [1, 2, 3]
    assert all(r["keeps_rank"] == 1.0 for r in out)
    close = [rng.normal(0.5, 0.3, 30), rng.normal(0.5, 0.3, 30), np.full(30, np.nan)]
    out = rank_stability(close, paired=False, resamples=500)
    assert 0.2 < out[0]["keeps_rank"] < 0.9
    assert out[0]["rank_ci95"] == [1, 2]
    assert out[2] == {"rank": 3, "keeps_rank": 1.0, "rank_ci95": [3, 3]}
    with pytest.raises(StatsInputError, match="same items"):
        rank_stability([np.ones(3), np.ones(4)], paired=True)


def test_spearman_is_never_nan() -> None:
    assert spearman([0.1, 0.2], [1.0, 2.0])["note"] == "needs 3 runs, got 2"
    assert spearman([0.1, 0.1, 0.1], [1.0, 2.0, 3.0])["rho"] is None
    got = spearman([0.1, 0.3, 0.2, 0.5], [0.9, 0.5, 0.7, 0.2])
    assert got["rho"] == -1.0


def _result(i: int, status: str, strict: float | None, tag: str) -> ItemResult:
    return ItemResult(
        item_id=f"i{i}", program_id=f"i{i}", scoring="grounded", tags={"axis": tag},
        status=status,  # type: ignore[arg-type]
        decisions=[Decision(question_id="h1", kind="hard", outcome="pass", score=1.0,
                            source="check")],
        scores={"strict": strict, "relaxed": strict},
    )  # fmt: skip


def test_summary_cells_null_where_the_metric_is_null() -> None:
    """An all-withheld group: strict is null and so is its interval; no NaN anywhere."""
    from groundeval.programs.scoring import get_protocol

    results = [_result(i, "scored", float(i % 2), "a") for i in range(10)]
    results += [_result(10 + i, "withheld", None, "b") for i in range(4)]
    section = get_protocol("grounded").summarize(results)
    out = add_intervals("grounded", results, section, {"ci_resamples": 500})
    b = out["by_tag"]["axis"]["b"]
    assert b["strict"] is None and b["strict_ci95"] is None
    assert b["withheld_rate"] == 1.0 and b["withheld_rate_ci95"] == [1.0, 1.0]
    a = out["by_tag"]["axis"]["a"]
    assert a["strict_ci95"][0] < a["strict"] < a["strict_ci95"][1]
    assert out["ci"]["resamples"] == 500
    text = json.dumps(out, allow_nan=False)  # raises on NaN
    assert "NaN" not in text


def test_interval_options_name_the_bad_field() -> None:
    assert interval_options({}) == (2000, 0)
    with pytest.raises(StatsInputError, match="ci_resamples"):
        interval_options({"ci_resamples": 0})
    with pytest.raises(StatsInputError, match="ci_seed"):
        interval_options({"ci_seed": "x"})


def test_speed_10000_items_20_groups() -> None:
    """The issue's budget: intervals for 10,000 items x 20 groups in at most 2 s."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("perf_intervals", REPO / "perf" / "intervals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    started = time.perf_counter()
    cells = module.run(items=10_000, groups=20, resamples=2000)
    elapsed = time.perf_counter() - started
    assert cells == 21 * 4
    assert elapsed <= 2.0, elapsed


def _item(i: int, scoring: str, scores: dict, tags: dict, status: str = "scored") -> ItemResult:
    return ItemResult(item_id=f"i{i:02d}", program_id=f"i{i:02d}", scoring=scoring, tags=tags,
                      status=status, scores=scores)  # type: ignore[arg-type]  # fmt: skip


def _walk(data: object, path: str = "") -> list[tuple[str, object]]:
    """Every (path, value) pair of a JSON-like tree."""
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _walk(v, f"{path}/{k}")]
    if isinstance(data, list):
        return [(path, data)] + [p for i, v in enumerate(data) for p in _walk(v, f"{path}/{i}")]
    return [(path, data)]


def _check_beside(section: dict) -> int:
    """Every m_ci95 sits next to m, is null when m is null, else brackets m; returns the count."""
    found = 0
    for path, value in _walk(section):
        if not path.endswith("_ci95") or (
            isinstance(value, list) and value and not isinstance(value[0], float | int)
        ):
            continue
        parent, name = path.rsplit("/", 1)
        node: object = section
        for part in parent.strip("/").split("/") if parent.strip("/") else []:
            node = node[int(part)] if isinstance(node, list) else node[part]  # type: ignore[index]
        assert isinstance(node, dict)
        metric = node.get(name.removesuffix("_ci95"))
        if metric is None or value is None:
            assert value is None or metric is None
            continue
        low, high = value  # type: ignore[misc]
        assert low - 1e-9 <= float(metric) <= high + 1e-9, (path, metric, value)
        found += 1
    return found


def test_checklist_cells_get_intervals() -> None:
    from groundeval.programs.scoring import get_protocol

    rng = np.random.default_rng(0)
    results = []
    for i in range(40):
        errors = int(rng.integers(0, 6))
        s = {"easy": max(0.0, 1 - 0.2 * errors), "hard": max(0.0, 1 - 0.2 * (errors // 2)),
             "all": max(0.0, 1 - 0.1 * errors), "accuracy": 1 - errors / 20}  # fmt: skip
        tags = {"domain": ["slides", "poster"][i % 2], "dimension": ["layout", "text"][i % 3 > 0]}
        results.append(_item(i, "checklist", s, tags))
    results.append(_item(99, "checklist", dict.fromkeys(("easy", "hard", "all", "accuracy")),
                         {"domain": "chart", "dimension": "layout"}, "error"))  # fmt: skip
    section = add_intervals("checklist", results, get_protocol("checklist").summarize(results))
    assert _check_beside(section) >= 8
    assert section["by_domain"]["slides"]["error_score_ci95"] is not None
    if "chart" in section["by_domain"]:  # only left-out items: null metric, null interval
        assert section["by_domain"]["chart"].get("error_score_ci95") is None
    table = section["tables_ci95"]["by_domain"]
    assert [row["Split"] for row in table] == ["easy", "hard", "all"]
    means = section["tables"]["by_domain"]
    for row, ci in zip(means, table, strict=True):
        for column in ("Slides", "Poster", "Average"):
            low, high = ci[column]  # type: ignore[misc]
            assert low <= float(row[column]) <= high
    json.dumps(section, allow_nan=False)


def test_rubric_and_dependency_cells_get_intervals() -> None:
    from groundeval.programs.scoring import get_protocol

    rng = np.random.default_rng(1)
    rubric = [
        _item(i, "rubric", {"score": float(rng.integers(0, 5)) / 4, "image": float(i % 2),
                            "text": None}, {"task_type": ["art", "diagram"][i % 2]})
        for i in range(30)
    ]  # fmt: skip
    section = add_intervals("rubric", rubric, get_protocol("rubric").summarize(rubric))
    assert _check_beside(section) >= 6
    assert section["overall"]["text_ci95"] is None
    assert section["task_mean_ci95"][0] <= section["task_mean"] <= section["task_mean_ci95"][1]
    dsg = [
        _item(i, "dependency", {"score": float(rng.integers(0, 9)) / 8}, {"category": "ab"[i % 2]})
        for i in range(30)
    ]
    section = add_intervals("dependency", dsg, get_protocol("dependency").summarize(dsg))
    assert section["score_ci95"][0] <= section["score"] <= section["score_ci95"][1]
    for tag, value in section["by_tag"]["category"].items():
        low, high = section["by_tag_ci95"]["category"][tag]
        mean = value if isinstance(value, float) else value["score"]
        assert low <= mean <= high
    json.dumps(section, allow_nan=False)
