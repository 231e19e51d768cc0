"""Synthetic benchmark with exact ground truth: dice, coins, bar charts, compasses, suns.

Seeded generators at three difficulties (``clean``, ``moderate``, ``hard``) return
an image, its truth (objects drawn and the expected outcome of every question) and
the programs that grade it offline with the OpenCV and OCR proposers.
"""

from groundeval.benchmarks.synthetic._common import Scene
from groundeval.benchmarks.synthetic._demo import run_demo
from groundeval.benchmarks.synthetic._effects import DIFFICULTIES
from groundeval.benchmarks.synthetic._suite import (
    AXIS_SCENES,
    SCENES,
    generate,
    scene_id,
    write_suite,
)
from groundeval.grounding import encode_png

__all__ = [
    "AXIS_SCENES",
    "DIFFICULTIES",
    "SCENES",
    "Scene",
    "encode_png",
    "generate",
    "run_demo",
    "scene_id",
    "write_suite",
]
