"""Every proposer and verifier parameter has a type `validate` knows, and the run says the same."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, PositiveInt

from groundeval.grounding import (
    PROPOSERS,
    VERIFIERS,
    CVProposer,
    declared_params,
    describe_params,
    ground_image,
    param_problems,
    register_proposer,
)
from groundeval.programs import ProgramFileError, load_programs
from groundeval.programs._catalogue import build_catalogue
from groundeval.state import Element, GroundSpec, Registry, UnknownNameError
from tests._support.paths import write_image

PROGRAM = """\
id: t1
hard:
  - id: h1
    ask: Are there two coins?
    ground:
      helper: boxes
      target: each coin
      proposer: {proposer}
      params: {params}
    check: "count(elements) == 2"
"""


def _issues(tmp_path: Path, params: str, proposer: str = "opencv.circles") -> list[Any]:
    path = tmp_path / "p.yaml"
    path.write_text(PROGRAM.format(proposer=proposer, params=params))
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    return info.value.issues


def _problems(proposer: str, **params: Any) -> list[str]:
    return [m for _, m in param_problems(GroundSpec(helper="boxes", proposer=proposer, **params))]


def test_ill_typed_parameter_names_file_place_expected_and_got(tmp_path: Path) -> None:
    (issue,) = _issues(tmp_path, "{min_radius_px: twelve}")
    assert issue.file == str(tmp_path / "p.yaml")
    assert issue.location == "line 9, $.hard[0].ground.params"
    assert issue.message == "proposer opencv.circles: min_radius_px: expected int, got str 'twelve'"


def test_every_problem_is_listed_unknown_and_ill_typed(tmp_path: Path) -> None:
    issues = _issues(tmp_path, "{treshold: 180, blur_px: 2.5, dp: true}")
    messages = sorted(i.message for i in issues)
    assert messages[0] == "proposer opencv.circles: blur_px: expected int, got float 2.5"
    assert messages[1] == "proposer opencv.circles: dp: expected float, got bool True"
    assert messages[2].startswith("proposer opencv.circles: unknown params ['treshold']; known: [")
    assert all(i.location == "line 9, $.hard[0].ground.params" for i in issues)


@pytest.mark.parametrize(
    ("proposer", "params", "message"),
    [
        ("opencv.circles", {"dp": 2}, ""),  # an int where a float is declared is fine
        ("opencv.circles", {"min_radius_px": 12.0}, "min_radius_px: expected int, got float 12.0"),
        ("opencv.circles", {"min_radius_px": "12"}, "min_radius_px: expected int, got str '12'"),
        ("ocr", {"strip": 1}, "strip: expected bool, got int 1"),
        ("ocr", {"use_cls": "yes"}, "use_cls: expected bool, got str 'yes'"),
        ("opencv.contours", {"hsv_lower": [0, 0.5, 0]}, "expected list[int], got list [0, 0.5, 0]"),
        ("opencv.contours", {"hsv_lower": (0, 80, 80)}, ""),  # a tuple from Python is a list
        ("opencv.contours", {"mode": "loca"}, "expected one of 'local', 'otsu', 'hsv', got str"),
        ("opencv.lines", {"center_px": [10, 20.5]}, ""),
        ("opencv.lines", {"center_px": "middle"}, "center_px: expected list[float] | None"),
        ("yolo", {"weights": 3}, "weights: expected str | None, got int 3"),
        ("yolo", {"classes": ["die"], "threads": 2}, ""),
        ("yolo.dice", {"classes": "die"}, "classes: expected list[str] | None, got str 'die'"),
        ("sam", {"prompt_xyxy_px": [[1, 2, 30, 40]]}, ""),
        ("judge", {"min_pixels": 0}, "min_pixels: expected int > 0, got int 0"),
        ("judge", {"max_pixels": 1_000_000}, ""),
    ],
)
def test_types_come_from_the_declaration(
    proposer: str, params: dict[str, Any], message: str
) -> None:
    problems = _problems(proposer, params=params)
    if message:
        assert len(problems) == 1 and message in problems[0], problems
        assert problems[0].startswith(f"proposer {proposer}: ")
    else:
        assert problems == []


def test_verifier_settings_and_the_image_index_are_typed(tmp_path: Path) -> None:
    issues = _issues(tmp_path, "{offline_verifier: {min_size_px: -1, min_size: 3}, image: first}")
    got = {(i.location, i.message) for i in issues}
    assert got == {
        (
            "line 9, $.hard[0].ground.params.image",
            "params.image: expected int >= 0, got str 'first'",
        ),
        (
            "line 9, $.hard[0].ground.params.offline_verifier",
            "params.offline_verifier: unknown setting(s) ['min_size']; known: ['duplicate_iou', "
            "'duplicate_px', 'inside_tolerance', 'min_size_px']",
        ),
        (
            "line 9, $.hard[0].ground.params.offline_verifier",
            "params.offline_verifier.min_size_px: expected float >= 0, got int -1",
        ),
    }


def test_consensus_settings_and_second_opinions_are_typed(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        "id: c\nhard:\n  - id: h1\n    ask: Five dice?\n    ground:\n      helper: boxes\n"
        "      proposer: opencv.dice\n      verifier: consensus\n"
        "      params: {consensus: {match_iou: high}}\n"
        "      agree_with: [{proposer: yolo.dice, params: {conf: '0.3'}}]\n"
        "    check: count(elements) == 5\n"
    )
    with pytest.raises(ProgramFileError) as info:
        load_programs(path)
    got = {(i.location, i.message) for i in info.value.issues}
    assert got == {
        (
            "line 9, $.hard[0].ground.params.consensus",
            "params.consensus.match_iou: expected float >= 0, got str 'high'",
        ),
        (
            "line 10, $.hard[0].ground.agree_with[0].params",
            "proposer yolo.dice: conf: expected float, got str '0.3'",
        ),
    }


def test_run_time_says_what_validate_says(tmp_path: Path) -> None:
    """A bad parameter that reaches a run (Python, `ground --param`) is `error`, not a crash."""
    image = write_image(tmp_path / "a.png", colour=(200, 200, 200))
    result = ground_image(
        image,
        helper="boxes",
        proposer="opencv.circles",
        params={"min_radius_px": "twelve", "offline_verifier": {"min_size_px": "big"}},
        out=None,
    )
    assert result["status"] == "error"
    assert result["reason"] == (
        "proposer opencv.circles: min_radius_px: expected int, got str 'twelve'; "
        "params.offline_verifier.min_size_px: expected float >= 0, got str 'big'"
    )
    assert _problems("opencv.circles", params={"min_radius_px": "twelve"}) == [
        result["reason"].split("; ")[0]
    ]


def test_every_builtin_declares_types_its_own_defaults_satisfy() -> None:
    for registry in (PROPOSERS, VERIFIERS):
        for name in registry.names():
            if not registry.origin(name).startswith("groundeval."):
                continue  # registered by another test
            model = registry.params_model(name)
            if name == "judge" and registry is VERIFIERS:
                assert model is None  # the judge verifier takes no settings
                continue
            assert model is not None, name
            defaults = {k: f.get_default() for k, f in model.model_fields.items()}
            assert model.model_validate(defaults) is not None
            described = describe_params(model)
            assert described and all(spec["type"] != "any" or spec["default"] is None
                                     for spec in described.values()), (name, described)  # fmt: skip


@pytest.fixture
def plugin_names() -> Iterator[list[str]]:
    """Names registered by a test, taken out again (the catalogue is compared elsewhere)."""
    names: list[str] = []
    yield names
    for name in names:
        if name in PROPOSERS:
            del PROPOSERS[name]


def test_a_plugin_with_only_defaults_is_typed_for_free(
    tmp_path: Path, plugin_names: list[str]
) -> None:
    @register_proposer("test.params.bright")
    class Bright(CVProposer):
        """Bright blobs."""

        defaults: ClassVar[dict[str, Any]] = {"threshold": 200, "scales": [1.0, 2], "hint": None}

        def detect(self, image_bgr: Any, spec: GroundSpec, params: dict[str, Any]) -> list[Element]:
            return []

    plugin_names.append("test.params.bright")
    (issue,) = _issues(tmp_path, "{threshold: high, hint: {any: thing}}", "test.params.bright")
    assert issue.message == "proposer test.params.bright: threshold: expected int, got str 'high'"
    catalogue = {p["name"]: p for p in build_catalogue()["proposers"]}
    assert catalogue["test.params.bright"]["params"] == {
        "hint": {"type": "any", "default": None},
        "scales": {"type": "list[float]", "default": [1.0, 2]},
        "threshold": {"type": "int", "default": 200},
    }
    with pytest.raises(ValueError, match=r"threshold: expected int, got str 'high'"):
        Bright().resolve(GroundSpec(helper="boxes", params={"threshold": "high"}))
    assert (
        Bright().resolve(GroundSpec(helper="boxes", params={"threshold": 180}))["threshold"] == 180
    )


def test_a_plugin_may_declare_a_whole_model_or_bounds(plugin_names: list[str]) -> None:
    class Knobs(BaseModel):
        model_config = ConfigDict(extra="forbid", strict=True)
        weights: str
        """Required: there is no sensible default."""
        steps: PositiveInt = 3

    @register_proposer("test.params.model")
    class WithModel(CVProposer):
        """Declares a whole model."""

        Params = Knobs
        defaults: ClassVar[dict[str, Any]] = {"steps": 3}

    @register_proposer("test.params.bounded")
    class Bounded(CVProposer):
        """Declares a bound on top of the defaults."""

        defaults: ClassVar[dict[str, Any]] = {"size_px": 4}
        param_types: ClassVar[dict[str, Any]] = {"size_px": PositiveInt}

    plugin_names += ["test.params.model", "test.params.bounded"]
    assert declared_params(WithModel) is Knobs
    assert sorted(_problems("test.params.model", params={"steps": 0})) == [
        "proposer test.params.model: steps: expected int > 0, got int 0",
        "proposer test.params.model: weights: expected str, got nothing (it is required)",
    ]
    assert _problems("test.params.bounded", params={"size_px": -2}) == [
        "proposer test.params.bounded: size_px: expected int > 0, got int -2"
    ]


def test_a_broken_declaration_is_a_validation_issue_not_a_crash(
    tmp_path: Path, plugin_names: list[str]
) -> None:
    @register_proposer("test.params.broken")
    class Broken(CVProposer):
        """Types a parameter it has no default for."""

        defaults: ClassVar[dict[str, Any]] = {"size_px": 4}
        param_types: ClassVar[dict[str, Any]] = {"size": int}

    plugin_names.append("test.params.broken")
    (issue,) = _issues(tmp_path, "{size_px: 5}", "test.params.broken")
    assert issue.message == (
        "proposer test.params.broken declares its parameters wrongly: param_types names "
        "['size'], which have no default (add them to the defaults)"
    )
    catalogue = {p["name"]: p for p in build_catalogue()["proposers"]}
    assert catalogue["test.params.broken"]["params"].startswith("declared wrongly: ")


def test_a_proposer_that_declares_nothing_is_not_checked(plugin_names: list[str]) -> None:
    @register_proposer("test.params.free")
    class Free:
        """Reads ``spec.params`` itself."""

        async def propose(self, request: Any) -> Any:
            raise NotImplementedError

    plugin_names.append("test.params.free")
    assert PROPOSERS.params_model("test.params.free") is None
    assert _problems("test.params.free", params={"anything": object()}) == []
    catalogue = {p["name"]: p for p in build_catalogue()["proposers"]}
    assert catalogue["test.params.free"]["params"] == "none declared"


def test_registry_params_model() -> None:
    plain: Registry[Any] = Registry("test.params.plain")
    plain.add("x", len)
    assert plain.params_model("x") is None
    with pytest.raises(UnknownNameError, match="unknown proposer 'nope'"):
        PROPOSERS.params_model("nope")
    catalogue = {v["name"]: v for v in build_catalogue()["verifiers"]}
    assert catalogue["offline"]["settings"]["in"] == "params.offline_verifier"
    assert catalogue["offline"]["settings"]["params"]["min_size_px"] == {
        "type": "float >= 0",
        "default": 3.0,
    }
    assert "settings" not in catalogue["judge"]
