"""Programs: the model and its loaders, checks, the runner, scoring and the CLI.

Exports resolve lazily (PEP 562): grounding and judges import the program model
without pulling in the runner, which imports them in turn.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_EXPORTS = {
    "GroundSpec": "_model",
    "NamedCheck": "_model",
    "Program": "_model",
    "Question": "_model",
    "ProgramFileError": "_loaders",
    "ProgramIssue": "_loaders",
    "load_program_files": "_loaders",
    "load_programs": "_loaders",
    "ItemsError": "_run",
    "RunReport": "_run",
    "Shard": "_run",
    "items_from_images": "_run",
    "items_from_manifest": "_run",
    "run_items": "_run",
    "Executor": "_run",
    "LocalExecutor": "_run",
    "JudgeRecipe": "_ray",
    "RayExecutor": "_ray",
    "ItemInput": "_runner",
    "grade_item": "_runner",
    "rescore_run": "_rescore",
    "merge_runs": "_rescore",
    "CheckError": "_checks",
    "ElementView": "_checks",
    "check_names": "_checks",
    "load_check_module": "_checks",
    "register_check": "_checks",
    "run_check": "_checks",
    "validate_check": "_checks",
    "normalize_text": "_views",
    "get_protocol": "scoring",
    "register_protocol": "scoring",
}

__all__ = [
    "CheckError",
    "ElementView",
    "Executor",
    "GroundSpec",
    "ItemInput",
    "ItemsError",
    "JudgeRecipe",
    "LocalExecutor",
    "NamedCheck",
    "Program",
    "ProgramFileError",
    "ProgramIssue",
    "Question",
    "RayExecutor",
    "RunReport",
    "Shard",
    "check_names",
    "get_protocol",
    "grade_item",
    "items_from_images",
    "items_from_manifest",
    "load_check_module",
    "load_program_files",
    "load_programs",
    "merge_runs",
    "normalize_text",
    "register_check",
    "register_protocol",
    "rescore_run",
    "run_check",
    "run_items",
    "validate_check",
]

if TYPE_CHECKING:
    from groundeval.programs._checks import (
        CheckError,
        ElementView,
        check_names,
        load_check_module,
        register_check,
        run_check,
        validate_check,
    )
    from groundeval.programs._loaders import (
        ProgramFileError,
        ProgramIssue,
        load_program_files,
        load_programs,
    )
    from groundeval.programs._model import GroundSpec, NamedCheck, Program, Question
    from groundeval.programs._ray import JudgeRecipe, RayExecutor
    from groundeval.programs._rescore import merge_runs, rescore_run
    from groundeval.programs._run import (
        Executor,
        ItemsError,
        LocalExecutor,
        RunReport,
        Shard,
        items_from_images,
        items_from_manifest,
        run_items,
    )
    from groundeval.programs._runner import ItemInput, grade_item
    from groundeval.programs._views import normalize_text
    from groundeval.programs.scoring import get_protocol, register_protocol


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'groundeval.programs' has no attribute {name!r}")
    return getattr(importlib.import_module(f"groundeval.programs.{_EXPORTS[name]}"), name)
