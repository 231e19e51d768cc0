"""Geometry of help lines: boxes, polygons, lines, rays and points, in image pixels.

Coordinates are floats in pixels of the original image, origin top-left, x to the
right and y down. Boxes are ``xyxy_px`` (x1, y1, x2, y2). Every shape converts to
shapely 2 (``to_shapely``), which does the set-theoretic work; the few things
shapely has no word for (extending a ray to the image border, where a ray meets a
circle) are computed here in closed form.

The end of the module holds the one element-level rule set: an element's points
and bounds, the IoU of two elements, and "same object" with its named tolerances
(the offline verifier, the loop, the CV proposers and consensus all use it).
Judge coordinate conventions are converted in :mod:`groundeval.judges` only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.errors import GEOSException
from shapely.geometry.base import BaseGeometry

from groundeval.state import Element

XY = tuple[float, float]


def _finite(values: Sequence[float], what: str) -> tuple[float, ...]:
    out = tuple(float(v) for v in values)
    if not all(math.isfinite(v) for v in out):
        raise ValueError(f"{what} must be finite numbers, got {list(values)!r}")
    return out


def _xy(point: Sequence[float], what: str) -> XY:
    if len(point) != 2:
        raise ValueError(f"{what} must be an [x, y] pair, got {list(point)!r}")
    x, y = _finite(point, what)
    return (x, y)


@dataclass(frozen=True)
class Box:
    """Axis-aligned box, ``xyxy_px`` = (x1, y1, x2, y2) with x2 >= x1 and y2 >= y1."""

    xyxy_px: tuple[float, float, float, float]

    def __post_init__(self) -> None:
        if len(self.xyxy_px) != 4:
            raise ValueError(f"xyxy_px needs 4 numbers, got {list(self.xyxy_px)!r}")
        x1, y1, x2, y2 = _finite(self.xyxy_px, "xyxy_px")
        if x2 < x1 or y2 < y1:
            raise ValueError(f"xyxy_px must have x2 >= x1 and y2 >= y1, got {[x1, y1, x2, y2]}")
        object.__setattr__(self, "xyxy_px", (x1, y1, x2, y2))

    @property
    def width(self) -> float:
        """Width in pixels."""
        return self.xyxy_px[2] - self.xyxy_px[0]

    @property
    def height(self) -> float:
        """Height in pixels."""
        return self.xyxy_px[3] - self.xyxy_px[1]

    @property
    def area(self) -> float:
        """Area in square pixels."""
        return self.width * self.height

    @property
    def centre(self) -> XY:
        """Centre point (x, y)."""
        x1, y1, x2, y2 = self.xyxy_px
        return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)

    def to_shapely(self) -> BaseGeometry:
        """A shapely polygon (a point or segment when the box is degenerate)."""
        x1, y1, x2, y2 = self.xyxy_px
        if x1 == x2 and y1 == y2:
            return shapely.Point(x1, y1)
        if x1 == x2 or y1 == y2:
            return shapely.LineString([(x1, y1), (x2, y2)])
        return shapely.box(x1, y1, x2, y2)


@dataclass(frozen=True)
class Polygon:
    """A closed boundary through ``points_px`` (3 or more [x, y] points, not repeated)."""

    points_px: tuple[XY, ...]

    def __post_init__(self) -> None:
        pts = tuple(_xy(p, "polygon point") for p in self.points_px)
        if len(pts) < 3:
            raise ValueError(f"a polygon needs at least 3 points, got {len(pts)}")
        object.__setattr__(self, "points_px", pts)

    @property
    def area(self) -> float:
        """Enclosed area in square pixels (after repairing self-intersections)."""
        return float(self.to_shapely().area)

    @property
    def centre(self) -> XY:
        """Centroid (x, y) of the enclosed area."""
        c = self.to_shapely().centroid
        if c.is_empty:  # collinear points: fall back to the mean of the vertices
            xs, ys = zip(*self.points_px, strict=True)
            return (sum(xs) / len(xs), sum(ys) / len(ys))
        return (float(c.x), float(c.y))

    def to_shapely(self) -> BaseGeometry:
        """A valid shapely polygon; a self-intersecting outline is repaired with make_valid."""
        poly = shapely.Polygon(self.points_px)
        return poly if poly.is_valid else shapely.make_valid(poly)


@dataclass(frozen=True)
class Line:
    """The line through two distinct points; as a shape it is the segment between them."""

    p1: XY
    p2: XY

    def __post_init__(self) -> None:
        p1, p2 = _xy(self.p1, "line point"), _xy(self.p2, "line point")
        if p1 == p2:
            raise ValueError(f"a {type(self).__name__.lower()} needs two distinct points, got {p1}")
        object.__setattr__(self, "p1", p1)
        object.__setattr__(self, "p2", p2)

    @property
    def direction(self) -> XY:
        """Unit vector from p1 towards p2."""
        dx, dy = self.p2[0] - self.p1[0], self.p2[1] - self.p1[1]
        n = math.hypot(dx, dy)
        return (dx / n, dy / n)

    @property
    def length(self) -> float:
        """Distance between the two points."""
        return math.dist(self.p1, self.p2)

    @property
    def centre(self) -> XY:
        """Midpoint of the two points."""
        return ((self.p1[0] + self.p2[0]) / 2.0, (self.p1[1] + self.p2[1]) / 2.0)

    def to_shapely(self) -> BaseGeometry:
        """The segment p1–p2."""
        return shapely.LineString([self.p1, self.p2])

    def _t_range(self) -> tuple[float, float]:
        return (-math.inf, math.inf)

    def extend_to_border(self, width: float, height: float) -> Line:
        """The part of the infinite line (or ray) inside the image ``[0, width] × [0, height]``.

        Raises:
            ValueError: when it does not cross the image.
        """
        lo, hi = self._t_range()
        (ox, oy), (dx, dy) = self.p1, self.direction
        for o, d, size in ((ox, dx, width), (oy, dy, height)):
            if d == 0.0:
                if not 0.0 <= o <= size:
                    lo, hi = 1.0, 0.0
                continue
            a, b = (0.0 - o) / d, (size - o) / d
            lo, hi = max(lo, min(a, b)), min(hi, max(a, b))
        if lo > hi or math.isinf(lo) or math.isinf(hi):
            raise ValueError(
                f"{type(self).__name__.lower()} through {self.p1} and {self.p2} "
                f"does not cross the {width}x{height} image"
            )
        start = (ox + lo * dx, oy + lo * dy)
        end = (ox + hi * dx, oy + hi * dy)
        if start == end:  # touches a corner only
            return Line(start, (end[0] + dx * 1e-9, end[1] + dy * 1e-9))
        return Line(start, end)


@dataclass(frozen=True)
class Ray(Line):
    """A half-line starting at ``p1`` and passing through ``p2`` (a needle, a pointer)."""

    def _t_range(self) -> tuple[float, float]:
        return (0.0, math.inf)

    def point_at(self, t: float) -> XY:
        """The point at distance ``t`` pixels from the origin along the ray."""
        (ox, oy), (dx, dy) = self.p1, self.direction
        return (ox + t * dx, oy + t * dy)


@dataclass(frozen=True)
class Point:
    """One point (x, y)."""

    xy: XY

    def __post_init__(self) -> None:
        object.__setattr__(self, "xy", _xy(self.xy, "point"))

    @property
    def centre(self) -> XY:
        """The point itself."""
        return self.xy

    def to_shapely(self) -> BaseGeometry:
        """A shapely point."""
        return shapely.Point(self.xy)


Geometry = Box | Polygon | Line | Ray | Point


def geometry_of(element: Element) -> Geometry:
    """The shape of an element: a box from ``xyxy_px``, the others from ``points_px``."""
    if element.kind == "box":
        if element.xyxy_px is None:
            raise ValueError(f"element {element.id}: a box needs xyxy_px")
        x1, y1, x2, y2 = element.xyxy_px
        return Box((x1, y1, x2, y2))
    pts = element.points_px or []
    try:
        if element.kind == "polygon":
            return Polygon(tuple((p[0], p[1]) for p in pts))
        if element.kind in ("line", "ray") and len(pts) == 2:
            cls = Ray if element.kind == "ray" else Line
            return cls((pts[0][0], pts[0][1]), (pts[1][0], pts[1][1]))
        if element.kind == "point" and len(pts) == 1:
            return Point((pts[0][0], pts[0][1]))
    except ValueError as exc:
        raise ValueError(f"element {element.id}: {exc}") from exc
    raise ValueError(f"element {element.id}: cannot build a {element.kind} from {pts!r}")


def _shape(g: Geometry | BaseGeometry) -> BaseGeometry:
    return g if isinstance(g, BaseGeometry) else g.to_shapely()


# --------------------------------------------------------------------------- predicates


def iou_matrix_xyxy(boxes_a: np.ndarray, boxes_b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of (N, 4) and (M, 4) ``xyxy_px`` arrays as an (N, M) array.

    A pair whose union has no area scores 0.

    >>> iou_matrix_xyxy(np.array([[0, 0, 2, 2]]), np.array([[1, 0, 3, 2]])).round(3).tolist()
    [[0.333]]
    """
    a = np.asarray(boxes_a, dtype=float).reshape(-1, 4)
    b = np.asarray(boxes_b, dtype=float).reshape(-1, 4)
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    top_left = np.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(bottom_right - top_left, 0.0, None)
    inter = wh[..., 0] * wh[..., 1]
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(union > 0, inter / union, 0.0)
    return out


