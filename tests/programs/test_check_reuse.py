"""What a check works out once and reuses (rescore speed) never changes what it decides."""

from __future__ import annotations

from collections.abc import Iterator
from functools import reduce
from pathlib import Path

import pytest

from groundeval.programs import _checks
from groundeval.programs._checks import CheckError, register_check, run_check
from groundeval.programs._expressions import ViewCache
from groundeval.programs._model import NamedCheck
from groundeval.programs._run import _total_usage, problem_counts, problems_section
from groundeval.state import (
    Decision,
    Element,
    ItemResult,
    ItemUsage,
    Provenance,
    RunStore,
    StateFile,
    Usage,
)


def _state(question_id: str, n: int) -> StateFile:
    return StateFile(
        item_id="item-1",
        question_id=question_id,
        image_sha256="0" * 64,
        image_size_wh=[300, 200],
        helper="boxes",
        elements=[
            Element(id=i + 1, kind="box", xyxy_px=[10 * i, 0, 10 * i + 5, 5]) for i in range(n)
        ],
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


@pytest.fixture
def scratch() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        _checks._REGISTRY.pop(name, None)


def test_named_check_arguments_checked_again_for_a_new_function(scratch: list[str]) -> None:
    scratch.append("test.reuse_at_least")

    @register_check("test.reuse_at_least")
    def at_least(elements, state, *, n: int):  # type: ignore[no-untyped-def]
        return float(len(elements) >= n), f"{len(elements)} >= {n}"

    check = NamedCheck(name="test.reuse_at_least", args={"n": 3})
    state = _state("h1", 4)
    assert run_check(check, state).score == 1.0
    assert run_check(check, state).trace == "4 >= 3"  # the same object: arguments known good
    _checks._REGISTRY.pop("test.reuse_at_least")

    @register_check("test.reuse_at_least")
    def renamed(elements, state, *, m: int):  # type: ignore[no-untyped-def]
        return 1.0, "m"

    with pytest.raises(CheckError, match="missing a required argument: 'm'"):
        run_check(check, state)  # a new function under the name: its arguments checked again


def test_expressions_sharing_views_decide_as_alone() -> None:
    own, other = _state("h1", 3), _state("h2", 2)
    extra = {"h2": other}
    texts = ["count(elements) == 3", "count(states['h2']) == 2", "image_w == 300"]
    views = ViewCache()
    shared = [run_check(t, own, extra_states=extra, views=views) for t in texts]
    alone = [run_check(t, own, extra_states=extra) for t in texts]
    assert shared == alone
    assert [t.score for t in shared] == [1.0, 1.0, 1.0]
    with pytest.raises(CheckError, match="no grounding state for question 'h2'"):
        run_check("count(states['h2']) == 2", own)


def test_usage_summed_as_numbers_equals_chained_add(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.start({"judge": "scripted"}, "", resume=False)
    usages = [
        Usage(calls=i, cached_calls=i % 2, input_tokens=7 * i, cost_usd=0.1 * i + 0.07)
        for i in range(1, 8)
    ]
    for i, usage in enumerate(usages):
        result = ItemResult(item_id=f"i{i}", program_id="p", scoring="grounded", status="scored")
        store.append(result, ItemUsage(item_id=f"i{i}", usage=usage))
    assert _total_usage(store) == reduce(Usage.add, usages, Usage()).model_copy(
        update={"seconds": 0.0}
    )


def test_problem_counts_in_one_pass() -> None:
    def decision(q: str, outcome: str) -> Decision:
        return Decision(
            question_id=q, kind="hard", outcome=outcome, score=0.0, source="check", reason=q
        )

    results = [
        ItemResult(
            item_id="a",
            program_id="p",
            scoring="grounded",
            status="withheld",
            decisions=[decision("q1", "withheld"), decision("q2", "error")],
        ),
        ItemResult(item_id="b", program_id="p", scoring="grounded", status="error", error="x"),
        ItemResult(
            item_id="c",
            program_id="p",
            scoring="grounded",
            status="scored",
            decisions=[decision("q1", "pass"), decision("q2", "error")],
        ),
    ]
    expected = {
        "items": 3,
        "error_items": 1,
        "error_decisions": 2,
        "withheld_items": 1,
        "withheld_decisions": 1,
        "pending_items": 0,
        "pending_decisions": 0,
    }
    assert problem_counts(results) == expected
    section = problems_section(results)
    assert section["overall"] == expected
    assert [(r["outcome"], r["count"]) for r in section["reasons"]] == [
        ("error", 2),
        ("error", 1),
        ("withheld", 1),
    ]
