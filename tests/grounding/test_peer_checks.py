"""The peer look, faint elements and measured uncertainty: objects judged against their peers.

Small images are drawn here; out-of-style *tuning* seeds (< 700000) of the ``rows`` scene
pin the cases the rules were written for: rows the old checks answered wrongly.
"""

from __future__ import annotations

import asyncio
from typing import Any

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import encode_png
from groundeval.benchmarks.synthetic.outstyle import generate as generate_out
from groundeval.grounding._loop import run_grounding
from groundeval.grounding.proposers import opencv_contours
from groundeval.grounding.proposers._cv import box
from groundeval.grounding.proposers._peers import faint_elements, peer_review, unseen_elements
from groundeval.grounding.proposers._residue import ContrastMap, contrast_map
from groundeval.judges import ImagePart
from groundeval.programs import run_check
from groundeval.programs._model import GroundSpec
from groundeval.state import Element, Provenance

Contours = opencv_contours.ContoursProposer
CENTRES = [(60 + 70 * i, 120) for i in range(8)]
RADIUS = 20


def _gravel(seed: int = 0) -> np.ndarray:
    """A purple table with blotchy texture, 240 x 620."""
    rng = np.random.default_rng(seed)
    noise = cv2.GaussianBlur(rng.normal(0, 1, (240, 620)).astype(np.float32), (0, 0), 4)
    img = np.empty((240, 620, 3), np.float32)
    img[:] = (150, 60, 120)
    img += (noise / noise.std() * 12)[..., None]
    return np.clip(img, 0, 255).astype(np.uint8)


def _row_of_dark_discs(shadow: bool = True) -> np.ndarray:
    """Eight dark buttons close together, each with a soft shadow joining its neighbours."""
    img = _gravel()
    if shadow:
        for x, y in CENTRES:
            cv2.ellipse(img, (x + 6, y + 4), (RADIUS + 14, RADIUS + 6), 0, 0, 360, (90, 30, 70), -1)
        img = cv2.GaussianBlur(img, (0, 0), 2)
    for x, y in CENTRES:
        cv2.circle(img, (x, y), RADIUS, (25, 20, 25), -1, cv2.LINE_AA)
    return img


def _disc_box(x: int, y: int, r: int = RADIUS) -> Element:
    return box((x - r, y - r, x + r, y + r), radius_px=float(r))


def _cmap(img: np.ndarray) -> Any:
    return contrast_map(img, 3.0 * 2 * RADIUS * 1.2, min_contrast=8.0)


def test_the_missed_peers_of_a_row_are_unexplained() -> None:
    # a cut at the table's level merges the row and its shadows into one long region,
    # so the plain residue saw nothing object-like: the peer cut splits the row again
    img = _row_of_dark_discs()
    found = [_disc_box(*c) for c in CENTRES[:5]]
    unexplained, problems = peer_review(_cmap(img), found, "disc")
    flagged = sorted(round((u.xyxy_px or [0.0])[0]) for u in unexplained)
    assert len(flagged) == 3 and problems == []
    assert all(abs(f - (x - RADIUS)) < 12 for f, (x, _) in zip(flagged, CENTRES[5:], strict=True))
    assert peer_review(_cmap(img), [_disc_box(*c) for c in CENTRES], "disc") == ([], [])


def test_a_box_around_two_objects_is_a_problem() -> None:
    img = _row_of_dark_discs(shadow=False)
    (x1, y), (x2, _) = CENTRES[0], CENTRES[1]
    pair = box((x1 - RADIUS, y - RADIUS, x2 + RADIUS, y + RADIUS), radius_px=55.0)
    rest = [_disc_box(*c) for c in CENTRES[2:]]
    _, problems = peer_review(_cmap(img), [pair, *rest], "disc")
    assert problems == ["disc #1 holds 2 separate object-like regions"]


def test_a_piece_of_an_object_is_a_problem() -> None:
    img = _row_of_dark_discs(shadow=False)
    x, y = CENTRES[3]
    piece = box((x - 6, y - 8, x + 6, y + 8), radius_px=7.0)
    others = [_disc_box(*c) for i, c in enumerate(CENTRES) if i != 3]
    _, problems = peer_review(_cmap(img), [*others, piece], "disc")
    assert problems == ["disc #8 covers only part of a round region: an object cut up?"]


