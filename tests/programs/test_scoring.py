from __future__ import annotations

import pytest

from groundeval.programs._model import Program, Question
from groundeval.programs.scoring import (
    ChecklistScoring,
    DependencyScoring,
    RubricScoring,
    get_protocol,
)
from groundeval.state import Decision, ItemResult


def _d(qid: str, outcome: str, source: str = "judge") -> Decision:
    score = 1.0 if outcome == "pass" else 0.0
    return Decision(question_id=qid, kind="hard", outcome=outcome, score=score, source=source)


def _checklist_program(n_easy: int = 10, n_hard: int = 10) -> Program:
    hard = [
        Question(id=str(i), ask=f"q{i}?", tags={"track": "easy" if i <= n_easy else "hard"})
        for i in range(1, n_easy + n_hard + 1)
    ]
    return Program(id="slides_text_1", scoring="checklist", hard=hard,
                   tags={"domain": "slides", "dimension": "text"})  # fmt: skip


def _outcomes(easy_bad: dict[str, str], hard_bad: dict[str, str]) -> list[Decision]:
    """Decisions for questions 1-20: pass unless listed (easy 1-10, hard 11-20)."""
    bad = {**easy_bad, **hard_bad}
    return [
        _d(str(i), bad.get(str(i), "pass")) for i in range(1, 21) if bad.get(str(i)) != "absent"
    ]


@pytest.mark.parametrize(
    ("easy_bad", "hard_bad", "expected"),
    [
        ({}, {}, (1.0, 1.0, 1.0)),
        # 1 easy wrong answer: easy 1-.2=.8, all 1-.1=.9
        ({"3": "fail"}, {}, (0.8, 1.0, 0.9)),
        # 3 hard wrong answers -> .4; all .7
        ({}, {"11": "fail", "12": "fail", "13": "fail"}, (1.0, 0.4, 0.7)),
        # 6 easy wrong -> max(0, 1-1.2)=0; 6 of 20 -> .4
        ({str(i): "fail" for i in range(1, 7)}, {}, (0.0, 1.0, 0.4)),
        # 11 wrong of 20 -> 0 on all
        ({str(i): "fail" for i in range(1, 11)}, {"20": "fail"}, (0.0, 0.8, 0.0)),
    ],
)
def test_checklist_track_scores(easy_bad: dict, hard_bad: dict, expected: tuple) -> None:
    scored = ChecklistScoring().score_item(
        _checklist_program(), _outcomes(easy_bad, hard_bad), None
    )
    assert scored.status == "scored"
    got = (scored.scores["easy"], scored.scores["hard"], scored.scores["all"])
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("bad", "status"),
    [
        ({"12": "error"}, "error"),  # the judge did not answer
        ({"13": "absent"}, "error"),  # no decision at all
        ({"20": "withheld"}, "withheld"),
        ({"3": "fail", "12": "error", "20": "withheld"}, "error"),  # error wins
    ],
)
def test_checklist_unanswered_question_is_never_a_zero(bad: dict, status: str) -> None:
    scored = ChecklistScoring().score_item(_checklist_program(), _outcomes(bad, {}), None)
    assert scored.status == status
    assert all(v is None for v in scored.scores.values())


def test_checklist_gate_failure_and_bad_tags() -> None:
    scored = ChecklistScoring().score_item(_checklist_program(), _outcomes({}, {}), "g1")
    assert scored.scores["all"] == 0.0
    bad = Program(id="x", scoring="checklist", hard=[Question(id="1", ask="q?")])
    with pytest.raises(ValueError, match=r"track: easy\|hard"):
        ChecklistScoring().score_item(bad, [_d("1", "pass")], None)
    with pytest.raises(ValueError, match="skip"):
        ChecklistScoring("drop")  # type: ignore[arg-type]


def _checklist_result(item: str, domain: str, dimension: str, scores: dict | None) -> ItemResult:
    return ItemResult(
        item_id=item, program_id=item, scoring="checklist",
        tags={"domain": domain, "dimension": dimension},
        status="scored" if scores else "error", scores=scores or {},
    )  # fmt: skip


