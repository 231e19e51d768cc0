"""``--executor ray``: grade a run's items on a Ray cluster, results streamed to the driver.

One Ray task per item (or per ``items_per_task`` items, graded concurrently on
the worker: judge-bound items then share one process). The driver (the process
that called ``run_items``) keeps a bounded number of tasks in flight, takes each
task's results as it finishes (``ray.wait``) and hands them to ``on_result``,
which alone appends to the run folder: a task that is retried after its worker
died is still appended once.

Workers write evidence (state files, overlays) straight into the run folder, so
the run folder and the images must be on a filesystem every node sees at the
same path (NFS, a shared volume; trivially true on one machine). State files
are atomic rewrites, so a retried item overwrites its half-finished evidence.

Workers never receive the driver's judge object (SDK clients do not pickle):
each worker builds its own from a :class:`JudgeRecipe` (or any picklable
factory). Judge calls share the cluster's ``rpm``/``tpm`` budget through one
limiter actor (see :func:`groundeval.judges.start_rate_budget`) and the on-disk reply
cache through the shared ``cache_dir``.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import math
import os
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundeval.grounding import PROPOSERS
from groundeval.judges import (
    Judge,
    build_judge,
    make_judge,
    start_rate_budget,
    with_cluster_limit,
)
from groundeval.programs._checks import load_check_module
from groundeval.programs._runner import ItemInput, grade_item
from groundeval.state import ItemResult, ItemUsage, RunStore

INSTALL_HINT = "the ray executor needs Ray: pip install 'groundeval[ray]'"


class WorkerSetupError(ValueError):
    """A worker could not import the user's modules or check files (stops the run)."""


