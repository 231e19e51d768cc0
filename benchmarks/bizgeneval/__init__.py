"""BizGenEval: checklist programs from the official JSONL and summaries in its shape."""

from groundeval.benchmarks.bizgeneval._data import (
    FAMILY_INSTRUCTIONS,
    BizGenEvalDataError,
    BizGenEvalItem,
    image_stem,
    load_bizgeneval,
    row_program,
)
from groundeval.benchmarks.bizgeneval._summary import (
    ReferenceScan,
    reference_labels,
    scan_reference,
    summarize_reference,
    summarize_run,
)

__all__ = [
    "FAMILY_INSTRUCTIONS",
    "BizGenEvalDataError",
    "BizGenEvalItem",
    "ReferenceScan",
    "image_stem",
    "load_bizgeneval",
    "reference_labels",
    "row_program",
    "scan_reference",
    "summarize_reference",
    "summarize_run",
]
