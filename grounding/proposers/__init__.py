"""Built-in proposers, registered by name on import (torch and ultralytics load lazily).

Default paths at default parameters: dice -> ``opencv.dice`` (any face colour, pips
lighter or darker than the face); coins -> ``opencv.contours``. Every CV proposer
checks itself after detecting (``Proposal.unexplained``, ``Proposal.problems``).
"""

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
    yolo_coins,
    yolo_dice,
)