def xyxy_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two ``xyxy_px`` boxes; 0 when they do not overlap or the union has no area.

    The scalar twin of :func:`iou_matrix_xyxy` (same formula, no array overhead).

    >>> xyxy_iou((0, 0, 2, 2), (1, 0, 3, 2))
    0.3333333333333333
    """
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    inter = w * h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return float(inter / union) if union > 0 else 0.0


def frame_gap_px(xyxy: Sequence[float], width: float, height: float) -> float:
    """How far a box keeps off the image's frame: its least margin to a side (0 or less: cut).

    >>> frame_gap_px((3, 5, 90, 40), 100, 50)
    3
    """
    x1, y1, x2, y2 = xyxy
    return min(x1, y1, width - x2, height - y2)


def iou(a: Geometry, b: Geometry) -> float:
    """Intersection over union of two areas (boxes or polygons); 0 when the union is empty."""
    if isinstance(a, Box) and isinstance(b, Box):
        return xyxy_iou(a.xyxy_px, b.xyxy_px)
    sa, sb = _shape(a), _shape(b)
    union = sa.union(sb).area
    return float(sa.intersection(sb).area / union) if union > 0 else 0.0


def contains(outer: Geometry, inner: Geometry, *, tolerance_px: float = 0.0) -> bool:
    """True when ``inner`` lies within ``outer`` grown by ``tolerance_px`` (boundary counts)."""
    region = _shape(outer)
    if tolerance_px > 0:
        region = region.buffer(tolerance_px)
    return bool(region.covers(_shape(inner)))


def inside(inner: Geometry, outer: Geometry, *, tolerance_px: float = 0.0) -> bool:
    """True when ``inner`` lies within ``outer`` (``contains`` with the arguments swapped)."""
    return contains(outer, inner, tolerance_px=tolerance_px)


def intersects(a: Geometry, b: Geometry) -> bool:
    """True when the shapes share at least one point (touching counts)."""
    return bool(_shape(a).intersects(_shape(b)))


def overlap_area(a: Geometry, b: Geometry) -> float:
    """Area the two shapes share, in square pixels."""
    return float(_shape(a).intersection(_shape(b)).area)


def distance(a: Geometry, b: Geometry) -> float:
    """Shortest distance between the shapes in pixels (0 when they touch or overlap)."""
    return float(_shape(a).distance(_shape(b)))


def centre(g: Geometry) -> XY:
    """Centre of a shape: box centre, polygon centroid, line midpoint, the point itself."""
    return g.centre


def bounds_xyxy(g: Geometry) -> tuple[float, float, float, float]:
    """Bounding box ``xyxy_px`` of any shape."""
    if isinstance(g, Box):
        return g.xyxy_px
    x1, y1, x2, y2 = _shape(g).bounds
    return (float(x1), float(y1), float(x2), float(y2))


def angle_between_deg(a: Line, b: Line, *, directed: bool = False) -> float:
    """Angle between two lines in degrees.

    Undirected lines give [0, 90]; with ``directed=True`` (rays, needles) [0, 180].
    """
    (ax, ay), (bx, by) = a.direction, b.direction
    cos = max(-1.0, min(1.0, ax * bx + ay * by))
    angle = math.degrees(math.acos(cos))
    return angle if directed else min(angle, 180.0 - angle)


# --------------------------------------------------------------------------- rays


def _ray_segment(ray: Line, target: BaseGeometry) -> shapely.LineString:
    """The ray as a segment long enough to cross everything in ``target``."""
    x1, y1, x2, y2 = target.bounds
    reach = max(math.dist(ray.p1, corner) for corner in ((x1, y1), (x1, y2), (x2, y1), (x2, y2)))
    (ox, oy), (dx, dy) = ray.p1, ray.direction
    end = reach + 1.0
    return shapely.LineString([(ox, oy), (ox + end * dx, oy + end * dy)])


def _first_along(ray: Line, hit: BaseGeometry) -> tuple[float, XY] | None:
    if hit.is_empty:
        return None
    coords = shapely.get_coordinates(hit)
    (ox, oy), (dx, dy) = ray.p1, ray.direction
    t = (coords[:, 0] - ox) * dx + (coords[:, 1] - oy) * dy
    i = int(np.argmin(t))
    return (max(float(t[i]), 0.0), (float(coords[i, 0]), float(coords[i, 1])))


def ray_boundary_hit(ray: Line, target: Geometry) -> XY | None:
    """Where a ray (a line is read as a ray from ``p1``) first meets the target's boundary.

    For a box or polygon this is the outline (the exit point when the ray starts
    inside); for a line or point, the shape itself. ``None`` when it never does.
    """
    shape = _shape(target)
    edge = shape.boundary if shape.geom_type in ("Polygon", "MultiPolygon") else shape
    found = _first_along(ray, _ray_segment(ray, shape).intersection(edge))
    return None if found is None else found[1]


def ray_circle_hit(ray: Line, centre_xy: XY, radius: float) -> XY | None:
    """Where a ray first meets a circle's rim; from inside the circle, where it leaves it."""
    if radius <= 0:
        raise ValueError(f"radius must be positive, got {radius}")
    (ox, oy), (dx, dy) = ray.p1, ray.direction
    fx, fy = ox - centre_xy[0], oy - centre_xy[1]
    b = fx * dx + fy * dy
    c = fx * fx + fy * fy - radius * radius
    disc = b * b - c
    if disc < 0:
        return None
    root = math.sqrt(disc)
    candidates = [t for t in (-b - root, -b + root) if t >= 0]
    if not candidates:
        return None
    t = min(candidates)
    return (ox + t * dx, oy + t * dy)


