"""Coordinate conventions of judges, converted once into pixels of the original image.

Every model answers geometry in its own convention. This module is the only
place that knows them; everything past it works in ``xyxy_px`` (floats, pixels
of the original image, origin top-left, x1 <= x2, y1 <= y2).

Conventions:

- ``box_2d_1000``: Gemini. Boxes ``[ymin, xmin, ymax, xmax]`` and points ``[y, x]``
  on a 0-1000 grid over the whole image.
- ``qwen25_px``: Qwen2.5-VL. Boxes ``[x1, y1, x2, y2]`` and points ``[x, y]`` in
  pixels of the model's resized input (sides multiples of 28, see
  :func:`qwen25_input_wh`).
- ``xyxy_1000``: Qwen3-VL and others. ``[x1, y1, x2, y2]`` on a 0-1000 grid.
- ``xyxy_norm``: normalised ``[x1, y1, x2, y2]`` in 0-1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum
from typing import Any


class BoxConvention(StrEnum):
    """A judge's coordinate convention (see the module docstring); equal to its name."""

    BOX_2D_1000 = "box_2d_1000"
    QWEN25_PX = "qwen25_px"
    XYXY_1000 = "xyxy_1000"
    XYXY_NORM = "xyxy_norm"


CONVENTIONS: tuple[str, ...] = tuple(c.value for c in BoxConvention)

QWEN_FACTOR = 28
QWEN_MIN_PIXELS = 4 * 28 * 28
QWEN_MAX_PIXELS = 16384 * 28 * 28
_SLACK = 0.02
"""Fraction of the range a coordinate may overshoot before it is an error (then clamped)."""


def guess_convention(spec: str, model: str) -> BoxConvention:
    """The convention a model was trained on, from its spec and name.

    >>> guess_convention("gemini:gemini-2.5-flash", "gemini-2.5-flash").value
    'box_2d_1000'
    >>> guess_convention("openai:Qwen2.5-VL-7B@http://h/v1", "Qwen2.5-VL-7B").value
    'qwen25_px'
    """
    name = model.lower().replace("_", "-").replace(" ", "")
    if spec.startswith("gemini") or "gemini" in name:
        return BoxConvention.BOX_2D_1000
    if "qwen2.5-vl" in name or "qwen2.5vl" in name or "qwen2-5-vl" in name:
        return BoxConvention.QWEN25_PX
    if "qwen3-vl" in name or "qwen3vl" in name:
        return BoxConvention.XYXY_1000
    return BoxConvention.XYXY_NORM


def qwen25_input_wh(
    size_wh: tuple[int, int],
    *,
    factor: int = QWEN_FACTOR,
    min_pixels: int = QWEN_MIN_PIXELS,
    max_pixels: int = QWEN_MAX_PIXELS,
) -> tuple[int, int]:
    """Size of the image Qwen2.5-VL actually sees: both sides multiples of ``factor``.

    Each side is rounded to the nearest multiple of ``factor``; if the area then
    leaves ``[min_pixels, max_pixels]`` both sides are scaled by one factor that
    brings it back inside, rounding towards the range.

    >>> qwen25_input_wh((1000, 500))
    (1008, 504)
    >>> qwen25_input_wh((10, 10))
    (56, 56)
    """
    width, height = size_wh
    if width <= 0 or height <= 0:
        raise ValueError(f"image size must be positive, got {size_wh}")
    if max(width, height) / min(width, height) > 200:
        raise ValueError(f"aspect ratio of {size_wh} is beyond what Qwen2.5-VL accepts (200)")
    new_h = max(factor, round(height / factor) * factor)
    new_w = max(factor, round(width / factor) * factor)
    if new_h * new_w > max_pixels:
        scale = math.sqrt(height * width / max_pixels)
        new_h = max(factor, math.floor(height / scale / factor) * factor)
        new_w = max(factor, math.floor(width / scale / factor) * factor)
    elif new_h * new_w < min_pixels:
        scale = math.sqrt(min_pixels / (height * width))
        new_h = math.ceil(height * scale / factor) * factor
        new_w = math.ceil(width * scale / factor) * factor
    return new_w, new_h


def _grid_wh(
    convention: BoxConvention | str, size_wh: tuple[int, int], input_wh: tuple[int, int] | None
) -> tuple[float, float]:
    """Extent of the model's coordinate grid along x and y."""
    if convention in (BoxConvention.BOX_2D_1000, BoxConvention.XYXY_1000):
        return 1000.0, 1000.0
    if convention == BoxConvention.XYXY_NORM:
        return 1.0, 1.0
    if convention == BoxConvention.QWEN25_PX:
        w, h = input_wh or qwen25_input_wh(size_wh)
        return float(w), float(h)
    raise ValueError(f"unknown box convention {convention!r}; expected one of {CONVENTIONS}")


BOX_NAMES: dict[str, tuple[str, ...]] = {
    BoxConvention.BOX_2D_1000: ("ymin", "xmin", "ymax", "xmax")
}
"""Names of a box's four numbers as the judge wrote them (default ``x1, y1, x2, y2``)."""


def _show(value: Any) -> str:
    """A coordinate as an error shows it: ``NaN``, ``inf``, ``-50``, ``'ten'``."""
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return f"{value!r:.40}"


