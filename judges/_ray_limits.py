"""One judge rate budget for a whole Ray cluster: a limiter actor and the layer that asks it.

Why an actor and not per-worker shares: shares of ``rpm / workers`` waste the
budget whenever some workers are busy with CPU work (or the cluster scales), and
each must know how many workers exist. One actor owns the ``aiolimiter`` buckets
(requests per minute, tokens per minute) and every judge call on every worker
asks it for a grant first, so the sum over the cluster never exceeds the budget.
The price is one small actor round trip per judge call (about a millisecond on
one node), which is negligible next to a model call.

Concurrency stays per worker (the ``concurrency`` of each worker's judge): a
cluster-wide semaphore would leak slots whenever a worker dies holding one.

Ray is imported lazily; nothing here runs without ``pip install 'groundeval[ray]'``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from aiolimiter import AsyncLimiter

from groundeval.judges._middleware import Layer, LimitLayer
from groundeval.judges._protocol import Judge, JudgeCall, JudgeReply, TransientJudgeError


class RateBudget:
    """The cluster's judge budget; run as a Ray async actor (:func:`start_rate_budget`).

    Requests are spread over the minute like :class:`~groundeval.judges.LimitLayer`
    does (at most a second's worth at once); tokens use a 10 s bucket so one large
    call still fits.
    """

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        for name, value in (("rpm", rpm), ("tpm", tpm)):
            if value is not None and value <= 0:
                raise ValueError(f"{name} must be positive, got {value}")
        self.rpm = rpm
        self.tpm = tpm
        self._requests: AsyncLimiter | None = None
        self._tokens: AsyncLimiter | None = None
        self.grants = 0
        self.waited_s = 0.0

    def _buckets(self) -> tuple[AsyncLimiter | None, AsyncLimiter | None]:
        if self._requests is None and self.rpm:
            rpm = self.rpm
            self._requests = AsyncLimiter(rpm / 60, 1) if rpm >= 60 else AsyncLimiter(1, 60 / rpm)
        if self._tokens is None and self.tpm:
            self._tokens = AsyncLimiter(self.tpm / 6, 10)
        return self._requests, self._tokens

    async def acquire(self, tokens: float = 0.0) -> float:
        """Wait until one request (and ``tokens`` estimated tokens) fit; return seconds waited."""
        start = time.monotonic()
        requests, token_bucket = self._buckets()
        if requests is not None:
            await requests.acquire()
        if token_bucket is not None and tokens > 0:
            await token_bucket.acquire(min(tokens, token_bucket.max_rate))
        waited = time.monotonic() - start
        self.grants += 1
        self.waited_s += waited
        return waited

    def stats(self) -> dict[str, float]:
        """Grants given and total seconds callers waited (for reports and tests)."""
        return {"grants": self.grants, "waited_s": round(self.waited_s, 3)}


def start_rate_budget(rpm: float | None, tpm: float | None) -> Any:
    """Start the budget actor on the connected cluster and return its handle.

    It takes no CPU slot (``num_cpus=0``), and Ray restarts it if its process dies
    (a restart begins with a full bucket: at worst one extra second's worth).
    """
    import ray

    options: dict[str, Any] = {
        "num_cpus": 0, "max_restarts": -1, "max_task_retries": -1, "max_concurrency": 1000,
    }  # fmt: skip
    return ray.remote(**options)(RateBudget).remote(rpm, tpm)


class ClusterLimitLayer(Layer):
    """Asks the cluster's :class:`RateBudget` actor for a grant before each call."""

    def __init__(self, inner: Judge, budget: Any) -> None:
        super().__init__(inner)
        self.budget = budget

    def estimate_tokens(self, call: JudgeCall) -> float:
        """Tokens the call will likely use (same estimate as the local limiter)."""
        out = float(self.params.get("max_output_tokens") or 512)
        return len(call.prompt) / 4 + 260 * len(call.images) + out

    async def generate(self, call: JudgeCall) -> JudgeReply:
        """Wait for a cluster-wide grant, then call; an unreachable budget is transient."""
        try:
            await self.budget.acquire.remote(self.estimate_tokens(call))
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # RayActorError and friends: let the retry layer try again
            raise TransientJudgeError(
                f"cluster rate limiter unreachable: {type(exc).__name__}: {exc}",
                reason="rate limiter",
            ) from exc
        return await self.inner.generate(call)


def with_cluster_limit(judge: Judge, budget: Any) -> Judge:
    """The judge with a :class:`ClusterLimitLayer` put right above its :class:`LimitLayer`.

    Walking the chain (rather than rebuilding it) keeps whatever layer order
    ``build_judge`` chooses: the grant is asked inside the retry layer, so every
    retry attempt waits for the budget too, and a cache hit never spends it. A
    judge without a limit layer (a bare backend, offline, replay) is wrapped whole.
    """
    parent: Any = None
    node: Any = judge
    while node is not None:
        if isinstance(node, LimitLayer):
            layer = ClusterLimitLayer(node, budget)
            if parent is None:
                return layer
            parent.inner = layer
            return judge
        parent, node = node, node.__dict__.get("inner")
    return ClusterLimitLayer(judge, budget)
