"""UEval: rubric programs over answers made of text and images."""

from groundeval.benchmarks.ueval._data import (
    INSTRUCTIONS,
    UEvalDataError,
    load_ueval,
    read_rows,
    row_program,
    ueval_items,
)

__all__ = [
    "INSTRUCTIONS",
    "UEvalDataError",
    "load_ueval",
    "read_rows",
    "row_program",
    "ueval_items",
]