def test_checklist_summary_tables_and_missing_conventions() -> None:
    results = [
        _checklist_result(
            "a", "slides", "text", {"easy": 1.0, "hard": 0.6, "all": 0.8, "accuracy": 0.9}
        ),
        _checklist_result(
            "b", "slides", "layout", {"easy": 0.4, "hard": 0.2, "all": 0.3, "accuracy": 0.5}
        ),
        _checklist_result(
            "c", "chart", "text", {"easy": 0.8, "hard": 0.8, "all": 0.8, "accuracy": 0.9}
        ),
        _checklist_result("d", "chart", "text", None),  # no image: never graded
        # a judge error on one question: error, no scores, whatever the other answers
        _checklist_result("e", "chart", "layout", None).model_copy(
            update={"decisions": [_d("1", "pass"), _d("2", "error")], "error": "2: timeout"}
        ),
        _checklist_result("f", "slides", "text", None).model_copy(
            update={"status": "withheld", "decisions": [_d("1", "withheld")]}
        ),
    ]
    skip = ChecklistScoring().summarize(results)
    by_domain = {row["Split"]: row for row in skip["tables"]["by_domain"]}
    # slides all = (.8+.3)/2 = .55; chart all = .8; Average = .675; empty columns stay empty
    assert by_domain["all"]["Slides"] == "0.5500" and by_domain["all"]["Chart"] == "0.8000"
    assert by_domain["all"]["Average"] == "0.6750" and by_domain["all"]["Poster"] == ""
    assert skip["missing_items"] == ["d", "e", "f"] and skip["total_scored"] == 3
    assert skip["left_out"] == {"errors": 1, "withheld": 1, "pending": 0, "missing": 1}
    assert "2: timeout" in skip["missing_reasons"]["e"]
    # every cell shows what it left out: chart has 1 error + 1 never graded, slides 1 withheld
    counts = {row["Split"]: row for row in skip["cell_counts"]["by_domain"]}
    assert (counts["errors"]["Chart"], counts["missing"]["Chart"]) == ("1", "1")
    assert (counts["withheld"]["Slides"], counts["errors"]["Slides"]) == ("1", "0")
    assert counts["errors"]["Average"] == "1" and counts["missing"]["Poster"] == "0"
    chart = skip["by_domain"]["chart"]
    assert (chart["count"], chart["errors"], chart["missing"], chart["left_out_of_means"]) == (
        1,
        1,
        1,
        2,
    )
    zero = ChecklistScoring("zero").summarize(results)
    by_dim = {row["Split"]: row for row in zero["tables"]["by_dimension"]}
    # text: a .8, c .8, d 0, f 0 -> .4; layout: b .3, e 0 -> .15; Average .275
    assert by_dim["all"]["Text"] == "0.4000" and by_dim["all"]["Layout"] == "0.1500"
    assert by_dim["all"]["Average"] == "0.2750"
    assert zero["missing_convention"] == "zero" and zero["by_domain"]["chart"]["count"] == 3
    assert zero["total_scored"] == 3 and zero["left_out"]["errors"] == 1
    rows = ChecklistScoring().summary_rows(results)
    assert [(r["table"], r["Split"]) for r in rows] == [
        (t, s) for t in ("domain", "dimension")
        for s in ("easy", "hard", "all", "errors", "withheld", "pending", "missing")
    ]  # fmt: skip


def _rubric_program() -> Program:
    hard = [
        Question(id="i1", ask="shows a cat", tags={"modality": "image"}),
        Question(id="i2", ask="cat is orange", tags={"modality": "image"}),
        Question(id="i3", ask="two panels", tags={"modality": "image"}),
        Question(id="t1", ask="names the breed", tags={"modality": "text"}),
    ]
    return Program(id="u1", scoring="rubric", hard=hard, tags={"task_type": "story"})


@pytest.mark.parametrize(
    ("outcomes", "status", "expected"),
    [
        ({"i1": "pass", "i2": "pass", "i3": "pass", "t1": "pass"}, "scored", (100.0, 100.0, 100.0)),
        ({"i1": "pass", "i2": "fail", "i3": "pass", "t1": "fail"}, "scored", (50.0, 200 / 3, 0.0)),
        (
            {"i1": "fail", "i2": "fail", "i3": "pass", "t1": "pass"},
            "scored",
            (50.0, 100 / 3, 100.0),
        ),
        ({"i1": "pass", "i2": "error", "i3": "pass", "t1": "pass"}, "error", (None, None, None)),
    ],
)
def test_rubric_scores(outcomes: dict, status: str, expected: tuple) -> None:
    decisions = [_d(q, o) for q, o in outcomes.items()]
    scored = RubricScoring().score_item(_rubric_program(), decisions, None)
    assert scored.status == status
    got = (scored.scores["score"], scored.scores["image"], scored.scores["text"])
    assert got == pytest.approx(expected) if status == "scored" else got == expected


