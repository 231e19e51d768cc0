"""Sorting backend failures into "retry" and "give up", with the server's Retry-After.

Also the two reply faults every backend shares: a 2xx whose body is not JSON (a
proxy's HTML page: transient, retried) and a reply cut off at the token limit
(retried once with twice the room, else a final error; never partial evidence).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
from collections.abc import Mapping
from typing import Any

from groundeval.judges._protocol import JudgeError, TransientJudgeError
from groundeval.state import Usage

RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})
BODY_EXCERPT = 120
"""Bytes of a non-JSON body quoted in the error."""
TRUNCATED = "reply cut off at the token limit"


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
    """Timeouts and dropped connections are transient; anything else is final.

    A judge error raised inside the HTTP client (see :func:`require_json_body`)
    and wrapped by the SDK is returned as it was raised.
    """
    cause: BaseException | None = exc
    for _ in range(8):
        if cause is None:
            break
        if isinstance(cause, JudgeError):
            return cause
        cause = cause.__cause__
    name = type(exc).__name__
    if isinstance(exc, json.JSONDecodeError):  # an SDK read a 2xx body that is not JSON
        return not_json_body("2xx", exc.doc.encode("utf-8", "replace"))
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)) or "Timeout" in name:
        return TransientJudgeError(f"timeout: {name}", reason="timeout")
    transport = any(
        c.__name__ in ("TransportError", "NetworkError", "APIConnectionError")
        for c in type(exc).__mro__
    )
    if transport or isinstance(exc, ConnectionError):
        return TransientJudgeError(f"connection: {name}: {exc}", reason="connection")
    return JudgeError(f"{name}: {exc}", reason=name)


def not_json_body(status: int | str, body: bytes, content_type: str = "") -> TransientJudgeError:
    """A 2xx whose body is not JSON: names the status and the first bytes; retried.

    >>> str(not_json_body(200, b"<html>bad gateway</html>", "text/html"))
    "http 200 but the body is not JSON (text/html): '<html>bad gateway</html>'"
    """
    excerpt = body[:BODY_EXCERPT].decode("utf-8", "replace")
    kind = f" ({content_type})" if content_type else ""
    more = "…" if len(body) > BODY_EXCERPT else ""
    return TransientJudgeError(
        f"http {status} but the body is not JSON{kind}: {excerpt!r}{more}",
        reason="not json body",
    )


async def require_json_body(response: Any) -> None:
    """HTTP client response hook: a 2xx with a body that is not JSON raises a transient error.

    SDKs otherwise fail on such a body with a bare ``JSONDecodeError`` (no status,
    no excerpt) or hand back a string; this names both and lets the retry
    middleware try again, as for a 502.
    """
    status = int(response.status_code)
    if not 200 <= status < 300:
        return
    body = bytes(await response.aread())
    if body.lstrip()[:1] in (b"{", b"["):
        return  # JSON-looking: a body cut short fails in the SDK (see classify_transport)
    raise not_json_body(status, body, str(response.headers.get("content-type", "")))


def more_room(limit: int | None, used: int) -> int | None:
    """Output tokens for the one retry of a cut-off reply: twice the limit, or ``None``.

    Twice the configured limit; with no configured limit, twice what the cut-off
    reply used (the server's own limit). ``None`` when neither is known.

    >>> more_room(512, 512), more_room(None, 300), more_room(None, 0)
    (1024, 600, None)
    """
    if limit:
        return 2 * int(limit)
    return 2 * used if used > 0 else None


def truncated(limit: int | None, usage: Usage, note: str = "") -> JudgeError:
    """The final error for a reply cut off at the token limit (never cached, never parsed)."""
    at = f" ({limit} output tokens)" if limit else ""
    return JudgeError(f"{TRUNCATED}{at}{note}", reason="truncated", usage=usage)
