"""What every scene generator returns, and small helpers for writing their programs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from groundeval.grounding import encode_png
from groundeval.programs import GroundSpec, NamedCheck, Program, Question

NUMBER_WORDS = (
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
)


@dataclass
class Scene:
    """One generated image with its exact truth and the programs that grade it.

    ``truth`` holds the objects drawn (geometry in pixels of the image) and, under
    ``answers``, the expected outcome (``pass`` / ``fail``) of every question of
    every program, keyed ``"<program id>/<question id>"``.
    """

    id: str
    scene: str
    difficulty: str
    seed: int
    image_bgr: np.ndarray
    truth: dict[str, Any]
    programs: list[Program] = field(default_factory=list)


def gate(qid: str, ask: str, ground: GroundSpec, check: str) -> Question:
    """An easy question decided offline by its own grounding and check."""
    return Question(id=qid, ask=ask, ground=ground, check=check, tags={"track": "easy"})


def hard(
    qid: str,
    ask: str,
    check: str | NamedCheck,
    *,
    ground: GroundSpec | None = None,
    uses: str | None = None,
    weight: float = 1.0,
) -> Question:
    """A grounded hard question: its own grounding or another question's (``uses``)."""
    return Question(
        id=qid,
        ask=ask,
        ground=ground,
        uses=uses,
        check=check,
        weight=weight,
        tags={"track": "hard"},
    )


def verdict(ok: bool) -> str:
    """Truth value of a question as an outcome name."""
    return "pass" if ok else "fail"


def count_word(n: int) -> str:
    """'five' for 5 (prompts read like a person wrote them)."""
    return NUMBER_WORDS[n] if 0 <= n < len(NUMBER_WORDS) else str(n)


def wrong_int(rng: np.random.Generator, true: int, low: int, high: int, spread: int = 2) -> int:
    """An integer near ``true`` but different from it, within [low, high]."""
    options = [v for v in range(true - spread, true + spread + 1) if v != true and low <= v <= high]
    return int(rng.choice(options))


def write_scene_files(
    out: Path, scenes: Iterable[tuple[str, str, int, Scene]], head: dict[str, Any]
) -> dict[str, Any]:
    """Write ``<id>.png`` per scene, then ``programs.jsonl``, ``truth.jsonl`` and ``manifest.json``.

    ``scenes`` yields (kind, difficulty, seed, scene); ``head`` opens the manifest and
    the item list and file names close it. Every style writes this one layout, so
    ``groundeval run`` and the accuracy scripts read any of them unchanged.
    """
    out.mkdir(parents=True, exist_ok=True)
    programs: list[str] = []
    truths: list[str] = []
    items: list[dict[str, Any]] = []
    for kind, level, seed, scene in scenes:
        png = encode_png(scene.image_bgr)
        image = f"{scene.id}.png"
        (out / image).write_bytes(png)
        programs.extend(p.model_dump_json(exclude_defaults=True) for p in scene.programs)
        row = {"id": scene.id, "scene": kind, "difficulty": level, "seed": seed, "image": image}
        truths.append(json.dumps({**row, **scene.truth}, sort_keys=True, default=_json_default))
        items.append({"id": scene.id, "image": image, "sha256": hashlib.sha256(png).hexdigest()})
    (out / "programs.jsonl").write_text("".join(p + "\n" for p in programs), encoding="utf-8")
    (out / "truth.jsonl").write_text("".join(t + "\n" for t in truths), encoding="utf-8")
    manifest = {**head, "items": items, "programs": "programs.jsonl", "truth": "truth.jsonl"}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def style_scene(
    makers: dict[str, Callable[[str, int, np.random.Generator], Scene]],
    scene: str,
    seed: int,
    salt: list[int],
    scene_id: Callable[[str, int], str],
) -> Scene:
    """One scene of a style with its own renderer: the arguments checked, its seeded generator.

    ``salt`` (the style's constant and version) follows the seed and the kind's index in
    ``makers``, so the same arguments always draw the same bytes.
    """
    if scene not in makers:
        raise ValueError(f"unknown scene {scene!r}; known: {', '.join(makers)}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    rng = np.random.default_rng([int(seed), list(makers).index(scene), *salt])
    return makers[scene](scene_id(scene, seed), seed, rng)


def write_style_suite(
    out_dir: Path | str,
    generate: Callable[[str, int], Scene],
    head: dict[str, Any],
    kinds: list[str],
    scenes: Iterable[str] | None,
    n_per_scene: int,
    seed: int,
) -> dict[str, Any]:
    """A renderer's suite: ``n_per_scene`` scenes of each kind in ``scenes`` from ``seed``.

    ``kinds`` are every kind the style draws (``scenes`` defaults to all); ``head`` names
    the style (``style``, ``style_version``, ``difficulties``). Every style with its own
    renderer writes through here, so all share one layout and one check of the arguments.
    """
    names = list(scenes) if scenes is not None else kinds
    unknown = [n for n in names if n not in kinds]
    if unknown:
        raise ValueError(f"unknown scene(s) {', '.join(unknown)}")
    if n_per_scene < 1:
        raise ValueError(f"n_per_scene must be >= 1, got {n_per_scene}")
    level = head["difficulties"][0]
    found = ((n, level, s, generate(n, s)) for n in names for s in range(seed, seed + n_per_scene))
    head = {**head, "scenes": names, "n_per_scene": n_per_scene, "seed": seed}
    return write_scene_files(Path(out_dir), found, head)


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} to truth.jsonl")
