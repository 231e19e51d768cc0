"""The blind style's scene kinds: dice, coins, and dice whose pips multiply in order.

Each maker picks a set, places the counted objects (clear of each other's boxes and of
every reflection and distractor), paints, and writes the truth and the in-style program.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic._common import Scene, verdict, wrong_int
from groundeval.benchmarks.synthetic.blind import _coin, _die, _programs, _props
from groundeval.benchmarks.synthetic.blind._layout import MARGIN_PX, Floor, moved, rounded
from groundeval.benchmarks.synthetic.blind._paint import Box, Sprite, extent, over, reflection
from groundeval.benchmarks.synthetic.blind._paint import shadow as cast
from groundeval.benchmarks.synthetic.blind._stage import Stage, finish, paint_surface, pick_stage

DIFFICULTY = "blind"
TRUE_CLAIM = 0.65
"""Share of claims that are true."""


@dataclass
class Drawn:
    """Something painted: a label for truth, its sprite and its box."""

    label: str
    sprite: Sprite
    box: Box


def dice(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Dice scattered at any angle; the program claims a count and a pip sum."""
    st = pick_stage(rng)
    floor, placed = _scatter_dice(rng, st, int(rng.integers(1, 7)))
    img, distractors = _render(rng, st, floor, _dice_drawn(placed, st), _dot_px(placed))
    n, total = len(placed), sum(d.pips for d in placed)
    claim_n = n if rng.random() < TRUE_CLAIM else wrong_int(rng, n, 1, 8, 1)
    claim_sum = total if rng.random() < TRUE_CLAIM else wrong_int(rng, total, 1, 48, 3)
    program = _programs.dice(scene_id, DIFFICULTY, st.surface.where, claim_n, claim_sum)
    answers = {
        f"{scene_id}/g1": verdict(n >= 1),
        f"{scene_id}/h1": verdict(n == claim_n),
        f"{scene_id}/h2": verdict(total == claim_sum),
    }
    truth = {
        **_set_truth(st),
        "dice": _dice_truth(placed),
        "count": n,
        "pip_sum": total,
        "distractors": distractors,
        "answers": answers,
    }
    return Scene(scene_id, "dice", DIFFICULTY, seed, img, truth, [program])


