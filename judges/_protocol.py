"""The one small protocol every judge backend implements.

A backend turns a :class:`JudgeCall` (prompt, images, response schema) into a
:class:`JudgeReply` (raw text plus token usage). Prompt building and tolerant
parsing live above it and are shared by every backend, so a new backend is a
single ``generate`` method.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from groundeval.state import Usage

Task = Literal["questions", "propose", "verify", "author"]


@dataclass(frozen=True)
class ImagePart:
    """An image sent to a judge: encoded bytes and the size of the original in pixels."""

    data: bytes
    mime: str
    size_wh: tuple[int, int]

    @property
    def sha256(self) -> str:
        """Content hash: what the cache key and the state files record."""
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class QuestionRef:
    """A numbered question inside a batched call."""

    id: str
    text: str


@dataclass(frozen=True)
class JudgeCall:
    """Everything a backend needs for one request."""

    task: Task
    prompt: str
    images: tuple[ImagePart, ...]
    response_schema: dict[str, Any]
    """JSON Schema the reply must follow (also part of the cache key)."""
    questions: tuple[QuestionRef, ...] = ()
    """The questions behind a ``questions`` call, for backends that script answers."""
    item_id: str = ""
    """Item this call belongs to (not part of the cache key)."""
    context: dict[str, Any] = field(default_factory=dict)
    """Structured extras for scripted backends (helper, target, elements); not in the key."""

    def cache_key(self, backend: str, model: str, params: dict[str, Any]) -> str:
        """Content address: backend, model, parameters, prompt, image bytes, schema."""
        blob = json.dumps(
            {
                "backend": backend,
                "model": model,
                "params": params,
                "prompt": self.prompt,
                "images": [img.sha256 for img in self.images],
                "schema": self.response_schema,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class JudgeReply:
    """What came back: the raw text (always kept) and what it cost."""

    text: str
    usage: Usage = field(default_factory=Usage)
    cached: bool = False


class JudgeError(RuntimeError):
    """A judge call failed for good (after retries); the decision is recorded as ``error``."""

    def __init__(self, message: str, *, reason: str = "", usage: Usage | None = None) -> None:
        super().__init__(message)
        self.reason = reason or message
        """Short machine-readable cause (``safety``, ``empty``, ``http 400``, ``missing``)."""
        self.usage = usage
        """What the failed call still cost (a reply cut off at the token limit was billed)."""


class TransientJudgeError(JudgeError):
    """A failure worth retrying (429, 5xx, timeout, dropped connection).

    The retry middleware retries only these; after the last attempt it raises a
    plain :class:`JudgeError` that names how many attempts were made.
    """

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        retry_after: float | None = None,
        usage: Usage | None = None,
    ) -> None:
        super().__init__(message, reason=reason, usage=usage)
        self.retry_after = retry_after
        """Seconds the server asked us to wait (``Retry-After``), when it said."""


class JudgeRefusal(JudgeError):
    """The judge cannot answer this kind of call at all (e.g. the offline judge)."""


@runtime_checkable
class Judge(Protocol):
    """A backend: one async method from call to raw reply."""

    @property
    def spec(self) -> str:
        """The spec string that built it (``gemini:gemini-2.5-flash``)."""
        ...

    @property
    def model(self) -> str:
        """Model name as the backend knows it."""
        ...

    @property
    def params(self) -> dict[str, Any]:
        """Sampling parameters (temperature, seed, thinking): part of the cache key."""
        ...

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Send one call; raise :class:`JudgeError` when it cannot be answered."""
        ...
