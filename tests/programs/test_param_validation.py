"""`validate` knows every proposer parameter: a misspelt key is refused before any run."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundeval.programs import ProgramFileError, load_programs

PROGRAM = """\
id: t1
hard:
  - id: h1
    ask: Are there two coins?
    ground: {{helper: boxes, target: each coin, proposer: opencv.circles, params: {params}}}
    check: "count(elements) == 2"
"""


def test_misspelt_parameter_is_a_validation_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(PROGRAM.format(params="{treshold: 180}"))
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    (issue,) = info.value.issues
    assert issue.location.endswith("$.hard[0].ground.params")
    assert "unknown params ['treshold']" in issue.message
    assert "min_radius_px" in issue.message  # the known ones are named


def test_known_parameters_pass(tmp_path: Path) -> None:
    path = tmp_path / "good.yaml"
    path.write_text(PROGRAM.format(params="{min_radius_px: 12}"))
    (program,) = load_programs(path)
    assert program.hard[0].ground is not None
