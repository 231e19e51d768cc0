"""The run store's read side: results parsed once from bytes (kept for a byte-identical
write back), state paths checked without Path objects, every problem naming file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.state import ItemResult, Provenance, StateFile
from groundeval.state._store import RunStore, RunStoreError, record_line


def _result(item: str, note: str = "") -> ItemResult:
    return ItemResult(
        item_id=item, program_id="p", scoring="grounded", status="scored", error=note or None
    )


def _state(store: RunStore) -> str:
    state = StateFile(
        item_id="i 1/x",
        question_id="h1",
        image_sha256="0" * 64,
        image_size_wh=[4, 4],
        helper="boxes",
        status="grounded",
        provenance=Provenance(toolkit_version="test"),
    )
    return store.write_state(state)


def test_result_lines_are_the_bytes_as_stored(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    odd = "\u2028 \u2029 \x85 \r \x1c é"  # what str.splitlines would split on, and UTF-8
    lines = [record_line(_result("a", odd)), record_line(_result("b")), record_line(_result("a"))]
    store.results_path.write_text("".join(lines), encoding="utf-8")
    got = store.result_lines()
    assert [(r.item_id, r.error) for r, _ in got] == [("a", None), ("b", None)]  # latest wins
    assert [line for _, line in got] == [lines[2].encode(), lines[1].encode()]
    assert store.result_lines()[0][1].decode() == lines[2]


def test_blank_and_torn_lines_are_skipped_and_bad_ones_named(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    good = record_line(_result("a"))
    store.results_path.write_text(good + "\u2028 \n" + "\n" + good[:20], encoding="utf-8")
    assert [r.item_id for r in store.results()] == ["a"]  # blank (any space) and torn: skipped
    store.results_path.write_bytes(good.encode() + b'{"item_id": "\xff"}\n' + good.encode())
    with pytest.raises(RunStoreError, match=r"results\.jsonl:2: not a valid ItemResult"):
        store.results()
    store.results_path.write_bytes(good.encode()[:-1])  # complete record, no final newline
    [(result, line)] = store.result_lines()
    assert result.item_id == "a" and line == good.encode()[:-1]
    assert RunStore(tmp_path / "none").result_lines() == []


def test_state_paths_are_checked_in_every_spelling(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    path = _state(store)
    assert path == "state/i%201%2Fx/h1.json"
    assert store.read_state(path).item_id == "i 1/x"
    assert store.read_state("./" + path).item_id == "i 1/x"  # as before: Path drops "."
    for bad in ("state/../run.json", "/etc/passwd", "evidence/x.json", "", "../state/x.json"):
        with pytest.raises(RunStoreError, match="not a state path inside the run folder"):
            store.read_state(bad)


def test_unreadable_states_name_the_file(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    path = _state(store)
    (tmp_path / path).write_text('{"schema_version": 1, "item_id": "i1", "elem')
    with pytest.raises(RunStoreError, match=rf"{tmp_path}/{path}: not a valid state file"):
        store.read_state(path)
    with pytest.raises(RunStoreError, match=r"h9\.json: not a valid state file: .*No such file"):
        store.read_state("state/i%201%2Fx/h9.json")
    with pytest.raises(RunStoreError, match=r"not a valid state file: .*Is a directory"):
        store.read_state("state/i%201%2Fx")
