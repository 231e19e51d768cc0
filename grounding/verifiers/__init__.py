"""Built-in verifiers, registered by name on import."""

from groundeval.grounding.verifiers import judge, offline  # noqa: F401
