"""Where the repository and its data are, and a tiny image writer every test package uses."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"
"""Benchmark data carried in the repository (upstream licences kept): no test reads outside it."""


def write_image(path: Path, width: int = 64, height: int = 48, colour=(40, 120, 40)) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((height, width, 3), colour, dtype=np.uint8)).save(path)
    return path
