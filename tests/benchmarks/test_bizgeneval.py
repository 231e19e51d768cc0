from __future__ import annotations

import asyncio
import csv
import json
import random
from pathlib import Path
from statistics import mean

import pytest

from groundeval.benchmarks.bizgeneval import (
    BizGenEvalDataError,
    load_bizgeneval,
    summarize_reference,
    summarize_run,
)
from groundeval.judges import ScriptedJudge
from groundeval.programs._runner import ItemInput, grade_item
from tests._support.paths import DATA, write_image

DATA = DATA / "bizgeneval" / "bizgeneval.jsonl"
DOMAINS = ["slides", "webpage", "poster", "chart", "scientific_figure"]
DIMENSIONS = ["layout", "attribute", "text", "knowledge"]


def _rows() -> list[dict]:
    return [
        json.loads(line) for line in DATA.read_text(encoding="utf-8").split("\n") if line.strip()
    ]


def test_all_items_load() -> None:
    programs = load_bizgeneval(DATA)
    assert len(programs) == 400
    assert sum(len(p.hard) for p in programs) == 8000
    for p in programs:
        tracks = [q.tags["track"] for q in p.hard]
        assert tracks.count("easy") == 10 and tracks.count("hard") == 10
        assert p.scoring == "checklist" and p.instructions
        assert p.id == f"{p.tags['domain']}_{p.tags['dimension']}_{p.id.rsplit('_', 1)[1]}"
    row = _rows()[0]
    first = next(p for p in programs if p.id == f"{row['domain']}_{row['dimension']}_{row['id']}")
    assert [q.ask for q in first.hard] == row["questions"]
    assert {int(q.id) for q in first.hard if q.tags["track"] == "easy"} == set(row["easy_qidxs"])


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"easy_qidxs": [0, 1]}, "easy_qidxs expected 1-based"),
        ({"eval_tag": "colour"}, "eval_tag expected one of"),
        ({"questions": "not a list"}, "field 'questions' expected"),
        ({"hard_qidxs": [1]}, "must cover questions"),
    ],
)
def test_bad_rows_name_line_and_field(tmp_path: Path, patch: dict, message: str) -> None:
    row = _rows()[0] | patch
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_rows()[1]) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(BizGenEvalDataError, match=message) as info:
        load_bizgeneval(bad)
    assert f"{bad}:2" in str(info.value)


def _make_reference_results(folder: Path, seed: int = 7) -> dict[str, dict[str, bool | None]]:
    """Reference-format files for all 400 items; returns the answers (None = missing answer).

    Some files are absent, one is empty, some answers are missing or not booleans.
    """
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    truth: dict[str, dict[str, bool | None]] = {}
    for n, row in enumerate(_rows()):
        stem = f"{row['domain']}_{row['dimension']}_{row['id']}"
        if n % 37 == 5:
            continue  # no result file
        if n == 11:
            (folder / f"{stem}.json").write_text(json.dumps({"meta_info": {}, "prompt": "p"}))
            continue
        p_yes = rng.uniform(0.3, 0.95)
        meta: dict[str, dict] = {}
        answers: dict[str, bool | None] = {}
        for j in range(1, 21):
            roll = rng.random()
            if roll < 0.04:
                answers[str(j)] = None  # missing from the judge's answer
                continue
            value = rng.random() < p_yes
            if roll < 0.06:
                meta[str(j)] = {"result": "true" if value else "false", "reason": "string"}
                answers[str(j)] = False  # only a JSON true counts
                continue
            meta[str(j)] = {"result": value, "raw_description": "d", "reason": "r"}
            answers[str(j)] = value
        ok = sum(1 for v in answers.values() if v)
        payload = {
            "meta_info": meta,
            "prompt": row["prompt"],
            "accuracy": ok / 20,
            "is_correct": ok == 20,
            "n_questions": 20,
        }
        (folder / f"{stem}.json").write_text(json.dumps(payload))
        truth[stem] = answers
    return truth


