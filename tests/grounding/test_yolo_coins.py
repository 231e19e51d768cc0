"""``yolo.coins``: the shipped coin detector (ONNX, core install) and its residue self-check."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from groundeval.grounding import xyxy_iou as iou
from groundeval.grounding.models.train_dice import (
    OUTSTYLE_SEED0,
    TRAIN_SEED0,
    VAL_SEED0,
    benchmark_scene,
)
from groundeval.grounding.proposers import _discs, yolo, yolo_coins
from groundeval.programs._model import GroundSpec

SEED = 5
"""An in-style seed far below the training (900000+) and validation (910000+) seeds."""


def spec(**params: object) -> GroundSpec:
    return GroundSpec(
        helper="boxes",
        target="each coin",
        proposer="yolo.coins",
        fields={"radius_px": {"type": "number", "minimum": 5}},
        params=params,
    )


def scene(difficulty: str = "clean", seed: int = SEED):
    assert seed < min(TRAIN_SEED0, VAL_SEED0, OUTSTYLE_SEED0)
    return benchmark_scene("coins", difficulty, seed)


def test_the_weights_are_shipped_and_registered():
    assert (yolo.MODELS_DIR / yolo_coins.COINS_WEIGHTS).is_file()
    assert yolo_coins.YoloCoinsProposer.defaults["weights"] == "coins_yolov8n.onnx"
    from groundeval.grounding._protocol import proposer_names

    assert "yolo.coins" in proposer_names()


def test_finds_the_coins_of_an_unseen_in_style_scene_with_their_radius():
    for difficulty in ("clean", "moderate"):
        s = scene(difficulty)
        proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
        truth = s.truth["coins"]
        assert len(proposal.elements) == len(truth) == s.truth["count"], difficulty
        assert not proposal.unexplained and not proposal.problems, difficulty
        for coin in truth:
            best = max(proposal.elements, key=lambda e: iou(tuple(e.xyxy_px), coin["xyxy_px"]))
            assert iou(tuple(best.xyxy_px), tuple(coin["xyxy_px"])) > 0.7
            assert abs(best.fields["radius_px"] - coin["radius_px"]) <= 0.12 * coin["radius_px"]
            assert best.fields["class_name"] == "coin" and 0 < best.fields["confidence"] <= 1


def test_a_coin_the_network_misses_is_flagged_unexplained():
    # each coin the network found is hidden from the self-check in turn, as if the
    # network had missed it: the residue check must point at it
    s = scene("clean")
    proposer = yolo_coins.YoloCoinsProposer()
    params = proposer.resolve(spec())
    found = proposer.detect(s.image_bgr, spec(), params)
    assert len(found) >= 2
    for missed in found:
        kept = [e for e in found if e is not missed]
        review = proposer.self_check(s.image_bgr, kept, params)
        flagged = [tuple(u.xyxy_px) for u in review.unexplained]
        assert max((iou(tuple(missed.xyxy_px), f) for f in flagged), default=0) > 0.5, flagged
        assert all("coin" in u.reason for u in review.unexplained)


def test_an_extra_coin_drawn_where_the_network_misses_it_withholds():
    # a high confidence cut drops every box but the surest: the coins it drops are
    # unexplained, so the proposal cannot be taken as the count
    s = scene("clean")
    proposer = yolo_coins.YoloCoinsProposer()
    everything = proposer.run(s.image_bgr, spec()).elements
    confidences = sorted(float(e.fields["confidence"]) for e in everything)
    assert len(confidences) >= 2
    cut = (confidences[-1] + confidences[-2]) / 2
    proposal = proposer.run(s.image_bgr, spec(conf=cut))
    assert len(proposal.elements) < len(everything)
    assert len(proposal.unexplained) >= len(everything) - len(proposal.elements) - 1
    assert proposal.unexplained


def test_box_doubts_name_boxes_unlike_one_coin():
    """Far from square or far from the others' size; a box clear of the frame holds a whole
    coin, so it must be nearly square (blind 205998: a red clip's bend boxed 40 x 55 px)."""
    from groundeval.grounding.proposers._cv import box

    params = dict(yolo_coins.YoloCoinsProposer.defaults)
    shape = (480, 640)
    coins = [box((0, 0, 40, 40)), box((100, 100, 140, 141))]
    assert yolo_coins.box_doubts(coins, params, shape) == []
    wide = box((0, 100, 90, 140))
    assert "far from square" in yolo_coins.box_doubts([*coins, wide], params, shape)[0]
    assert "range from" in yolo_coins.box_doubts([*coins, box((0, 100, 8, 108))], params, shape)[-1]
    clip = box((300, 200, 340, 255))
    assert "far from square" in yolo_coins.box_doubts([*coins, clip], params, shape)[0]
    cut = box((0, 200, 40, 255))  # the same box against the image's left edge
    assert yolo_coins.box_doubts([*coins, cut], params, shape) == []


def test_two_boxes_cutting_one_coin_are_a_doubt_but_coins_side_by_side_are_not():
    """Under ``dedupe_iou`` two boxes each cutting one coin both survive (probe 108283: a
    coin boxed twice, IoU 0.43); coins touching at a slant overlap by a corner only."""
    from groundeval.grounding.proposers._cv import box

    params = dict(yolo_coins.YoloCoinsProposer.defaults)
    shape = (480, 640)
    twice = [box((333, 360, 434, 440)), box((341, 390, 431, 467))]
    (doubt,) = yolo_coins.box_doubts(twice, params, shape)
    assert doubt.startswith("coin boxes #1 and #2 overlap by 0.43")
    touching = [box((100, 100, 180, 180)), box((157, 157, 237, 237))]  # centres 1.41 r apart
    assert yolo_coins.box_doubts(touching, params, shape) == []


def test_probe_108283_a_coin_boxed_twice_withholds():
    """A fresh probe report seed of stop 42 (looked at in stop 43): two boxes each cutting
    one silver coin were counted as two coins (8 for 7), with nothing flagged."""
    from groundeval.benchmarks.synthetic import probe

    s = probe.generate("coins", 108283)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, GroundSpec(helper="boxes"))
    assert len(proposal.elements) == 8 and s.truth["count"] == 7
    assert any("boxed twice" in p for p in proposal.problems), proposal.problems


