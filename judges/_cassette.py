"""Cassettes: every judge call of a run as JSON lines, and the judge that replays them.

A line holds the cache key, the backend identity (spec, model, parameters), what
was asked (task, item, question ids, image hashes) and what came back (raw text,
usage). Image bytes and API keys are never written. Replaying a cassette serves
each call by its cache key, so a whole run reruns offline with the same answers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from groundeval.judges._coords import guess_convention
from groundeval.judges._protocol import JudgeCall, JudgeError, JudgeReply
from groundeval.state import Usage

CASSETTE_VERSION = 1


def cassette_entry(
    key: str,
    spec: str,
    model: str,
    params: dict[str, Any],
    call: JudgeCall,
    reply: JudgeReply | None,
    error: JudgeError | None = None,
) -> dict[str, Any]:
    """One cassette line for a call and its reply or final error (no image bytes, no secrets).

    Final errors are recorded too, so a replayed run ends the same calls in the
    same errors and its results match the recorded run byte for byte.
    """
    entry: dict[str, Any] = {
        "v": CASSETTE_VERSION,
        "key": key,
        "spec": spec,
        "model": model,
        "params": params,
        "task": call.task,
        "item_id": call.item_id,
        "questions": [q.id for q in call.questions],
        "images": [img.sha256 for img in call.images],
        "text": reply.text if reply else "",
        "usage": reply.usage.model_dump(exclude={"seconds", "cost_usd"}) if reply else {},
    }
    if error is not None:
        entry["error"] = {"message": str(error), "reason": error.reason}
    return entry


class CassetteWriter:
    """Appends entries to a JSONL file, one line per distinct call, written at once.

    A reply is written once per key; an error only while the key has no reply
    (a resumed run may later answer a call that failed before).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._answered: set[str] = set()
        self._failed: set[str] = set()
        if self.path.exists():
            for entry in read_cassette(self.path):
                (self._failed if "error" in entry else self._answered).add(entry["key"])

    def write(self, entry: dict[str, Any]) -> None:
        """Add an entry unless the file already holds one as good for its key."""
        key = entry["key"]
        if key in self._answered or ("error" in entry and key in self._failed):
            return
        (self._failed if "error" in entry else self._answered).add(key)
        line = json.dumps(entry, sort_keys=True, ensure_ascii=False)
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")


def read_cassette(path: str | Path) -> list[dict[str, Any]]:
    """Entries of a cassette; a bad line is an error naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"cassette {path} does not exist")
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc})") from None
        missing = {"key", "spec", "model", "params", "text"} - set(entry)
        if not isinstance(entry, dict) or missing:
            raise ValueError(f"{path}:{number}: cassette entry lacks {sorted(missing)}")
        entries.append(entry)
    return entries


class ReplayJudge:
    """``replay:<cassette>``: answers each call from a recording, by cache key.

    A call that was not recorded raises :class:`JudgeError` naming the item,
    the task and the questions; every such call is also listed in ``missing``.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        entries = read_cassette(self.path)
        self._by_key: dict[str, dict[str, Any]] = {}
        for e in entries:  # a reply wins over an error recorded for the same call
            if "error" not in e or e["key"] not in self._by_key:
                self._by_key[e["key"]] = e
        identities: dict[str, tuple[str, str, dict[str, Any]]] = {}
        for e in entries:
            ident = json.dumps([e["spec"], e["model"], e["params"]], sort_keys=True)
            identities.setdefault(ident, (e["spec"], e["model"], e["params"]))
        self._identities = list(identities.values())
        self.spec = f"replay:{self.path}"
        self.model = "+".join(sorted({m for _, m, _ in self._identities}))
        self.params: dict[str, Any] = {}
        if len(self._identities) == 1:
            self.params = dict(self._identities[0][2])
        self.box_convention = _recorded_convention(entries)
        self.missing: list[str] = []

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """The recorded reply for this call, or an error saying what is missing."""
        for spec, model, params in self._identities:
            entry = self._by_key.get(call.cache_key(spec, model, params))
            if entry is not None and "error" in entry:
                error = entry["error"] if isinstance(entry["error"], dict) else {}
                raise JudgeError(
                    str(error.get("message", "recorded error")), reason=str(error.get("reason", ""))
                )
            if entry is not None:
                return JudgeReply(entry["text"], Usage(cached_calls=1), cached=True)
        what = f"item {call.item_id or '?'} task {call.task}"
        if call.questions:
            what += f" questions {', '.join(q.id for q in call.questions)}"
        self.missing.append(what)
        raise JudgeError(
            f"replay: {self.path} has no recorded reply for {what} "
            f"({len(self._by_key)} replies recorded from "
            f"{', '.join(sorted({s for s, _, _ in self._identities})) or 'nothing'}); "
            "the prompt, images, schema or parameters differ from the recorded run",
            reason="missing",
        )


def _recorded_convention(entries: list[dict[str, Any]]) -> str | None:
    """The coordinate convention of the recorded judge, so boxes convert the same way."""
    for e in entries:
        conv = e["params"].get("box_convention") if isinstance(e["params"], dict) else None
        if isinstance(conv, str):
            return str(conv)
        guessed: str = guess_convention(str(e["spec"]), str(e["model"]))
        return guessed
    return None