def test_a_region_of_table_grown_around_an_object_is_a_problem() -> None:
    # a region of a cloudy table grown around a coin: as bright as its peers (it holds
    # one), so no faint element, and its radius is the table's
    img = _row_of_dark_discs(shadow=False)
    x, y = CENTRES[2]
    halo = box((x - 40, y - 40, x + 40, y + 40), radius_px=40.0)
    others = [_disc_box(*c) for i, c in enumerate(CENTRES) if i != 2]
    _, problems = peer_review(_cmap(img), [*others, halo], "disc", segmented=True)
    assert problems == ["disc #8 is far larger than the round region in it: table around?"]
    assert peer_review(_cmap(img), [*others, _disc_box(x, y)], "disc", segmented=True) == ([], [])
    assert peer_review(_cmap(img), [*others, halo], "disc")[1] == []  # fitted circles, boxes


def test_patches_of_a_cloudy_table_counted_as_coins_withhold() -> None:
    # out-of-style tuning seed 600332: five coins on a cloudy gradient; the table grown
    # around one coin and a patch between two were two more regions: "6 coins", wrong (the
    # patch alone is not singled out: on a photo a look for it took coins for table too)
    # (at defaults the table grown around the coin is also refused as a rectangle; with
    # that test off, the peer look alone must withhold)
    scene = generate_out("coins", 600332)
    no_rect = GroundSpec(helper="boxes", params={"max_rect_fill": 1.01})
    proposal = Contours().run(scene.image_bgr, no_rect)
    assert len(proposal.elements) == 6 and len(scene.truth["coins"]) == 5
    assert "element #1 is far larger than the round region in it: table around?" in (
        proposal.problems
    )
    # the patch (#5) is also doubted as hollow since its shape is read where it runs on;
    # the table around the coin reaches the frame and is no whole disc: refused (stop 55)
    assert [p for p in proposal.problems if "far larger" not in p] == [
        "element(s) #1 cut by the frame: size not measured",
        "element #5 is hollow (its core 1% unlike the table, its rim 38%), not a coin?",
    ]
    at_defaults = Contours().run(scene.image_bgr, GroundSpec(helper="boxes"))
    assert at_defaults.problems == ["element(s) #1 irregular: size not measured"]


def test_an_element_far_fainter_than_its_peers_is_a_problem() -> None:
    img = _row_of_dark_discs(shadow=False)
    patch = box((280, 190, 320, 230), radius_px=20.0)  # bare table below the row
    found = [_disc_box(*c) for c in CENTRES]
    problems = faint_elements(_cmap(img), [*found, patch], "disc")
    assert len(problems) == 1 and problems[0].startswith("disc #9 contrasts")
    assert faint_elements(_cmap(img), found, "disc") == []


def test_a_radius_is_the_disc_of_its_area_and_a_cut_outline_widens_its_uncertainty() -> None:
    img = np.full((200, 400, 3), (60, 90, 120), np.uint8)
    cv2.circle(img, (100, 100), 30, (230, 230, 230), -1, cv2.LINE_AA)
    cv2.circle(img, (280, 100), 30, (230, 230, 230), -1, cv2.LINE_AA)
    cv2.rectangle(img, (305, 96), (322, 104), (230, 230, 230), -1)  # a tab on the second
    found = Contours().detect(img, GroundSpec(helper="boxes"), dict(Contours.defaults))
    clean, cut = sorted(found, key=lambda e: (e.xyxy_px or [0.0])[0])
    assert abs(clean.fields["radius_px"] - 30) < 1.5  # the blur before the cut adds about 1
    assert clean.fields["radius_px_err"] <= 0.3
    # the watershed splits the tab off and takes a wedge of the disc with it: the disc
    # reads small, and its uncertainty says its outline there is a split, not an edge
    assert cut.fields["radius_px"] < clean.fields["radius_px"] - 1
    assert cut.fields["radius_px_err"] > 3 * clean.fields["radius_px_err"]


