"""The out-of-style scenes: dice, coins, bar charts, compass dials, suns and rows.

Each maker takes ``(item_id, seed, rng)`` and returns a :class:`Scene` whose
truth lists what was drawn and the expected outcome of every question, in the
same format as the in-style suite (``truth["answers"]["<item>/<question>"]``).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from groundeval.benchmarks.synthetic import _rows
from groundeval.benchmarks.synthetic._common import Scene
from groundeval.benchmarks.synthetic.outstyle import _sprites, _surface
from groundeval.programs import Program

W, H = 640, 480
DIFFICULTY = "outstyle"
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def _place(
    rng: np.random.Generator, sizes: list[float], margin: float, gap: tuple[float, float]
) -> list[tuple[float, float]]:
    """Centres for discs of the given reach that keep ``gap`` px apart (fewer if crowded)."""
    centres: list[tuple[float, float]] = []
    kept: list[float] = []
    for reach in sizes:
        for _ in range(200):
            x = float(rng.uniform(reach + margin, W - reach - margin))
            y = float(rng.uniform(reach + margin, H - reach - margin))
            want = float(rng.uniform(*gap))
            if all(np.hypot(x - cx, y - cy) >= reach + r + want
                   for (cx, cy), r in zip(centres, kept, strict=True)):  # fmt: skip
                centres.append((x, y))
                kept.append(reach)
                break
    return centres


def _claim(rng: np.random.Generator, true: int, low: int, spread: int) -> int:
    """The value a prompt claims: the truth half the time, else off by 1..spread."""
    if rng.random() < 0.5:
        return true
    off = int(rng.integers(1, spread + 1)) * int(rng.choice([-1, 1]))
    return true + off if true + off >= low else true + abs(off)


def _program(data: dict[str, Any]) -> Program:
    return Program.model_validate(data)


def _shadow(rng: np.random.Generator, scale: float) -> tuple[float, float, float]:
    angle = float(rng.uniform(0, 2 * np.pi))
    length = scale * float(rng.uniform(0.05, 0.14))
    return length * np.cos(angle), length * np.sin(angle), float(rng.uniform(0.3, 0.6))


def dice(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """1-6 dice of one face colour (sometimes mixed) on wood, cloth, clouds, textures or photos."""
    table, img = _surface.backdrop(rng, H, W, (*_surface.TEXTURES, "photo"))
    n = int(rng.integers(1, 7))
    side_mid = float(rng.uniform(40, 78))
    sides = [side_mid * float(rng.uniform(0.9, 1.1)) for _ in range(n)]
    gap = (2.0, 6.0) if rng.random() < 0.3 else (8.0, 40.0)
    centres = _place(rng, [s * 0.78 for s in sides], 4, gap)
    styles = list(_sprites.DIE_STYLES)
    scene_style = str(rng.choice(styles))
    mixed = rng.random() < 0.3
    pip_choice = int(rng.integers(0, 8))
    shadow = _shadow(rng, side_mid * 1.5)
    truth_dice: list[dict[str, Any]] = []
    for (cx, cy), side in zip(centres, sides, strict=False):
        style = str(rng.choice(styles)) if mixed else scene_style
        face, pips_rgb = _sprites.DIE_STYLES[style]
        pip_rgb = pips_rgb[pip_choice % len(pips_rgb)]
        pips = int(rng.integers(1, 7))
        sprite, angle = _sprites.die(rng, cx, cy, side, face, pip_rgb, pips)
        _surface.composite(img, sprite.rgba, sprite.x0, sprite.y0, shadow)
        truth_dice.append({
            "xyxy_px": [round(v, 2) for v in sprite.box()], "pips": pips, "face": style,
            "pip_rgb": list(pip_rgb), "side_px": round(side, 2), "angle_deg": round(angle, 2),
        })  # fmt: skip
    image = _surface.develop(rng, img)
    count = len(truth_dice)
    pip_sum = sum(d["pips"] for d in truth_dice)
    said_count = _claim(rng, count, 1, 1)
    said_sum = _claim(rng, pip_sum, 1, 3)
    colours = "mixed" if mixed else scene_style
    program = _program({
        "id": item_id,
        "prompt": f"{WORDS[said_count].capitalize()} {colours} dice on {table} whose pips add "
                  f"up to {said_sum}.",
        "tags": {"scene": "dice", "difficulty": DIFFICULTY, "axis": "quantity"},
        "gates": [{
            "id": "g1", "ask": "Is there at least one die?",
            "ground": {"helper": "boxes", "target": "each die",
                       "fields": {"pips": {"type": "integer", "minimum": 1, "maximum": 6}},
                       "proposer": "opencv.dice", "budget": 2, "min_count": 1},
            "check": "count(elements) >= 1", "tags": {"track": "easy"},
        }],
        "hard": [
            {"id": "h1", "ask": f"Are there exactly {WORDS[said_count]} dice?", "uses": "g1",
             "check": f"count(elements) == {said_count}", "tags": {"track": "hard"}},
            {"id": "h2", "ask": f"Do the pips add up to {said_sum}?", "weight": 2.0,
             "uses": "g1", "check": f"sum(e.pips for e in elements) == {said_sum}",
             "tags": {"track": "hard"}},
        ],
    })  # fmt: skip
    answers = {
        f"{item_id}/g1": "pass",
        f"{item_id}/h1": "pass" if said_count == count else "fail",
        f"{item_id}/h2": "pass" if said_sum == pip_sum else "fail",
    }
    truth = {"table": table, "dice": truth_dice, "count": count, "pip_sum": pip_sum,
             "answers": answers}  # fmt: skip
    return Scene(item_id, "dice", DIFFICULTY, seed, image, truth, [program])


def coins(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """2-9 coins of one or several metals, rims and embossing, on wood, cloth or textures."""
    table, img = _surface.backdrop(rng, H, W, _surface.TEXTURES)
    n = int(rng.integers(2, 10))
    r_mid = float(rng.uniform(22, 44))
    radii = [r_mid * float(rng.uniform(0.85, 1.15)) for _ in range(n)]
    gap = (1.5, 4.0) if rng.random() < 0.25 else (6.0, 40.0)
    centres = _place(rng, radii, 4, gap)
    metals = list(_sprites.METALS)
    one = str(rng.choice(metals))
    mixed = rng.random() < 0.5
    shadow = _shadow(rng, r_mid * 2)
    truth_coins: list[dict[str, Any]] = []
    for (cx, cy), r in zip(centres, radii, strict=False):
        metal = str(rng.choice(metals)) if mixed else one
        sprite, radius = _sprites.coin(rng, cx, cy, r, metal)
        _surface.composite(img, sprite.rgba, sprite.x0, sprite.y0, shadow)
        truth_coins.append({
            "xyxy_px": [round(v, 2) for v in sprite.box()], "center_px": [round(cx, 2),
            round(cy, 2)], "radius_px": round(radius, 2), "metal": metal,
        })  # fmt: skip
    image = _surface.develop(rng, img)
    count = len(truth_coins)
    said = _claim(rng, count, 1, 1)
    metal_words = "mixed" if mixed else one
    program = _program({
        "id": item_id,
        "prompt": f"{WORDS[said].capitalize()} {metal_words} coins on {table}.",
        "tags": {"scene": "coins", "difficulty": DIFFICULTY, "axis": "quantity"},
        "gates": [{
            "id": "g1", "ask": "Is there at least one coin?",
            "ground": {"helper": "boxes", "target": "each coin",
                       "fields": {"radius_px": {"type": "number", "minimum": 5}},
                       "proposer": "opencv.contours", "budget": 2, "min_count": 1},
            "check": "count(elements) >= 1", "tags": {"track": "easy"},
        }],
        "hard": [{"id": "h1", "ask": f"Are there exactly {WORDS[said]} coins?", "uses": "g1",
                  "check": f"count(elements) == {said}", "tags": {"track": "hard"}}],
    })  # fmt: skip
    answers = {
        f"{item_id}/g1": "pass",
        f"{item_id}/h1": "pass" if said == count else "fail",
    }
    truth = {"table": table, "coins": truth_coins, "count": count, "answers": answers}
    return Scene(item_id, "coins", DIFFICULTY, seed, image, truth, [program])


TOKEN_COLOURS: dict[str, _sprites.Rgb] = {
    "ivory": (0.92, 0.88, 0.78), "red": (0.80, 0.16, 0.14), "teal": (0.12, 0.55, 0.55),
    "black": (0.12, 0.12, 0.13), "yellow": (0.94, 0.78, 0.20), "blue": (0.18, 0.30, 0.75),
}  # fmt: skip
"""Colours of the row scene's game tokens (coins use the sprite metals)."""


