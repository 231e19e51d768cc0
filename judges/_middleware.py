"""Layers that wrap any judge: accounting, recording, caching, retrying, rate limiting.

Each layer is itself a :class:`~groundeval.judges.Judge` and forwards ``spec``,
``model``, ``params`` and ``box_convention`` from the judge it wraps, so cache keys
and provenance always name the real backend. :func:`build_judge` stacks them in
this order, outermost first::

    Accounting -> Recording -> Cache -> Retry -> Limits -> [Repeat] -> backend

so a cached reply is still recorded and counted, and every retry attempt waits
for the rate limiter and a concurrency slot. The accounting layer, outermost,
also removes known secrets from every reply text, so no stored judge text
(raw replies, reasons, error messages) can hold an API key the server echoed.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Iterable
from typing import Any

from aiolimiter import AsyncLimiter
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from groundeval.judges._account import Account, Price, cost_usd, price_for
from groundeval.judges._cache import DiskCache
from groundeval.judges._cassette import CassetteWriter, cassette_entry
from groundeval.judges._protocol import Judge, JudgeCall, JudgeError, JudgeReply
from groundeval.judges._protocol import TransientJudgeError as Transient
from groundeval.judges._usable import usable_reply
from groundeval.state import Usage

REDACTED = "<redacted>"


class Layer:
    """A judge wrapping another; identity attributes come from the innermost backend."""

    def __init__(self, inner: Judge) -> None:
        self.inner = inner

    @property
    def spec(self) -> str:
        """Spec of the wrapped backend."""
        return str(self.inner.spec)

    @property
    def model(self) -> str:
        """Model of the wrapped backend."""
        return str(self.inner.model)

    @property
    def params(self) -> dict[str, Any]:
        """Generation parameters of the wrapped backend (part of every cache key)."""
        params: dict[str, Any] = self.inner.params
        return params

    @property
    def box_convention(self) -> str | None:
        """Coordinate convention of the wrapped backend's model, if it has one."""
        return getattr(self.inner, "box_convention", None)

    def __getattr__(self, name: str) -> Any:
        # reach attributes of the backend (``missing`` of a replay judge, ``format``...)
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Pass the call through unchanged."""
        return await self.inner.generate(call)


FRAGMENT_CHARS = 12
"""A run this long of a secret's characters is redacted too: a model may echo a key in
pieces (split across lines or words) or cut off; no 12 characters of a random key
occur in a reply by chance."""


class Scrubber:
    """Removes secret strings (API keys) from any text before it is stored or shown.

    Besides each whole secret, its JSON-escaped form and every run of
    :data:`FRAGMENT_CHARS` or more of its characters are redacted. The mark
    ``<redacted>`` holds no JSON punctuation, so a reply scrubbed before it is
    parsed parses as it would have.
    """

    def __init__(self, secrets: Iterable[str | None]) -> None:
        self.secrets = sorted({s for s in secrets if s and len(s) >= 6}, key=len, reverse=True)
        # each piece maps to (the text it came from, its offset there), to extend a match
        self._origin: dict[str, tuple[str, int]] = {}
        for secret in self.secrets:
            n = FRAGMENT_CHARS
            for i in range(len(secret) - n + 1):
                self._origin.setdefault(secret[i : i + n], (secret, i))
            for whole in (secret, json.dumps(secret)[1:-1]):
                self._origin[whole] = (whole, 0)
        # longest first, so a whole secret is one mark rather than a fragment
        alternatives = sorted(self._origin, key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, alternatives))) if alternatives else None

    def __call__(self, text: str) -> str:
        """The text with every secret (or long piece of one) replaced by ``<redacted>``."""
        if self._pattern is None:
            return text
        out, pos = [], 0
        while match := self._pattern.search(text, pos):
            start, end = match.span()
            source, offset = self._origin[match.group()]
            while end < len(text) and offset + end - start < len(source):
                if text[end] != source[offset + end - start]:
                    break
                end += 1  # the piece goes on beyond the fragment that found it
            out += [text[pos:start], REDACTED]
            pos = end
        out.append(text[pos:])
        # adjacent pieces become one mark
        return re.sub(f"(?:{re.escape(REDACTED)})+", REDACTED, "".join(out))


class AccountingLayer(Layer):
    """Adds wall-clock seconds and cost to each reply and keeps run totals in ``account``."""

    def __init__(
        self, inner: Judge, account: Account, prices: dict[str, Price], scrub: Scrubber
    ) -> None:
        super().__init__(inner)
        self.account = account
        self._price = price_for(inner.model, prices)
        self._scrub = scrub
        if self._price is None and inner.model and not inner.spec.startswith("replay:"):
            account.unpriced.add(inner.model)

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Time the call, price it, count it; scrub secrets from the reply or the error.

        A failed call still counts what it was billed (a reply cut off at the
        token limit), and its error is counted by reason.
        """
        start = time.perf_counter()
        try:
            reply = await self.inner.generate(call)
        except JudgeError as exc:
            self.account.errors[exc.reason] += 1
            self.account.add(call.item_id, self._priced(exc.usage or Usage(), start))
            message = self._scrub(str(exc))
            if message != str(exc):
                exc.args = (message, *exc.args[1:])
            raise
        usage = self._priced(reply.usage, start)
        self.account.add(call.item_id, usage)
        return JudgeReply(self._scrub(reply.text), usage, cached=reply.cached)

    def _priced(self, usage: Usage, start: float) -> Usage:
        return usage.model_copy(
            update={
                "seconds": usage.seconds + time.perf_counter() - start,
                "cost_usd": cost_usd(usage, self._price),
            }
        )


