"""Content-addressed disk cache of judge replies, shared by every run that points at it.

One JSON file per cache key (``<dir>/<k[:2]>/<k>.json``), written atomically, so
several processes may share a folder. Only successful replies are stored: the
raw text and its original usage. Never image bytes, never keys.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

_HEX = frozenset("0123456789abcdef")


class DiskCache:
    """Replies by cache key in a folder."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        if len(key) != 64 or not set(key) <= _HEX:
            raise ValueError(f"cache key must be a sha256 hex digest, got {key[:80]!r}")
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored entry, or ``None`` (a missing or unreadable file is a miss)."""
        path = self._path(key)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("key") != key or "text" not in entry:
            return None
        return entry

    def put(self, key: str, entry: dict[str, Any]) -> None:
        """Store an entry atomically (write a temporary file, then rename)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps({**entry, "key": key}, sort_keys=True, ensure_ascii=False)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
