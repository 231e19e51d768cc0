"""A dice program shared by the perf scripts that build large fake runs."""

from __future__ import annotations

from groundeval.programs._model import Program

CHECKS = [
    "count(elements) == 5",
    "sum(e.pips for e in elements) == 17",
    "all(e.pips >= 1 for e in elements)",
    "max(e.pips for e in elements) == 6",
]


def program() -> Program:
    ground = {"helper": "boxes", "proposer": "opencv.dice"}
    hard = [{"id": f"d{i}", "ask": f"Direct {i}?"} for i in range(4)]
    hard.append({"id": "c0", "ask": "Five dice?", "ground": ground, "check": CHECKS[0]})
    hard += [
        {"id": f"c{i}", "ask": f"Check {i}?", "uses": "c0", "check": CHECKS[i]} for i in range(1, 4)
    ]
    return Program.model_validate(
        {
            "id": "dice",
            "gates": [{"id": "g0", "ask": "A die?"}, {"id": "g1", "ask": "A table?"}],
            "hard": hard,
        }
    )
