"""The Ray executor on a local in-process Ray instance (2 CPUs, started once for the module)."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

import pytest

from groundeval.judges import build_judge
from groundeval.programs import ItemInput, Program
from groundeval.programs._ray import JudgeRecipe, RayExecutor, WorkerSetupError
from groundeval.programs._run import LocalExecutor, run_items
from groundeval.state._store import RunStore
from tests._support.paths import write_image
from tests._support.ray_fixtures import FakeChatServer

ray = pytest.importorskip("ray", reason="the ray extra is not installed")

IMPORTS = ["tests._support.fixtures", "tests._support.ray_fixtures"]


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    ray.init(
        num_cpus=2, include_dashboard=False, logging_level="warning",
        _node_ip_address="127.0.0.1",
    )  # fmt: skip
    yield
    ray.shutdown()


@pytest.fixture
def server():
    with FakeChatServer() as s:
        yield s


def _ground(proposer: str = "test.boxes", **params: object) -> dict:
    return {"helper": "boxes", "proposer": proposer, "verifier": "test.accept", "params": params}


def _items(folder: Path, marker: Path | None = None) -> list[ItemInput]:
    image = write_image(folder / "img.png", 64, 48)
    boxes = [[2, 2, 10, 10], [20, 2, 30, 10]]
    programs = [
        {"id": "direct", "gates": [{"id": "g1", "ask": "A die?"}],
         "hard": [{"id": "h1", "ask": "Two dice?"}, {"id": "h2n", "ask": "Red?", "weight": 2}]},
        {"id": "gatefail", "gates": [{"id": "g1n", "ask": "A photo?"}],
         "hard": [{"id": "h1", "ask": "Two dice?"}]},
        {"id": "grounded", "hard": [
            {"id": "h1", "ask": "Two dice?", "check": "count(elements) == 2",
             "ground": _ground(boxes=boxes)},
            {"id": "h2", "ask": "Bright?"}]},
        {"id": "withheld", "hard": [
            {"id": "h1", "ask": "One die?", "check": "count(elements) == 1",
             "ground": {**_ground(boxes=[[1, 1, 9, 9]], reject=[1]), "budget": 2}}]},
        {"id": "deps", "hard": [{"id": "h1n", "ask": "Five dice?"},
                                {"id": "h2", "ask": "Pips 17?", "requires": ["h1n"]}]},
    ]  # fmt: skip
    if marker is not None:
        programs.append({"id": "dies", "hard": [
            {"id": "h1", "ask": "One die?", "check": "count(elements) == 1",
             "ground": _ground("test.die_once", marker=str(marker))}]})  # fmt: skip
    items = [ItemInput(p["id"], Program.model_validate(p), [image]) for p in programs]
    missing = Program.model_validate({"id": "missing", "hard": [{"id": "h1", "ask": "Any?"}]})
    items.append(ItemInput("missing", missing, [folder / "nope.png"]))
    return items


def _run(items, out: Path, spec: str, executor=None, **kw):
    judge = build_judge(spec)
    return asyncio.run(run_items(items, judge=judge, out=out, executor=executor, **kw))


def _ray(**kw) -> RayExecutor:
    return RayExecutor(imports=IMPORTS, **kw)


def _files(run: Path, pattern: str) -> dict[str, bytes]:
    return {p.relative_to(run).as_posix(): p.read_bytes() for p in sorted(run.glob(pattern))}


def test_same_bytes_as_local_and_one_shared_cache(
    tmp_path: Path, server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # relative image paths, as `--images gen/` gives
    items = _items(Path("gen"))
    assert not items[0].images[0].is_absolute()
    spec = f"openai:fake@{server.url}"
    local = _run(items, tmp_path / "local", spec, LocalExecutor(4))
    local_calls = server.calls
    cache = tmp_path / "cache"
    recipe = JudgeRecipe(spec, {"cache_dir": str(cache)})
    remote = _run(items, tmp_path / "ray", spec, _ray(judge=recipe, items_per_task=3))
    assert server.calls == 2 * local_calls  # the ray run asked the judge as often
    for name in ("results.jsonl", "summary.json", "summary.csv", "programs.jsonl"):
        assert (tmp_path / "ray" / name).read_bytes() == (tmp_path / "local" / name).read_bytes()
    assert _files(tmp_path / "ray", "state/*/*.json") == _files(
        tmp_path / "local", "state/*/*.json"
    )
    assert _files(tmp_path / "ray", "evidence/*/*.png") == _files(
        tmp_path / "local", "evidence/*/*.png"
    )
    assert {r.status for r in remote.results} == {"scored", "withheld", "error"}
    assert remote.summary == local.summary and remote.graded == len(items)
    # a second run on the cluster is served entirely by the shared disk cache
    _run(items, tmp_path / "again", spec, _ray(judge=recipe))
    assert server.calls == 2 * local_calls
    again = (tmp_path / "again" / "results.jsonl").read_bytes()
    assert again == (tmp_path / "local" / "results.jsonl").read_bytes()
    usage = json.loads((tmp_path / "again" / "summary.json").read_text())["usage"]
    assert usage["calls"] == 0 and usage["cached_calls"] == local_calls


def test_worker_killed_mid_item_is_retried_once_and_appended_once(
    tmp_path: Path, server: FakeChatServer
) -> None:
    marker = tmp_path / "died.txt"
    items = _items(tmp_path, marker)
    store = RunStore(tmp_path / "run")
    store.start({"judge": "x"}, "", resume=False)
    factory = functools.partial(build_judge, f"openai:fake@{server.url}")  # any picklable factory
    executor = _ray(judge=factory, max_retries=2)
    appended: list[str] = []

    def on_result(result, usage) -> None:
        appended.append(result.item_id)
        store.append(result, usage)

    judge = build_judge(f"openai:fake@{server.url}")
    asyncio.run(executor.grade(items, judge=judge, store=store, on_result=on_result))
    assert marker.exists()  # the first attempt really killed its worker
    assert sorted(appended) == sorted(i.item_id for i in items)  # each item exactly once
    lines = store.results_path.read_text().split("\n")[:-1]
    assert len(lines) == len(items)
    dies = next(r for r in store.results() if r.item_id == "dies")
    assert dies.status == "scored" and dies.scores["strict"] == 1.0
    assert store.read_state(dies.decisions[0].state_file).status == "grounded"


def test_dead_workers_beyond_retries_leave_an_error_that_resume_redoes(
    tmp_path: Path, server: FakeChatServer
) -> None:
    marker = tmp_path / "died.txt"
    items = _items(tmp_path, marker)
    spec = f"openai:fake@{server.url}"
    out = tmp_path / "run"
    first = _run(items, out, spec, _ray(judge=JudgeRecipe(spec), max_retries=0))
    dies = next(r for r in first.results if r.item_id == "dies")
    assert dies.status == "error" and "ray task failed" in (dies.error or "")
    before = server.calls
    resumed = _run(items, out, spec, _ray(judge=JudgeRecipe(spec)), resume=True)
    assert resumed.graded == 2 and resumed.skipped == len(items) - 2  # dies + missing image
    assert server.calls == before  # nothing finished was asked again
    final = {r.item_id: r for r in resumed.results}
    assert final["dies"].status == "scored"
    assert len(out.joinpath("results.jsonl").read_text().split("\n")[:-1]) == len(items)


def test_rate_limit_holds_across_workers(tmp_path: Path, server: FakeChatServer) -> None:
    image = write_image(tmp_path / "img.png")
    rpm, count = 600.0, 30  # 10 calls/s, a burst of at most one second's worth (10)
    items = [
        ItemInput(f"i{n:02d}", Program.model_validate(
            {"id": f"p{n:02d}", "gates": [{"id": "g1", "ask": f"Question {n}?"}]}), [image])
        for n in range(count)
    ]  # fmt: skip
    spec = f"openai:fake@{server.url}"
    executor = _ray(judge=JudgeRecipe(spec, {"rpm": rpm}), max_in_flight=8)
    _run(items, tmp_path / "run", spec, executor)
    times = sorted(server.times)
    assert len(times) == count
    rate, burst = rpm / 60, rpm / 60
    # a leaky bucket lets through at most burst + rate * T calls in any window of T seconds
    assert times[-1] - times[0] >= (count - burst) / rate * 0.9
    for i, start in enumerate(times):
        in_window = sum(1 for t in times[i:] if t - start <= 1.0)
        assert in_window <= burst + rate * 1.0 + 1
    assert executor.budget_stats is not None and executor.budget_stats["grants"] == count


def test_judge_that_cannot_be_rebuilt_and_bad_imports_are_clear_errors(tmp_path: Path) -> None:
    from groundeval.judges import ScriptedJudge

    items = _items(tmp_path)[:1]
    with pytest.raises(ValueError, match="cannot rebuild judge 'scripted'"):
        asyncio.run(run_items(items, judge=ScriptedJudge({}), out=tmp_path / "a",
                              executor=RayExecutor()))  # fmt: skip
    bad = RayExecutor(imports=["no_such_module_xyz"])
    with pytest.raises(WorkerSetupError, match="could not import 'no_such_module_xyz'"):
        _run(items, tmp_path / "b", "offline", bad)
    with pytest.raises(ValueError, match="cassette"):
        JudgeRecipe("offline", {"record": "x.jsonl"})


def test_tasks_reserve_gpus_when_a_proposer_asks(tmp_path: Path) -> None:
    from groundeval.grounding._protocol import register_proposer

    @register_proposer("test.gpu_model")
    class GpuModel:
        name = "test.gpu_model"
        num_gpus = 0.5

    items = _items(tmp_path)
    grounded = next(i for i in items if i.item_id == "grounded")
    direct = next(i for i in items if i.item_id == "direct")
    assert RayExecutor()._resources([direct]) == {"num_cpus": 1.0, "num_gpus": 0.0}
    mapped = RayExecutor(num_cpus=2, proposer_gpus={"test.boxes": 1})
    assert mapped._resources([direct, grounded]) == {"num_cpus": 2, "num_gpus": 1.0}
    asks = Program.model_validate({"id": "gpu", "hard": [
        {"id": "h1", "ask": "Any?", "check": "count(elements) >= 0",
         "ground": {"helper": "boxes", "proposer": "test.gpu_model"}}]})  # fmt: skip
    item = ItemInput("gpu", asks, grounded.images)
    assert RayExecutor()._resources([item])["num_gpus"] == 0.5
