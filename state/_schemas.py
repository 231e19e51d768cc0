"""JSON Schemas generated from the models and checked in under ``state/schemas/``.

Other tools (and other languages) read programs, state files and results through
these files; a test fails when they drift from the models. The schemas cover every
layer (the program model lives above the state), so this publisher sits on top of
the layers, like the report.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from groundeval.programs import Program
from groundeval.state._records import ItemResult, StateFile
from groundeval.state._summary import RunSummary

SCHEMA_FILES = {
    "program": "program.schema.json",
    "state": "state.schema.json",
    "result": "result.schema.json",
    "summary": "summary.schema.json",
}


def generate_schemas() -> dict[str, dict[str, Any]]:
    """Schemas from the pydantic models, keyed like :data:`SCHEMA_FILES`."""
    out = {}
    models = (
        ("program", Program),
        ("state", StateFile),
        ("result", ItemResult),
        ("summary", RunSummary),  # summary.json (each built-in protocol's section typed)
    )
    for name, model in models:
        schema = model.model_json_schema()
        schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
        schema["$id"] = f"https://groundeval.dev/schemas/{SCHEMA_FILES[name]}"
        out[name] = schema
    return out


def schema_text(schema: dict[str, Any]) -> str:
    """The checked-in text of a schema (stable formatting)."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def load_schema(name: str) -> dict[str, Any]:
    """A checked-in schema (``program``, ``state``, ``result`` or ``summary``)."""
    text = resources.files("groundeval.state").joinpath("schemas", SCHEMA_FILES[name]).read_text()
    data: dict[str, Any] = json.loads(text)
    return data
