"""The in-style scene kinds' programs, rebuilt from a scene's drawn facts.

The held-out style must be graded by exactly the questions, ground specs and
checks of the in-style suite, so every builder here reuses the in-style helpers
(``ground_spec``, ``hands_spec``, ``time_question``, colour ranges, tolerances)
and copies the wording of the in-style ``make`` functions; the tests compare
each builder with the in-style program for the same facts.
"""

from __future__ import annotations

from typing import Any

from groundeval.benchmarks.synthetic import _clock, _compass, _dice, _rows, _shadows, _sun
from groundeval.benchmarks.synthetic._common import count_word, gate, hard
from groundeval.programs import GroundSpec, NamedCheck, Program


def dice(scene_id: str, difficulty: str, where: str, claim_n: int, claim_sum: int) -> Program:
    """Count and pip-sum claims about dice (in-style ``dice``)."""
    spec = _dice.ground_spec()
    noun = "die" if claim_n == 1 else "dice"
    return Program(
        id=scene_id,
        prompt=f"{count_word(claim_n).capitalize()} {noun} {where} whose pips add up to "
        f"{claim_sum}.",
        tags={"scene": "dice", "difficulty": difficulty, "axis": "quantity"},
        gates=[gate("g1", "Is there at least one die?", spec, "count(elements) >= 1")],
        hard=[
            hard(
                "h1",
                f"Are there exactly {count_word(claim_n)} {noun}?",
                f"count(elements) == {claim_n}",
                uses="g1",
            ),
            hard(
                "h2",
                f"Do the pips add up to {claim_sum}?",
                f"sum(e.pips for e in elements) == {claim_sum}",
                uses="g1",
                weight=2.0,
            ),
        ],
    )


def dice_math(scene_id: str, difficulty: str, n: int, claim: int) -> Program:
    """Product and left-to-right order of the pips (in-style ``dice_math``)."""
    noun = "die" if n == 1 else "dice"
    return Program(
        id=scene_id,
        prompt=f"{count_word(n).capitalize()} {noun} whose pips multiply to {claim}, "
        "laid out so the pip counts rise from left to right.",
        tags={"scene": "dice_math", "difficulty": difficulty, "axis": "latent"},
        gates=[
            gate("g1", "Is there at least one die?", _dice.ground_spec(), "count(elements) >= 1")
        ],
        hard=[
            hard(
                "h1",
                f"Do the pips multiply to {claim}?",
                NamedCheck(
                    name="arithmetic", args={"op": "product", "field": "pips", "equals": claim}
                ),
                uses="g1",
                weight=2.0,
            ),
            hard(
                "h2",
                "Do the pip counts rise from left to right?",
                NamedCheck(
                    name="arithmetic", args={"op": "increasing", "field": "pips", "order_by": "x"}
                ),
                uses="g1",
            ),
        ],
    )


def coins(scene_id: str, difficulty: str, where: str, claim: int) -> Program:
    """An exact coin count (in-style ``coins``)."""
    spec = GroundSpec(
        helper="boxes",
        target="each coin",
        proposer="opencv.contours",
        budget=2,
        min_count=1,
        fields={"radius_px": {"type": "number", "minimum": 5}},
    )
    noun = "coin" if claim == 1 else "coins"
    return Program(
        id=scene_id,
        prompt=f"{count_word(claim).capitalize()} {noun} {where}.",
        tags={"scene": "coins", "difficulty": difficulty, "axis": "quantity"},
        gates=[gate("g1", "Is there at least one coin?", spec, "count(elements) >= 1")],
        hard=[
            hard(
                "h1",
                f"Are there exactly {count_word(claim)} {noun}?",
                f"count(elements) == {claim}",
                uses="g1",
            )
        ],
    )


def bars(
    scene_id: str,
    difficulty: str,
    colour: str,
    title: str,
    n: int,
    tol: float,
    claims: list[tuple[str, int]],
) -> Program:
    """Is bar Qk labelled v (in-style ``bars``): ``claims`` are (label, claimed value)."""
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


def compass(scene_id: str, difficulty: str, letters: list[str], asked: int) -> Program:
    """Does the needle point at a letter (in-style ``compass``)."""
    step = 360.0 / len(letters)
    spec = GroundSpec(
        helper="line",
        target="the needle, from its tail to its tip",
        proposer="opencv.lines",
        budget=2,
        min_count=1,
        max_count=1,
        fields={"bearing_deg": {"type": "number", "minimum": 0, "maximum": 360}},
    )
    letter = letters[asked]
    return Program(
        id=scene_id,
        prompt=f"A compass with the letters {', '.join(letters)} whose needle points at {letter}.",
        tags={"scene": "compass", "difficulty": difficulty, "axis": "spatial"},
        gates=[gate("g1", "Does the compass have a needle?", spec, "count(elements) == 1")],
        hard=[
            hard(
                "h1",
                f"Does the needle point at {letter}?",
                _compass.bearing_check(asked * step, step / 2),
                uses="g1",
            )
        ],
    )


