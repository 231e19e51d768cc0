"""Probe-style synthetic scenes: a fifth renderer, to count confident wrongs on a new look.

Drawn as image generators and product photographers draw: studio sweeps with contact
shadows and faint reflections on a glossy floor, flat illustrations with dark outlines
and cel shading, painterly blur with brush strokes and a warm grade; gingham, stripes,
polka dots, linen and slate; dice with rounded corners in nine face colours, coins with
rims, numerals and highlights (five metals, bimetal too); pens, paper clips, sticky
notes, rings and bokeh discs beside them; noise, vignettes, JPEG 55-95. Sizes from
512x512 to 1024x768, portrait too. The programs are the in-style kinds' programs.

Seeds below :data:`REPORT_SEED0` may be looked at and tuned on; report from it up. Each
working session counts once on a fresh range above it, then tunes on that range's wrongs,
so counted ranges are tuning seeds too (104000-111199 by stop 56; the README's "Fresh
counts, stop by stop" lists them): report only on seeds above the last one counted.
"""

from groundeval.benchmarks.synthetic.probe._suite import (
    AXIS_SCENES,
    DIFFICULTY,
    REPORT_SEED0,
    SCENES,
    generate,
    scene_id,
    write_suite,
)

__all__ = [
    "AXIS_SCENES",
    "DIFFICULTY",
    "REPORT_SEED0",
    "SCENES",
    "generate",
    "scene_id",
    "write_suite",
]
