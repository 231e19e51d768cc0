"""Surfaces and the camera: procedural textures, photographs, shadows, light, lens and JPEG.

Images are float32 RGB in 0..1 until :func:`develop` turns them into the
8-bit BGR a proposer sees (through a real JPEG round trip).
"""

from __future__ import annotations

import functools

import cv2
import numpy as np

Rgb = tuple[float, float, float]

TEXTURES = ("wood", "cloth", "clouds", "brick", "grass", "gravel")
"""Backgrounds every scene may use; ``photo`` (blurred scikit-image photographs) is extra."""

WOODS: dict[str, tuple[Rgb, Rgb]] = {
    "oak": ((0.62, 0.45, 0.27), (0.45, 0.30, 0.16)),
    "walnut": ((0.36, 0.24, 0.15), (0.22, 0.14, 0.08)),
    "pine": ((0.80, 0.66, 0.45), (0.66, 0.50, 0.30)),
    "cherry": ((0.55, 0.28, 0.18), (0.40, 0.18, 0.10)),
}
CLOTHS: dict[str, Rgb] = {
    "felt green": (0.10, 0.38, 0.20),
    "navy": (0.12, 0.16, 0.34),
    "burgundy": (0.42, 0.10, 0.16),
    "slate": (0.32, 0.34, 0.38),
    "sand": (0.72, 0.64, 0.50),
    "teal": (0.08, 0.38, 0.40),
}


def value_noise(rng: np.random.Generator, h: int, w: int, cells: float) -> np.ndarray:
    """Smooth noise in 0..1 with about ``cells`` features across the height."""
    gh = max(2, round(cells))
    gw = max(2, round(cells * w / h))
    grid = rng.random((gh + 2, gw + 2)).astype(np.float32)
    big = cv2.resize(grid, (w + 2 * w // gw, h + 2 * h // gh), interpolation=cv2.INTER_CUBIC)
    y0, x0 = h // gh, w // gw
    return np.clip(big[y0 : y0 + h, x0 : x0 + w], 0, 1)


def fractal(rng: np.random.Generator, h: int, w: int, base: float, octaves: int = 4) -> np.ndarray:
    """Sum of value-noise octaves, normalised to 0..1."""
    total = np.zeros((h, w), np.float32)
    for k in range(octaves):
        total += value_noise(rng, h, w, base * 2**k) / 2**k
    lo, hi = float(total.min()), float(total.max())
    return (total - lo) / max(hi - lo, 1e-6)


def _mix(a: Rgb, b: Rgb, t: np.ndarray) -> np.ndarray:
    ca, cb = np.array(a, np.float32), np.array(b, np.float32)
    return np.asarray(ca[None, None, :] * (1 - t[..., None]) + cb[None, None, :] * t[..., None])


def wood(rng: np.random.Generator, h: int, w: int, kind: str) -> np.ndarray:
    """Planks of grain: stretched noise bent into rings, with plank seams."""
    light, dark = WOODS[kind]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    vertical = rng.random() < 0.5
    along, across = (yy, xx) if vertical else (xx, yy)
    plank = float(rng.uniform(70, 140))
    warp = value_noise(rng, h, w, 3) * rng.uniform(20, 60)
    rings = 0.5 + 0.5 * np.sin((across + warp + along * 0.02) / rng.uniform(3.0, 7.0))
    fibre = value_noise(rng, h, w, 60) * 0.35
    t = np.clip(rings**3 * 0.7 + fibre, 0, 1)
    img = _mix(light, dark, t)
    seam = (np.abs(((across + 0.5 * plank) % plank) - 0.5 * plank) > 0.5 * plank - 1.2).astype(
        np.float32
    )
    img *= 1 - 0.35 * seam[..., None]
    tone = 0.9 + 0.2 * value_noise(rng, h, w, 2)
    return np.asarray(img * tone[..., None], np.float32)


def cloth(rng: np.random.Generator, h: int, w: int, colour: Rgb) -> np.ndarray:
    """A woven fabric: a fine over-under weave, fibre noise and soft folds."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    pitch = float(rng.uniform(2.5, 4.5))
    weave = 0.5 + 0.25 * np.sin(xx * np.pi / pitch) * np.sin(yy * np.pi / pitch)
    fibres = rng.normal(0, 0.06, (h, w)).astype(np.float32)
    folds = 0.85 + 0.3 * value_noise(rng, h, w, 2.5)
    t = (0.8 + 0.4 * weave + fibres) * folds
    return np.asarray(np.array(colour, np.float32)[None, None, :] * t[..., None], np.float32)


def clouds(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A cloudy gradient between two random muted colours."""
    a = tuple(float(v) for v in rng.uniform(0.15, 0.8, 3))
    b = tuple(float(v) for v in rng.uniform(0.15, 0.8, 3))
    t = fractal(rng, h, w, 2.5) * 0.7 + np.linspace(0, 0.3, h, dtype=np.float32)[:, None]
    return _mix(a, b, np.clip(t, 0, 1))  # type: ignore[arg-type]


@functools.lru_cache(maxsize=16)
def _skimage(name: str) -> np.ndarray:
    try:
        import skimage.data
    except ImportError as exc:  # the dev extra
        raise ImportError(
            "the out-of-style benchmark needs scikit-image (pip install 'groundeval[dev]')"
        ) from exc
    img = np.asarray(getattr(skimage.data, name)(), np.float32) / 255.0
    if img.ndim == 2:
        img = np.stack([img] * 3, axis=2)
    return np.ascontiguousarray(img[:, :, :3])


def photo_texture(rng: np.random.Generator, h: int, w: int, name: str) -> np.ndarray:
    """A scikit-image photograph (texture or scene), scaled, cropped, tinted and softened."""
    img = _skimage(name)
    scale = max(h / img.shape[0], w / img.shape[1]) * float(rng.uniform(1.0, 1.5))
    big = cv2.resize(img, (int(img.shape[1] * scale) + 1, int(img.shape[0] * scale) + 1))
    y0 = int(rng.integers(0, big.shape[0] - h + 1))
    x0 = int(rng.integers(0, big.shape[1] - w + 1))
    out = big[y0 : y0 + h, x0 : x0 + w]
    if name in ("brick", "grass", "gravel"):  # grey textures: tint, keep the detail faint
        tint = rng.uniform(0.35, 0.85, 3).astype(np.float32)
        out = (0.55 + 0.45 * out) * tint[None, None, :]
    else:  # scenes: soften so they read as an out-of-focus backdrop
        out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(2.5, 5.0)))
        out = 0.25 + 0.55 * out
    return np.asarray(out, np.float32)


