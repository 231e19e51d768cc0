"""`groundeval compare`, leaderboard intervals and ranks, summary.json intervals, on real runs.

The runs are graded by the real runner (tests/_support/stats_runs.py): model A and model B
draw different images for the same programs, so items pair by id.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from groundeval.benchmarks._compare import CompareError, compare_runs
from groundeval.benchmarks._suites import leaderboard, rank_rows, withheld_vs_strict
from groundeval.programs.cli import app
from groundeval.state._store import RunStore
from groundeval.state.report import write_report
from tests._support import stats_runs as S

A_COUNTS = [2, 1, 2, 3, 2, 2, 0, 2, 2, 1, 2, 2, 2, 2, 1, 2, 2, 2]
B_COUNTS = [2, 2, 2, 3, 2, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
C_COUNTS = [1, 1, 2, 3, 2, 0, 0, 2, 1, 1, 2, 2, 1, 0, 1, 2, 3, 2]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("compare")
    text_items = {f"item-{i:03d}": None for i in range(len(A_COUNTS)) if i % 3 == 2}
    out = {
        "a": S.grade(tmp / "a", A_COUNTS, {"item-003": False}),
        "b": S.grade(tmp / "b", B_COUNTS, {"item-003": False, "item-004": False}),
        "c": S.grade(tmp / "c", C_COUNTS, {"item-001": False}),
        # every "text" item errors: a group with no scored item
        "e": S.grade(tmp / "e", B_COUNTS, text_items),
    }
    other = [S.program(i) for i in range(len(A_COUNTS))]
    other[4]["hard"][0]["check"] = "count(elements) == 3"
    out["changed"] = S.grade(tmp / "changed", A_COUNTS, programs=other)
    renamed = [S.program(i) | {"id": f"other-{i:03d}"} for i in range(len(A_COUNTS))]
    out["renamed"] = S.grade(tmp / "renamed", A_COUNTS, programs=renamed)
    return out


def _scores(run: Path, key: str) -> dict[str, float]:
    return {
        r.item_id: float(r.scores[key])  # type: ignore[arg-type]
        for r in RunStore(run).results()
        if r.status == "scored" and r.scores.get(key) is not None
    }


def test_same_run_gives_zero_and_p_one(runs: dict[str, Path]) -> None:
    for metric in ("strict", "relaxed", "decision"):
        out = compare_runs(runs["a"], runs["a"], metric=metric, by="axis")
        assert (out["diff"], out["p_value"], out["diff_ci95"]) == (0.0, 1.0, [0.0, 0.0])
        assert all(g["p_value"] == 1.0 and g["diff"] == 0.0 for g in out["groups"].values())


def test_paired_difference_matches_the_items(runs: dict[str, Path]) -> None:
    a, b = _scores(runs["a"], "relaxed"), _scores(runs["b"], "relaxed")
    shared = sorted(set(a) & set(b))
    out = compare_runs(runs["a"], runs["b"], metric="relaxed")
    assert out["n_paired"] == len(shared)
    assert out["a"] == round(np.mean([a[i] for i in shared]), 4)
    assert out["diff"] == round(np.mean([a[i] - b[i] for i in shared]), 4)
    assert out["diff"] < 0 and out["diff_ci95"][0] <= out["diff"] <= out["diff_ci95"][1]
    assert out["test"] == "paired-permutation" and 0 < out["p_value"] < 1
    strict = compare_runs(runs["a"], runs["b"], metric="strict")
    assert strict["test"] == "mcnemar-exact"
    sa, sb = _scores(runs["a"], "strict"), _scores(runs["b"], "strict")
    pairs = [(sa[i], sb[i]) for i in sorted(set(sa) & set(sb))]
    assert strict["pass_only_in_a"] == pairs.count((1.0, 0.0)) == 1  # item-004: B's judge said no
    assert (
        strict["pass_only_in_b"] == pairs.count((0.0, 1.0)) == 3
    )  # items 1, 9, 14: 1 -> 2 stripes


def test_groups_by_axis(runs: dict[str, Path]) -> None:
    out = compare_runs(runs["a"], runs["b"], metric="strict", by="axis")
    assert sorted(out["groups"]) == sorted(S.AXES)
    assert sum(g["n_paired"] for g in out["groups"].values()) == out["n_paired"]


def test_empty_and_all_error_groups_say_why(runs: dict[str, Path]) -> None:
    out = compare_runs(runs["a"], runs["e"], metric="strict", by="axis")
    text = out["groups"]["text"]
    assert text["n_paired"] == 0 and text["diff"] is None and text["p_value"] is None
    assert "B error 6" in text["note"]
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize(
    ("other", "metric", "message"),
    [
        ("changed", "strict", "program 'item-004' differs .* questions h1"),
        ("renamed", "strict", "share no item id"),
        ("b", "accuracy", "no item has score 'accuracy'; scores in these runs: relaxed, strict"),
    ],
)
def test_mismatched_runs_name_what_differs(
    runs: dict[str, Path], other: str, metric: str, message: str
) -> None:
    with pytest.raises(CompareError, match=message):
        compare_runs(runs["a"], runs[other], metric=metric)


def test_compare_cli(runs: dict[str, Path]) -> None:
    cli = CliRunner()
    res = cli.invoke(app, ["compare", str(runs["a"]), str(runs["b"]), "--by", "axis", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["metric"] == "strict" and set(data["groups"]) == set(S.AXES)
    res = cli.invoke(app, ["compare", str(runs["a"]), str(runs["b"]), "--metric", "relaxed"])
    assert res.exit_code == 0 and "diff = A - B" in res.stdout
    bad = cli.invoke(app, ["compare", str(runs["a"]), str(runs["changed"])])
    assert bad.exit_code == 1 and "item-004" in bad.output


def _no_nan(data: Any) -> None:
    json.dumps(data, allow_nan=False)


def test_summary_json_has_intervals(runs: dict[str, Path]) -> None:
    summary = json.loads((runs["e"] / "summary.json").read_text())
    grounded = summary["protocols"]["grounded"]
    overall = grounded["overall"]
    for key in ("strict", "relaxed", "withheld_rate", "error_rate"):
        low, high = overall[f"{key}_ci95"]
        assert low <= overall[key] <= high
    text = grounded["by_tag"]["axis"]["text"]
    assert text["strict"] is None and text["strict_ci95"] is None
    assert text["error_rate"] == 1.0 and text["error_rate_ci95"] == [1.0, 1.0]
    assert grounded["ci"] == {
        "method": "BCa bootstrap over items", "level": 0.95, "resamples": 2000, "seed": 0
    }  # fmt: skip
    _no_nan(summary)


def test_leaderboard_intervals_ranks_and_withheld_rho(runs: dict[str, Path]) -> None:
    dirs = [runs["a"], runs["b"], runs["c"]]
    rows = leaderboard(dirs, sort_by="strict", resamples=500)
    assert [r["run"] for r in rows] == ["b", "a", "c"]
    for r in rows:
        assert r["strict_ci95"][0] <= r["strict"] <= r["strict_ci95"][1]
        assert "quantity.strict_ci95" in r
    info = rank_rows(dirs, rows, key="strict", resamples=500)
    assert info["resampling"] == "paired"
    assert rows[0]["keeps_rank"] > 0.5 and rows[0]["rank_ci95"][0] == 1
    rho = withheld_vs_strict(rows)
    assert rho["rho"] is None and "constant" in rho["note"]
    _no_nan(rows)
    res = CliRunner().invoke(
        app, ["leaderboard", *map(str, dirs), "--ranks", "--sort-by", "strict", "--json"]
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert "keeps_rank" in data["leaderboard"][0] and data["ranks"]["key"] == "strict"
    res = CliRunner().invoke(app, ["leaderboard", *map(str, dirs), "--ranks", "--axes"])
    assert res.exit_code == 0, res.output
    assert "relaxed per axis" in res.output and "strict █" in res.output


def test_withheld_rho_across_runs() -> None:
    rows = [
        {"run": "m1", "strict": 0.8, "withheld_rate": 0.05},
        {"run": "m2", "strict": 0.6, "withheld_rate": 0.15},
        {"run": "m3", "strict": 0.3, "withheld_rate": 0.4},
        {"run": "m4", "strict": 0.5, "withheld_rate": 0.2},
        {"run": "m5", "strict": None, "withheld_rate": 1.0},
    ]
    out = withheld_vs_strict(rows)
    assert out["rho"] == -1.0 and out["n"] == 4 and out["left_out"] == ["m5"]


def test_report_shows_intervals_and_whiskers(runs: dict[str, Path], tmp_path: Path) -> None:
    index = write_report([runs["a"], runs["b"], runs["c"]], tmp_path / "report")
    html = index.read_text()
    assert "95 % interval" in html
    overall = json.loads((runs["a"] / "summary.json").read_text())["protocols"]["grounded"]
    low, high = overall["overall"]["strict_ci95"]
    assert f"[{low:.4g}, {high:.4g}]" in html
    plots = tmp_path / "report" / "plots"
    assert "Spearman ρ" in html and (plots / "withheld-vs-strict.svg").is_file()
    axes_svg = (plots / "axes.svg").read_text()
    assert "quantity" in axes_svg and "95 % interval" in axes_svg


def test_run_records_ci_resamples(tmp_path: Path) -> None:
    """`run --ci-resamples N` is kept in run.json, and summary.json says how it drew."""
    programs = tmp_path / "programs.jsonl"
    programs.write_text("".join(json.dumps(S.program(i)) + "\n" for i in range(4)))
    manifest = tmp_path / "manifest.jsonl"
    rows = [
        {"id": f"item-{i:03d}", "images": [str(S.stripes_image(tmp_path / f"{i}.png", 2))]}
        for i in range(4)
    ]
    manifest.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "run"
    res = CliRunner().invoke(app, ["run", str(programs), "--manifest", str(manifest), "--out",
                                   str(out), "--ci-resamples", "300", "--no-cache"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((out / "run.json").read_text())["ci_resamples"] == 300
    summary = json.loads((out / "summary.json").read_text())
    assert summary["protocols"]["grounded"]["ci"]["resamples"] == 300
    assert "strict_ci95" in res.output