def test_rubric_summary_per_task() -> None:
    def res(item: str, task: str, score: float, image: float, text: float | None) -> ItemResult:
        scores = {"score": score, "image": image, "text": text}
        return ItemResult(
            item_id=item, program_id=item, scoring="rubric", tags={"task_type": task},
            status="scored", scores=scores,
        )  # fmt: skip

    results = [res("a", "story", 50.0, 40.0, 100.0), res("b", "story", 100.0, 100.0, None),
               res("c", "diagram", 25.0, 0.0, 50.0)]  # fmt: skip
    summary = RubricScoring().summarize(results)
    assert summary["overall"]["score"] == pytest.approx((50 + 100 + 25) / 3, abs=1e-4)
    assert summary["overall"]["text"] == 75.0  # b has no text criterion
    assert summary["by_task"]["story"]["score"] == 75.0
    assert summary["task_mean"] == pytest.approx((75 + 25) / 2)


def _dsg_program(requires: bool) -> Program:
    def q(qid: str, parents: list[str]) -> Question:
        if requires:
            return Question(id=qid, ask=f"{qid}?", requires=parents)
        tags = {"parents": ",".join(parents)} if parents else {}
        return Question(id=qid, ask=f"{qid}?", tags=tags)

    hard = [q("1", []), q("2", []), q("3", ["1"]), q("4", ["1", "2"]), q("5", ["3"])]
    return Program(id="d1", scoring="dependency", hard=hard)


@pytest.mark.parametrize(
    ("requires", "outcomes", "expected"),
    [
        # all yes: 5/5
        (False, {"1": "pass", "2": "pass", "3": "pass", "4": "pass", "5": "pass"}, 1.0),
        # 1 no: 3 and 4 zeroed (one level); 5 keeps its own yes since 3 said yes -> 2/5
        (False, {"1": "fail", "2": "pass", "3": "pass", "4": "pass", "5": "pass"}, 0.4),
        # gated run: 3, 4 skipped after 1's no, 5 skipped after 3 -> 1/5 (only 2)
        (True, {"1": "fail", "2": "pass", "3": "skip", "4": "skip", "5": "skip"}, 0.2),
        # an error is neither yes nor no: the item is error, never 0 for that question
        (False, {"1": "pass", "2": "error", "3": "pass", "4": "pass", "5": "pass"}, "error"),
        # a question with no decision is unanswered too
        (False, {"1": "pass", "2": "pass", "3": "pass", "4": "pass"}, "error"),
        # a child skipped after its parent's error carries the error
        (True, {"1": "error", "2": "pass", "3": "skip-error", "4": "skip-error", "5": "skip-error"},
         "error"),
        (False, {"1": "pass", "2": "pass", "3": "pass", "4": "pass", "5": "withheld"}, "withheld"),
    ],
)  # fmt: skip
def test_dependency_scores(requires: bool, outcomes: dict, expected: float | str) -> None:
    def made(q: str, o: str) -> Decision:
        if o.startswith("skip"):
            return _d(q, "error" if o == "skip-error" else "fail", "skipped")
        return _d(q, o)

    decisions = [made(q, o) for q, o in outcomes.items()]
    scored = DependencyScoring().score_item(_dsg_program(requires), decisions, None)
    if isinstance(expected, str):
        assert (scored.status, scored.scores["score"]) == (expected, None)
    else:
        assert scored.status == "scored"
        assert scored.scores["score"] == pytest.approx(expected)


def test_dependency_summary_counts_errors_per_cell() -> None:
    decisions = [_d("1", "fail"), _d("2", "pass"), _d("3", "fail", "skipped"), _d("4", "pass")]
    ok = ItemResult(item_id="d1", program_id="d1", scoring="dependency", tags={"split": "x"},
                    status="scored", decisions=decisions, scores={"score": 0.25})  # fmt: skip
    bad = ok.model_copy(
        update={"item_id": "d2", "status": "error", "scores": {"score": None},
                "decisions": [*decisions[:3], _d("4", "error")]}
    )  # fmt: skip
    other = ok.model_copy(update={"item_id": "d3", "tags": {"split": "y"}, "scores": {"score": 1}})
    summary = DependencyScoring().summarize([ok, bad, other])
    assert (summary["asked"], summary["skipped"], summary["answer_errors"]) == (9, 3, 1)
    # the error item is left out of the mean (not a 0) and counted in its cells
    assert summary["score"] == pytest.approx((0.25 + 1) / 2)
    assert summary["overall"]["errors"] == 1 and summary["overall"]["in_mean"] == 2
    assert summary["by_tag"]["split"] == {"x": 0.25, "y": 1.0}
    assert summary["by_tag_counts"]["split"]["x"]["errors"] == 1
    zero = DependencyScoring("zero").summarize([ok, bad, other])
    assert zero["by_tag"]["split"]["x"] == pytest.approx(0.125) and zero["errors"] == 1
    rows = DependencyScoring().summary_rows([ok, bad, other])
    assert [r["errors"] for r in rows] == [1, 1, 0]
    with pytest.raises(ValueError, match="skip"):
        DependencyScoring("drop")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["grounded", "checklist", "rubric", "dependency"])
