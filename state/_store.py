"""The run folder: atomic writes, resume after a crash, shards and their merge.

Layout::

    RUN/run.json          what changes scores: config, versions, judge, parameters
    RUN/programs.jsonl    the programs graded (rescoring needs nothing else)
    RUN/results.jsonl     one ItemResult per item, sorted by id when the run finishes
    RUN/usage.jsonl       calls, tokens and seconds per item (kept out of results)
    RUN/state/<item>/<question>.json   grounding evidence
    RUN/evidence/<item>/...png         overlays, one per round
    RUN/summary.json, RUN/summary.csv

Item and question ids never become paths unescaped (:func:`safe_name`).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from groundeval.grounding._loop import GroundingTarget
from groundeval.state._records import ItemResult, ItemUsage, StateFile

_T = TypeVar("_T", bound=BaseModel)


def safe_name(identifier: str) -> str:
    """Percent-escape an id into one path component (no '/', no '.', no '..')."""
    escaped = quote(identifier, safe="-_").replace(".", "%2E")
    return escaped or "%00"


def canonical_json(data: Any) -> str:
    """One deterministic JSON text: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_line(record: BaseModel) -> str:
    """A record as one canonical JSONL line."""
    return canonical_json(record.model_dump(mode="json")) + "\n"


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write via a temp file in the same folder, fsync, rename: never a half file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class RunStoreError(ValueError):
    """A run folder that cannot be used as asked (names the file and the problem)."""


