"""Geometry: shapes, predicates, rays and coordinate conventions, with hand-computed numbers."""

from __future__ import annotations

import doctest
import math
import re

import numpy as np
import pytest
import shapely

from groundeval.grounding import (
    Box,
    Line,
    Point,
    Polygon,
    Ray,
    angle_between_deg,
    bounds_xyxy,
    centre,
    contains,
    distance,
    first_hit,
    geometry_of,
    inside,
    intersects,
    iou,
    iou_matrix_xyxy,
    overlap_area,
    ray_boundary_hit,
    ray_circle_hit,
)
from groundeval.judges import BoxConvention, box_to_xyxy_px, point_to_px, xyxy_px_to_box
from groundeval.state import Element

SQUARE = Polygon(((0, 0), (10, 0), (10, 10), (0, 10)))
TRIANGLE = Polygon(((0, 0), (4, 0), (0, 3)))


def approx_xy(xy: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if xy is None else (round(xy[0], 6), round(xy[1], 6))


# --------------------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    ("shape", "area", "centre_xy", "bounds"),
    [
        (Box((0, 0, 4, 2)), 8.0, (2.0, 1.0), (0, 0, 4, 2)),
        (Box((10, 20, 10, 20)), 0.0, (10.0, 20.0), (10, 20, 10, 20)),
        (SQUARE, 100.0, (5.0, 5.0), (0, 0, 10, 10)),
        (TRIANGLE, 6.0, (4 / 3, 1.0), (0, 0, 4, 3)),
        (Line((0, 0), (6, 8)), 0.0, (3.0, 4.0), (0, 0, 6, 8)),
        (Point((7, 9)), 0.0, (7.0, 9.0), (7, 9, 7, 9)),
    ],
)
def test_area_centre_bounds(shape, area, centre_xy, bounds) -> None:
    assert shape.to_shapely().area == pytest.approx(area)
    assert centre(shape) == pytest.approx(centre_xy)
    assert bounds_xyxy(shape) == pytest.approx(bounds)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Box((5, 0, 1, 1)), "x2 >= x1"),
        (lambda: Box((0, 0, 1)), "4 numbers"),
        (lambda: Box((0, 0, math.nan, 1)), "finite"),
        (lambda: Polygon(((0, 0), (1, 1))), "at least 3 points"),
        (lambda: Line((1, 1), (1, 1)), "two distinct points"),
        (lambda: Ray((1, 1), (1, 1)), "ray needs two distinct points"),
        (lambda: Point((1, 2, 3)), "[x, y] pair"),
    ],
)
def test_bad_shapes_say_why(make, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_bowtie_polygon_is_repaired_for_shapely() -> None:
    bowtie = Polygon(((0, 0), (2, 2), (2, 0), (0, 2)))
    shape = bowtie.to_shapely()
    assert shape.is_valid
    assert shape.area == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("element", "expected"),
    [
        (Element(id=1, kind="box", xyxy_px=[1, 2, 3, 4]), Box((1, 2, 3, 4))),
        (
            Element(id=2, kind="polygon", points_px=[[0, 0], [4, 0], [0, 3]]),
            TRIANGLE,
        ),
        (Element(id=3, kind="line", points_px=[[0, 0], [1, 1]]), Line((0, 0), (1, 1))),
        (Element(id=4, kind="ray", points_px=[[0, 0], [1, 1]]), Ray((0, 0), (1, 1))),
        (Element(id=5, kind="point", points_px=[[5, 6]]), Point((5, 6))),
    ],
)
def test_geometry_of_element(element, expected) -> None:
    got = geometry_of(element)
    assert got == expected
    assert type(got) is type(expected)


def test_geometry_of_degenerate_ray_names_the_element() -> None:
    element = Element(id=7, kind="ray", points_px=[[3, 3], [3, 3]])
    with pytest.raises(ValueError, match="element 7: a ray needs two distinct points"):
        geometry_of(element)


# --------------------------------------------------------------------------- IoU