def test_every_protocol_is_registered(name: str) -> None:
    assert get_protocol(name).name == name


def _grounded_program() -> Program:
    return Program(
        id="g1",
        gates=[Question(id="gate", ask="is there a die?")],
        hard=[
            Question(id="h1", ask="five dice?", weight=1),
            Question(id="h2", ask="sum 17?", weight=3),
        ],
    )


@pytest.mark.parametrize(
    ("decisions", "gate_failed", "status", "strict", "relaxed"),
    [
        # partial marks count in relaxed only: strict is 0 unless every hard question is full
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "fail", 0.5)],
         None, "scored", 0.0, (1 * 1 + 3 * 0.5) / 4),
        # yes/no: h1 yes, h2 no -> relaxed 1/4, strict 0 (used to be strict == relaxed)
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "fail", 0.0)],
         None, "scored", 0.0, 0.25),
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "fail", 0.0), ("h2", "hard", "pass", 1.0)],
         None, "scored", 0.0, 0.75),
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "pass", 1.0)],
         None, "scored", 1.0, 1.0),
        # 0.99 is not full marks
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "pass", 0.99)],
         None, "scored", 0.0, (1 + 3 * 0.99) / 4),
        # a failed gate zeroes both, whatever the hard marks
        ([("gate", "gate", "fail", 0.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "pass", 1.0)],
         "gate", "scored", 0.0, 0.0),
        # an error anywhere: error, no scores
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0), ("h2", "hard", "error", 0.0)],
         None, "error", None, None),
        # a hard question with no decision is not a zero: error
        ([("gate", "gate", "pass", 1.0), ("h1", "hard", "pass", 1.0)], None, "error", None, None),
        ([("gate", "gate", "fail", 0.0)], "gate", "scored", 0.0, 0.0),
        # a withheld gate stops the item before any hard question: withheld, not full marks
        ([("gate", "gate", "withheld", 0.0)], None, "withheld", None, None),
    ],
)  # fmt: skip
def test_grounded_scores(
    decisions: list,
    gate_failed: str | None,
    status: str,
    strict: float | None,
    relaxed: float | None,
) -> None:
    made = [
        Decision(question_id=q, kind=k, outcome=o, score=s, source="check")
        for q, k, o, s in decisions
    ]
    scored = get_protocol("grounded").score_item(_grounded_program(), made, gate_failed)
    assert scored.status == status
    assert scored.scores["strict"] == (None if strict is None else pytest.approx(strict))
    assert scored.scores["relaxed"] == (None if relaxed is None else pytest.approx(relaxed))


def test_grounded_summary_means_strict_below_relaxed_and_counts_left_out_items() -> None:
    def res(item: str, status: str, strict: float | None, relaxed: float | None) -> ItemResult:
        return ItemResult(item_id=item, program_id="g1", scoring="grounded", tags={"axis": "q"},
                          status=status, scores={"strict": strict, "relaxed": relaxed})  # fmt: skip

    results = [
        res("a", "scored", 1.0, 1.0),
        res("b", "scored", 0.0, 0.75),  # one hard question of weight 1 of 4 missed
        res("c", "scored", 0.0, 0.25),
        res("d", "withheld", None, None),
        res("e", "error", None, None),
    ]
    summary = get_protocol("grounded").summarize(results)
    overall = summary["overall"]
    # strict = (1 + 0 + 0) / 3; relaxed = (1 + .75 + .25) / 3; d and e are counted, not zeros
    assert overall["strict"] == pytest.approx(0.3333) and overall["relaxed"] == pytest.approx(
        0.6667
    )
    assert (overall["items"], overall["scored"], overall["withheld"], overall["errors"]) == (
        5,
        3,
        1,
        1,
    )
    assert overall["withheld_rate"] == 0.2 and overall["error_rate"] == 0.2
    assert summary["by_tag"]["axis"]["q"]["errors"] == 1


def test_schemas_state_the_strict_and_relaxed_definitions() -> None:
    from groundeval.state._schemas import load_schema

    program = load_schema("program")
    weight = program["$defs"]["Question"]["properties"]["weight"]["description"]
    assert "strict = gate x 1 only when every hard question has full marks" in weight
    assert "relaxed = gate x sum(w*s) / sum(w)" in weight
    assert "never scored as a 'no'" in program["properties"]["scoring"]["description"]
    scores = load_schema("result")["properties"]["scores"]["description"]
    assert "null unless status is 'scored'" in scores and "strict = gate x 1" in scores
