from __future__ import annotations

import tomllib
from pathlib import Path

from tests._support.paths import DATA, REPO

ROOTS = ("grounding", "programs", "state", "judges", "benchmarks")


def test_every_package_folder_is_listed_in_pyproject() -> None:
    config = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(config["packages"])
    found = {
        "groundeval." + ".".join(init.parent.relative_to(REPO).parts)
        for root in ROOTS
        for init in (REPO / root).rglob("__init__.py")
    }
    assert found - listed == set(), "add these to [tool.setuptools] packages"
    assert {config["package-dir"][f"groundeval.{r}"] for r in ROOTS} == set(ROOTS)


def test_every_package_is_typed() -> None:
    for root in ROOTS:
        assert (REPO / root / "py.typed").exists()


def test_no_test_reads_outside_the_repository() -> None:
    """A clone with nothing beside it passes its own tests: data lives under data/."""
    here = Path(__file__).resolve().parent
    own = {Path(__file__).resolve(), (here / "_support" / "paths.py").resolve()}
    offenders = [
        f"{path.relative_to(here)}: {needle}"
        for path in sorted(here.rglob("*.py"))
        for needle in ("REPO.parent", "parents[2]", "parents[3]")
        if path.resolve() not in own
        if needle in path.read_text(encoding="utf-8")
    ]
    assert offenders == []
    assert DATA.resolve().is_relative_to(REPO)
    for sub in ("bizgeneval", "dsg", "tifa"):
        assert (REPO / "data" / sub / "LICENSE").is_file()
