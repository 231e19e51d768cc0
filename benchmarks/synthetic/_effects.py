"""Image effects shared by the scene generators: noise, blur, light, rotation, clutter, JPEG.

Every effect takes the scene's own ``numpy.random.Generator`` so a seed fixes
the bytes. Effects never change what the truth says: clutter is drawn in colours
and shapes the scene's targets do not have, and rotations move the truth geometry
with the pixels.
"""

from __future__ import annotations

import cv2
import numpy as np

Difficulty = str
DIFFICULTIES: tuple[str, ...] = ("clean", "moderate", "hard")
SIZE_WH: tuple[int, int] = (640, 480)


def check_difficulty(difficulty: str) -> str:
    """Reject unknown difficulty names with the list of known ones."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; known: {', '.join(DIFFICULTIES)}")
    return difficulty


def noise(image: np.ndarray, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """Additive Gaussian sensor noise."""
    n = rng.normal(0.0, sigma, image.shape)
    return np.clip(image.astype(np.float32) + n, 0, 255).astype(np.uint8)


def blur(image: np.ndarray, sigma: float) -> np.ndarray:
    """Gaussian blur (defocus)."""
    return np.asarray(cv2.GaussianBlur(image, (0, 0), sigmaX=sigma))


def light_gradient(
    image: np.ndarray, rng: np.random.Generator, low: float, high: float
) -> np.ndarray:
    """Multiply by a linear brightness ramp in a random direction (uneven lighting)."""
    h, w = image.shape[:2]
    angle = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    t = (xx - w / 2) * np.cos(angle) + (yy - h / 2) * np.sin(angle)
    t = (t - t.min()) / max(float(t.max() - t.min()), 1.0)
    gain = low + (high - low) * t
    out: np.ndarray = np.clip(image.astype(np.float32) * gain[:, :, None], 0, 255)
    return out.astype(np.uint8)


def jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """Round-trip through JPEG at the given quality (block artefacts)."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise ValueError("could not encode JPEG")
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    if decoded is None:
        raise ValueError("could not decode JPEG")
    return np.asarray(decoded)


def rotation_matrix(angle_deg: float, size_wh: tuple[int, int] = SIZE_WH) -> np.ndarray:
    """2x3 affine matrix rotating about the image centre."""
    w, h = size_wh
    return cv2.getRotationMatrix2D((w / 2, h / 2), angle_deg, 1.0)


def rotate(image: np.ndarray, matrix: np.ndarray) -> np.ndarray:
    """Rotate the whole image, filling the corners by replicating the border."""
    h, w = image.shape[:2]
    out = cv2.warpAffine(
        image, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    )
    return np.asarray(out)


def move_points(points: np.ndarray | list[list[float]], matrix: np.ndarray) -> np.ndarray:
    """Apply a 2x3 affine matrix to an (n, 2) array of points."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    moved: np.ndarray = pts @ matrix[:, :2].T + matrix[:, 2]
    return moved


def xyxy_of(points: np.ndarray) -> list[float]:
    """Axis-aligned bounds of points, rounded to 0.01 px."""
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    return [round(float(v), 2) for v in (*pts.min(axis=0), *pts.max(axis=0))]


def degrade(image: np.ndarray, difficulty: str, rng: np.random.Generator) -> np.ndarray:
    """The photometric part of a difficulty: light, noise, blur, JPEG."""
    if difficulty == "clean":
        return image
    if difficulty == "moderate":
        image = light_gradient(image, rng, 0.8, 1.1)
        image = blur(image, rng.uniform(0.6, 1.0))
        return noise(image, rng, rng.uniform(3.0, 6.0))
    image = light_gradient(image, rng, 0.75, 1.15)
    image = blur(image, rng.uniform(0.7, 1.1))
    image = noise(image, rng, rng.uniform(5.0, 9.0))
    return jpeg(image, int(rng.integers(35, 61)))


def random_colour(rng: np.random.Generator, saturated: bool = True) -> tuple[int, int, int]:
    """A BGR colour; saturated ones have a low minimum channel (never white, grey or black)."""
    hue = int(rng.integers(0, 180))
    sat = int(rng.integers(170, 256)) if saturated else int(rng.integers(40, 120))
    val = int(rng.integers(150, 240))
    hsv = np.array([[[hue, sat, val]]], dtype=np.uint8)
    b, g, r = cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0]
    return int(b), int(g), int(r)


def _smooth_noise(rng: np.random.Generator, size_wh: tuple[int, int], scale: float) -> np.ndarray:
    """Zero-mean, unit-spread noise smoothed over ``scale`` pixels (float32, h x w)."""
    w, h = size_wh
    small = rng.normal(0.0, 1.0, (max(2, int(h / scale)), max(2, int(w / scale)))).astype(
        np.float32
    )
    out = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    return np.asarray((out - out.mean()) / max(float(out.std()), 1e-6))


def wood_grain(rng: np.random.Generator, size_wh: tuple[int, int]) -> np.ndarray:
    """Wood: warped light and dark stripes along a random direction, brown or grey tint."""
    w, h = size_wh
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, np.pi)
    t = xx * np.cos(a) + yy * np.sin(a) + 18.0 * _smooth_noise(rng, size_wh, 60.0)
    period = rng.uniform(7.0, 22.0)
    stripes = 0.5 + 0.5 * np.sin(2 * np.pi * t / period) ** 3
    base = np.array(
        rng.choice([(40, 80, 130), (60, 110, 160), (30, 55, 90), (90, 120, 140)]), np.float32
    ) * rng.uniform(0.8, 1.3)
    grain = 0.75 + 0.35 * stripes + 0.08 * _smooth_noise(rng, size_wh, 4.0)
    out: np.ndarray = np.clip(base[None, None, :] * grain[:, :, None], 0, 255).astype(np.uint8)
    return out


def cloth(rng: np.random.Generator, size_wh: tuple[int, int]) -> np.ndarray:
    """Woven cloth: a fine two-direction weave plus blotches, in one muted colour."""
    w, h = size_wh
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(3.0, 6.0)
    weave = np.sin(2 * np.pi * xx / period) * np.sin(2 * np.pi * yy / period)
    blotch = _smooth_noise(rng, size_wh, 40.0)
    base = np.array(random_colour(rng, saturated=False), np.float32) * rng.uniform(0.35, 0.9)
    gain = 1.0 + 0.12 * weave + 0.1 * blotch
    out: np.ndarray = np.clip(base[None, None, :] * gain[:, :, None], 0, 255).astype(np.uint8)
    return out


def photo_texture(rng: np.random.Generator, size_wh: tuple[int, int]) -> np.ndarray:
    """A tinted scikit-image texture (brick, grass, gravel); cloudy noise without scikit-image."""
    w, h = size_wh
    try:
        from skimage import data

        grey = getattr(data, str(rng.choice(["brick", "grass", "gravel"])))()
        grey = cv2.resize(np.asarray(grey), (w, h), interpolation=cv2.INTER_LINEAR)
        grey = grey.astype(np.float32) / 255.0
    except ImportError:
        grey = 0.5 + 0.15 * _smooth_noise(rng, size_wh, 25.0)
    tint = np.array(random_colour(rng, saturated=False), np.float32)
    gain = 0.55 + 0.7 * grey
    out: np.ndarray = np.clip(tint[None, None, :] * gain[:, :, None], 0, 255).astype(np.uint8)
    return out