@pytest.mark.parametrize(
    ("seed", "doubt", "score"),
    [
        # a dark speck by the edge scored 0.73 as a fifth coin beside four: the contrast
        # map sees nothing there
        (133, "shows nothing against the table", "0.7"),
        # (a tuning range) a dark card's corner scored 0.56 as a ninth coin beside eight:
        # lit on the contrast map, but the box's circle crosses only two straight edges
        (1057, "of its rim on an edge", "0.5"),
    ],
)
def test_a_half_believed_box_on_no_coin_is_a_doubt(seed: int, doubt: str, score: str):
    from groundeval.benchmarks.synthetic import generate

    s = generate("coins", "hard", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) == s.truth["count"] + 1  # the count is withheld, not said
    said = [p for p in proposal.problems if doubt in p]
    assert len(said) == 1 and f"(scored {score}" in said[0], proposal.problems


def test_bare_boxes_need_a_sure_score_or_contrast():
    from groundeval.grounding.proposers._cv import box
    from groundeval.grounding.proposers._residue import contrast_map

    table = np.full((200, 300, 3), (90, 60, 40), np.uint8)
    table[60:100, 200:240] = (200, 200, 210)  # a pale square "coin"
    cmap = contrast_map(table, 120.0)
    over_table = box((40, 60, 80, 100), confidence=0.6)
    over_coin = box((200, 60, 240, 100), confidence=0.6)
    sure = box((40, 120, 80, 160), confidence=0.9)
    problems = yolo_coins.bare_boxes(cmap, [over_coin, over_table, sure], 0.75)
    assert len(problems) == 1 and problems[0].startswith("coin #2 (scored 0.60)")


def _edges(img: np.ndarray) -> np.ndarray:
    """The half-size edges the self-check reads a rim on."""
    return _discs.half_edges(img, float(_discs.HOUGH_VOTE["param1"]))[1]


