"""Generating held-out scenes by name and seed, and writing a suite to disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic._common import Scene, style_scene, write_style_suite
from groundeval.benchmarks.synthetic.heldout import _counting, _light, _reading, _water

SceneMaker = Callable[[str, int, np.random.Generator], Scene]
SCENES: dict[str, SceneMaker] = {
    "dice": _counting.dice,
    "coins": _counting.coins,
    "bars": _reading.bars,
    "compass": _reading.compass,
    "sun": _light.sun,
}
AXIS_SCENES: dict[str, SceneMaker] = {
    "clock": _reading.clock,
    "clock_world": _reading.clock_world,
    "clock_counterfactual": _reading.clock_counterfactual,
    "shadows": _light.shadows,
    "rows": _counting.rows,
    "dice_math": _counting.dice_math,
    "reflection": _water.reflection,
}
"""The capability-axis kinds, named as in the in-style suite's ``AXIS_SCENES``."""
DIFFICULTY = "heldout"
REPORT_SEED0 = 900_000
"""First seed of the reported range; nothing is tuned on this style at any seed."""
STYLE_VERSION = 1


def scene_id(scene: str, seed: int) -> str:
    """Stable item id, safe as a file name: ``dice-heldout-900042``."""
    return f"{scene}-{DIFFICULTY}-{seed:06d}"


def generate(scene: str, seed: int) -> Scene:
    """One held-out scene with exact truth and its programs (same arguments, same bytes)."""
    return style_scene({**SCENES, **AXIS_SCENES}, scene, seed, [0x4E1D, STYLE_VERSION], scene_id)


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
