"""What is not a die: the table surfaces the dice lie on, and the camera that shoots them.

Surfaces are procedural textures or crops of real photographs; every maker returns a float32
BGR image in [0, 255] and a short name for the truth. The textures are busy on purpose (grain,
grout lines, print, veins, photographs) so a proposer tuned on these pictures learns to ignore
clutter that looks a little like a die or a pip. The camera adds blur, noise and JPEG loss.
"""

from __future__ import annotations

import functools
import math
import string
from collections.abc import Callable

import cv2
import numpy as np

Table = tuple[np.ndarray, str]

# Photographs bundled with scikit-image (no download); the ones that fail to load are skipped.
PHOTOS = ("astronaut", "coffee", "chelsea", "rocket", "grass", "gravel", "brick")

_FELTS = {"green": (30, 112, 52), "blue": (28, 62, 132), "red": (128, 26, 34)}  # RGB
_WOODS = (
    ((212, 164, 112), (146, 92, 52)),
    ((150, 100, 64), (78, 46, 28)),
    ((224, 196, 150), (176, 136, 90)),
)
_TILES = ((236, 232, 222), (214, 196, 168), (178, 92, 60), (92, 98, 108), (70, 140, 150))
_MARBLES = {
    "carrara": ((234, 232, 228), (112, 112, 120)),
    "nero": ((32, 32, 36), (212, 212, 206)),
    "verde": ((38, 82, 60), (192, 214, 194)),
    "rosa": ((226, 202, 190), (150, 108, 100)),
}


def _bgr(rgb: tuple[int, int, int], rng: np.random.Generator, jitter: float) -> np.ndarray:
    """An RGB triple as a float32 BGR vector, jittered so no two tables share a colour."""
    return np.clip(np.array(rgb[::-1], np.float32) + rng.uniform(-jitter, jitter, 3), 0, 255)


