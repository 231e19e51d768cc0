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
from groundeval.state._registry import Registry, RegistryError, UnknownNameError, origin_of
from groundeval.state._specs import GroundingTarget, GroundSpec, Helper, SecondOpinion
from groundeval.state._store import (
    RunStore,
    RunStoreError,
    atomic_write,
    iter_jsonl,
    record_line,
    shard_of,
)
from groundeval.state._summary import (
    PROTOCOL_SUMMARIES,
    RunSummary,
    SummaryError,
    read_summary,
    validate_summary,
)
from groundeval.state._version import toolkit_version

__all__ = [
    "PROTOCOL_SUMMARIES",
    "RESULT_VERSION",
    "STATE_VERSION",
    "CheckTrace",
    "Decision",
    "Element",
    "GroundSpec",
    "GroundingTarget",
    "Helper",
    "ItemResult",
    "ItemUsage",
    "Outcome",
    "Override",
    "Provenance",
    "Registry",
    "RegistryError",
    "Round",
    "RunStore",
    "RunStoreError",
    "RunSummary",
    "SecondOpinion",
    "StateFile",
    "SummaryError",
    "UnknownNameError",
    "Usage",
    "atomic_write",
    "iter_jsonl",
    "origin_of",
    "read_summary",
    "record_line",
    "shard_of",
    "toolkit_version",
    "validate_summary",
]
