"""One fourth-style (``tuningdice``) scene proposed on, seen from one of its dice."""

from __future__ import annotations

from collections.abc import Callable

from groundeval.benchmarks.synthetic import tuningdice
from groundeval.grounding._protocol import Proposal
from groundeval.grounding.proposers._cv import CVProposer
from groundeval.state import Element, GroundSpec


def over_die(
    proposer: CVProposer, seed: int, die: int
) -> tuple[Proposal, Callable[[Element], bool]]:
    """The proposal on scene ``seed``, and whether a box holds die ``die``'s centre."""
    scene = tuningdice.generate(seed)
    x1, y1, x2, y2 = scene.truth["dice"][die]["xyxy_px"]
    cx, cy = (x1 + x2) / 2, (y1 + y2) / 2

    def holds(e: Element) -> bool:
        a, b, c, d = e.xyxy_px or [0.0] * 4
        return a < cx < c and b < cy < d

    return proposer.run(scene.image_bgr, GroundSpec(helper="boxes")), holds