def sun(
    scene_id: str, difficulty: str, sun_name: str, ground_name: str, claim_touch: bool
) -> Program:
    """Does the sun touch the horizon (in-style ``sun``)."""
    spec = GroundSpec(
        helper="boundary",
        target="the sun and the ground below the horizon",
        proposer="opencv.color_region",
        budget=2,
        min_count=2,
        max_count=2,
        params={"ranges": [_sun.SUN_RANGE, _sun.GROUND_RANGE]},
        fields={"label": {"type": "string", "enum": ["sun", "ground"]}},
    )
    tol = _sun.TOUCH_TOLERANCE_PX
    op = ">=" if claim_touch else "<"
    check = (
        f"any(s.label == 'sun' and g.label == 'ground' and s.y2 {op} g.y1 - {tol}"
        " for s in elements for g in elements)"
    )
    where = "touching the horizon" if claim_touch else "clear above the horizon"
    article = "An" if sun_name[0] in "aeiou" else "A"
    return Program(
        id=scene_id,
        prompt=f"{article} {sun_name} sun {where} over a {ground_name}.",
        tags={"scene": "sun", "difficulty": difficulty, "axis": "spatial"},
        gates=[
            gate(
                "g1", "Is there a sun in the sky?", spec, "any(e.label == 'sun' for e in elements)"
            )
        ],
        hard=[hard("h1", f"Is the sun {where}?", check, uses="g1")],
    )


def shadows(scene_id: str, difficulty: str, n: int) -> Program:
    """One light source, and the shadow count (in-style ``shadows``)."""
    spec = GroundSpec(
        helper="boundary",
        target="each pillar's shadow",
        proposer="opencv.color_region",
        params={"ranges": [_shadows.SHADOW_RANGE], "max_regions": 8, "min_area_px": 400.0},
        budget=2,
        min_count=2,
    )
    return Program(
        id=scene_id,
        prompt=f"Seen from above, {count_word(n)} pillars around a single lamp at "
        "night, each casting a shadow.",
        tags={"scene": "shadows", "difficulty": difficulty, "axis": "physics"},
        gates=[gate("g1", "Do the pillars cast shadows?", spec, "count(elements) >= 2")],
        hard=[
            hard(
                "h1",
                "Do the shadows agree with a single light source (extended, they meet "
                "in one point)?",
                NamedCheck(name="lines_concurrent", args={"tolerance_px": _shadows.TOLERANCE_PX}),
                uses="g1",
                weight=2.0,
            ),
            hard("h2", f"Are there {count_word(n)} shadows?", f"count(elements) == {n}", uses="g1"),
        ],
    )


def rows(scene_id: str, difficulty: str, n: int, mode: str) -> Program:
    """All the same size, or growing left to right (in-style ``rows``)."""
    spec = GroundSpec(
        helper="boxes",
        target="each disc in the row",
        proposer="opencv.contours",
        params={"min_area_px": 150.0},
        budget=2,
        min_count=2,
    )
    args: dict[str, Any]
    if mode == "same":
        claim = f"{count_word(n)} discs in a row, all exactly the same size"
        ask = "Are all discs the same size?"
        args = {
            "field": "radius_px",
            "mode": "same",
            "tolerance": _rows.SAME_TOLERANCE,
            "relative": True,
        }
    else:
        claim = f"{count_word(n)} discs in a row, each one a little larger than the one on its left"
        ask = "Does every disc grow from left to right?"
        args = {"field": "radius_px", "mode": "increasing", "order_by": "x"}
    return Program(
        id=scene_id,
        prompt=claim[0].upper() + claim[1:] + ".",
        tags={"scene": "rows", "difficulty": difficulty, "axis": "long_range"},
        gates=[gate("g1", "Is there a row of discs?", spec, "count(elements) >= 2")],
        hard=[
            hard("h1", ask, NamedCheck(name="consistent", args=args), uses="g1", weight=2.0),
            hard("h2", f"Are there {count_word(n)} discs?", f"count(elements) == {n}", uses="g1"),
        ],
    )


def clock(scene_id: str, difficulty: str, claim: int) -> Program:
    """Do the hands show a time (in-style ``clock``; its own builders)."""
    text = _clock.text_of(claim)
    return _clock._program(
        scene_id,
        f"An analogue wall clock showing {text}.",
        "symbolic",
        difficulty,
        [_clock.time_question("h1", f"Do the hands show {text}?", text)],
    )


def clock_world(
    scene_id: str, difficulty: str, event: str, fact_time: str, rationale: str
) -> Program:
    """The time of a historical event (in-style ``clock_world``)."""
    return _clock._program(
        scene_id,
        f"A station clock showing the moment {event}.",
        "world",
        difficulty,
        [_clock.time_question("h1", f"Does the clock show the time {event}?", fact_time)],
        instructions=_clock.RATIONALE_HEADER + rationale,
        judge_gate="Is the clock placed where the event happened (on a ship, at a station or "
        "in a control room)?",
    )


def clock_counterfactual(scene_id: str, difficulty: str, base: int, shift: int) -> Program:
    """A meeting moved by ``shift`` minutes (in-style ``clock_counterfactual``)."""
    target = (base + shift) % 720
    word = "earlier" if shift < 0 else "later"
    rationale = (
        f"Moved {abs(shift)} minutes {word}, a {_clock.text_of(base)} start becomes "
        f"{_clock.text_of(target)}; a clock at {_clock.text_of(base)} ignores the premise."
    )
    return _clock._program(
        scene_id,
        f"If the meeting that starts at {_clock.text_of(base)} had been moved {abs(shift)} "
        f"minutes {word}, a clock on the meeting-room wall at its new start time.",
        "counterfactual",
        difficulty,
        [
            _clock.time_question(
                "h1", "Does the clock show the new start time?", _clock.text_of(target)
            )
        ],
        instructions=_clock.RATIONALE_HEADER + rationale,
        judge_gate="Is the clock on the wall of a meeting room?",
    )
