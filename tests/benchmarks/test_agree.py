from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from groundeval.benchmarks._agree import (
    AgreeInputError,
    Labels,
    agreement,
    cohen_kappa,
    confusion_matrix,
    load_labels,
    load_ratings,
    rank_correlation,
    stability,
)
from groundeval.benchmarks.cli import agree_command
from groundeval.state import Decision, ItemResult
from tests._support.paths import DATA

TIFA = DATA / "tifa" / "human_annotations_with_scores.json"


def _pairs(table: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    return [pair for pair, count in table.items() for _ in range(count)]


@pytest.mark.parametrize(
    ("table", "kappa"),
    [
        # Wikipedia's worked examples: po 0.7, pe 0.5 -> 0.4; po 0.6, pe 0.54 -> 0.1304
        ({("y", "y"): 20, ("y", "n"): 5, ("n", "y"): 10, ("n", "n"): 15}, 0.4),
        ({("y", "y"): 45, ("y", "n"): 15, ("n", "y"): 25, ("n", "n"): 15}, 0.06 / 0.46),
        ({("y", "y"): 3, ("n", "n"): 4}, 1.0),
        ({("y", "n"): 5, ("n", "y"): 5}, -1.0),
        # three labels: po 5/6, pe 13/36 -> 17/23
        ({("a", "a"): 2, ("b", "b"): 2, ("c", "c"): 1, ("a", "b"): 1}, 17 / 23),
        ({("y", "y"): 6}, None),  # both always "y": undefined
        ({}, None),
    ],
)
def test_cohen_kappa_textbook(table: dict, kappa: float | None) -> None:
    got = cohen_kappa(_pairs(table))
    if kappa is None:
        assert got is None
    else:
        assert got == pytest.approx(kappa, abs=1e-12)


@pytest.mark.parametrize(
    ("x", "y", "rho", "tau"),
    [
        ([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], 0.8, 0.6),  # sum d^2 = 4; 8 concordant, 2 discordant
        ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], -1.0, -1.0),
        ([1, 2, 3, 4, 5], [5, 6, 7, 8, 7], 8 / 95**0.5, None),  # ties: Pearson on mid-ranks
        ([1, 2, 2, 3], [1, 2, 3, 3], None, 0.8),  # tau-b: 4 / sqrt(5 * 5)
    ],
)
def test_rank_correlation_textbook(x: list, y: list, rho: float | None, tau: float | None) -> None:
    got = rank_correlation(x, y)
    if rho is not None:
        assert got["spearman"] == pytest.approx(rho, abs=1e-12)
    if tau is not None:
        assert got["kendall"] == pytest.approx(tau, abs=1e-12)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y)[0])
    assert got["n"] == len(x)


