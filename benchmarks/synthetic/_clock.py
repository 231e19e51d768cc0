"""Analogue clocks with an hour hand and a minute hand in two colours, and the time as truth.

Three scenes share the drawing: ``clock`` (symbolic: the prompt names a time),
``clock_world`` (world knowledge: the prompt names an event whose time a grader
must know; the fact is hidden in the program's judge instructions) and
``clock_counterfactual`` (a premise shifts the time; the common mistake, drawing
the unshifted time, is what the wrong images show). The hands are found by
colour (``opencv.color_region``) and read by the ``clock_time`` check.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._common import Scene, gate, hard, verdict
from groundeval.programs import GroundSpec, NamedCheck, Program, Question

HOUR_BGR = (170, 70, 20)
MINUTE_BGR = (30, 30, 205)
HAND_RANGES = [
    {"label": "hour", "hsv_lower": [100, 150, 100], "hsv_upper": [125, 255, 255]},
    {"label": "minute", "hsv_lower": [170, 150, 100], "hsv_upper": [8, 255, 255]},
]
"""Hand colours (OpenCV HSV). Red sits at hue 0, and noise pushes some of its pixels to
178-179: the minute range wraps through red (lower hue above the upper), or the hand
breaks into pieces where they lie and the gate withholds."""
TOLERANCE_MIN = 5
WORLD_FACTS = (
    (
        "the Titanic struck the iceberg",
        "11:40",
        "The Titanic struck the iceberg at 11:40 pm ship's time on 14 April 1912.",
    ),
    (
        "Apollo 11's lunar module Eagle landed on the Moon (UTC)",
        "8:17",
        "Eagle landed at 20:17 UTC on 20 July 1969, so a 12-hour dial shows 8:17.",
    ),
    (
        "the Hindenburg caught fire at Lakehurst",
        "7:25",
        "The Hindenburg caught fire at about 7:25 pm on 6 May 1937.",
    ),
)
RATIONALE_HEADER = "Hidden facts for grading (never shown to the image generator): "


def hand_angles(minutes: int) -> tuple[float, float]:
    """Bearings (0 = 12 o'clock, clockwise) of the hour and minute hands at a time."""
    minutes %= 720
    return (minutes / 2.0) % 360, (minutes % 60) * 6.0


def readable(minutes: int) -> bool:
    """The hands are far enough apart (not overlapping, not opposite) to find the centre."""
    h, m = hand_angles(minutes)
    diff = abs(h - m) % 180
    return min(diff, 180 - diff) >= 14


def text_of(minutes: int) -> str:
    """``H:MM`` on a 12-hour dial (12 for the top of the dial)."""
    minutes %= 720
    return f"{minutes // 60 or 12}:{minutes % 60:02d}"


def parse(text: str) -> int:
    """Minutes on a 12-hour dial of an ``H:MM`` text."""
    h, m = text.split(":")
    return (int(h) % 12) * 60 + int(m)


def _random_time(rng: np.random.Generator) -> int:
    while True:
        t = int(rng.integers(0, 144)) * 5
        if readable(t):
            return t


def _point(cx: float, cy: float, bearing: float, dist: float) -> tuple[float, float]:
    a = np.deg2rad(bearing)
    return cx + dist * float(np.sin(a)), cy - dist * float(np.cos(a))


def draw_clock(
    rng: np.random.Generator, difficulty: str, minutes: int
) -> tuple[np.ndarray, dict[str, Any]]:
    """A clock face showing ``minutes`` (0..719); returns the image and the drawn geometry."""
    w, h = fx.SIZE_WH
    img = np.zeros((h, w, 3), np.uint8)
    img[:] = tuple(int(v) for v in rng.integers(90, 150, 3))
    if difficulty == "hard":
        for _ in range(int(rng.integers(3, 7))):
            p = (int(rng.integers(0, w)), int(rng.integers(0, h)))
            grey = int(rng.integers(40, 90))
            cv2.circle(img, p, int(rng.integers(10, 40)), (grey, grey, grey), -1, cv2.LINE_AA)
    radius = float(rng.uniform(170, 205))
    cx = w / 2 + float(rng.uniform(-50, 50))
    cy = h / 2 + float(rng.uniform(-10, 10))
    c16 = (round(cx * 16), round(cy * 16))
    cv2.circle(img, c16, round(radius * 16), (238, 238, 232), -1, cv2.LINE_AA, 4)
    cv2.circle(img, c16, round(radius * 16), (45, 45, 45), 5, cv2.LINE_AA, 4)
    for k in range(12 if difficulty == "clean" else 60):
        long_tick = k % (1 if difficulty == "clean" else 5) == 0
        a = k * (30.0 if difficulty == "clean" else 6.0)
        inner = _point(cx, cy, a, radius * (0.86 if long_tick else 0.92))
        outer = _point(cx, cy, a, radius * 0.97)
        cv2.line(
            img,
            (round(inner[0]), round(inner[1])),
            (round(outer[0]), round(outer[1])),
            (50, 50, 50),
            4 if long_tick else 2,
            cv2.LINE_AA,
        )
    hour_deg, minute_deg = hand_angles(minutes)
    hands = {}
    for name, bearing, length, width, colour in (
        ("hour", hour_deg, 0.5, 13, HOUR_BGR),
        ("minute", minute_deg, 0.78, 8, MINUTE_BGR),
    ):
        tail = _point(cx, cy, bearing + 180, radius * 0.1)
        tip = _point(cx, cy, bearing, radius * length)
        cv2.line(
            img,
            (round(tail[0] * 16), round(tail[1] * 16)),
            (round(tip[0] * 16), round(tip[1] * 16)),
            colour,
            width,
            cv2.LINE_AA,
            4,
        )
        hands[name] = {"tail_px": [round(v, 2) for v in tail], "tip_px": [round(v, 2) for v in tip]}
    img = fx.degrade(img, difficulty, rng)
    geometry = {
        "center_px": [round(cx, 2), round(cy, 2)],
        "radius_px": round(radius, 2),
        "hands": hands,
        "time": text_of(minutes),
    }
    return img, geometry


def hands_spec() -> GroundSpec:
    """Both hands as coloured outlines, labelled ``hour`` and ``minute``."""
    return GroundSpec(
        helper="boundary",
        target="the hour hand and the minute hand",
        proposer="opencv.color_region",
        params={"ranges": HAND_RANGES, "max_regions": 1, "min_area_px": 150.0},
        budget=2,
        min_count=2,
        max_count=2,
    )


def time_question(qid: str, ask: str, expected: str, weight: float = 2.0) -> Question:
    """A hard question decided by reading the hands of the gate's grounding."""
    return hard(
        qid,
        ask,
        NamedCheck(name="clock_time", args={"expected": expected, "tolerance_min": TOLERANCE_MIN}),
        uses="g1",
        weight=weight,
    )


def _program(
    scene_id: str,
    prompt: str,
    axis: str,
    difficulty: str,
    hard_qs: list[Question],
    instructions: str = "",
    judge_gate: str = "",
) -> Program:
    """One program: the hands gate (grounded), an optional judge gate, the hard questions.

    A judge gate reads the program's ``instructions`` (the hidden facts) at grading
    time; the generation prompt never contains them.
    """
    data = {
        "id": scene_id,
        "prompt": prompt,
        "tags": {"scene": scene_id.rsplit("-", 2)[0], "difficulty": difficulty, "axis": axis},
        "instructions": instructions,
        "gates": [
            gate(
                "g1",
                "Does the clock have an hour hand and a minute hand?",
                hands_spec(),
                "count(elements) == 2",
            ).model_dump(exclude_defaults=True),
            *([{"id": "g2", "ask": judge_gate, "tags": {"track": "easy"}}] if judge_gate else []),
        ],
        "hard": [q.model_dump(exclude_defaults=True) for q in hard_qs],
    }
    return Program.model_validate(data)


def _wrong_time(rng: np.random.Generator, true: int) -> int:
    """A readable time at least 20 minutes off: often the hands swapped, else a shift."""
    hour_deg, minute_deg = hand_angles(true)
    swapped = (round(minute_deg / 30) % 12) * 60 + round(hour_deg / 6) % 60
    candidates = [swapped] if rng.random() < 0.4 else []
    candidates += [
        (true + int(s)) % 720 for s in rng.choice([-1, 1], 8) * rng.integers(4, 30, 8) * 5
    ]
    for t in candidates:
        off = min(abs(t - true) % 720, 720 - abs(t - true) % 720)
        if off >= 20 and readable(t):
            return int(t)
    return (true + 180) % 720 if readable((true + 180) % 720) else (true + 240) % 720


def clock_program(scene_id: str, difficulty: str, claim: int) -> Program:
    """Do the hands show a time."""
    text = text_of(claim)
    return _program(
        scene_id,
        f"An analogue wall clock showing {text}.",
        "symbolic",
        difficulty,
        [time_question("h1", f"Do the hands show {text}?", text)],
    )


def world_program(
    scene_id: str, difficulty: str, event: str, fact_time: str, rationale: str
) -> Program:
    """The time of a historical event."""
    return _program(
        scene_id,
        f"A station clock showing the moment {event}.",
        "world",
        difficulty,
        [time_question("h1", f"Does the clock show the time {event}?", fact_time)],
        instructions=RATIONALE_HEADER + rationale,
        judge_gate="Is the clock placed where the event happened (on a ship, at a station or "
        "in a control room)?",
    )


def counterfactual_program(scene_id: str, difficulty: str, base: int, shift: int) -> Program:
    """A meeting moved by ``shift`` minutes."""
    target = (base + shift) % 720
    word = "earlier" if shift < 0 else "later"
    rationale = (
        f"Moved {abs(shift)} minutes {word}, a {text_of(base)} start becomes "
        f"{text_of(target)}; a clock at {text_of(base)} ignores the premise."
    )
    return _program(
        scene_id,
        f"If the meeting that starts at {text_of(base)} had been moved {abs(shift)} "
        f"minutes {word}, a clock on the meeting-room wall at its new start time.",
        "counterfactual",
        difficulty,
        [time_question("h1", "Does the clock show the new start time?", text_of(target))],
        instructions=RATIONALE_HEADER + rationale,
        judge_gate="Is the clock on the wall of a meeting room?",
    )


def make(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """Symbolic: "a clock showing H:MM"; some images show another time."""
    shown = _random_time(rng)
    claim = shown if rng.random() < 0.6 else _wrong_time(rng, shown)
    img, geometry = draw_clock(rng, difficulty, shown)
    program = clock_program(scene_id, difficulty, claim)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(claim == shown)}
    return Scene(
        scene_id, "clock", difficulty, seed, img, {**geometry, "answers": answers}, [program]
    )


def make_world(scene_id: str, difficulty: str, seed: int, rng: np.random.Generator) -> Scene:
    """World knowledge: the clock must show when a historical event happened."""
    event, fact_time, rationale = WORLD_FACTS[int(rng.integers(0, len(WORLD_FACTS)))]
    truth_t = parse(fact_time)
    shown = truth_t if rng.random() < 0.6 else _wrong_time(rng, truth_t)
    img, geometry = draw_clock(rng, difficulty, shown)
    program = world_program(scene_id, difficulty, event, fact_time, rationale)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(shown == truth_t)}
    return Scene(
        scene_id, "clock_world", difficulty, seed, img, {**geometry, "answers": answers}, [program]
    )


def make_counterfactual(
    scene_id: str, difficulty: str, seed: int, rng: np.random.Generator
) -> Scene:
    """Counterfactual: a premise moves a meeting; wrong images show the original time."""
    while True:
        base = _random_time(rng)
        shift = int(rng.choice([-1, 1])) * int(rng.integers(3, 30)) * 5
        target = (base + shift) % 720
        if readable(target):
            break
    shown = target if rng.random() < 0.6 else base
    img, geometry = draw_clock(rng, difficulty, shown)
    program = counterfactual_program(scene_id, difficulty, base, shift)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(shown == target)}
    return Scene(
        scene_id,
        "clock_counterfactual",
        difficulty,
        seed,
        img,
        {**geometry, "answers": answers},
        [program],
    )
