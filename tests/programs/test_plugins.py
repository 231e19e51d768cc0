"""Extending groundeval from outside the repository, following only the README.

The plugin file, the program and the commands are taken from the README's
"Extending groundeval" section and run with the installed ``groundeval`` command in
a temporary folder, as a benchmark author would.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests._support.paths import REPO

CLI = str(Path(sys.executable).parent / "groundeval")


def _section() -> str:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index("## Extending groundeval")
    return text[start : text.index("\n## ", start + 3)]


def _blocks(language: str) -> list[str]:
    return [
        b for lang, b in re.findall(r"```(\w*)\n(.*?)```", _section(), re.S) if lang == language
    ]


def _commands() -> list[list[str]]:
    lines = [ln for block in _blocks("") for ln in block.split("\n")]
    return [shlex.split(ln) for ln in lines if ln.startswith("groundeval ")]


def _env(folder: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "GOOGLE", "OPENAI"))}
    env.pop("PYTHONPATH", None)
    env.update(HOME=str(folder), XDG_CACHE_HOME=str(folder / "cache"), **extra)
    return env


def _cli(folder: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 300):
    return subprocess.run(
        [CLI, *args], cwd=folder, env=env or _env(folder), capture_output=True, text=True,
        timeout=timeout, check=False,
    )  # fmt: skip


@pytest.fixture(scope="module")
def author(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder outside the repository with the README's plugin, program and an image."""
    folder = tmp_path_factory.mktemp("author")
    (plugin,) = [b for b in _blocks("python") if b.startswith("# myplugin.py")]
    (folder / "myplugin.py").write_text(plugin, encoding="utf-8")
    (program,) = _blocks("yaml")
    (folder / "sky.yaml").write_text(program, encoding="utf-8")
    image = np.full((80, 120, 3), (40, 12, 12), np.uint8)  # a dark sky with four stars
    for x in (18, 46, 76, 104):
        cv2.circle(image, (x, 38), 6, (255, 255, 255), -1)
    (folder / "gen").mkdir()
    cv2.imwrite(str(folder / "gen" / "sky.png"), image)
    return folder


def test_the_readme_commands_work_as_written(author: Path) -> None:
    commands = _commands()
    assert [c[1] for c in commands] == ["validate", "ground", "run", "rescore"]
    outputs = {}
    for command in commands:
        done = _cli(author, *command[1:])
        assert done.returncode == 0, f"{shlex.join(command)}\n{done.stdout}\n{done.stderr}"
        outputs[command[1]] = done.stdout
    assert outputs["validate"].startswith("ok: 1 program(s), 2 question(s)")
    grounded = json.loads(outputs["ground"])
    assert grounded["status"] == "grounded" and len(grounded["elements"]) == 4
    xs = sorted((e["xyxy_px"][0] + e["xyxy_px"][2]) / 2 for e in grounded["elements"])
    assert xs == pytest.approx([18, 46, 76, 104], abs=1.0)

    run = author / "runs" / "sky"
    (result,) = [json.loads(ln) for ln in (run / "results.jsonl").read_text().split("\n") if ln]
    by_id = {d["question_id"]: d for d in result["decisions"]}
    assert by_id["stars"]["outcome"] == "pass" and by_id["stars"]["check"]["trace"] == (
        "4 found, need 3"
    )
    assert (by_id["dark"]["outcome"], by_id["dark"]["source"]) == ("pass", "judge")
    assert result["scoring"] == "mine" and result["scores"] == {"share": 1.0}
    summary = json.loads((run / "summary.json").read_text())
    assert summary["protocols"]["mine"]["share"] == 1.0
    assert "mine:" in outputs["run"] and '"share": 1.0' in outputs["run"]
    assert "mine:dark" in (run / "run.json").read_text()
    state = json.loads((run / "state" / "sky" / "stars.json").read_text())
    assert state["rounds"][0]["proposer"] == "my.bright" and len(state["elements"]) == 4
    assert outputs["rescore"].startswith(f"{Path('runs/sky')}: rescored 1 items")


def test_the_judge_decides_what_it_is_asked(author: Path) -> None:
    """``--judge mine:<word>`` really reaches the plugin's backend: another word, another answer."""
    done = _cli(author, "run", "sky.yaml", "--images", "gen", "--out", "runs/moon",
                "--judge", "mine:moon", "--plugins", "myplugin.py")  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = [
        json.loads(ln) for ln in (author / "runs/moon/results.jsonl").read_text().split("\n") if ln
    ]
    by_id = {d["question_id"]: d for d in result["decisions"]}
    assert by_id["dark"]["outcome"] == "fail" and result["scores"] == {"share": 0.5}


def test_without_the_plugin_every_command_says_what_is_missing(author: Path) -> None:
    validate = _cli(author, "validate", "sky.yaml")
    assert validate.returncode == 1
    assert (
        "$.scoring: unknown scoring protocol 'mine'; known: checklist, dependency, grounded, rubric"
        in validate.stderr
    )
    ground = _cli(author, "ground", "gen/sky.png", "--proposer", "my.bright")
    assert ground.returncode == 1 and "unknown proposer 'my.bright'" in ground.stderr
    assert not (author / "runs" / "nothing").exists()
    judge = _cli(author, "run", "sky.yaml", "--images", "gen", "--out", "runs/nothing",
                 "--judge", "mine:dark")  # fmt: skip
    assert judge.returncode == 1 and "unknown scoring protocol 'mine'" in judge.stderr
    if (author / "runs" / "sky").exists():
        rescore = _cli(author, "rescore", "runs/sky")
        assert rescore.returncode == 1
        assert "pass them again: --plugins myplugin.py" in rescore.stderr


