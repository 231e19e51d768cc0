"""Loading program files (YAML, JSON, JSONL) with errors that name file, place, expected, got.

Program files are untrusted data: YAML anchors/aliases are refused (no alias
bombs), files are size-limited, and every check is validated before anything runs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from groundeval.grounding import param_problems, proposer_names, verifier_names
from groundeval.grounding.proposers.yolo import weights_issues
from groundeval.programs._checks import validate_check
from groundeval.programs._model import Program

MAX_PROGRAM_FILE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class ProgramIssue:
    """One problem in a program file."""

    file: str
    location: str
    """``line 12`` and/or a JSON path such as ``$[0].hard[1].weight``."""
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.location}: {self.message}"


class ProgramFileError(ValueError):
    """A program file with one or more problems (all of them listed)."""

    def __init__(self, issues: list[ProgramIssue]) -> None:
        self.issues = issues
        super().__init__("\n".join(str(i) for i in issues))


def load_programs(path: Path, *, check: bool = True) -> list[Program]:
    """Load every program in a file; raise :class:`ProgramFileError` listing all problems."""
    path = Path(path)
    issues: list[ProgramIssue] = []
    docs = _documents(path, issues)
    parsed: list[tuple[_Doc, Program]] = []
    for doc in docs:
        try:
            program = Program.model_validate(doc.data)
        except ValidationError as exc:
            issues += [_issue(path, doc, err) for err in exc.errors()]
            continue
        if check:
            issues += _check_issues(path, doc, program)
        parsed.append((doc, program))
    seen: dict[str, str] = {}
    for doc, program in parsed:  # each program with its own document (a bad one is skipped)
        if program.id in seen:
            issues.append(
                ProgramIssue(str(path), doc.where, f"duplicate program id {program.id!r}")
            )
        seen[program.id] = doc.where
    if issues:
        raise ProgramFileError(issues)
    return [program for _, program in parsed]


def load_program_files(paths: list[Path], *, check: bool = True) -> list[Program]:
    """Load several files; ids must be unique across them."""
    issues: list[ProgramIssue] = []
    programs: list[Program] = []
    for path in paths:
        try:
            programs += load_programs(path, check=check)
        except ProgramFileError as exc:
            issues += exc.issues
    ids = [p.id for p in programs]
    for dup in sorted({i for i in ids if ids.count(i) > 1}):
        issues.append(
            ProgramIssue(", ".join(map(str, paths)), "$", f"duplicate program id {dup!r}")
        )
    if issues:
        raise ProgramFileError(issues)
    return programs


def dump_programs_jsonl(programs: list[Program]) -> str:
    """Programs as canonical JSONL (what a run folder keeps)."""
    return "".join(
        json.dumps(p.model_dump(mode="json", exclude_defaults=True), sort_keys=True) + "\n"
        for p in programs
    )


@dataclass
class _Doc:
    data: Any
    where: str
    """``line N`` of the document start, for messages."""
    prefix: str
    """JSON path prefix of this program inside the file."""
    node: yaml.Node | None = None
    line: int | None = None


def _documents(path: Path, issues: list[ProgramIssue]) -> list[_Doc]:
    try:
        size = path.stat().st_size
        if size > MAX_PROGRAM_FILE_BYTES:
            raise ProgramFileError(
                [ProgramIssue(str(path), "$", f"file is {size} bytes, over the limit")]
            )
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProgramFileError([ProgramIssue(str(path), "$", f"cannot read: {exc}")]) from exc
    except UnicodeDecodeError as exc:
        raise ProgramFileError([ProgramIssue(str(path), "$", "not UTF-8 text")]) from exc
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return _jsonl_docs(path, text, issues)
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            where = f"line {exc.lineno} column {exc.colno}"
            raise ProgramFileError(
                [ProgramIssue(str(path), where, f"invalid JSON: {exc.msg}")]
            ) from exc
        return _split(data, None, "")
    if suffix in (".yaml", ".yml"):
        return _yaml_docs(path, text)
    raise ProgramFileError(
        [ProgramIssue(str(path), "$", f"expected .yaml, .yml, .json or .jsonl, got {suffix!r}")]
    )


def _jsonl_docs(path: Path, text: str, issues: list[ProgramIssue]) -> list[_Doc]:
    docs: list[_Doc] = []
    for number, line in enumerate(text.split("\n"), start=1):  # never splitlines()
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            issues.append(ProgramIssue(str(path), f"line {number}", f"invalid JSON: {exc.msg}"))
            continue
        docs.append(_Doc(data, f"line {number}", "$", line=number))
    return docs


def _yaml_docs(path: Path, text: str) -> list[_Doc]:
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                line = event.start_mark.line + 1 if event.start_mark else 0
                raise ProgramFileError(
                    [
                        ProgramIssue(
                            str(path),
                            f"line {line}",
                            "YAML anchors and aliases are not allowed in program files",
                        )
                    ]
                )
        nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        datas = list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "$"
        raise ProgramFileError([ProgramIssue(str(path), where, f"invalid YAML: {exc}")]) from exc
    docs: list[_Doc] = []
    for node, data in zip(nodes, datas, strict=True):
        if data is None:
            continue
        docs += _split(data, node, "")
    return docs


def _split(data: Any, node: yaml.Node | None, where: str) -> list[_Doc]:
    """A file holds one program (a mapping) or a list of programs."""
    if isinstance(data, list):
        children = node.value if isinstance(node, yaml.SequenceNode) else [None] * len(data)
        return [
            _Doc(d, _line_of(n) or f"$[{i}]", f"$[{i}]", n)
            for i, (d, n) in enumerate(zip(data, children, strict=True))
        ]
    return [_Doc(data, _line_of(node) or "$", "$", node)]


def _line_of(node: yaml.Node | None) -> str:
    return f"line {node.start_mark.line + 1}" if node is not None else ""


def _issue(path: Path, doc: _Doc, err: Any) -> ProgramIssue:
    loc = [part for part in err["loc"] if not isinstance(part, str) or "[" not in part]
    json_path = doc.prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    line = _yaml_line(doc.node, loc) if doc.node is not None else doc.line
    where = f"line {line}, {json_path}" if line else json_path
    got = err.get("input")
    got_text = "" if isinstance(got, (dict, list)) else f" (got {got!r:.80})"
    msg = err["msg"].removeprefix("Value error, ")
    return ProgramIssue(str(path), where, f"{msg}{got_text}")


def _yaml_line(node: yaml.Node, loc: list[Any]) -> int:
    """Line of the deepest YAML node a pydantic error location reaches."""
    for part in loc:
        if isinstance(node, yaml.MappingNode) and isinstance(part, str):
            nxt = next((v for k, v in node.value if k.value == part), None)
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            nxt = node.value[part]
        else:
            nxt = None
        if nxt is None:
            break
        node = nxt
    return int(node.start_mark.line) + 1


def _path_parts(place: str) -> list[str | int]:
    """``agree_with[0].params`` -> ``["agree_with", 0, "params"]``."""
    return [int(i) if i else k for k, i in re.findall(r"(\w+)|\[(\d+)\]", place)]


def _located(doc: _Doc, loc: list[str | int]) -> str:
    """``line N, $.hard[0].ground.params``: the JSON path, with the YAML line when known."""
    json_path = doc.prefix + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc)
    line = _yaml_line(doc.node, loc) if doc.node is not None else doc.line
    return f"line {line}, {json_path}" if line else json_path


def _check_issues(path: Path, doc: _Doc, program: Program) -> list[ProgramIssue]:
    issues: list[ProgramIssue] = []
    proposers, verifiers = set(proposer_names()), set(verifier_names())
    for section in ("gates", "hard"):
        for index, q in enumerate(getattr(program, section)):
            where = f"{doc.prefix}.{section}[{index}]"
            if q.check is not None:
                try:
                    validate_check(q.check)
                except ValueError as exc:
                    issues.append(ProgramIssue(str(path), f"{where}.check", str(exc)))
            if q.ground is None:
                continue
            for kind, name, known in (
                ("proposer", q.ground.proposer, proposers),
                ("verifier", q.ground.verifier, verifiers),
            ):
                if name not in known:
                    message = f"unknown {kind} {name!r}; known: {', '.join(sorted(known))}"
                    issues.append(ProgramIssue(str(path), f"{where}.ground.{kind}", message))
            for place, message in param_problems(q.ground):  # unknown or ill-typed parameters
                loc = [section, index, "ground", *_path_parts(place)]
                issues.append(ProgramIssue(str(path), _located(doc, loc), message))
            for k, opinion in enumerate(q.ground.agree_with):
                if opinion.proposer not in proposers:
                    known_names = ", ".join(sorted(proposers))
                    message = f"unknown proposer {opinion.proposer!r}; known: {known_names}"
                    place = f"{where}.ground.agree_with[{k}]"
                    issues.append(ProgramIssue(str(path), place, message))
            for field, message in weights_issues(q.ground):
                issues.append(ProgramIssue(str(path), f"{where}.ground.{field}", message))
    return issues
