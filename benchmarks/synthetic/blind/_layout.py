"""Where things go: boxes, the floor's free space, and placement that keeps truth clean.

Counted objects sit fully inside the image with a margin, never on each other's boxes,
and never on a reflection or a distractor; that keeps every truth box unambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from groundeval.benchmarks.synthetic.blind._paint import Box

MARGIN_PX = 6.0
"""Counted objects stay this far inside the image (the brief asks for at least 4)."""
GAP_PX = 4.0
"""Least space between objects that are not meant to touch."""
MIRROR_PAD_PX = 6.0
"""What a reflection's blur and anti-aliasing may add around its object's columns."""


def hit(a: Box, b: Box, pad: float = 0.0) -> bool:
    """Whether two boxes would share area if they were ``pad`` pixels nearer."""
    return a[0] < b[2] + pad and b[0] < a[2] + pad and a[1] < b[3] + pad and b[1] < a[3] + pad


def moved(rel: Box, x: float, y: float) -> Box:
    """A box given relative to an object's centre, at centre (x, y)."""
    return (rel[0] + x, rel[1] + y, rel[2] + x, rel[3] + y)


def rounded(box: Box) -> list[float]:
    """A box as written to truth."""
    return [round(v, 2) for v in box]


@dataclass
class Floor:
    """The image's free space: counted boxes and the zones they must stay off."""

    w: int
    h: int
    glossy: bool
    mirror_frac: float = 0.5
    counted: list[Box] = field(default_factory=list)
    zones: list[Box] = field(default_factory=list)

    def mirror_zone(self, box: Box) -> Box | None:
        """Where the reflection of an object with this box may show (glossy floors only)."""
        if not self.glossy or box[3] >= self.h:
            return None
        reach = self.mirror_frac * (box[3] - box[1]) + MIRROR_PAD_PX
        pad = MIRROR_PAD_PX
        return (box[0] - pad, box[3], box[2] + pad, min(box[3] + reach, float(self.h)))

    def inside(self, box: Box, margin: float = MARGIN_PX) -> bool:
        """Whether a box lies in the image with ``margin`` to spare."""
        return (
            box[0] >= margin
            and box[1] >= margin
            and box[2] <= self.w - margin
            and box[3] <= self.h - margin
        )

    def free_for_counted(self, box: Box, near: int | None = None, boxes: bool = True) -> bool:
        """Whether a counted object may take ``box`` (``near`` is a box it may touch).

        ``boxes=False`` leaves the counted boxes to the caller (coins judge by circles).
        """
        if not self.inside(box):
            return False
        for i, other in enumerate(self.counted if boxes else []):
            if hit(box, other, 0.0 if i == near else GAP_PX):
                return False
        if any(hit(box, z, 1.0) for z in self.zones):
            return False
        zone = self.mirror_zone(box)
        return zone is None or not any(hit(zone, c, 1.0) for c in self.counted)

    def free_for_prop(self, box: Box) -> bool:
        """Whether a distractor (and its reflection) may take ``box``: off every counted box."""
        if not self.inside(box, 2.0):
            return False
        zone = self.mirror_zone(box)
        parts = [box] if zone is None else [box, zone]
        taken = [*self.counted, *self.zones]
        return not any(hit(p, t, 3.0) for p in parts for t in taken)

    def take_counted(self, box: Box) -> None:
        """Book a counted object's box (and its reflection's zone)."""
        self.counted.append(box)
        zone = self.mirror_zone(box)
        if zone is not None:
            self.zones.append(zone)

    def take_prop(self, box: Box) -> None:
        """Book a distractor's box (and its reflection's zone)."""
        self.zones.append(box)
        zone = self.mirror_zone(box)
        if zone is not None:
            self.zones.append(zone)

    def spot(
        self, rng: np.random.Generator, rel: Box, counted: bool, tries: int = 250
    ) -> tuple[float, float] | None:
        """A random centre where an object with box ``rel`` (about its centre) fits."""
        margin = MARGIN_PX if counted else 2.0
        lo_x, hi_x = margin - rel[0], self.w - margin - rel[2]
        lo_y, hi_y = margin - rel[1], self.h - margin - rel[3]
        if lo_x >= hi_x or lo_y >= hi_y:
            return None
        ok = self.free_for_counted if counted else self.free_for_prop
        for _ in range(tries):
            x, y = float(rng.uniform(lo_x, hi_x)), float(rng.uniform(lo_y, hi_y))
            if ok(moved(rel, x, y)):
                return x, y
        return None
