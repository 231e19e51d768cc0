"""Rescore reads each file once and keeps what did not change, yet re-runs every check:
an edited state file changes its item's decisions and only that item's line. An unchanged
rescore leaves a canonical results.jsonl untouched; one in any other shape is rewritten sorted."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from groundeval.programs import Program, _expressions
from groundeval.programs._expressions import StatesView, ViewCache, _Run, evaluate_expression
from groundeval.programs._loaders import dump_programs_jsonl
from groundeval.programs._rescore import rescore_run
from groundeval.programs._run import write_summary
from groundeval.programs._runner import decide_by_check
from groundeval.programs._views import views_of
from groundeval.state import Decision, Element, ItemResult, ItemUsage, Provenance, StateFile
from groundeval.state._store import RunStore

CHECKS = ["count(elements) == 3", "sum(e.pips for e in elements) >= 6"]


def _program() -> Program:
    ground = {"helper": "boxes", "proposer": "opencv.dice"}
    return Program.model_validate(
        {
            "id": "dice",
            "gates": [{"id": "g0", "ask": "A die?"}],
            "hard": [
                {"id": "c0", "ask": "Three dice?", "ground": ground, "check": CHECKS[0]},
                {"id": "c1", "ask": "Six pips?", "uses": "c0", "check": CHECKS[1]},
                {"id": "d0", "ask": "A table?"},
            ],
        }
    )


def _state(item: str, pips: list[int]) -> StateFile:
    elements = [
        Element(id=k + 1, kind="box", xyxy_px=[10.0 * k, 0, 10.0 * k + 8, 8], fields={"pips": p})
        for k, p in enumerate(pips)
    ]
    return StateFile(
        item_id=item,
        question_id="c0",
        image_sha256="0" * 64,
        image_size_wh=[64, 16],
        helper="boxes",
        elements=elements,
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )


def _build(root: Path, pips: list[list[int]]) -> RunStore:
    """A run folder as a run leaves it (decisions from the shared decide rule)."""
    store = RunStore(root)
    program = _program()
    store.start({"judge": "scripted"}, dump_programs_jsonl([program]), resume=False)
    for i, counts in enumerate(pips):
        item = f"item-{i}"
        state = _state(item, counts)
        path = store.write_state(state)
        judged = [
            Decision(question_id="g0", kind="gate", outcome="pass", score=1.0, source="judge"),
            Decision(question_id="d0", kind="hard", outcome="fail", score=0.0, source="judge"),
        ]
        checked = [decide_by_check(q, "hard", state, path, {"c0": state}) for q in program.hard[:2]]
        result = ItemResult(
            item_id=item,
            program_id="dice",
            scoring="grounded",
            status="scored",
            decisions=[judged[0], *checked, judged[1]],
            scores={"strict": 0.0, "relaxed": 0.0},
        )
        store.append(result, ItemUsage(item_id=item))
    write_summary(store, store.finalize())
    rescore_run(root)  # the placeholder scores become the protocol's
    return store


def test_an_edited_state_is_rechecked_and_only_its_line_changes(tmp_path: Path) -> None:
    store = _build(tmp_path / "run", [[1, 2, 3], [2, 2, 2], [6, 1, 1]])
    before = store.results_path.read_bytes().split(b"\n")
    summary = (store.root / "summary.json").read_bytes()

    report = rescore_run(store.root)
    assert report.changed == 0 and report.rechecked == 6
    assert store.results_path.read_bytes().split(b"\n") == before
    assert (store.root / "summary.json").read_bytes() == summary

    edited = _state("item-1", [2, 2])  # a hand-corrected state: one die fewer
    store.write_state(edited)
    report = rescore_run(store.root)
    assert report.changed == 1 and report.rechecked == 6
    after = store.results_path.read_bytes().split(b"\n")
    assert [a == b for a, b in zip(before, after, strict=True)] == [True, False, True, True]
    changed = json.loads(after[1])
    outcomes = {d["question_id"]: d["outcome"] for d in changed["decisions"]}
    assert outcomes == {"g0": "pass", "c0": "fail", "c1": "fail", "d0": "fail"}
    assert changed["decisions"][1]["reason"] == (
        "count(elements) == 3 with elements: 2 (#1, #2); count(elements)=2 → fail"
    )
    assert (store.root / "summary.json").read_bytes() != summary


def test_a_line_in_another_spelling_is_kept_as_written(tmp_path: Path) -> None:
    """An unchanged item is written back as the bytes it was read as, not re-encoded."""
    store = _build(tmp_path / "run", [[1, 2, 3]])
    record = json.loads(store.results_path.read_bytes())
    spelled = (json.dumps(record, indent=None, ensure_ascii=True) + "\n").encode()
    store.results_path.write_bytes(spelled)
    assert rescore_run(store.root).changed == 0
    assert store.results_path.read_bytes() == spelled


EXPRESSIONS = [
    "count(elements) == 3",
    "sum(e.pips for e in elements) == 6 and image_w > image_h",
    "0 < count(elements) < 9 != 8",
    "sorted(e.pips for e in elements)[1:3] == [2, 3]",
    "[a for a, b in [(1, 2), (3, 4)]] == [1, 3]",
    "states['h1'][0].pips == 1 and 'h1' in states",
    "max(e.pips for e in states['h1']) / 4",
    "all(e.w == 8 for e in elements) and state_status == 'grounded'",
]


def _names(state: StateFile) -> dict[str, Any]:
    cache = ViewCache()
    return {
        "elements": cache.of(state.elements),
        "image_w": 64,
        "image_h": 16,
        "state_status": "grounded",
        "states": StatesView.of_elements({"h1": state.elements}, cache),
    }


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_the_compiled_function_and_the_scope_code_agree(text: str) -> None:
    """Evaluation calls a function of the names; the scope-evaluated code it replaces
    (still used when a name is missing) gives the same value and the same trace."""
    state = _state("i", [1, 2, 3])
    compiled = _expressions._compiled(text)
    by_function = compiled.function(*(_names(state)[n] for n in compiled.params), _Run(1.0))
    scope = {**_names(state), **compiled.helpers, "_ge_run": _Run(1.0)}
    assert by_function == eval(compiled.code, scope)  # the code parse_expression accepted
    assert compiled.helpers["__builtins__"] == {}
    assert compiled.function.__globals__ == compiled.helpers  # no builtins, no names
    score, trace = evaluate_expression(text, _names(state))
    names = _names(state)
    names["unused"] = object()  # extra names change nothing
    assert evaluate_expression(text, names) == (score, trace)


def test_descriptions_are_cached_only_for_the_view_cache_lists() -> None:
    state = _state("i", [1, 2, 3])
    cached = ViewCache().of(state.elements)
    plain = views_of(state.elements)
    text = "count(elements) == 3"
    assert (
        evaluate_expression(text, {"elements": cached})[1]
        == (evaluate_expression(text, {"elements": plain})[1])
    )
    plain.pop()  # a caller's own list may change between evaluations: described afresh
    assert "elements: 2 (#1, #2)" in evaluate_expression(text, {"elements": plain})[1]


def test_the_decision_on_record_comes_back_only_when_nothing_differs() -> None:
    state = _state("i", [1, 2, 3])
    q = _program().hard[0]
    fresh = decide_by_check(q, "hard", state, "state/i/c0.json", {"c0": state})
    again = fresh.model_copy()
    assert decide_by_check(q, "hard", state, "state/i/c0.json", {"c0": state}, None, again) is again
    for change in ({"reason": "edited"}, {"state_file": "state/j/c0.json"}, {"note": "n"}):
        other = fresh.model_copy(update=change)
        got = decide_by_check(q, "hard", state, "state/i/c0.json", {"c0": state}, None, other)
        assert got is not other and got == fresh


# ----------------------------------------------------------------- results.jsonl shapes


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().split(b"\n")[:-1]


def test_a_canonical_file_is_left_untouched(tmp_path: Path) -> None:
    store = _build(tmp_path / "run", [[1, 2, 3], [2, 2, 2]])
    before = store.results_path.read_bytes()
    inode = os.stat(store.results_path).st_ino
    assert rescore_run(store.root).changed == 0
    assert store.results_path.read_bytes() == before
    assert os.stat(store.results_path).st_ino == inode  # not even rewritten in place


@pytest.mark.parametrize("shape", ["blank", "superseded", "unsorted", "torn"])
def test_a_file_in_another_shape_is_rewritten_sorted(tmp_path: Path, shape: str) -> None:
    store = _build(tmp_path / "run", [[1, 2, 3], [2, 2, 2], [6, 1, 1]])
    canonical = store.results_path.read_bytes()
    a, b, c = _lines(store.results_path)
    shaped = {
        "blank": a + b"\n\n" + b + b"\n" + c + b"\n",
        "superseded": a + b"\n" + a + b"\n" + b + b"\n" + c + b"\n",
        "unsorted": b + b"\n" + a + b"\n" + c + b"\n",
        "torn": a + b"\n" + b + b"\n" + c,
    }[shape]
    store.results_path.write_bytes(shaped)
    assert rescore_run(store.root).changed == 0
    assert store.results_path.read_bytes() == canonical
