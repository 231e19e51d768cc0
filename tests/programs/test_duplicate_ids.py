"""A duplicate program id is reported at its own document, even after an invalid one."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.programs import ProgramFileError, load_programs

FILE = """\
id: a
hard: 3
---
id: b
hard:
  - {id: h1, ask: "One"}
---
id: b
hard:
  - {id: h1, ask: "Two"}
"""


def test_duplicate_after_an_invalid_document_names_the_right_line(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(FILE)
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    found = [(i.location, i.message) for i in info.value.issues]
    assert found == [
        ("line 2, $.hard", "Input should be a valid list (got 3)"),
        ("line 8", "duplicate program id 'b'"),
    ]
