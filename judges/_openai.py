"""Any OpenAI-compatible server (vLLM, Ollama, LM Studio, OpenAI) through the openai SDK.

Images go as data URLs. Structured output is asked as ``json_schema``; a server
that rejects it is asked again with ``json_object`` and then with no format,
and the level that worked is remembered for the rest of the run.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import math
import os
from typing import Any

from groundeval.judges._coords import guess_convention
from groundeval.judges._errors import (
    classify_transport,
    http_error,
    more_room,
    not_json_body,
    require_json_body,
    truncated,
)
from groundeval.judges._parse import clip, load_json
from groundeval.judges._protocol import JudgeCall, JudgeError, JudgeReply, TransientJudgeError
from groundeval.state import Usage

_PER_CLIENT = 8
FORMATS = ("json_schema", "json_object", "none")
_NO_KEY = "not-needed"
"""Local servers ignore the key, but the SDK insists on one."""


def split_spec(rest: str) -> tuple[str, str | None]:
    """``model@base_url`` -> (model, base_url); the URL is after the last ``@``.

    >>> split_spec("qwen2.5vl:7b@http://127.0.0.1:11434/v1")
    ('qwen2.5vl:7b', 'http://127.0.0.1:11434/v1')
    >>> split_spec("gpt-4o")
    ('gpt-4o', None)
    """
    model, sep, url = rest.rpartition("@")
    if not sep or "://" not in url:
        return rest, None
    return model, url


class OpenAIJudge:
    """``openai:<model>@<base_url>``: an OpenAI-compatible chat-completions endpoint."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float = 0.0,
        seed: int | None = 0,
        max_output_tokens: int | None = None,
        timeout_s: float = 120.0,
        box_convention: str | None = None,
        max_connections: int | None = None,
    ) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - installed with groundeval
            raise ImportError("the openai judge needs the openai SDK: pip install openai") from exc
        self._openai = openai
        url = base_url or os.environ.get("OPENAI_BASE_URL")
        self.spec = f"openai:{model}@{url}" if url else f"openai:{model}"
        self.model = model
        self.timeout_s = timeout_s
        self.box_convention = box_convention or guess_convention(self.spec, model)
        self.params: dict[str, Any] = {"temperature": temperature, "seed": seed}
        if max_output_tokens is not None:
            self.params["max_output_tokens"] = max_output_tokens
        if box_convention is not None:
            self.params["box_convention"] = box_convention
        key = api_key or os.environ.get("OPENAI_API_KEY") or _NO_KEY
        self.format = FORMATS[0]
        """Structured-output level in use; lowered once when the server rejects it."""
        # several clients with small pools: the HTTP pool scans every connection
        # on each request, so eight pools of 8 cost less CPU than one of 64
        shards = max(1, math.ceil((max_connections or 1) / _PER_CLIENT))
        self._clients = [
            openai.AsyncOpenAI(
                api_key=key,
                base_url=url,
                timeout=timeout_s,
                max_retries=0,
                http_client=_http_client(openai, max_connections, shards),
            )
            for _ in range(shards)
        ]
        self._next = itertools.cycle(range(shards))

    def _request(self, call: JudgeCall, level: str, max_tokens: int | None) -> dict[str, Any]:
        content: list[dict[str, Any]] = [
            {
                "type": "image_url",
                "image_url": {
                    "url": f"data:{img.mime};base64,{base64.b64encode(img.data).decode()}"
                },
            }
            for img in call.images
        ]
        content.append({"type": "text", "text": call.prompt})
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": self.params["temperature"],
        }
        if self.params["seed"] is not None:
            body["seed"] = self.params["seed"]
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        if level == "json_schema":
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": call.task, "schema": call.response_schema},
            }
        elif level == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Send one call; a reply cut off at the token limit is asked once more with twice the room.

        A cut-off reply is never returned, even when its JSON could be repaired:
        it would be partial evidence.
        """
        limit: int | None = self.params.get("max_output_tokens")
        text, usage, finish = await self._complete(call, limit)
        if finish == "length":
            room = more_room(limit, usage.output_tokens + usage.thinking_tokens)
            if room is None:
                raise truncated(limit, usage)
            try:
                text, again, finish = await self._complete(call, room)
            except TransientJudgeError:
                raise
            except JudgeError as exc:
                raise truncated(limit, usage, f"; the retry with {room} failed: {exc}") from exc
            usage = usage.add(again)
            if finish == "length":
                raise truncated(room, usage, ", also on the retry with twice the room")
        return _checked(text, usage, finish)

    async def _complete(self, call: JudgeCall, max_tokens: int | None) -> tuple[str, Usage, str]:
        """One request, stepping down the response format if the server rejects it."""
        while True:
            level = self.format
            try:
                response = await asyncio.wait_for(
                    self._clients[next(self._next)].chat.completions.create(
                        **self._request(call, level, max_tokens)
                    ),
                    timeout=self.timeout_s + 5,
                )
            except self._openai.APIStatusError as exc:
                if exc.status_code in (400, 422) and level != FORMATS[-1] and _about_format(exc):
                    self.format = FORMATS[FORMATS.index(level) + 1]
                    continue
                raise http_error(exc.status_code, str(exc.message), exc.response.headers) from exc
            except Exception as exc:
                raise classify_transport(exc) from exc
            return _read(response)


def _http_client(openai: Any, max_connections: int | None, shards: int) -> Any:
    """The HTTP client of one shard, checking that every 2xx body is JSON.

    A proxy's HTML page becomes a retried, named error. Sized for the shard's
    share of the concurrency, when given.
    """
    options: dict[str, Any] = {"event_hooks": {"response": [require_json_body]}}
    if max_connections:
        try:
            import httpx2 as httpx
        except ImportError:  # older SDKs use httpx
            import httpx  # type: ignore[no-redef]
        n = math.ceil(max_connections / shards)
        options["limits"] = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    return openai.DefaultAsyncHttpxClient(**options)


def _about_format(exc: Any) -> bool:
    """Whether a 400 looks like "this server does not do that response_format"."""
    text = f"{exc.message} {getattr(exc, 'body', '')}".lower()
    return any(w in text for w in ("response_format", "json_schema", "json_object", "format"))


def _read(response: Any) -> tuple[str, Usage, str]:
    """Text, usage and finish reason; no choice, a filtered reply or a refusal is an error."""
    if isinstance(response, (str, bytes)):  # an SDK that handed back an unparsed body
        raise not_json_body(200, response.encode() if isinstance(response, str) else response)
    usage = Usage(calls=1)
    if response.usage is not None:
        details = getattr(response.usage, "completion_tokens_details", None)
        thinking = (getattr(details, "reasoning_tokens", 0) or 0) if details else 0
        usage = Usage(
            calls=1,
            input_tokens=response.usage.prompt_tokens or 0,
            output_tokens=(response.usage.completion_tokens or 0) - thinking,
            thinking_tokens=thinking,
        )
    if not response.choices:
        raise JudgeError("server returned no choices", reason="empty", usage=usage)
    choice = response.choices[0]
    message = choice.message
    if choice.finish_reason == "content_filter":
        raise JudgeError("server filtered the reply (content_filter)", reason="safety", usage=usage)
    if getattr(message, "refusal", None):
        raise JudgeError(f"model refused: {clip(message.refusal)}", reason="refusal", usage=usage)
    return message.content or "", usage, str(choice.finish_reason or "")


def _checked(text: str, usage: Usage, finish: str) -> JudgeReply:
    """The reply, unless it is empty or holds no JSON."""
    if not text.strip():
        raise JudgeError(f"empty reply (finish_reason={finish})", reason="empty", usage=usage)
    if load_json(text) is None:
        raise JudgeError(f"reply is not JSON: {clip(text)}", reason="not json", usage=usage)
    return JudgeReply(text, usage)
