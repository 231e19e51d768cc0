"""Write examples/axes/<axis>.yaml: programs for GenOlympiad's nine axes, one file each.

Every program grades one synthetic scene (its id names scene, difficulty and seed),
so ``tests/benchmarks/test_axes.py`` can regenerate the image and check that the program
decides its exact truth. Run it again after changing a scene generator:

    .venv/bin/python examples/axes/make_axes.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from groundeval.benchmarks.synthetic import generate

AXIS_SCENES: dict[str, str] = {
    "counterfactual": "clock_counterfactual",
    "symbolic": "clock",
    "world": "clock_world",
    "physics": "shadows",
    "quantity": "dice",
    "spatial": "compass",
    "latent": "dice_math",
    "long_range": "rows",
    "text": "bars",
}
"""The synthetic scene each axis's example programs grade."""
MORE_SCENES: dict[str, tuple[str, ...]] = {"physics": ("reflection",)}
"""Further scenes of an axis, written after its main scene's programs in the same file."""
PER_AXIS = (("clean", 3), ("moderate", 1))
HERE = Path(__file__).resolve().parent
HEADER = """\
# Example programs for the {axis!r} axis, grading synthetic {scene} scenes.
# Written by examples/axes/make_axes.py; each id is <scene>-<difficulty>-<seed>, so
#   python -c "from groundeval.benchmarks.synthetic import generate, encode_png; ..."
# regenerates the image it grades (tests/benchmarks/test_axes.py does, and checks the decisions).
"""


class _NoAliases(yaml.SafeDumper):
    """Program files refuse YAML anchors and aliases, so never write any."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _seeds(scene: str, difficulty: str, count: int) -> list[int]:
    """The first seeds whose hard questions have both outcomes among them, if possible."""
    chosen: list[int] = []
    outcomes: set[str] = set()
    for seed in range(200):
        if len(chosen) == count:
            break
        answers = generate(scene, difficulty, seed).truth["answers"]
        hard = {v for k, v in answers.items() if k.endswith("/h1")}
        if len(chosen) < count - 1 or not (hard <= outcomes) or len(outcomes) == 2:
            chosen.append(seed)
            outcomes |= hard
    return chosen


def scenes_of(axis: str) -> tuple[str, ...]:
    """Every synthetic scene an axis's example file grades, its main scene first."""
    return (AXIS_SCENES[axis], *MORE_SCENES.get(axis, ()))


def programs_for(axis: str) -> list[dict[str, Any]]:
    """The example programs of one axis as plain data (what the YAML file holds)."""
    out = []
    for scene in scenes_of(axis):
        for difficulty, count in PER_AXIS:
            for seed in _seeds(scene, difficulty, count):
                for program in generate(scene, difficulty, seed).programs:
                    data = program.model_dump(mode="json", exclude_defaults=True)
                    data["tags"] = {**data.get("tags", {}), "axis": axis}
                    out.append(data)
    return out


def write_all(folder: Path = HERE) -> list[Path]:
    """Write one YAML file per axis; return their paths."""
    paths = []
    for axis in AXIS_SCENES:
        scenes = " and ".join(f"'{scene}'" for scene in scenes_of(axis))
        text = HEADER.format(axis=axis, scene=scenes) + yaml.dump(
            programs_for(axis),
            Dumper=_NoAliases,
            sort_keys=False,
            allow_unicode=True,
            width=96,
            default_flow_style=None,
        )
        path = folder / f"{axis}.yaml"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


if __name__ == "__main__":
    for written in write_all():
        print(written)
