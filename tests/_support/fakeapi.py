"""Reply bodies in the Gemini and OpenAI wire formats, for local fake servers.

Tests and ``perf/`` run the real SDK clients against a server on 127.0.0.1 that
answers with these bodies, so what is exercised is the SDK's own HTTP, JSON and
error handling, not a patched method.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from groundeval.judges._protocol import ImagePart


def gemini_body(
    text: str | None,
    *,
    finish: str = "STOP",
    input_tokens: int = 100,
    output_tokens: int = 20,
    thinking_tokens: int = 0,
    block_reason: str | None = None,
    no_candidates: bool = False,
) -> dict[str, Any]:
    """A ``generateContent`` response; ``block_reason`` blocks the prompt itself."""
    usage: dict[str, Any] = {
        "promptTokenCount": input_tokens,
        "candidatesTokenCount": output_tokens,
        "totalTokenCount": input_tokens + output_tokens + thinking_tokens,
    }
    if thinking_tokens:
        usage["thoughtsTokenCount"] = thinking_tokens
    body: dict[str, Any] = {"usageMetadata": usage, "modelVersion": "fake"}
    if block_reason is not None:
        body["promptFeedback"] = {"blockReason": block_reason}
        return body
    if no_candidates:
        body["candidates"] = []
        return body
    candidate: dict[str, Any] = {"finishReason": finish, "index": 0}
    if text is not None:
        candidate["content"] = {"role": "model", "parts": [{"text": text}]}
    body["candidates"] = [candidate]
    return body


def openai_body(
    text: str | None,
    *,
    model: str = "fake",
    finish: str = "stop",
    input_tokens: int = 100,
    output_tokens: int = 20,
    refusal: str | None = None,
    no_choices: bool = False,
) -> dict[str, Any]:
    """A ``chat.completions`` response."""
    usage = {
        "prompt_tokens": input_tokens,
        "completion_tokens": output_tokens,
        "total_tokens": input_tokens + output_tokens,
    }
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if refusal is not None:
        message["refusal"] = refusal
    choices = [] if no_choices else [{"index": 0, "message": message, "finish_reason": finish}]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": choices,
        "usage": usage,
    }


def answers_for(prompt: str, result: bool = True) -> str:
    """A reply answering every ``[id=...]`` question found in a questions prompt."""
    ids = [part.split("]", 1)[0] for part in prompt.split("[id=")[1:]]
    return json.dumps({"answers": [{"id": i, "result": result, "reason": "fake"} for i in ids]})


def gemini_request_parts(body: dict[str, Any]) -> tuple[list[bytes], str]:
    """Inline image bytes and the text of a ``generateContent`` request body."""
    images: list[bytes] = []
    texts: list[str] = []
    for content in body.get("contents", []):
        for part in content.get("parts", []):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline:
                # the SDK sends URL-safe base64; accept either alphabet
                data = inline["data"].replace("-", "+").replace("_", "/")
                images.append(base64.b64decode(data))
            if "text" in part:
                texts.append(part["text"])
    return images, "\n".join(texts)


def openai_request_parts(body: dict[str, Any]) -> tuple[list[bytes], str]:
    """Data-URL image bytes and the text of a chat-completions request body."""
    images: list[bytes] = []
    texts: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "image_url":
                url = part["image_url"]["url"]
                images.append(base64.b64decode(url.split(",", 1)[1]))
            elif part.get("type") == "text":
                texts.append(part["text"])
    return images, "\n".join(texts)


def tiny_png(width: int = 32, height: int = 24) -> ImagePart:
    """A small real PNG (a white disc on black) to send to a fake server."""
    import cv2
    import numpy as np

    img = np.zeros((height, width, 3), np.uint8)
    cv2.circle(img, (width // 3, height // 3), max(2, min(width, height) // 5), (255, 255, 255), -1)
    ok, buf = cv2.imencode(".png", img)
    if not ok:
        raise ValueError("could not encode PNG")
    return ImagePart(buf.tobytes(), "image/png", (width, height))
