"""Built-in proposers, registered by name on import (torch and ultralytics load lazily)."""

from groundeval.grounding.proposers import (  # noqa: F401
    judge,
    ocr,
    opencv_circles,
    opencv_color,
    opencv_contours,
    opencv_dice,
    opencv_lines,
    sam,
    yolo,
    yolo_dice,
)
