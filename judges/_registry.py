"""Judge spec strings -> backends (a registry of spec prefixes), and the middleware builder.

SDKs are imported lazily inside each backend, so ``offline`` and ``replay:``
work without them and a missing SDK says what to install.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from groundeval.judges._account import Account, load_prices
from groundeval.judges._cache import DiskCache
from groundeval.judges._cassette import CassetteWriter, ReplayJudge
from groundeval.judges._middleware import (
    AccountingLayer,
    CacheLayer,
    LimitLayer,
    RecordingLayer,
    RepeatLayer,
    RetryLayer,
    Scrubber,
)
from groundeval.judges._offline import OfflineJudge
from groundeval.judges._protocol import Judge
from groundeval.state import Registry

_OPTIONS = frozenset(
    {
        "api_key",
        "base_url",
        "temperature",
        "seed",
        "thinking",
        "max_output_tokens",
        "timeout_s",
        "box_convention",
        "max_connections",
    }
)
_KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY")

JudgeFactory = Callable[..., Judge]
"""``factory(rest, **options) -> Judge``: ``rest`` is the spec after ``prefix:``."""

JUDGES: Registry[JudgeFactory] = Registry("judge backend", group="groundeval.judges")
"""Judge backends by spec prefix (``gemini`` in ``gemini:<model>``); plugins add theirs."""
_BUILTIN = frozenset({"gemini", "openai", "replay"})
_J = TypeVar("_J", bound=JudgeFactory)


def register_judge(prefix: str) -> Callable[[_J], _J]:
    """Make ``--judge prefix:<rest>`` build a backend: ``factory(rest, **options)``.

    The factory (a class or a function) receives the text after ``prefix:`` and the
    ``--judge-param`` options it declares; ``build_judge`` wraps what it returns in
    the cache, retries, limits and accounting, as for the built-in backends. On
    ``--executor ray`` every worker loads the same ``--plugins`` files first.
    """
    return JUDGES.register(prefix)


def judge_names() -> list[str]:
    """Every spec prefix a judge can be built from (``offline`` needs none)."""
    return JUDGES.names()


def _specs() -> str:
    custom = [f"{name}:<...>" for name in judge_names() if name not in _BUILTIN]
    return ", ".join(
        ["offline", "gemini:<model>", "openai:<model>@<base_url>", "replay:<cassette>", *custom]
    )


@JUDGES.register("gemini")
def _gemini(rest: str, **options: Any) -> Judge:
    """Google Gemini through google-genai (``gemini:<model>``)."""
    from groundeval.judges._gemini import GeminiJudge

    options.pop("box_convention", None)
    return GeminiJudge(rest, **options)


@JUDGES.register("openai")
def _openai(rest: str, **options: Any) -> Judge:
    """Any OpenAI-compatible server (``openai:<model>@<base_url>``)."""
    from groundeval.judges._openai import OpenAIJudge, split_spec

    model, url = split_spec(rest)
    options.setdefault("base_url", url)
    options.pop("thinking", None)
    return OpenAIJudge(model, **options)


@JUDGES.register("replay")
def _replay(rest: str, **options: Any) -> Judge:
    """Answers from a recorded cassette (``replay:<cassette.jsonl>``)."""
    if options:
        raise ValueError(f"replay takes no options (got {', '.join(sorted(options))})")
    return ReplayJudge(rest)


def make_judge(spec: str | None, **options: Any) -> Judge:
    """Build the bare backend named by a spec string (``offline`` when none is given).

    Args:
        spec: ``offline``, ``gemini:<model>``, ``openai:<model>[@<base_url>]``,
            ``replay:<cassette.jsonl>`` or ``<prefix>:<rest>`` of a backend
            registered with :func:`register_judge`.
        **options: backend options: ``api_key``, ``base_url``, ``temperature``,
            ``seed``, ``thinking``, ``max_output_tokens``, ``timeout_s`` and, for
            OpenAI-compatible servers, ``box_convention``; a registered backend
            takes the keyword arguments its factory declares.

    Raises:
        ValueError: the spec names no known backend or lacks its model, or an
            option is unknown to the backend.
    """
    if spec in (None, "", "offline"):
        return OfflineJudge()
    kind, sep, rest = spec.partition(":")
    if not sep or not rest or kind not in JUDGES:
        raise ValueError(f"unknown judge spec {spec!r}; expected {_specs()}")
    options = {k: v for k, v in options.items() if v is not None}
    factory = JUDGES.lookup(kind)
    if kind in _BUILTIN:
        unknown = sorted(set(options) - _OPTIONS)
        if unknown:
            raise ValueError(
                f"unknown judge option(s) {', '.join(unknown)}; "
                f"known: {', '.join(sorted(_OPTIONS))}"
            )
        return factory(rest, **options)
    return _build_registered(kind, factory, rest, options)


def _build_registered(
    kind: str, factory: JudgeFactory, rest: str, options: dict[str, Any]
) -> Judge:
    """Call a plugin's factory; bad options and a broken result are errors naming it."""
    try:
        inspect.signature(factory).bind(rest, **options)
    except TypeError as exc:
        raise ValueError(
            f"judge {kind!r} ({JUDGES.origin(kind)}) does not take these options: {exc}"
        ) from None
    except ValueError:
        pass  # no signature to read (a builtin callable): let the call decide
    judge = factory(rest, **options)
    missing = [a for a in ("spec", "model", "params", "generate") if not hasattr(judge, a)]
    if missing:
        raise ValueError(
            f"judge {kind!r} ({JUDGES.origin(kind)}) built a {type(judge).__name__} without "
            f"{', '.join(missing)}; a judge needs spec, model, params and async generate(call)"
        )
    return judge


