"""The packages import each other in one direction only, through public names.

Layers, lowest first: state <- judges <- grounding <- programs <- benchmarks. A
module may import its own layer or a lower one. The report, the command lines and
the schema publisher sit on top and may import anything. Across packages, a
module imports the other package's public names (its ``__init__``), never its
private modules (``groundeval.X._y`` from outside ``X``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("state", "judges", "grounding", "programs", "benchmarks")
RANK = {name: i for i, name in enumerate(LAYERS)}

TOP = (
    "state/report/",  # the HTML report reads runs, programs and benchmark tables
    "state/_schemas.py",  # publishes the JSON Schemas of every layer's records
    "programs/cli.py",
    "programs/_cli_extra.py",
    "benchmarks/cli.py",
    "grounding/_command.py",  # `groundeval ground`
    "grounding/models/train_dice.py",  # `python -m` script: trains on synthetic scenes
)
"""Modules above every layer: they may import any package."""

PRIVATE_ALLOWED: set[tuple[str, str]] = set()
"""Known reach-ins into another package's private module: none left, keep it that way."""


@dataclass(frozen=True)
class Import:
    """One ``groundeval`` import found in a module."""

    path: str
    line: int
    target: str


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(["groundeval", *parts])


def _imports(path: Path) -> list[Import]:
    """Every absolute or relative import of a ``groundeval`` module (also inside functions)."""
    rel = path.relative_to(ROOT).as_posix()
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package.pop()
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package[: len(package) - node.level + 1], *filter(None, [base])])
            # ``from groundeval.x import _y`` imports the private module ``_y``
            targets = [base] + [
                f"{base}.{a.name}"
                for a in node.names
                if a.name.startswith("_") and not a.name.startswith("__")
            ]
        else:
            continue
        found += [Import(rel, node.lineno, t) for t in targets if t.startswith("groundeval.")]
    return found


def _all_imports() -> list[Import]:
    files = [p for layer in LAYERS for p in sorted((ROOT / layer).rglob("*.py"))]
    return [imp for path in files for imp in _imports(path)]


def _is_top(path: str) -> bool:
    return any(path == top or (top.endswith("/") and path.startswith(top)) for top in TOP)


def _upward(imports: list[Import]) -> list[str]:
    bad = []
    for imp in imports:
        own, other = imp.path.split("/")[0], imp.target.split(".")[1]
        if other in RANK and RANK[other] > RANK[own] and not _is_top(imp.path):
            bad.append(f"{imp.path}:{imp.line} imports {imp.target} (layer {other} > {own})")
    return bad


def _private_reach_ins(imports: list[Import]) -> set[tuple[str, str]]:
    found = set()
    for imp in imports:
        own, parts = imp.path.split("/")[0], imp.target.split(".")
        inside = parts[2:]
        if parts[1] != own and any(p.startswith("_") and not p.startswith("__") for p in inside):
            found.add((imp.path, imp.target))
    return found


def test_no_import_goes_up_a_layer() -> None:
    bad = _upward(_all_imports())
    assert not bad, "imports against the layer order:\n" + "\n".join(bad)


def test_no_new_reach_into_another_package_private_module() -> None:
    found = _private_reach_ins(_all_imports())
    new = sorted(found - PRIVATE_ALLOWED)
    assert not new, "use the package's public names instead:\n" + "\n".join(map(str, new))
    gone = sorted(PRIVATE_ALLOWED - found)
    assert not gone, "fixed, so remove from PRIVATE_ALLOWED:\n" + "\n".join(map(str, gone))


def test_the_checker_sees_violations() -> None:
    """The rules are not vacuous: an upward and a private import are both caught."""
    imports = [
        Import("state/_store.py", 1, "groundeval.programs"),
        Import("judges/_x.py", 2, "groundeval.grounding._loop"),
        Import("programs/cli.py", 3, "groundeval.benchmarks"),
    ]
    assert _upward(imports) == [
        "state/_store.py:1 imports groundeval.programs (layer programs > state)",
        "judges/_x.py:2 imports groundeval.grounding._loop (layer grounding > judges)",
    ]
    assert _private_reach_ins(imports) == {("judges/_x.py", "groundeval.grounding._loop")}


def test_relative_imports_are_resolved() -> None:
    module = ROOT / "grounding" / "verifiers" / "offline.py"
    targets = {imp.target for imp in _imports(module)}
    assert "groundeval.grounding._geometry" in targets


@pytest.mark.parametrize("layer", [*LAYERS, "programs.cli"])
def test_each_package_imports_first_in_a_fresh_interpreter(layer: str) -> None:
    """Importing a package before any other works (no hidden cycle) and its __all__ is real."""
    code = (
        f"import groundeval.{layer} as m\n"
        "missing = [n for n in getattr(m, '__all__', []) if not hasattr(m, n)]\n"
        "assert not missing, missing\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]


def test_shared_specs_live_in_state() -> None:
    import groundeval.grounding as grounding
    import groundeval.programs as programs
    import groundeval.state as state

    assert programs.GroundSpec is state.GroundSpec
    assert grounding.GroundingTarget is state.GroundingTarget
    assert state.GroundSpec.__module__ == "groundeval.state._specs"
