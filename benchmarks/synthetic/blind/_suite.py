"""Generating blind-style scenes by name and seed, and writing a suite to disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic._common import Scene, style_scene, write_style_suite
from groundeval.benchmarks.synthetic.blind import _scenes

SceneMaker = Callable[[str, int, np.random.Generator], Scene]
SCENES: dict[str, SceneMaker] = {"dice": _scenes.dice, "coins": _scenes.coins}
AXIS_SCENES: dict[str, SceneMaker] = {"dice_math": _scenes.dice_math}
"""The capability-axis kinds, named as in the in-style suite's ``AXIS_SCENES``."""
DIFFICULTY = _scenes.DIFFICULTY
REPORT_SEED0 = 200_000
"""First seed of the reported range; seeds below it are for looking at and tuning on."""
STYLE_VERSION = 1
_SALT = 0x9B0E
"""This style's constant in every scene's seed sequence."""


def scene_id(scene: str, seed: int) -> str:
    """Stable item id, safe as a file name: ``dice-blind-200042``."""
    return f"{scene}-{DIFFICULTY}-{seed:06d}"


def generate(scene: str, seed: int) -> Scene:
    """One blind-style scene with exact truth and its programs (same arguments, same bytes)."""
    return style_scene({**SCENES, **AXIS_SCENES}, scene, seed, [_SALT, STYLE_VERSION], scene_id)


def write_suite(
    out_dir: Path | str,
    n_per_scene: int = 40,
    seed: int = REPORT_SEED0,
    scenes: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Write ``<id>.png`` images, ``programs.jsonl``, ``truth.jsonl`` and ``manifest.json``.

    Every kind (``SCENES`` and ``AXIS_SCENES``) unless ``scenes`` names some; the
    layout is the in-style suite's, so ``groundeval run`` reads it unchanged.
    """
    head = {"style": DIFFICULTY, "style_version": STYLE_VERSION, "difficulties": [DIFFICULTY]}
    kinds = [*SCENES, *AXIS_SCENES]
    return write_style_suite(out_dir, generate, head, kinds, scenes, n_per_scene, seed)