PHOTOS = ("coffee", "chelsea", "rocket")


def backdrop(
    rng: np.random.Generator, h: int, w: int, kinds: tuple[str, ...]
) -> tuple[str, np.ndarray]:
    """A named background of one of ``kinds`` (``wood``, ``cloth``, ``clouds``, photo names)."""
    kind = str(rng.choice(list(kinds)))
    if kind == "wood":
        grain = str(rng.choice(list(WOODS)))
        return f"{grain} wood", wood(rng, h, w, grain)
    if kind == "cloth":
        name = str(rng.choice(list(CLOTHS)))
        return f"{name} cloth", cloth(rng, h, w, CLOTHS[name])
    if kind == "clouds":
        return "cloudy gradient", clouds(rng, h, w)
    if kind == "photo":
        name = str(rng.choice(list(PHOTOS)))
        return f"photo: {name}", photo_texture(rng, h, w, name)
    return f"{kind} texture", photo_texture(rng, h, w, kind)


def composite(
    base: np.ndarray, rgba: np.ndarray, x0: int, y0: int, shadow: tuple[float, float, float] | None
) -> None:
    """Alpha-composite a premultiplied-free RGBA sprite at (x0, y0), casting its shadow first.

    ``shadow`` is ``(dx, dy, opacity)`` in pixels; the shadow is the sprite's
    alpha, offset and blurred, darkening what lies below it.
    """
    h, w = base.shape[:2]
    sh, sw = rgba.shape[:2]
    alpha = rgba[:, :, 3]
    if shadow is not None:
        dx, dy, opacity = shadow
        pad = int(abs(dx) + abs(dy) + 12)
        canvas = np.zeros((sh + 2 * pad, sw + 2 * pad), np.float32)
        ox, oy = pad + round(dx), pad + round(dy)
        canvas[oy : oy + sh, ox : ox + sw] = alpha
        sigma = max(1.0, 0.25 * (abs(dx) + abs(dy)))
        canvas = cv2.GaussianBlur(canvas, (0, 0), sigma) * opacity
        _blend(base, np.zeros((*canvas.shape, 3), np.float32), canvas, x0 - pad, y0 - pad)
    _blend(base, rgba[:, :, :3], alpha, x0, y0)
    del h, w


def _blend(base: np.ndarray, rgb: np.ndarray, alpha: np.ndarray, x0: int, y0: int) -> None:
    h, w = base.shape[:2]
    sh, sw = alpha.shape
    bx0, by0 = max(x0, 0), max(y0, 0)
    bx1, by1 = min(x0 + sw, w), min(y0 + sh, h)
    if bx1 <= bx0 or by1 <= by0:
        return
    a = alpha[by0 - y0 : by1 - y0, bx0 - x0 : bx1 - x0, None]
    src = rgb[by0 - y0 : by1 - y0, bx0 - x0 : bx1 - x0]
    region = base[by0:by1, bx0:bx1]
    base[by0:by1, bx0:bx1] = region * (1 - a) + src * a


def develop(rng: np.random.Generator, img: np.ndarray, blur_max: float = 1.2) -> np.ndarray:
    """Light falloff, a colour cast, lens blur, sensor noise, JPEG: 8-bit BGR out."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    lx, ly = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
    dist = np.hypot(xx - lx, yy - ly) / np.hypot(w, h)
    light = float(rng.uniform(1.0, 1.15)) - float(rng.uniform(0.1, 0.4)) * dist
    cast = np.array([1.0 + rng.uniform(-0.06, 0.06), 1.0, 1.0 + rng.uniform(-0.06, 0.06)])
    out = img * light[..., None] * cast.astype(np.float32)[None, None, :]
    sigma = float(rng.uniform(0.0, blur_max))
    if sigma > 0.3:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    out = out + rng.normal(0, rng.uniform(0.0, 0.015), out.shape).astype(np.float32)
    bgr = np.clip(out[:, :, ::-1] * 255 + 0.5, 0, 255).astype(np.uint8)
    quality = int(rng.integers(55, 93))
    ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR))
