"""Held-out synthetic scenes: a third, independent renderer used only to report accuracy.

groundeval's proposers are tuned on the in-style scenes (``benchmarks/synthetic``);
the out-of-style scenes (``outstyle``) were drawn to widen them. This style is
drawn by code written without reading either renderer or any proposer, and
nobody tunes on it: anti-aliased numpy shaders at random scales and image sizes;
dice in three-quarter view with lit side faces (the top face counts), pips
round, square, hollow or cupped in any colour that shows; embossed coins with
rims, lettering, a relief numeral and specular light; charts printed on paper
photographed at a slight angle; compasses and clocks with several needle and
hand shapes, numerals and bezels; scikit-image photographs (cropped, turned,
recoloured, defocused) and procedural wood, marble, cloth and cloud surfaces;
shaded shapes over a noise-textured lake with darker, bluer, rippled reflections;
soft cast shadows, vignetting, partial shade, colour casts, Gaussian or motion
blur, noise and JPEG at quality 40-90. The programs are the in-style kinds'
programs (same questions, ground specs and checks), so the same graders run.

Report on seeds from :data:`REPORT_SEED0` up. Needs scikit-image (the ``dev``
extra) for the photographs.
"""

from groundeval.benchmarks.synthetic.heldout._suite import (
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
