"""The residue check's shortcuts (issue 11: self-check cost) give the plain computation's answers.

Each shortcut is compared with the straightforward computation it replaces, on images drawn
here and on the synthetic scenes, so a speed-up that changes a decision fails here.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from groundeval.benchmarks.synthetic import generate
from groundeval.grounding.proposers import _residue, opencv_circles
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
        opencv_circles._circle(float(x), float(y), float(r))
        for x, y, r in zip(rng.uniform(-20, 660, 40), rng.uniform(-20, 500, 40),
                           rng.uniform(3, 90, 40), strict=True)
    ]  # fmt: skip
    got = opencv_circles.rim_supports(circles, edges, 0.5)
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
