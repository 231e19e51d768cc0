"""The residue check's shortcuts (issue 11: self-check cost) give the plain computation's answers.

Each shortcut is compared with the straightforward computation it replaces, on images drawn
here and on the synthetic scenes, so a speed-up that changes a decision fails here.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import generate
from groundeval.grounding.proposers import _discs, _residue, opencv_circles, opencv_contours
from groundeval.grounding.proposers._cv import Review
from groundeval.programs._model import GroundSpec
from groundeval.state import Element


def _scene(seed: int) -> np.ndarray:
    """Coins on a textured table with a mortar-like line (regions of every kind)."""
    rng = np.random.default_rng(seed)
    img = np.clip(rng.normal(110, 12, (360, 500, 3)), 0, 255).astype(np.uint8)
    cv2.line(img, (0, 180), (499, 200), (200, 210, 200), 5)
    for _ in range(6):
        cx, cy = int(rng.integers(40, 460)), int(rng.integers(40, 320))
        r = int(rng.integers(14, 34))
        colour = tuple(int(v) for v in rng.integers(0, 255, 3))
        cv2.circle(img, (cx, cy), r, colour, -1, cv2.LINE_AA)
    return cv2.GaussianBlur(img, (3, 3), 0)


@pytest.mark.parametrize("size_px", [8.0, 20.0, 36.0])
def test_opening_a_map_reuses_its_closed_cut_to_the_same_mask(size_px: float) -> None:
    cmap = _residue.contrast_map(_scene(7), 150.0, 8.0)
    assert cmap.closed is not None
    recomputed = _residue.ContrastMap(cmap.scale, cmap.distance, cmap.mask, cmap.level)
    assert np.array_equal(
        _residue.opened(cmap, size_px).mask, _residue.opened(recomputed, size_px).mask
    )


def _rim_support_one(element: Element, edges: np.ndarray, scale: float) -> float:
    """The per-circle loop ``rim_supports`` replaced."""
    cx, cy = element.fields["center_px"]
    r = float(element.fields["radius_px"])
    t = np.linspace(0, 2 * np.pi, 72, endpoint=False)
    xs = np.clip(np.round((cx + r * np.cos(t)) * scale).astype(int), 0, edges.shape[1] - 1)
    ys = np.clip(np.round((cy + r * np.sin(t)) * scale).astype(int), 0, edges.shape[0] - 1)
    return float((edges[ys, xs] > 0).mean())


def test_rim_supports_match_the_per_circle_loop() -> None:
    rng = np.random.default_rng(3)
    edges = (rng.random((240, 320)) > 0.7).astype(np.uint8) * 255
    circles = [
        _discs.circle_box(float(x), float(y), float(r))
        for x, y, r in zip(rng.uniform(-20, 660, 40), rng.uniform(-20, 500, 40),
                           rng.uniform(3, 90, 40), strict=True)
    ]  # fmt: skip
    got = _discs.rim_supports(circles, edges, 0.5)
    assert got.tolist() == [_rim_support_one(e, edges, 0.5) for e in circles]


def _same_review(a: Review, b: Review) -> bool:
    return [e.model_dump() for e in a.unexplained] == [
        e.model_dump() for e in b.unexplained
    ] and a.problems == b.problems


@pytest.mark.parametrize(("scene", "level", "seed"), [("coins", "clean", 0), ("coins", "hard", 3),
                                                      ("dice", "moderate", 1)])  # fmt: skip
def test_circles_analyse_equals_detect_then_self_check(scene: str, level: str, seed: int) -> None:
    img = generate(scene, level, seed).image_bgr
    proposer = opencv_circles.CirclesProposer()
    spec = GroundSpec(helper="boxes", proposer=proposer.name)
    params = proposer.resolve(spec)
    elements, review = proposer.analyse(img, spec, params)
    detected = proposer.detect(img, spec, params)
    assert [e.model_dump() for e in elements] == [e.model_dump() for e in detected]
    assert _same_review(review, proposer.self_check(img, detected, params))


# ---------------------------------- the looks of circles and blobs (self-check overhead, again)


def _masks(seed: int) -> list[np.ndarray]:
    """0/255 masks of every kind the looks cut: noise, lines, rings, blurred blobs, scene cuts."""
    rng = np.random.default_rng(seed)
    out = [(rng.random((60, 80)) > rng.uniform(0.3, 0.95)).astype(np.uint8) * 255]
    lines = np.zeros((90, 120), np.uint8)
    for _ in range(12):
        a, b = rng.integers(-5, 125, 2), rng.integers(-5, 125, 2)
        cv2.line(
            lines, (int(a[0]), int(a[1])), (int(b[0]), int(b[1])), 255, int(rng.integers(1, 3))
        )
    for _ in range(5):
        centre = (int(rng.integers(0, 120)), int(rng.integers(0, 90)))
        cv2.circle(lines, centre, int(rng.integers(2, 20)), 255, int(rng.choice([-1, 1, 2])))
    out.append(lines)
    noise = cv2.GaussianBlur(rng.random((120, 160)).astype(np.float32), (0, 0), 2.0)
    out.append(_residue.above(noise, float(np.quantile(noise, 0.7))))
    cmap = _residue.contrast_map(_scene(seed), 150.0, 8.0)
    out += [_residue.above(cmap.distance, cmap.level * f) for f in (0.5, 1.0, 2.0)]
    return out


@pytest.mark.parametrize("seed", range(6))
def test_filled_masks_keep_the_outer_contours_they_were_filled_from(seed: int) -> None:
    # the looks take a filled mask's outlines from the mask it was filled from
    for mask in _masks(seed):
        out, contours = _residue.filled(mask)
        again, _ = cv2.findContours(out, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        assert len(again) == len(contours)
        assert all(np.array_equal(a, b) for a, b in zip(again, contours, strict=True))


def _plain_unexplained(
    cmap: _residue.ContrastMap, elements: list[Element], sizes: _residue.Sizes, **kw: float
) -> list[tuple[float, ...]]:
    """The per-contour loop ``unexplained_regions`` had: boxes of the regions it flags."""
    s = cmap.scale
    covered = np.zeros(cmap.mask.shape, np.uint8)
    for e in elements:
        x1, y1, x2, y2 = e.xyxy_px or [0.0] * 4
        cv2.rectangle(
            covered,
            (int(x1 * s) - 1, int(y1 * s) - 1),
            (int(np.ceil(x2 * s)) + 1, int(np.ceil(y2 * s)) + 1),
            1,
            -1,
        )
    contours, _ = cv2.findContours(cmap.mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    found = []
    for c in contours:
        area = float(cv2.contourArea(c)) / (s * s)
        hull = float(cv2.contourArea(cv2.convexHull(c))) / (s * s)
        (_, _), (rw, rh), _ = cv2.minAreaRect(c)
        aspect = max(rw, rh) / max(min(rw, rh), 1e-6)
        _, radius = cv2.minEnclosingCircle(c)
        roundness = area * s * s / (np.pi * max(radius, 1e-6) ** 2)
        x, y, bw, bh = cv2.boundingRect(c)
        if (
            sizes.min_area_px <= area <= sizes.max_area_px
            and hull > 0
            and area / hull >= kw.get("min_solidity", 0.8)
            and aspect <= kw.get("max_aspect", 2.6)
            and roundness >= kw.get("min_roundness", 0.0)
            and covered[y : y + bh, x : x + bw].mean() < kw.get("covered_share", 0.3)
        ):
            found.append(tuple(round(v, 2) for v in (x / s, y / s, (x + bw) / s, (y + bh) / s)))
    return found  # fmt: skip


SCENES = [("coins", "clean", 0), ("coins", "hard", 3), ("dice", "moderate", 1), ("rows", "hard", 2)]


@pytest.mark.parametrize(("scene", "level", "seed"), SCENES)
def test_looks_sharing_outlines_and_covered_masks_flag_what_each_alone_did(
    scene: str, level: str, seed: int
) -> None:
    img = generate(scene, level, seed).image_bgr
    elements = opencv_circles.CirclesProposer().run(img, GroundSpec(helper="boxes")).elements
    cmap = _residue.contrast_map(img, 160.0, 8.0)
    sizes = _residue.Sizes(150.0, 40000.0, 160.0)
    solid = {"min_solidity": 0.7, "max_aspect": 2.0, "covered_share": 0.1, "min_roundness": 0.33}
    looks: list[dict[str, float]] = [{"min_roundness": 0.6}, solid, {}]
    for m in (cmap, _residue.opened(cmap, 16.0), _residue.opened(cmap, 32.0)):
        for kw in looks:  # one map, several looks: outlines and covered mask taken once
            found, _ = _residue.unexplained_regions(m, elements, sizes, "x", **kw)
            assert [tuple(e.xyxy_px or []) for e in found] == _plain_unexplained(
                m, elements, sizes, **kw
            )


def _float_lab_distance(lab8: np.ndarray, background: np.ndarray) -> np.ndarray:
    """The float32 computation ``lab_distance`` replaced."""
    diff = lab8.astype(np.float32) - background.astype(np.float32)
    summed = cv2.transform(cv2.multiply(diff, diff), np.ones((1, 3), np.float32))
    return np.asarray(cv2.sqrt(summed)).reshape(lab8.shape[:2])


def test_lab_distance_in_8_bits_equals_the_float_computation() -> None:
    rng = np.random.default_rng(5)
    extremes = np.array([[[0, 0, 0], [255, 255, 255]]], np.uint8)
    a = np.concatenate([rng.integers(0, 256, (1, 998, 3), dtype=np.uint8), extremes], axis=1)
    b = np.concatenate(
        [rng.integers(0, 256, (1, 998, 3), dtype=np.uint8), extremes[:, ::-1]], axis=1
    )
    assert np.array_equal(_residue.lab_distance(a, b), _float_lab_distance(a, b))
    lab = cv2.cvtColor(_scene(2), cv2.COLOR_BGR2LAB)
    background = _residue.median_background(lab, 90.0)
    assert np.array_equal(
        _residue.lab_distance(lab, background), _float_lab_distance(lab, background)
    )


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (9, 9), (40, 56), (97, 103)])
def test_masked_medians_and_pixel_median_are_np_median(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[0])
    for high in (256, 3):  # spread values, and ties
        image = rng.integers(0, high, (*shape, 3), dtype=np.uint8)
        mask = (rng.random(shape) < 0.6).astype(np.uint8)
        mask.flat[0] = 1  # never empty
        count = int(np.count_nonzero(mask))
        picked = image[mask > 0]
        expected = [float(np.median(picked[:, c])) for c in range(3)]
        assert _residue.masked_medians(image, (0, 1, 2), mask, count) == expected
        before = picked.copy()
        assert _residue.pixel_median(picked).tolist() == expected
        assert np.array_equal(picked, before)  # its input is left as it was


def test_a_squared_lab_distance_cut_equals_the_distance_cut() -> None:
    lab = cv2.cvtColor(_scene(3), cv2.COLOR_BGR2LAB)
    colour = (120.0, 130.0, 125.0, 0.0)
    cut = 25.0
    squared = _residue.lab_distance(lab, colour, squared=True)
    assert np.array_equal(
        _residue.above(squared, cut**2), _residue.above(_residue.lab_distance(lab, colour), cut)
    )


@pytest.mark.parametrize("shape", [(1, 1), (4, 4), (5, 7), (120, 160), (121, 163)])
def test_sample_median_is_np_median(shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(shape[1])
    for values in (rng.random(shape), rng.integers(0, 4, shape)):  # ties too
        grid = values.astype(np.float32)[::3, ::3]  # the map's sample: odd and even sizes
        assert _residue.sample_median(grid) == float(np.median(grid))
        short = [float(v) for v in values.ravel()[:9]]
        assert _residue.median(short) == float(np.median(short))


def _old_background(lab8: np.ndarray, window_px: float) -> np.ndarray:
    """``local_background`` as it was (np.clip, and float32 of the upsampled median).

    The shrunk copy is the area resize of the whole blocks, as :func:`_residue.shrink` reads.
    """
    sh, sw = lab8.shape[:2]
    step = max(1, int(np.ceil(max(sh, sw) / _residue.BACKGROUND_SIDE_PX)))
    whole = lab8[: sh // step * step, : sw // step * step]
    tiny = lab8 if step == 1 else cv2.resize(whole, (sw // step, sh // step),
                                             interpolation=cv2.INTER_AREA)  # fmt: skip
    th, tw = tiny.shape[:2]
    k = int(np.clip(window_px * tiny.shape[1] / sw, 3, max(3, min(th, tw) - 1))) | 1
    med = cv2.medianBlur(tiny, k) if min(th, tw) > k else tiny
    return np.asarray(cv2.resize(med, (sw, sh), interpolation=cv2.INTER_LINEAR), np.float32)


@pytest.mark.parametrize("window_px", [1.0, 6.0, 30.0, 47.8, 120.0, 500.0])
def test_local_background_is_unchanged(window_px: float) -> None:
    lab = cv2.cvtColor(cv2.resize(_scene(1), (160, 115)), cv2.COLOR_BGR2LAB)
    assert np.array_equal(
        _residue.local_background(lab, window_px), _old_background(lab, window_px)
    )


def test_a_coarse_map_differs_only_for_a_wide_window_and_barely() -> None:
    img = _scene(4)
    narrow = (
        _residue.contrast_map(img, 60.0, 8.0),
        _residue.contrast_map(img, 60.0, 8.0, coarse=True),
    )
    assert np.array_equal(narrow[0].distance, narrow[1].distance)
    exact, coarse = (_residue.contrast_map(img, 240.0, 8.0, coarse=c) for c in (False, True))
    assert not np.array_equal(exact.distance, coarse.distance)
    assert np.mean(exact.mask != coarse.mask) < 0.02


def test_an_opening_too_thin_to_cut_adds_nothing_to_the_round_look() -> None:
    # blobs on coins: none found, the window is small, opened() hands back the map itself,
    # so the bridged look (same filters, least area 0) is the round look again: skipped
    img = generate("coins", "clean", 0).image_bgr
    params = opencv_circles.BlobsProposer().resolve(GroundSpec(helper="boxes"))
    sizes, cmap = opencv_contours.residue_map(img, [], params)
    divisor = opencv_contours.BRIDGE_DIVISOR
    assert _residue.opened(cmap, sizes.window_px / divisor) is cmap
    round_look, _ = _residue.unexplained_regions(cmap, [], sizes, "blob", min_roundness=0.6)
    assert round_look  # the coins, which no blob covers
    repeated, _ = _residue.unexplained_regions(
        _residue.ContrastMap(cmap.scale, cmap.distance, cmap.mask, cmap.level), [], sizes, "blob",
        min_roundness=0.6,
    )  # fmt: skip
    assert _residue.merge_found(round_look, repeated) == round_look
    assert opencv_contours.opened_residue(cmap, [], sizes, "blob", divisor) == []


def test_above_is_numpys_comparison_in_float32() -> None:
    rng = np.random.default_rng(8)
    values = rng.uniform(0, 60, (90, 120)).astype(np.float32)
    values[0, :5] = [0.0, 8.0, np.nextafter(np.float32(8), np.float32(9)), 30.0, 60.0]
    # levels on, between and just off float32 values: both round the level to float32
    for level in (8.0, 8.0 + 1e-9, float(values[3, 3]), float(values[3, 3]) - 1e-7, 30.0000001):
        expected = (values > level).astype(np.uint8) * 255
        assert np.array_equal(_residue.above(values, level), expected)


def _loose_per_candidate(
    half: np.ndarray,
    elements: list[Element],
    params: dict[str, float],
    edges: np.ndarray,
    scale: float,
) -> list[Element]:
    """The per-candidate loop ``loose_circles`` replaced: an element per candidate."""
    widest = max((float(e.fields["radius_px"]) for e in elements), default=0.0)
    found = _discs.loose_vote(half, params, scale, widest)
    if found is None:
        return []
    candidates = [_discs.circle_box(x / scale, y / scale, r / scale) for x, y, r in found]
    support = _discs.rim_supports(candidates, edges, scale)
    look = _discs.LOOSE
    out = []
    for c, share in zip(candidates, support, strict=True):
        (cx, cy), r = c.fields["center_px"], float(c.fields["radius_px"])
        into = [  # how far the candidate reaches into each element's circle, and that radius
            (
                r
                + float(e.fields["radius_px"])
                - float(np.hypot(cx - e.fields["center_px"][0], cy - e.fields["center_px"][1])),
                float(e.fields["radius_px"]),
            )
            for e in elements
        ]
        if any(depth > look.max_overlap * min(r, other) for depth, other in into):
            continue
        clear = all(depth <= 0 for depth, _ in into)
        touching = all(depth < _discs.TOUCH_PX for depth, _ in into)
        if share >= look.min_rim and (
            clear or (touching and share >= look.touch_rim) or share >= _discs.FULL_RIM
        ):
            out.append(c)
    return out


@pytest.mark.parametrize(("scene", "level", "seed"), SCENES)
@pytest.mark.parametrize("votes", [30.0, 12.0])
def test_loose_vote_on_arrays_flags_the_circles_the_per_candidate_loop_did(
    scene: str, level: str, seed: int, votes: float
) -> None:
    # the loose look scores every candidate as a row, making an element only for those flagged
    img = generate(scene, level, seed).image_bgr
    proposer = opencv_circles.CirclesProposer()
    params = {**proposer.resolve(GroundSpec(helper="boxes", proposer=proposer.name)),
              "param2": votes}  # fmt: skip
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    half = cv2.GaussianBlur(cv2.resize(grey, (grey.shape[1] // 2, grey.shape[0] // 2),
                                       interpolation=cv2.INTER_AREA), (3, 3), 0)  # fmt: skip
    edges = cv2.dilate(cv2.Canny(half, 50, 100), np.ones((3, 3), np.uint8))
    none: list[Element] = []
    for elements in (proposer.detect(img, GroundSpec(helper="boxes"), params), none):
        got = _discs.loose_circles(half, elements, params, edges, 0.5)
        want = _loose_per_candidate(half, elements, params, edges, 0.5)
        assert [e.xyxy_px for e in got] == [e.xyxy_px for e in want]
        assert all("looser vote" in e.reason for e in got)
    assert _loose_per_candidate(half, [], {**params, "param2": 12.0}, edges, 0.5)  # not vacuous


@pytest.mark.parametrize("shape", [(480, 640), (481, 643), (37, 50)])
@pytest.mark.parametrize("step", [2, 3, 4, 8])
def test_halving_averages_whole_blocks_as_an_area_resize_does(
    shape: tuple[int, int], step: int
) -> None:
    # the coarse map halves instead of one area resize: same size, each block's mean within
    # half a level per halving; a step that is no power of two is the area resize itself
    rng = np.random.default_rng(step)
    img = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    got = _residue.halved(img, step)
    assert got.shape == _residue.shrink(img, step).shape
    if step & (step - 1):
        assert np.array_equal(got, _residue.shrink(img, step))
        return
    h, w = shape[0] // step * step, shape[1] // step * step
    blocks = img[:h, :w].reshape(h // step, step, w // step, step, 3).mean(axis=(1, 3))
    assert np.abs(got - blocks).max() <= 0.5 * np.log2(step)


@pytest.mark.parametrize("shape", [(512, 512), (481, 643), (37, 50)])
@pytest.mark.parametrize("step", [3, 5, 6])
def test_shrinking_averages_whole_blocks_on_any_side(shape: tuple[int, int], step: int) -> None:
    # a side the step does not divide loses its last rows and columns: each pixel stays
    # its block's mean (the area resize's integer path; its fractional one mixed blocks)
    rng = np.random.default_rng(step)
    img = rng.integers(0, 256, (*shape, 3), dtype=np.uint8)
    got = _residue.shrink(img, step)
    h, w = shape[0] // step * step, shape[1] // step * step
    blocks = img[:h, :w].reshape(h // step, step, w // step, step, 3).mean(axis=(1, 3))
    assert got.shape == blocks.shape
    assert np.abs(got - blocks).max() <= 0.5 + 1e-9


def _coin_note_ring_clip(k: int) -> tuple[np.ndarray, list[Element]]:
    """A coin, a turned note, a thin ring and a blue disc on grey, ``k`` times 40 px wide each."""
    from groundeval.grounding.proposers._cv import box

    img = np.full((60 * k, 230 * k, 3), (150, 150, 152), np.uint8)
    r = 20 * k
    centres = [(30 * k, 30 * k), (85 * k, 30 * k), (140 * k, 30 * k), (195 * k, 30 * k)]
    cv2.circle(img, centres[0], r, (60, 175, 220), -1, cv2.LINE_AA)
    note = cv2.boxPoints((centres[1], (32 * k, 32 * k), 30)).astype(np.int32)
    cv2.fillPoly(img, [note], (120, 235, 245), cv2.LINE_AA)
    cv2.circle(img, centres[2], r, (60, 175, 220), max(2, k), cv2.LINE_AA)
    cv2.circle(img, centres[3], r, (200, 90, 40), -1, cv2.LINE_AA)
    boxes = [box((x - r - 1, y - r - 1, x + r + 1, y + r + 1)) for x, y in centres]
    return img, boxes


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_a_wide_box_read_on_a_shrunk_crop_keeps_its_verdict(k: int) -> None:
    # boxes wider than SHAPE_SIDE_PX are read shrunk by a whole step: 42 px (read whole)
    # to 282 px (read at a fifth) say the same of each object
    img, boxes = _coin_note_ring_clip(k)
    doubts = _discs.unlike_discs(img, boxes, "coin", (35.0, 110.0))
    assert [d.split(" is ")[0] for d in doubts] == ["coin #2", "coin #3", "coin #4"], doubts
    assert "a rectangle" in doubts[0] and "hollow" in doubts[1] and "hue" in doubts[2]


def test_the_coin_sized_look_seeks_only_radii_near_those_found() -> None:
    # Hough seeks 0.6 of the smallest to 1.6 of the largest radius found: a coin missed is
    # flagged, a disc three times as wide and one a third as wide are not sought
    img = np.full((400, 600), 170, np.uint8)
    found = [(80, 80, 30), (200, 80, 30)]
    for x, y, r in [*found, (340, 90, 30), (460, 260, 90), (120, 300, 10)]:
        cv2.circle(img, (x, y), r, 90, -1, cv2.LINE_AA)
    bgr = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    half, edges, scale = _discs.half_edges(bgr, 100.0)
    elements = [_discs.circle_box(x, y, r) for x, y, r in found]
    flags = _discs.loose_circles(half, elements, _discs.HOUGH_VOTE, edges, scale, _discs.COIN_SIZED)
    (flag,) = flags
    x1, y1, x2, y2 = flag.xyxy_px or [0.0] * 4
    assert np.hypot((x1 + x2) / 2 - 340, (y1 + y2) / 2 - 90) < 4, flag
    wide = _discs.loose_vote(half, _discs.HOUGH_VOTE, scale, 0.0, 1.0, (54.0, 126.0))
    assert wide is not None
    assert any(np.hypot(x / scale - 460, y / scale - 260) < 6 for x, y, _ in wide)