def test_iou_matrix_known_values() -> None:
    a = np.array([[0, 0, 2, 2], [0, 0, 1, 1], [5, 5, 5, 5]])
    b = np.array([[1, 0, 3, 2], [0, 0, 2, 2], [10, 10, 12, 12]])
    got = iou_matrix_xyxy(a, b)
    expected = np.array(
        [
            [2 / 6, 1.0, 0.0],
            [0.0, 1 / 4, 0.0],
            [0.0, 0.0, 0.0],  # zero-area box: union may be > 0 but no intersection
        ]
    )
    assert got.shape == (3, 3)
    np.testing.assert_allclose(got, expected)


def test_iou_matrix_empty_and_matches_shapely() -> None:
    assert iou_matrix_xyxy(np.zeros((0, 4)), np.zeros((3, 4))).shape == (0, 3)
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 50, size=(20, 2))
    wh = rng.uniform(1, 30, size=(20, 2))
    boxes = np.hstack([xy, xy + wh])
    got = iou_matrix_xyxy(boxes[:10], boxes[10:])
    for i in range(10):
        for j in range(10):
            sa, sb = shapely.box(*boxes[i]), shapely.box(*boxes[10 + j])
            want = sa.intersection(sb).area / sa.union(sb).area
            assert got[i, j] == pytest.approx(want, abs=1e-9)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (Box((0, 0, 2, 2)), Box((1, 0, 3, 2)), 1 / 3),
        (SQUARE, Box((0, 0, 10, 5)), 0.5),
        (TRIANGLE, Box((0, 0, 4, 3)), 0.5),
        (Box((0, 0, 1, 1)), Box((2, 2, 3, 3)), 0.0),
    ],
)
def test_iou_any_areas(a, b, expected) -> None:
    assert iou(a, b) == pytest.approx(expected)


# --------------------------------------------------------------------------- predicates


@pytest.mark.parametrize(
    ("inner", "outer", "tolerance", "expected"),
    [
        (Box((2, 2, 4, 4)), SQUARE, 0.0, True),
        (Box((0, 0, 10, 10)), SQUARE, 0.0, True),  # boundary counts
        (Box((8, 8, 11, 11)), SQUARE, 0.0, False),
        (Box((8, 8, 11, 11)), SQUARE, 1.0, False),  # the corner is sqrt(2) away
        (Box((8, 8, 11, 11)), SQUARE, 1.5, True),
        (Point((5, 5)), TRIANGLE, 0.0, False),
        (Point((1, 1)), TRIANGLE, 0.0, True),
        (Line((1, 1), (9, 9)), SQUARE, 0.0, True),
    ],
)
def test_inside_and_contains(inner, outer, tolerance, expected) -> None:
    assert inside(inner, outer, tolerance_px=tolerance) is expected
    assert contains(outer, inner, tolerance_px=tolerance) is expected


@pytest.mark.parametrize(
    ("a", "b", "meets", "shared", "gap"),
    [
        (Box((0, 0, 2, 2)), Box((1, 1, 3, 3)), True, 1.0, 0.0),
        (Box((0, 0, 2, 2)), Box((2, 0, 4, 2)), True, 0.0, 0.0),  # touching edges
        (Box((0, 0, 2, 2)), Box((5, 0, 6, 2)), False, 0.0, 3.0),
        (Point((3, 4)), Point((0, 0)), False, 0.0, 5.0),
        (Line((0, 5), (10, 5)), SQUARE, True, 0.0, 0.0),
        (Line((0, 12), (10, 12)), SQUARE, False, 0.0, 2.0),
    ],
)
def test_intersects_overlap_distance(a, b, meets, shared, gap) -> None:
    assert intersects(a, b) is meets
    assert overlap_area(a, b) == pytest.approx(shared)
    assert distance(a, b) == pytest.approx(gap)


@pytest.mark.parametrize(
    ("a", "b", "directed", "degrees"),
    [
        (Line((0, 0), (1, 0)), Line((0, 0), (0, 1)), False, 90.0),
        (Line((0, 0), (1, 0)), Line((5, 5), (6, 6)), False, 45.0),
        (Line((0, 0), (1, 0)), Line((0, 0), (-1, 1)), False, 45.0),
        (Ray((0, 0), (1, 0)), Ray((0, 0), (-1, 1)), True, 135.0),
        (Ray((0, 0), (1, 0)), Ray((3, 3), (2, 3)), True, 180.0),
        (Line((0, 0), (1, 0)), Line((3, 3), (2, 3)), False, 0.0),
    ],
)
def test_angle_between(a, b, directed, degrees) -> None:
    assert angle_between_deg(a, b, directed=directed) == pytest.approx(degrees)


