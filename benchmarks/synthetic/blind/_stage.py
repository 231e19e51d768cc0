"""The set: image size, look, surface, and the finish every picture gets at the end.

Looks: a glossy studio product shot, a flat vector illustration, a soft painterly one.
Surfaces: a seamless gradient sweep, gingham, stripes, polka dots, linen, dark slate.
The finish grades the look (painterly blur, brush noise, warm tone), adds sensor noise,
sometimes a vignette, and round-trips through JPEG like a downloaded picture.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from groundeval.benchmarks.synthetic.blind._paint import BGR, vec

SIZES_WH = ((512, 512), (768, 512), (640, 480), (1024, 768), (600, 800), (960, 540))
LOOKS = ("studio", "flat", "painterly")
SWEEPS: dict[str, tuple[BGR, BGR]] = {  # top and bottom of a seamless backdrop
    "white": ((250, 250, 250), (214, 213, 216)),
    "grey": ((190, 188, 186), (120, 118, 117)),
    "pastel pink": ((232, 222, 250), (196, 184, 228)),
    "pastel blue": ((250, 234, 214), (222, 196, 168)),
    "pastel mint": ((226, 246, 226), (188, 220, 190)),
    "dark": ((66, 62, 60), (20, 19, 19)),
}
CLOTHS: dict[str, BGR] = {
    "red": (52, 46, 196),
    "blue": (176, 104, 42),
    "green": (72, 140, 58),
    "yellow": (64, 196, 236),
    "black": (44, 40, 40),
}
LINENS: dict[str, BGR] = {
    "oatmeal": (168, 194, 212),
    "grey": (176, 178, 180),
    "sand": (150, 186, 206),
}
PATTERNS = ("gingham", "stripes", "polka")


def luma(c: BGR) -> float:
    """Brightness of a BGR colour (Rec. 601)."""
    return 0.114 * c[0] + 0.587 * c[1] + 0.299 * c[2]


@dataclass(frozen=True)
class Surface:
    """What the objects lie on: a kind, its colours and its pattern's scale."""

    kind: str
    tone: str
    colours: tuple[BGR, ...]
    cell_px: float = 0.0
    stripe_dir: int = 0

    @property
    def name(self) -> str:
        """The surface as written to truth, e.g. ``red gingham``."""
        return f"{self.tone} {self.kind}"

    @property
    def where(self) -> str:
        """The surface as a program's prompt says it."""
        if self.kind == "gradient":
            return f"on a {self.tone} studio backdrop"
        if self.kind in PATTERNS:
            pattern = {"gingham": "gingham", "stripes": "striped", "polka": "polka-dot"}
            return f"on a {self.tone} {pattern[self.kind]} tablecloth"
        if self.kind == "linen":
            return f"on {self.tone} linen"
        return "on dark slate"

    @property
    def luma(self) -> float:
        """Mean brightness, to keep objects from vanishing into it."""
        if self.kind in ("gingham", "stripes"):
            return (luma(self.colours[0]) + luma(self.colours[1])) / 2
        return sum(luma(c) for c in self.colours) / len(self.colours)


@dataclass(frozen=True)
class Stage:
    """One picture's set: size, look, surface, and whether the floor mirrors."""

    size_wh: tuple[int, int]
    look: str
    surface: Surface
    glossy: bool
    outline_px: float

    @property
    def unit(self) -> float:
        """The image's shorter side: objects scale with it."""
        return float(min(self.size_wh))


def pick_stage(rng: np.random.Generator) -> Stage:
    """A random set; studio shots on a sweep have a glossy floor."""
    size = SIZES_WH[int(rng.integers(len(SIZES_WH)))]
    look = LOOKS[int(rng.integers(len(LOOKS)))]
    kinds: tuple[str, ...]
    if look == "studio":
        kinds = ("gradient", "gradient", "gradient", "linen", "slate")
    elif look == "flat":
        kinds = ("gradient", "gingham", "stripes", "polka")
    else:
        kinds = ("gradient", "gingham", "stripes", "polka", "linen", "slate")
    surface = _pick_surface(rng, kinds[int(rng.integers(len(kinds)))], min(size))
    glossy = look == "studio" and surface.kind == "gradient"
    outline = float(rng.uniform(2.0, 4.0)) if look == "flat" else 0.0
    return Stage(size, look, surface, glossy, outline)


def _pick_surface(rng: np.random.Generator, kind: str, unit: int) -> Surface:
    """Colours and scale of one surface kind."""
    if kind == "gradient":
        tone = list(SWEEPS)[int(rng.integers(len(SWEEPS)))]
        return Surface(kind, tone, SWEEPS[tone])
    if kind == "linen":
        tone = list(LINENS)[int(rng.integers(len(LINENS)))]
        return Surface(kind, tone, (LINENS[tone],))
    if kind == "slate":
        return Surface(kind, "dark", ((64, 60, 56),))
    tone = list(CLOTHS)[int(rng.integers(len(CLOTHS)))]
    cloth = CLOTHS[tone]
    cell = float(rng.uniform(0.025, 0.06) * unit)
    if kind == "polka":
        return Surface(kind, tone, (cloth,), cell)
    return Surface(kind, tone, (cloth, (236, 240, 242)), cell, int(rng.integers(3)))