def _independent_tables(
    truth: dict[str, dict[str, bool | None]], zero_missing: bool, unanswered_is_error: bool = False
) -> dict:
    """BizGenEval's rules written out plainly, apart from the package.

    ``unanswered_is_error``: an item with a missing answer has no result (groundeval's rule).
    """
    per_item = {}
    for row in _rows():
        stem = f"{row['domain']}_{row['dimension']}_{row['id']}"
        lost = stem in truth and any(
            truth[stem].get(str(j)) is None for j in row["easy_qidxs"] + row["hard_qidxs"]
        )
        if stem not in truth or (unanswered_is_error and lost):
            if zero_missing:
                per_item[stem] = (row["domain"], row["dimension"], 0.0, 0.0, 0.0)
            continue
        answers = truth[stem]
        easy_err = sum(1 for j in row["easy_qidxs"] if answers.get(str(j)) is not True)
        hard_err = sum(1 for j in row["hard_qidxs"] if answers.get(str(j)) is not True)
        per_item[stem] = (
            row["domain"],
            row["dimension"],
            max(0.0, 1 - 0.2 * easy_err),
            max(0.0, 1 - 0.2 * hard_err),
            max(0.0, 1 - 0.1 * (easy_err + hard_err)),
        )
    tables = {}
    for position, groups in ((0, DOMAINS), (1, DIMENSIONS)):
        table = {}
        for t, track in enumerate(["easy", "hard", "all"]):
            means = []
            for g in groups:
                vals = [v[2 + t] for v in per_item.values() if v[position] == g]
                means.append(mean(vals))
            table[track] = [*means, mean(means)]
        tables[position] = table
    return {"domain": tables[0], "dimension": tables[1], "n": len(per_item)}


def _read_csv(path: Path) -> dict[str, list[float]]:
    with path.open() as handle:
        rows = list(csv.DictReader(handle))
    return {r["Split"]: [float(v) for k, v in r.items() if k != "Split"] for r in rows}


@pytest.mark.parametrize("missing", ["skip", "zero"])
def test_summarize_reference_matches_independent_rules(tmp_path: Path, missing: str) -> None:
    truth = _make_reference_results(tmp_path / "results")
    out = tmp_path / "summary"
    summary = summarize_reference(DATA, tmp_path / "results", out, missing=missing)
    expected = _independent_tables(truth, zero_missing=missing == "zero")
    with (out / "summary_by_domain.csv").open() as handle:
        header = next(csv.reader(handle))
    assert header == [
        "Split",
        "Slides",
        "Webpage",
        "Poster",
        "Chart",
        "Scientific Figure",
        "Average",
    ]
    for name, key in (
        ("summary_by_domain.csv", "domain"),
        ("summary_by_dimension.csv", "dimension"),
    ):
        got = _read_csv(out / name)
        assert list(got) == ["easy", "hard", "all"]
        for track in ("easy", "hard", "all"):
            assert got[track] == [round(v, 4) for v in expected[key][track]], (name, track)
    n_missing = 400 - len(truth)
    assert len(summary["missing_items"]) == n_missing == 12
    assert summary["missing_convention"] == missing
    assert summary["total_scored"] == len(truth)  # zeroed items are counted, not scored
    assert expected["n"] == len(truth) + (n_missing if missing == "zero" else 0)
    assert "no meta_info" in json.dumps(summary["missing_reasons"])
    # every column says how many of its items have no result
    with (out / "counts_by_domain.csv").open() as handle:
        counts = {r["Split"]: r for r in csv.DictReader(handle)}
    assert int(counts["missing"]["Average"]) == n_missing
    assert sum(int(counts["missing"][d.replace("_", " ").title()]) for d in DOMAINS) == n_missing
    assert (
        counts["errors"]["Average"] == "0"
    )  # unanswered questions counted wrong, as the reference
    on_disk = json.loads((out / "summary.json").read_text())
    assert on_disk["by_domain"]["chart"]["count"] == sum(
        1 for k in truth if k.startswith("chart_")
    ) + (
        sum(1 for r in _rows() if r["domain"] == "chart")
        - sum(1 for k in truth if k.startswith("chart_"))
        if missing == "zero"
        else 0
    )
    assert summary["answer_errors_counted_as_wrong"] > 0


@pytest.mark.parametrize("missing", ["skip", "zero"])
def test_unanswered_as_error_leaves_items_out_and_counts_them(tmp_path: Path, missing: str) -> None:
    truth = _make_reference_results(tmp_path / "results")
    out = tmp_path / "summary"
    summary = summarize_reference(
        DATA, tmp_path / "results", out, missing=missing, unanswered="error"
    )  # type: ignore[arg-type]
    expected = _independent_tables(truth, missing == "zero", unanswered_is_error=True)
    for key in ("domain", "dimension"):
        got = _read_csv(out / f"summary_by_{key}.csv")
        for track in ("easy", "hard", "all"):
            assert got[track] == [round(v, 4) for v in expected[key][track]], (key, track)
    lost = [k for k, answers in truth.items() if None in answers.values()]
    assert lost and summary["left_out"] == {
        "errors": len(lost),
        "withheld": 0,
        "pending": 0,
        "missing": 12,
    }
    assert summary["answer_errors_counted_as_wrong"] == 0
    assert "no result for question" in summary["missing_reasons"][lost[0]]
    with (out / "counts_by_dimension.csv").open() as handle:
        counts = {r["Split"]: r for r in csv.DictReader(handle)}
    assert int(counts["errors"]["Average"]) == len(lost)
    with pytest.raises(ValueError, match="wrong' or 'error"):
        summarize_reference(DATA, tmp_path / "results", unanswered="zero")  # type: ignore[arg-type]