def dice_math(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Two to four dice in a loose row; the program claims a product and rising pips."""
    st = pick_stage(rng)
    floor, placed = _row_of_dice(rng, st, int(rng.integers(2, 5)))
    img, distractors = _render(rng, st, floor, _dice_drawn(placed, st), _dot_px(placed))
    by_x = [d.pips for d in sorted(placed, key=lambda d: d.cx)]
    product = math.prod(by_x)
    claim = product if rng.random() < TRUE_CLAIM else wrong_int(rng, product, 1, 6 ** len(by_x), 4)
    rising = all(b > a for a, b in itertools.pairwise(by_x))
    program = _programs.dice_math(scene_id, DIFFICULTY, len(by_x), claim)
    answers = {
        f"{scene_id}/g1": "pass",
        f"{scene_id}/h1": verdict(claim == product),
        f"{scene_id}/h2": verdict(rising),
    }
    truth = {
        **_set_truth(st),
        "dice": _dice_truth(placed),
        "count": len(placed),
        "pip_sum": sum(by_x),
        "product": product,
        "pips_left_to_right": by_x,
        "distractors": distractors,
        "answers": answers,
    }
    return Scene(scene_id, "dice_math", DIFFICULTY, seed, img, truth, [program])


def coins(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Coins of five metals, some touching; the program claims a count."""
    st = pick_stage(rng)
    floor, placed = _scatter_coins(rng, st, int(rng.integers(1, 10)))
    drawn = [
        Drawn(f"coin {i}", _coin.sprite(c, st.look, st.outline_px), c.box())
        for i, c in enumerate(placed)
    ]
    dot = 0.3 * min(c.r for c in placed)
    img, distractors = _render(rng, st, floor, drawn, dot)
    n = len(placed)
    claim = n if rng.random() < TRUE_CLAIM else wrong_int(rng, n, 1, 12, 1)
    program = _programs.coins(scene_id, DIFFICULTY, st.surface.where, claim)
    answers = {f"{scene_id}/g1": verdict(n >= 1), f"{scene_id}/h1": verdict(n == claim)}
    objects = [
        {
            "xyxy_px": rounded(c.box()),
            "center_px": [round(c.cx, 2), round(c.cy, 2)],
            "radius_px": round(c.r, 2),
            "metal": c.metal,
            "centre_metal": c.centre_metal,
            "relief": c.relief,
        }
        for c in placed
    ]
    truth = {
        **_set_truth(st),
        "coins": objects,
        "count": n,
        "distractors": distractors,
        "answers": answers,
    }
    return Scene(scene_id, "coins", DIFFICULTY, seed, img, truth, [program])


def _set_truth(st: Stage) -> dict[str, Any]:
    """What the set was, for slicing results by look."""
    return {"surface": st.surface.name, "look": st.look, "glossy_floor": st.glossy}


def _dot_px(placed: list[_die.Die]) -> float:
    """Polka dots stay under half the smallest pip's diameter."""
    return 0.45 * min(d.pip_frac * d.side for d in placed)


def _dice_drawn(placed: list[_die.Die], st: Stage) -> list[Drawn]:
    """Dice painted in the stage's look."""
    return [
        Drawn(f"die {i}", _die.sprite(d, st.look, st.outline_px), d.box())
        for i, d in enumerate(placed)
    ]


def _dice_truth(placed: list[_die.Die]) -> list[dict[str, Any]]:
    """Per-die truth, with whether it touches another (boxes 3.5 px apart or less)."""
    boxes = [d.box() for d in placed]
    return [
        {
            "xyxy_px": rounded(boxes[i]),
            "center_px": [round(d.cx, 2), round(d.cy, 2)],
            "pips": d.pips,
            "face": d.face,
            "pip_colour": d.pip_colour,
            "angle_deg": round(d.angle_deg % 360, 2),
            "side_px": round(d.side, 2),
            "corner_px": round(d.corner, 2),
            "pip_diameter_px": round(d.pip_frac * d.side, 2),
            "touches": any(_near(boxes[i], b) for j, b in enumerate(boxes) if j != i),
        }
        for i, d in enumerate(placed)
    ]


def _near(a: Box, b: Box, gap: float = 3.5) -> bool:
    """Whether two disjoint boxes face each other across ``gap`` pixels or less."""
    dx = max(a[0] - b[2], b[0] - a[2])
    dy = max(a[1] - b[3], b[1] - a[3])
    return (dx <= gap and dy < 0) or (dy <= gap and dx < 0)


def _new_die(rng: np.random.Generator, st: Stage, side: float, square: bool) -> _die.Die:
    """A die of this side; ``square`` keeps it within 6 degrees of the image axes."""
    angle = float(rng.uniform(-6, 6)) if square else float(rng.uniform(0, 360))
    face, pip = _die.pick_face(rng, st.surface.luma)
    return _die.Die(
        side=side,
        angle_deg=angle,
        corner=side * float(rng.uniform(0.06, 0.24)),
        face=face,
        pip_colour=pip,
        pips=int(rng.integers(1, 7)),
        pip_frac=float(rng.uniform(0.14, 0.22)),
        transpose=bool(rng.random() < 0.5),
    )


def _square(angle_deg: float) -> bool:
    """Whether a die lies within 6 degrees of the axes (its box hugs it)."""
    return abs((angle_deg + 45) % 90 - 45) <= 6


def _scatter_dice(rng: np.random.Generator, st: Stage, n: int) -> tuple[Floor, list[_die.Die]]:
    """``n`` dice, some touching a neighbour; shrinks them if they do not fit."""
    w, h = st.size_wh
    base = float(np.clip(rng.uniform(0.08, 0.145) * st.unit, 40, 110))
    floor, placed = Floor(w, h, st.glossy), list[_die.Die]()
    for attempt in range(4):
        floor, placed = Floor(w, h, st.glossy), []
        for _ in range(n):
            side = float(np.clip(base * 0.87**attempt * rng.uniform(0.94, 1.06), 40, 110))
            touch = any(_square(d.angle_deg) for d in placed) and rng.random() < 0.35
            d = _new_die(rng, st, side, touch or rng.random() < 0.15)
            spot = _touching_spot(rng, floor, placed, d) if touch else None
            spot = spot or floor.spot(rng, d.rel_box(), counted=True)
            if spot is None:
                break
            d.cx, d.cy = spot
            floor.take_counted(d.box())
            placed.append(d)
        if len(placed) == n:
            break
    return floor, placed


def _touching_spot(
    rng: np.random.Generator, floor: Floor, placed: list[_die.Die], d: _die.Die
) -> tuple[float, float] | None:
    """A centre 0-3 px from a square-set die's side (beside it only, on a mirroring floor)."""
    near = [i for i, o in enumerate(placed) if _square(o.angle_deg)]
    e = d.half_extent()
    for _ in range(40):
        j = near[int(rng.integers(len(near)))]
        b = placed[j].box()
        gap = float(rng.uniform(0, 3))
        side = int(rng.integers(2 if floor.glossy else 4))
        mx, my = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
        slide = float(rng.uniform(-0.35, 0.35)) * (b[2] - b[0])
        x, y = (
            (b[2] + gap + e, my + slide),
            (b[0] - gap - e, my + slide),
            (mx + slide, b[3] + gap + e),
            (mx + slide, b[1] - gap - e),
        )[side]
        if floor.free_for_counted(moved(d.rel_box(), x, y), near=j):
            return x, y
    return None


def _row_of_dice(rng: np.random.Generator, st: Stage, n: int) -> tuple[Floor, list[_die.Die]]:
    """``n`` dice in left-to-right slots with clear gaps; pips rise about half the time."""
    w, h = st.size_wh
    slot = (w - 2 * MARGIN_PX) / n
    side = float(np.clip(rng.uniform(0.08, 0.14) * st.unit, 40, 110))
    side = min(side, (slot - 16) / math.sqrt(2))
    if rng.random() < 0.45:
        pips = sorted(int(v) + 1 for v in rng.choice(6, n, replace=False))
    else:
        pips = [int(v) for v in rng.integers(1, 7, n)]
    floor, placed = Floor(w, h, st.glossy), list[_die.Die]()
    for i in range(n):
        d = _new_die(rng, st, side * float(rng.uniform(0.95, 1.0)), False)
        d.pips = pips[i]
        e = d.half_extent()
        room = max(0.0, (slot - 2 * e - 16) / 2)
        d.cx = MARGIN_PX + slot * (i + 0.5) + float(rng.uniform(-room, room))
        lo, hi = MARGIN_PX + e + 1, h - MARGIN_PX - e - 1
        if st.glossy:  # leave the reflection some floor
            hi = max(lo, h - MARGIN_PX - e - 1 - 0.5 * e)
        d.cy = float(np.clip(h / 2 + rng.uniform(-0.22, 0.22) * h, lo, hi))
        floor.take_counted(d.box())
        placed.append(d)
    return floor, placed


def _scatter_coins(rng: np.random.Generator, st: Stage, n: int) -> tuple[Floor, list[_coin.Coin]]:
    """``n`` coins of mixed sizes, some touching (overlap at most 4 % of the smaller radius)."""
    w, h = st.size_wh
    base = float(rng.uniform(0.035, 0.07) * st.unit)
    floor, placed = Floor(w, h, st.glossy), list[_coin.Coin]()
    for attempt in range(4):
        floor, placed = Floor(w, h, st.glossy), []
        for _ in range(n):
            r = float(np.clip(base * 0.87**attempt * rng.uniform(0.82, 1.15), 18, 60))
            c = _coin.pick_coin(rng, r, st.surface.luma)
            spot = None
            if placed and rng.random() < 0.35:
                spot = _coin_spot(rng, floor, placed, c, touching=True)
            spot = spot or _coin_spot(rng, floor, placed, c, touching=False)
            if spot is None:
                break
            c.cx, c.cy = spot
            floor.take_counted(c.box())
            placed.append(c)
        if len(placed) == n:
            break
    return floor, placed


def _coin_spot(
    rng: np.random.Generator,
    floor: Floor,
    placed: list[_coin.Coin],
    c: _coin.Coin,
    touching: bool,
) -> tuple[float, float] | None:
    """A free centre for a coin, or one touching (or just overlapping) a placed coin."""
    for _ in range(40 if touching else 250):
        if touching:
            o = placed[int(rng.integers(len(placed)))]
            a = float(rng.uniform(0, 2 * math.pi))
            if floor.glossy:  # side by side, so no one's reflection runs into the other
                a = float(rng.choice([0.0, math.pi]) + rng.uniform(-0.25, 0.25))
            dist = c.r + o.r - float(rng.uniform(-2.0, 0.04 * min(c.r, o.r)))
            x, y = o.cx + dist * math.cos(a), o.cy + dist * math.sin(a)
        else:
            x = float(rng.uniform(MARGIN_PX + c.r, floor.w - MARGIN_PX - c.r))
            y = float(rng.uniform(MARGIN_PX + c.r, floor.h - MARGIN_PX - c.r))
        clear = all(
            math.hypot(x - o.cx, y - o.cy) >= c.r + o.r - 0.04 * min(c.r, o.r) - 1e-6
            if touching
            else math.hypot(x - o.cx, y - o.cy) >= c.r + o.r + 4
            for o in placed
        )
        if clear and floor.free_for_counted(moved(c.rel_box(), x, y), boxes=False):
            return x, y
    return None


def _place_props(rng: np.random.Generator, st: Stage, floor: Floor) -> list[Drawn]:
    """Distractors on about half the pictures, clear of every counted box."""
    if rng.random() >= 0.5:
        return []
    kinds = list(_props.KINDS)
    if st.surface.kind == "gradient" and st.look != "flat":
        kinds.append("bokeh")
    out = []
    for _ in range(int(rng.integers(1, 4))):
        kind = kinds[int(rng.integers(len(kinds)))]
        for _ in range(int(rng.integers(2, 5)) if kind == "bokeh" else 1):
            prop = _props.make(kind, rng, st.unit, st.outline_px)
            spot = floor.spot(rng, prop.rel, counted=False, tries=80)
            if spot is None:
                continue
            floor.take_prop(moved(prop.rel, *spot))
            s = _props.paint(prop, *spot)
            box = extent(s, st.size_wh)
            if box is not None:
                out.append(Drawn(kind, s, box))
    return out


def _render(
    rng: np.random.Generator, st: Stage, floor: Floor, counted: list[Drawn], dot_px: float
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Paint the set back to front; return the finished image and the distractors' truth."""
    props = _place_props(rng, st, floor)
    canvas = paint_surface(st.surface, st.size_wh, rng, dot_px)
    distractors: list[dict[str, Any]] = []
    solid = [p for p in props if p.label != "bokeh"]
    for p in props:
        if p.label == "bokeh":
            over(canvas, p.sprite)
            distractors.append({"kind": "bokeh", "xyxy_px": rounded(p.box)})
    things = [*solid, *counted]
    if st.glossy:
        opacity = float(rng.uniform(0.16, 0.3))
        for t in things:
            fade = floor.mirror_frac * (t.box[3] - t.box[1])
            mirror = reflection(t.sprite, t.box[3], fade, opacity)
            box = extent(mirror, st.size_wh)
            if box is not None:
                over(canvas, mirror)
                distractors.append({"kind": "reflection", "of": t.label, "xyxy_px": rounded(box)})
    for t in things:
        _shadow(canvas, t, st.look)
    for t in things:
        over(canvas, t.sprite)
    distractors += [{"kind": p.label, "xyxy_px": rounded(p.box)} for p in solid]
    return finish(canvas, st, rng), distractors


def _shadow(canvas: np.ndarray, t: Drawn, look: str) -> None:
    """A contact shadow (studio), a flat offset shadow (flat) or a soft one (painterly)."""
    size = max(t.box[2] - t.box[0], t.box[3] - t.box[1])
    if look == "studio":
        cast(canvas, t.sprite, 0.02 * size, 0.05 * size, 0.07 * size, 0.38)
        cast(canvas, t.sprite, 0.0, 0.01 * size, 0.015 * size + 0.8, 0.3)
    elif look == "flat":
        cast(canvas, t.sprite, 0.05 * size, 0.06 * size, 0.0, 0.22)
    else:
        cast(canvas, t.sprite, 0.05 * size, 0.07 * size, 0.09 * size, 0.33)