class RunStore:
    """One run folder: writes results as items finish, reads them back on resume."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    # paths -----------------------------------------------------------------
    @property
    def results_path(self) -> Path:
        """results.jsonl."""
        return self.root / "results.jsonl"

    @property
    def usage_path(self) -> Path:
        """usage.jsonl."""
        return self.root / "usage.jsonl"

    @property
    def config_path(self) -> Path:
        """run.json."""
        return self.root / "run.json"

    @property
    def programs_path(self) -> Path:
        """programs.jsonl."""
        return self.root / "programs.jsonl"

    def state_path(self, item_id: str, question_id: str) -> Path:
        """Absolute path of a state file."""
        return self.root / "state" / safe_name(item_id) / f"{safe_name(question_id)}.json"

    # evidence sink (used by the runner) --------------------------------------
    def overlay_target(self, item_id: str) -> GroundingTarget:
        """Folder for the overlays of one item."""
        rel = f"evidence/{safe_name(item_id)}"
        return GroundingTarget(folder=self.root / rel, relative=rel)

    def write_state(self, state: StateFile) -> str:
        """Validate and write one state file; return its path inside the run."""
        StateFile.model_validate(state.model_dump(mode="json"))
        path = self.state_path(state.item_id, state.question_id)
        atomic_write(path, json.dumps(state.model_dump(mode="json"), indent=1, sort_keys=True))
        return path.relative_to(self.root).as_posix()

    def read_state(self, relative: str) -> StateFile:
        """Read and validate a state file named by its path inside the run."""
        parts = Path(relative).parts
        if not parts or parts[0] != "state" or ".." in parts or Path(relative).is_absolute():
            raise RunStoreError(f"{relative}: not a state path inside the run folder")
        path = self.root / relative
        try:
            return StateFile.model_validate_json(path.read_bytes())
        except (OSError, ValidationError) as exc:
            raise RunStoreError(f"{path}: not a valid state file: {exc}") from exc

    # config ------------------------------------------------------------------
    def start(self, config: dict[str, Any], programs_jsonl: str, *, resume: bool) -> None:
        """Create the folder, or check that a resumed run has the same configuration."""
        if self.config_path.exists():
            if not resume:
                raise RunStoreError(
                    f"{self.root}: already holds a run; pass --resume to continue it "
                    "or choose another --out"
                )
            old = json.loads(self.config_path.read_text())
            changed = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
            if changed:
                raise RunStoreError(
                    f"{self.config_path}: cannot resume, the configuration changed "
                    f"({', '.join(changed)}); start a new run folder"
                )
            for path in (self.results_path, self.usage_path):
                _drop_torn_tail(path)
            return
        self.root.mkdir(parents=True, exist_ok=True)
        atomic_write(self.config_path, json.dumps(config, indent=2, sort_keys=True) + "\n")
        atomic_write(self.programs_path, programs_jsonl)

    def config(self) -> dict[str, Any]:
        """run.json as a dict."""
        try:
            data: dict[str, Any] = json.loads(self.config_path.read_text())
        except (OSError, ValueError) as exc:
            raise RunStoreError(f"{self.config_path}: not a run folder ({exc})") from exc
        return data

    # results -----------------------------------------------------------------
    def append(self, result: ItemResult, usage: ItemUsage) -> None:
        """Append one finished item durably (a crash loses at most a partial last line)."""
        for path, record in ((self.results_path, result), (self.usage_path, usage)):
            with path.open("a", encoding="utf-8") as handle:
                handle.write(record_line(record))
                handle.flush()
                os.fsync(handle.fileno())

    def results(self) -> list[ItemResult]:
        """Latest result per item, in file order (a torn last line is ignored)."""
        latest = {r.item_id: r for r in _read_jsonl(self.results_path, ItemResult)}
        return list(latest.values())

    def usages(self) -> list[ItemUsage]:
        """Latest usage record per item."""
        latest = {u.item_id: u for u in _read_jsonl(self.usage_path, ItemUsage)}
        return list(latest.values())

    def finished_ids(self) -> set[str]:
        """Items that need no more work on resume (errors are retried)."""
        return {r.item_id for r in self.results() if r.status != "error"}

    def finalize(
        self, results: list[ItemResult] | None = None, *, usage: bool = True
    ) -> list[ItemResult]:
        """Rewrite results (and usage) deduplicated and sorted by item id, atomically."""
        final = sorted(results if results is not None else self.results(), key=lambda r: r.item_id)
        atomic_write(self.results_path, "".join(record_line(r) for r in final))
        if usage:
            usages = sorted(self.usages(), key=lambda u: u.item_id)
            atomic_write(self.usage_path, "".join(record_line(u) for u in usages))
        return final

    def write_summary(self, summary: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        """summary.json and summary.csv, atomically."""
        atomic_write(
            self.root / "summary.json", json.dumps(summary, indent=2, sort_keys=True) + "\n"
        )
        buf = io.StringIO()
        columns = list(dict.fromkeys(k for row in rows for k in row))
        writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        atomic_write(self.root / "summary.csv", buf.getvalue())


def _read_jsonl(path: Path, model: type[_T]) -> Iterator[_T]:
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        torn = number == len(lines) and not line.endswith("\n")
        try:
            yield model.model_validate_json(line)
        except ValidationError as exc:
            if torn:
                return  # the write a crash interrupted; the item is simply redone
            raise RunStoreError(f"{path}:{number}: not a valid {model.__name__}: {exc}") from exc


def _drop_torn_tail(path: Path) -> None:
    """Cut a line a crash left half-written, so appends start on a fresh line."""
    if not path.exists():
        return
    data = path.read_bytes()
    keep = data.rfind(b"\n") + 1
    if keep != len(data):
        with path.open("r+b") as handle:
            handle.truncate(keep)
            os.fsync(handle.fileno())


def shard_of(item_id: str, count: int) -> int:
    """Stable shard index of an item (sha256 of its id), the same on every machine."""
    return int(hashlib.sha256(item_id.encode()).hexdigest(), 16) % count


def iter_jsonl(
    path: Path, error: type[Exception] = RunStoreError
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` from a JSONL file; problems raise ``error`` naming file:line."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read: {exc}") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"{path}:{number}: invalid JSON ({exc.msg})") from exc
        if not isinstance(value, dict):
            raise error(f"{path}:{number}: expected a JSON object")
        yield number, value