def smooth_noise(rng: np.random.Generator, w: int, h: int, cell: float) -> np.ndarray:
    """Value noise of about unit amplitude whose blobs are ``cell`` pixels wide."""
    gw, gh = max(2, math.ceil(w / cell) + 1), max(2, math.ceil(h / cell) + 1)
    grid = rng.standard_normal((gh, gw), dtype=np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


def _grain(rng: np.random.Generator, w: int, h: int, sigma: float = 0.0) -> np.ndarray:
    noise = rng.standard_normal((h, w), dtype=np.float32)
    return cv2.GaussianBlur(noise, (0, 0), sigma) if sigma > 0 else noise


def felt(rng: np.random.Generator, w: int, h: int) -> Table:
    """Card-table felt: a saturated colour with fine fibre noise and soft mottling."""
    name = str(rng.choice(list(_FELTS)))
    base = _bgr(_FELTS[name], rng, 14)
    shade = 1 + 0.07 * _grain(rng, w, h, 0.7) + 0.05 * smooth_noise(rng, w, h, rng.uniform(40, 120))
    return base * shade[..., None], f"felt-{name}"


def wood(rng: np.random.Generator, w: int, h: int) -> Table:
    """Planks: warped sine growth rings, grain streaks along the rings and dark seams."""
    light, dark = (_bgr(c, rng, 12) for c in _WOODS[int(rng.integers(len(_WOODS)))])
    phi = rng.uniform(-0.3, 0.3) + (math.pi / 2 if rng.random() < 0.35 else 0.0)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    across = xs * math.sin(phi) - ys * math.cos(phi)  # rings and streaks run along phi
    across -= across.min()
    warp = smooth_noise(rng, w, h, rng.uniform(60, 200)) * rng.uniform(6, 22)
    rings = 0.5 + 0.5 * np.sin(2 * math.pi * (across + warp) / rng.uniform(9, 30))
    streaks = cv2.GaussianBlur(
        rng.standard_normal((1, int(across.max()) + 2)).astype(np.float32), (0, 0), 1.2
    )[0]
    mix = np.clip(0.5 * rings**3 + 0.6 * streaks[across.astype(np.int32)] + 0.25, 0, 1)
    img = light * (1 - mix[..., None]) + dark * mix[..., None]
    if rng.random() < 0.7:  # plank seams every ``plank`` pixels across the boards
        plank = rng.uniform(0.18, 0.4) * min(w, h)
        seam = np.abs(((across + plank / 2) % plank) - plank / 2) < rng.uniform(0.8, 2.0)
        img[seam] *= 0.55
    img *= (1 + 0.04 * _grain(rng, w, h, 0.6))[..., None]
    return img, "wood"


def tiles(rng: np.random.Generator, w: int, h: int) -> Table:
    """Square ceramic tiles, each a little different in shade, with grout lines between."""
    base = _bgr(_TILES[int(rng.integers(len(_TILES)))], rng, 10)
    grout = _bgr((int(rng.integers(120, 220)),) * 3, rng, 8)
    size, gw = rng.uniform(0.12, 0.35) * min(w, h), rng.uniform(2, 6)
    angle = 0.0 if rng.random() < 0.6 else rng.uniform(0, math.pi / 2)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    a = xs * math.cos(angle) + ys * math.sin(angle) + rng.uniform(0, size)
    b = -xs * math.sin(angle) + ys * math.cos(angle) + rng.uniform(0, size)
    jitter = rng.uniform(0.9, 1.08, (31, 29)).astype(np.float32)
    ti, tj = np.floor(a / size).astype(np.int64) % 31, np.floor(b / size).astype(np.int64) % 29
    img = base * (jitter[ti, tj] * (1 + 0.03 * _grain(rng, w, h, 1.0)))[..., None]
    lines = ((a % size) < gw) | ((b % size) < gw)
    img[lines] = grout
    return cv2.GaussianBlur(img, (0, 0), 0.6), "tiles"


def paper(rng: np.random.Generator, w: int, h: int) -> Table:
    """Off-white paper with faint printed text, sometimes ruled, slightly rotated."""
    base = _bgr((244, 240, 230), rng, 8)
    ink_bgr = base - rng.uniform(40, 110)
    ink = np.zeros((h, w), np.uint8)
    px = rng.uniform(8, 18)
    scale, lead = px / 22.0, px * rng.uniform(1.6, 2.4)
    font = int(
        rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX])
    )
    letters = np.array(list(string.ascii_lowercase + "      "))
    y = rng.uniform(0.5, 1.5) * lead
    while y < h + lead:
        text = "".join(rng.choice(letters, size=int(w / (px * 0.5))))
        cv2.putText(
            ink, text, (int(rng.uniform(-20, 20)), int(y)), font, scale, 255, 1, cv2.LINE_AA
        )
        y += lead
    if rng.random() < 0.4:
        for yy in np.arange(lead * 0.35, h, lead):
            cv2.line(ink, (0, int(yy)), (w, int(yy)), 150, 1, cv2.LINE_AA)
    tilt = cv2.getRotationMatrix2D((w / 2, h / 2), rng.uniform(-15, 15), 1.0)
    tilted = cv2.warpAffine(
        ink, tilt, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )
    strength = (tilted.astype(np.float32) / 255 * rng.uniform(0.25, 0.6))[..., None]
    fibres = 1 + 0.02 * _grain(rng, w, h, 0.8) + 0.015 * smooth_noise(rng, w, h, 60)
    return (base * (1 - strength) + ink_bgr * strength) * fibres[..., None], "paper"


def marble(rng: np.random.Generator, w: int, h: int) -> Table:
    """Polished stone: veins from a sine pattern bent by multi-octave turbulence."""
    name = str(rng.choice(list(_MARBLES)))
    base, vein_col = (_bgr(c, rng, 10) for c in _MARBLES[name])
    turb = sum(smooth_noise(rng, w, h, max(w, h) / 2 / 2**o) * 0.5**o for o in range(6))
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    a = rng.uniform(0, math.pi)
    along = (xs * math.cos(a) + ys * math.sin(a)) * (
        2 * math.pi / rng.uniform(0.5, 1.1) / max(w, h)
    )
    wave = np.sin(along + rng.uniform(1.2, 2.4) * turb)
    vein = np.exp(-(wave**2) / (2 * rng.uniform(0.04, 0.12) ** 2))  # soft main veins
    fine = np.exp(-(np.sin(3.1 * along + 3.5 * turb) ** 2) / 0.002)  # thin hairline veins
    fade = np.clip(0.6 + 0.5 * smooth_noise(rng, w, h, max(w, h) / 4), 0, 1)
    cloud = 0.12 * np.clip(turb / 2, -1, 1)
    mix = np.clip((0.75 * vein + 0.3 * fine) * fade + cloud + 0.1, 0, 1)[..., None]
    return base * (1 - mix) + vein_col * mix, f"marble-{name}"