def import_ray() -> Any:
    """Ray, or an ImportError that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return ray


@dataclass(frozen=True)
class JudgeRecipe:
    """How every worker builds the run's judge: ``build_judge(spec, **options)``.

    ``rpm`` and ``tpm`` in ``options`` become the cluster-wide budget (one
    limiter actor), not a per-worker limit. ``concurrency`` stays per worker.
    API keys are best left out of ``options`` (they would travel with every
    task): set them in the workers' environment instead.
    """

    spec: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.options.get("record") is not None:
            raise ValueError(
                "record: a cassette cannot be written by many Ray workers at once; "
                "record with the local executor, or replay a cassette on the cluster"
            )

    def build(self) -> Judge:
        """The judge, with the middleware but without local rate limits."""
        options = {k: v for k, v in self.options.items() if k not in ("rpm", "tpm")}
        judge: Judge = build_judge(self.spec, **options)
        return judge


JudgeFactory = Callable[[], Judge]


@dataclass(frozen=True)
class _Job:
    """What every task of one run shares (put in the object store once)."""

    token: str
    judge: JudgeRecipe | JudgeFactory
    budget: Any
    run_root: Path
    cwd: str
    imports: tuple[str, ...]
    checks: tuple[str, ...]


class RayExecutor:
    """Grades items as Ray tasks on a cluster (or on a Ray instance started here).

    Args:
        address: cluster to join (``"auto"``, ``"ray://head:10001"``); ``None``
            joins an already initialised Ray or starts a local instance.
        judge: how workers build the judge; ``None`` rebuilds it from the
            driver judge's spec alone (no cache, no options).
        num_cpus: CPUs each task reserves (CV proposers run inside it).
        num_gpus: GPUs each task reserves.
        proposer_gpus: GPUs for items using a proposer, by proposer name; a
            registered proposer class may also say ``num_gpus = 1`` itself.
        rpm: cluster-wide requests per minute (overrides ``judge.options``).
        tpm: cluster-wide tokens per minute (overrides ``judge.options``).
        items_per_task: items one task grades concurrently (1 for CPU-bound items;
            more for judge-bound ones, which mostly wait on the network).
        max_retries: times a task is retried after its worker died.
        max_in_flight: tasks submitted at once (default: twice the cluster's CPUs).
        imports: modules every worker imports first (custom proposers, verifiers).
        checks: ``--plugins`` files (alias ``--checks``) every worker loads before it
            builds the judge: proposers, checks, protocols and judge backends.
        init_kwargs: extra ``ray.init`` arguments (``num_cpus``, ``runtime_env``).
        shutdown: stop the Ray instance afterwards if this executor started it.
    """

    def __init__(
        self,
        address: str | None = None,
        *,
        judge: JudgeRecipe | JudgeFactory | None = None,
        num_cpus: float = 1.0,
        num_gpus: float = 0.0,
        proposer_gpus: Mapping[str, float] | None = None,
        rpm: float | None = None,
        tpm: float | None = None,
        items_per_task: int = 1,
        max_retries: int = 3,
        max_in_flight: int | None = None,
        imports: Sequence[str] = (),
        checks: Sequence[str | Path] = (),
        init_kwargs: Mapping[str, Any] | None = None,
        shutdown: bool = False,
    ) -> None:
        if num_cpus < 0 or num_gpus < 0 or max_retries < 0:
            raise ValueError("num_cpus, num_gpus and max_retries must not be negative")
        if items_per_task < 1:
            raise ValueError(f"items_per_task must be at least 1, got {items_per_task}")
        if max_in_flight is not None and max_in_flight < 1:
            raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight}")
        self.address = address
        self.judge = judge
        self.num_cpus = num_cpus
        self.num_gpus = num_gpus
        self.proposer_gpus = dict(proposer_gpus or {})
        options = judge.options if isinstance(judge, JudgeRecipe) else {}
        self.rpm = rpm if rpm is not None else options.get("rpm")
        self.tpm = tpm if tpm is not None else options.get("tpm")
        self.items_per_task = items_per_task
        self.max_retries = max_retries
        self.max_in_flight = max_in_flight
        self.imports = tuple(imports)
        self.checks = tuple(str(Path(c).expanduser().resolve()) for c in checks)
        self.init_kwargs = dict(init_kwargs or {})
        self.shutdown = shutdown
        self.budget_stats: dict[str, float] | None = None
        """Grants and waiting seconds of the last run's rate budget (``None``: no budget)."""

    # driver ------------------------------------------------------------------
    async def grade(
        self,
        items: list[ItemInput],
        *,
        judge: Judge,
        store: RunStore,
        on_result: Callable[[ItemResult, ItemUsage], None],
    ) -> None:
        """Submit tasks of ``items_per_task`` items; call ``on_result`` here as each ends."""
        ray = import_ray()
        if not items:
            return  # e.g. a resumed run with nothing left: no need to reach the cluster
        started = self._connect(ray)
        budget = None
        pending: dict[Any, list[ItemInput]] = {}
        try:
            budget = self._start_budget()
            job = _Job(
                uuid.uuid4().hex, self._recipe(judge), budget, store.root.resolve(),
                os.getcwd(), self.imports, self.checks,
            )  # fmt: skip
            job_ref = ray.put(job)
            task = ray.remote(_grade_on_worker)
            cap = self.max_in_flight or self._default_in_flight(ray)
            size = self.items_per_task
            chunks = iter([items[i : i + size] for i in range(0, len(items), size)])
            while True:
                while len(pending) < cap and (chunk := next(chunks, None)) is not None:
                    options = {**self._resources(chunk), "max_retries": self.max_retries}
                    pending[task.options(**options).remote(job_ref, chunk)] = chunk
                if not pending:
                    break
                # a timeout keeps Ctrl-C responsive (the thread returns within a second)
                ready, _ = await asyncio.to_thread(
                    ray.wait, list(pending), num_returns=1, timeout=1.0
                )
                for ref in ready:
                    for result, usage in _collect(ray, ref, pending.pop(ref)):
                        on_result(result, usage)
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
            if budget is not None:
                with contextlib.suppress(ray.exceptions.RayError):
                    self.budget_stats = ray.get(budget.stats.remote(), timeout=10)
                ray.kill(budget)
            if started and self.shutdown:
                ray.shutdown()

    def _connect(self, ray: Any) -> bool:
        """Join the cluster; return True when this call started Ray."""
        if ray.is_initialized():
            return False
        kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": "warning"}
        if self.address is None:
            kwargs["_node_ip_address"] = "127.0.0.1"  # a local instance stays on loopback
        ray.init(address=self.address, **{**kwargs, **self.init_kwargs})
        return True

    def _default_in_flight(self, ray: Any) -> int:
        """Twice as many tasks as the cluster can run at once, so no CPU waits for work."""
        cpus = float(ray.cluster_resources().get("CPU", 1))
        per_item = self.num_cpus if self.num_cpus > 0 else 1 / 16
        return max(2, math.ceil(2 * cpus / per_item))

    def _start_budget(self) -> Any:
        if self.rpm is None and self.tpm is None:
            return None
        return start_rate_budget(self.rpm, self.tpm)

    def _recipe(self, judge: Judge) -> JudgeRecipe | JudgeFactory:
        if self.judge is not None:
            return self.judge
        try:
            make_judge(judge.spec)
        except (ValueError, OSError) as exc:
            raise ValueError(
                f"the ray executor cannot rebuild judge {judge.spec!r} on the workers "
                f"({exc}); pass RayExecutor(judge=JudgeRecipe(spec, options)) or a "
                "picklable factory"
            ) from exc
        return JudgeRecipe(judge.spec)

    def _resources(self, chunk: list[ItemInput]) -> dict[str, float]:
        """CPUs and GPUs one task reserves (GPUs when one of its proposers asks for them)."""
        gpus = self.num_gpus
        for item in chunk:
            for question in [*item.program.gates, *item.program.hard]:
                if question.ground is not None:
                    wanted = _proposer_gpus(question.ground.proposer, self.proposer_gpus)
                    gpus = max(gpus, wanted)
        return {"num_cpus": self.num_cpus, "num_gpus": gpus}


def _proposer_gpus(name: str, overrides: Mapping[str, float]) -> float:
    if name in overrides:
        return float(overrides[name])
    factory = PROPOSERS.get(name)  # built-ins, entry points and loaded plugins
    return float(getattr(factory, "num_gpus", 0.0) or 0.0)


def _collect(ray: Any, ref: Any, chunk: list[ItemInput]) -> list[tuple[ItemResult, ItemUsage]]:
    """A finished task's results; a task that failed (its worker died too often) is errors."""
    try:
        graded: list[tuple[ItemResult, ItemUsage]] = ray.get(ref)
    except ray.exceptions.RayError as exc:
        cause = exc if isinstance(exc, WorkerSetupError) else getattr(exc, "cause", None)
        if isinstance(cause, WorkerSetupError):
            raise WorkerSetupError(str(cause.args[0] if cause.args else cause)) from None
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        message = f"ray task failed: {type(exc).__name__}: {first}"
        return [(_failed(item, message), ItemUsage(item_id=item.item_id)) for item in chunk]
    return graded


def _failed(item: ItemInput, message: str) -> ItemResult:
    return ItemResult(
        item_id=item.item_id,
        program_id=item.program.id,
        scoring=item.program.scoring,
        tags=dict(item.program.tags),
        images=[str(p) for p in item.images],
        status="error",
        error=message,
    )


# worker --------------------------------------------------------------------
@dataclass
class _WorkerState:
    """Kept per worker process across tasks: one event loop, one judge per run."""

    loop: asyncio.AbstractEventLoop | None = None
    token: str = ""
    judge: Judge | None = None
    setups: set[tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=set)


_WORKER = _WorkerState()


def _grade_on_worker(job: _Job, chunk: list[ItemInput]) -> list[tuple[ItemResult, ItemUsage]]:
    """Body of one Ray task: set the worker up once, then grade the items on its loop.

    The driver's working folder is entered first, so relative image paths mean the
    same here and are recorded (and named in errors) exactly as a local run would.
    """
    if os.getcwd() != job.cwd and os.path.isdir(job.cwd):
        os.chdir(job.cwd)
    _setup(job)
    loop = _worker_loop()
    if _WORKER.token != job.token or _WORKER.judge is None:
        _WORKER.judge = _worker_judge(job)
        _WORKER.token = job.token
    judge, sink = _WORKER.judge, RunStore(job.run_root)

    async def grade_all() -> list[tuple[ItemResult, ItemUsage]]:
        return list(await asyncio.gather(*(grade_item(i, judge=judge, sink=sink) for i in chunk)))

    return asyncio.run_coroutine_threadsafe(grade_all(), loop).result()


def _setup(job: _Job) -> None:
    """Import the user's modules and plugin files once per worker process."""
    key = (job.imports, job.checks)
    if key in _WORKER.setups:
        return
    for module in job.imports:
        try:
            importlib.import_module(module)
        except Exception as exc:
            raise WorkerSetupError(
                f"a Ray worker could not import {module!r}: {type(exc).__name__}: {exc} "
                "(is it installed on every node, or on the workers' PYTHONPATH?)"
            ) from exc
    for path in job.checks:
        try:
            load_check_module(Path(path))
        except ValueError as exc:
            raise WorkerSetupError(f"a Ray worker could not load a plugin: {exc}") from exc
    _WORKER.setups.add(key)


def _worker_loop() -> asyncio.AbstractEventLoop:
    """One long-lived event loop per worker, so SDK clients keep their connections."""
    if _WORKER.loop is None:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="groundeval-ray", daemon=True).start()
        _WORKER.loop = loop
    return _WORKER.loop


def _worker_judge(job: _Job) -> Judge:
    judge = job.judge.build() if isinstance(job.judge, JudgeRecipe) else job.judge()
    if job.budget is None:
        return judge
    return with_cluster_limit(judge, job.budget)