# --------------------------------------------------------------------------- extension


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (Line((50, 50), (60, 60)), ((0, 0), (100, 100))),
        (Line((10, 20), (30, 20)), ((0, 20), (100, 20))),
        (Line((30, 10), (30, 90)), ((30, 0), (30, 100))),
        (Ray((50, 50), (60, 50)), ((50, 50), (100, 50))),
        (Ray((50, 50), (40, 40)), ((50, 50), (0, 0))),
        (Ray((50, 50), (50, 10)), ((50, 50), (50, 0))),
        (Ray((-20, 50), (0, 50)), ((0, 50), (100, 50))),  # origin outside: clipped
        (Line((0, 50), (100, 0)), ((0, 50), (100, 0))),
    ],
)
def test_extend_to_border(line, expected) -> None:
    got = line.extend_to_border(100, 100)
    assert (approx_xy(got.p1), approx_xy(got.p2)) == expected


def test_extend_to_border_when_it_misses_the_image() -> None:
    with pytest.raises(ValueError, match="does not cross the 100x100 image"):
        Ray((-10, 50), (-20, 50)).extend_to_border(100, 100)
    with pytest.raises(ValueError, match="does not cross"):
        Line((0, 150), (10, 150)).extend_to_border(100, 100)


# --------------------------------------------------------------------------- rays


@pytest.mark.parametrize(
    ("ray", "target", "expected"),
    [
        (Ray((50, 50), (60, 50)), Box((70, 40, 80, 60)), (70, 50)),
        (Ray((50, 50), (60, 50)), Box((0, 0, 100, 100)), (100, 50)),  # from inside: exit
        (Ray((50, 50), (40, 50)), Box((70, 40, 80, 60)), None),  # pointing away
        (Ray((0, 0), (1, 1)), Polygon(((5, 0), (15, 0), (15, 10), (5, 10))), (5, 5)),
        (Line((20, 5), (15, 5)), SQUARE, (10, 5)),  # a line is read as a ray from p1
        (Ray((0, 20), (1, 20)), Line((5, 0), (5, 30)), (5, 20)),
    ],
)
def test_ray_boundary_hit(ray, target, expected) -> None:
    assert approx_xy(ray_boundary_hit(ray, target)) == expected


@pytest.mark.parametrize(
    ("ray", "centre_xy", "radius", "expected"),
    [
        (Ray((50, 50), (60, 50)), (50, 50), 10, (60, 50)),  # from the centre
        (Ray((0, 50), (1, 50)), (100, 50), 10, (90, 50)),  # from outside: near rim
        (Ray((0, 50), (-1, 50)), (100, 50), 10, None),  # away from it
        (Ray((0, 0), (1, 0)), (50, 10), 10, (50, 0)),  # tangent
        (Ray((0, 0), (1, 0)), (50, 11), 10, None),  # misses
        (Ray((0, 0), (3, 4)), (0, 0), 5, (3, 4)),
    ],
)
def test_ray_circle_hit(ray, centre_xy, radius, expected) -> None:
    assert approx_xy(ray_circle_hit(ray, centre_xy, radius)) == expected


def test_ray_circle_hit_rejects_bad_radius() -> None:
    with pytest.raises(ValueError, match="radius must be positive"):
        ray_circle_hit(Ray((0, 0), (1, 0)), (0, 0), 0)


def test_first_hit_compass() -> None:
    """A needle from the dial centre pointing up-right hits 'NE' before 'E' or 'N'."""
    needle = Ray((100, 100), (110, 90))
    letters = [
        Box((95, 10, 105, 20)),  # N, straight up
        Box((170, 95, 180, 105)),  # E, right
        Box((150, 40, 160, 50)),  # NE, on the diagonal
        Box((160, 30, 170, 40)),  # further along the same diagonal
    ]
    hit = first_hit(needle, letters)
    assert hit is not None
    assert hit.index == 2
    assert approx_xy(hit.point_px) == (150, 50)
    assert hit.distance_px == pytest.approx(50 * math.sqrt(2))


