"""Scoring protocols: grounded, checklist (BizGenEval), rubric (UEval), dependency (DSG)."""

from groundeval.programs.scoring._base import (
    ItemScore,
    ScoringProtocol,
    get_protocol,
    register_protocol,
)
from groundeval.programs.scoring._checklist import (
    ALPHA,
    DIMENSION_ORDER,
    DOMAIN_ORDER,
    ChecklistRecord,
    ChecklistScoring,
    LeftOut,
    Missing,
    count_rows,
    record_from_outcomes,
    records_table,
    summary_payload,
    track_score,
    zero_record,
)
from groundeval.programs.scoring._dependency import (
    DependencyScoring,
    dependency_scores,
    parents_of,
)
from groundeval.programs.scoring._grounded import GroundedScoring
from groundeval.programs.scoring._rubric import RubricScoring, rubric_score

__all__ = [
    "ALPHA",
    "DIMENSION_ORDER",
    "DOMAIN_ORDER",
    "ChecklistRecord",
    "ChecklistScoring",
    "DependencyScoring",
    "GroundedScoring",
    "ItemScore",
    "LeftOut",
    "Missing",
    "RubricScoring",
    "ScoringProtocol",
    "count_rows",
    "dependency_scores",
    "get_protocol",
    "parents_of",
    "record_from_outcomes",
    "records_table",
    "register_protocol",
    "rubric_score",
    "summary_payload",
    "track_score",
    "zero_record",
]