class RecordingLayer(Layer):
    """Writes every answered call to a cassette (JSONL) that ``replay:`` can serve."""

    def __init__(self, inner: Judge, writer: CassetteWriter, scrub: Scrubber) -> None:
        super().__init__(inner)
        self.writer = writer
        self._scrub = scrub

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Answer, then append the call and its reply (or final error) to the cassette."""
        key = call.cache_key(self.spec, self.model, self.params)
        try:
            reply = await self.inner.generate(call)
        except JudgeError as exc:
            scrubbed = JudgeError(self._scrub(str(exc)), reason=exc.reason)
            self.writer.write(
                cassette_entry(key, self.spec, self.model, self.params, call, None, scrubbed)
            )
            raise
        entry = cassette_entry(key, self.spec, self.model, self.params, call, reply)
        entry["text"] = self._scrub(entry["text"])
        self.writer.write(entry)
        return reply


class CacheLayer(Layer):
    """Serves a call from the disk cache when its key is there; stores usable fresh replies.

    Only a reply that yields usable answers or elements is stored (see
    :func:`~groundeval.judges._usable.usable_reply`); a stored entry that does
    not (written by an older version) is skipped and the call asked again, so a
    re-run never replays a wrong-shape or malformed reply at zero calls.
    """

    def __init__(self, inner: Judge, cache: DiskCache, scrub: Scrubber) -> None:
        super().__init__(inner)
        self.cache = cache
        self._scrub = scrub
        self.skipped = 0
        """Stored entries that were not usable and were asked again."""

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """A hit costs nothing (``calls=0, cached_calls=1``); a miss asks the backend."""
        key = call.cache_key(self.spec, self.model, self.params)
        entry = await asyncio.to_thread(self.cache.get, key)
        if entry is not None:
            if usable_reply(call, str(entry["text"])):
                return JudgeReply(str(entry["text"]), Usage(cached_calls=1), cached=True)
            self.skipped += 1
        reply = await self.inner.generate(call)
        if not usable_reply(call, reply.text):
            return reply
        usage = reply.usage.model_dump(exclude={"seconds", "cost_usd"})
        await asyncio.to_thread(
            self.cache.put,
            key,
            {
                "spec": self.spec,
                "model": self.model,
                "params": self.params,
                "text": self._scrub(reply.text),
                "usage": usage,
            },
        )
        return reply


class RepeatLayer(Layer):
    """Marks a repeat run: ``repeat_index`` joins the parameters, hence every cache key.

    Repeats of one run would otherwise share the cache and agree perfectly; with
    a different index each repeat asks the judge again. The index is recorded
    with the other parameters in every run's provenance. Index 0 needs no layer
    (cache keys unchanged).
    """

    def __init__(self, inner: Judge, repeat_index: int) -> None:
        super().__init__(inner)
        if repeat_index < 1:
            raise ValueError(f"repeat_index must be at least 1 for a repeat, got {repeat_index}")
        self.repeat_index = repeat_index

    @property
    def params(self) -> dict[str, Any]:
        """The backend's parameters plus ``repeat_index``."""
        return {**self.inner.params, "repeat_index": self.repeat_index}


