"""An unchanged rescore skips re-reading results.jsonl only when the file is already canonical:
any blank, superseded, torn or out-of-order line still gets the file rewritten, sorted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from groundeval.programs._rescore import rescore_run
from tests.programs.test_rescore_reads import _build


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