def test_first_hit_labelled_regions() -> None:
    needle = Ray((100, 100), (100, 0))  # straight up
    regions = {
        "E": Box((170, 95, 180, 105)),
        "N": Box((95, 10, 105, 20)),
        "S": Box((95, 180, 105, 190)),
    }
    hit = first_hit(needle, regions)
    assert hit is not None
    assert (hit.label, hit.index, approx_xy(hit.point_px), hit.distance_px) == (
        "N",
        1,
        (100, 20),
        80,
    )


def test_doctests() -> None:
    from groundeval.grounding import _geometry
    from groundeval.programs import _views

    for module in (_geometry, _views):
        assert doctest.testmod(module).failed == 0


def test_first_hit_tolerance_and_containment() -> None:
    ray = Ray((0, 0), (1, 0))
    near_miss = [Box((10, 1, 12, 3))]
    assert first_hit(ray, near_miss) is None
    grazed = first_hit(ray, near_miss, tolerance_px=1.5)
    assert grazed is not None and grazed.index == 0
    around = first_hit(ray, [Box((20, -1, 22, 1)), Box((-5, -5, 5, 5))])
    assert around is not None and around.index == 1 and around.distance_px == 0.0


# --------------------------------------------------------------------------- conventions
# One coordinate API: judges' conventions are converted in groundeval.judges only.


def test_grounding_has_no_second_coordinate_api() -> None:
    import groundeval.grounding as grounding

    for old in ("box_2d_1000_to_xyxy_px", "xyxy_px_to_box_2d_1000", "point_yx_1000_to_px"):
        assert not hasattr(grounding, old)


@pytest.mark.parametrize(
    ("box_2d", "wh", "xyxy"),
    [
        ([100, 200, 500, 1000], (640, 480), (128.0, 48.0, 640.0, 240.0)),
        ([0, 0, 1000, 1000], (1024, 768), (0.0, 0.0, 1024.0, 768.0)),
        ([250, 500, 750, 750], (200, 400), (100.0, 100.0, 150.0, 300.0)),
    ],
)
def test_box_2d_round_trip(box_2d, wh, xyxy) -> None:
    gemini = BoxConvention.BOX_2D_1000
    assert box_to_xyxy_px(box_2d, gemini, wh) == pytest.approx(xyxy)
    assert xyxy_px_to_box(xyxy, gemini, wh) == pytest.approx(box_2d)


@pytest.mark.parametrize(
    ("box_2d", "convention", "message"),
    [
        ([0, 0, 1050, 10], "box_2d_1000", "ymax=1050 is outside the image"),
        ([500, 0, 100, 10], "box_2d_1000", "corners swapped: ymin=500 > ymax=100"),
        ([0, 0, 10], "box_2d_1000", "4 numbers"),
        ([0, 0, 10, 10], "box_2d_100", "unknown box convention 'box_2d_100'"),
    ],
)
def test_box_2d_rejects_bad_values(box_2d, convention, message) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        box_to_xyxy_px(box_2d, convention, (100, 100))


def test_box_2d_small_overshoot_is_clamped() -> None:
    assert box_to_xyxy_px([-3, 0, 1004, 500], "box_2d_1000", (100, 200)) == [0, 0, 50, 200]


def test_point_and_normalised_conventions() -> None:
    assert point_to_px([250, 500], BoxConvention.BOX_2D_1000, (640, 480)) == [320.0, 120.0]
    norm = BoxConvention.XYXY_NORM
    assert box_to_xyxy_px([0.25, 0.5, 0.75, 1.0], norm, (200, 100)) == [50.0, 50.0, 150.0, 100.0]
    with pytest.raises(ValueError, match=r"0\.\.1\b"):
        box_to_xyxy_px([0, 0, 2, 1], norm, (200, 100))