def test_a_faint_edge_moves_more_with_the_cut_than_crisp_ones() -> None:
    img = np.full((200, 520, 3), (60, 90, 120), np.uint8)
    for x in (70, 190, 310):
        cv2.circle(img, (x, 100), 30, (220, 220, 225), -1, cv2.LINE_AA)
    soft = np.full_like(img, (60, 90, 120))
    cv2.circle(soft, (430, 100), 30, (220, 220, 225), -1, cv2.LINE_AA)
    soft = cv2.GaussianBlur(soft, (0, 0), 6)
    img[:, 370:] = soft[:, 370:]
    found = Contours().detect(img, GroundSpec(helper="boxes"), dict(Contours.defaults))
    errs = [e.fields["radius_px_err"] for e in sorted(found, key=lambda e: e.xyxy_px or [0.0])]
    assert len(errs) == 4
    assert max(errs[:3]) <= 0.3 and errs[3] > 1.0


def _ground(scene: Any, question: str = "g1") -> Any:
    spec = scene.programs[0].question(question).ground.model_copy(update={"params": {}})
    h, w = scene.image_bgr.shape[:2]
    return asyncio.run(
        run_grounding(
            image_bgr=scene.image_bgr,
            image=ImagePart(encode_png(scene.image_bgr), "image/png", (w, h)),
            spec=spec,
            ask="",
            item_id=scene.id,
            question_id=question,
            provenance=Provenance(toolkit_version="test"),
        )
    )


@pytest.mark.parametrize(
    "seed",
    [
        600062,  # dark buttons on gravel: 7 of 11 found, the row one merged region
        600089,  # metal domes on brick: 3 of 11 found on the retry, the rest unflagged
        600596,  # dark discs on a gradient: boxes around the gaps between them
        600035,  # a patch of gravel counted as a disc
    ],
)
def test_tuning_rows_once_miscounted_are_withheld(seed: int) -> None:
    scene = generate_out("rows", seed)
    state = _ground(scene)
    n = len(scene.truth["discs"])
    assert state.status == "withheld" or len(state.elements) == n


@pytest.mark.parametrize(
    "seed",
    [
        600020,  # flat tokens: spread 1.32 px against 1.316 allowed, by the enclosing circle
        600121,  # ivory tokens on light wood: two faint ones read 10 % small
        600578,  # teal tokens on dark grain: edges the cut does not place
    ],
)
def test_tuning_rows_once_misjudged_in_size_are_not_failed(seed: int) -> None:
    # all discs the same size: the answer must be "pass" or withheld, never "fail"
    scene = generate_out("rows", seed)
    assert scene.truth["mode"] == "same" and not scene.truth["broken"]
    state = _ground(scene)
    if state.status != "grounded":
        return
    h1 = scene.programs[0].question("h1")
    try:
        assert run_check(h1.check, state).score == 1.0
    except Exception as exc:  # too close to call: the runner withholds it
        assert "too close to call" in str(exc)


@pytest.mark.parametrize(("lit", "doubted"), [(1, True), (2, False), (3, False)])
def test_a_map_that_shows_under_half_the_elements_found_says_so(lit: int, doubted: bool):
    mask = np.zeros((100, 300), np.uint8)
    boxes = [box((10 + 100 * i, 30, 50 + 100 * i, 70)) for i in range(3)]
    for i in range(lit):
        cv2.circle(mask, (30 + 100 * i, 50), 18, 255, -1)  # a disc fills 0.79 of its box
    cmap = ContrastMap(1.0, np.zeros(mask.shape, np.float32), mask, 45.0, floor=28.0)
    problems = unseen_elements(cmap, boxes, "coin")
    plain = ContrastMap(1.0, cmap.distance, mask, 28.0, floor=28.0)  # the cut at its floor
    assert unseen_elements(plain, boxes, "coin") == []
    assert bool(problems) is doubted
    if doubted:
        assert problems == [
            "the residue map shows 1 of the 3 coins found: a coin missed would not show either"
        ]
    assert unseen_elements(cmap, [], "coin") == []
