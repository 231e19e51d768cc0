from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundeval.programs.cli import app


def test_demo_grades_offline_against_truth(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--per-scene", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    accuracy = summary["accuracy_vs_truth"]
    assert set(accuracy) == {"clean", "moderate", "hard"}
    for level, row in accuracy.items():
        assert row["decisions"] > 0, level
        assert row["wrong"] == 0.0, (level, summary["accuracy_by_scene"])
        assert row["right"] + row["withheld"] + row["error"] == pytest.approx(1.0)
    assert summary["status"]["error"] == 0
    assert (out / "report" / "index.html").exists()
    assert "decisions against the exact truth" in result.output
    again = CliRunner().invoke(app, ["demo", "--out", str(out), "--per-scene", "1"])
    assert again.exit_code == 0, again.output  # a demo folder is rebuilt, not refused


def test_demo_refuses_to_overwrite_a_real_run(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"judge": "gemini:x"}))
    result = CliRunner().invoke(app, ["demo", "--out", str(out), "--per-scene", "1"])
    assert result.exit_code == 1
    assert "not a demo" in result.output
    assert (out / "run.json").exists()
