"""Gemini backend (google-genai): images as bytes parts, JSON-schema structured output.

The SDK's own retries are switched off; the retry middleware owns them, so one
policy (and one count of attempts) covers every backend.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
from typing import Any

from groundeval.judges._errors import (
    classify_transport,
    http_error,
    more_room,
    require_json_body,
    truncated,
)
from groundeval.judges._parse import clip, load_json
from groundeval.judges._protocol import JudgeCall, JudgeError, JudgeReply, TransientJudgeError
from groundeval.state import Usage

_BLOCKED = {
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT",
    "IMAGE_RECITATION",
    "LANGUAGE",
}
_PER_CLIENT = 8
"""Connections per SDK client when many calls run at once."""
_LEVEL_BUDGET = {"minimal": 0, "low": 1024, "medium": 4096, "high": 16384}


def thinking_settings(model: str, thinking: int | str | None) -> dict[str, Any] | None:
    """ThinkingConfig arguments for a model family, or ``None`` to leave the default.

    Gemini 2.5 takes a token budget (``-1`` dynamic, ``0`` off where allowed);
    Gemini 3 takes a level. A level given to 2.5 becomes a budget and a budget
    given to 3 becomes the nearest level, so one CLI flag serves both.

    >>> thinking_settings("gemini-2.5-flash", "low")
    {'thinking_budget': 1024}
    >>> thinking_settings("gemini-3-pro-preview", 0)
    {'thinking_level': 'low'}
    """
    if thinking is None:
        return None
    name = model.lower()
    if "gemini-3" in name:
        if isinstance(thinking, str):
            return {"thinking_level": thinking.lower()}
        return {"thinking_level": "low" if 0 <= thinking <= 1024 else "high"}
    if "gemini-2.5" in name or "gemini-2-5" in name:
        if isinstance(thinking, str):
            if thinking.lower() not in _LEVEL_BUDGET:
                raise ValueError(f"unknown thinking level {thinking!r}; use {list(_LEVEL_BUDGET)}")
            return {"thinking_budget": _LEVEL_BUDGET[thinking.lower()]}
        return {"thinking_budget": int(thinking)}
    return None


class GeminiJudge:
    """``gemini:<model>``: the judge of the seed papers, through the google-genai SDK."""

    box_convention = "box_2d_1000"

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        thinking: int | str | None = None,
        max_output_tokens: int | None = None,
        timeout_s: float = 120.0,
        max_connections: int | None = None,
    ) -> None:
        try:
            from google import genai
            from google.genai import types
        except ImportError as exc:  # pragma: no cover - installed with groundeval
            raise ImportError(
                "the gemini judge needs google-genai: pip install google-genai"
            ) from exc
        key = api_key or os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY")
        if not key:
            raise JudgeError(
                "gemini judge: no API key; set GEMINI_API_KEY or GOOGLE_API_KEY",
                reason="no api key",
            )
        self._types = types
        self.spec = f"gemini:{model}"
        self.model = model
        self.timeout_s = timeout_s
        self._thinking = thinking_settings(model, thinking)
        self.params: dict[str, Any] = {"temperature": temperature, "seed": seed}
        if thinking is not None:
            self.params["thinking"] = thinking
        if max_output_tokens is not None:
            self.params["max_output_tokens"] = max_output_tokens
        url = base_url or os.environ.get("GOOGLE_GEMINI_BASE_URL")
        # Several clients with small pools: the HTTP pool scans every connection on
        # each request, so one pool of 64 costs more CPU than eight pools of 8.
        shards = max(1, math.ceil((max_connections or 1) / _PER_CLIENT))
        per_client = math.ceil((max_connections or _PER_CLIENT) / shards)
        options = types.HttpOptions(
            base_url=url,
            timeout=int(timeout_s * 1000),
            async_client_args=_client_args(per_client if max_connections else None),
        )
        self._clients = [genai.Client(api_key=key, http_options=options) for _ in range(shards)]
        self._next = itertools.cycle(range(shards))

    def _config(self, call: JudgeCall, max_tokens: int | None) -> Any:
        types = self._types
        return types.GenerateContentConfig(
            temperature=self.params["temperature"],
            seed=self.params["seed"],
            max_output_tokens=max_tokens,
            response_mime_type="application/json",
            response_json_schema=call.response_schema,
            thinking_config=types.ThinkingConfig(**self._thinking) if self._thinking else None,
        )

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Send one call; a reply cut off at MAX_TOKENS is asked once more with twice the room.

        A cut-off reply is never returned, even when its JSON could be repaired:
        it would be partial evidence.
        """
        limit: int | None = self.params.get("max_output_tokens")
        response = await self._send(call, limit)
        usage = _usage(response)
        if _finish(response) == "MAX_TOKENS":
            room = more_room(limit, usage.output_tokens + usage.thinking_tokens)
            if room is None:
                raise truncated(limit, usage)
            try:
                response = await self._send(call, room)
            except TransientJudgeError:
                raise
            except JudgeError as exc:
                raise truncated(limit, usage, f"; the retry with {room} failed: {exc}") from exc
            usage = usage.add(_usage(response))
            if _finish(response) == "MAX_TOKENS":
                raise truncated(room, usage, ", also on the retry with twice the room")
        return _reply(response, usage)

    async def _send(self, call: JudgeCall, max_tokens: int | None) -> Any:
        types = self._types
        parts = [types.Part.from_bytes(data=img.data, mime_type=img.mime) for img in call.images]
        parts.append(types.Part.from_text(text=call.prompt))
        try:
            return await asyncio.wait_for(
                self._clients[next(self._next)].aio.models.generate_content(
                    model=self.model,
                    contents=[types.Content(role="user", parts=parts)],
                    config=self._config(call, max_tokens),
                ),
                timeout=self.timeout_s + 5,
            )
        except Exception as exc:
            raise _translate(exc) from exc


