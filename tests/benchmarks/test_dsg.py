from __future__ import annotations

import asyncio
import csv
import json
from collections import defaultdict
from functools import cache
from pathlib import Path

import pytest
from scipy.stats import kendalltau, spearmanr
from typer.testing import CliRunner

from groundeval.benchmarks.cli import dsg_app
from groundeval.benchmarks.dsg import (
    RecordedAnswersJudge,
    correlate,
    graph_program,
    read_graphs,
)
from groundeval.programs._runner import ItemInput, grade_item
from tests._support.paths import DATA

DSG = DATA / "dsg"
ANNS, LIKERT = DSG / "dsg-1k-anns.csv", DSG / "tifa160-likert-anns.csv"

# DSG's published TIFA160 table (j-min/DSG README, tifa160_correlation.py output)
PUBLISHED = {
    ("mplug_dsg.csv", True): (0.463, 0.380),
    ("mplug_dsg.csv", False): (0.464, 0.378),
    ("instructblip_dsg.csv", True): (0.442, 0.364),
    ("instructblip_dsg.csv", False): (0.436, 0.355),
}


def _reference(
    answers_file: str, with_dependencies: bool, skip_unanswered: bool = False
) -> tuple[float, float]:
    """The reference rules written out plainly with the csv module.

    ``skip_unanswered``: an image without answers is left out (groundeval's default)
    instead of scoring 0 (the reference).
    """

    def rows(path: Path) -> list[dict[str, str]]:
        with path.open(newline="") as handle:
            return list(csv.DictReader(handle))

    deps: dict[str, dict[int, list[int]]] = defaultdict(dict)
    raw: dict[str, dict[int, str]] = defaultdict(dict)
    for r in rows(ANNS):
        raw[r["item_id"]][int(r["proposition_id"])] = r["dependency"]
    for item, d in raw.items():
        try:
            deps[item] = {q: [int(x) for x in v.split(",")] for q, v in d.items()}
        except ValueError:
            deps[item] = {}  # not integers: the whole item has no dependencies
    answers: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for r in rows(DSG / answers_file):
        if r["dsg_prompt_split"] == "tifa160":
            answers[(r["item_id"], r["t2i_model"])][int(r["question_id"])] = r["answer"]
    likert: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows(LIKERT):
        likert[(r["item_id"], r["t2i_model"])].append(float(r["answer"]))
    ours, human = [], []
    for key in sorted(likert):
        got = answers.get(key)
        if not got and skip_unanswered:
            continue
        if not got:
            score = 0.0
        else:
            s = {q: float(a == "yes") for q, a in got.items()}
            after = dict(s)
            if with_dependencies:
                for q, parents in deps[key[0]].items():
                    if any(p != 0 and s.get(p, 0.0) == 0 for p in parents):
                        after[q] = 0.0
            score = sum(after[q] for q in s) / len(s)
        ours.append(score)
        human.append(sum(likert[key]) / len(likert[key]))
    return spearmanr(ours, human)[0], kendalltau(ours, human)[0]


@cache
def _correlate(answers_file: str, dependencies: str, missing: str = "zero") -> dict:
    return correlate(ANNS, DSG / answers_file, LIKERT, dependencies=dependencies, missing=missing)  # type: ignore[arg-type]


@pytest.mark.parametrize("answers_file", ["mplug_dsg.csv", "instructblip_dsg.csv"])
def test_correlate_reproduces_published_table(answers_file: str) -> None:
    """DSG scores an image without recorded answers 0: ``missing="zero"`` reproduces it."""
    gate = _correlate(answers_file, "gate")
    none = _correlate(answers_file, "none")
    for result, with_deps in ((gate, True), (none, False)):
        rho, tau = PUBLISHED[(answers_file, with_deps)]
        assert (round(result["spearman"], 3), round(result["kendall"], 3)) == (rho, tau)
        ref_rho, ref_tau = _reference(answers_file, with_deps)
        assert result["spearman"] == pytest.approx(ref_rho, abs=1e-6)
        assert result["kendall"] == pytest.approx(ref_tau, abs=1e-6)
        assert result["n"] == 800 and result["questions"] == 4645
    # gating never asks a child after its parent's "no", and loses nothing
    assert gate["skipped"] > 150 and gate["asked"] + gate["skipped"] == gate["questions"]
    assert none["skipped"] == 0 and none["asked"] == none["questions"]
    # the 5 images with no recorded answer are errors, zeroed only because we asked, and counted
    assert gate["errors"] == none["errors"] == len(gate["error_items"]) == 5
    assert gate["missing_convention"] == "zero"


