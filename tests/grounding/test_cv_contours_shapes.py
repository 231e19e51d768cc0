"""``opencv.contours`` measures discs: a rectangle (a sticky note, a card) is refused.

Probe-style tuning seeds (0-99) held six sticky notes counted as coins: a square region
is as solid and as short as a disc. A disc fills 0.79 of its turned bounding rectangle
(one cut by a card's edge little more; every coin decided in four styles' tuning ranges
0.85 or less), a square all of it; over ``max_rect_fill`` (0.9) the region is refused
(``radius_px: None``), so the question is withheld.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import blind, probe
from groundeval.benchmarks.synthetic._common import Scene
from groundeval.grounding.proposers import opencv_contours
from groundeval.grounding.proposers._discs import circle_box, unlike_discs
from groundeval.programs._model import GroundSpec

SPEC = GroundSpec(helper="boxes", proposer="opencv.contours")


def _table_with_note(angle_deg: float) -> np.ndarray:
    img = np.full((360, 480, 3), (70, 66, 64), np.uint8)
    for cx, cy in ((90, 120), (380, 250)):
        cv2.circle(img, (cx, cy), 38, (60, 175, 220), -1, cv2.LINE_AA)
    note = cv2.boxPoints(((230, 180), (90, 90), angle_deg)).astype(np.int32)
    cv2.fillPoly(img, [note], (120, 235, 245), cv2.LINE_AA)
    rng = np.random.default_rng(1)
    return np.clip(img + rng.normal(0, 2, img.shape), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("angle", [0.0, 20.0, 45.0])
def test_a_square_note_is_refused_not_counted(angle: float) -> None:
    proposal = opencv_contours.ContoursProposer().run(_table_with_note(angle), SPEC)
    refused = [e for e in proposal.elements if e.fields["radius_px"] is None]
    assert len(proposal.elements) == 3 and len(refused) == 1, proposal.elements
    assert refused[0].fields["problem"].startswith("irregular region")
    # the test can be turned off for square objects: then the note is a third "disc"
    loose = SPEC.model_copy(update={"params": {"max_rect_fill": 1.01}})
    counted = opencv_contours.ContoursProposer().run(_table_with_note(angle), loose)
    assert all(e.fields["radius_px"] is not None for e in counted.elements)


@pytest.mark.parametrize("seed", [7, 20, 88])
def test_probe_style_notes_are_not_counted_as_coins(seed: int) -> None:
    s = probe.generate("coins", seed)
    proposal = opencv_contours.ContoursProposer().run(s.image_bgr, SPEC)
    decided = not proposal.unexplained and not proposal.problems
    decided = decided and all(e.fields["radius_px"] is not None for e in proposal.elements)
    assert not decided or len(proposal.elements) == s.truth["count"]


def test_a_gold_ring_cut_out_as_a_disc_is_doubted() -> None:
    # probe tuning seed 79: one silver coin and a thin gold ring on a dark backdrop; the
    # ring's region, holes filled, is a disc, and it was counted as a second coin
    s = probe.generate("coins", 79)
    assert 79 < probe.REPORT_SEED0 and len(s.truth["coins"]) == 1
    _assert_ring_doubted(s, "hollow")


def test_a_thin_rings_hole_filled_into_a_disc_is_doubted() -> None:
    # blind tuning seed 208939: one gold coin and a thin grey ring on a pale sweep; the
    # ring's dark inner edge, filled, is a disc of table inside it, counted as a second coin
    s = blind.generate("coins", 208939)
    assert len(s.truth["coins"]) == 1  # a fresh seed of stop 55, tuned on since
    _assert_ring_doubted(s, "a hole")


def test_a_round_piece_cut_out_of_a_coins_reflection_is_doubted() -> None:
    # probe 111128 (stop 56's fresh wrong, tuned on since): a silver coin on a glossy dark
    # backdrop; contours cut a round piece, 0.65 of the coin's radius, out of its dim
    # reflection and counted it as a second coin
    s = probe.generate("coins", 111128)
    reflection = next(d["xyxy_px"] for d in s.truth["distractors"] if d["kind"] == "reflection")
    proposal = opencv_contours.ContoursProposer().run(s.image_bgr, SPEC)
    (doubt,) = [p for p in proposal.problems if "faint copy" in p]
    number = int(doubt.split("#")[1].split()[0])
    x1, y1, x2, y2 = proposal.elements[number - 1].xyxy_px or [0, 0, 0, 0]
    assert reflection[0] <= (x1 + x2) / 2 <= reflection[2]
    assert reflection[1] <= (y1 + y2) / 2 <= reflection[3]


def test_only_a_faint_disc_inside_a_discs_mirror_image_is_its_reflection() -> None:
    img = np.full((400, 300, 3), 40, np.uint8)
    cv2.circle(img, (150, 100), 50, (200, 200, 205), -1, cv2.LINE_AA)
    cv2.circle(img, (150, 100), 38, (120, 120, 125), 3, cv2.LINE_AA)
    # a dim piece of its mirror image (centred 2 radii below, off its line), and the same
    # piece as far below, beside the mirror image: a dim coin of its own
    cv2.circle(img, (135, 200), 30, (52, 52, 54), -1, cv2.LINE_AA)
    cv2.circle(img, (235, 200), 30, (52, 52, 54), -1, cv2.LINE_AA)
    discs = [circle_box(150, 100, 50), circle_box(135, 200, 30), circle_box(235, 200, 30)]
    (doubt,) = unlike_discs(img, discs, "coin")
    assert doubt.startswith("coin #2 is a faint copy")


def _assert_ring_doubted(scene: Scene, doubt_word: str) -> None:
    """One problem with ``doubt_word`` names the element whose box centre lies in the ring."""
    ring = next(d["xyxy_px"] for d in scene.truth["distractors"] if d["kind"] == "ring")
    proposal = opencv_contours.ContoursProposer().run(scene.image_bgr, SPEC)
    (doubt,) = [p for p in proposal.problems if doubt_word in p]
    number = int(doubt.split("#")[1].split()[0])
    x1, y1, x2, y2 = proposal.elements[number - 1].xyxy_px or [0, 0, 0, 0]
    assert ring[0] <= (x1 + x2) / 2 <= ring[2] and ring[1] <= (y1 + y2) / 2 <= ring[3]


def test_polka_dots_smaller_than_the_coins_are_no_coins_missed() -> None:
    # crisp round dots a quarter of the coins' size: Hough finds them all round their
    # rims, but the look keeps only circles the size of what was found
    img = np.full((360, 480, 3), (200, 200, 200), np.uint8)
    for cx, cy in ((100, 120), (380, 120)):
        cv2.circle(img, (cx, cy), 40, (60, 175, 220), -1, cv2.LINE_AA)
    for x in range(40, 480, 60):
        cv2.circle(img, (x, 300), 10, (150, 150, 150), 2, cv2.LINE_AA)
    proposal = opencv_contours.ContoursProposer().run(img, SPEC)
    assert len(proposal.elements) >= 2
    assert not [u for u in proposal.unexplained if "Hough finds" in u.reason]


@pytest.mark.parametrize("seed", [119, 203])
def test_probe_style_silver_coins_on_pale_sweeps_withhold(seed: int) -> None:
    # probe tuning seeds where a silver or bimetal coin on a grey or white sweep was missed
    # and the count decided (one short)
    s = probe.generate("coins", seed)
    assert seed < probe.REPORT_SEED0
    proposal = opencv_contours.ContoursProposer().run(s.image_bgr, SPEC)
    assert len(proposal.elements) == len(s.truth["coins"]) - 1
    assert any("Hough finds" in u.reason for u in proposal.unexplained), proposal.unexplained


def test_a_blur_of_light_is_no_object() -> None:
    # bokeh: a soft disc of light, cut out of the table by contrast, with no edge anywhere
    img = np.full((360, 480, 3), (150, 150, 152), np.uint8)
    for cx, cy in ((100, 120), (380, 120)):
        cv2.circle(img, (cx, cy), 40, (60, 175, 220), -1, cv2.LINE_AA)
    light = np.zeros_like(img)
    cv2.circle(light, (240, 260), 35, (70, 70, 70), -1)
    img = cv2.add(img, cv2.GaussianBlur(light, (0, 0), 12))
    rng = np.random.default_rng(1)
    img = np.clip(img + rng.normal(0, 2, img.shape), 0, 255).astype(np.uint8)
    proposal = opencv_contours.ContoursProposer().run(img, SPEC)
    assert len(proposal.elements) == 3
    (doubt,) = proposal.problems
    assert doubt.startswith("element #3 has no edge in its box")
    # the crisp coins alone raise nothing
    crisp = opencv_contours.ContoursProposer().run(img[:200], SPEC)
    assert len(crisp.elements) == 2 and not crisp.problems


@pytest.mark.parametrize(("seed", "why"), [(105094, "no edge"), (105008, "Hough finds")])
def test_probe_style_bokeh_and_a_silver_coin_beside_copper_withhold(seed: int, why: str) -> None:
    # fresh report seeds of stop 38 (looked at in stop 39; reports since start higher):
    # bokeh counted as a coin; a silver coin touching a copper one missed, Hough fitting
    # its inner ring (so the table is read 1.8 radii out, clear of the coin's own rim)
    s = probe.generate("coins", seed)
    proposal = opencv_contours.ContoursProposer().run(s.image_bgr, SPEC)
    found = [*proposal.problems, *(u.reason for u in proposal.unexplained)]
    assert any(why in text for text in found), found