@functools.cache
def _photo(name: str) -> np.ndarray | None:
    """A bundled scikit-image photograph as BGR uint8, or None when it is not available."""
    try:
        import skimage.data

        img = np.asarray(getattr(skimage.data, name)())
    except Exception:  # a missing or download-only image is just not offered
        return None
    if img.ndim == 2:
        return cv2.cvtColor(img.astype(np.uint8), cv2.COLOR_GRAY2BGR)
    return cv2.cvtColor(img[..., :3].astype(np.uint8), cv2.COLOR_RGB2BGR)


def photo(rng: np.random.Generator, w: int, h: int) -> Table:
    """A random crop of a real photograph, resized to the image and maybe defocused."""
    names = [n for n in PHOTOS if _photo(n) is not None]
    if not names:
        return felt(rng, w, h)
    name = str(rng.choice(names))
    src = _photo(name)
    assert src is not None
    sh, sw = src.shape[:2]
    cw = min(sw, sh * w / h) * rng.uniform(0.55, 1.0)
    ch = cw * h / w
    x0, y0 = rng.uniform(0, sw - cw), rng.uniform(0, sh - ch)
    crop = src[int(y0) : int(y0 + ch), int(x0) : int(x0 + cw)]
    img: np.ndarray = cv2.resize(crop, (w, h), interpolation=cv2.INTER_LINEAR).astype(np.float32)
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(1.0, 3.5))
    return img, f"photo-{name}"


MAKERS: tuple[tuple[Callable[[np.random.Generator, int, int], Table], float], ...] = (
    (felt, 0.2),
    (wood, 0.17),
    (tiles, 0.13),
    (paper, 0.13),
    (marble, 0.12),
    (photo, 0.25),
)


def table(rng: np.random.Generator, w: int, h: int) -> Table:
    """One table surface of ``w`` x ``h`` pixels, its family drawn by weight."""
    weights = np.array([wt for _, wt in MAKERS])
    maker = MAKERS[int(rng.choice(len(MAKERS), p=weights / weights.sum()))][0]
    img, name = maker(rng, w, h)
    return np.clip(img, 0, 255).astype(np.float32), name


def camera(rng: np.random.Generator, img: np.ndarray, smallest_pip: float) -> np.ndarray:
    """Mild blur, sensor noise and a JPEG round-trip, gentler when the pips are tiny."""
    pick = rng.random()
    if pick < 0.25:
        img = cv2.GaussianBlur(
            img, (0, 0), rng.uniform(0.4, max(0.45, min(1.2, 0.22 * smallest_pip)))
        )
    elif pick < 0.37:
        length = int(rng.integers(3, max(4, min(8, int(0.8 * smallest_pip)))))
        kernel = np.zeros((length, length), np.float32)
        a, c = rng.uniform(0, math.pi), (length - 1) / 2
        dx, dy = math.cos(a) * c, math.sin(a) * c
        cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1)
        img = cv2.filter2D(img, -1, kernel / kernel.sum())
    h, w = img.shape[:2]
    # per-pixel luminance noise plus blotchy chroma noise, as a demosaiced sensor gives
    luma = rng.standard_normal((h, w, 1), dtype=np.float32) * rng.uniform(1.0, 5.0)
    chroma = rng.standard_normal((h // 3 + 1, w // 3 + 1, 3), dtype=np.float32)
    chroma = cv2.resize(chroma, (w, h), interpolation=cv2.INTER_LINEAR) * rng.uniform(0.5, 2.5)
    out: np.ndarray = np.clip(img + (luma + chroma + 0.5), 0, 255).astype(np.uint8)
    if rng.random() < 0.8:
        low = 35 if smallest_pip >= 5 else 60
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(low, 91))])
        assert ok
        out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR))
    return out
