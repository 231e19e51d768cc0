"""Drafting programs from prompts: a judge writes, ``groundeval validate`` checks, errors go back.

For each prompt the judge is shown the catalogue (built from the registries), the
program JSON Schema (also sent as the response schema) and the prompt; its reply
is validated by the very code ``groundeval validate`` runs. The validation
messages go back to the judge for at most ``budget`` calls. Only a draft that
validates is ever returned as authored; the rest are returned as failures with
their last errors.
"""

from __future__ import annotations

import asyncio
import csv
import hashlib
import io
import json
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundeval.judges import JudgeCall, JudgeError, load_json
from groundeval.programs._catalogue import catalogue_text
from groundeval.programs._loaders import ProgramFileError, load_programs
from groundeval.programs._model import ID_PATTERN, Program, Provenance
from groundeval.state import Usage

AXES: tuple[str, ...] = (
    "counterfactual",
    "symbolic",
    "world",
    "physics",
    "quantity",
    "spatial",
    "latent",
    "long_range",
    "text",
)
"""GenOlympiad's nine capability axes, the values of the ``axis`` tag."""
DEFAULT_BUDGET = 3
RATIONALE_HEADER = "Hidden facts for grading (never shown to the image generator): "
_ID_RE = re.compile(ID_PATTERN)
_JUDGE_SET = ("version", "status", "provenance")
"""Program keys the drafting judge may not set (the author sets them)."""

INSTRUCTIONS = """\
You write an evaluation program for groundeval, which grades an AI-generated image
for the generation prompt below from visible evidence.
Rules:
- gates: 1-3 easy yes/no questions (is the main subject there at all?). A gate failing
  scores the item 0.
- hard: the prompt's demanding requirements, each with a weight > 0 (more for what
  matters more).
- Ground a hard question whenever its answer can be measured: give "ground" (helper,
  target, proposer, optional params/fields/min_count/max_count) and a deterministic
  "check" (a safe expression, or {"name": ..., "args": {...}} from the named checks).
  A later question may reuse a grounding with "uses": "<question id>".
- Use ONLY proposers, verifiers, parameters and checks listed in the catalogue, with
  their exact names; a proposer's "params" may only use the keys it lists.
- "scoring" is optional (default grounded); if given, use a protocol the catalogue lists.
- Where nothing can be grounded, write a plain question (no ground, no check): the
  judge answers it yes/no at grading time.
- Question ids: letters, digits, _ . : - (g1, g2 for gates; h1, h2 for hard questions).
- Reply with the program as one JSON object following the response schema.
"""


@dataclass(frozen=True)
class AuthorPrompt:
    """One prompt to draft a program for."""

    id: str
    prompt: str
    axis: str | None = None
    rationale: str = ""
    """Hidden facts used only for grading (BizGenEval-style); never part of the prompt."""
    source: str = ""
    """``file:line`` the prompt came from, for messages."""

    @property
    def sha256(self) -> str:
        """Hash of what the draft was written for: the prompt and the rationale."""
        blob = json.dumps([self.prompt, self.rationale], ensure_ascii=False)
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class Outcome:
    """What became of one prompt: a program that validates, or the last errors."""

    prompt: AuthorPrompt
    program: Program | None
    rounds: int
    errors: list[str] = field(default_factory=list)
    last_reply: str = ""
    usage: Usage = field(default_factory=Usage)

    def failed_record(self) -> dict[str, Any]:
        """The ``failed.jsonl`` line for a prompt that never validated."""
        return {
            "id": self.prompt.id,
            "prompt": self.prompt.prompt,
            "axis": self.prompt.axis,
            "rounds": self.rounds,
            "errors": self.errors,
            "last_reply": self.last_reply,
        }


