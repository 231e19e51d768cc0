"""Run folders graded by the real runner for the statistics, compare and study tests.

A "model" is a set of images: each image holds k bright stripes; the test proposer
boxes each stripe, so the grounded question (``count(elements) == 2``) passes or
fails from the pixels, and a table judge answers the direct question. Runs of
different models share programs, so they pair by item id.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from groundeval.grounding._protocol import Proposal, ProposeRequest, register_proposer
from groundeval.judges import JudgeCall, JudgeError, JudgeReply
from groundeval.programs._model import Program
from groundeval.programs._run import run_items
from groundeval.programs._runner import ItemInput
from groundeval.state import Element, Usage

AXES = ("quantity", "spatial", "text")


@register_proposer("stats.stripes")
class Stripes:
    """One box per bright vertical stripe; a stripe 'blurred' (grey) is proposed and rejected."""

    name = "stats.stripes"

    async def propose(self, request: ProposeRequest) -> Proposal:
        columns = request.image_bgr.mean(axis=(0, 2))
        bright = columns > 200
        elements: list[Element] = []
        start = None
        for x, on in enumerate([*bright.tolist(), False]):
            if on and start is None:
                start = x
            elif not on and start is not None:
                box = [float(start), 0.0, float(x), float(request.image_bgr.shape[0])]
                elements.append(Element(id=len(elements) + 1, kind="box", xyxy_px=box))
                start = None
        return Proposal(elements)


@dataclass
class Judge:
    """Answers the direct question from a table (default yes); None raises a judge error."""

    answers: dict[str, bool | None]
    spec: str = "table:stats"
    model: str = "table"
    params: dict[str, Any] = field(default_factory=dict)

    async def generate(self, call: JudgeCall) -> JudgeReply:
        entries = []
        for q in call.questions:
            value = self.answers.get(call.item_id, True)
            if value is None:
                raise JudgeError("server said 500", reason="http 500")
            entries.append({"id": q.id, "result": value, "reason": "<b>seen</b> & noted"})
        return JudgeReply(json.dumps({"answers": entries}), Usage(calls=1, input_tokens=100))


def program(i: int) -> dict[str, Any]:
    """Item i: a grounded count question and a direct question, tagged with an axis."""
    return {
        "id": f"item-{i:03d}",
        "prompt": "two bright stripes",
        "tags": {"axis": AXES[i % len(AXES)]},
        "hard": [
            {
                "id": "h1",
                "ask": "Are there exactly two stripes?",
                "ground": {
                    "helper": "boxes",
                    "proposer": "stats.stripes",
                    "verifier": "test.accept",
                    "target": "each stripe",
                },
                "check": "count(elements) == 2",
            },
            {"id": "h2", "ask": "Is the background <dark>?"},
        ],
    }


def stripes_image(path: Path, k: int) -> Path:
    """A 64x24 dark image with k bright stripes."""
    pixels = np.full((24, 64, 3), 30, dtype=np.uint8)
    for s in range(k):
        pixels[:, 4 + 10 * s : 8 + 10 * s] = 250
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path)
    return path


def grade(
    out: Path,
    counts: list[int],
    answers: dict[str, bool | None] | None = None,
    *,
    programs: list[dict[str, Any]] | None = None,
    config: dict[str, Any] | None = None,
) -> Path:
    """Grade items whose images hold ``counts[i]`` stripes into the run folder ``out``."""
    images = out.parent / f"{out.name}-images"
    items = []
    rows = programs or [program(i) for i in range(len(counts))]
    for i, (row, k) in enumerate(zip(rows, counts, strict=True)):
        prog = Program.model_validate(row)
        items.append(ItemInput(prog.id, prog, [stripes_image(images / f"{i:03d}.png", k)]))
    asyncio.run(run_items(items, judge=Judge(answers or {}), out=out, config=config, concurrency=4))
    return out