def _client_args(max_connections: int | None) -> dict[str, Any]:
    """HTTP client options: a 2xx body must be JSON; as many live connections as calls."""
    args: dict[str, Any] = {"event_hooks": {"response": [require_json_body]}}
    if not max_connections:
        return args
    try:
        import httpx2 as httpx
    except ImportError:  # older SDKs use httpx
        import httpx  # type: ignore[no-redef]
    n = max(1, int(max_connections))
    args["limits"] = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    return args


def _translate(exc: Exception) -> JudgeError:
    """An SDK exception as a judge error: transient ones are retried upstream."""
    from google.genai import errors

    if isinstance(exc, errors.APIError):
        headers = getattr(getattr(exc, "response", None), "headers", None)
        return http_error(int(exc.code or 0), str(exc.message or exc), headers)
    return classify_transport(exc)


def _finish(response: Any) -> str:
    candidates = response.candidates or []
    return _name(candidates[0].finish_reason) if candidates else ""


def _reply(response: Any, usage: Usage) -> JudgeReply:
    """Text and usage of a response; blocked, empty or non-JSON replies are errors."""
    candidates = response.candidates or []
    if not candidates:
        feedback = getattr(response, "prompt_feedback", None)
        block = getattr(feedback, "block_reason", None) if feedback else None
        if block:
            raise JudgeError(
                f"gemini blocked the prompt: {_name(block)}", reason="safety", usage=usage
            )
        raise JudgeError("gemini returned no candidate", reason="empty", usage=usage)
    candidate = candidates[0]
    finish = _name(candidate.finish_reason)
    parts = candidate.content.parts if candidate.content and candidate.content.parts else []
    text = "".join(p.text for p in parts if p.text and not p.thought)
    if finish in _BLOCKED:
        raise JudgeError(
            f"gemini stopped the reply: finish_reason={finish}", reason="safety", usage=usage
        )
    if not text.strip():
        raise JudgeError(
            f"gemini returned an empty reply (finish_reason={finish})", reason="empty", usage=usage
        )
    if response.parsed is None and load_json(text) is None:
        raise JudgeError(f"gemini reply is not JSON: {clip(text)}", reason="not json", usage=usage)
    return JudgeReply(text, usage)


def _usage(response: Any) -> Usage:
    meta = response.usage_metadata
    if meta is None:
        return Usage(calls=1)
    return Usage(
        calls=1,
        input_tokens=meta.prompt_token_count or 0,
        output_tokens=meta.candidates_token_count or 0,
        thinking_tokens=meta.thoughts_token_count or 0,
    )


def _name(value: Any) -> str:
    return str(getattr(value, "value", value))
