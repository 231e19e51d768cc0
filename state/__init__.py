"""Records on disk, their schemas, the run store and the judge-call cache."""

from groundeval.state._records import (
    RESULT_VERSION,
    STATE_VERSION,
    CheckTrace,
    Decision,
    Element,
    ItemResult,
    ItemUsage,
    Outcome,
    Override,
    Provenance,
    Round,
    StateFile,
    Usage,
)

__all__ = [
    "RESULT_VERSION",
    "STATE_VERSION",
    "CheckTrace",
    "Decision",
    "Element",
    "ItemResult",
    "ItemUsage",
    "Outcome",
    "Override",
    "Provenance",
    "Round",
    "StateFile",
    "Usage",
]
