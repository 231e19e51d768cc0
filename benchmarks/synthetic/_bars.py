"""Bar charts with value labels drawn as text (so OCR can read them)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, gate, hard, verdict, wrong_int
from groundeval.programs import GroundSpec, Program

FONT = cv2.FONT_HERSHEY_SIMPLEX
BAR_COLOURS: dict[str, tuple[int, int, int]] = {
    "blue": (180, 110, 40),
    "orange": (40, 130, 240),
    "green": (70, 160, 60),
    "purple": (150, 70, 120),
}
TITLES = ("Sales by quarter", "Units sold", "Revenue per quarter", "Orders")
BASE_Y = 410
LEFT, RIGHT = 90, 610
PX_PER_UNIT = 3.0


def _text(
    img: np.ndarray,
    text: str,
    centre_x: float,
    baseline_y: float,
    scale: float,
    colour: tuple[int, int, int] = (20, 20, 20),
    thickness: int = 2,
) -> list[float]:
    """Draw text centred on ``centre_x``; return its box."""
    (tw, th), base = cv2.getTextSize(text, FONT, scale, thickness)
    x = round(centre_x - tw / 2)
    y = round(baseline_y)
    cv2.putText(img, text, (x, y), FONT, scale, colour, thickness, cv2.LINE_AA)
    return [float(x), float(y - th), float(x + tw), float(y + base)]


def program_for(
    scene_id: str,
    difficulty: str,
    colour: str,
    title: str,
    n: int,
    tol: float,
    claims: list[tuple[str, int]],
) -> Program:
    """Is bar Qk labelled v: ``claims`` are (label, claimed value)."""
    # The prompt names n bars, so at least a title, n labels and n values must be read:
    # a line OCR misses is then "missing" (retry at 2x, else withheld), not a silent fail.
    spec = GroundSpec(
        helper="text",
        target="every text line",
        proposer="ocr",
        budget=2,
        min_count=2 * n + 1,
        fields={
            "text": {"type": "string", "minLength": 1},
            "confidence": {"type": "number", "minimum": 0.8, "maximum": 1},
        },
    )
    hards = [
        hard(
            f"h{qn}",
            f"Is bar {label} labelled {claim}?",
            f"any(v.text == '{claim}' and abs(v.cx - q.cx) < {tol} and v.cy < q.cy "
            f"for v in elements for q in elements if q.text == '{label}')",
            uses="g1",
        )
        for qn, (label, claim) in enumerate(claims, start=1)
    ]
    said = ", ".join(f"{label} = {claim}" for label, claim in claims)
    return Program(
        id=scene_id,
        prompt=f"A {colour} bar chart of {n} quarters (Q1 to Q{n}) titled '{title}', "
        f"each bar labelled with its value ({said}).",
        tags={"scene": "bars", "difficulty": difficulty, "axis": "text"},
        gates=[
            gate(
                "g1",
                "Are the bars labelled Q1, Q2, ...?",
                spec,
                "any(e.text == 'Q1' for e in elements)",
            )
        ],
        hard=hards,
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """A labelled bar chart; programs ask whether a named bar carries a given value."""
    w, h = fx.SIZE_WH
    img = np.full((h, w, 3), 255, np.uint8)
    n = int(rng.integers(3, 7))
    values = [int(v) for v in rng.integers(10, 100, n)]
    colour_name = str(rng.choice(list(BAR_COLOURS)))
    colour = BAR_COLOURS[colour_name]
    title = str(rng.choice(TITLES))
    slot = (RIGHT - LEFT) / n
    touching = difficulty == "hard" and rng.random() < 0.5
    bar_w = slot if touching else slot * 0.6
    if difficulty == "hard":
        for v in range(20, 100, 20):
            y = int(BASE_Y - v * PX_PER_UNIT)
            cv2.line(img, (LEFT, y), (RIGHT, y), (215, 215, 215), 1)
            _text(img, str(v), LEFT - 28, y + 5, 0.45, (90, 90, 90), 1)
    _text(img, title, w / 2, 40, 0.8)
    bars: list[dict[str, Any]] = []
    for i, value in enumerate(values):
        cx = LEFT + slot * (i + 0.5)
        top = BASE_Y - value * PX_PER_UNIT
        x1, x2 = cx - bar_w / 2, cx + bar_w / 2
        cv2.rectangle(img, (round(x1), round(top)), (round(x2) - 1, BASE_Y), colour, -1)
        if touching:
            cv2.rectangle(
                img,
                (round(x1), round(top)),
                (round(x2) - 1, BASE_Y),
                tuple(int(c * 0.6) for c in colour),
                1,
            )
        value_box = _text(img, str(value), cx, top - 8, 0.75)
        label = f"Q{i + 1}"
        label_box = _text(img, label, cx, BASE_Y + 28, 0.75)
        bars.append(
            {
                "label": label,
                "value": value,
                "xyxy_px": [x1, top, x2, float(BASE_Y)],
                "value_box_px": value_box,
                "label_box_px": label_box,
            }
        )
    cv2.line(img, (LEFT - 5, BASE_Y), (RIGHT, BASE_Y), (40, 40, 40), 2)
    cv2.line(img, (LEFT - 5, BASE_Y), (LEFT - 5, 70), (40, 40, 40), 2)
    occluders = []
    if difficulty == "hard" and rng.random() < 0.6:
        i = int(rng.integers(0, n))
        b = bars[i]
        bx = int(b["xyxy_px"][0] + bar_w * rng.uniform(0.2, 0.5))
        by = int(BASE_Y - rng.uniform(15, 30))
        if b["xyxy_px"][1] < by - 20:
            patch = fx.random_colour(rng)
            cv2.rectangle(img, (bx, by - 14), (bx + 24, by), patch, -1)
            occluders.append({"xyxy_px": [bx, by - 14, bx + 24, by]})
    matrix = None
    if difficulty != "clean":
        matrix = fx.rotation_matrix(float(rng.uniform(-2.0, 2.0)))
        img = fx.rotate(img, matrix)
        for b in bars:
            for key in ("xyxy_px", "value_box_px", "label_box_px"):
                x1, y1, x2, y2 = b[key]
                corners = fx.move_points([[x1, y1], [x2, y1], [x2, y2], [x1, y2]], matrix)
                b[key] = fx.xyxy_of(corners)
    else:
        for b in bars:
            for key in ("xyxy_px", "value_box_px", "label_box_px"):
                b[key] = [round(float(v), 2) for v in b[key]]
    img = fx.degrade(img, difficulty, rng)

    tol = round(slot * 0.45, 1)
    picks = [int(i) for i in rng.choice(n, size=2, replace=False)]
    claims = []
    answers = {f"{scene_id}/g1": "pass"}
    for qn, i in enumerate(picks, start=1):
        label, value = bars[i]["label"], bars[i]["value"]
        claim = value if rng.random() < 0.6 else wrong_int(rng, value, 10, 99, 5)
        claims.append((label, claim))
        answers[f"{scene_id}/h{qn}"] = verdict(claim == value)
    program = program_for(scene_id, difficulty, colour_name, title, n, tol, claims)
    truth = {
        "title": title,
        "colour": colour_name,
        "bars": bars,
        "touching": touching,
        "occluders": occluders,
        "answers": answers,
    }
    return Scene(scene_id, "bars", difficulty, seed, img, truth, [program])