def rows(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A row of 8-11 tokens or coins on a tilted table: one shared size, or growing, or broken.

    Sizes and the break come from the in-style row's rule (``_rows._radii``), the
    drawing does not: sprites with bevels, grooves or button holes, one camera
    tilt for the whole row (so every disc keeps its true size ratio), a cast
    shadow, a textured table and the usual development.
    """
    table, img = _surface.backdrop(rng, H, W, _surface.TEXTURES)
    n = int(rng.integers(8, 12))
    mode = "same" if rng.random() < 0.5 else "increasing"
    broken = rng.random() < 0.45
    radii = _rows._radii(rng, n, mode, broken)
    squash = float(rng.uniform(0.85, 1.0))
    tilt = float(rng.uniform(-4, 4))
    kind = str(rng.choice(["token", "coin"]))
    colour = str(rng.choice(list(TOKEN_COLOURS)))
    metal = str(rng.choice(list(_sprites.METALS)))
    shadow = _shadow(rng, 2 * float(np.median(radii)))
    step = (W - 40) / n
    y0 = H / 2 + float(rng.uniform(-60, 60))
    slope = float(rng.uniform(-0.15, 0.15))
    discs: list[dict[str, Any]] = []
    for i, r in enumerate(radii):
        x = 20 + step * (i + 0.5)
        y = y0 + slope * (x - W / 2)
        face = (_sprites.token_face(r, TOKEN_COLOURS[colour], rng) if kind == "token"
                else _sprites.coin_face(r, metal, rng))  # fmt: skip
        sprite = _sprites.flat_disc(face, x, y, squash, tilt)
        _surface.composite(img, sprite.rgba, sprite.x0, sprite.y0, shadow)
        discs.append({"xyxy_px": [round(v, 2) for v in sprite.box()],
                      "center_px": [round(x, 2), round(y, 2)],
                      "radius_px": round(r * float(np.sqrt(squash)), 2)})  # fmt: skip
    image = _surface.develop(rng, img)
    program = _rows.program_for(item_id, DIFFICULTY, n, mode)
    answers = {
        f"{item_id}/g1": "pass",
        f"{item_id}/h1": "fail" if broken else "pass",
        f"{item_id}/h2": "pass",
    }
    truth = {"table": table, "mode": mode, "broken": broken, "discs": discs,
             "disc": colour if kind == "token" else metal, "answers": answers}  # fmt: skip
    return Scene(item_id, "rows", DIFFICULTY, seed, image, truth, [program])


LABEL_SETS = (
    ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"),
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul"),
    ("A", "B", "C", "D", "E", "F", "G"),
    ("North", "South", "East", "West", "Coast", "Hills", "Lakes"),
)
TITLES = ("Visitors per day", "Orders this month", "Rainfall (mm)", "Tickets sold", "Score")
PALETTES = (
    ((0.20, 0.45, 0.75), (0.35, 0.62, 0.90)),
    ((0.85, 0.40, 0.20), (0.95, 0.60, 0.35)),
    ((0.25, 0.60, 0.40), (0.45, 0.78, 0.55)),
    ((0.55, 0.30, 0.65), (0.72, 0.50, 0.80)),
    ((0.20, 0.20, 0.25), (0.45, 0.45, 0.52)),
)


def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _rgb255(c: tuple[float, ...]) -> tuple[int, ...]:
    return tuple(round(255 * float(v)) for v in c)


def bars(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A vertical bar chart, values printed above the bars, on paper or a dark card, tilted."""
    dark = rng.random() < 0.3
    paper = _surface.clouds(rng, H, W) * 0.15 + (0.1 if dark else 0.78)
    img = Image.fromarray(np.clip(paper * 255, 0, 255).astype(np.uint8))
    draw = ImageDraw.Draw(img)
    ink = (235, 235, 235) if dark else (30, 30, 35)
    n = int(rng.integers(3, 8))
    labels = LABEL_SETS[int(rng.integers(len(LABEL_SETS)))][:n]
    values = [int(v) for v in rng.integers(5, 100, n)]
    left, right, top, base = 60, W - 30, 90, H - 70
    spacing = (right - left) / n
    width = spacing * float(rng.uniform(0.45, 0.7))
    title = str(rng.choice(TITLES))
    draw.text((W / 2, 40), title, fill=ink, font=_font(int(rng.integers(22, 30))), anchor="mm")
    for k in range(1, 5):  # gridlines, no tick numbers
        y = base - (base - top) * k / 4
        for x in range(left, right, 8):
            draw.line((x, y, x + 4, y), fill=(120, 120, 125), width=1)
    draw.line((left, base, right, base), fill=ink, width=2)
    lo, hi = PALETTES[int(rng.integers(len(PALETTES)))]
    value_size, label_size = int(rng.integers(16, 25)), int(rng.integers(15, 23))
    truth_bars: list[dict[str, Any]] = []
    for i, (label, value) in enumerate(zip(labels, values, strict=True)):
        cx = left + spacing * (i + 0.5)
        y_top = base - (base - top - 30) * value / 100
        x1, x2 = cx - width / 2, cx + width / 2
        steps = max(int(base - y_top), 1)
        for s in range(steps):  # vertical gradient fill
            t = s / steps
            col = _rgb255(tuple(a * (1 - t) + b * t for a, b in zip(lo, hi, strict=True)))
            draw.line((x1, base - s, x2, base - s), fill=col)
        draw.rounded_rectangle((x1, y_top, x2, base), radius=min(6, width / 4), outline=col)
        draw.text((cx, y_top - 6), str(value), fill=ink, font=_font(value_size), anchor="md")
        draw.text((cx, base + 8), label, fill=ink, font=_font(label_size), anchor="mt")
        value_box = draw.textbbox((cx, y_top - 6), str(value), font=_font(value_size), anchor="md")
        label_box = draw.textbbox((cx, base + 8), label, font=_font(label_size), anchor="mt")
        xyxy = [round(x1, 2), round(y_top, 2), round(x2, 2), base]
        truth_bars.append({"label": label, "value": value, "xyxy_px": xyxy,
                           "value_box_px": value_box, "label_box_px": label_box})  # fmt: skip
    arr: np.ndarray = np.asarray(img, np.float32) / 255.0
    angle = float(rng.uniform(-2.5, 2.5))
    rot = cv2.getRotationMatrix2D((W / 2, H / 2), angle, 1.0)
    arr = cv2.warpAffine(arr, rot, (W, H), borderMode=cv2.BORDER_REFLECT)
    for bar in truth_bars:
        for key in ("xyxy_px", "value_box_px", "label_box_px"):
            x1, y1, x2, y2 = bar[key]
            pts = np.array([[x1, y1, 1], [x2, y1, 1], [x2, y2, 1], [x1, y2, 1]]) @ rot.T
            bar[key] = [round(float(v), 2) for v in (*pts.min(axis=0), *pts.max(axis=0))]
    image = _surface.develop(rng, arr, blur_max=0.7)
    picks = rng.choice(n, size=2, replace=False)
    hard, answers = [], {f"{item_id}/g1": "pass"}
    claims = []
    for k, i in enumerate(picks):
        said = values[i] if rng.random() < 0.5 else int(values[i] + rng.choice([-1, 1]) *
                                                         rng.integers(3, 20))  # fmt: skip
        said = said if 1 <= said <= 99 else values[i]
        claims.append(f"{labels[i]} = {said}")
        qid = f"h{k + 1}"
        hard.append({
            "id": qid, "ask": f"Is bar {labels[i]} labelled {said}?", "uses": "g1",
            "check": f"any(v.text == '{said}' and abs(v.cx - q.cx) < {spacing * 0.45:.1f} and "
                     f"v.cy < q.cy for v in elements for q in elements if q.text == "
                     f"'{labels[i]}')",
            "tags": {"track": "hard"},
        })  # fmt: skip
        answers[f"{item_id}/{qid}"] = "pass" if said == values[i] else "fail"
    program = _program({
        "id": item_id,
        "prompt": f"A bar chart titled '{title}' of {n} bars ({labels[0]} to {labels[-1]}), "
                  f"each labelled with its value ({', '.join(claims)}).",
        "tags": {"scene": "bars", "difficulty": DIFFICULTY, "axis": "text"},
        "gates": [{
            "id": "g1", "ask": f"Are the bars labelled {labels[0]}, {labels[1]}, ...?",
            "ground": {"helper": "text", "target": "every text line",
                       "fields": {"text": {"type": "string", "minLength": 1},
                                  "confidence": {"type": "number", "minimum": 0.8,
                                                 "maximum": 1}},
                       "proposer": "ocr", "budget": 2, "min_count": 2 * n},
            "check": f"any(e.text == '{labels[0]}' for e in elements)",
            "tags": {"track": "easy"},
        }],
        "hard": hard,
    })  # fmt: skip
    truth = {"title": title, "bars": truth_bars, "dark": dark, "angle_deg": round(angle, 2),
             "answers": answers}  # fmt: skip
    return Scene(item_id, "bars", DIFFICULTY, seed, image, truth, [program])


LETTERS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
DIAL_FACES = (
    ((0.95, 0.93, 0.86), (0.10, 0.10, 0.12)),
    ((0.12, 0.14, 0.20), (0.92, 0.92, 0.90)),
    ((0.86, 0.90, 0.92), (0.15, 0.20, 0.35)),
    ((0.30, 0.22, 0.15), (0.95, 0.88, 0.70)),
)


def compass(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A compass dial with ticks, eight letters and one tapered needle, on a textured table."""
    table, base = _surface.backdrop(rng, H, W, _surface.TEXTURES)
    s = 2  # draw at 2x, average down
    radius = float(rng.uniform(150, 200))
    cx = float(rng.uniform(radius + 15, W - radius - 15))
    cy = float(rng.uniform(radius + 15, H - radius - 15))
    layer = Image.new("RGBA", (W * s, H * s), (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    face, ink = DIAL_FACES[int(rng.integers(len(DIAL_FACES)))]
    bezel = _rgb255(tuple(v * float(rng.uniform(0.5, 0.9)) for v in _sprites.METALS["brass"][0]))
    C, R = (cx * s, cy * s), radius * s
    draw.ellipse((C[0] - R, C[1] - R, C[0] + R, C[1] + R), fill=(*bezel, 255))
    r_face = R * 0.92
    draw.ellipse((C[0] - r_face, C[1] - r_face, C[0] + r_face, C[1] + r_face),
                 fill=(*_rgb255(face), 255))  # fmt: skip
    step = int(rng.choice([5, 10, 15]))
    for deg in range(0, 360, step):
        t = np.radians(deg)
        major = deg % 45 == 0
        r0 = r_face * (0.86 if major else 0.91)
        p0 = (C[0] + r0 * np.sin(t), C[1] - r0 * np.cos(t))
        p1 = (C[0] + r_face * 0.97 * np.sin(t), C[1] - r_face * 0.97 * np.cos(t))
        draw.line((*p0, *p1), fill=(*_rgb255(ink), 255), width=3 if major else 2)
    big, small = int(rng.integers(22, 32)) * s, int(rng.integers(14, 20)) * s
    boxes: dict[str, list[float]] = {}
    for k, letter in enumerate(LETTERS):
        t = np.radians(45 * k)
        rr = r_face * 0.7
        px, py = C[0] + rr * np.sin(t), C[1] - rr * np.cos(t)
        font = _font(big if len(letter) == 1 else small)
        bb = draw.textbbox((px, py), letter, font=font, anchor="mm")
        draw.text((px, py), letter, fill=(*_rgb255(ink), 255), font=font, anchor="mm")
        boxes[letter] = [round(v / s, 1) for v in bb]
    target = int(rng.integers(0, 8))
    bearing = (45 * target + float(rng.uniform(-10, 10))) % 360
    length = r_face * float(rng.uniform(0.55, 0.68))
    tail = length * float(rng.uniform(0.18, 0.42))
    half_w = r_face * float(rng.uniform(0.035, 0.06))
    t = np.radians(bearing)
    ux, uy = np.sin(t), -np.cos(t)
    px, py = -uy, ux
    tip = (C[0] + ux * length, C[1] + uy * length)
    back = (C[0] - ux * tail, C[1] - uy * tail)
    left = (C[0] + px * half_w, C[1] + py * half_w)
    right = (C[0] - px * half_w, C[1] - py * half_w)
    front_col = _rgb255((0.80, 0.12, 0.12)) if rng.random() < 0.6 else _rgb255(ink)
    off = s * float(rng.uniform(2, 5))
    draw.polygon([(x + off, y + off) for x, y in (tip, left, back, right)], fill=(0, 0, 0, 90))
    draw.polygon([tip, left, right], fill=(*front_col, 255))
    draw.polygon([back, left, right], fill=(*_rgb255((0.55, 0.55, 0.58)), 255))
    hub = r_face * 0.06
    draw.ellipse((C[0] - hub, C[1] - hub, C[0] + hub, C[1] + hub), fill=(*bezel, 255))
    rgba = np.asarray(layer.resize((W, H), Image.Resampling.BOX), np.float32) / 255.0
    _surface.composite(base, rgba, 0, 0, _shadow(rng, radius * 0.3))
    image = _surface.develop(rng, base, blur_max=0.9)
    asked = target if rng.random() < 0.5 else (target + int(rng.integers(1, 8))) % 8
    letter = LETTERS[asked]
    program = _program({
        "id": item_id,
        "prompt": f"A compass on {table} with the letters {', '.join(LETTERS)} whose needle "
                  f"points at {letter}.",
        "tags": {"scene": "compass", "difficulty": DIFFICULTY, "axis": "spatial"},
        "gates": [{
            "id": "g1", "ask": "Does the compass have a needle?",
            "ground": {"helper": "line", "target": "the needle, from its tail to its tip",
                       "fields": {"bearing_deg": {"type": "number", "minimum": 0,
                                                  "maximum": 360}},
                       "proposer": "opencv.lines", "budget": 2, "min_count": 1,
                       "max_count": 1},
            "check": "count(elements) == 1", "tags": {"track": "easy"},
        }],
        "hard": [{
            "id": "h1", "ask": f"Does the needle point at {letter}?", "uses": "g1",
            "check": f"count(elements) == 1 and all(abs((e.bearing_deg - {45 * asked} + 540) "
                     f"% 360 - 180) < 22.5 for e in elements)",
            "tags": {"track": "hard"},
        }],
    })  # fmt: skip
    answers = {
        f"{item_id}/g1": "pass",
        f"{item_id}/h1": "pass" if asked == target else "fail",
    }
    truth = {
        "table": table, "letters": list(LETTERS), "letter_boxes_px": boxes,
        "target": LETTERS[target], "bearing_deg": round(bearing, 3),
        "center_px": [round(cx, 2), round(cy, 2)], "radius_px": round(radius, 2),
        "needle_px": [[round(v / s, 2) for v in back], [round(v / s, 2) for v in tip]],
        "answers": answers,
    }  # fmt: skip
    return Scene(item_id, "compass", DIFFICULTY, seed, image, truth, [program])


SUN_COLOURS = {"yellow": (1.0, 0.84, 0.12), "gold": (1.0, 0.70, 0.10), "orange": (1.0, 0.52, 0.08)}
GROUNDS = {
    "meadow": (0.30, 0.62, 0.20),
    "forest": (0.10, 0.36, 0.14),
    "olive fields": (0.42, 0.50, 0.16),
}


def sun(item_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A glowing sun over textured green land, above or touching a slightly uneven horizon."""
    horizon = int(rng.uniform(0.55, 0.75) * H)
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    top = np.array([0.15, 0.30, 0.62]) * rng.uniform(0.8, 1.1)
    low = np.array([0.78, 0.86, 0.95]) * rng.uniform(0.9, 1.05)
    t = np.clip(yy / max(horizon, 1), 0, 1)[..., None]
    img = (top[None, None, :] * (1 - t) + low[None, None, :] * t).astype(np.float32)
    for _ in range(int(rng.integers(0, 4))):  # soft grey-white clouds, away from the sun later
        mask = _surface.fractal(rng, H, W, 2.0)
        cloud = np.clip((mask - 0.62) * 4, 0, 1) * (yy < horizon - 20)
        img = img * (1 - 0.8 * cloud[..., None]) + 0.93 * 0.8 * cloud[..., None]
    colour_name = str(rng.choice(list(SUN_COLOURS)))
    colour = np.array(SUN_COLOURS[colour_name], np.float32)
    r = float(rng.uniform(28, 55))
    touching = bool(rng.random() < 0.5)
    if touching:
        cy = horizon - r + float(rng.uniform(0.15, 1.1)) * r
    else:
        gap = float(rng.uniform(max(30.0, 0.7 * r), max(31.0, horizon - 2 * r - 15)))
        cy = horizon - r - gap
    cx = float(rng.uniform(r + 20, W - r - 20))
    dist = np.hypot(xx - cx, yy - cy)
    glow = np.exp(-np.clip(dist - r, 0, None) / (0.25 * r)) * 0.3 * (dist > r)
    img = img * (1 - glow[..., None]) + colour * glow[..., None]
    disc = np.clip(r - dist + 0.5, 0, 1)[..., None]
    img = img * (1 - disc) + colour * disc
    ground_name = str(rng.choice(list(GROUNDS)))
    shade = np.array(GROUNDS[ground_name], np.float32)
    amp = float(rng.uniform(0, 4))
    line = horizon + amp * np.sin(xx[0] / rng.uniform(40, 120) + rng.uniform(0, 6))
    texture = 0.75 + 0.5 * _surface.fractal(rng, H, W, 12.0)
    land = (yy >= line[None, :]).astype(np.float32)[..., None]
    img = img * (1 - land) + (shade * texture[..., None]) * land
    image = _surface.develop(rng, img, blur_max=1.0)
    said_touching = touching if rng.random() < 0.5 else not touching
    where = "touching the horizon" if said_touching else "high above the horizon"
    program = _program({
        "id": item_id,
        "prompt": f"A {colour_name} sun {where} over {ground_name}.",
        "tags": {"scene": "sun", "difficulty": DIFFICULTY, "axis": "spatial"},
        "gates": [{
            "id": "g1", "ask": "Is there a sun in the sky?",
            "ground": {"helper": "boundary", "target": "the sun and the ground below the horizon",
                       "fields": {"label": {"type": "string", "enum": ["sun", "ground"]}},
                       "proposer": "opencv.color_region",
                       "params": {"ranges": [
                           {"label": "sun", "hsv_lower": [5, 120, 150],
                            "hsv_upper": [35, 255, 255]},
                           {"label": "ground", "hsv_lower": [35, 60, 35],
                            "hsv_upper": [90, 255, 255]}]},
                       "budget": 2, "min_count": 2, "max_count": 2},
            "check": "any(e.label == 'sun' for e in elements)", "tags": {"track": "easy"},
        }],
        "hard": [{
            "id": "h1", "ask": f"Is the sun {where}?", "uses": "g1",
            "check": ("any(s.label == 'sun' and g.label == 'ground' and s.y2 >= g.y1 - 6 "
                      "for s in elements for g in elements)") if said_touching else
                     ("any(e.label == 'sun' for e in elements) and any(e.label == 'ground' "
                      "for e in elements) and not any(s.label == 'sun' and g.label == 'ground' "
                      "and s.y2 >= g.y1 - 6 for s in elements for g in elements)"),
            "tags": {"track": "hard"},
        }],
    })  # fmt: skip
    answers = {
        f"{item_id}/g1": "pass",
        f"{item_id}/h1": "pass" if said_touching == touching else "fail",
    }
    truth = {
        "sun": {"center_px": [round(cx, 2), round(cy, 2)], "radius_px": round(r, 2),
                "colour": colour_name,
                "xyxy_px": [round(cx - r, 2), round(cy - r, 2), round(cx + r, 2),
                            round(min(cy + r, horizon), 2)]},
        "horizon_y_px": horizon, "ground": ground_name, "touching": touching,
        "answers": answers,
    }  # fmt: skip
    return Scene(item_id, "sun", DIFFICULTY, seed, image, truth, [program])
