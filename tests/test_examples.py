from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any, ClassVar

from typer.testing import CliRunner

from groundeval.benchmarks.synthetic import generate
from groundeval.programs.cli import app
from tests._support.paths import REPO


def test_quickstart_grades_the_example_program(tmp_path: Path, capsys) -> None:
    module = runpy.run_path(str(REPO / "examples" / "quickstart.py"))
    out = module["main"](tmp_path)
    truth, result = out["truth"], out["result"]
    by_id = {d.question_id: d for d in result.decisions}
    assert by_id["g1"].outcome == "pass"
    assert by_id["h1"].outcome == "pass"  # five dice, as the program asks
    assert by_id["h2"].outcome == ("pass" if truth["pip_sum"] == 17 else "fail")
    assert "pips" in capsys.readouterr().out


def test_user_checks_module_is_loaded_only_when_named(tmp_path: Path) -> None:
    scene = generate("dice", "clean", 3)
    import cv2

    cv2.imwrite(str(tmp_path / "p.png"), scene.image_bgr)
    program = {
        "id": "p",
        "hard": [
            {
                "id": "h1",
                "ask": "Do all dice show different pips?",
                "ground": {"helper": "boxes", "target": "each die", "proposer": "opencv.dice"},
                "check": {"name": "pips_all_different"},
            }
        ],
    }
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program))
    runner = CliRunner()
    without = runner.invoke(app, ["validate", str(path)])
    assert without.exit_code == 1 and "pips_all_different" in without.output
    args = ["run", str(path), "--images", str(tmp_path), "--out", str(tmp_path / "run")]
    result = runner.invoke(app, [*args, "--checks", str(REPO / "examples" / "mychecks.py")])
    assert result.exit_code == 0, result.output
    record = json.loads((tmp_path / "run" / "results.jsonl").read_text())
    pips = [d["pips"] for d in scene.truth["dice"]]
    expected = "pass" if len(set(pips)) == len(pips) else "fail"
    assert record["decisions"][0]["outcome"] == expected


def test_readme_proposer_recipe_works_through_the_ground_command(tmp_path: Path) -> None:
    """The README's "A proposer" recipe: subclass CVProposer, register, ground an image."""
    import cv2
    import numpy as np

    from groundeval.grounding import CVProposer, ground_image, register_proposer
    from groundeval.state import Element

    def find_stars(image_bgr, threshold):
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        mask = (grey > threshold).astype(np.uint8)
        contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return sorted(cv2.boundingRect(c) for c in contours)

    @register_proposer("test.readme_stars")
    class Stars(CVProposer):
        name = "test.readme_stars"
        defaults: ClassVar[dict[str, Any]] = {"threshold": 200}

        def detect(self, image_bgr, spec, params):
            stars = find_stars(image_bgr, params["threshold"])
            return [
                Element(id=i, kind="box", xyxy_px=[x, y, x + w, y + h], fields={"points": 5})
                for i, (x, y, w, h) in enumerate(stars, start=1)
            ]

    image = np.zeros((60, 90, 3), np.uint8)
    for x in (10, 40, 70):
        cv2.circle(image, (x, 30), 6, (255, 255, 255), -1)
    cv2.imwrite(str(tmp_path / "sky.png"), image)
    found = ground_image(
        tmp_path / "sky.png", helper="boxes", proposer="test.readme_stars", params={}, out=None
    )
    assert found["status"] == "grounded"
    assert [e["fields"]["points"] for e in found["elements"]] == [5, 5, 5]
    typo = ground_image(
        tmp_path / "sky.png", helper="boxes", proposer="test.readme_stars",
        params={"thresold": 1}, out=None,
    )  # fmt: skip
    assert typo["status"] == "error" and "unknown params ['thresold']" in typo["reason"]