def test_rimless_boxes_need_a_sure_score_or_a_rim():
    import cv2

    from groundeval.grounding.proposers._cv import box

    table = np.full((240, 320, 3), (90, 60, 40), np.uint8)
    cv2.circle(table, (80, 120), 30, (200, 200, 210), -1, cv2.LINE_AA)  # a coin
    card = np.array([[200, 80], [320, 80], [320, 240], [200, 240]], np.int32)
    cv2.fillPoly(table, [card], (15, 15, 15))  # a dark card, its corner at (200, 80)
    coin = box((50, 90, 110, 150), confidence=0.6)
    corner = box((195, 75, 255, 135), confidence=0.6)
    sure_corner = box((195, 75, 255, 135), confidence=0.9)
    problems = yolo_coins.rimless_boxes(table, [coin, corner, sure_corner], 0.75, _edges(table))
    assert len(problems) == 1 and problems[0].startswith("coin #2 (scored 0.60)"), problems


def _engraved_coin(img: np.ndarray, centre: tuple[int, int], radius: int, bgr: tuple) -> None:
    """A coin with a darker rim ring and a numeral, as coins are drawn (edges inside)."""
    import cv2

    cv2.circle(img, centre, radius, bgr, -1, cv2.LINE_AA)
    dark = tuple(int(0.6 * c) for c in bgr)
    cv2.circle(img, centre, int(radius * 0.8), dark, 2, cv2.LINE_AA)
    x, y = centre
    cv2.putText(img, "20", (x - radius // 2, y + radius // 4), cv2.FONT_HERSHEY_SIMPLEX,
                radius / 40, dark, 2, cv2.LINE_AA)  # fmt: skip


def test_a_faint_mirror_image_just_below_a_coin_is_a_reflection():
    from groundeval.grounding.proposers._cv import box

    # a dark glossy table: a gold coin, its reflection below it (flipped, a quarter as
    # strong), and a second real coin stacked below another one further right
    img = np.full((360, 400, 3), (40, 40, 42), np.uint8)
    _engraved_coin(img, (100, 100), 50, (60, 180, 225))
    coin = img[50:151, 50:151].astype(np.float32)
    table = np.float32(img[5, 5])
    mirror = table + 0.25 * (coin[::-1] - table)
    img[151:252, 50:151] = np.clip(mirror, 0, 255).astype(np.uint8)
    _engraved_coin(img, (300, 100), 50, (60, 180, 225))
    _engraved_coin(img, (300, 201), 50, (185, 188, 190))
    boxes = [(50, 50, 150, 150), (50, 151, 150, 251), (250, 50, 350, 150), (250, 151, 350, 251)]
    (doubt,) = _discs.faint_copies(img, [box(xyxy) for xyxy in boxes], "coin")
    assert doubt.startswith("coin #2 is a faint copy") and "of coin #1 just above it" in doubt
    # the same faint disc beside the coin, not below it, is not judged a reflection
    assert _discs.faint_copies(img, [box(boxes[0]), box((151, 50, 251, 150))], "coin") == []
    assert "faint copy" in " ".join(_discs.unlike_discs(img, [box(b) for b in boxes], "coin"))


def test_a_blur_of_light_with_no_edge_is_no_coin_however_sure_the_score():
    import cv2

    from groundeval.grounding.proposers._cv import box

    img = np.full((240, 400, 3), (45, 45, 48), np.uint8)
    _engraved_coin(img, (100, 120), 50, (60, 180, 225))
    light = np.zeros_like(img)
    cv2.circle(light, (300, 120), 45, (70, 70, 70), -1)
    img = cv2.add(img, cv2.GaussianBlur(light, (0, 0), 12))  # bokeh: a soft disc of light
    coin, bokeh = box((50, 70, 150, 170), confidence=0.9), box((250, 70, 350, 170), confidence=0.9)
    (doubt,) = yolo_coins.rimless_boxes(img, [coin, bokeh], 0.75, _edges(img))
    assert doubt.startswith("coin #2 (scored 0.90) shows no edge on its rim")
    # a brown coin on green felt, as dark in grey as the felt: no edge in grey, but in colour
    felt = np.full((240, 240, 3), (50, 100, 45), np.uint8)
    cv2.circle(felt, (120, 120), 45, (30, 55, 140), -1, cv2.LINE_AA)
    grey = cv2.cvtColor(felt, cv2.COLOR_BGR2GRAY)
    assert abs(int(grey[120, 120]) - int(grey[5, 5])) < 5
    coin = box((75, 75, 165, 165), confidence=0.9)
    assert yolo_coins.rimless_boxes(felt, [coin], 0.75, _edges(felt)) == []


def _crisp_bokeh_and_a_plain_coin() -> np.ndarray:
    """A dark sweep with crisp bokeh (a disc of light blurred 3 px) and a plain flat coin."""
    import cv2

    img = np.full((240, 400, 3), (40, 40, 42), np.uint8)
    light = np.zeros_like(img)
    cv2.circle(light, (100, 120), 45, (80, 80, 80), -1)
    img = cv2.add(img, cv2.GaussianBlur(light, (0, 0), 3))
    cv2.circle(img, (300, 120), 45, (60, 170, 215), -1, cv2.LINE_AA)  # no relief: no inner edge
    return img


def test_crisp_bokeh_with_a_rim_is_no_coin_but_a_plain_coin_is():
    # blind 206850: bokeh drawn crisp enough that its rim is an edge all round, nothing
    # inside; a plain coin has no edge inside either, but a sharp rim
    import cv2

    from groundeval.grounding.proposers._cv import box

    img = _crisp_bokeh_and_a_plain_coin()
    grey = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    assert _discs.rim_width_px(grey, np.array([100, 120, 45])) >= _discs.SOFT_RIM_PX
    assert _discs.rim_width_px(grey, np.array([300, 120, 45])) < 3.0
    bokeh, coin = box((55, 75, 145, 165), confidence=0.9), box((255, 75, 345, 165), confidence=0.9)
    (doubt,) = yolo_coins.rimless_boxes(img, [bokeh, coin], 0.75, _edges(img))
    assert doubt == f"coin #1 (scored 0.90) {_discs.BLUR_OF_LIGHT}"
    # the same look for the proposers that cut discs from the table (contours, blobs)
    circles = [_discs.circle_box(100, 120, 45), _discs.circle_box(300, 120, 45)]
    edges, scale = _edges(img), 0.5
    (doubt,) = _discs.edgeless_boxes(img, circles, "blob", edges, scale, 100.0)
    assert doubt == f"blob #1 {_discs.BLUR_OF_LIGHT}"


@pytest.mark.parametrize("proposer", ["yolo.coins", "opencv.contours", "opencv.blobs"])
def test_blind_crisp_bokeh_withholds(proposer: str):
    # stop 45's fresh count, where every coin path counted three crisp bokeh as coins
    from groundeval.benchmarks.synthetic import blind
    from groundeval.grounding._protocol import get_proposer

    s = blind.generate("coins", 206850)
    proposal = get_proposer(proposer).run(
        s.image_bgr, GroundSpec(helper="boxes", proposer=proposer)
    )
    assert sum(_discs.BLUR_OF_LIGHT in p for p in proposal.problems) == 3, proposal.problems


@pytest.mark.parametrize(("seed", "why"), [(182, "a faint copy"), (215, "shows no edge")])
def test_probe_style_reflections_and_bokeh_withhold(seed: int, why: str):
    # probe-style tuning seeds (100-299) where the network counted a reflection or a bokeh
    from groundeval.benchmarks.synthetic import probe

    s = probe.generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert any(why in p for p in proposal.problems), proposal.problems
    assert seed < probe.REPORT_SEED0


def test_onnx_weights_run_without_torch_or_ultralytics():
    code = textwrap.dedent(
        """
        import importlib.abc, json, sys

        class Refuse(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("torch", "ultralytics"):
                    raise ImportError(f"{name} is refused in this test")
                return None

        sys.meta_path.insert(0, Refuse())  # any import of torch or ultralytics now fails
        from groundeval.grounding.models.train_dice import benchmark_scene
        from groundeval.grounding.proposers import yolo_coins
        from groundeval.programs._model import GroundSpec
        s = benchmark_scene("coins", "clean", 3)
        ground = GroundSpec(helper="boxes", target="each coin", proposer="yolo.coins")
        found = yolo_coins.YoloCoinsProposer().run(s.image_bgr, ground).elements
        print(json.dumps({"n": len(found), "truth": s.truth["count"],
                          "torch": "torch" in sys.modules}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["n"] == report["truth"] and not report["torch"]


def test_radius_is_half_the_mean_side():
    from groundeval.grounding.proposers._cv import box

    proposer = yolo_coins.YoloCoinsProposer()
    params = proposer.resolve(spec())

    class Fixed(yolo_coins.YoloCoinsProposer):
        def detections(self, image_bgr: np.ndarray, params: dict):  # type: ignore[override]
            import supervision as sv

            return sv.Detections(
                xyxy=np.array([[10, 10, 50, 70], [12, 12, 48, 66]], np.float32),
                confidence=np.array([0.9, 0.5], np.float32),
                class_id=np.array([0, 0]),
                data={"class_name": np.array(["coin", "coin"])},
            )

        def class_names(self, params: dict) -> dict[int, str]:
            return {0: "coin"}

    found = Fixed().detect(np.zeros((100, 100, 3), np.uint8), spec(), params)
    assert len(found) == 1  # the less confident, overlapping box is dropped
    assert found[0].fields["radius_px"] == 25.0 and found[0].fields["confidence"] == 0.9
    assert box((0, 0, 1, 1)).kind == "box"


def test_a_coin_of_a_found_coins_metal_between_coins_and_a_card_is_flagged():
    # in-style hard seed 6045: the network missed a copper coin touching two coins and a
    # dark card; on the contrast map it is one region with them, but it is a found coin's
    # colour, round, and lit
    from groundeval.benchmarks.synthetic import generate

    s = generate("coins", "hard", 6045)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) == s.truth["count"] - 1
    missed = next(c for c in s.truth["coins"] if c["center_px"] == [421.12, 247.7])
    flagged = [u for u in proposal.unexplained if "found coin's colour" in u.reason]
    assert len(flagged) == 1 and iou(tuple(flagged[0].xyxy_px), tuple(missed["xyxy_px"])) > 0.4


def test_a_table_patch_of_a_coins_colour_is_no_coin_missed():
    import cv2

    from groundeval.grounding.proposers._cv import box
    from groundeval.grounding.proposers._residue import contrast_map

    # a table shading smoothly from copper (at 240, 170) to brown: near its centre a round
    # patch has a found coin's colour, but it is the background, unlit on the contrast map
    copper, brown = np.array((70, 120, 200), np.float32), np.array((90, 60, 40), np.float32)
    yy, xx = np.mgrid[0:240, 0:320]
    shade = np.clip(np.hypot(xx - 240, yy - 170) / 150, 0, 1)[..., None]
    table = (copper * (1 - shade) + brown * shade).astype(np.uint8)
    cv2.circle(table, (60, 60), 25, (70, 120, 200), -1, cv2.LINE_AA)  # a coin found
    found = [box((35, 35, 85, 85), confidence=0.9)]
    assert yolo_coins.same_colour_coins(table, contrast_map(table, 150.0), found) == []
    cv2.circle(table, (140, 170), 25, (70, 120, 200), -1, cv2.LINE_AA)  # a coin missed
    (flag,) = yolo_coins.same_colour_coins(table, contrast_map(table, 150.0), found)
    assert iou(tuple(flag.xyxy_px), (115, 145, 165, 195)) > 0.6


def test_a_square_note_and_a_ring_boxed_as_coins_are_doubts():
    import cv2

    from groundeval.grounding.proposers._cv import box

    # a grey table with a coin, a yellow sticky note turned 30 degrees and a thin gold ring
    img = np.full((300, 420, 3), (150, 150, 152), np.uint8)
    cv2.circle(img, (70, 150), 40, (60, 175, 220), -1, cv2.LINE_AA)
    note = cv2.boxPoints(((210, 150), (80, 80), 30)).astype(np.int32)
    cv2.fillPoly(img, [note], (120, 235, 245), cv2.LINE_AA)
    cv2.circle(img, (350, 150), 45, (60, 175, 220), 4, cv2.LINE_AA)
    boxes = [(30, 110, 110, 190), (155, 95, 265, 205), (303, 103, 397, 197)]
    coin, square, ring = (box(xyxy, confidence=0.9) for xyxy in boxes)
    doubts = _discs.unlike_discs(img, [coin, square, ring], "coin")
    assert len(doubts) == 2
    assert doubts[0].startswith("coin #2 is a rectangle") and doubts[1].startswith(
        "coin #3 is hollow"
    )
    # a coin running on under a card past the box's margin is not judged by its cut outline
    cv2.rectangle(img, (100, 20), (140, 280), (20, 20, 20), -1)
    assert _discs.unlike_discs(img, [coin], "coin") == []


@pytest.mark.parametrize(("seed", "shape"), [(7, "a rectangle"), (79, "hollow")])
def test_probe_style_notes_and_rings_withhold(seed: int, shape: str):
    # probe-style tuning seeds where the network counted a sticky note or a ring as a coin
    from groundeval.benchmarks.synthetic import probe

    s = probe.generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert any(shape in p for p in proposal.problems), proposal.problems


def test_a_note_frayed_by_the_cloth_still_reads_square():
    import cv2

    from groundeval.grounding.proposers._cv import box

    # a pale note on coarse linen: the weave frays its outline (raw fill under 0.9)
    rng = np.random.default_rng(3)
    img = np.clip(rng.normal(150, 22, (240, 240, 1)), 0, 255).astype(np.uint8).repeat(3, 2)
    note = cv2.boxPoints(((120, 120), (90, 90), 20)).astype(np.int32)
    cv2.fillPoly(img, [note], (215, 215, 190), cv2.LINE_AA)
    for x, y in rng.integers(60, 180, (40, 2)):  # threads of the weave over its edge
        cv2.line(img, (int(x), int(y)), (int(x) + 9, int(y) + 3), (120, 120, 120), 1)
    (doubt,) = _discs.unlike_discs(img, [box((58, 58, 182, 182))], "coin")
    assert doubt.startswith("coin #1 is a rectangle")


def test_a_coin_of_a_colour_no_metal_has_is_a_doubt():
    import cv2

    from groundeval.grounding.proposers._cv import box

    # copper, gold and silver discs pass; a red and a blue one (clips, buttons) do not
    colours = {"copper": (60, 110, 190), "gold": (50, 180, 225), "silver": (185, 188, 190),
               "red": (40, 40, 215), "blue": (200, 120, 40)}  # fmt: skip
    img = np.full((120, 120 * len(colours), 3), (235, 240, 245), np.uint8)
    boxes = []
    for i, bgr in enumerate(colours.values()):
        cv2.circle(img, (60 + 120 * i, 60), 35, bgr, -1, cv2.LINE_AA)
        boxes.append(box((25 + 120 * i, 25, 95 + 120 * i, 95)))
    doubts = _discs.unlike_discs(img, boxes, "coin", (35.0, 110.0))
    assert [d.split(" is ")[0] for d in doubts] == ["coin #4", "coin #5"]
    assert all("a hue no coin metal has" in d for d in doubts)
    assert _discs.unlike_discs(img, boxes, "coin") == []  # the look is the coins' own
    off = yolo_coins.YoloCoinsProposer().run(img, spec(metal_hues_deg=None))
    assert not any("no coin metal" in p for p in off.problems)


def test_a_hue_span_that_is_not_two_numbers_is_refused_by_name():
    from groundeval.grounding._protocol import proposer_param_problems

    assert proposer_param_problems("yolo.coins", {"metal_hues_deg": [20.0, 120.0]}) == []
    (problem,) = proposer_param_problems("yolo.coins", {"metal_hues_deg": [35.0]})
    assert problem.startswith("proposer yolo.coins: metal_hues_deg:") and "length 2" in problem


@pytest.mark.parametrize(
    ("seed", "why"),
    [
        (86, "a hue no coin metal has"),  # a blue paper clip
        (74, "a hue no coin metal has"),  # a red one
        (87, "a rectangle"),  # a pale note frayed by grey linen
        (57, "the table's own pattern"),  # coins missed on blue stripes
    ],
)
def test_blind_style_clips_notes_and_busy_tables_withhold(seed: int, why: str):
    # blind-style tuning seeds where the count came out wrong and nothing was flagged
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert any(why in p for p in proposal.problems), proposal.problems
    assert seed < blind.REPORT_SEED0


def test_no_coin_found_looks_for_coins_of_any_size():
    from groundeval.benchmarks.synthetic import blind

    # blind tuning seed 137: the network misses one copper coin 50 px wide on yellow
    # gingham; the residue window set by the least coin size sees only its rim
    s = blind.generate("coins", 137)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    (coin,) = s.truth["coins"]
    assert proposal.elements == []
    assert any(iou(tuple(u.xyxy_px), tuple(coin["xyxy_px"])) > 0.5 for u in proposal.unexplained)


def test_a_residue_map_that_does_not_show_the_coins_found_cannot_vouch_for_none_missed():
    from groundeval.benchmarks.synthetic import blind

    # blind tuning seed 162: 7 coins on green gingham; the network finds 6, and the
    # contrast map, its cut raised by the check pattern (45, floor 28), shows only 2 of
    # them: the 7th
    # (a dark-rimmed silver coin) was missed with nothing flagged
    s = blind.generate("coins", 162)
    assert 162 < blind.REPORT_SEED0 and len(s.truth["coins"]) == 7
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) == 6
    assert any("the residue map shows 2 of the 6 coins found" in p for p in proposal.problems)


@pytest.mark.parametrize(("style", "seed"), [("blind", 203048), ("probe", 105066)])
def test_a_missed_coin_with_a_rim_all_round_is_unexplained(style: str, seed: int):
    # fresh report seeds of stop 38 (looked at in stop 39; reports since start higher): a
    # silver coin beside a gold one (on a pale gradient; on a white sweep between two
    # coins) that the network missed and no contrast look lit. Hough fits a circle to it
    # (in 105066 to its inner ring, so the table is read 1.8 radii out, clear of its rim)
    import importlib

    s = importlib.import_module(f"groundeval.benchmarks.synthetic.{style}").generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) < len(s.truth["coins"])
    assert any("Hough finds" in u.reason for u in proposal.unexplained), proposal.unexplained


def test_a_note_with_a_polka_dot_at_its_corner_still_reads_square():
    # fresh blind report seed 203075 (looked at in stop 39): a yellow note on green polka
    # cloth scored 0.92 as a coin; a dot touching its corner kept its hull under 0.9 full
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", 203075)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert any("a rectangle" in p for p in proposal.problems), proposal.problems


def test_a_missed_coin_against_a_found_ones_corner_is_unexplained():
    # a found coin is erased from the map as its disc: erasing its whole box also took the
    # corner of a coin touching it, and left a fragment under the size and roundness cuts
    import cv2

    from groundeval.grounding.proposers._cv import box

    img = np.full((300, 420, 3), (150, 90, 40), np.uint8)
    cv2.circle(img, (200, 150), 40, (60, 175, 220), -1, cv2.LINE_AA)
    cv2.circle(img, (254, 204), 36, (200, 205, 210), -1, cv2.LINE_AA)  # the coin missed
    found = [box((160, 110, 240, 190), confidence=0.9)]
    params = dict(yolo_coins.YoloCoinsProposer.defaults)
    review = yolo_coins.YoloCoinsProposer().self_check(img, found, params)
    flagged = [tuple(u.xyxy_px) for u in review.unexplained]
    assert any(iou(f, (218, 168, 290, 240)) > 0.4 for f in flagged), review


@pytest.mark.parametrize(
    ("seed", "why"),
    [
        (205308, "outside every coin box"),  # a silver coin touching a gold one, missed
        (205052, "is hollow"),  # a ring on slate, counted
        (205464, "is hollow"),  # a ring whose shadow reaches its box's margin
        (205528, "a rectangle"),  # a note joined to the margin by polka dots
    ],
)
def test_fresh_blind_wrongs_looked_at_in_stop_41_withhold(seed: int, why: str):
    # fresh blind report seeds of stops 39-41 (looked at in stop 41; reports since start
    # higher), each counted wrong with nothing flagged
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    found = [u.reason for u in proposal.unexplained] + proposal.problems
    assert any(why in text for text in found), found


@pytest.mark.parametrize(
    ("style", "seed", "why"),
    [
        ("blind", 205998, "far from square"),  # a red paper clip's bend, boxed 40 x 56
        ("probe", 108144, "Hough finds"),  # a small coin touching a large one, missed
    ],
)
def test_fresh_wrongs_looked_at_in_stop_42_withhold(style: str, seed: int, why: str):
    # fresh report seeds of stop 41's and stop 42's first counts (looked at in stop 42;
    # reports since start higher), each counted wrong with nothing flagged
    from groundeval.benchmarks.synthetic import blind, probe

    s = {"blind": blind, "probe": probe}[style].generate("coins", seed)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    found = [u.reason for u in proposal.unexplained] + proposal.problems
    assert any(why in text for text in found), found


def test_probe_109313_a_coin_touching_two_found_ones_is_not_missed() -> None:
    # a fresh probe report seed of stop 47 (looked at in stop 48): a small silver coin on a
    # pale sweep between a gold coin and a large silver one, counted as missing with nothing
    # said; Hough's circle of it (rim 1.0 on an edge) lay 6 px towards the gold coin and
    # overlapped its circle, so the coin-sized look passed it over
    from groundeval.benchmarks.synthetic import probe

    s = probe.generate("coins", 109313)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) < s.truth["count"]
    (flag,) = proposal.unexplained
    x1, y1, x2, y2 = flag.xyxy_px or [0.0] * 4
    assert "Hough finds" in flag.reason and x1 < 573.7 < x2 and y1 < 333.5 < y2


def test_blind_207432_a_coin_the_table_nearly_matches_beside_a_found_one_is_not_missed():
    # a fresh blind report seed of stop 48 (looked at in stop 49): a copper coin on red
    # polka dots touching a found gold coin, counted as missing with nothing said; once
    # the found coins are erased, the contrast map lights 0.49 of the smallest coin box
    # there (the coin's face is nearly the table's colour), under the 0.5 the look asked
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", 207432)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) == s.truth["count"] - 1 == 2
    (flag,) = proposal.unexplained
    x1, y1, x2, y2 = flag.xyxy_px or [0.0] * 4
    assert "outside every coin box" in flag.reason and x1 < 48 < x2 and y1 < 223 < y2


def test_a_ring_or_note_joined_to_the_margin_by_a_thin_line_is_still_judged():
    import cv2

    from groundeval.grounding.proposers._cv import box

    # a thin thread (a shadow's edge, a row of dots) runs from each object past its margin
    img = np.full((300, 420, 3), (150, 150, 152), np.uint8)
    cv2.circle(img, (110, 150), 45, (60, 175, 220), 4, cv2.LINE_AA)
    cv2.line(img, (150, 170), (175, 260), (60, 175, 220), 2, cv2.LINE_AA)
    note = cv2.boxPoints(((300, 150), (80, 80), 30)).astype(np.int32)
    cv2.fillPoly(img, [note], (120, 235, 245), cv2.LINE_AA)
    cv2.line(img, (340, 180), (419, 290), (120, 235, 245), 2, cv2.LINE_AA)
    ring, square = box((63, 103, 157, 197), confidence=0.9), box((245, 95, 355, 205))
    doubts = _discs.unlike_discs(img, [ring, square], "coin")
    assert len(doubts) == 2, doubts
    assert doubts[0].startswith("coin #1 is hollow") and doubts[1].startswith(
        "coin #2 is a rectangle"
    )


def test_blind_206269_no_coin_found_is_no_claim_of_no_coins():
    """A fresh blind report seed of stop 42 (looked at in stop 43): a gold coin on a yellow
    polka cloth, missed by the network and the contrast looks, was a confident "no coins";
    the coin-sized Hough look now runs with nothing found too."""
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", 206269)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, GroundSpec(helper="boxes"))
    assert proposal.elements == [] and s.truth["count"] == 1
    x1, y1, x2, y2 = s.truth["coins"][0]["xyxy_px"]
    assert any(
        u.xyxy_px and iou(tuple(u.xyxy_px), (x1, y1, x2, y2)) > 0.5 for u in proposal.unexplained
    ), proposal.unexplained


def test_blind_208083_a_blue_clip_blurred_pale_is_still_no_metal() -> None:
    # a fresh blind report seed of stop 51 (looked at in stop 52): a blue paper clip blurred
    # by the painterly look, its median chroma 11.4, boxed as a third coin (0.56) beside two
    # copper ones; grey was chroma under 12 then, so the hue was not judged
    from groundeval.benchmarks.synthetic import blind

    s = blind.generate("coins", 208083)
    proposal = yolo_coins.YoloCoinsProposer().run(s.image_bgr, spec())
    assert len(proposal.elements) == 3 and s.truth["count"] == 2
    (doubt,) = [p for p in proposal.problems if "no coin metal" in p]
    assert doubt.startswith("coin #2 is of a hue no coin metal has (-128 degrees, chroma 11)")
