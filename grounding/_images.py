"""Loading images safely: size-checked before decoding, every mode turned into 8-bit BGR.

Memory, per image: loading decodes the file once to check it (Pillow's decoded
image, 1 to 4 bytes per pixel by mode, freed before returning) and keeps only
the file's bytes. The 8-bit BGR pixels (3 bytes per pixel) are made on the first
use of :attr:`LoadedImage.bgr` (a proposer that reads pixels) and kept for the
item; a judge reads the bytes, so items graded by a judge alone never hold
pixels. Conversion to BGR runs in strips of about a megapixel, so no whole-image
temporary (float copy, RGBA canvas) exists beside the result. A header claiming
more than ``max_pixels`` is refused before anything is decoded: one image costs
at most about 7 bytes x ``MAX_PIXELS`` (350 MB) while its pixels are made and
3 bytes x ``MAX_PIXELS`` (150 MB) while they are held.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from groundeval.judges import ImagePart

MAX_PIXELS = 50_000_000
"""Largest image decoded (pixels); a bigger header is refused before decoding."""
MAX_BYTES = 200 * 1024 * 1024
STRIP_PIXELS = 1 << 20
"""Pixels converted at a time (mode conversion and alpha compositing work on strips)."""
_ORIENTATION = 0x0112
"""EXIF tag: how a camera image must be turned to stand upright."""
_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif"}


class ImageError(ValueError):
    """An image that cannot be graded: the message names the file and the problem."""


class LoadedImage:
    """The image's bytes for judges and hashes; its 8-bit BGR pixels for OpenCV, on demand.

    The file is fully decoded once when loaded (so a damaged image fails then, with
    its name), but the pixels are kept only from the first use of :attr:`bgr`: an
    item whose questions all go to a judge never holds them. The first ``bgr``
    decodes again (once, thread-safe); later uses return the same array. Pixel
    coordinates are always the original image's.
    """

    __slots__ = ("_bgr", "_lock", "part", "path")

    def __init__(self, path: Path, part: ImagePart, bgr: np.ndarray | None = None) -> None:
        self.path = path
        self.part = part
        self._bgr = bgr
        self._lock = threading.Lock()

    @property
    def bgr(self) -> np.ndarray:
        """Contiguous uint8 BGR pixels (decoded on first use; about 3 bytes per pixel)."""
        if self._bgr is None:
            with self._lock:
                if self._bgr is None:
                    self._bgr = _guarded(self.path, self.part.data, _pixels_of)
        return self._bgr

    @property
    def pixels_held(self) -> bool:
        """Whether the BGR pixels are in memory now."""
        return self._bgr is not None

    @property
    def size_wh(self) -> tuple[int, int]:
        """Width and height in pixels."""
        width, height = self.part.size_wh
        return int(width), int(height)


def load_image(
    path: Path, *, max_pixels: int = MAX_PIXELS, keep_pixels: bool = False
) -> LoadedImage:
    """Read, size-check and decode an image file (pixels kept with ``keep_pixels``)."""
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
    return decode_image(data, path, max_pixels=max_pixels, keep_pixels=keep_pixels)


def decode_image(
    data: bytes, path: Path, *, max_pixels: int = MAX_PIXELS, keep_pixels: bool = False
) -> LoadedImage:
    """Decode bytes already read from ``path`` (named in errors) to check them.

    The pixels are kept when ``keep_pixels``, or when the judge needs a PNG made
    from them (a format judges do not read, or an EXIF-turned photo); otherwise
    they are freed and :attr:`LoadedImage.bgr` decodes them again on first use.
    """
    if not data:
        raise ImageError(f"{path}: empty file (0 bytes), not an image")
    if len(data) > MAX_BYTES:
        raise ImageError(f"{path}: {len(data)} bytes is larger than the {MAX_BYTES} byte limit")

    def check(blob: bytes) -> tuple[np.ndarray | None, str, bool, tuple[int, int]]:
        img, fmt, turned = _open_upright(blob, path, max_pixels)
        try:
            keep = keep_pixels or fmt not in _MIME or turned
            bgr = _to_bgr(img) if keep else None
            return bgr, fmt, turned, img.size
        finally:
            img.close()  # the decoded image goes now; only the BGR array may stay

    bgr, fmt, turned, (width, height) = _guarded(path, data, check)
    mime = _MIME.get(fmt, "image/png")
    if bgr is not None and (fmt not in _MIME or turned):
        data, mime = _png_bytes(bgr), "image/png"
    part = ImagePart(data=data, mime=mime, size_wh=(width, height))
    return LoadedImage(path=path, part=part, bgr=bgr)


def _open_upright(data: bytes, path: Path, max_pixels: int) -> tuple[Image.Image, str, bool]:
    """Size-check the header, decode, and turn the image as its EXIF orientation says."""
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
        upright = ImageOps.exif_transpose(img)
        img.close()
        img = upright
    return img, fmt, turned


def _pixels_of(data: bytes) -> np.ndarray:
    """BGR pixels of bytes that :func:`decode_image` already accepted."""
    img, _, _ = _open_upright(data, Path("?"), MAX_PIXELS * 4)
    try:
        return _to_bgr(img)
    finally:
        img.close()


_T = TypeVar("_T")


def _guarded(path: Path, data: bytes, decode: Callable[[bytes], _T]) -> _T:
    """Run a decode step; every failure becomes an :class:`ImageError` naming ``path``."""
    try:
        return decode(data)
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


def _to_bgr(img: Image.Image) -> np.ndarray:
    """Any PIL mode -> contiguous uint8 BGR; alpha is composited on white.

    Converted in strips of rows so no whole-image temporary (float, RGBA, white
    canvas) is ever built beside the result.
    """
    width, height = img.size
    bgr = np.empty((height, width, 3), np.uint8)
    rows = max(1, STRIP_PIXELS // max(width, 1))
    high_depth = img.mode.startswith("I;16") or img.mode in ("I", "F")
    scale = _depth_scale(img, rows) if high_depth else 1.0
    for top in range(0, height, rows):
        strip = img.crop((0, top, width, min(height, top + rows)))
        out = bgr[top : top + strip.size[1]]
        if high_depth:
            gray = _depth_to_gray(strip, scale)
            cv2.cvtColor(gray, cv2.COLOR_GRAY2BGR, dst=out)
            continue
        if _has_alpha(strip, img.info):
            rgba = strip.convert("RGBA")
            white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            strip = Image.alpha_composite(white, rgba)
        rgb = np.asarray(strip if strip.mode == "RGB" else strip.convert("RGB"), dtype=np.uint8)
        cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR, dst=out)
    return bgr


def _has_alpha(strip: Image.Image, info: Mapping[Any, Any]) -> bool:
    """Whether a strip has any pixel that is not fully opaque (opaque ones skip compositing)."""
    if strip.mode == "P":
        return "transparency" in info
    if strip.mode not in ("RGBA", "LA", "PA"):
        return False
    alpha = strip.getextrema()[-1]  # per band (min, max), no copy of the pixels
    return not (isinstance(alpha, tuple) and alpha[0] == 255)


def _depth_scale(img: Image.Image, rows: int) -> float:
    """Factor from a high-depth mode to 8 bits: 16-bit by the full range, else by the maximum."""
    if img.mode.startswith("I;16"):
        return 255.0 / 65535.0  # 16-bit samples map to 8 bits by the full range, as 8-bit do
    width, height = img.size
    top = 0.0
    for y in range(0, height, rows):
        arr = np.asarray(img.crop((0, y, width, min(height, y + rows))), dtype=np.float64)
        if arr.size and not np.all(np.isnan(arr)):
            top = max(top, float(np.nanmax(arr)))
    return 1.0 if top <= 255 else (255.0 / 65535.0 if top <= 65535 else 255.0 / top)


def _depth_to_gray(strip: Image.Image, scale: float) -> np.ndarray:
    """One strip of a high-depth image as 8-bit gray, rounded to nearest, clipped to 0..255."""
    if strip.mode.startswith("I;16"):
        # uint16 straight to uint8, no float copy; x * 255 / 65535 never ends in .5
        samples = np.asarray(strip).astype(np.uint16, copy=False)
        return cv2.convertScaleAbs(samples, alpha=scale)
    arr = np.array(strip, dtype=np.float64)
    np.nan_to_num(arr, copy=False)
    arr *= scale
    np.rint(arr, out=arr)
    np.clip(arr, 0, 255, out=arr)
    return arr.astype(np.uint8)


def _png_bytes(bgr: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(bgr[:, :, ::-1])).save(buf, format="PNG")
    return buf.getvalue()
