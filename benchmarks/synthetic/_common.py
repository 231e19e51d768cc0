"""What every scene generator returns, and small helpers for writing their programs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

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