@pytest.mark.parametrize("dependencies", ["gate", "none"])
def test_unanswered_images_are_errors_left_out_by_default(dependencies: str) -> None:
    skip = _correlate("mplug_dsg.csv", dependencies, "skip")
    zero = _correlate("mplug_dsg.csv", dependencies, "zero")
    assert skip["n"] == 795 and skip["errors"] == 5 and skip["error_items"] == zero["error_items"]
    ref_rho, ref_tau = _reference("mplug_dsg.csv", dependencies == "gate", skip_unanswered=True)
    assert skip["spearman"] == pytest.approx(ref_rho, abs=1e-6)
    assert skip["kendall"] == pytest.approx(ref_tau, abs=1e-6)
    assert skip["spearman"] != pytest.approx(zero["spearman"], abs=1e-4)


def test_transitive_gating_skips_more_and_differs_from_reference() -> None:
    gate = _correlate("mplug_dsg.csv", "gate")
    chain = _correlate("mplug_dsg.csv", "transitive")
    assert chain["skipped"] > gate["skipped"]
    assert round(chain["spearman"], 3) != round(gate["spearman"], 3)


def _graph(tmp_path: Path, dependency_rows: list[tuple[int, str]]) -> Path:
    path = tmp_path / "anns.csv"
    with path.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["item_id", "text", "proposition_id", "dependency", "question_natural_language"])
        for qid, dep in dependency_rows:
            w.writerow(["toy_1", "a cat on a red mat", qid, dep, f"question {qid}?"])
    return path


def test_gating_through_the_runner_never_asks_a_child_of_a_no(tmp_path: Path) -> None:
    # 1 cat, 2 mat, 3 cat is grey (1), 4 mat is red (2), 5 cat on mat (1,2), 6 pose (3)
    anns = _graph(tmp_path, [(1, "0"), (2, "0"), (3, "1"), (4, "2"), (5, "1,2"), (6, "3")])
    graph = read_graphs(anns)["toy_1"]
    program = graph_program(graph, "gate")
    assert program.question("6").requires == ["3"]
    assert program.question("3").requires == [] and program.question("3").tags["parents"] == "1"
    answers = {
        ("toy_1:m", "1"): "no",
        ("toy_1:m", "2"): "yes",
        ("toy_1:m", "3"): "yes",
        ("toy_1:m", "4"): "no bananas",
        ("toy_1:m", "5"): "yes",
        ("toy_1:m", "6"): "yes",
    }
    judge = RecordedAnswersJudge(answers)
    result, _ = asyncio.run(grade_item(ItemInput("toy_1:m", program, []), judge=judge))
    outcome = {d.question_id: (d.outcome, d.source) for d in result.decisions}
    assert outcome["5"] == ("fail", "skipped")  # leaf child of a "no"
    assert outcome["3"] == ("pass", "judge")  # a parent: asked, zeroed by the protocol
    assert outcome["6"] == ("pass", "judge")  # its parent 3 said yes: one level, like DSG
    assert outcome["4"] == ("fail", "judge")  # "no bananas" is not "yes"
    # scores: 1:0 2:1 3:0(zeroed) 4:0 5:0 6:1 -> 2/6
    assert result.scores["score"] == pytest.approx(2 / 6)
    assert judge.asked == 5 and judge.calls == 2
    chain = graph_program(graph, "transitive")
    judge = RecordedAnswersJudge(answers)
    result, _ = asyncio.run(grade_item(ItemInput("toy_1:m", chain, []), judge=judge))
    assert result.scores["score"] == pytest.approx(1 / 6) and judge.asked == 3


