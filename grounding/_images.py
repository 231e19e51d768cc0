"""Loading images safely: size-checked before decoding, every mode turned into 8-bit BGR."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from groundeval.judges._protocol import ImagePart

MAX_PIXELS = 50_000_000
"""Largest image decoded (pixels); a bigger header is refused before decoding."""
MAX_BYTES = 200 * 1024 * 1024
_ORIENTATION = 0x0112
"""EXIF tag: how a camera image must be turned to stand upright."""
_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


class ImageError(ValueError):
    """An image that cannot be graded: the message names the file and the problem."""


@dataclass(frozen=True)
class LoadedImage:
    """Pixels for OpenCV and the original bytes for judges and hashes."""

    path: Path
    bgr: np.ndarray
    part: ImagePart

    @property
    def size_wh(self) -> tuple[int, int]:
        """Width and height in pixels."""
        width, height = self.part.size_wh
        return int(width), int(height)


def load_image(path: Path, *, max_pixels: int = MAX_PIXELS) -> LoadedImage:
    """Read, size-check and decode an image file into 8-bit BGR."""
    path = Path(path)
    try:
        if not path.is_file():
            what = "a folder" if path.is_dir() else "missing"
            raise ImageError(f"{path}: cannot read image ({what}, not a file)")
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ImageError(f"{path}: {size} bytes is larger than the {MAX_BYTES} byte limit")
        data = path.read_bytes()
    except OSError as exc:
        raise ImageError(f"{path}: cannot read image ({exc.strerror or exc})") from exc
    return decode_image(data, path, max_pixels=max_pixels)


def decode_image(data: bytes, path: Path, *, max_pixels: int = MAX_PIXELS) -> LoadedImage:
    """Decode bytes already read from ``path`` (named in errors)."""
    if not data:
        raise ImageError(f"{path}: empty file (0 bytes), not an image")
    if len(data) > MAX_BYTES:
        raise ImageError(f"{path}: {len(data)} bytes is larger than the {MAX_BYTES} byte limit")
    try:
        img: Image.Image = Image.open(io.BytesIO(data))  # reads the header only
        width, height = img.size
        if width * height > max_pixels:
            raise ImageError(
                f"{path}: header says {width}x{height} pixels, more than the "
                f"{max_pixels} pixel limit (possible decompression bomb); not decoded"
            )
        if width < 1 or height < 1:
            raise ImageError(f"{path}: header says {width}x{height} pixels; nothing to grade")
        fmt = img.format or ""
        img.load()
        turned = img.getexif().get(_ORIENTATION, 1) in range(2, 9)
        if turned:  # show every consumer the upright pixels a viewer shows
            img = ImageOps.exif_transpose(img)
            width, height = img.size
        bgr = _to_bgr(img)
    except ImageError:
        raise
    except Image.DecompressionBombError as exc:
        raise ImageError(f"{path}: refused as a decompression bomb ({exc})") from exc
    except UnidentifiedImageError as exc:
        raise ImageError(
            f"{path}: not an image in any format Pillow reads (file starts with {data[:8]!r})"
        ) from exc
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageError(f"{path}: damaged or truncated image ({exc})") from exc
    except Exception as exc:  # a decoder bug on hostile bytes must not end the run
        raise ImageError(f"{path}: damaged image ({type(exc).__name__}: {exc})") from exc
    mime = _MIME.get(fmt, "image/png")
    if fmt not in _MIME or turned:
        data, mime = _png_bytes(bgr), "image/png"
    part = ImagePart(data=data, mime=mime, size_wh=(width, height))
    return LoadedImage(path=path, bgr=bgr, part=part)


def _to_bgr(img: Image.Image) -> np.ndarray:
    """Any PIL mode -> contiguous uint8 BGR; alpha is composited on white."""
    if img.mode.startswith("I;16") or img.mode in ("I", "F"):
        arr = np.asarray(img, dtype=np.float64)
        top = float(np.nanmax(arr)) if arr.size else 0.0
        if img.mode.startswith("I;16"):
            top = 65535.0  # 16-bit samples map to 8 bits by the full range, as 8-bit ones do
        scale = 1.0 if top <= 255 else (255.0 / 65535.0 if top <= 65535 else 255.0 / top)
        gray = np.clip(np.rint(np.nan_to_num(arr) * scale), 0, 255).astype(np.uint8)
        return np.ascontiguousarray(np.stack([gray] * 3, axis=-1))
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(white, rgba)
    rgb = np.asarray(img if img.mode == "RGB" else img.convert("RGB"), dtype=np.uint8)
    return cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)


def _png_bytes(bgr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(bgr[:, :, ::-1])).save(buf, format="PNG")
    return buf.getvalue()
