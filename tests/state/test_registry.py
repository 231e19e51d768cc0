"""The one Registry: names set once, duplicates refused naming both, entry points found."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groundeval.grounding import get_proposer, proposer_names, register_proposer
from groundeval.grounding._protocol import _PROPOSERS
from groundeval.judges import JudgeCall, JudgeReply, make_judge, register_judge
from groundeval.judges._registry import JUDGES
from groundeval.programs import Program, register_protocol
from groundeval.programs._catalogue import build_catalogue
from groundeval.programs._protocols import PROTOCOLS
from groundeval.programs.scoring import GroundedScoring, get_protocol
from groundeval.state import Registry, RegistryError, UnknownNameError, Usage


@pytest.fixture
def things() -> Registry[Any]:
    return Registry("thing", group="groundeval.test_things")


def _dist(
    site: Path, name: str, group: str, points: dict[str, str], modules: dict[str, str]
) -> None:
    """An installed distribution, as pip leaves it: a dist-info folder beside its modules."""
    info = site / f"{name}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    lines = "\n".join(f"{k} = {v}" for k, v in points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}\n")
    for module, text in modules.items():
        (site / f"{module}.py").write_text(textwrap.dedent(text))


def test_decorator_sets_the_name_once(things: Registry[Any]) -> None:
    @things.register("a.one")
    class One:
        """The first thing."""

    class Base:
        name = "base"

    @things.register("a.two")
    class Two(Base):  # an inherited name is not the class's own: it is replaced
        pass

    assert (One.name, Two.name, Base.name) == ("a.one", "a.two", "base")  # type: ignore[attr-defined]
    assert things.names() == ["a.one", "a.two"] and things.lookup("a.one") is One
    assert things.describe()[0] == {
        "name": "a.one",
        "about": "The first thing.",
        "origin": f"{__name__}:test_decorator_sets_the_name_once.<locals>.One",
    }
    with pytest.raises(RegistryError, match=r"sets name = 'b'; the registered name is set by"):

        @things.register("a.three")
        class Three:
            name = "b"

    assert "a.three" not in things


def test_duplicate_is_refused_naming_both_origins(things: Registry[Any]) -> None:
    def first() -> None: ...

    def second() -> None: ...

    things.register("dup")(first)
    things.register("dup")(first)  # the same object again is no duplicate
    with pytest.raises(RegistryError) as info:
        things.register("dup")(second)
    message = str(info.value)
    assert f"{__name__}:test_duplicate_is_refused_naming_both_origins.<locals>.first" in message
    assert f"{__name__}:test_duplicate_is_refused_naming_both_origins.<locals>.second" in message
    assert str(Path(__file__)) in message  # the file of each definition
    assert things.lookup("dup") is first
    with pytest.raises(RegistryError, match="must be letters, digits"):
        things.register("has space")
    with pytest.raises(RegistryError, match="must be letters, digits"):
        things.register("mine:x")  # ':' separates a judge prefix from its argument


def test_unknown_name_lists_the_known_ones(things: Registry[Any]) -> None:
    things.register("x.known")(len)
    with pytest.raises(KeyError) as info:
        things.lookup("x.unknwon")
    assert isinstance(info.value, UnknownNameError)
    assert str(info.value).startswith("unknown thing 'x.unknwon'; known: x.known")


def test_entry_points_are_discovered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, things: Registry[Any]
) -> None:
    group = "groundeval.test_things"
    _dist(
        tmp_path, "acme_things", group,
        {"acme.obj": "acme_things_objs:Star", "acme.mod": "acme_things_mod"},
        {
            "acme_things_objs": '''
                class Star:
                    """A star nobody decorated."""
            ''',
            "acme_things_mod": """
                from groundeval.state import Registry
                Registry.registries()["thing"].register("acme.self")(len)
            """,
        },
    )  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    assert things.names() == ["acme.obj", "acme.self"]
    star = things.lookup("acme.obj")
    assert star.name == "acme.obj" and things.origin("acme.obj") == "acme_things_objs:Star"
    for module in ("acme_things_objs", "acme_things_mod"):
        sys.modules.pop(module, None)


def test_a_broken_entry_point_names_its_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = "groundeval.test_broken"
    _dist(tmp_path, "acme_broken", group, {"x": "acme_broken_mod"},
          {"acme_broken_mod": "raise RuntimeError('no licence key')\n"})  # fmt: skip
    monkeypatch.syspath_prepend(str(tmp_path))
    broken: Registry[Any] = Registry("broken thing", group=group)
    with pytest.raises(RegistryError) as info:
        broken.names()
    assert "entry point 'x' = 'acme_broken_mod' of acme_broken" in str(info.value)
    assert "RuntimeError: no licence key" in str(info.value)


@pytest.fixture
def scratch() -> Iterator[list[tuple[Registry[Any], str]]]:
    added: list[tuple[Registry[Any], str]] = []
    yield added
    for registry, name in added:
        if name in registry:
            del registry[name]


def test_moved_registries_keep_their_names_and_refuse_duplicates(
    scratch: list[tuple[Registry[Any], str]],
) -> None:
    assert {"opencv.dice", "judge", "yolo.dice"} <= set(proposer_names())
    assert get_proposer("opencv.dice").name == "opencv.dice"
    with pytest.raises(KeyError, match=r"unknown proposer 'opencv.dize'; known: .*opencv.dice"):
        get_proposer("opencv.dize")
    with pytest.raises(RegistryError, match=r"proposer 'opencv.dice' is already registered by "
                       r"groundeval.grounding.proposers.opencv_dice:DiceProposer"):  # fmt: skip

        @register_proposer("opencv.dice")
        class Mine:
            pass

    with pytest.raises(RegistryError, match="scoring protocol 'grounded' is already registered"):
        register_protocol("grounded")(type("Other", (), {}))
    with pytest.raises(RegistryError, match="judge backend 'gemini' is already registered"):
        register_judge("gemini")(lambda rest: None)
    assert isinstance(get_protocol("grounded"), GroundedScoring)
    assert "opencv.dice" in [e["name"] for e in build_catalogue()["proposers"]]
    scratch.append((_PROPOSERS, "test.reg.catalogued"))

    @register_proposer("test.reg.catalogued")
    class Catalogued:
        """Shown to the drafting judge with no prompt edited."""

    entry = next(e for e in build_catalogue()["proposers"] if e["name"] == "test.reg.catalogued")
    assert entry["about"] == "Shown to the drafting judge with no prompt edited."


def test_program_scoring_accepts_a_registered_protocol(
    scratch: list[tuple[Registry[Any], str]],
) -> None:
    program = {"id": "p", "scoring": "test.reg.share", "hard": [{"id": "q", "ask": "ok?"}]}
    with pytest.raises(ValueError, match=r"unknown scoring protocol 'test.reg.share'; known: "
                       r"checklist, dependency, grounded, rubric"):  # fmt: skip
        Program.model_validate(program)
    scratch.append((PROTOCOLS, "test.reg.share"))

    @register_protocol("test.reg.share")
    class Share(GroundedScoring):
        pass

    assert Program.model_validate(program).scoring == "test.reg.share"
    assert get_protocol("test.reg.share").name == "test.reg.share"


def test_register_judge_builds_through_make_judge(
    scratch: list[tuple[Registry[Any], str]],
) -> None:
    scratch += [(JUDGES, "test-echo"), (JUDGES, "test-broken")]

    @register_judge("test-echo")
    class Echo:
        def __init__(self, rest: str, *, temperature: float = 0.0) -> None:
            self.spec, self.model, self.params = f"test-echo:{rest}", rest, {"t": temperature}

        async def generate(self, call: JudgeCall) -> JudgeReply:
            return JudgeReply(json.dumps({"echo": call.prompt}), Usage(calls=1))

    judge = make_judge("test-echo:m1", temperature=0.5)
    assert (judge.spec, judge.model, judge.params) == ("test-echo:m1", "m1", {"t": 0.5})
    call = JudgeCall(task="questions", prompt="hi", images=(), response_schema={})
    assert json.loads(asyncio.run(judge.generate(call)).text) == {"echo": "hi"}
    with pytest.raises(ValueError, match=r"judge 'test-echo' \(.*Echo\) does not take these "
                       r"options: .*'seed'"):  # fmt: skip
        make_judge("test-echo:m1", seed=3)
    with pytest.raises(ValueError, match=r"unknown judge spec 'nope:x'; expected .*test-echo:<"):
        make_judge("nope:x")
    register_judge("test-broken")(lambda rest: object())
    with pytest.raises(ValueError, match="without spec, model, params, generate"):
        make_judge("test-broken:x")
