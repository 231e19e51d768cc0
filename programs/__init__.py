"""Programs: the model and its loaders, checks, the runner, scoring and the CLI."""

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
    dump_programs_jsonl,
    load_program_files,
    load_programs,
)
from groundeval.programs._model import GroundSpec, NamedCheck, Program, Question, check_id
from groundeval.programs._plugins import load_plugin, load_plugins
from groundeval.programs._protocols import PROTOCOLS, protocol_names
from groundeval.programs._ray import JudgeRecipe, RayExecutor
from groundeval.programs._rescore import (
    ArchivedOverride,
    merge_runs,
    read_override_archive,
    rescore_run,
)
from groundeval.programs._run import (
    Executor,
    ItemsError,
    LocalExecutor,
    RunReport,
    Shard,
    items_from_images,
    items_from_manifest,
    load_run_programs,
    run_items,
)
from groundeval.programs._runner import ItemInput, grade_item
from groundeval.programs._views import TooCloseToCall, normalize_text
from groundeval.programs.scoring import get_protocol, register_protocol

__all__ = [
    "PROTOCOLS",
    "ArchivedOverride",
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
    "TooCloseToCall",
    "check_id",
    "check_names",
    "dump_programs_jsonl",
    "get_protocol",
    "grade_item",
    "items_from_images",
    "items_from_manifest",
    "load_check_module",
    "load_plugin",
    "load_plugins",
    "load_program_files",
    "load_programs",
    "load_run_programs",
    "merge_runs",
    "normalize_text",
    "protocol_names",
    "read_override_archive",
    "register_check",
    "register_protocol",
    "rescore_run",
    "run_check",
    "run_items",
    "validate_check",
]