def test_checks_is_the_alias_of_plugins(author: Path) -> None:
    done = _cli(author, "validate", "sky.yaml", "--checks", "myplugin.py")
    assert done.returncode == 0 and done.stdout.startswith("ok: 1 program(s)")
    from typer.testing import CliRunner

    from groundeval.programs.cli import app

    for command in ("validate", "run", "rescore", "merge", "ground"):
        text = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "200"}).output
        assert "--plugins" in text and "--checks" in text, command


def test_ground_exits_non_zero_when_the_grounding_is_an_error(author: Path) -> None:
    done = _cli(author, "ground", "gen/sky.png", "--proposer", "my.bright",
                "--param", "treshold=180", "--plugins", "myplugin.py")  # fmt: skip
    assert done.returncode == 1
    assert json.loads(done.stdout)["status"] == "error"
    assert "error: the grounding failed:" in done.stderr and "treshold" in done.stderr


def test_a_duplicate_name_is_refused_naming_both_origins(author: Path) -> None:
    (author / "other.py").write_text(textwrap.dedent("""
        from groundeval.grounding import CVProposer, register_proposer


        @register_proposer("my.bright")
        class Glow(CVProposer):
            def detect(self, image_bgr, spec, params):
                return []
    """), encoding="utf-8")  # fmt: skip
    done = _cli(author, "validate", "sky.yaml", "--plugins", "myplugin.py", "--plugins", "other.py")
    assert done.returncode == 2
    message = done.stderr
    assert "proposer 'my.bright' is already registered by" in message
    assert re.search(r"groundeval_plugin_myplugin_\w+:Bright \(.*myplugin\.py\)", message)
    assert re.search(r"groundeval_plugin_other_\w+:Glow \(.*other\.py\)", message)
    (author / "named.py").write_text(textwrap.dedent("""
        from groundeval.programs import register_protocol


        @register_protocol("named")
        class Named:
            name = "something_else"
    """), encoding="utf-8")  # fmt: skip
    done = _cli(author, "validate", "sky.yaml", "--plugins", "named.py")
    assert done.returncode == 2
    assert (
        "sets name = 'something_else'; the registered name is set by the decorator" in done.stderr
    )


def test_an_installed_package_registers_through_entry_points(author: Path) -> None:
    """The README's entry-point table: an object under the entry point's name, or a module."""
    site = author / "site"
    info = site / "acme_grounding-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: acme_grounding\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[groundeval.proposers]\nacme.stars = acme_grounding.stars:Stars\n"
        "[groundeval.checks]\nacme = acme_grounding.checks\n"
        "[groundeval.benchmarks]\nacme = acme_grounding.cli:app\n"
    )
    package = site / "acme_grounding"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "stars.py").write_text(textwrap.dedent("""
        import cv2

        from groundeval.grounding import CVProposer
        from groundeval.state import Element


        class Stars(CVProposer):
            \"\"\"Bright blobs; registered by the entry point, not by a decorator.\"\"\"

            def detect(self, image_bgr, spec, params):
                mask = (cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY) > 200).astype("uint8")
                contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
                boxes = sorted(cv2.boundingRect(c) for c in contours)
                return [Element(id=i, kind="box", xyxy_px=[x, y, x + w, y + h])
                        for i, (x, y, w, h) in enumerate(boxes, start=1)]
    """))  # fmt: skip
    (package / "checks.py").write_text(textwrap.dedent("""
        from groundeval.programs import register_check


        @register_check("acme.at_least_two")
        def at_least_two(elements, state):
            return float(len(elements) >= 2), f"{len(elements)} found"
    """))  # fmt: skip
    (package / "cli.py").write_text(textwrap.dedent("""
        import typer

        app = typer.Typer(help="Acme's benchmark.")


        @app.command()
        def hello(name: str) -> None:
            typer.echo(f"acme says hello to {name}")


        @app.command()
        def bye() -> None:
            pass
    """))  # fmt: skip
    program = {"id": "acme", "hard": [{"id": "h", "ask": "Two stars or more?",
               "ground": {"helper": "boxes", "proposer": "acme.stars"},
               "check": {"name": "acme.at_least_two"}}]}  # fmt: skip
    (author / "acme.json").write_text(json.dumps(program))
    env = _env(author, PYTHONPATH=str(site))
    done = _cli(author, "validate", "acme.json", env=env)
    assert done.returncode == 0, done.stderr
    without = _cli(author, "validate", "acme.json")
    assert without.returncode == 1 and "unknown proposer 'acme.stars'" in without.stderr
    done = _cli(author, "ground", "gen/sky.png", "--proposer", "acme.stars", env=env)
    assert done.returncode == 0, done.stderr
    assert len(json.loads(done.stdout)["elements"]) == 4
    done = _cli(author, "acme", "hello", "you", env=env)
    assert (done.returncode, done.stdout) == (0, "acme says hello to you\n"), done.stderr


def test_a_plugin_judge_runs_on_ray_workers(author: Path) -> None:
    """Ray workers load the --plugins files before they build ``--judge mine:...``."""
    pytest.importorskip("ray", reason="the ray extra is not installed")
    done = _cli(author, "run", "sky.yaml", "--images", "gen", "--out", "runs/ray",
                "--judge", "mine:dark", "--plugins", "myplugin.py", "--executor", "ray",
                env=_env(author, RAY_ADDRESS=""), timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (result,) = [
        json.loads(ln) for ln in (author / "runs/ray/results.jsonl").read_text().split("\n") if ln
    ]
    assert result["scores"] == {"share": 1.0}
    by_id = {d["question_id"]: d for d in result["decisions"]}
    assert (by_id["dark"]["outcome"], by_id["dark"]["source"]) == ("pass", "judge")
    assert by_id["stars"]["check"]["trace"] == "4 found, need 3"