@dataclass(frozen=True)
class RayHit:
    """What a ray hits first: the target's index (and label), the point and the distance."""

    index: int
    point_px: XY
    distance_px: float
    label: str | None = None
    """The target's key when the targets were given as a mapping of labelled regions."""


def first_hit(
    ray: Line,
    targets: Sequence[Geometry] | Mapping[str, Geometry],
    *,
    tolerance_px: float = 0.0,
) -> RayHit | None:
    """The target a ray (from ``p1``) reaches first, treating boxes and polygons as areas.

    ``targets`` is a list, or a mapping from label to region (the hit then carries
    its ``label``). A target that contains the ray's origin is hit at distance 0.
    ``tolerance_px`` grows every target, for rays that graze a label. Ties go to the
    earlier target.
    """
    labels = list(targets) if isinstance(targets, Mapping) else None
    shapes = list(targets.values()) if isinstance(targets, Mapping) else list(targets)
    best: RayHit | None = None
    for index, target in enumerate(shapes):
        shape = _shape(target)
        if tolerance_px > 0:
            shape = shape.buffer(tolerance_px)
        found = _first_along(ray, _ray_segment(ray, shape).intersection(shape))
        if found is not None and (best is None or found[0] < best.distance_px):
            label = None if labels is None else labels[index]
            best = RayHit(index=index, point_px=found[1], distance_px=found[0], label=label)
    return best


