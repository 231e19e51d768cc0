"""Held-out scenes read from marks and text: bar charts, compasses and clocks."""

from __future__ import annotations

import math
from typing import Any

import cv2
import numpy as np

from groundeval.benchmarks.synthetic import _clock
from groundeval.benchmarks.synthetic._common import Scene, verdict, wrong_int
from groundeval.benchmarks.synthetic.heldout import _canvas as cv
from groundeval.benchmarks.synthetic.heldout import _programs as prog

DIFFICULTY = "heldout"
BAR_COLOURS: dict[str, tuple[float, float, float]] = {
    "blue": (0.18, 0.38, 0.78),
    "orange": (0.95, 0.55, 0.12),
    "green": (0.2, 0.62, 0.3),
    "purple": (0.5, 0.3, 0.65),
    "red": (0.82, 0.2, 0.2),
    "teal": (0.1, 0.55, 0.58),
    "grey": (0.45, 0.45, 0.48),
}
TITLES = ("Quarterly sales", "Units shipped", "Sign-ups per quarter", "Orders", "Tickets closed")


def _r(v: float) -> float:
    return round(float(v), 2)


def _paper(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    tone = cv.random_rgb(rng, 0.86, 1.0)
    grain = cv.fbm(rng, h, w, base=8, octaves=3)[..., None] * 0.06 - 0.03
    return cv.f32(np.clip(tone[None, None, :] + grain, 0, 1))


def _move(points: list[list[float]], m: np.ndarray) -> np.ndarray:
    p = np.asarray(points, np.float64)
    q = np.hstack([p, np.ones((len(p), 1))]) @ m.T
    return np.asarray(q[:, :2] / q[:, 2:3], np.float64)


def _box_of(box: list[float], m: np.ndarray) -> list[float]:
    x0, y0, x1, y1 = box
    q = _move([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], m)
    return [_r(q[:, 0].min()), _r(q[:, 1].min()), _r(q[:, 0].max()), _r(q[:, 1].max())]


def bars(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A labelled bar chart on paper, photographed at a slight angle onto a surface."""
    w = int(rng.integers(620, 961))
    h = round(w * float(rng.uniform(0.62, 0.85)))
    chart = _paper(rng, w, h)
    n = int(rng.integers(3, 7))
    values = [int(v) for v in rng.integers(10, 100, n)]
    colour_name = str(rng.choice(list(BAR_COLOURS)))
    base_colour = np.array(BAR_COLOURS[colour_name], np.float32)
    title = str(rng.choice(TITLES))
    left, right = w * float(rng.uniform(0.1, 0.16)), w * float(rng.uniform(0.9, 0.96))
    base_y = h * float(rng.uniform(0.8, 0.86))
    top_y = h * 0.2
    unit = (base_y - top_y) / 100
    slot = (right - left) / n
    bar_w = slot * float(rng.uniform(0.5, 0.85))
    text_h = float(rng.uniform(15, 24))
    _, face = cv.text_mask("0", text_h, rng)
    ink = cv.random_rgb(rng, 0.0, 0.25)
    fill = ("solid", "gradient", "hatched")[int(rng.integers(0, 3))]
    inside_values = bool(rng.random() < 0.3)
    if rng.random() < 0.6:
        for v in range(20, 101, 20):
            y = base_y - v * unit
            seg = cv.in_segment(np.array([left, y]), np.array([right, y]), 1.2)
            cv.paint(chart, (left, y - 2, right, y + 2), cv.flat(np.array([0.8, 0.8, 0.8]), seg))
            mask, _ = cv.text_mask(str(v), text_h * 0.75, rng, face)
            cv.stamp(chart, mask, left - mask.shape[1] / 2 - 10, y, np.array([0.4, 0.4, 0.4]))
    title_mask, _ = cv.text_mask(title, text_h * 1.3, rng, face)
    title_box = cv.stamp(chart, title_mask, w / 2, h * 0.08, ink)
    drawn: list[dict[str, Any]] = []
    for i, value in enumerate(values):
        cx = left + slot * (i + 0.5)
        top = base_y - value * unit
        colour = base_colour * float(rng.uniform(0.85, 1.1)) if rng.random() < 0.3 else base_colour
        colour = np.clip(colour, 0, 1)
        x0, x1 = cx - bar_w / 2, cx + bar_w / 2

        def shade(
            xs: np.ndarray,
            ys: np.ndarray,
            c: np.ndarray = colour,
            t: float = top,
            a: float = x0,
            b: float = x1,
        ) -> tuple[np.ndarray, np.ndarray]:
            inside = (xs >= a) & (xs <= b) & (ys >= t) & (ys <= base_y)
            rgb = np.broadcast_to(c, (*xs.shape, 3)).copy()
            if fill == "gradient":
                rgb *= (0.75 + 0.25 * (ys - t) / max(base_y - t, 1))[..., None]
            elif fill == "hatched":
                stripe = ((xs + ys) % 10) < 3
                rgb = np.where(stripe[..., None], rgb * 0.7, rgb)
            return inside.astype(np.float32), rgb

        cv.paint(chart, (x0, top, x1, base_y), shade)
        v_mask, _ = cv.text_mask(str(value), text_h, rng, face)
        if inside_values and value * unit > 2.2 * text_h:
            v_ink = np.array([1, 1, 1]) if cv.luminance(colour) < 0.55 else np.array([0, 0, 0])
            v_box = cv.stamp(chart, v_mask, cx, top + text_h * 0.9, v_ink)
        else:
            v_box = cv.stamp(chart, v_mask, cx, top - text_h * 0.8, ink)
        label = f"Q{i + 1}"
        l_mask, _ = cv.text_mask(label, text_h, rng, face)
        l_box = cv.stamp(chart, l_mask, cx, base_y + text_h * 1.1, ink)
        drawn.append(
            {
                "label": label,
                "value": value,
                "xyxy_px": [x0, top, x1, base_y],
                "value_box_px": v_box,
                "label_box_px": l_box,
            }
        )
    axis = cv.in_segment(np.array([left - 6, base_y]), np.array([right, base_y]), 2.0)
    cv.paint(chart, (left - 8, base_y - 2, right + 2, base_y + 2), cv.flat(ink, axis))
    # photograph the page: a mild perspective onto a surface that shows around it
    surface_name, img = cv.surface(rng, w, h)
    tol = round(slot * 0.45, 1)
    for _ in range(20):
        m = _page_transform(rng, w, h)
        moved = [
            (_move([_centre(b["value_box_px"])], m)[0], _move([_centre(b["label_box_px"])], m)[0])
            for b in drawn
        ]
        if all(abs(v[0] - q[0]) < 0.6 * tol and v[1] < q[1] for v, q in moved):
            break
    else:  # pragma: no cover - 20 draws of a mild transform always include one that fits
        m = np.eye(3)
    page = cv2.warpPerspective(chart, m, (w, h), flags=cv2.INTER_LINEAR, borderValue=(-1, -1, -1))
    mask = cv2.warpPerspective(np.ones((h, w), np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    img = img * (1 - mask[..., None]) + np.clip(page, 0, 1) * mask[..., None]
    bgr, effects = cv.finish(img, rng, blur_max=0.8, strong=False)
    for b in drawn:
        for key in ("xyxy_px", "value_box_px", "label_box_px"):
            b[key] = _box_of(b[key], m)
    picks = [int(i) for i in rng.choice(n, size=2, replace=False)]
    claims = []
    answers = {f"{scene_id}/g1": "pass"}
    for qn, i in enumerate(picks, start=1):
        value = drawn[i]["value"]
        claim = value if rng.random() < 0.6 else wrong_int(rng, value, 10, 99, 5)
        claims.append((str(drawn[i]["label"]), claim))
        answers[f"{scene_id}/h{qn}"] = verdict(claim == value)
    program = prog.bars(scene_id, DIFFICULTY, colour_name, title, n, tol, claims)
    truth = {
        "title": title,
        "title_box_px": _box_of(title_box, m),
        "colour": colour_name,
        "bars": drawn,
        "fill": fill,
        "values_inside": inside_values,
        "surface": surface_name,
        "page_transform": [[round(float(v), 6) for v in row] for row in m],
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "bars", DIFFICULTY, seed, bgr, truth, [program])


def _centre(box: list[float]) -> list[float]:
    return [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2]


def _page_transform(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A homography that shrinks the page a little, turns it up to 2 degrees and tilts it."""
    s = float(rng.uniform(0.86, 0.96))
    jitter = rng.uniform(-0.015, 0.015, (4, 2)) * np.array([w, h])
    src = cv.f32([[0, 0], [w, 0], [w, h], [0, h]])
    c = np.array([w / 2, h / 2])
    a = math.radians(float(rng.uniform(-2, 2)))
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    shift = rng.uniform(-0.02, 0.02, 2) * np.array([w, h])
    dst = cv.f32([c + rot @ ((p - c) * s) + shift + j for p, j in zip(src, jitter, strict=True)])
    return np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)


def _bearing_point(cx: float, cy: float, bearing: float, dist: float) -> np.ndarray:
    a = math.radians(bearing)
    return np.array([cx + dist * math.sin(a), cy - dist * math.cos(a)])


def _dial(
    img: np.ndarray,
    rng: np.random.Generator,
    cx: float,
    cy: float,
    radius: float,
    muted: bool = False,
) -> np.ndarray:
    """A bezel and a face (light or dark, never saturated); returns the face colour.

    ``muted`` keeps the bezel's saturation low too (a clock's hands are found by colour).
    """
    bezel = cv.random_rgb(rng, 0.2, 0.8)
    if muted:
        bezel = cv.f32(bezel.mean() + 0.3 * (bezel - bezel.mean()))
    light = rng.random() < 0.7
    face = cv.random_rgb(rng, 0.82, 0.98) if light else cv.random_rgb(rng, 0.08, 0.2)
    mask = np.zeros(img.shape[:2], np.float32)
    cv2.circle(
        mask, (round(cx * 4), round(cy * 4)), round(radius * 1.1 * 4), 1.0, -1, cv2.LINE_AA, 2
    )
    cv.soft_shadow(img, mask, radius * 0.04, radius * 0.06, radius * 0.05, 0.45)

    def ring(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        d = np.hypot(xs - cx, ys - cy) / radius
        lum = 0.75 + 0.35 * ((cy - ys) / radius) * np.sign(d - 1.05)
        rgb = np.clip(bezel * lum[..., None], 0, 1)
        rgb = np.where((d <= 1.0)[..., None], face, rgb)
        return (d <= 1.1).astype(np.float32), rgb

    r = radius * 1.1
    cv.paint(img, (cx - r, cy - r, cx + r, cy + r), ring, ss=2)
    return face


def compass(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """A compass on a surface; the needle (tip marked by shape or colour) points at a letter."""
    w, h = cv.canvas_size(rng, 520, 820)
    surface_name, img = cv.surface(rng, w, h)
    radius = min(w, h) * float(rng.uniform(0.32, 0.4))
    cx = w / 2 + float(rng.uniform(-0.5, 0.5)) * (w / 2 - radius * 1.15)
    cy = h / 2 + float(rng.uniform(-0.5, 0.5)) * (h / 2 - radius * 1.15)
    face = _dial(img, rng, cx, cy, radius)
    ink = np.array([0.1, 0.1, 0.1]) if cv.luminance(face) > 0.5 else np.array([0.92, 0.92, 0.9])
    letters = list(_compass_letters(rng))
    step = 360.0 / len(letters)
    turn = float(rng.uniform(-2.5, 2.5))
    for k in range(72):
        a = k * 5.0 + turn
        long = k % 2 == 0
        seg = cv.in_segment(
            _bearing_point(cx, cy, a, radius * (0.9 if long else 0.94)),
            _bearing_point(cx, cy, a, radius * 0.98),
            1.6 if long else 1.0,
        )
        p = _bearing_point(cx, cy, a, radius * 0.94)
        cv.paint(img, (p[0] - 8, p[1] - 8, p[0] + 8, p[1] + 8), cv.flat(ink, seg))
    letter_boxes = {}
    size = radius * float(rng.uniform(0.13, 0.18))
    _, face_style = cv.text_mask("N", size, rng)
    for i, letter in enumerate(letters):
        p = _bearing_point(cx, cy, i * step + turn, radius * 0.76)
        mask, _ = cv.text_mask(letter, size * (1 if len(letter) == 1 else 0.72), rng, face_style)
        colour = np.array([0.8, 0.1, 0.1]) if letter == "N" and rng.random() < 0.5 else ink
        letter_boxes[letter] = cv.stamp(img, mask, float(p[0]), float(p[1]), colour, -turn)
    target = int(rng.integers(0, len(letters)))
    bearing = (target * step + turn + float(rng.uniform(-8, 8))) % 360
    tip = _bearing_point(cx, cy, bearing, radius * float(rng.uniform(0.55, 0.64)))
    tail = _bearing_point(cx, cy, bearing + 180, radius * float(rng.uniform(0.2, 0.5)))
    look = _needle(img, rng, cx, cy, radius, bearing, tip, tail)
    bgr, effects = cv.finish(img, rng, blur_max=1.0)
    asked = int(rng.integers(0, len(letters))) if rng.random() < 0.4 else target
    program = prog.compass(scene_id, DIFFICULTY, letters, asked)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(asked == target)}
    truth = {
        "letters": letters,
        "letter_boxes_px": letter_boxes,
        "target": letters[target],
        "bearing_deg": round(bearing, 3),
        "dial_turn_deg": round(turn, 3),
        "center_px": [_r(cx), _r(cy)],
        "radius_px": _r(radius),
        "needle_px": [[_r(v) for v in tail], [_r(v) for v in tip]],
        "needle_look": look,
        "surface": surface_name,
        "effects": effects,
        "answers": answers,
    }
    return Scene(scene_id, "compass", DIFFICULTY, seed, bgr, truth, [program])


def _compass_letters(rng: np.random.Generator) -> tuple[str, ...]:
    if rng.random() < 0.5:
        return ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
    return ("N", "E", "S", "W")


def _needle(
    img: np.ndarray,
    rng: np.random.Generator,
    cx: float,
    cy: float,
    radius: float,
    bearing: float,
    tip: np.ndarray,
    tail: np.ndarray,
) -> str:
    """Draw one needle whose tip a person tells from its tail; returns its look."""
    look = ("arrow", "two-tone", "pointer")[int(rng.integers(0, 3))]
    main = cv.random_rgb(rng, 0.0, 0.3) if rng.random() < 0.5 else np.array([0.78, 0.1, 0.08])
    half = radius * float(rng.uniform(0.035, 0.06))
    side = _bearing_point(0, 0, bearing + 90, 1.0)
    centre = np.array([cx, cy])
    pieces: list[tuple[np.ndarray, np.ndarray]] = []
    if look == "arrow":
        head_base = tip - (tip - centre) / np.linalg.norm(tip - centre) * half * 4
        pieces.append(
            (np.array([tip, head_base + side * half * 2.2, head_base - side * half * 2.2]), main)
        )
        pieces.append(
            (
                np.array(
                    [
                        head_base + side * half * 0.5,
                        head_base - side * half * 0.5,
                        tail - side * half * 0.5,
                        tail + side * half * 0.5,
                    ]
                ),
                main,
            )
        )
        pieces.append(
            (
                np.array(
                    [
                        tail,
                        tail + side * half * 1.6 + (centre - tail) * 0.25,
                        tail + (centre - tail) * 0.15,
                        tail - side * half * 1.6 + (centre - tail) * 0.25,
                    ]
                ),
                main,
            )
        )
    elif look == "two-tone":
        main = np.array([0.8, 0.1, 0.08])  # the red half is the tip, as on real compasses
        pale = np.array([0.88, 0.88, 0.86]) if cv.luminance(main) < 0.5 else np.array([0.2] * 3)
        pieces.append(
            (np.array([tip, centre + side * half * 1.5, centre - side * half * 1.5]), main)
        )
        pieces.append(
            (np.array([tail, centre - side * half * 1.5, centre + side * half * 1.5]), pale)
        )
    else:
        pieces.append(
            (
                np.array(
                    [
                        tip,
                        centre + side * half,
                        tail + side * half * 0.6,
                        tail - side * half * 0.6,
                        centre - side * half,
                    ]
                ),
                main,
            )
        )
    for poly, colour in pieces:
        x0, y0 = poly.min(0)
        x1, y1 = poly.max(0)
        cv.paint(img, (x0, y0, x1, y1), cv.flat(colour, cv.in_polygon(poly)))
    if look == "pointer":
        r = half * 2.2
        disc = _disc(tail[0], tail[1], r)
        cv.paint(img, (tail[0] - r, tail[1] - r, tail[0] + r, tail[1] + r), cv.flat(main, disc))
    cap = half * float(rng.uniform(0.9, 1.5))
    cap_colour = cv.random_rgb(rng, 0.55, 0.85)
    cv.paint(img, (cx - cap, cy - cap, cx + cap, cy + cap), cv.flat(cap_colour, _disc(cx, cy, cap)))
    return look


def _disc(cx: float, cy: float, r: float) -> Any:
    return lambda xs, ys: np.hypot(xs - cx, ys - cy) <= r


def _hand(
    img: np.ndarray,
    cx: float,
    cy: float,
    bearing: float,
    length: float,
    width: float,
    tail: float,
    shape: str,
    colour: np.ndarray,
) -> dict[str, list[float]]:
    tip = _bearing_point(cx, cy, bearing, length)
    end = _bearing_point(cx, cy, bearing + 180, tail)
    side = _bearing_point(0, 0, bearing + 90, 1.0)
    along = (tip - end) / np.linalg.norm(tip - end)
    hw = width / 2
    if shape == "taper":
        polys = [np.array([tip, end + side * hw, end - side * hw])]
    elif shape == "spade":
        bulge = tip - along * length * 0.22
        polys = [
            np.array(
                [
                    bulge + side * hw * 0.5,
                    end + side * hw * 0.5,
                    end - side * hw * 0.5,
                    bulge - side * hw * 0.5,
                ]
            ),
            np.array(
                [
                    tip,
                    bulge - along * length * 0.08 + side * hw * 1.8,
                    bulge - along * length * 0.16,
                    bulge - along * length * 0.08 - side * hw * 1.8,
                ]
            ),
        ]
    elif shape == "leaf":
        mid = end + (tip - end) * 0.45
        polys = [np.array([tip, mid + side * hw * 1.3, end, mid - side * hw * 1.3])]
    else:
        polys = [np.array([tip + side * hw, end + side * hw, end - side * hw, tip - side * hw])]
    for poly in polys:
        x0, y0 = poly.min(0)
        x1, y1 = poly.max(0)
        cv.paint(img, (x0, y0, x1, y1), cv.flat(colour, cv.in_polygon(poly)))
    return {"tail_px": [_r(v) for v in end], "tip_px": [_r(v) for v in tip]}


ROMAN = ("XII", "I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI")


def draw_clock(rng: np.random.Generator, minutes: int) -> tuple[np.ndarray, dict[str, Any]]:
    """A wall clock on a muted wall showing ``minutes``: blue hour hand, red minute hand."""
    w, h = cv.canvas_size(rng, 480, 820)
    surface_name, wall = cv.surface(rng, w, h)
    hsv = cv2.cvtColor(np.clip(wall, 0, 1).astype(np.float32), cv2.COLOR_RGB2HSV)
    hsv[..., 1] = np.minimum(hsv[..., 1], float(rng.uniform(0.05, 0.3)))
    hsv[..., 2] = np.clip(hsv[..., 2], 0.15, 0.95)
    img = cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB)
    radius = min(w, h) * float(rng.uniform(0.3, 0.42))
    cx = w / 2 + float(rng.uniform(-0.5, 0.5)) * (w / 2 - radius * 1.15)
    cy = h / 2 + float(rng.uniform(-0.5, 0.5)) * (h / 2 - radius * 1.15)
    face = _dial(img, rng, cx, cy, radius, muted=True)
    face_hsv = cv2.cvtColor(face[None, None, :], cv2.COLOR_RGB2HSV)[0, 0]
    if face_hsv[1] > 0.25:  # keep the face out of the hands' colour ranges
        face = np.full(3, float(face.mean()), np.float32)
    ink = np.array([0.08, 0.08, 0.08]) if cv.luminance(face) > 0.5 else np.array([0.92] * 3)
    for k in range(60):
        major = k % 5 == 0
        p0 = _bearing_point(cx, cy, k * 6.0, radius * (0.86 if major else 0.92))
        p1 = _bearing_point(cx, cy, k * 6.0, radius * 0.97)
        seg = cv.in_segment(p0, p1, radius * (0.022 if major else 0.009))
        cv.paint(
            img,
            (
                min(p0[0], p1[0]) - 6,
                min(p0[1], p1[1]) - 6,
                max(p0[0], p1[0]) + 6,
                max(p0[1], p1[1]) + 6,
            ),
            cv.flat(ink, seg),
        )
    numerals = ("arabic", "roman", "quarters", "none")[int(rng.integers(0, 4))]
    _, face_style = cv.text_mask("12", 10, rng)
    for k in range(12):
        if numerals == "none" or (numerals == "quarters" and k % 3):
            continue
        text = ROMAN[k] if numerals == "roman" else str(k or 12)
        mask, _ = cv.text_mask(text, radius * 0.13, rng, face_style)
        p = _bearing_point(cx, cy, k * 30.0, radius * 0.72)
        cv.stamp(img, mask, float(p[0]), float(p[1]), ink)
    hour_deg, minute_deg = _clock.hand_angles(minutes)
    second = rng.random() < 0.3
    shape = ("bar", "taper", "spade", "leaf")[int(rng.integers(0, 4))]
    tail = float(rng.uniform(0.08, 0.2)) if rng.random() < 0.6 else 0.03
    hour_rgb = cv.hsv_rgb(rng.uniform(107, 118), rng.uniform(200, 250), rng.uniform(140, 225))
    minute_rgb = cv.hsv_rgb(rng.uniform(2, 5), rng.uniform(205, 250), rng.uniform(165, 230))
    hands = {
        "hour": _hand(
            img, cx, cy, hour_deg, radius * 0.5, radius * 0.075, radius * tail, shape, hour_rgb
        ),
        "minute": _hand(
            img, cx, cy, minute_deg, radius * 0.8, radius * 0.05, radius * tail, shape, minute_rgb
        ),
    }
    if second:
        _hand(
            img,
            cx,
            cy,
            float(rng.uniform(0, 360)),
            radius * 0.85,
            radius * 0.012,
            radius * 0.2,
            "bar",
            np.array([0.1, 0.1, 0.1]),
        )
    cap = radius * 0.045
    cv.paint(
        img,
        (cx - cap, cy - cap, cx + cap, cy + cap),
        cv.flat(cv.random_rgb(rng, 0.1, 0.3), _disc(cx, cy, cap)),
    )
    bgr, effects = cv.finish(img, rng, blur_max=0.9, strong=False)
    geometry = {
        "center_px": [_r(cx), _r(cy)],
        "radius_px": _r(radius),
        "hands": hands,
        "time": _clock.text_of(minutes),
        "hand_shape": shape,
        "numerals": numerals,
        "second_hand": bool(second),
        "surface": surface_name,
        "effects": effects,
    }
    return bgr, geometry


def clock(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Symbolic: a clock showing a named time; some images show another time."""
    shown = _clock._random_time(rng)
    claim = shown if rng.random() < 0.6 else _clock._wrong_time(rng, shown)
    img, geometry = draw_clock(rng, shown)
    program = prog.clock(scene_id, DIFFICULTY, claim)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(claim == shown)}
    return Scene(
        scene_id, "clock", DIFFICULTY, seed, img, {**geometry, "answers": answers}, [program]
    )


def clock_world(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """World knowledge: the clock must show when a historical event happened."""
    event, fact_time, rationale = _clock.WORLD_FACTS[int(rng.integers(0, len(_clock.WORLD_FACTS)))]
    truth_t = _clock.parse(fact_time)
    shown = truth_t if rng.random() < 0.6 else _clock._wrong_time(rng, truth_t)
    img, geometry = draw_clock(rng, shown)
    program = prog.clock_world(scene_id, DIFFICULTY, event, fact_time, rationale)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(shown == truth_t)}
    return Scene(
        scene_id, "clock_world", DIFFICULTY, seed, img, {**geometry, "answers": answers}, [program]
    )


def clock_counterfactual(scene_id: str, seed: int, rng: np.random.Generator) -> Scene:
    """Counterfactual: a moved meeting; wrong images show the original time."""
    while True:
        base = _clock._random_time(rng)
        shift = int(rng.choice([-1, 1])) * int(rng.integers(3, 30)) * 5
        target = (base + shift) % 720
        if _clock.readable(target):
            break
    shown = target if rng.random() < 0.6 else base
    img, geometry = draw_clock(rng, shown)
    program = prog.clock_counterfactual(scene_id, DIFFICULTY, base, shift)
    answers = {f"{scene_id}/g1": "pass", f"{scene_id}/h1": verdict(shown == target)}
    return Scene(
        scene_id,
        "clock_counterfactual",
        DIFFICULTY,
        seed,
        img,
        {**geometry, "answers": answers},
        [program],
    )
