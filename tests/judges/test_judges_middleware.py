"""Cache, cassette record/replay, retries, limits and accounting around any judge."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from groundeval.judges import (
    Account,
    AccountingLayer,
    CacheLayer,
    CassetteWriter,
    DiskCache,
    JudgeCall,
    JudgeError,
    JudgeReply,
    LimitLayer,
    QuestionRef,
    RecordingLayer,
    ReplayJudge,
    RetryLayer,
    ScriptedJudge,
    Scrubber,
    TransientJudgeError,
    ask_questions,
    build_judge,
    load_prices,
    make_judge,
)
from groundeval.state import Usage
from tests._support.fakeapi import tiny_png

QS = [QuestionRef("q1", "Is there a die?"), QuestionRef("q2", "Five pips?")]


def scripted() -> ScriptedJudge:
    return ScriptedJudge({"q1": True, "q2": False})


def run(coro):
    return asyncio.run(coro)


def test_second_identical_run_makes_zero_backend_calls(tmp_path: Path) -> None:
    backend = scripted()
    judge = CacheLayer(backend, DiskCache(tmp_path), Scrubber([]))
    first, u1 = run(ask_questions(judge, [tiny_png()], QS, item_id="a"))
    again = CacheLayer(scripted(), DiskCache(tmp_path), Scrubber([]))  # a new run, same folder
    second, u2 = run(ask_questions(again, [tiny_png()], QS, item_id="a"))
    assert len(backend.calls) == 1 and again.inner.calls == []
    assert (u1.calls, u1.cached_calls) == (1, 0) and (u2.calls, u2.cached_calls) == (0, 1)
    assert {k: (a.result, a.reason) for k, a in first.items()} == {
        k: (a.result, a.reason) for k, a in second.items()
    }


def test_cache_key_changes_with_image_params_and_schema(tmp_path: Path) -> None:
    image = tiny_png()
    call = JudgeCall("questions", "p", (image,), {"type": "object"})
    base = call.cache_key("gemini:m", "m", {"temperature": 0})
    assert base != call.cache_key("gemini:m", "m", {"temperature": 1})
    assert base != JudgeCall("questions", "p", (tiny_png(33),), {"type": "object"}).cache_key(
        "gemini:m", "m", {"temperature": 0}
    )
    assert base != JudgeCall("questions", "p", (image,), {"type": "array"}).cache_key(
        "gemini:m", "m", {"temperature": 0}
    )
    assert base == JudgeCall(
        "questions", "p", (image,), {"type": "object"}, item_id="other"
    ).cache_key("gemini:m", "m", {"temperature": 0})


def test_corrupt_cache_file_is_a_miss(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    key = "a" * 64
    cache.put(key, {"text": "x"})
    assert cache.get(key)["text"] == "x"
    (tmp_path / "aa" / f"{key}.json").write_text("{broken")
    assert cache.get(key) is None
    with pytest.raises(ValueError, match="sha256"):
        cache.get("../../etc/passwd")


def test_record_then_replay_reproduces_answers(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"
    recorder = RecordingLayer(scripted(), CassetteWriter(cassette), Scrubber([]))
    live = {
        i: run(ask_questions(recorder, [tiny_png()], QS, item_id=i, prompt=i))[0]
        for i in ("a", "b")
    }
    lines = cassette.read_text().split("\n")[:-1]
    assert len(lines) == 2 and json.loads(lines[0])["questions"] == ["q1", "q2"]
    replay = make_judge(f"replay:{cassette}")
    for i in ("a", "b"):
        answers, usage = run(ask_questions(replay, [tiny_png()], QS, item_id=i, prompt=i))
        assert {k: a.result for k, a in answers.items()} == {
            k: a.result for k, a in live[i].items()
        }
        assert usage.calls == 0 and usage.cached_calls == 1


def test_replay_missing_entry_names_what_is_missing(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"
    recorder = RecordingLayer(scripted(), CassetteWriter(cassette), Scrubber([]))
    run(ask_questions(recorder, [tiny_png()], QS, item_id="a", prompt="a"))
    replay = ReplayJudge(cassette)
    answers, _ = run(ask_questions(replay, [tiny_png()], QS, item_id="zz", prompt="changed"))
    assert answers["q1"].result is None
    assert "no recorded reply for item zz task questions questions q1, q2" in answers["q1"].error
    assert replay.missing == ["item zz task questions questions q1, q2"]


def test_bad_cassette_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"key": "k", "spec": "s", "model": "m", "params": {}, "text": "t"}\nnope\n')
    with pytest.raises(ValueError, match=r"c.jsonl:2: not JSON"):
        ReplayJudge(path)


class Flaky:
    """Fails transiently ``failures`` times, then answers."""

    spec = "flaky"
    model = "flaky"

    def __init__(self, failures: int, retry_after: float | None = None) -> None:
        self.params: dict = {}
        self.failures = failures
        self.retry_after = retry_after
        self.calls = 0

    async def generate(self, call: JudgeCall) -> JudgeReply:
        self.calls += 1
        if self.calls <= self.failures:
            raise TransientJudgeError("503", reason="http 503", retry_after=self.retry_after)
        return JudgeReply('{"answers": []}', Usage(calls=1))


def test_retry_recovers_and_counts() -> None:
    account = Account()
    inner = Flaky(2)
    judge = RetryLayer(
        inner, attempts=3, initial_s=0.001, max_wait_s=0.01, jitter_s=0.001, account=account
    )
    run(judge.generate(JudgeCall("questions", "p", (), {})))
    assert inner.calls == 3 and account.retries == 2


def test_retry_gives_up_with_final_error() -> None:
    inner = Flaky(10)
    judge = RetryLayer(inner, attempts=2, initial_s=0.001, max_wait_s=0.01, jitter_s=0.0)
    with pytest.raises(JudgeError) as info:
        run(judge.generate(JudgeCall("questions", "p", (), {})))
    assert not isinstance(info.value, TransientJudgeError)
    assert "gave up after 2 attempts" in str(info.value) and inner.calls == 2


def test_final_errors_are_not_retried() -> None:
    class Broken(Flaky):
        async def generate(self, call: JudgeCall) -> JudgeReply:
            self.calls += 1
            raise JudgeError("blocked", reason="safety")

    inner = Broken(0)
    with pytest.raises(JudgeError, match="blocked"):
        run(
            RetryLayer(inner, attempts=5, initial_s=0.001).generate(
                JudgeCall("questions", "p", (), {})
            )
        )
    assert inner.calls == 1


class Slow:
    spec = "slow"
    model = "slow"

    def __init__(self) -> None:
        self.params: dict = {}

    async def generate(self, call: JudgeCall) -> JudgeReply:
        await asyncio.sleep(0.01)
        return JudgeReply("{}", Usage(calls=1, input_tokens=10))


def test_concurrency_limit_is_global() -> None:
    judge = LimitLayer(Slow(), concurrency=3)

    async def many() -> None:
        await asyncio.gather(
            *(judge.generate(JudgeCall("verify", str(i), (), {})) for i in range(20))
        )

    run(many())
    run(many())  # a second event loop works too
    assert judge.peak_in_flight == 3


def test_requests_per_minute_limit_spaces_calls() -> None:
    judge = LimitLayer(Slow(), concurrency=10, rpm=600)  # 10 per second, burst of 10

    async def many() -> float:
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.gather(
            *(judge.generate(JudgeCall("verify", str(i), (), {})) for i in range(15))
        )
        return loop.time() - start

    assert run(many()) >= 0.4


def test_accounting_prices_and_per_item_totals(tmp_path: Path) -> None:
    class Priced(Slow):
        model = "gemini-2.5-flash-001"

        async def generate(self, call: JudgeCall) -> JudgeReply:
            return JudgeReply(
                "{}",
                Usage(
                    calls=1, input_tokens=1_000_000, output_tokens=100_000, thinking_tokens=200_000
                ),
            )

    prices = tmp_path / "prices.yaml"
    prices.write_text("gemini-2.5-flash: {input: 1.0, output: 10.0, thinking: 5.0}\n")
    account = Account()
    judge = AccountingLayer(Priced(), account, load_prices(prices), Scrubber([]))
    reply = run(judge.generate(JudgeCall("verify", "p", (), {}, item_id="x")))
    assert reply.usage.cost_usd == pytest.approx(1.0 + 1.0 + 1.0)
    run(judge.generate(JudgeCall("verify", "p", (), {}, item_id="y")))
    assert account.total.calls == 2 and account.per_item["x"].input_tokens == 1_000_000
    assert account.summary()["cost_usd"] == pytest.approx(6.0)


def test_bad_price_file_says_which_model() -> None:
    with pytest.raises(ValueError, match="gpt-x"):
        load_prices({"gpt-x": {"input": -1, "output": 1}})


def test_build_judge_offline_and_bad_specs(tmp_path: Path) -> None:
    judge = build_judge(None, cache_dir=tmp_path)
    answers, _ = run(ask_questions(judge, [tiny_png()], QS))
    assert answers["q1"].result is None and "need a model judge" in answers["q1"].error
    with pytest.raises(ValueError, match="unknown judge spec"):
        make_judge("claude:x")


def test_missing_answer_is_reasked_alone_then_error() -> None:
    judge = ScriptedJudge({"q1": True})  # never answers q2
    answers, usage = run(ask_questions(judge, [tiny_png()], QS))
    assert answers["q1"].result is True
    assert answers["q2"].result is None and "no usable answer for q2" in answers["q2"].error
    assert [tuple(q.id for q in c.questions) for c in judge.calls] == [("q1", "q2"), ("q2",)]
    assert usage.calls == 2


def test_unknown_backend_option_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"unknown judge option.*temprature"):
        make_judge("openai:m@http://127.0.0.1:9/v1", temprature=0)


def test_wrap_judge_stacks_cache_and_accounting(tmp_path: Path) -> None:
    from groundeval.judges import wrap_judge

    backend = scripted()
    judge = wrap_judge(backend, cache_dir=tmp_path, concurrency=2)
    for _ in range(2):
        run(ask_questions(judge, [tiny_png()], QS, item_id="a"))
    assert len(backend.calls) == 1
    assert judge.account.total.calls == 1 and judge.account.total.cached_calls == 1
    assert judge.spec == "scripted" and judge.calls is backend.calls  # attributes pass through


def test_recorded_errors_replay_as_the_same_errors(tmp_path: Path) -> None:
    cassette = tmp_path / "calls.jsonl"

    def script(call: JudgeCall) -> str:
        if call.item_id == "bad":
            raise JudgeError("gemini stopped the reply: finish_reason=SAFETY", reason="safety")
        return '{"answers": [{"id": "q1", "result": true, "reason": "ok"}]}'

    recorder = RecordingLayer(ScriptedJudge(on_call=script), CassetteWriter(cassette), Scrubber([]))
    qs = QS[:1]
    live = {
        i: run(ask_questions(recorder, [tiny_png()], qs, item_id=i, prompt=i))[0]["q1"]
        for i in ("good", "bad")
    }
    replay = ReplayJudge(cassette)
    again = {
        i: run(ask_questions(replay, [tiny_png()], qs, item_id=i, prompt=i))[0]["q1"]
        for i in ("good", "bad")
    }
    assert again == live
    assert again["bad"].result is None and "SAFETY" in again["bad"].error
    # a later success for the same call supersedes the recorded error
    writer = CassetteWriter(cassette)
    entry = json.loads(cassette.read_text().split("\n")[:-1][1])
    assert "error" in entry
    writer.write({**{k: v for k, v in entry.items() if k != "error"}, "text": "{}"})
    assert "error" not in ReplayJudge(cassette)._by_key[entry["key"]]
