"""A program file cannot make groundeval unpickle a .pt outside the packaged models / --models-dir.

The payload is a real malicious pickle: unpickling it creates a marker file (the
positive control shows it does). Every path a program can take to a weights file
(validate, run, the proposers, the verify loop, consensus second opinions) must
refuse it before it is opened, naming the file and the field.
"""

from __future__ import annotations

import asyncio
import json
import pickle
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from groundeval.grounding._loop import run_grounding
from groundeval.grounding.proposers import sam, yolo
from groundeval.grounding.proposers._onnx import WeightsError
from groundeval.judges._protocol import ImagePart
from groundeval.programs._loaders import ProgramFileError, load_programs
from groundeval.programs._model import GroundSpec
from groundeval.programs.cli import app
from groundeval.state import Provenance


class _Payload:
    """Unpickling this opens (creates) ``path`` for writing: code run by loading a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


@pytest.fixture(autouse=True)
def _no_trusted_dir(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(yolo.MODELS_DIR_ENV, raising=False)


@pytest.fixture
def evil(tmp_path: Path) -> tuple[Path, Path]:
    """(the malicious .pt, the marker its unpickling would create)."""
    folder = tmp_path / "downloads"
    folder.mkdir()
    marker = tmp_path / "PWNED"
    weights = folder / "evil.pt"
    weights.write_bytes(pickle.dumps(_Payload(marker)))
    return weights, marker


def test_positive_control_the_payload_really_runs_code(evil):
    weights, marker = evil
    assert not marker.exists()
    pickle.loads(weights.read_bytes())  # what torch.load(weights_only=False) would do
    assert marker.exists()


def spec(proposer: str, weights: str) -> GroundSpec:
    return GroundSpec(
        helper="boxes", target="each die", proposer=proposer, params={"weights": weights}
    )


@pytest.mark.parametrize("proposer", ["yolo", "yolo.dice", "yoloworld", "sam", "fastsam"])
def test_every_weights_proposer_refuses_the_pickle_before_opening_it(proposer, evil):
    weights, marker = evil
    image = np.zeros((64, 64, 3), np.uint8)
    image[20:40, 20:40] = 255
    from groundeval.grounding._protocol import get_proposer

    with pytest.raises(WeightsError) as info:
        get_proposer(proposer).run(image, spec(proposer, str(weights)))  # type: ignore[attr-defined]
    message = str(info.value)
    assert "params.weights" in message and str(weights) in message and "--models-dir" in message
    assert not marker.exists()


def test_relative_names_and_dot_dot_escapes_are_refused(
    evil, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    weights, marker = evil
    monkeypatch.chdir(weights.parent)
    with pytest.raises(WeightsError, match="outside the packaged models"):
        yolo.resolve_weights("evil.pt", (".pt",))
    trusted = tmp_path / "models"
    trusted.mkdir()
    yolo.set_models_dir(trusted)
    with pytest.raises(WeightsError, match="outside the packaged models"):
        yolo.resolve_weights(str(trusted / ".." / "downloads" / "evil.pt"), (".pt",))
    with pytest.raises(WeightsError, match="outside the packaged models"):
        yolo.resolve_weights("../downloads/evil.pt", (".pt",))
    assert not marker.exists()


def test_a_pickle_named_like_the_packaged_model_in_the_working_dir_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    marker = tmp_path / "PWNED"
    (tmp_path / "dice_yolov8n.pt").write_bytes(pickle.dumps(_Payload(marker)))
    monkeypatch.chdir(tmp_path)
    found = yolo.resolve_weights("dice_yolov8n.pt", (".onnx", ".pt"))
    assert found == yolo.MODELS_DIR / "dice_yolov8n.pt"
    assert not marker.exists()


def test_models_dir_trusts_exactly_that_directory(evil, tmp_path: Path):
    weights, marker = evil
    assert yolo.weights_issues(spec("yolo", str(weights)))
    assert yolo.set_models_dir(weights.parent) == weights.parent.resolve()
    assert yolo.resolve_weights(str(weights), (".pt",)) == weights
    assert yolo.resolve_weights("evil.pt", (".pt",)) == weights  # by name inside the dir
    assert yolo.weights_issues(spec("yolo", str(weights))) == []
    assert not marker.exists()  # resolving is not loading
    yolo.set_models_dir(None)
    assert yolo.weights_issues(spec("yolo", str(weights)))
    with pytest.raises(WeightsError, match="not a directory"):
        yolo.set_models_dir(tmp_path / "nope")


def test_onnx_and_packaged_weights_need_no_models_dir(tmp_path: Path):
    assert yolo.weights_issues(spec("yolo", str(tmp_path / "anything.onnx"))) == []
    assert yolo.weights_issues(spec("yolo", "dice_yolov8n.pt")) == []
    assert yolo.weights_issues(spec("yolo", "dice_yolov8n.onnx")) == []
    bad = spec("yolo", "x").model_copy(update={"params": {"weights": 3}})
    assert yolo.weights_issues(bad) == [("params.weights", "must be a file name, got 3")]


def test_the_verify_loop_turns_the_refusal_into_an_error_state(evil):
    weights, marker = evil
    image = np.zeros((64, 64, 3), np.uint8)
    state = asyncio.run(
        run_grounding(
            image_bgr=image,
            image=ImagePart(b"x", "image/png", (64, 64)),
            spec=spec("yolo", str(weights)),
            ask="count the dice",
            item_id="i1",
            question_id="g1",
            provenance=Provenance(toolkit_version="test"),
        )
    )
    assert state.status == "error"
    assert "params.weights" in state.reason and "evil.pt" in state.reason
    assert not marker.exists()


def program_file(tmp_path: Path, weights: Path, second: bool = False) -> Path:
    ground: dict = {"helper": "boxes", "target": "each die", "proposer": "yolo"}
    if second:
        ground |= {
            "params": {"weights": "dice_yolov8n.onnx"},
            "verifier": "consensus",
            "agree_with": [{"proposer": "yolo", "params": {"weights": str(weights)}}],
        }
    else:
        ground["params"] = {"weights": str(weights)}
    program = {
        "id": "p1",
        "gates": [
            {"id": "g1", "ask": "Any die?", "ground": ground, "check": "count(elements) >= 1"}
        ],
    }
    path = tmp_path / "prog.jsonl"
    path.write_text(json.dumps(program) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("second", [False, True])
def test_validation_names_the_file_and_field(evil, tmp_path: Path, second: bool):
    weights, marker = evil
    path = program_file(tmp_path, weights, second)
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    (issue,) = info.value.issues
    field = "agree_with[0].params.weights" if second else "params.weights"
    assert issue.file == str(path)
    assert issue.location.endswith(f".gates[0].ground.{field}"), issue.location
    assert "evil.pt" in issue.message and "--models-dir" in issue.message
    assert not marker.exists()


def test_cli_validate_and_run_refuse_unless_models_dir_is_given(evil, tmp_path: Path):
    weights, marker = evil
    path = program_file(tmp_path, weights)
    images = tmp_path / "images"
    images.mkdir()
    cv2.imwrite(str(images / "p1.png"), np.full((48, 48, 3), 200, np.uint8))
    runner = CliRunner()
    res = runner.invoke(app, ["validate", str(path)])
    assert res.exit_code == 1
    assert "ground.params.weights" in res.output and "prog.jsonl" in res.output
    res = runner.invoke(
        app, ["run", str(path), "--images", str(images), "--out", str(tmp_path / "run")]
    )
    assert res.exit_code == 1 and "ground.params.weights" in res.output
    assert not marker.exists()
    try:
        res = runner.invoke(app, ["validate", "--models-dir", str(weights.parent), str(path)])
        assert res.exit_code == 0, res.output
    finally:
        yolo.set_models_dir(None)
    res = runner.invoke(app, ["validate", "--models-dir", str(tmp_path / "nope"), str(path)])
    assert res.exit_code == 2 and "not a directory" in res.output
    assert not marker.exists()


def test_sam_weights_follow_the_same_rule(evil):
    weights, marker = evil
    with pytest.raises(WeightsError, match="--models-dir"):
        sam.SamProposer().run(np.zeros((32, 32, 3), np.uint8), spec("sam", str(weights)))
    assert not marker.exists()


def test_cli_ground_loads_pickled_weights_only_with_models_dir(evil, tmp_path: Path):
    """`groundeval ground` follows the same rule as validate and run: --models-dir or nothing."""
    weights, marker = evil
    image = tmp_path / "scene.png"
    cv2.imwrite(str(image), np.full((64, 64, 3), 200, np.uint8))
    args = ["ground", str(image), "--proposer", "yolo", "--param", f"weights={weights}"]
    runner = CliRunner()
    try:
        refused = runner.invoke(app, args)
        assert refused.exit_code == 1 and "--models-dir" in refused.output
        assert not marker.exists()
        bad = runner.invoke(app, [*args, "--models-dir", str(tmp_path / "nope")])
        assert bad.exit_code == 2 and "not a directory" in bad.output
        assert not marker.exists()
        runner.invoke(app, [*args, "--models-dir", str(weights.parent)])
        assert marker.exists()  # the user trusted that folder, so its pickle was loaded
    finally:
        yolo.set_models_dir(None)