class PromptFileError(ValueError):
    """A prompts file with problems, every one naming file, line, field and what is wrong."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("\n".join(problems))


# ----------------------------------------------------------------------------- prompts


def read_prompts(path: Path) -> list[AuthorPrompt]:
    """Prompts from JSONL (``id``, ``prompt``, ``axis``?, ``rationale``?), CSV or plain text.

    Plain text is one prompt a line (ids ``p0001``, ...); CSV needs a ``prompt``
    column and may have ``id``, ``axis`` and ``rationale``.

    Raises:
        PromptFileError: listing every bad line, missing field, bad id or duplicate.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptFileError([f"{path}: cannot read as UTF-8 text: {exc}"]) from exc
    problems: list[str] = []
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        rows = _jsonl_rows(path, text, problems)
    elif suffix == ".csv":
        rows = _csv_rows(path, text, problems)
    else:
        rows = [
            (f"{path}:{n}", {"id": f"p{n:04d}", "prompt": line.strip()})
            for n, line in enumerate(text.split("\n"), start=1)
            if line.strip()
        ]
    prompts = [p for p in (_prompt(where, row, problems) for where, row in rows) if p is not None]
    seen: dict[str, str] = {}
    for p in prompts:
        if p.id in seen:
            problems.append(f"{p.source}: id: duplicate id {p.id!r} (first at {seen[p.id]})")
        seen.setdefault(p.id, p.source)
    if not prompts and not problems:
        problems.append(f"{path}: no prompts found")
    if problems:
        raise PromptFileError(problems)
    return prompts


