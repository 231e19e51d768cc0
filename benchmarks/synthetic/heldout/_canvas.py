"""Canvas, surfaces, anti-aliased painting, text and camera effects of the held-out style.

Everything is float RGB in [0, 1] until :func:`finish` turns it into BGR bytes
through a JPEG round trip. Shapes are painted by *shaders*: functions of the
sub-pixel sample coordinates returning coverage and colour, averaged over a
supersampling grid, so edges are anti-aliased at any scale and rotation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache
from typing import Any

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

Shader = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]
"""(xs, ys) sample coordinates -> (coverage in [0, 1], RGB in [0, 1]) at those samples."""

ASPECTS = ((4, 3), (3, 2), (16, 9), (1, 1), (5, 4), (3, 4))
PHOTOS = (
    "coffee",
    "chelsea",
    "rocket",
    "astronaut",
    "brick",
    "grass",
    "gravel",
    "hubble_deep_field",
    "immunohistochemistry",
    "camera",
    "moon",
    "text",
)


def f32(a: Any) -> np.ndarray:
    """Any array-like as a float32 array (keeps arithmetic on images typed)."""
    return np.asarray(a, np.float32)


def canvas_size(rng: np.random.Generator, low: int = 520, high: int = 900) -> tuple[int, int]:
    """(width, height) of a new image: a random long side and a common aspect ratio."""
    a, b = ASPECTS[int(rng.integers(0, len(ASPECTS)))]
    long_side = int(rng.integers(low, high + 1))
    if a >= b:
        return long_side, max(300, round(long_side * b / a))
    return max(300, round(long_side * a / b)), long_side


def fbm(rng: np.random.Generator, h: int, w: int, base: int = 4, octaves: int = 5) -> np.ndarray:
    """Fractal value noise in [0, 1] (Perlin-like): octaves of upsampled random grids."""
    out = np.zeros((h, w), np.float32)
    amp, total = 1.0, 0.0
    for k in range(octaves):
        cells = base * 2**k
        grid = rng.random((cells + 3, cells + 3)).astype(np.float32)
        up = cv2.resize(
            grid, (w + 2 * w // cells, h + 2 * h // cells), interpolation=cv2.INTER_CUBIC
        )
        out += amp * up[h // cells : h // cells + h, w // cells : w // cells + w]
        total += amp
        amp *= 0.55
    out /= total
    lo, hi = float(out.min()), float(out.max())
    return (out - lo) / max(hi - lo, 1e-6)


def _two_tone(noise: np.ndarray, c1: np.ndarray, c2: np.ndarray) -> np.ndarray:
    return f32(c1[None, None, :] * (1 - noise[..., None]) + c2[None, None, :] * noise[..., None])


def random_rgb(rng: np.random.Generator, lo: float = 0.0, hi: float = 1.0) -> np.ndarray:
    """A random colour with every channel in [lo, hi]."""
    return rng.uniform(lo, hi, 3).astype(np.float32)


@cache
def _photo(name: str) -> np.ndarray:
    try:
        import skimage.data
    except ImportError as exc:  # pragma: no cover - scikit-image is a dev dependency
        raise ImportError(
            "the held-out synthetic style draws scikit-image photographs as backgrounds: "
            "pip install scikit-image (or groundeval[dev])"
        ) from exc
    img = np.asarray(getattr(skimage.data, name)())
    if img.ndim == 2:
        img = np.repeat(img[..., None], 3, axis=2)
    return np.ascontiguousarray(img[..., :3]).astype(np.float32) / 255.0


def photo_surface(rng: np.random.Generator, w: int, h: int) -> tuple[str, np.ndarray]:
    """A crop of a scikit-image photograph, rotated, rescaled, recoloured and defocused."""
    name = PHOTOS[int(rng.integers(0, len(PHOTOS)))]
    src = _photo(name)
    sh, sw = src.shape[:2]
    angle = float(rng.uniform(-180, 180))
    frac = float(rng.uniform(0.35, 0.7))
    side = max(8, int(min(sh, sw) * frac))
    y0 = int(rng.integers(0, sh - side + 1))
    x0 = int(rng.integers(0, sw - side + 1))
    crop = src[y0 : y0 + side, x0 : x0 + side]
    m = cv2.getRotationMatrix2D((side / 2, side / 2), angle, 1.45)
    crop = cv2.warpAffine(crop, m, (side, side), borderMode=cv2.BORDER_REFLECT)
    out = cv2.resize(crop, (w, h), interpolation=cv2.INTER_CUBIC)
    out = recolour(rng, np.clip(out, 0, 1))
    contrast = float(rng.uniform(0.35, 0.75))
    mean = out.mean(axis=(0, 1), keepdims=True)
    out = mean + contrast * (out - mean)
    sigma = float(rng.uniform(0.8, 4.0))
    return name, cv2.GaussianBlur(out, (0, 0), sigma)


def recolour(rng: np.random.Generator, img: np.ndarray) -> np.ndarray:
    """Hue turn, saturation scale, or a grey tint: the same photo in other colours."""
    mode = int(rng.integers(0, 3))
    if mode == 0:
        return img
    hsv = cv2.cvtColor(np.clip(img, 0, 1).astype(np.float32), cv2.COLOR_RGB2HSV)
    if mode == 1:
        hsv[..., 0] = (hsv[..., 0] + float(rng.uniform(0, 360))) % 360
        hsv[..., 1] = np.clip(hsv[..., 1] * float(rng.uniform(0.5, 1.3)), 0, 1)
        return f32(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB))
    grey = hsv[..., 2:3]
    tint = random_rgb(rng, 0.5, 1.0)
    return f32(grey * tint[None, None, :])


def noise_surface(rng: np.random.Generator, w: int, h: int) -> tuple[str, np.ndarray]:
    """A procedural surface: cloudy fBm, wood grain, marble or woven cloth."""
    kind = ("clouds", "wood", "marble", "weave")[int(rng.integers(0, 4))]
    c1, c2 = random_rgb(rng, 0.05, 0.9), random_rgb(rng, 0.05, 0.9)
    n = fbm(rng, h, w, base=int(rng.integers(2, 6)))
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    turn = float(rng.uniform(0, math.pi))
    u = xs * math.cos(turn) + ys * math.sin(turn)
    v = -xs * math.sin(turn) + ys * math.cos(turn)
    if kind == "wood":
        period = float(rng.uniform(10, 30))
        t = 0.5 + 0.5 * np.sin((v + 40 * n) / period * 2 * math.pi)
        t = t**3 * 0.7 + 0.3 * n
    elif kind == "marble":
        t = 0.5 + 0.5 * np.sin(u / float(rng.uniform(40, 120)) + 6 * n)
    elif kind == "weave":
        p = float(rng.uniform(3, 7))
        t = 0.35 * (np.sin(u / p) * np.sin(v / p) + 1) + 0.3 * n
    else:
        t = n
    return kind, _two_tone(np.clip(t, 0, 1).astype(np.float32), c1, c2)


def gradient_surface(rng: np.random.Generator, w: int, h: int) -> tuple[str, np.ndarray]:
    """A linear or radial studio gradient with a little grain."""
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    if rng.random() < 0.5:
        a = float(rng.uniform(0, 2 * math.pi))
        t = (xs * math.cos(a) + ys * math.sin(a)) / (abs(w * math.cos(a)) + abs(h * math.sin(a)))
        t = t - t.min()
    else:
        cx, cy = float(rng.uniform(0, w)), float(rng.uniform(0, h))
        t = np.hypot(xs - cx, ys - cy) / math.hypot(w, h)
    t = np.clip(t / max(float(t.max()), 1e-6), 0, 1)
    out = _two_tone(t, random_rgb(rng, 0.05, 0.95), random_rgb(rng, 0.05, 0.95))
    return "gradient", out + rng.normal(0, 0.01, out.shape).astype(np.float32)


def surface(rng: np.random.Generator, w: int, h: int) -> tuple[str, np.ndarray]:
    """Any of the three surface families, at random."""
    r = rng.random()
    if r < 0.45:
        return photo_surface(rng, w, h)
    if r < 0.85:
        return noise_surface(rng, w, h)
    return gradient_surface(rng, w, h)


def paint(
    canvas: np.ndarray, xyxy: tuple[float, float, float, float], shader: Shader, ss: int = 3
) -> np.ndarray:
    """Composite a shader over ``canvas`` inside a box; returns the coverage painted (1x).

    The shader is evaluated on an ``ss`` x ``ss`` grid per pixel and averaged,
    which anti-aliases every edge. Returns a full-size coverage map.
    """
    h, w = canvas.shape[:2]
    x0, y0 = max(0, math.floor(xyxy[0]) - 1), max(0, math.floor(xyxy[1]) - 1)
    x1, y1 = min(w, math.ceil(xyxy[2]) + 1), min(h, math.ceil(xyxy[3]) + 1)
    cover = np.zeros((h, w), np.float32)
    if x1 <= x0 or y1 <= y0:
        return cover
    offs = (np.arange(ss, dtype=np.float32) + 0.5) / ss
    xs = (np.arange(x0, x1, dtype=np.float32)[:, None] + offs[None, :]).reshape(-1)
    ys = (np.arange(y0, y1, dtype=np.float32)[:, None] + offs[None, :]).reshape(-1)
    gx, gy = np.meshgrid(xs, ys)
    alpha, rgb = shader(gx, gy)
    alpha = np.clip(alpha, 0, 1)
    ph, pw = y1 - y0, x1 - x0
    a = alpha.reshape(ph, ss, pw, ss).mean(axis=(1, 3))
    c = (rgb * alpha[..., None]).reshape(ph, ss, pw, ss, 3).mean(axis=(1, 3))
    patch = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = c + patch * (1 - a[..., None])
    cover[y0:y1, x0:x1] = a
    return cover


def flat(colour: np.ndarray, inside: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Shader:
    """A shader of one colour over a boolean/float inside test."""

    def shade(xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a = inside(xs, ys).astype(np.float32)
        return a, np.broadcast_to(colour, (*xs.shape, 3))

    return shade


def in_polygon(poly: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Inside test of a convex polygon (any winding)."""
    p = np.asarray(poly, np.float64)
    area = 0.5 * float(np.sum(p[:, 0] * np.roll(p[:, 1], -1) - np.roll(p[:, 0], -1) * p[:, 1]))
    sign = 1.0 if area >= 0 else -1.0

    def inside(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        ok = np.ones(xs.shape, bool)
        for i in range(len(p)):
            ax, ay = p[i]
            bx, by = p[(i + 1) % len(p)]
            ok &= sign * ((bx - ax) * (ys - ay) - (by - ay) * (xs - ax)) >= 0
        return ok

    return inside


def in_segment(a: np.ndarray, b: np.ndarray, width: float) -> Callable[..., np.ndarray]:
    """Inside test of a stroke from ``a`` to ``b`` with round caps."""
    ax, ay = float(a[0]), float(a[1])
    dx, dy = float(b[0]) - ax, float(b[1]) - ay
    ll = max(dx * dx + dy * dy, 1e-9)

    def inside(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
        t = np.clip(((xs - ax) * dx + (ys - ay) * dy) / ll, 0, 1)
        return np.hypot(xs - ax - t * dx, ys - ay - t * dy) <= width / 2

    return inside


def soft_shadow(
    canvas: np.ndarray, cover: np.ndarray, dx: float, dy: float, sigma: float, strength: float
) -> None:
    """Darken the canvas under a blurred, offset copy of an object's coverage."""
    m = np.array([[1, 0, dx], [0, 1, dy]], np.float32)
    moved = cv2.warpAffine(cover, m, (cover.shape[1], cover.shape[0]))
    blurred = cv2.GaussianBlur(moved, (0, 0), max(sigma, 0.5))
    canvas *= (1 - strength * np.clip(blurred, 0, 1))[..., None]


@cache
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def text_mask(
    text: str, height_px: float, rng: np.random.Generator, style: dict[str, float] | None = None
) -> tuple[np.ndarray, dict[str, float]]:
    """Coverage of a text line about ``height_px`` tall, in a randomly varied face.

    The face is Pillow's bundled font, varied by weight (stroke), slant (shear)
    and width (horizontal scale); pass ``style`` to reuse one face for a chart.
    """
    if style is None:
        style = {
            "stroke": float(rng.choice([0, 0, 1, 2])),
            "shear": float(rng.choice([0.0, 0.0, 0.18, -0.1])),
            "xscale": float(rng.uniform(0.8, 1.25)),
        }
    big = 96
    font = _font(big)
    stroke = int(style["stroke"]) * 3
    box = font.getbbox(text, stroke_width=stroke)
    tw, th = int(box[2] - box[0]) + 8, int(box[3] - box[1]) + 8
    img = Image.new("L", (tw, th), 0)
    ImageDraw.Draw(img).text(
        (4 - box[0], 4 - box[1]), text, fill=255, font=font, stroke_width=stroke, stroke_fill=255
    )
    arr = np.asarray(img, np.float32) / 255.0
    shear = style["shear"]
    extra = int(abs(shear) * th) + 2
    m = np.array([[1, -shear, extra if shear > 0 else 2], [0, 1, 0]], np.float32)
    arr = f32(cv2.warpAffine(arr, m, (tw + extra + 2, th), flags=cv2.INTER_LINEAR))
    scale = height_px / th
    out_w = max(2, round(arr.shape[1] * scale * style["xscale"]))
    out_h = max(2, round(th * scale))
    return cv2.resize(arr, (out_w, out_h), interpolation=cv2.INTER_AREA), style


def stamp(
    canvas: np.ndarray,
    mask: np.ndarray,
    cx: float,
    cy: float,
    colour: np.ndarray,
    angle_deg: float = 0.0,
) -> list[float]:
    """Composite a coverage mask centred at (cx, cy), turned by ``angle_deg``; returns its box."""
    h, w = canvas.shape[:2]
    mh, mw = mask.shape
    m = cv2.getRotationMatrix2D((mw / 2, mh / 2), angle_deg, 1.0)
    m[0, 2] += cx - mw / 2
    m[1, 2] += cy - mh / 2
    reach = math.hypot(mw, mh) / 2 + 2
    x0, y0 = max(0, math.floor(cx - reach)), max(0, math.floor(cy - reach))
    x1, y1 = min(w, math.ceil(cx + reach)), min(h, math.ceil(cy + reach))
    if x1 <= x0 or y1 <= y0:
        return [cx, cy, cx, cy]
    m[0, 2] -= x0
    m[1, 2] -= y0
    placed = f32(cv2.warpAffine(mask, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR))
    a = np.clip(placed, 0, 1)[..., None]
    patch = canvas[y0:y1, x0:x1]
    canvas[y0:y1, x0:x1] = patch * (1 - a) + colour[None, None, :] * a
    ys, xs = np.nonzero(placed > 0.25)
    if len(xs) == 0:
        return [cx, cy, cx, cy]
    return [
        float(xs.min() + x0),
        float(ys.min() + y0),
        float(xs.max() + 1 + x0),
        float(ys.max() + 1 + y0),
    ]


def hsv_rgb(h: float, s: float, v: float) -> np.ndarray:
    """RGB in [0, 1] of an OpenCV HSV triple (hue 0..180, saturation and value 0..255)."""
    px = np.array([[[round(h), round(s), round(v)]]], np.uint8)
    return f32(cv2.cvtColor(px, cv2.COLOR_HSV2RGB)[0, 0]) / 255.0


def luminance(c: np.ndarray) -> float:
    """Relative luminance (Rec. 709 weights) of an RGB colour in [0, 1]."""
    return float(0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2])


def distinct(
    rng: np.random.Generator,
    other: np.ndarray,
    min_dist: float = 0.45,
    lo: float = 0.0,
    hi: float = 1.0,
) -> np.ndarray:
    """A random colour clearly different from ``other`` (RGB distance and some luminance)."""
    for _ in range(200):
        c = random_rgb(rng, lo, hi)
        if np.linalg.norm(c - other) >= min_dist and abs(luminance(c) - luminance(other)) >= 0.12:
            return c
    return np.array([1, 1, 1]) if luminance(other) < 0.5 else np.array([0, 0, 0])


def finish(
    img: np.ndarray, rng: np.random.Generator, *, blur_max: float = 1.2, strong: bool = True
) -> tuple[np.ndarray, dict[str, float | str]]:
    """Camera and processing: light falloff, partial shade, cast, blur, noise, JPEG.

    ``strong=False`` keeps the light and colour changes small, for scenes whose
    program finds objects by colour range (the ranges are the program's inputs).
    Returns BGR uint8 and the effects applied (recorded in the truth).
    """
    h, w = img.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    fx: dict[str, float | str] = {}
    out = img.astype(np.float32)
    if rng.random() < 0.7:
        k = float(rng.uniform(0.15, 0.45 if strong else 0.2))
        r = np.hypot((xs - w / 2) / (w / 2), (ys - h / 2) / (h / 2)) / math.sqrt(2)
        out *= (1 - k * r**2)[..., None]
        fx["vignette"] = round(k, 3)
    if strong and rng.random() < 0.45:
        a = float(rng.uniform(0, 2 * math.pi))
        edge = (xs - w / 2) * math.cos(a) + (ys - h / 2) * math.sin(a)
        edge += 40 * (fbm(rng, h, w, base=2, octaves=3) - 0.5)
        soft = float(rng.uniform(8, 40))
        depth = float(rng.uniform(0.15, 0.35))
        shade = 1 - depth / (1 + np.exp(-(edge - float(rng.uniform(-0.3, 0.3)) * w) / soft))
        out *= shade[..., None]
        fx["partial_shade"] = round(depth, 3)
    spread = 0.13 if strong else 0.04
    cast = rng.uniform(1 - spread, 1 + spread * 0.9, 3).astype(np.float32)
    out *= cast[None, None, :]
    fx["cast"] = ",".join(f"{v:.2f}" for v in cast)
    if rng.random() < 0.35:
        length = int(rng.integers(3, 8))
        kern = np.zeros((length, length), np.float32)
        kern[length // 2, :] = 1.0
        m = cv2.getRotationMatrix2D(
            (length / 2 - 0.5, length / 2 - 0.5), float(rng.uniform(0, 180)), 1
        )
        kern = f32(cv2.warpAffine(kern, m, (length, length)))
        out = f32(cv2.filter2D(out, -1, kern / max(float(kern.sum()), 1e-6)))
        fx["motion_blur_px"] = length
    else:
        sigma = float(rng.uniform(0.3, blur_max))
        out = f32(cv2.GaussianBlur(out, (0, 0), sigma))
        fx["blur_sigma"] = round(sigma, 2)
    sd = float(rng.uniform(0.005, 0.025))
    out = out + rng.normal(0, sd, out.shape).astype(np.float32)
    fx["noise_sd"] = round(sd, 4)
    bgr = cv2.cvtColor(np.clip(out * 255 + 0.5, 0, 255).astype(np.uint8), cv2.COLOR_RGB2BGR)
    quality = int(rng.integers(40, 91))
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:  # pragma: no cover - OpenCV always encodes a valid uint8 image
        raise ValueError("could not encode JPEG")
    fx["jpeg_quality"] = quality
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8), fx
