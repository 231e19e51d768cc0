"""Backdrops and the finish of the probe style: studio gradients, cloths, slate, JPEG.

A canvas is float32 BGR in 0-255 so layers (shadows, reflections, objects) blend
without rounding; :func:`finish` brings it to the 8-bit image a model would hand in.
"""

from __future__ import annotations

import cv2
import numpy as np

SIZES_WH = [(512, 512), (768, 512), (640, 480), (1024, 768), (600, 800), (960, 540)]
LOOKS = ("studio", "flat", "painterly")
SURFACES = ("gradient", "gingham", "stripes", "polka", "linen", "slate")
_BACKDROPS = {  # BGR: top and bottom of a studio sweep
    "white": ((246, 246, 246), (205, 205, 210)),
    "grey": ((170, 170, 172), (105, 105, 110)),
    "pastel blue": ((240, 222, 200), (205, 180, 150)),
    "pastel pink": ((222, 212, 246), (185, 170, 220)),
    "dark": ((70, 66, 64), (22, 20, 20)),
}
_CLOTHS = [(60, 60, 190), (150, 90, 40), (70, 140, 60), (40, 160, 220), (120, 60, 120)]


def backdrop(
    rng: np.random.Generator, size_wh: tuple[int, int], look: str
) -> tuple[np.ndarray, str]:
    """The empty scene and its surface's name (the program says what the objects lie on)."""
    w, h = size_wh
    surface = "gradient" if look == "studio" else str(rng.choice(SURFACES))
    if surface == "gradient":
        name = str(rng.choice(list(_BACKDROPS)))
        top, bottom = (np.array(c, np.float32) for c in _BACKDROPS[name])
        t = np.linspace(0, 1, h, dtype=np.float32)[:, None, None] ** 1.5
        img = np.broadcast_to(top + (bottom - top) * t, (h, w, 3)).copy()
        return img, f"{name} studio backdrop"
    base = np.array(_CLOTHS[int(rng.integers(len(_CLOTHS)))], np.float32)
    light = base * 0.35 + 255 * 0.65
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = float(rng.uniform(24, 60))
    if surface == "gingham":
        bands = ((xx // period) % 2) + ((yy // period) % 2)
        img = light + (base - light)[None, None] * (bands[..., None] / 2)
    elif surface == "stripes":
        t = np.deg2rad(rng.uniform(0, 180))
        on = ((xx * np.cos(t) + yy * np.sin(t)) // period) % 2
        img = light + (base - light)[None, None] * on[..., None]
    elif surface == "polka":
        img = np.broadcast_to(base, (h, w, 3)).copy()
        dot = np.clip(base + 40, 0, 255)  # low contrast, far smaller than a pip
        for y in np.arange(period / 2, h, period):
            shift = period / 2 if int(y // period) % 2 else 0.0
            for x in np.arange(period / 4 + shift, w, period):
                cv2.circle(img, (int(x), int(y)), 2, tuple(float(v) for v in dot), -1, cv2.LINE_AA)
    elif surface == "linen":
        noise = rng.normal(0, 1, (h, w)).astype(np.float32)
        weave = cv2.GaussianBlur(noise, (0, 0), 1.2) * 25
        img = light[None, None] * 0.8 + weave[..., None]
    else:  # slate
        noise = np.asarray(cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 6))
        noise = noise * 60
        img = np.full((h, w, 3), (58, 56, 52), np.float32) + noise[..., None]
    return np.clip(img, 0, 255).astype(
        np.float32
    ), f"{surface} {'cloth' if surface != 'slate' else 'board'}"


def finish(img: np.ndarray, rng: np.random.Generator, look: str) -> np.ndarray:
    """Painterly strokes and warmth, noise, sometimes a vignette, then a JPEG round trip."""
    h, w = img.shape[:2]
    if look == "painterly":
        img = cv2.GaussianBlur(img, (0, 0), 1.6)
        strokes = cv2.blur(rng.normal(0, 1, (h, w)).astype(np.float32), (9, 2)) * 18
        img = img + strokes[..., None]
        img = img * np.array([0.88, 0.98, 1.08], np.float32)  # warm grade (BGR)
    img = img + rng.normal(0, float(rng.uniform(1, 4)), img.shape).astype(np.float32)
    if rng.random() < 0.5:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        r = np.hypot((xx - w / 2) / (w / 2), (yy - h / 2) / (h / 2))
        img = img * (1 - 0.35 * np.clip(r - 0.5, 0, 1))[..., None]
    out = np.clip(img, 0, 255).astype(np.uint8)
    quality = int(rng.integers(55, 96))
    ok, data = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    assert ok
    return np.asarray(cv2.imdecode(data, cv2.IMREAD_COLOR))
