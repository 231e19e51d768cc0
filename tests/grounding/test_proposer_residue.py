"""Proposers that know their limits: wider competence, residue, clutter and bad input.

Images are drawn here (the tuning generators' drawing helpers, fixed seeds), so the
expected answers come from what was drawn, not from a run of the proposer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import _effects as fx
from groundeval.benchmarks.synthetic._tuning import FACES, METALS, draw_coin, draw_die
from groundeval.grounding.proposers import (
    _discs,
    ocr,
    opencv_circles,
    opencv_color,
    opencv_contours,
    opencv_dice,
    opencv_lines,
    yolo_coins,
    yolo_dice,
)
from groundeval.grounding.proposers._cv import CVProposer
from groundeval.programs._model import GroundSpec

TABLE_BGR = (35, 70, 120)  # brown: no face style is camouflaged on it


def _spec(proposer: str = "opencv.dice", **params: object) -> GroundSpec:
    return GroundSpec(helper="boxes", proposer=proposer, params=dict(params))


def _dice_image(
    style: str, pips: list[int], pip_share: float = 0.085, table: np.ndarray | None = None
) -> np.ndarray:
    rng = np.random.default_rng(7)
    img = table.copy() if table is not None else np.full((480, 640, 3), TABLE_BGR, np.uint8)
    for i, n in enumerate(pips):
        die = {"cx": 140.0 + 180 * i, "cy": 240.0, "side": 70.0, "angle": 12.0 * i, "pips": n,
               "style": style}  # fmt: skip
        draw_die(img, die, pip_share, rng, shadow=False)
    return fx.jpeg(fx.noise(img, rng, 3.0), 80)


def _decided(proposal: object) -> bool:
    return not (proposal.unexplained or proposal.problems)  # type: ignore[attr-defined]


@pytest.mark.parametrize("style", ["red", "blue", "black", "green", "white"])
def test_dice_of_any_face_colour_are_read(style: str) -> None:
    pips = [3, 5, 2]
    proposal = opencv_dice.DiceProposer().run(_dice_image(style, pips), _spec())
    assert _decided(proposal), (proposal.unexplained, proposal.problems)
    by_x = sorted(proposal.elements, key=lambda e: (e.xyxy_px or [0])[0])
    assert [e.fields["pips"] for e in by_x] == pips


def test_light_pips_on_a_dark_face() -> None:
    assert FACES["black"][1] > FACES["black"][0]  # the pips really are lighter than the face
    proposal = opencv_dice.DiceProposer().run(_dice_image("black", [6, 4]), _spec())
    assert sorted(e.fields["pips"] for e in proposal.elements) == [4, 6]


def test_a_die_outside_the_model_is_unexplained_not_absent() -> None:
    # with the coloured-face path off, the proposer only knows white dice: a red die
    # must come back as an unexplained region, never as "no dice"
    proposal = opencv_dice.DiceProposer().run(_dice_image("red", [4]), _spec(colour_faces=False))
    assert proposal.elements == []
    assert len(proposal.unexplained) == 1
    x1, y1, x2, y2 = proposal.unexplained[0].xyxy_px or [0, 0, 0, 0]
    assert x1 < 140 < x2 and y1 < 240 < y2
    assert "no die face covers" in proposal.unexplained[0].reason


@pytest.mark.parametrize("pips", [6, 4, 5])
def test_merged_pips_are_split_or_refused_never_miscounted(pips: int) -> None:
    # pips of 0.14 x side on a 6 face overlap their neighbours (rows 0.25 side apart)
    image = _dice_image("ivory", [pips], pip_share=0.14)
    (face,) = opencv_dice.DiceProposer().run(image, _spec()).elements
    if face.fields["pips"] is None:
        assert "pip" in face.fields["problem"]
    else:
        assert face.fields["pips"] == pips


def test_merged_six_is_split_by_the_distance_transform() -> None:
    (face,) = opencv_dice.DiceProposer().run(_dice_image("white", [6], 0.14), _spec()).elements
    assert face.fields["pips"] == 6


def _face_pips(
    table_bgr: tuple[int, int, int], face_bgr: tuple[int, int, int], *spots: Callable[..., object]
) -> tuple[int | None, str]:
    """count_pips on a face 100 px wide (its outline given), with ``spots`` drawn on the image."""
    img = np.full((200, 200, 3), table_bgr, np.uint8)
    cv2.rectangle(img, (50, 50), (150, 150), face_bgr, -1)
    for draw in spots:
        draw(img)
    outline = np.array([[50, 50], [150, 50], [150, 150], [50, 150]], np.int32).reshape(-1, 1, 2)
    lab = cv2.cvtColor(img, cv2.COLOR_BGR2LAB)
    return opencv_dice.count_pips(lab, outline, 100.0, opencv_dice.DiceProposer.defaults)


def _dot(x: int, y: int, r: int, bgr: tuple[int, int, int] = (20, 20, 20)) -> Callable[..., object]:
    return lambda img: cv2.circle(img, (x, y), r, bgr, -1)


def _corners(r: int) -> list[Callable[..., object]]:
    """The four corner pips of a four, five or six."""
    return [_dot(x, y, r) for x, y in [(75, 75), (125, 125), (125, 75), (75, 125)]]


WHITE = (235, 235, 235)


def _oval_centre(axes: tuple[int, int]) -> tuple[int | None, str]:
    def oval(img: np.ndarray) -> object:
        return cv2.ellipse(img, (100, 100), axes, 30, 0, 360, (20, 20, 20), -1)

    return _face_pips(TABLE_BGR, WHITE, *_corners(7), oval)


def test_a_slanted_pip_is_one_pip_by_its_peers_area() -> None:
    # an oval as large as its round peers: its inscribed radius alone says two pips
    assert _oval_centre((10, 5)) == (5, "")
    # an oval twice as large with one core is still two merged pips, refused
    pips, problem = _oval_centre((14, 7))
    assert pips is None and problem.startswith("merged pips")


def test_a_pip_split_in_two_cores_of_one_pip_s_area_is_refused() -> None:
    # a three whose centre pip is pinched (a ringed pip on a see-through die, fourth-style
    # seed 3969): thin at its waist, its cores and its own inscribed disc both say two,
    # so "4" was read; its area is one of its round peers'
    def pinched(img: np.ndarray) -> None:
        for x in (96, 104):
            cv2.circle(img, (x, 100), 4, (20, 20, 20), -1)

    pips, problem = _face_pips(TABLE_BGR, WHITE, _dot(75, 75, 6), _dot(125, 125, 6), pinched)
    assert pips is None and "area of one pip's peers" in problem
    # two round pips of their peers' size, touching, have the area of two: still split
    pair = (_dot(94, 100, 6), _dot(106, 100, 6))
    assert _face_pips(TABLE_BGR, WHITE, _dot(75, 75, 6), _dot(125, 125, 6), *pair) == (4, "")


def test_corner_pips_joined_to_a_pale_table_refuse_the_face() -> None:
    # a three on an orange face whose corner pips sit on its outline (fourth-style seed
    # 3461): white pips and a pale table are one spot around the face, of which the pips
    # are a sliver, so they went with the table and the centre pip read as a one
    orange, pale, white = (40, 120, 240), (215, 215, 225), (245, 245, 245)
    on_rim = [_dot(x, y, 8, white) for x, y in [(100, 100), (54, 54), (146, 146)]]
    pips, problem = _face_pips(pale, orange, *on_rim)
    assert pips is None and problem == opencv_dice.EDGE_PIP
    # the same three clear of the outline reads, the table's ring about it notwithstanding
    inside = [_dot(x, y, 8, white) for x, y in [(100, 100), (75, 75), (125, 125)]]
    assert _face_pips(pale, orange, *inside) == (3, "")


def _speck(at: tuple[int, int]) -> tuple[int | None, str]:
    # on a pale table the margin around the face is not lit: the speck stands alone there
    return _face_pips((215,) * 3, WHITE, *_corners(9), _dot(*at, 4))


@pytest.mark.parametrize("at", [(100, 160), (162, 100), (40, 100), (100, 38)])
def test_a_pip_sized_spot_reaching_the_side_of_the_margin_is_table(at: tuple[int, int]) -> None:
    # the margin pips are sought in ends at the crop's edge on a face's straight sides; its
    # rim was found only round the corners there, so a dark spot on a pale table beside an
    # upright face was read as a fifth pip (in a shaded corner) and refused the four
    assert _face_pips((215,) * 3, WHITE, *_corners(9), _dot(*at, 9)) == (4, "")


def test_a_speck_off_the_face_is_table_and_one_on_it_refuses() -> None:
    # in the margin pips are sought in, beyond the face's outline: the table, passed over
    assert _speck((100, 158)) == (4, "")
    # on the face, a spot half a pip wide may be a pip half hidden: the face is refused
    pips, problem = _speck((100, 100))
    assert pips is None and problem.startswith("spot of radius")


def test_a_glare_beside_a_pip_is_no_second_pip() -> None:
    # a green face with one yellow pip and a pale glare across from it: laid out as a two,
    # but a die's pips are painted alike
    yellow, glare = _dot(82, 82, 8, (40, 210, 230)), _dot(118, 118, 8, (200, 235, 200))
    pips, problem = _face_pips(TABLE_BGR, (60, 160, 40), yellow, glare)
    assert pips is None and "clashing colours" in problem


def test_coins_of_several_metals_on_wood() -> None:
    rng = np.random.default_rng(3)
    img = fx.wood_grain(rng, fx.SIZE_WH)
    centres = [(120.0, 120.0, 34.0), (320.0, 150.0, 40.0), (500.0, 320.0, 30.0), (200, 340, 36)]
    for (cx, cy, r), metal in zip(centres, ["gold", "silver", "copper", "gold"], strict=True):
        draw_coin(img, (cx, cy), r, METALS[metal], rng, shadow=False)
    proposal = opencv_contours.ContoursProposer().run(img, _spec("opencv.contours"))
    assert _decided(proposal), (proposal.unexplained, proposal.problems)
    assert len(proposal.elements) == len(centres)
    for e in proposal.elements:
        x1, y1, x2, y2 = e.xyxy_px or [0, 0, 0, 0]
        assert any(x1 <= cx <= x2 and y1 <= cy <= y2 for cx, cy, _ in centres)


THREE_COINS = [(140.0, 140.0, 36.0), (460.0, 170.0, 38.0), (300.0, 330.0, 37.0)]


def _coin_sized_flags(
    table: np.ndarray, coins: list[tuple[float, float, float]] = THREE_COINS
) -> tuple[float, list[list[float]]]:
    """Three silver coins ``(x, y, r)`` drawn on ``table``, the first two found: the table's
    edge share, and where the coin-sized Hough look flags a coin missed."""
    rng = np.random.default_rng(4)
    img = table.copy()
    for cx, cy, r in coins:
        draw_coin(img, (cx, cy), r, METALS["silver"], rng, shadow=False)
    half, edges, scale = _discs.half_edges(img, float(_discs.HOUGH_VOTE["param1"]))
    found = [_discs.circle_box(*c) for c in coins[:2]]
    flags = _discs.loose_circles(half, found, _discs.HOUGH_VOTE, edges, scale, _discs.COIN_SIZED)
    return _discs.table_edge_share(edges, found, scale), [f.xyxy_px or [] for f in flags]


def test_the_coin_sized_look_flags_a_missed_coin_on_a_plain_table_only() -> None:
    w, h = fx.SIZE_WH
    share, flags = _coin_sized_flags(np.full((h, w, 3), (200, 205, 210), np.uint8))
    assert share < _discs.COIN_SIZED.max_table_edges and flags
    assert all(x1 <= 300 <= x2 and y1 <= 330 <= y2 for x1, y1, x2, y2 in flags)
    # on wood grain Hough finds rims in the grain (seed 0: three, with the table rule off);
    # a table so edged says nothing about a coin missed
    share, flags = _coin_sized_flags(fx.wood_grain(np.random.default_rng(0), fx.SIZE_WH))
    assert share > _discs.COIN_SIZED.max_table_edges and flags == []


def test_coins_missed_do_not_make_a_plain_table_look_edged() -> None:
    # four of six silver coins missed put their own rims on a plain sweep: 5.8 % of it
    # edged, over the cut; read again without Hough's circles it is plain (probe 107605)
    w, h = fx.SIZE_WH
    rng = np.random.default_rng(4)
    img = np.full((h, w, 3), (200, 205, 210), np.uint8)
    coins = [(110.0, 110.0, 40.0), (470.0, 120.0, 42.0), (300.0, 330.0, 41.0),
             (120.0, 370.0, 40.0), (520.0, 380.0, 42.0), (300.0, 110.0, 40.0)]  # fmt: skip
    for cx, cy, r in coins:
        draw_coin(img, (cx, cy), r, METALS["silver"], rng, shadow=False)
    half, edges, scale = _discs.half_edges(img, float(_discs.HOUGH_VOTE["param1"]))
    found = [_discs.circle_box(*c) for c in coins[:2]]
    cut = _discs.COIN_SIZED.max_table_edges
    assert cut < _discs.table_edge_share(edges, found, scale) < _discs.TABLE_RECHECK * cut
    flags = _discs.loose_circles(half, found, _discs.HOUGH_VOTE, edges, scale, _discs.COIN_SIZED)
    boxes = [f.xyxy_px or [] for f in flags]
    for cx, cy, _ in coins[2:]:
        assert any(x1 <= cx <= x2 and y1 <= cy <= y2 for x1, y1, x2, y2 in boxes), boxes


def test_the_coin_sized_look_seeks_a_coin_under_half_the_least_found() -> None:
    # a small silver coin beside large ones on a pale sweep: 0.48 of the least radius found
    # (probe 107219, 107148 and 108144 alike: missed, nothing flagged, with a 0.6 span)
    w, h = fx.SIZE_WH
    sweep = np.full((h, w, 3), (200, 205, 210), np.uint8)
    coins = [(150.0, 200.0, 48.0), (450.0, 220.0, 50.0), (300.0, 380.0, 23.0)]
    _, flags = _coin_sized_flags(sweep, coins)
    assert any(x1 <= 300 <= x2 and y1 <= 380 <= y2 for x1, y1, x2, y2 in flags), flags


def test_scikit_image_coins_at_defaults() -> None:
    data = pytest.importorskip("skimage.data")
    photo = data.coins()
    proposal = opencv_contours.ContoursProposer().run(photo, _spec("opencv.contours"))
    assert _decided(proposal), (proposal.unexplained, proposal.problems)
    assert len(proposal.elements) == 24  # counted by eye: 4 rows of 6
    assert all(e.fields["radius_px"] is not None for e in proposal.elements)


def test_hough_on_wood_grain_is_not_trusted() -> None:
    rng = np.random.default_rng(5)
    img = fx.wood_grain(rng, fx.SIZE_WH)
    proposal = opencv_circles.CirclesProposer().run(img, _spec("opencv.circles"))
    # no disc was drawn: any circle Hough reports must come with a problem
    assert not proposal.elements or proposal.problems


def test_self_check_can_be_skipped_for_timing() -> None:
    image = _dice_image("red", [2])
    full = opencv_dice.DiceProposer().run(image, _spec())
    bare = opencv_dice.DiceProposer().run(image, _spec(), checks=False)
    assert [e.fields for e in bare.elements] == [e.fields for e in full.elements]
    assert bare.unexplained == [] and bare.problems == []


PROPOSERS = [
    opencv_dice.DiceProposer,
    opencv_contours.ContoursProposer,
    opencv_circles.CirclesProposer,
    opencv_circles.BlobsProposer,
    opencv_lines.LinesProposer,
    opencv_color.ColorRegionProposer,
    ocr.OCRProposer,
    yolo_coins.YoloCoinsProposer,
    yolo_dice.YoloDiceProposer,
]
HELPERS = {"opencv.lines": "line", "opencv.color_region": "boundary", "ocr": "text"}


def _noisy(shape_hw: tuple[int, int], bgr: tuple[int, int, int], sigma: float) -> np.ndarray:
    """One colour with sensor noise of ``sigma`` (seeded)."""
    rng = np.random.default_rng(0)
    img = np.full((*shape_hw, 3), bgr, np.float32) + rng.normal(0.0, sigma, (*shape_hw, 3))
    return np.clip(img, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("factory", PROPOSERS)
@pytest.mark.parametrize(
    ("what", "image"),
    [
        ("empty", np.zeros((0, 0, 3), np.uint8)),
        ("tiny", np.full((3, 3, 3), 200, np.uint8)),
        ("uniform", np.full((480, 640, 3), 128, np.uint8)),
        ("uniform grey", np.full((300, 400), 30, np.uint8)),
        # one colour is flat whatever it spans across its channels (was "0 dice", grounded)
        ("uniform red", np.full((480, 640, 3), (30, 40, 200), np.uint8)),
        ("uniform felt, noisy", _noisy((480, 640), (45, 100, 50), 0.6)),
        ("huge uniform", np.full((3000, 4000, 3), 90, np.uint8)),
    ],
)
def test_bad_input_is_a_problem_not_an_exception(
    factory: type[CVProposer], what: str, image: np.ndarray
) -> None:
    spec = GroundSpec(helper=HELPERS.get(factory.name, "boxes"), proposer=factory.name)
    proposal = factory().run(image, spec)
    assert proposal.elements == []
    assert proposal.problems, f"{what}: a proposal on nothing must say why it is useless"


def test_huge_image_is_read() -> None:
    img = np.full((3000, 4000, 3), TABLE_BGR, np.uint8)
    rng = np.random.default_rng(1)
    draw_die(img, {"cx": 2000.0, "cy": 1500.0, "side": 300.0, "angle": 0.0, "pips": 5,
                   "style": "white"}, 0.085, rng, shadow=False)  # fmt: skip
    proposal = opencv_dice.DiceProposer().run(img, _spec())
    assert [e.fields["pips"] for e in proposal.elements] == [5]
    assert _decided(proposal)


def test_bad_image_types_are_named() -> None:
    with pytest.raises(ValueError, match="uint8"):
        opencv_dice.DiceProposer().run(np.zeros((10, 10, 3), np.float64), _spec())
    with pytest.raises(ValueError, match="shape"):
        opencv_contours.ContoursProposer().run(np.zeros((4, 4, 5), np.uint8), _spec())


def test_contrasting_square_of_a_die_size_is_flagged_for_coins() -> None:
    # a coin proposer ignores squares (cards) but not an unread disc darker than the table
    img = np.full((480, 640, 3), (150, 190, 200), np.uint8)  # light table
    cv2.circle(img, (200, 240), 35, (245, 245, 250), -1, cv2.LINE_AA)  # a bright coin
    cv2.circle(img, (420, 240), 35, (40, 60, 90), -1, cv2.LINE_AA)  # a dark bronze coin
    proposal = opencv_contours.ContoursProposer().run(img, _spec("opencv.contours"))
    assert len(proposal.elements) == 1
    assert len(proposal.unexplained) == 1
    x1, _, x2, _ = proposal.unexplained[0].xyxy_px or [0, 0, 0, 0]
    assert x1 < 420 < x2


def test_two_needles_are_a_problem() -> None:
    from groundeval.grounding.proposers import opencv_lines

    img = np.full((400, 400, 3), 235, np.uint8)
    cv2.circle(img, (200, 200), 180, (40, 40, 40), 3, cv2.LINE_AA)
    cv2.line(img, (200, 200), (200, 50), (20, 20, 20), 6, cv2.LINE_AA)  # one needle up
    one = opencv_lines.LinesProposer().run(img, GroundSpec(helper="line", proposer="opencv.lines"))
    assert len(one.elements) == 1 and not one.problems
    cv2.line(img, (200, 200), (350, 200), (20, 20, 20), 6, cv2.LINE_AA)  # and one as long, right
    two = opencv_lines.LinesProposer().run(img, GroundSpec(helper="line", proposer="opencv.lines"))
    assert two.problems and "second line" in two.problems[0]


def test_regions_beyond_max_regions_are_unexplained() -> None:
    from groundeval.grounding.proposers import opencv_color

    img = np.full((300, 400, 3), (200, 120, 60), np.uint8)
    yellow = (0, 220, 240)
    cv2.circle(img, (100, 150), 40, yellow, -1)
    cv2.circle(img, (300, 150), 35, yellow, -1)
    spec = GroundSpec(helper="boundary", proposer="opencv.color_region")
    proposal = opencv_color.ColorRegionProposer().run(img, spec)
    assert len(proposal.elements) == 1  # max_regions defaults to 1
    (extra,) = proposal.unexplained
    x1, _, x2, _ = extra.xyxy_px or [0, 0, 0, 0]
    assert x1 < 300 < x2


def _verdict(proposal: object, truth: dict[str, object], field: str) -> str:
    """``withheld``, ``exact`` or ``wrong``, as perf/proposer_tuning.py scores an image."""
    if proposal.unexplained or proposal.problems:  # type: ignore[attr-defined]
        return "withheld"
    values = [e.fields.get(field) for e in proposal.elements]  # type: ignore[attr-defined]
    if not values or any(v is None for v in values):
        return "withheld"
    right = len(values) == truth["count"]
    if field == "pips":
        right = right and sum(int(v) for v in values) == truth["pip_sum"]  # type: ignore[arg-type]
    return "exact" if right else "wrong"


# tuning images each proposer once answered confidently and wrongly: a small die beside
# big ones (16, 48, 56), a black die on dark cloth (19); a small coin beside a big one (11),
# nickel and silver barely off a grey table (27, 65), bronze on wood (35, 37)
@pytest.mark.parametrize("seed", [16, 19, 48, 56])
def test_missed_dice_of_the_tuning_set_are_withheld(seed: int) -> None:
    from groundeval.benchmarks.synthetic._tuning import dice_scene

    scene = dice_scene(seed)
    proposal = opencv_dice.DiceProposer().run(scene.image_bgr, _spec())
    assert _verdict(proposal, scene.truth, "pips") != "wrong", [e.fields for e in proposal.elements]


@pytest.mark.parametrize("seed", [11, 27, 35, 37, 65])
def test_missed_coins_of_the_tuning_set_are_withheld(seed: int) -> None:
    from groundeval.benchmarks.synthetic._tuning import coins_scene

    scene = coins_scene(seed)
    proposal = opencv_contours.ContoursProposer().run(scene.image_bgr, _spec("opencv.contours"))
    assert _verdict(proposal, scene.truth, "radius_px") != "wrong"


def _tilted_square(
    img: np.ndarray, centre: tuple[float, float], side: float, colour: tuple[int, int, int]
) -> None:
    rect = (centre, (side, side), 40.0)
    cv2.fillPoly(img, [np.round(cv2.boxPoints(rect)).astype(np.int32)], colour, cv2.LINE_AA)


def test_full_size_look_tells_a_small_ellipse_from_a_die() -> None:
    img = np.full((200, 300, 3), (60, 140, 60), np.uint8)
    _tilted_square(img, (80.0, 100.0), 40.0, (170, 80, 30))
    cv2.ellipse(img, (220, 100), (22, 15), 30.0, 0, 360, (200, 60, 90), -1, cv2.LINE_AA)
    img = cv2.GaussianBlur(img, (0, 0), 1.2)
    assert opencv_dice.square_at_full_size(img, (52.0, 72.0, 108.0, 128.0))
    assert not opencv_dice.square_at_full_size(img, (196.0, 80.0, 244.0, 120.0))


def test_a_faint_coin_is_unexplained() -> None:
    # a nickel coin about 12 Lab units off a grey table: too faint to count, too visible
    # to call absent
    img = np.full((480, 640, 3), (150, 150, 140), np.uint8)
    cv2.circle(img, (200, 240), 40, (60, 170, 210), -1, cv2.LINE_AA)  # gold, counted
    cv2.circle(img, (440, 240), 36, (165, 163, 160), -1, cv2.LINE_AA)  # nickel, faint
    rng = np.random.default_rng(4)
    proposal = opencv_contours.ContoursProposer().run(
        fx.noise(img, rng, 2.0), _spec("opencv.contours")
    )
    assert len(proposal.elements) == 1
    assert any(
        (u.xyxy_px or [0, 0, 0])[0] < 440 < (u.xyxy_px or [0, 0, 0])[2]
        for u in proposal.unexplained
    )


def test_a_loud_table_that_raises_the_cut_is_a_problem_not_silence():
    from groundeval.grounding.proposers._residue import Sizes, contrast_map, unexplained_regions

    # blue and cream stripes a coin wide contrast everywhere, even in their quietest quarter:
    # the cut they need is over 1.25x the 28 a coin needs on a plain table, so a coin
    # contrasting less than the stripes would be lost in them
    img = np.full((240, 320, 3), (235, 240, 245), np.uint8)
    for x in range(0, 320, 24):
        img[:, x : x + 12] = (170, 100, 40)
    sizes = Sizes(200.0, 5000.0, 120.0)
    _, problems = unexplained_regions(contrast_map(img, 120.0, 28.0), [], sizes, "coin")
    assert any(p.startswith("the table's own pattern contrasts by") for p in problems), problems
    # the same coin on a plain table: the floor holds and nothing is said
    plain = np.full_like(img, (235, 240, 245))
    cv2.circle(plain, (160, 120), 25, (60, 110, 190), -1)
    cmap = contrast_map(plain, 120.0, 28.0)
    assert cmap.level == 28.0
    assert unexplained_regions(cmap, [], sizes, "coin")[1] == []


def test_the_coin_sized_look_flags_a_coin_touching_one_found_whose_circle_it_overlaps() -> None:
    # a silver coin touching a found one whose circle was read a little wide: Hough's circle
    # of the coin missed overlaps it (probe 109313: by 6.3 px, 0.26 of its radius); with its
    # rim on an edge all round it is still a coin missed, and with no overlap allowed not
    w, h = fx.SIZE_WH
    rng = np.random.default_rng(4)
    img = np.full((h, w, 3), (200, 205, 210), np.uint8)
    coins = [(150.0, 200.0, 44.0), (300.0, 220.0, 42.0), (386.0, 220.0, 42.0)]
    for cx, cy, r in coins:
        draw_coin(img, (cx, cy), r, METALS["silver"], rng, shadow=False)
    half, edges, scale = _discs.half_edges(img, float(_discs.HOUGH_VOTE["param1"]))
    found = [_discs.circle_box(150.0, 200.0, 44.0), _discs.circle_box(304.0, 220.0, 50.0)]
    looks = [_discs.COIN_SIZED, replace(_discs.COIN_SIZED, max_overlap=0.0)]
    flags = [_discs.loose_circles(half, found, _discs.HOUGH_VOTE, edges, scale, k) for k in looks]
    boxes = [[f.xyxy_px or [] for f in fl] for fl in flags]
    assert any(x1 <= 386 <= x2 and y1 <= 220 <= y2 for x1, y1, x2, y2 in boxes[0]), boxes
    assert boxes[1] == []
