"""Sorting backend failures into "retry" and "give up", with the server's Retry-After."""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Mapping
from typing import Any

from groundeval.judges._protocol import JudgeError, TransientJudgeError

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def retry_after_seconds(headers: Mapping[str, str] | Any | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta or HTTP date), or ``None``.

    >>> retry_after_seconds({"retry-after": "2"})
    2.0
    >>> retry_after_seconds({}) is None
    True
    """
    if headers is None:
        return None
    value = None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:  # an exotic headers object: no hint
        return None
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def http_error(status: int, message: str, headers: Any = None) -> JudgeError:
    """A judge error for an HTTP status: 429/5xx/408 are transient, the rest final."""
    text = f"http {status}: {message[:300]}"
    if status in RETRY_STATUS or status >= 500:
        return TransientJudgeError(
            text, reason=f"http {status}", retry_after=retry_after_seconds(headers)
        )
    return JudgeError(text, reason=f"http {status}")


def classify_transport(exc: BaseException) -> JudgeError:
    """Timeouts and dropped connections are transient; anything else is final."""
    if isinstance(exc, JudgeError):
        return exc
    name = type(exc).__name__
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        return TransientJudgeError(f"timeout: {name}", reason="timeout")
    transport = any(
        c.__name__ in ("TransportError", "NetworkError", "APIConnectionError")
        for c in type(exc).__mro__
    )
    if transport or isinstance(exc, ConnectionError):
        return TransientJudgeError(f"connection: {name}: {exc}", reason="connection")
    return JudgeError(f"{name}: {exc}", reason=name)