# --------------------------------------------------------------------------- elements

SAME_OBJECT_IOU = 0.7
"""Boxes or polygons overlapping by at least this IoU mark the same object."""
SAME_OBJECT_PX = 3.0
"""Points, lines and rays whose points all lie this close (pixels) mark the same object."""


def element_points(e: Element) -> list[XY]:
    """The element's defining points (a box gives its two corners)."""
    if e.xyxy_px is not None:
        x1, y1, x2, y2 = e.xyxy_px
        return [(x1, y1), (x2, y2)]
    return [(float(p[0]), float(p[1])) for p in e.points_px or []]


def element_xyxy(e: Element) -> tuple[float, float, float, float]:
    """Axis-aligned bounds ``xyxy_px`` of any element kind."""
    if e.xyxy_px is not None:  # a box: its corners (the self-checks ask this often)
        x1, y1, x2, y2 = e.xyxy_px
        return min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)
    pts = element_points(e)
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return min(xs), min(ys), max(xs), max(ys)


def where_label(e: Element) -> str:
    """The element's bounds as ``[x1, y1, x2, y2]`` in whole pixels, for messages."""
    x1, y1, x2, y2 = element_xyxy(e)
    return f"[{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]"


def area_iou(a: Element, b: Element) -> float:
    """Box IoU, or true polygon IoU (bounds IoU when a polygon is too broken for shapely)."""
    if a.kind == "polygon":
        try:
            return float(iou(geometry_of(a), geometry_of(b)))
        except (ValueError, GEOSException):
            pass
    return xyxy_iou(element_xyxy(a), element_xyxy(b))


