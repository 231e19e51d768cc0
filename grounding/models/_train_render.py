"""Domain-randomised dice scenes for training the detector (not the benchmark's renderer).

Every draw is random within wide bounds so the detector learns "a rounded square
with dots on it" rather than one renderer's look: any face colour with lighter or
darker pips of any size, rounded corners, rotation and perspective, cast
shadows, backgrounds cut from scikit-image's bundled photographs or made from
noise, stripes and gradients, distractor shapes (discs, bars, rings), uneven
lighting, blur, sensor noise and JPEG. Drawing is OpenCV polygons mapped
through a homography; it shares no code with ``benchmarks/synthetic``.
"""

from __future__ import annotations

import functools
from typing import Any

import cv2
import numpy as np

PIP_LAYOUT: dict[int, list[tuple[float, float]]] = {
    1: [(0, 0)],
    2: [(-1, -1), (1, 1)],
    3: [(-1, -1), (0, 0), (1, 1)],
    4: [(-1, -1), (1, -1), (-1, 1), (1, 1)],
    5: [(-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)],
    6: [(-1, -1), (-1, 0), (-1, 1), (1, -1), (1, 0), (1, 1)],
}
"""Pip centres in units of the pip spacing, face centre at the origin."""

PHOTOS = (
    "astronaut", "coffee", "chelsea", "rocket", "camera", "moon", "brick", "grass", "gravel",
    "hubble_deep_field", "immunohistochemistry", "retina", "page", "text", "clock", "cell",
)  # fmt: skip
"""scikit-image's bundled images used as backgrounds (none is downloaded)."""


@functools.lru_cache(maxsize=1)
def photos() -> tuple[np.ndarray, ...]:
    """The bundled scikit-image photographs as BGR uint8 (greys stacked to three channels)."""
    import skimage.data

    out = []
    for name in PHOTOS:
        try:
            im = np.asarray(getattr(skimage.data, name)())
        except Exception:  # a data file missing from this scikit-image build
            continue
        if im.ndim == 2:
            im = np.stack([im] * 3, axis=2)
        out.append(np.ascontiguousarray(im[:, :, 2::-1].astype(np.uint8)))
    if not out:
        raise RuntimeError("scikit-image's bundled images are needed for the training scenes")
    return tuple(out)


