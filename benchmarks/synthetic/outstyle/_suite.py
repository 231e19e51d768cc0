"""Generating out-of-style scenes by name and seed, and writing a suite to disk."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic._common import Scene, style_scene, write_style_suite
from groundeval.benchmarks.synthetic.outstyle import _scenes

SceneMaker = Callable[[str, int, np.random.Generator], Scene]
SCENES: dict[str, SceneMaker] = {
    "dice": _scenes.dice,
    "coins": _scenes.coins,
    "bars": _scenes.bars,
    "compass": _scenes.compass,
    "sun": _scenes.sun,
    "rows": _scenes.rows,
}
DIFFICULTY = _scenes.DIFFICULTY
REPORT_SEED0 = 700_000
"""First seed of the reported range (the figures in the README use 700000 up)."""
STYLE_VERSION = 1


def scene_id(scene: str, seed: int) -> str:
    """Stable item id, safe as a file name: ``dice-outstyle-700042``."""
    return f"{scene}-{DIFFICULTY}-{seed:06d}"


def generate(scene: str, seed: int) -> Scene:
    """One out-of-style scene with exact truth and its programs (same arguments, same bytes)."""
    return style_scene(SCENES, scene, seed, [0x5EED, STYLE_VERSION], scene_id)


def write_suite(
    out_dir: Path | str,
    n_per_scene: int = 40,
    seed: int = REPORT_SEED0,
    scenes: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Write ``<id>.png`` images, ``programs.jsonl``, ``truth.jsonl`` and ``manifest.json``.

    The layout is the in-style suite's, so ``groundeval run`` and the demo's
    accuracy table read it unchanged.
    """
    head = {"style": "outstyle", "style_version": STYLE_VERSION, "difficulties": [DIFFICULTY]}
    return write_style_suite(out_dir, generate, head, list(SCENES), scenes, n_per_scene, seed)
