"""Built-in proposers, registered by name on import (ultralytics is imported lazily)."""

from groundeval.grounding.proposers import (  # noqa: F401
    judge,
    ocr,
    opencv_circles,
    opencv_color,
    opencv_contours,
    opencv_dice,
    opencv_lines,
    yolo,
)