def _noise(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    grid = rng.random((cells, max(2, round(cells * w / h)))).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A photograph crop, a noise field, stripes or a two-colour gradient (float32 BGR 0-255)."""
    kind = rng.choice(["photo", "photo", "noise", "stripes", "gradient"])
    if kind == "photo":
        im = photos()[int(rng.integers(len(photos())))]
        scale = max(h / im.shape[0], w / im.shape[1]) * rng.uniform(1.0, 1.8)
        big = cv2.resize(im, (int(im.shape[1] * scale) + 1, int(im.shape[0] * scale) + 1))
        y0 = int(rng.integers(0, big.shape[0] - h + 1))
        x0 = int(rng.integers(0, big.shape[1] - w + 1))
        out: np.ndarray = big[y0 : y0 + h, x0 : x0 + w].astype(np.float32)
        if rng.random() < 0.5:  # tint
            out = out * rng.uniform(0.6, 1.2, 3).astype(np.float32)
        if rng.random() < 0.4:
            out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(1, 4)))
        return np.asarray(np.clip(out, 0, 255), np.float32)
    a, b = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    if kind == "noise":
        t: np.ndarray = np.asarray(
            sum(_noise(rng, h, w, c) / (i + 1) for i, c in enumerate((3, 9, 27, 81))), np.float32
        )
        t = (t - t.min()) / max(float(np.ptp(t)), 1e-6)
    elif kind == "stripes":
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        angle = rng.uniform(0, np.pi)
        along = xx * np.cos(angle) + yy * np.sin(angle)
        warp = _noise(rng, h, w, 6) * rng.uniform(5, 40)
        t = 0.5 + 0.5 * np.sin((along + warp) / rng.uniform(2, 12))
        t = 0.7 * t + 0.3 * _noise(rng, h, w, 40)
    else:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        t = (xx / w * rng.uniform(-1, 1) + yy / h * rng.uniform(-1, 1)) % 1.0
    out = a[None, None, :] * (1 - t[..., None]) + b[None, None, :] * t[..., None]
    out += rng.normal(0, rng.uniform(0, 10), out.shape)
    return np.clip(out, 0, 255).astype(np.float32)


def _face_colours(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(face, pip) BGR: any hue; pips lighter or darker than the face, never close to it."""
    while True:
        face = rng.uniform(0, 255, 3)
        if rng.random() < 0.35:  # white / ivory / black are the common real faces
            face = rng.choice([[245, 245, 245], [205, 230, 240], [30, 30, 30]]) + rng.normal(
                0, 8, 3
            )
        pip = rng.uniform(0, 255, 3)
        if rng.random() < 0.6:
            pip = np.full(3, 20.0) if face.mean() > 128 else np.full(3, 235.0)
            pip = pip + rng.normal(0, 10, 3)
        if abs(float(face.mean() - pip.mean())) > 70:
            return np.clip(face, 0, 255), np.clip(pip, 0, 255)


def _rounded_square(radius_share: float, n: int = 6) -> np.ndarray:
    """Outline of a unit square (-1..1) with rounded corners."""
    r = 2 * radius_share
    pts = []
    for cx, cy, a0 in ((1 - r, 1 - r, 0), (-1 + r, 1 - r, 90), (-1 + r, -1 + r, 180),
                       (1 - r, -1 + r, 270)):  # fmt: skip
        for t in np.linspace(a0, a0 + 90, n):
            pts.append((cx + r * np.cos(np.radians(t)), cy + r * np.sin(np.radians(t))))
    return np.array(pts, np.float32)


def _project(h: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(pts.reshape(-1, 1, 2).astype(np.float32), h).reshape(-1, 2)


def _fill(img: np.ndarray, pts: np.ndarray, colour: Any) -> None:
    poly = np.round(pts * 16).astype(np.int32)
    cv2.fillPoly(img, [poly], colour, lineType=cv2.LINE_AA, shift=4)


def die(
    img: np.ndarray, shadow: np.ndarray, rng: np.random.Generator, cx: float, cy: float, side: float
) -> tuple[list[float], int]:
    """Draw one die face; return its box (visible outline) and pip count."""
    half = side / 2
    angle = rng.uniform(0, np.pi / 2)
    c, s = np.cos(angle), np.sin(angle)
    square = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32)
    corners = np.array(
        [[cx + half * (c * x - s * y), cy + half * (s * x + c * y)] for x, y in square]
    )
    corners += rng.normal(0, side * rng.uniform(0, 0.06), corners.shape)
    hom = cv2.getPerspectiveTransform(square, corners.astype(np.float32))
    outline = _project(hom, _rounded_square(rng.uniform(0.05, 0.22)))
    face, pip = _face_colours(rng)
    offset = rng.normal(0, side * 0.08, 2) + side * 0.06
    _fill(shadow, outline + offset, 1.0)
    edge = face * rng.uniform(0.55, 0.9)
    _fill(img, outline, edge.tolist())
    inner = _project(hom, _rounded_square(rng.uniform(0.05, 0.22)) * rng.uniform(0.86, 0.96))
    _fill(img, inner, face.tolist())
    pips = int(rng.integers(1, 7))
    spacing = rng.uniform(0.42, 0.56)
    radius = rng.uniform(0.11, 0.24)
    circle = np.array(
        [[np.cos(t), np.sin(t)] for t in np.linspace(0, 2 * np.pi, 16, endpoint=False)], np.float32
    )
    for px, py in PIP_LAYOUT[pips]:
        centre = np.array([px * spacing, py * spacing], np.float32)
        _fill(img, _project(hom, centre + circle * radius), pip.tolist())
    x1, y1 = outline.min(axis=0)
    x2, y2 = outline.max(axis=0)
    return [float(x1), float(y1), float(x2), float(y2)], pips


def distractor(
    img: np.ndarray, rng: np.random.Generator, cx: float, cy: float, size: float
) -> None:
    """A disc, a ring, a long bar or a dotted strip: things that are not dice."""
    colour = rng.uniform(0, 255, 3).tolist()
    kind = rng.choice(["disc", "ring", "bar", "dots"])
    centre = (round(cx), round(cy))
    if kind == "disc":
        cv2.circle(img, centre, round(size / 2), colour, -1, cv2.LINE_AA)
    elif kind == "ring":
        cv2.circle(img, centre, round(size / 2), colour, max(2, round(size / 10)), cv2.LINE_AA)
    elif kind == "bar":
        rect = ((cx, cy), (size * rng.uniform(1.8, 3.5), size * rng.uniform(0.25, 0.5)),
                rng.uniform(0, 180))  # fmt: skip
        _fill(img, cv2.boxPoints(rect), colour)
    else:
        dot = rng.uniform(0, 255, 3).tolist()
        for k in range(int(rng.integers(2, 6))):
            x = round(cx + (k - 2) * size * 0.3)
            cv2.circle(img, (x, round(cy)), max(2, round(size / 10)), dot, -1, cv2.LINE_AA)


def scene(seed: int) -> tuple[np.ndarray, list[list[float]], list[int]]:
    """One training image (BGR uint8, 640 x 480 or near) with its die boxes and pip counts."""
    rng = np.random.default_rng([seed, 0x71CE])
    h, w = int(rng.integers(420, 521)), int(rng.integers(560, 721))
    img = background(rng, h, w)
    shadow = np.zeros((h, w), np.float32)
    n = int(rng.integers(0, 9)) if rng.random() < 0.95 else 0
    side_mid = rng.uniform(30, 95)
    placed: list[tuple[float, float, float]] = []
    boxes: list[list[float]] = []
    pips: list[int] = []
    for _ in range(n * 30):
        if len(placed) >= n:
            break
        side = float(np.clip(side_mid * rng.uniform(0.85, 1.15), 24, 110))
        cx, cy = rng.uniform(side, w - side), rng.uniform(side, h - side)
        reach = side * 0.78
        if any(np.hypot(cx - x, cy - y) < reach + r + rng.uniform(1, 10) for x, y, r in placed):
            continue
        placed.append((cx, cy, reach))
    distractors = []
    for _ in range(int(rng.integers(0, 5))):
        size = rng.uniform(15, 80)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        if all(np.hypot(cx - x, cy - y) > r + size * 0.8 for x, y, r in placed):
            distractors.append((cx, cy, size))
    # shadows first (under everything), then distractors and dice
    layer = img.copy()
    for cx, cy, size in distractors:
        distractor(layer, rng, cx, cy, size)
    for cx, cy, reach in placed:
        xyxy, count = die(layer, shadow, rng, cx, cy, reach / 0.78)
        boxes.append(xyxy)
        pips.append(count)
    soft = cv2.GaussianBlur(shadow, (0, 0), float(rng.uniform(2, 8)))
    strength = rng.uniform(0.2, 0.6)
    drawn = np.any(np.abs(layer - img) > 0.5, axis=2)
    img = np.where(drawn[..., None], layer, img * (1 - strength * soft[..., None]))
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    tilt = rng.uniform(0, 6.3)
    ramp = (xx / w - 0.5) * np.cos(tilt) + (yy / h - 0.5) * np.sin(tilt)
    light = 1 + rng.uniform(-0.35, 0.35) * ramp
    img = img * light[..., None] * rng.uniform(0.7, 1.15)
    if rng.random() < 0.6:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.3, 1.6)))
    img = img + rng.normal(0, rng.uniform(0, 8), img.shape)
    out = np.clip(img, 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(35, 96))])
    if ok:
        out = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    clipped = [[max(b[0], 0), max(b[1], 0), min(b[2], w), min(b[3], h)] for b in boxes]
    return out, clipped, pips