def test_non_integer_dependencies_mean_no_dependencies(tmp_path: Path) -> None:
    anns = _graph(tmp_path, [(1, "0"), (2, "1"), (3, "1, right"), (4, "4")])
    graph = read_graphs(anns)["toy_1"]
    assert not graph.valid_dependencies
    assert all(not graph_program(graph, m).question("2").requires for m in ("gate", "transitive"))


def test_cli_correlate_prints_one_json_object(tmp_path: Path) -> None:
    anns = _graph(tmp_path, [(1, "0"), (2, "1")])
    answers = tmp_path / "answers.csv"
    likert = tmp_path / "likert.csv"
    rows = [("m1", "yes", "yes", 5), ("m2", "yes", "no", 3), ("m3", "no", "yes", 1),
            ("m4", "yes", "yes", 4)]  # fmt: skip
    with answers.open("w", newline="") as a, likert.open("w", newline="") as h:
        wa, wh = csv.writer(a), csv.writer(h)
        wa.writerow(["dsg_prompt_split", "t2i_model", "item_id", "question_id", "answer"])
        wh.writerow(["dsg_prompt_split", "t2i_model", "item_id", "answer"])
        for model, first, second, rating in rows:
            wa.writerow(["toy", model, "toy_1", 1, first])
            wa.writerow(["toy", model, "toy_1", 2, second])
            wh.writerow(["toy", model, "toy_1", rating])
    base = ["correlate", "--anns", str(anns), "--answers", str(answers), "--likert", str(likert),
            "--split", "toy", "--json"]  # fmt: skip
    gated = CliRunner().invoke(dsg_app, base)
    assert gated.exit_code == 0, gated.output
    data = json.loads(gated.stdout)
    assert {"spearman", "kendall", "n", "questions", "asked", "skipped"} <= set(data)
    assert (data["n"], data["questions"], data["asked"], data["skipped"]) == (4, 8, 7, 1)
    assert data["errors"] == 0 and data["missing_convention"] == "skip"
    # scores 1, .5, 0, 1 against 5, 3, 1, 4
    assert data["spearman"] == pytest.approx(spearmanr([1, 0.5, 0, 1], [5, 3, 1, 4])[0])
    flat = json.loads(CliRunner().invoke(dsg_app, [*base, "--no-dependencies"]).stdout)
    assert flat["skipped"] == 0 and flat["asked"] == 8
    bad = CliRunner().invoke(dsg_app, [*base[:-1], "--dependencies", "sideways"])
    assert bad.exit_code == 1 and "gate, transitive" in bad.output


def test_a_question_without_recorded_answer_is_an_error_not_a_no(tmp_path: Path) -> None:
    anns = _graph(tmp_path, [(1, "0"), (2, "0"), (3, "1")])
    program = graph_program(read_graphs(anns)["toy_1"], "gate")
    answers = {("toy_1:m", "1"): "yes", ("toy_1:m", "3"): "yes"}  # no row for question 2
    result, _ = asyncio.run(
        grade_item(ItemInput("toy_1:m", program, []), judge=RecordedAnswersJudge(answers))
    )
    outcome = {d.question_id: d for d in result.decisions}
    assert outcome["2"].outcome == "error" and "no recorded answer" in outcome["2"].reason
    assert (result.status, result.scores["score"]) == ("error", None)
    assert result.error and "2:" in result.error
    # an image with no rows at all: every question is an error; a gated child carries it
    result, _ = asyncio.run(
        grade_item(ItemInput("toy_1:x", program, []), judge=RecordedAnswersJudge(answers))
    )
    assert result.status == "error"
    assert {d.outcome for d in result.decisions} == {"error"}