def test_checklist_protocol_on_a_run_equals_reference_summary(tmp_path: Path) -> None:
    """Same answers graded through the runner give the same tables as the reference files.

    A question the judge leaves unanswered makes its item ``error`` in the run (never
    a wrong answer): the run equals the reference files read with ``unanswered="error"``.
    """
    truth = _make_reference_results(tmp_path / "results", seed=3)
    reference = tmp_path / "reference"
    summarize_reference(DATA, tmp_path / "results", reference, unanswered="error")
    image = write_image(tmp_path / "img.png")
    table: dict = {}
    items = []
    for program in load_bizgeneval(DATA):
        answers = truth.get(program.id)
        # an item the reference has no file for is an item whose image is missing here
        path = image if answers is not None else tmp_path / "missing" / f"{program.id}.png"
        items.append(ItemInput(program.id, program, [path]))
        for qid, value in (answers or {}).items():
            if value is not None:
                table[(program.id, qid)] = value
    judge = ScriptedJudge(table)

    async def grade_all() -> list:
        return [(await grade_item(i, judge=judge))[0] for i in items]

    results = asyncio.run(grade_all())
    lost = {k for k, answers in truth.items() if None in answers.values()}
    assert lost
    errors = {r.item_id for r in results if r.status == "error"}
    assert errors == lost | {i.item_id for i in items if i.item_id not in truth}
    for r in results:
        if r.item_id in lost:  # never a zero: no track score at all, the error is named
            assert r.scores["all"] is None and r.error
    ours = tmp_path / "ours"
    summary = summarize_run(results, ours)
    for name in (
        "summary_by_domain.csv",
        "summary_by_dimension.csv",
        "counts_by_domain.csv",
        "counts_by_dimension.csv",
    ):
        assert (ours / name).read_text() == (reference / name).read_text(), name
    assert summary["answer_errors_counted_as_wrong"] == 0
    assert summary["left_out"] == {
        "errors": len(lost),
        "withheld": 0,
        "pending": 0,
        "missing": 400 - len(truth),
    }
    scored = [r for r in results if r.status == "scored"]
    assert all(r.scores["all"] is not None for r in scored)
    # one call per image when every answer is there
    complete = [i for i in items if i.item_id in truth and None not in truth[i.item_id].values()]
    calls_for = [c.item_id for c in judge.calls]
    assert all(calls_for.count(i.item_id) == 1 for i in complete[:20])


def test_reference_folders_compare_with_agree(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from groundeval.benchmarks._agree import agreement, load_labels
    from groundeval.benchmarks.cli import bizgeneval_app

    truth_a = _make_reference_results(tmp_path / "a", seed=1)
    _make_reference_results(tmp_path / "b", seed=2)
    runner = CliRunner()
    for name in ("a", "b"):
        args = ["labels", "--data", str(DATA), "--results", str(tmp_path / name)]
        res = runner.invoke(bizgeneval_app, [*args, "--out", str(tmp_path / f"{name}.jsonl")])
        assert res.exit_code == 0, res.output
    a, b = load_labels(tmp_path / "a.jsonl"), load_labels(tmp_path / "b.jsonl")
    assert len(a.scores) == len(truth_a)
    out = agreement(a, b)
    assert out["n"] == 20 * len(truth_a) and set(out["per_tag"]) == {"domain", "dimension"}
    assert {"pass", "fail", "error"} <= set(out["confusion"])
    summary = summarize_reference(DATA, tmp_path / "a")
    expected = {k: v["error_score"] for k, v in summary["by_domain"].items()}
    for domain, value in expected.items():
        scores = [s for i, s in a.scores.items() if a.tags[i]["domain"] == domain]
        assert sum(scores) / len(scores) == pytest.approx(value)
    args = ["summarize", "--data", str(DATA), "--results", str(tmp_path / "a")]
    res = runner.invoke(bizgeneval_app, [*args, "--out", str(tmp_path / "s"), "--missing", "zero"])
    assert res.exit_code == 0 and "missing 12 (zero: 0 error, 0 withheld, 12 without" in res.output
    assert "counts_by_domain.csv" in res.output


def test_summarize_reference_rejects_bad_arguments(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="results folder not found"):
        summarize_reference(DATA, tmp_path / "nope")
    with pytest.raises(ValueError, match="skip' or 'zero"):
        summarize_reference(DATA, tmp_path, missing="drop")  # type: ignore[arg-type]
