from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from groundeval.programs import ProgramFileError, load_programs
from groundeval.programs.cli import app, main  # noqa: F401
from groundeval.state._schemas import SCHEMA_FILES, generate_schemas, load_schema, schema_text
from tests._support.paths import REPO

EXAMPLE = REPO / "examples" / "dice.yaml"


def test_yaml_json_jsonl_round_trip(tmp_path: Path) -> None:
    data = yaml.safe_load(EXAMPLE.read_text())
    (tmp_path / "p.json").write_text(json.dumps(data, indent=2))
    (tmp_path / "p.jsonl").write_text(
        json.dumps(data) + "\n" + json.dumps({**data, "id": "b"}) + "\n"
    )
    from_yaml = load_programs(EXAMPLE)
    from_json = load_programs(tmp_path / "p.json")
    from_jsonl = load_programs(tmp_path / "p.jsonl")
    assert from_yaml == from_json
    assert from_jsonl[0] == from_yaml[0]
    assert [p.id for p in from_jsonl] == ["dice-0001", "b"]
    assert from_yaml[0].hard[1].weight == 2
    assert from_yaml[0].state_source(from_yaml[0].hard[2]) == "h1"


def test_checked_in_schemas_equal_generated() -> None:
    for name, schema in generate_schemas().items():
        path = REPO / "state" / "schemas" / SCHEMA_FILES[name]
        assert path.read_text() == schema_text(schema), f"{path} drifted: run `make schemas`"
        assert load_schema(name) == schema


@pytest.mark.parametrize("name", ["dice.yaml", "consensus.yaml"])
def test_program_validates_against_checked_in_schema(name: str) -> None:
    # consensus names its second proposers bare (agree_with: [yolo.dice]), as the model takes
    import jsonschema

    data = yaml.safe_load((EXAMPLE.parent / name).read_text())
    jsonschema.validate(data, load_schema("program"))


BASE = {
    "id": "p1",
    "hard": [
        {
            "id": "h1",
            "ask": "Five dice?",
            "ground": {"helper": "boxes", "proposer": "test.boxes"},
            "check": "count(elements) == 5",
        }
    ],
}


def _with(**changes: object) -> dict:
    program = json.loads(json.dumps(BASE))
    for key, value in changes.items():
        program["hard"][0][key] = value
    return program


HOSTILE = {
    "import": (_with(check="__import__('os').system('touch /tmp/pwned')"), "check"),
    "dunder": (_with(check="elements.__class__.__bases__"), "check"),
    "attribute chain": (_with(check="[e.pips.real.imag for e in elements]"), "check"),
    "lambda": (_with(check="(lambda: 1)()"), "check"),
    "open": (_with(check="open('/etc/passwd')"), "check"),
    "huge exponent": (_with(check="9**9**9 > 1"), "check"),
    "huge string": (_with(check="len('a' * 10**9) > 1"), "check"),
    "deep nesting": (_with(check="(" * 200 + "1" + ")" * 200 + " == 1"), "check"),
    "unknown check": (_with(check={"name": "no_such_check", "args": {}}), "no_such_check"),
    "duplicate ids": (
        {"id": "p1", "gates": [{"id": "h1", "ask": "x"}], "hard": [{"id": "h1", "ask": "y"}]},
        "duplicate question id",
    ),
    "cyclic requires": (
        {
            "id": "p1",
            "hard": [
                {"id": "a", "ask": "x", "requires": ["b"]},
                {"id": "b", "ask": "y", "requires": ["a"]},
            ],
        },
        "cycle",
    ),
    "dangling requires": (
        {"id": "p1", "hard": [{"id": "a", "ask": "x", "requires": ["zz"]}]},
        "unknown question",
    ),
    "dangling uses": (_with(ground=None, uses="nope"), "unknown question"),
    "weight zero": (_with(weight=0), "greater than 0"),
    "negative weight": (_with(weight=-1), "greater than 0"),
    "slash in id": ({**BASE, "id": "a/b"}, "id"),
    "dotdot id": ({**BASE, "id": "a..b"}, "not allowed"),
    "dotdot question": (_with(id=".."), "pattern"),
    "unknown proposer": (_with(ground={"helper": "boxes", "proposer": "nope"}), "unknown proposer"),
    "unknown key": (_with(colour="red"), "Extra inputs"),
}


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_programs_rejected_by_validate_and_run(name: str, tmp_path: Path) -> None:
    program, expected = HOSTILE[name]
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(program))
    runner = CliRunner()
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert str(path) in result.output
    assert expected in result.output
    images = tmp_path / "images"
    images.mkdir()
    out = tmp_path / "run"
    result = runner.invoke(app, ["run", str(path), "--images", str(images), "--out", str(out)])
    assert result.exit_code == 1, result.output
    assert expected in result.output
    assert not out.exists()
    assert not Path("/tmp/pwned").exists()


def test_validate_reports_yaml_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("id: p1\nhard:\n  - id: h1\n    ask: Five?\n    weight: -2\n")
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    text = str(info.value)
    assert "line 5" in text and "$.hard[0].weight" in text and "-2" in text


def test_yaml_aliases_refused(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text("a: &a [x, x]\nb: [*a, *a]\nid: p\nhard: [{id: h, ask: q}]\n")
    with pytest.raises(ProgramFileError, match="anchors and aliases"):
        load_programs(path)


def test_validate_ok_on_example() -> None:
    result = CliRunner().invoke(app, ["validate", str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    assert "1 program(s), 4 question(s)" in result.output
