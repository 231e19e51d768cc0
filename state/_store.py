r"""The run folder: atomic writes, resume after a crash, shards and their merge.

Layout::

    RUN/run.json          what changes scores: config, versions, judge, parameters
    RUN/programs.jsonl    the programs graded (rescoring needs nothing else)
    RUN/results.jsonl     one ItemResult per item, sorted by id when the run finishes
    RUN/usage.jsonl       calls, tokens and seconds per item (kept out of results)
    RUN/state/<item>/<question>.json   grounding evidence
    RUN/evidence/<item>/...png         overlays, one per round
    RUN/summary.json, RUN/summary.csv
    RUN/overrides.jsonl  every human override applied, with author, note and time
    RUN/run.lock         held (flock) by the one process writing the folder

Item and question ids never become paths unescaped (:func:`safe_name`). JSONL is
split on ``"\n"`` only (:func:`jsonl_lines`): stored text may hold U+2028,
U+2029, U+0085 and other characters ``str.splitlines`` would split on.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import hashlib
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import quote

from pydantic import BaseModel, ValidationError

from groundeval.state._records import ItemResult, ItemUsage, StateFile
from groundeval.state._specs import GroundingTarget

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


_CONFIG_DEFAULTS: dict[str, Any] = {"repeat_index": 0}
"""run.json keys added later, with the value a folder written before them had."""


class RunStoreError(ValueError):
    """A run folder that cannot be used as asked (names the file and the problem)."""


class RunLockedError(RunStoreError):
    """Another process holds the run folder's write lock."""


class RunLock:
    """An exclusive ``flock`` on ``RUN/run.lock``: one writer per run folder.

    A second run, resume, rescore or merge into the same folder is refused at once
    (never queued: two writers would grade every item twice). The lock file keeps
    the holder's pid so the refusal can name it; the kernel drops the lock when the
    holder exits, even on a crash.
    """

    def __init__(self, root: Path, action: str = "write") -> None:
        self.root = Path(root)
        self.action = action
        self._fd: int | None = None

    @property
    def path(self) -> Path:
        """run.lock."""
        return self.root / "run.lock"

    def acquire(self) -> None:
        """Take the lock or raise :class:`RunLockedError` naming the holder's pid."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "unknown"
            os.close(fd)
            raise RunLockedError(
                f"{self.root}: another groundeval process (pid {holder}) is writing this run "
                f"folder; wait for it to finish before you {self.action} it "
                f"(lock: {self.path})"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Drop the lock (the pid is cleared so a stale file names nobody)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


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

    @property
    def overrides_path(self) -> Path:
        """overrides.jsonl: the archive of every override applied to this run."""
        return self.root / "overrides.jsonl"

    def lock(self, action: str = "write") -> RunLock:
        """The folder's exclusive writer lock (a context manager)."""
        return RunLock(self.root, action)

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
        """Read and validate a state file named by its path inside the run (parsed once)."""
        parts = relative.split("/")
        if parts[0] == "state" and "" not in parts and "." not in parts and ".." not in parts:
            path = f"{self.root}/{relative}"  # the form the store writes: no Path objects
        else:  # the general (slower) rule decides
            pure = Path(relative).parts
            if not pure or pure[0] != "state" or ".." in pure or Path(relative).is_absolute():
                raise RunStoreError(f"{relative}: not a state path inside the run folder")
            path = str(self.root / relative)
        try:
            return StateFile.model_validate_json(_read_bytes(path))
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
            old = {**_CONFIG_DEFAULTS, **json.loads(self.config_path.read_text())}
            new = {**_CONFIG_DEFAULTS, **config}
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
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

    def result_lines(self) -> list[tuple[ItemResult, bytes]]:
        r""":meth:`results` with each result's line as stored, as bytes.

        Writing an unchanged line back as these bytes keeps the file byte-identical
        (an unterminated last line lacks its ``"\n"``; see :func:`_read_jsonl_lines`).
        """
        latest = {
            r.item_id: (r, line) for r, line in _read_jsonl_lines(self.results_path, ItemResult)
        }
        return list(latest.values())

    def usages(self) -> list[ItemUsage]:
        """Latest usage record per item."""
        latest = {u.item_id: u for u in _read_jsonl(self.usage_path, ItemUsage)}
        return list(latest.values())

    def finished_ids(self) -> set[str]:
        """Items that need no more work on resume.

        An item with status ``error``, any ``error`` or ``pending`` decision, or a
        state file that does not parse is not finished: resume grades it again.
        """
        return {r.item_id for r in self.results() if not self.needs_work(r)}

    def needs_work(self, result: ItemResult) -> list[str]:
        """Why ``run --resume`` must grade this item again (empty: it is finished)."""
        if result.status == "error" and not result.decisions:
            return [result.error or "the item could not be graded"]
        why = [
            f"{d.question_id} is {d.outcome}"
            for d in result.decisions
            if d.outcome in ("error", "pending") and d.source != "human"
        ]
        why += [f"{path}: {problem}" for path, problem in self.broken_states(result).items()]
        if result.status == "error" and not why:
            why.append(result.error or "status error")
        return why

    def broken_states(self, result: ItemResult) -> dict[str, str]:
        """State files the item's decisions name that are missing or do not validate."""
        broken: dict[str, str] = {}
        for d in result.decisions:
            if d.state_file and d.state_file not in broken:
                try:
                    self.read_state(d.state_file)
                except RunStoreError as exc:
                    broken[d.state_file] = str(exc)
        return broken

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


def jsonl_lines(text: str) -> list[str]:
    r"""Lines of a JSONL text, split on ``"\n"`` only, each keeping its ``"\n"``.

    ``str.splitlines`` also splits on U+2028, U+2029, U+0085, ``\r``, ``\v``,
    ``\f`` and ``\x1c``-``\x1e``, which JSON writers leave raw inside strings.
    """
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def _read_bytes(path: str) -> bytes:
    """A whole file with four system calls and no file object (rescore reads thousands)."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size + 1)
        if len(data) != size:  # changed while read (or a short read): read on to the end
            chunks = [data]
            while chunk := os.read(fd, 1 << 20):
                chunks.append(chunk)
            data = b"".join(chunks)
        return data
    finally:
        os.close(fd)


def _read_jsonl(path: Path, model: type[_T]) -> Iterator[_T]:
    for value, _line in _read_jsonl_lines(path, model):
        yield value


def _read_jsonl_lines(path: Path, model: type[_T]) -> Iterator[tuple[_T, bytes]]:
    r"""Each valid record with its line as stored (an unterminated last line lacks ``"\n"``).

    Lines are bytes split on ``b"\n"`` (a UTF-8 multi-byte character never holds
    that byte) and each is parsed once, by pydantic's JSON parser, with no
    decoding or re-encoding in Python.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    last = len(lines)
    validate = model.model_validate_json
    for number, line in enumerate(lines, start=1):
        torn = number == last and not data.endswith(b"\n")
        try:
            yield validate(line), line if torn else line + b"\n"
        except ValidationError as exc:
            if not line.decode("utf-8", "replace").strip():
                continue  # a blank line (any Unicode space): nothing was written on it
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
    r"""``(line number, object)`` from a JSONL file; problems raise ``error`` naming file:line.

    The one JSONL reader of the project: lines are split on ``"\n"`` only.
    """
    try:
        lines = jsonl_lines(Path(path).read_text(encoding="utf-8"))
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
