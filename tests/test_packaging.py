from __future__ import annotations

import tomllib

from .conftest import REPO

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