class RetryLayer(Layer):
    """Retries transient failures (429, 5xx, timeouts) with exponential backoff and jitter.

    The wait is the larger of the backoff and the server's ``Retry-After``
    (capped at ``max_wait_s``). After ``attempts`` tries the last error is raised
    as a final :class:`JudgeError` that says how many attempts were made.
    """

    def __init__(
        self,
        inner: Judge,
        *,
        attempts: int = 5,
        initial_s: float = 1.0,
        max_wait_s: float = 60.0,
        jitter_s: float = 1.0,
        account: Account | None = None,
    ) -> None:
        super().__init__(inner)
        if attempts < 1:
            raise ValueError(f"retry attempts must be at least 1, got {attempts}")
        self.attempts = attempts
        self.max_wait_s = max_wait_s
        self._backoff = wait_exponential_jitter(initial=initial_s, max=max_wait_s, jitter=jitter_s)
        self.account = account

    def _wait(self, state: RetryCallState) -> float:
        base = float(self._backoff(state))
        exc = state.outcome.exception() if state.outcome else None
        hint = getattr(exc, "retry_after", None)
        if hint is not None:
            base = max(base, min(float(hint), self.max_wait_s))
        return base

    def _count(self, state: RetryCallState) -> None:
        if self.account is not None:
            self.account.retries += 1

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Try up to ``attempts`` times; only transient errors are retried."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=self._wait,
            retry=retry_if_exception_type(Transient),
            before_sleep=self._count,
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self.inner.generate(call)
        except Transient as exc:
            raise JudgeError(
                f"gave up after {self.attempts} attempts: {exc}", reason=exc.reason
            ) from exc
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover


class LimitLayer(Layer):
    """Caps concurrent calls, requests per minute and (estimated) tokens per minute.

    Rates are spread over the minute (a per-second bucket) rather than allowed as
    one burst of a minute's quota. Limiters are created per event loop, so one
    judge can serve several ``asyncio.run`` calls without binding to a dead loop.
    """

    def __init__(
        self,
        inner: Judge,
        *,
        concurrency: int = 8,
        rpm: float | None = None,
        tpm: float | None = None,
    ) -> None:
        super().__init__(inner)
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency
        self.rpm = rpm
        self.tpm = tpm
        self._loop: asyncio.AbstractEventLoop | None = None
        self.in_flight = 0
        self.peak_in_flight = 0

    def _limits(self) -> tuple[asyncio.Semaphore, AsyncLimiter | None, AsyncLimiter | None]:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self._loop = loop
            self._sem = asyncio.Semaphore(self.concurrency)
            self._rpm = _per_second(self.rpm) if self.rpm else None
            # tokens over a 10 s window: a large call still fits in one bucket
            self._tpm = AsyncLimiter(self.tpm / 6, 10) if self.tpm else None
        return self._sem, self._rpm, self._tpm

    def estimate_tokens(self, call: JudgeCall) -> float:
        """Tokens a call will likely use: prompt/4, ~260 per image, the output allowance."""
        out = float(self.params.get("max_output_tokens") or 512)
        return len(call.prompt) / 4 + 260 * len(call.images) + out

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Wait for the rate limiters, then for a slot, then call."""
        sem, rpm, tpm = self._limits()
        if rpm is not None:
            await rpm.acquire()
        if tpm is not None:
            await tpm.acquire(min(self.estimate_tokens(call), tpm.max_rate))
        async with sem:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                return await self.inner.generate(call)
            finally:
                self.in_flight -= 1


def _per_second(per_minute: float) -> AsyncLimiter:
    """A limiter for ``per_minute`` requests that allows at most a second's worth at once."""
    if per_minute >= 60:
        return AsyncLimiter(per_minute / 60, 1)
    return AsyncLimiter(1, 60 / per_minute)
