"""Issue 12.3: in every protocol an unanswered question makes the item error, never a zero.

Same decisions through all four protocols: one question is ``error``, ``withheld``,
``pending`` or has no decision at all. The item gets that status and no scores,
and a summary leaves it out of its cell's mean and counts it there.
"""

from __future__ import annotations

import pytest

from groundeval.programs._model import Program, Question
from groundeval.programs.scoring import get_protocol
from groundeval.state import Decision, ItemResult

TAGS = {"grounded": {}, "checklist": {"track": "easy"}, "rubric": {"modality": "image"}}
SCORE_KEY = {"grounded": "relaxed", "checklist": "all", "rubric": "score", "dependency": "score"}


def _program(scoring: str) -> Program:
    tags = TAGS.get(scoring, {})
    hard = [Question(id=f"q{i}", ask=f"q{i}?", tags=tags) for i in range(1, 4)]
    return Program(id="p", scoring=scoring, hard=hard)  # type: ignore[arg-type]


def _decisions(bad: str) -> list[Decision]:
    out = []
    for i in range(1, 4):
        outcome = bad if i == 2 else "pass"
        if outcome == "absent":
            continue
        score = 1.0 if outcome == "pass" else 0.0
        out.append(
            Decision(question_id=f"q{i}", kind="hard", outcome=outcome, score=score, source="judge")
        )
    return out


@pytest.mark.parametrize("scoring", ["grounded", "checklist", "rubric", "dependency"])
@pytest.mark.parametrize(
    ("bad", "status"),
    [("error", "error"), ("absent", "error"), ("withheld", "withheld"), ("pending", "pending")],
)
def test_unanswered_question_is_never_scored(scoring: str, bad: str, status: str) -> None:
    protocol = get_protocol(scoring)
    scored = protocol.score_item(_program(scoring), _decisions(bad), None)
    assert scored.status == status
    assert all(v is None for v in scored.scores.values()), scored.scores
    # the same item with a plain "no" is scored, and lower than all-yes
    no = protocol.score_item(_program(scoring), _decisions("fail"), None)
    yes = protocol.score_item(_program(scoring), _decisions("pass"), None)
    assert no.status == yes.status == "scored"
    assert (no.scores[SCORE_KEY[scoring]] or 0) < (yes.scores[SCORE_KEY[scoring]] or 0)


@pytest.mark.parametrize("scoring", ["grounded", "checklist", "rubric", "dependency"])
def test_summary_leaves_unscored_items_out_and_counts_them(scoring: str) -> None:
    protocol = get_protocol(scoring)
    tags = {"domain": "chart", "dimension": "text", "task_type": "t", "axis": "a"}
    results = []
    for n, bad in enumerate(["pass", "fail", "error", "withheld", "pending"]):
        scored = protocol.score_item(_program(scoring), _decisions(bad), None)
        results.append(
            ItemResult(
                item_id=f"i{n}",
                program_id="p",
                scoring=scoring,
                tags=tags,
                status=scored.status,
                decisions=_decisions(bad),
                scores=scored.scores,
            )
        )
    yes = results[0].scores[SCORE_KEY[scoring]]
    no = results[1].scores[SCORE_KEY[scoring]]
    assert yes is not None and no is not None
    summary = protocol.summarize(results)
    if scoring == "checklist":
        cell = summary["by_domain"]["chart"]
        assert cell["error_score"] == pytest.approx((yes + no) / 2)
        counts = {r["Split"]: r["Chart"] for r in summary["cell_counts"]["by_domain"]}
        assert (counts["errors"], counts["withheld"], counts["pending"]) == ("1", "1", "1")
    elif scoring == "dependency":
        cell = summary["by_tag_counts"]["domain"]["chart"]
        assert cell["score"] == pytest.approx((yes + no) / 2, abs=1e-4)
    elif scoring == "rubric":
        cell = summary["by_task"]["t"]
        assert cell["score"] == pytest.approx((yes + no) / 2, abs=1e-4)
    else:
        cell = summary["by_tag"]["domain"]["chart"]
        assert cell["relaxed"] == pytest.approx((yes + no) / 2, abs=1e-4)
    assert (cell["errors"], cell["withheld"], cell["pending"]) == (1, 1, 1)
