"""Out-of-style synthetic scenes: a second, independent renderer for honest accuracy figures.

The in-style scenes (``benchmarks/synthetic``) are what groundeval's proposers
are tuned on. These scenes are drawn by different code in a different style:
PIL sprites (dice with white, ivory, red, blue, black, green or yellow faces
and lighter or darker pips, rounded corners, rotation and perspective; coins of
seven metals with rims, embossing and highlights) alpha-composited with cast
shadows onto procedural wood grain, woven cloth, cloudy gradients and
scikit-image photographs, then lit unevenly, blurred, noised and JPEG-encoded;
plus bar charts, compass dials, suns and rows of tokens or coins in the same
spirit. Truth and programs
use the in-style suite's format, so the same graders run on both.

Report on seeds from :data:`REPORT_SEED0` up; nothing in groundeval is tuned on
this style, and if you tune on it, use seeds below :data:`REPORT_SEED0`.
"""

from groundeval.benchmarks.synthetic.outstyle._suite import (
    DIFFICULTY,
    REPORT_SEED0,
    SCENES,
    generate,
    scene_id,
    write_suite,
)

__all__ = ["DIFFICULTY", "REPORT_SEED0", "SCENES", "generate", "scene_id", "write_suite"]
