"""A dice program shared by the perf scripts that build large fake runs."""

from __future__ import annotations

from groundeval.programs._checks import run_check
from groundeval.programs._model import Program
from groundeval.state import Decision, Element, Provenance, Round, StateFile

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


def dice_elements(i: int) -> list[Element]:
    """Five accepted die boxes whose pips depend on the item number."""
    return [
        Element(
            id=k + 1,
            kind="box",
            xyxy_px=[10.0 * k, 5, 10.0 * k + 8, 13],
            fields={"pips": (i + k) % 6 + 1},
            verdict="accepted",
        )
        for k in range(5)
    ]


def dice_state(item: str, elements: list[Element], rounds: list[Round] | None = None) -> StateFile:
    """The grounding state of question c0 (the one every check reads)."""
    return StateFile(
        item_id=item,
        question_id="c0",
        image_sha256="0" * 64,
        image_size_wh=[160, 96],
        helper="boxes",
        elements=elements,
        rounds=rounds or [],
        status="grounded",
        provenance=Provenance(toolkit_version="perf"),
    )


def dice_decisions(i: int, prog: Program, state: StateFile, state_file: str) -> list[Decision]:
    """2 judge gates, 4 judge hard questions (some failing), 4 checks over ``state``."""
    decisions = [
        Decision(
            question_id=g, kind="gate", outcome="pass", score=1.0, source="judge", reason="visible"
        )
        for g in ("g0", "g1")
    ]
    decisions += [
        Decision(
            question_id=f"d{k}",
            kind="hard",
            outcome="pass" if (i + k) % 3 else "fail",
            score=1.0 if (i + k) % 3 else 0.0,
            source="judge",
            reason="the judge explains itself in a sentence or two",
        )
        for k in range(4)
    ]
    for k, q in enumerate(prog.hard[4:]):
        trace = run_check(CHECKS[k], state)
        decisions.append(
            Decision(
                question_id=q.id,
                kind="hard",
                score=trace.score,
                check=trace,
                outcome="pass" if trace.score >= 1 else "fail",
                source="check",
                reason=trace.trace,
                state_file=state_file,
            )
        )
    return decisions
