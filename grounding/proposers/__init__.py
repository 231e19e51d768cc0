"""Built-in proposers, registered by name on import."""

from groundeval.grounding.proposers import judge, opencv_contours, opencv_dice  # noqa: F401