def build_judge(
    spec: str | None,
    *,
    cache_dir: str | Path | None = None,
    record: str | Path | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    concurrency: int = 8,
    retries: int = 5,
    backoff_s: tuple[float, float] = (1.0, 60.0),
    prices: Mapping[str, Any] | str | Path | None = None,
    account: Account | None = None,
    repeat_index: int = 0,
    **options: Any,
) -> Judge:
    """The judge a run uses: a backend wrapped in cache, recorder, retries, limits, accounting.

    Args:
        spec: backend spec string, see :func:`make_judge`.
        cache_dir: folder of the content-addressed reply cache, shared across runs;
            ``None`` disables caching.
        record: JSONL cassette to append every call to, with its reply or final error
            (``replay:<cassette>`` serves it offline).
        rpm: requests per minute allowed (``None``: unlimited).
        tpm: tokens per minute allowed, estimated before each call (``None``: unlimited).
        concurrency: most calls in flight at once, across all items.
        retries: attempts per call, the first included, for 429 / 5xx / timeouts.
        backoff_s: first and largest wait between attempts, in seconds (plus up to
            one first-wait of jitter); a server's Retry-After wins when longer.
        prices: price table overrides, ``{model: {input, output, thinking}}`` in
            dollars per million tokens, or a JSON/YAML file of them.
        account: where totals are kept (a new one when ``None``); also ``judge.account``.
        repeat_index: ``k > 0`` marks the k-th repeat of a run: it joins the judge's
            parameters (so every cache key and the provenance) and the judge is
            asked again instead of answering from the first run's cache. ``0``
            leaves cache keys as they always were. No effect on ``offline`` and
            ``replay:`` (nothing to sample again).
        **options: passed to the backend (``api_key``, ``base_url``, ``temperature``,
            ``seed``, ``thinking``, ``max_output_tokens``, ``timeout_s``, ``box_convention``).

    Returns:
        A :class:`Judge`; ``judge.account`` holds calls, tokens, seconds and cost.
    """
    if spec and spec.startswith(("gemini:", "openai:")):
        options.setdefault("max_connections", concurrency)
    backend = make_judge(spec, **options)
    return wrap_judge(
        backend,
        cache_dir=cache_dir,
        record=record,
        rpm=rpm,
        tpm=tpm,
        concurrency=concurrency,
        retries=retries,
        backoff_s=backoff_s,
        prices=prices,
        account=account,
        secrets=[options.get("api_key")],
        repeat_index=repeat_index,
    )


def wrap_judge(
    backend: Judge,
    *,
    cache_dir: str | Path | None = None,
    record: str | Path | None = None,
    rpm: float | None = None,
    tpm: float | None = None,
    concurrency: int = 8,
    retries: int = 5,
    backoff_s: tuple[float, float] = (1.0, 60.0),
    prices: Mapping[str, Any] | str | Path | None = None,
    account: Account | None = None,
    secrets: list[str | None] | None = None,
    repeat_index: int = 0,
) -> Judge:
    """Wrap any backend (your own, a :class:`ScriptedJudge`) in the run middleware.

    Arguments as in :func:`build_judge`; ``secrets`` are extra strings to scrub
    from reply texts and error messages (the usual API-key variables always are).
    """
    if isinstance(repeat_index, bool) or not isinstance(repeat_index, int) or repeat_index < 0:
        raise ValueError(f"repeat_index must be a whole number >= 0, got {repeat_index!r}")
    account = account or Account()
    scrub = Scrubber([*(secrets or []), *(os.environ.get(v) for v in _KEY_VARS)])
    judge: Judge = backend
    if not isinstance(backend, (OfflineJudge, ReplayJudge)):
        if repeat_index:
            judge = RepeatLayer(judge, repeat_index)
        judge = LimitLayer(judge, concurrency=concurrency, rpm=rpm, tpm=tpm)
        initial, largest = backoff_s
        judge = RetryLayer(
            judge,
            attempts=retries,
            initial_s=initial,
            max_wait_s=largest,
            jitter_s=initial,
            account=account,
        )
        if cache_dir is not None:
            judge = CacheLayer(judge, DiskCache(cache_dir), scrub)
    if record is not None and not isinstance(backend, OfflineJudge):
        judge = RecordingLayer(judge, CassetteWriter(record), scrub)
    return AccountingLayer(judge, account, load_prices(prices), scrub)