def point_distance(a: Element, b: Element) -> float:
    """Largest distance between corresponding points (inf when the shapes cannot correspond)."""
    pa, pb = element_points(a), element_points(b)
    if len(pa) != len(pb) or not pa:
        return math.inf
    far = max(math.dist(p, q) for p, q in zip(pa, pb, strict=True))
    if a.kind == "line":
        far = min(far, max(math.dist(p, q) for p, q in zip(pa, pb[::-1], strict=True)))
    return far


def holds_centre(a: Element, b: Element) -> bool:
    """Whether either element's bounds hold the other's centre: one object split, or two stacked."""
    (ax1, ay1, ax2, ay2), (bx1, by1, bx2, by2) = element_xyxy(a), element_xyxy(b)
    acx, acy, bcx, bcy = (ax1 + ax2) / 2, (ay1 + ay2) / 2, (bx1 + bx2) / 2, (by1 + by2) / 2
    return (bx1 < acx < bx2 and by1 < acy < by2) or (ax1 < bcx < ax2 and ay1 < bcy < ay2)


def covered_share(region: Element, covers: Sequence[Element]) -> float:
    """Share of ``region``'s box that the union of the ``covers``' boxes overlaps (0..1).

    Boxes, not shapes: an unexplained region and the elements that explain it are compared
    by what they bound.
    """
    x1, y1, x2, y2 = element_xyxy(region)
    area = (x2 - x1) * (y2 - y1)
    if area <= 0 or not covers:
        return 0.0
    union = shapely.union_all([shapely.box(*element_xyxy(c)) for c in covers])
    return float(union.intersection(shapely.box(x1, y1, x2, y2)).area / area)


def same_object(
    a: Element, b: Element, *, min_iou: float = SAME_OBJECT_IOU, max_px: float = SAME_OBJECT_PX
) -> bool:
    """The one "same object" rule: same kind and near-identical geometry.

    Boxes and polygons overlap by at least ``min_iou``; points, lines and rays have
    every point within ``max_px`` (a line may be given in either direction). The
    verifier's duplicate check, the loop's "already kept" test, a CV proposer's
    dropping of accepted elements and consensus matching (with looser tolerances)
    all use it.
    """
    if a.kind != b.kind:
        return False
    if a.kind in ("box", "polygon"):
        return area_iou(a, b) >= min_iou
    return point_distance(a, b) <= max_px