def paint_surface(
    s: Surface, size_wh: tuple[int, int], rng: np.random.Generator, dot_px: float
) -> np.ndarray:
    """The empty picture (float32 BGR); polka dots are ``dot_px`` across at most."""
    w, h = size_wh
    ys = np.arange(h, dtype=np.float32)[:, None]
    xs = np.arange(w, dtype=np.float32)[None, :]
    img = np.empty((h, w, 3), np.float32)
    if s.kind == "gradient":
        t = ys / (h - 1)
        t = t * t * (3 - 2 * t)  # a smooth sweep, no band where the floor begins
        top, bottom = vec(s.colours[0]), vec(s.colours[1])
        img[:] = top + (bottom - top) * t[..., None]
    elif s.kind == "gingham":
        cloth, white = vec(s.colours[0]), vec(s.colours[1])
        bx = ((xs // s.cell_px) % 2 == 0).astype(np.float32)
        by = ((ys // s.cell_px) % 2 == 0).astype(np.float32)
        k = 0.5 * bx + 0.5 * by
        img[:] = white + (cloth - white) * k[..., None]
    elif s.kind == "stripes":
        cloth, white = vec(s.colours[0]), vec(s.colours[1])
        across: np.ndarray = (xs + 0 * ys, ys + 0 * xs, (xs + ys) / np.sqrt(2))[s.stripe_dir]
        band = ((across // s.cell_px) % 2 == 0).astype(np.float32)
        img[:] = white + (cloth - white) * band[..., None]
    elif s.kind == "polka":
        img[:] = vec(s.colours[0])
        _dots(img, s, rng, dot_px)
    elif s.kind == "linen":
        img[:] = vec(s.colours[0])
        rows = cv2.GaussianBlur(rng.normal(0, 7, (h, 1)).astype(np.float32), (1, 3), 0.8)
        cols = cv2.GaussianBlur(rng.normal(0, 7, (1, w)).astype(np.float32), (3, 1), 0.8)
        fine = rng.standard_normal((h, w), np.float32) * 4
        img += (rows + cols + fine)[..., None]
    else:
        img[:] = vec(s.colours[0])
        coarse = rng.normal(0, 1, (h // 64 + 2, w // 64 + 2)).astype(np.float32)
        blot = np.asarray(cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC), np.float32)
        grain = rng.standard_normal((h, w), np.float32)
        streak = cv2.blur(rng.standard_normal((h, w), np.float32), (25, 1))
        img += (3 * blot + 4 * grain + 9 * streak)[..., None] * vec((1.0, 0.97, 0.93))
    if s.kind in ("gingham", "stripes"):
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), 0.6), np.float32)
    return img


def _dots(img: np.ndarray, s: Surface, rng: np.random.Generator, dot_px: float) -> None:
    """Staggered polka dots, a paler tone of the cloth, far smaller than any pip."""
    h, w = img.shape[:2]
    d = float(np.clip(dot_px, 2.0, 8.0))
    step = max(6, round(d * float(rng.uniform(3.2, 4.6))))
    tile = np.zeros((2 * step, step), np.uint8)  # one dot per row, the second row staggered
    for cx, cy in ((step / 2, step / 2), (0.0, 1.5 * step), (float(step), 1.5 * step)):
        centre = (round((cx - 0.5) * 16), round((cy - 0.5) * 16))
        cv2.circle(tile, centre, round(d / 2 * 16), 255, -1, cv2.LINE_AA, 4)
    mask = np.tile(tile, (h // (2 * step) + 1, w // step + 1))[:h, :w]
    cloth = vec(s.colours[0])
    tone = cloth + (np.float32(235) - cloth) * 0.55
    k = mask.astype(np.float32)[..., None] / 255
    img[:] = img * (1 - k) + tone * k


def finish(img: np.ndarray, st: Stage, rng: np.random.Generator) -> np.ndarray:
    """The look's grade, noise, maybe a vignette, then a JPEG round trip (uint8 BGR)."""
    h, w = img.shape[:2]
    if st.look == "painterly":
        img = _painterly(img, rng)
    noise = float(rng.uniform(0.6, 1.5) if st.look == "flat" else rng.uniform(1.0, 3.0))
    img = img + rng.standard_normal((h, w, 3), np.float32) * noise
    if rng.random() < 0.35:
        ys = (np.arange(h, dtype=np.float32)[:, None] - h / 2) / (h / 2)
        xs = (np.arange(w, dtype=np.float32)[None, :] - w / 2) / (w / 2)
        fall = 1 - float(rng.uniform(0.12, 0.3)) * np.clip((xs**2 + ys**2) / 2, 0, 1)
        img = img * fall[..., None]
    out = np.clip(img, 0, 255).round().astype(np.uint8)
    quality = int(rng.integers(55, 96))
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)


def _painterly(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Soft focus, directional brush-stroke texture and a warm grade."""
    h, w = img.shape[:2]
    img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(1.0, 1.6)))
    strokes = np.zeros((h // 2 + 1, w // 2 + 1), np.float32)
    for _ in range(2):
        kernel = np.zeros((11, 11), np.float32)
        angle = float(rng.uniform(0, np.pi))
        dx, dy = 5 * np.cos(angle), 5 * np.sin(angle)
        cv2.line(kernel, (round(5 - dx), round(5 - dy)), (round(5 + dx), round(5 + dy)), 1.0)
        kernel /= kernel.sum()
        noise = np.asarray(rng.standard_normal(strokes.shape), np.float32)
        strokes += cv2.filter2D(noise, -1, kernel)
    strokes = cv2.resize(strokes / (strokes.std() + 1e-6), (w, h), interpolation=cv2.INTER_LINEAR)
    img = img + strokes[..., None] * float(rng.uniform(4.0, 8.0))
    warm = vec((0.88, 1.0, 1.07))
    return np.asarray(img * warm + vec((0, 3, 8)), np.float32)
