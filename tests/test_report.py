from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from groundeval.judges import JudgeCall, JudgeError, JudgeReply
from groundeval.programs._model import Program
from groundeval.programs._run import run_items
from groundeval.programs._runner import ItemInput
from groundeval.state import Usage

from .conftest import write_image

SCRIPT_REASON = "<script>window.__pwned = 1</script> looks <b>off</b> & odd"
ITEMS = 30


@dataclass
class TableJudge:
    """Answers direct questions from a table; costs tokens like a real backend would."""

    answers: dict[tuple[str, str], tuple[bool | None, str]]
    spec: str = "table:v1"
    model: str = "table"
    params: dict[str, Any] = field(default_factory=dict)

    async def generate(self, call: JudgeCall) -> JudgeReply:
        if call.task != "questions":
            raise JudgeError(f"no script for {call.task}")
        entries = []
        for q in call.questions:
            result, reason = self.answers.get((call.item_id, q.id), (True, "clearly visible"))
            if result is None:
                raise JudgeError("server said 500", reason="http 500")
            entries.append({"id": q.id, "result": result, "reason": reason})
        usage = Usage(calls=1, input_tokens=1000 + 10 * len(call.questions), output_tokens=40,
                      cost_usd=0.0005)
        return JudgeReply(json.dumps({"answers": entries}), usage)


def program(i: int) -> dict[str, Any]:
    boxes = [[4 + 14 * k, 6, 14 + 14 * k, 16, {"pips": (i + k) % 6 + 1}] for k in range(1 + i % 4)]
    params: dict[str, Any] = {"boxes": boxes}
    budget = 3
    if i % 7 == 3:
        params["reject"] = [1]  # rejected every round: withheld after the budget
        budget = 2
    ground = {"helper": "boxes", "proposer": "test.boxes", "verifier": "test.accept",
              "params": params, "budget": budget, "target": "each die"}
    return {
        "id": f"item-{i:03d}",
        "tags": {"axis": "quantity" if i % 2 else "spatial", "scene": ["dice", "coins", "bars"][i % 3]},
        "gates": [{"id": "g1", "ask": "Is there a die?"}],
        "hard": [
            {"id": "h1", "ask": "Are there two dice?", "ground": ground, "check": "count(elements) == 2"},
            {"id": "h2", "ask": "More than 5 pips?", "uses": "h1",
             "check": "sum(e.pips for e in elements) > 5"},
            {"id": "h3", "ask": "Is the lighting natural?"},
        ],
    }


def answers(variant: int) -> dict[tuple[str, str], tuple[bool | None, str]]:
    table: dict[tuple[str, str], tuple[bool | None, str]] = {}
    for i in range(ITEMS):
        item = f"item-{i:03d}"
        if i % 10 == 9:
            table[(item, "g1")] = (False, "no die in the picture")
        table[(item, "h3")] = (i % 3 != 2, "soft daylight" if i % 3 != 2 else "harsh flash")
        if variant == 2 and i % 4 == 0:
            table[(item, "h3")] = (not table[(item, "h3")][0], "second opinion")
    table[("item-004", "h3")] = (False, SCRIPT_REASON)
    table[("item-011", "h3")] = (None, "")
    return table


def build_runs(tmp: Path, count: int = 2) -> list[Path]:
    """Grade the suite with the real runner: run 1, and a second judge's run 2."""
    images = tmp / "images"
    items = []
    for i in range(ITEMS):
        prog = Program.model_validate(program(i))
        path = write_image(images / f"{prog.id}.png", 64, 24, colour=(40 + 5 * i, 120, 40))
        items.append(ItemInput(prog.id, prog, [path]))
    runs = []
    for variant in range(1, count + 1):
        out = tmp / f"run{variant}"
        judge = TableJudge(answers(variant), spec=f"table:v{variant}")
        asyncio.run(run_items(items, judge=judge, out=out, concurrency=4))
        runs.append(out)
    return runs