def _numbers(values: Any, names: Sequence[str], what: str) -> list[float]:
    """One finite number per name, or a ValueError naming the coordinate that is wrong."""
    count = len(names)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{what} must be a list of {count} numbers, got {values!r:.80}")
    if len(values) != count:
        raise ValueError(f"{what} must have {count} numbers, got {len(values)}")
    out: list[float] = []
    for name, v in zip(names, values, strict=True):
        if v is None or isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name}={_show(v)} is not a number")
        if not math.isfinite(v):
            raise ValueError(f"{name}={_show(v)} is not a finite number")
        out.append(float(v))
    return out


def _scale(value: float, grid: float, pixels: int, name: str) -> float:
    """Map one coordinate from grid units to pixels, clamping a small overshoot."""
    if value < -_SLACK * grid:
        raise ValueError(f"{name}={_show(value)} is negative (the grid is 0..{grid:g})")
    if value > (1 + _SLACK) * grid:
        raise ValueError(f"{name}={_show(value)} is outside the image (the grid is 0..{grid:g})")
    return min(max(value, 0.0), grid) / grid * pixels


def point_to_px(
    values: Any,
    convention: BoxConvention | str,
    size_wh: tuple[int, int],
    *,
    input_wh: tuple[int, int] | None = None,
) -> list[float]:
    """One point in the judge's convention -> ``[x, y]`` in original pixels."""
    names = ("y", "x") if convention == BoxConvention.BOX_2D_1000 else ("x", "y")
    a, b = _numbers(values, names, "point")
    gx, gy = _grid_wh(convention, size_wh, input_wh)
    x, y = (b, a) if convention == BoxConvention.BOX_2D_1000 else (a, b)
    return [_scale(x, gx, size_wh[0], "x"), _scale(y, gy, size_wh[1], "y")]


def box_to_xyxy_px(
    values: Any,
    convention: BoxConvention | str,
    size_wh: tuple[int, int],
    *,
    input_wh: tuple[int, int] | None = None,
) -> list[float]:
    """One box in the judge's convention -> ``[x1, y1, x2, y2]`` in original pixels.

    Every coordinate must be a finite number inside the image (a 2 % overshoot
    is clamped); corners in the wrong order or a box with no area are errors that
    name the coordinates, never silently repaired.

    >>> box_to_xyxy_px([100, 200, 300, 400], "box_2d_1000", (2000, 1000))
    [400.0, 100.0, 800.0, 300.0]
    >>> box_to_xyxy_px([300, 200, 100, 400], "box_2d_1000", (2000, 1000))
    Traceback (most recent call last):
    ...
    ValueError: corners swapped: ymin=300 > ymax=100
    """
    _grid_wh(convention, size_wh, input_wh)  # an unknown convention fails first
    names = BOX_NAMES.get(convention, ("x1", "y1", "x2", "y2"))
    numbers = _numbers(values, names, "box")
    for lo, hi in ((0, 2), (1, 3)):
        if numbers[lo] > numbers[hi]:
            raise ValueError(
                f"corners swapped: {names[lo]}={_show(numbers[lo])} > "
                f"{names[hi]}={_show(numbers[hi])}"
            )
    # positions of x1, y1, x2, y2 among the numbers as written
    order = (1, 0, 3, 2) if convention == BoxConvention.BOX_2D_1000 else (0, 1, 2, 3)
    gx, gy = _grid_wh(convention, size_wh, input_wh)
    w, h = size_wh
    x1, y1, x2, y2 = (
        _scale(numbers[i], grid, side, names[i])
        for i, grid, side in zip(order, (gx, gy, gx, gy), (w, h, w, h), strict=True)
    )
    xs, ys = (x1, x2), (y1, y2)
    if xs[0] == xs[1] or ys[0] == ys[1]:
        raise ValueError(f"box {numbers} has no area")
    return [xs[0], ys[0], xs[1], ys[1]]


def xyxy_px_to_box(
    xyxy_px: Sequence[float],
    convention: BoxConvention | str,
    size_wh: tuple[int, int],
    *,
    input_wh: tuple[int, int] | None = None,
) -> list[float]:
    """The inverse: a box in original pixels, expressed in the judge's convention.

    Used to show a judge its own earlier proposals in the numbers it speaks.
    """
    x1, y1, x2, y2 = xyxy_px
    gx, gy = _grid_wh(convention, size_wh, input_wh)
    w, h = size_wh
    nx1, nx2 = x1 / w * gx, x2 / w * gx
    ny1, ny2 = y1 / h * gy, y2 / h * gy
    digits = 3 if convention == BoxConvention.XYXY_NORM else 0
    out = [nx1, ny1, nx2, ny2] if convention != BoxConvention.BOX_2D_1000 else [ny1, nx1, ny2, nx2]
    return [round(v, digits) for v in out]


def px_to_point(
    point_px: Sequence[float],
    convention: BoxConvention | str,
    size_wh: tuple[int, int],
    *,
    input_wh: tuple[int, int] | None = None,
) -> list[float]:
    """A point in original pixels, expressed in the judge's convention."""
    gx, gy = _grid_wh(convention, size_wh, input_wh)
    x = point_px[0] / size_wh[0] * gx
    y = point_px[1] / size_wh[1] * gy
    digits = 3 if convention == BoxConvention.XYXY_NORM else 0
    out = [y, x] if convention == BoxConvention.BOX_2D_1000 else [x, y]
    return [round(v, digits) for v in out]