def _jsonl_rows(path: Path, text: str, problems: list[str]) -> list[tuple[str, Any]]:
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            rows.append((f"{path}:{number}", json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: not JSON: {exc.msg}")
    return rows


def _csv_rows(path: Path, text: str, problems: list[str]) -> list[tuple[str, Any]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if reader.fieldnames is None or "prompt" not in reader.fieldnames:
        problems.append(f"{path}:1: expected a 'prompt' column, got {reader.fieldnames}")
        return []
    rows = []
    for index, row in enumerate(reader, start=1):
        data = {k: v for k, v in row.items() if k and v not in (None, "")}
        data.setdefault("id", f"p{index:04d}")
        rows.append((f"{path}:{reader.line_num}", data))
    return rows


def _prompt(where: str, row: Any, problems: list[str]) -> AuthorPrompt | None:
    if not isinstance(row, dict):
        problems.append(f"{where}: expected an object with 'id' and 'prompt'")
        return None
    bad = len(problems)
    pid, prompt = row.get("id"), row.get("prompt")
    if not isinstance(pid, str) or not _ID_RE.match(pid) or ".." in pid:
        problems.append(
            f"{where}: id: expected letters, digits and _ . : - (no '/', no '..'), got {pid!r}"
        )
    if not isinstance(prompt, str) or not prompt.strip():
        problems.append(f"{where}: prompt: expected a non-empty string, got {prompt!r}")
    axis = row.get("axis")
    if axis is not None and axis not in AXES:
        problems.append(f"{where}: axis: expected one of {', '.join(AXES)}, got {axis!r}")
    rationale = row.get("rationale", "")
    if not isinstance(rationale, str):
        problems.append(f"{where}: rationale: expected a string, got {type(rationale).__name__}")
    unknown = sorted(set(row) - {"id", "prompt", "axis", "rationale"})
    if unknown:
        problems.append(
            f"{where}: unknown field(s) {unknown}; expected id, prompt, axis, rationale"
        )
    if len(problems) > bad:
        return None
    return AuthorPrompt(str(pid), str(prompt).strip(), axis, str(rationale), where)


# ----------------------------------------------------------------------------- validation


def response_schema() -> dict[str, Any]:
    """The program JSON Schema the reply must follow (without the author-set keys)."""
    schema = Program.model_json_schema()
    props = schema.get("properties", {})
    for key in _JUDGE_SET:
        props.pop(key, None)
    defs = schema.get("$defs", {})
    defs.pop("Provenance", None)
    schema["title"] = "Program draft"
    return schema


def validate_draft(data: dict[str, Any]) -> list[str]:
    """Every problem ``groundeval validate`` finds in one program (empty: valid).

    The draft goes through :func:`load_programs` itself (schema, references, static
    expression check, proposer and verifier names and parameters).
    """
    with tempfile.TemporaryDirectory(prefix="groundeval-author-") as tmp:
        path = Path(tmp) / "draft.json"
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        try:
            load_programs(path)
        except ProgramFileError as exc:
            return [f"{i.location}: {i.message}".replace(str(path), "draft") for i in exc.issues]
    return []


def finish_draft(data: dict[str, Any], prompt: AuthorPrompt) -> dict[str, Any]:
    """The judge's program with what the author owns set: id, prompt, axis, rationale."""
    if set(data) == {"program"} and isinstance(data["program"], dict):
        data = data["program"]
    out = {k: v for k, v in data.items() if k not in _JUDGE_SET}
    out["id"] = prompt.id
    out["prompt"] = prompt.prompt
    given = out.get("tags")
    tags = {str(k): v for k, v in given.items()} if isinstance(given, dict) else {}
    if prompt.axis:
        tags["axis"] = prompt.axis
    out["tags"] = tags
    if prompt.rationale:
        own = out.get("instructions") if isinstance(out.get("instructions"), str) else ""
        out["instructions"] = f"{own}\n{RATIONALE_HEADER}{prompt.rationale}".strip()
    return out


# ----------------------------------------------------------------------------- drafting


def build_prompt(
    prompt: AuthorPrompt, catalogue: str, previous: str = "", errors: list[str] | None = None
) -> str:
    """The drafting prompt: rules, catalogue, the prompt, and the last round's errors."""
    parts = [INSTRUCTIONS, f"Catalogue (JSON):\n{catalogue}", f"Generation prompt: {prompt.prompt}"]
    if prompt.axis:
        parts.append(f"Capability axis: {prompt.axis}")
    if prompt.rationale:
        parts.append(
            "Hidden facts the grader knows (the image generator never saw them; write "
            f"questions that test them): {prompt.rationale}"
        )
    if errors:
        listed = "\n".join(f"- {e}" for e in errors)
        parts.append(
            f"Your previous draft:\n{previous}\nIt failed validation:\n{listed}\n"
            "Return the whole corrected program."
        )
    return "\n\n".join(parts)


async def author_one(
    judge: Any,
    prompt: AuthorPrompt,
    *,
    budget: int = DEFAULT_BUDGET,
    catalogue: str | None = None,
    schema: dict[str, Any] | None = None,
) -> Outcome:
    """Draft, validate, feed the errors back, at most ``budget`` calls; never a bad program."""
    catalogue = catalogue if catalogue is not None else catalogue_text()
    schema = schema if schema is not None else response_schema()
    outcome = Outcome(prompt, None, 0)
    previous = ""
    for round_index in range(1, budget + 1):
        call = JudgeCall(
            task="author",
            prompt=build_prompt(prompt, catalogue, previous, outcome.errors),
            images=(),
            response_schema=schema,
            item_id=prompt.id,
            context={"prompt_id": prompt.id, "axis": prompt.axis, "round": round_index},
        )
        outcome.rounds = round_index
        try:
            reply = await judge.generate(call)
        except JudgeError as exc:
            outcome.errors = [f"judge error: {exc}"]
            return outcome
        outcome.usage = outcome.usage.add(reply.usage)
        outcome.last_reply = previous = reply.text
        data = load_json(reply.text)
        if not isinstance(data, dict):
            outcome.errors = ["the reply is not one JSON object (a program)"]
            continue
        draft = finish_draft(data, prompt)
        outcome.errors = validate_draft(draft)
        if outcome.errors:
            continue
        draft["status"] = "draft"
        draft["provenance"] = Provenance(
            judge=str(judge.spec),
            model=str(judge.model),
            prompt_sha256=prompt.sha256,
            rounds=round_index,
        ).model_dump(exclude_defaults=True)
        outcome.program = Program.model_validate(draft)
        return outcome
    return outcome


async def author_all(
    judge: Any,
    prompts: list[AuthorPrompt],
    *,
    budget: int = DEFAULT_BUDGET,
    concurrency: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Draft every prompt (``concurrency`` at once); outcomes in the prompts' order."""
    if budget < 1:
        raise ValueError(f"budget must be >= 1, got {budget}")
    catalogue, schema = catalogue_text(), response_schema()
    gate = asyncio.Semaphore(max(1, concurrency))
    done = 0

    async def one(p: AuthorPrompt) -> Outcome:
        nonlocal done
        async with gate:
            result = await author_one(judge, p, budget=budget, catalogue=catalogue, schema=schema)
        done += 1
        if progress is not None:
            progress(done, len(prompts))
        return result

    return list(await asyncio.gather(*(one(p) for p in prompts)))


__all__ = [
    "AXES",
    "AuthorPrompt",
    "Outcome",
    "PromptFileError",
    "author_all",
    "author_one",
    "build_prompt",
    "finish_draft",
    "read_prompts",
    "response_schema",
    "validate_draft",
]
