"""Built-in verifiers, registered by name on import."""

from groundeval.grounding.verifiers import consensus, judge, offline  # noqa: F401
