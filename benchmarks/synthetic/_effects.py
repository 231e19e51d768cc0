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