def test_rank_correlation_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="paired"):
        rank_correlation([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="at least 3"):
        rank_correlation([1, 2], [1, 2])


def test_agreement_per_question_and_tag() -> None:
    a = Labels("a", tags={"i1": {"axis": "count"}, "i2": {"axis": "text"}})
    b = Labels("b")
    for item, q, x, y in [
        ("i1", "q1", "pass", "pass"),
        ("i1", "q2", "fail", "pass"),
        ("i2", "q1", "pass", "pass"),
        ("i2", "q2", "fail", "fail"),
    ]:
        a.outcomes[(item, q)] = x
        b.outcomes[(item, q)] = y
    b.outcomes[("i3", "q1")] = "pass"
    out = agreement(a, b)
    assert out["n"] == 4 and out["agreement"] == 75.0 and out["only_in_b"] == 1
    # po .75, pA(pass)=.5 pB(pass)=.75 -> pe=.375+.125=.5 -> kappa .5
    assert out["kappa"] == 0.5
    assert out["confusion"] == {"fail": {"fail": 1, "pass": 1}, "pass": {"fail": 0, "pass": 2}}
    assert out["per_question"]["q1"]["agreement"] == 100.0
    assert out["per_question"]["q2"]["agreement"] == 50.0
    assert out["per_tag"]["axis"]["count"]["agreement"] == 50.0
    assert confusion_matrix([("x", "y")]) == {"x": {"x": 0, "y": 1}, "y": {"x": 0, "y": 0}}
    with pytest.raises(AgreeInputError, match="share no"):
        agreement(a, Labels("c"))


def _run(folder: Path, scores: dict[str, float], outcomes: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    lines = []
    for item, score in scores.items():
        decisions = [
            Decision(question_id="h1", kind="hard", outcome=outcomes[item],
                     score=1.0 if outcomes[item] == "pass" else 0.0, source="judge")
        ]  # fmt: skip
        result = ItemResult(
            item_id=item, program_id=item, scoring="dependency", tags={"axis": "quantity"},
            status="scored", decisions=decisions, scores={"score": score},
        )  # fmt: skip
        lines.append(result.model_dump_json() + "\n")
    (folder / "results.jsonl").write_text("".join(lines))
    return folder


def test_runs_labels_ratings_and_stability(tmp_path: Path) -> None:
    r1 = _run(
        tmp_path / "r1", {"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.25}, dict.fromkeys("abcd", "pass")
    )
    r2 = _run(
        tmp_path / "r2",
        {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.25},
        {"a": "pass", "b": "pass", "c": "fail", "d": "pass"},
    )
    r3 = _run(
        tmp_path / "r3", {"a": 1.0, "b": 0.0, "c": 0.5, "d": 0.25}, dict.fromkeys("abcd", "pass")
    )
    labels = tmp_path / "human.jsonl"
    labels.write_text("".join(
        json.dumps({"item": i, "question": "h1", "outcome": o}) + "\n"
        for i, o in [("a", "pass"), ("b", "fail"), ("c", "pass"), ("d", "pass")]
    ))  # fmt: skip
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item,likert\na,5\na,4\nb,3\nc,1\nd,2\n")
    assert load_ratings(ratings, "likert") == {"a": 4.5, "b": 3.0, "c": 1.0, "d": 2.0}
    out = stability([load_labels(r) for r in (r1, r2, r3)])
    # per-item sample variances: a 0, b 1/12, c 1/12, d 0
    assert out["item_variance_mean"] == round((1 / 12 + 1 / 12) / 4, 6)
    assert out["items_that_vary"] == 2 and out["items"] == 4
    runner = CliRunner()
    import typer

    app = typer.Typer()
    app.command()(agree_command)
    app.command("other")(lambda: None)
    res = runner.invoke(app, ["agree-command", str(r1), str(labels), "--ratings", str(ratings),
                              "--column", "likert", "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["agreement"]["agreement"] == 75.0
    expected = stats.spearmanr([1.0, 0.5, 0.0, 0.25], [4.5, 3.0, 1.0, 2.0])[0]
    assert data["correlation"]["spearman"] == pytest.approx(expected)
    res = runner.invoke(app, ["agree-command", str(r1), str(r2), str(r3), "--json"])
    assert json.loads(res.stdout)["stability"]["runs"] == [str(r1), str(r2), str(r3)]
    bad = runner.invoke(app, ["agree-command", str(tmp_path / "nope.jsonl"), str(labels)])
    assert bad.exit_code == 1 and "nope.jsonl" in bad.output


def test_tifa_mplug_spearman_with_human_means() -> None:
    import typer

    app = typer.Typer()
    app.command()(agree_command)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, [
        "agree-command", str(TIFA), "--score-column", "tifa_mplug-large",
        "--ratings", str(TIFA), "--column", "human_avg", "--json",
    ])  # fmt: skip
    assert res.exit_code == 0, res.output
    corr = json.loads(res.stdout)["correlation"]
    data = json.loads(TIFA.read_text())
    x = [v["tifa_mplug-large"] for v in data.values()]
    y = [v["human_avg"] for v in data.values()]
    assert corr["n"] == 800
    assert corr["spearman"] == pytest.approx(stats.spearmanr(x, y)[0], abs=1e-12)
    assert corr["kendall"] == pytest.approx(stats.kendalltau(x, y)[0], abs=1e-12)
    # TIFA's paper: mPLUG-large, Spearman 59.2 / Kendall 47.2 (x100)
    assert (round(corr["spearman"], 3), round(corr["kendall"], 3)) == (0.592, 0.472)


def _grounded_run(folder: Path, rows: list[tuple[str, str, str, float, str]]) -> Path:
    """rows: (item, axis, status, relaxed, grounded outcome)."""
    folder.mkdir(parents=True)
    lines = []
    for item, axis, status, relaxed, grounded in rows:
        decisions = [
            Decision(question_id="h1", kind="hard", outcome=grounded, score=0.0, source="check",
                     reason="grounding withheld" if grounded != "pass" else "ok"),
        ]  # fmt: skip
        scores = {"strict": float(relaxed == 1.0), "relaxed": relaxed} if status == "scored" else {
            "strict": None, "relaxed": None}  # fmt: skip
        lines.append(ItemResult(item_id=item, program_id=item, scoring="grounded",
                                tags={"axis": axis}, status=status, decisions=decisions,
                                scores=scores).model_dump_json() + "\n")  # fmt: skip
    (folder / "results.jsonl").write_text("".join(lines))
    return folder


def test_axis_tables_leaderboard_and_external_ranking(tmp_path: Path) -> None:
    from groundeval.benchmarks._suites import axis_table, compare_ranking, leaderboard
    from groundeval.benchmarks.cli import leaderboard_command

    m1 = _grounded_run(tmp_path / "m1", [
        ("a", "quantity", "scored", 1.0, "pass"), ("b", "quantity,spatial", "scored", 0.5, "pass"),
        ("c", "spatial", "withheld", 0.0, "withheld"), ("d", "text", "scored", 0.0, "pass"),
    ])  # fmt: skip
    m2 = _grounded_run(tmp_path / "m2", [
        ("a", "quantity", "scored", 1.0, "pass"), ("b", "quantity,spatial", "scored", 1.0, "pass"),
        ("c", "spatial", "scored", 1.0, "pass"), ("d", "text", "scored", 0.5, "pass"),
    ])  # fmt: skip
    m3 = _grounded_run(tmp_path / "m3", [
        ("a", "quantity", "scored", 0.0, "pass"), ("b", "quantity,spatial", "error", 0.0, "error"),
        ("c", "spatial", "scored", 0.0, "pass"), ("d", "text", "scored", 0.5, "pass"),
    ])  # fmt: skip
    table = {r["axis"]: r for r in axis_table(load_labels_results(m1))}
    assert list(table) == ["text", "quantity", "spatial", "all"]
    assert table["quantity"]["relaxed"] == 0.75 and table["quantity"]["strict"] == 0.5
    assert table["spatial"]["withheld_rate"] == 0.5 and table["spatial"]["relaxed"] == 0.5
    assert table["all"]["grounding_failure_rate"] == 0.25
    rows = leaderboard([m1, m2, m3])
    assert [r["run"] for r in rows] == ["m2", "m1", "m3"] and rows[0]["rank"] == 1
    assert rows[1]["relaxed"] == 0.5 and rows[1]["quantity.relaxed"] == 0.75
    assert rows[2]["error_rate"] == 0.25
    elo = tmp_path / "elo.csv"
    elo.write_text("model,elo\nm1,1100\nm2,1200\nm3,1000\nother,900\n")
    ext = compare_ranking(rows, elo, "elo")
    assert ext["spearman"] == pytest.approx(1.0) and ext["matched"] == ["m1", "m2", "m3"]
    import typer

    app = typer.Typer()
    app.command()(leaderboard_command)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["leaderboard-command", str(m1), str(m2), str(m3),
                                   "--external", str(elo), "--json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["external"]["spearman"] == pytest.approx(1.0)
    res = CliRunner().invoke(app, ["leaderboard-command", str(m1), str(m2), "--axes"])
    assert res.exit_code == 0, res.output
    assert "axes:" in res.output and "quantity" in res.output


def load_labels_results(folder: Path) -> list[ItemResult]:
    from groundeval.state._store import RunStore

    return RunStore(folder).results()


@pytest.mark.parametrize(
    ("content", "suffix", "message"),
    [
        ("item,likert\na,5\n", ".csv", "no column 'score'"),
        ("item,score\na,high\n", ".csv", "expected a number"),
        ("[1, 2]", ".json", "expected an object of records"),
        ('{"item": "a", "score": 1}\nnot json\n', ".jsonl", ":2: invalid JSON"),
    ],
)
def test_bad_ratings_files(tmp_path: Path, content: str, suffix: str, message: str) -> None:
    path = tmp_path / f"r{suffix}"
    path.write_text(content)
    with pytest.raises(AgreeInputError, match=message):
        load_ratings(path, "score")


def _repeat_run(root: Path, repeat: int | None, cached: int, judge: str = "gemini:g") -> Path:
    from groundeval.state import ItemUsage, Usage
    from groundeval.state._store import RunStore

    store = RunStore(root)
    config: dict = {"judge": judge, "model": "g", "parameters": {"temperature": 1.0}}
    if repeat is not None:
        config["repeat_index"] = repeat
    store.start(config, "", resume=False)
    for i, score in enumerate([1.0, 0.0, 1.0, 0.5]):
        result = ItemResult(item_id=f"i{i}", program_id=f"i{i}", scoring="grounded",
                            status="scored", scores={"relaxed": score})  # fmt: skip
        usage = Usage(calls=0 if i < cached else 1, cached_calls=1 if i < cached else 0)
        store.append(result, ItemUsage(item_id=f"i{i}", usage=usage))
    return root


def test_repeat_warnings_name_runs_that_replayed_the_cache(tmp_path: Path) -> None:
    from groundeval.benchmarks._agree import repeat_warnings

    shared = [_repeat_run(tmp_path / f"r{k}", None, 0 if k == 1 else 4) for k in (1, 2, 3)]
    [warning] = repeat_warnings(shared)
    assert "repeat index 0 reused cached replies" in warning
    assert f"{shared[1]}: 4 of 4 replies from the cache" in warning
    assert "--repeat-index" in warning
    repeats = [_repeat_run(tmp_path / f"k{k}", k, 0) for k in (0, 1, 2)]
    assert repeat_warnings(repeats) == []
    fresh = [_repeat_run(tmp_path / f"f{k}", None, 0) for k in (1, 2, 3)]
    assert repeat_warnings(fresh) == []
    replay = _repeat_run(tmp_path / "replay", 3, 4, judge="replay:calls.jsonl")
    assert repeat_warnings([replay]) == [
        f"{replay}: judge replay:calls.jsonl replays recorded replies, so it cannot vary"
    ]
    import typer

    app = typer.Typer()
    app.command()(agree_command)
    app.command("other")(lambda: None)
    res = CliRunner().invoke(app, ["agree-command", *map(str, shared), "--json"])
    assert res.exit_code == 0, res.output
    assert "warning: runs with the same judge" in res.stderr
    assert json.loads(res.stdout)["stability"]["warnings"] == [warning]
