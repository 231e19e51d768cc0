"""A second look for die pips over the whole image: what the faces read do not explain.

``opencv.dice`` reads faces from their outline first; a die whose outline the table
hides, or a face cut short at a pip on its edge, leaves pips no face accounts for.
This scan finds pip-like spots at the size the faces imply and reports them; it never
changes a count, it only makes the verify loop withhold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import cv2
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial.distance import cdist

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding.proposers._cutout import full_size_region, look_box
from groundeval.grounding.proposers._cv import box
from groundeval.grounding.proposers._residue import halved, merge_found, pixel_median
from groundeval.state import Element

SYMMETRY_TOLERANCE = 0.12
"""How far (share of the face side) a pip's mirror image through the face centre may lie from
the nearest pip: every face 1-6 is point-symmetric, so a lone unmatched pip means one missed."""

OFF_CENTRE = 1.5
"""How far the pips' mean may lie from the face centre, in ``SYMMETRY_TOLERANCE`` units."""


class Spot(NamedTuple):
    """A pip-like spot: centre and radius (pixels), its mean Lab colour and its ring's."""

    x: float
    y: float
    radius: float
    colour: np.ndarray
    ring: np.ndarray


SPOT_CONTRAST = 40.0
"""Lab distance from the local mean (a few pips wide) at which a spot may be a pip."""
SPOT_RADIUS_SHARE = 0.09
"""Expected pip radius, as a share of the median face box's side."""
SPOT_WORK_RADIUS = 5.0
"""Least pip radius (px) on the copy spots are sought on (whole shrink steps leave it 5-10
px): smaller, the 3x3 opening breaks thin sticks and ellipses on the table into pip-sized
pieces."""
SPOT_RING_SHARE = 0.6
"""Least share of the ring around a spot within ``SPOT_RING_TOLERANCE`` of its median: a pip
sits on a flat face, a fleck of a photo or of gravel on a mottled one."""
SPOT_RING_TOLERANCE = 20.0
"""Lab distance within which a ring pixel counts as the face's colour."""
SPOT_ALIKE = 30.0
"""Lab distance within which two spots (and the faces around them) are the same colour."""
SPOT_RING_LIKE = 0.2
"""Most share of a spot's ring in the spot's own colour: a pip stands alone on its face (a
neighbour pip grazes the ring), a piece of a larger blob has the rest of it there."""
SPOT_REACH = 1.0
"""Farthest (share of the face side) two pips of one face lie apart, neighbours linked: the
two pips of a 2 sit corner to corner, up to 0.85 of a side apart, and dice vary in size."""
SPOT_AREA = (0.2, 2.5)
"""Area span of a spot, as shares of the expected pip's: the side is taken from the faces'
boxes, which a face turned 45 degrees makes 1.4x too long (its pips look half as large)."""
SPOT_FACE_MARGIN = 0.1
"""How far (share of the side) beyond a face's box a spot still belongs to that face."""
SPOT_FACE_GROW = 0.15
"""How far (share of the side) beyond a face's box its pips are counted again."""


def face_side(elements: list[Element]) -> float:
    """Median side (px) of the faces' boxes: the pip size the spots are sought at."""
    return float(
        np.median(
            [np.sqrt(max((x2 - x1) * (y2 - y1), 1.0)) for x1, y1, x2, y2 in map(bounds, elements)]
        )
    )


def clear_of_faces(spots: list[Spot], elements: list[Element], lab: np.ndarray) -> list[Spot]:
    """The spots no face holds (:func:`_holds`; ``lab``: the image in Lab).

    A face holds a spot within ``SPOT_FACE_MARGIN`` sides of its box, in the disc the box
    inscribes or on the face's colour (its ring ``SPOT_ALIKE`` from the box's central half).
    A face turned in its box leaves the box's corners to the table, or to a die beside it:
    probe 109922, a red die's three pips in the corners of a box ``yolo.dice`` put round an
    orange face turned 45 degrees, went with that face, and the red die with them. A face's
    own pips lie within the disc, or on its colour where a short box cuts them.
    """
    margin = SPOT_FACE_MARGIN * face_side(elements)
    faces = [(xyxy, _centre_colour(lab, xyxy)) for xyxy in map(bounds, elements)]
    return [q for q in spots if not any(_holds(q, xyxy, c, margin) for xyxy, c in faces)]


def _holds(
    q: Spot, xyxy: tuple[float, float, float, float], colour: np.ndarray, margin: float
) -> bool:
    """Whether the face in a box (``colour``: its centre's) holds a spot (see above)."""
    if not _near(q, xyxy, margin):
        return False
    x1, y1, x2, y2 = xyxy
    off = np.hypot(q.x - (x1 + x2) / 2, q.y - (y1 + y2) / 2)
    return bool(off <= min(x2 - x1, y2 - y1) / 2 or np.linalg.norm(q.ring - colour) < SPOT_ALIKE)


def _centre_colour(lab: np.ndarray, xyxy: tuple[float, float, float, float]) -> np.ndarray:
    """The median Lab colour of a box's central half (a face's, past its pips and corners)."""
    x1, y1, x2, y2 = xyxy
    qw, qh = (x2 - x1) / 4, (y2 - y1) / 4
    h, w = lab.shape[:2]
    cx1, cy1 = min(max(round(x1 + qw), 0), w - 1), min(max(round(y1 + qh), 0), h - 1)
    cx2, cy2 = max(min(round(x2 - qw), w), cx1 + 1), max(min(round(y2 - qh), h), cy1 + 1)
    return np.asarray(pixel_median(lab[cy1:cy2, cx1:cx2].reshape(-1, 3)), np.float32)


def holds_spot(xyxy: tuple[float, float, float, float], spots: list[Spot]) -> bool:
    """Whether a spot's centre lies in the box."""
    return any(_near(q, xyxy, 0.0) for q in spots)


PIP_ON_SHARE = 0.2
"""Largest share of a region's box a spot may cover and be a pip on it (a pip covers 3-5 % of
its face; a fleck that is the whole region is no pip on anything)."""


def pip_on(xyxy: tuple[float, float, float, float], spots: list[Spot]) -> bool:
    """Whether one of the spots lies in the box as a pip lies on a face: centre inside, small."""
    x1, y1, x2, y2 = xyxy
    area = max(x2 - x1, 0.0) * max(y2 - y1, 0.0)
    return holds_spot(xyxy, [q for q in spots if np.pi * q.radius**2 <= PIP_ON_SHARE * area])


def pip_evidence(
    image_bgr: np.ndarray, spots: list[Spot], elements: list[Element], loose: list[Spot]
) -> tuple[list[Element], list[str]]:
    """Pips the faces do not explain: a die missed whole, or a face read short.

    ``spots`` is an independent look for pip-like spots (:func:`pip_spots`) at the size
    the faces read imply (:func:`face_side`), ``loose`` those no face holds
    (:func:`clear_of_faces`). Two or more alike spots clear of every face
    are a die no face covers (``unexplained``, even when the contrast map saw no die there:
    a green die on green gravel). A face near which more alike spots lie, laid out
    point-symmetric as on a die and no more than six, than pips were read was cut short (a
    pip on its outline went with the table): a ``problem``.
    """
    boxes = [bounds(e) for e in elements]
    side = face_side(elements)
    unexplained = loose_dice(image_bgr, loose, side)
    # a spot already in a flagged pair needs no cut of its own (its face would overlap it)
    lone = [q for q in loose if not any(holds_spot(bounds(u), [q]) for u in unexplained)]
    unexplained = merge_found(unexplained, lone_pip_faces(image_bgr, lone, side))
    problems: list[str] = []
    centres = [((x1 + x2) / 2, (y1 + y2) / 2) for x1, y1, x2, y2 in boxes]
    for k, (e, b) in enumerate(zip(elements, boxes, strict=True)):
        read = e.fields.get("pips")
        if read is None:
            continue
        own = np.sqrt(max((b[2] - b[0]) * (b[3] - b[1]), 1.0))
        mine = _alike([
            q for q in spots
            if _near(q, b, SPOT_FACE_GROW * own)
            and _nearest(q, centres) == k
        ])  # fmt: skip
        if not int(read) < len(mine) <= 6:
            continue
        points = [(q.x, q.y) for q in mine]
        mean = (float(np.mean([x for x, _ in points])), float(np.mean([y for _, y in points])))
        if symmetric(points, mean, SYMMETRY_TOLERANCE * own):
            problems.append(
                f"a face read as {read} pips has {len(mine)} pip-like spots: cut short?"
            )
    return unexplained, problems


def loose_dice(
    image_bgr: np.ndarray,
    loose: list[Spot],
    side: float,
    reach: float = SPOT_REACH,
    *,
    as_laid_out: bool = False,
) -> list[Element]:
    """Boxes around two or more alike spots, ``reach`` sides apart at most, that no face holds.

    Two spots alone must have the face between them (:func:`_face_between`), not a stick.
    ``as_laid_out`` asks more: laid out as on a face (:func:`_laid_out`; a detector's
    self-check, where grain and gravel in pairs would cost more rights than dice missed).
    """
    found: list[Element] = []
    for group in _spot_groups(loose, reach * side):
        alike = _alike(group)
        if len(alike) < 2 or (len(alike) == 2 and not _face_between(image_bgr, alike, group)):
            continue
        if as_laid_out and not (_laid_out(alike, side) and _apart(image_bgr, alike)):
            continue
        pad = 0.25 * side
        xs, ys = [q.x for q in alike], [q.y for q in alike]
        xyxy = (min(xs) - pad, min(ys) - pad, max(xs) + pad, max(ys) + pad)
        found.append(box(xyxy, reason=f"{len(alike)} pip-like spots that no die face covers"))
    return found


PAIR_APART = (0.5, 0.9)
"""Span of a two's pips' distance, as shares of the faces' side (corner to corner, 0.7 of
a side; dice in one scene vary in size): closer specks in a grain's line are no two."""


def _laid_out(spots: list[Spot], side: float) -> bool:
    """Whether the spots lie as a face's pips do, as a two's or as three to six's.

    A two's pips lie a diagonal apart (``PAIR_APART``); three to six lie point-symmetric
    about their mean (any two do, a pair of specks in a grain's line too).
    """
    if len(spots) == 2:
        apart = float(np.hypot(spots[0].x - spots[1].x, spots[0].y - spots[1].y))
        return PAIR_APART[0] * side <= apart <= PAIR_APART[1] * side
    if not 3 <= len(spots) <= 6:
        return False
    points = [(q.x, q.y) for q in spots]
    mean = (float(np.mean([x for x, _ in points])), float(np.mean([y for _, y in points])))
    return symmetric(points, mean, SYMMETRY_TOLERANCE * side)


def _apart(image_bgr: np.ndarray, spots: list[Spot]) -> bool:
    """Whether each spot has the face between it and its nearest (:func:`_face_between`).

    A die's pips stand apart on their face; a stick the opening broke into pip-sized
    pieces in a row, as a three's are, has the stick between them.
    """
    for q in spots:
        nearest = min(
            (p for p in spots if p is not q), key=lambda p: (p.x - q.x) ** 2 + (p.y - q.y) ** 2
        )
        if not _face_between(image_bgr, [q, nearest], spots):
            return False
    return True


LONE_SIDES = (0.55, 1.4)
"""Side span of the face around a lone pip, as shares of the faces' box side (a face turned
45 degrees has a box 1.4x its side)."""
LONE_CENTRE = 0.15
"""Farthest (share of the face's side) a lone pip lies from its face's centre (a one's pip)."""
LONE_FILL = 0.84
"""Least rectangle fill of the face around a lone pip (a disc fills 0.79)."""
LONE_ASPECT = 1.3
"""Most elongation of the face around a lone pip."""


def lone_pip_faces(image_bgr: np.ndarray, loose: list[Spot], side: float) -> list[Element]:
    """Lone pips centred on a square face of a die's size: dice showing one, or read short.

    A one has a single pip, so no pair flags it, and a pale one on pale paper has no outline
    the contrast map sees. With the pip painted over in its face's colour, the object
    around it is cut at full size (:func:`full_size_region`); a square (``LONE_FILL``,
    ``LONE_ASPECT``) of a die's side (``LONE_SIDES``) with the pip near its centre
    (``LONE_CENTRE``) is a die no face covers. Where the cut follows the die's shadow
    instead (a white die on white paper), the face is grown from the pip by its own smooth
    shading (:func:`_flooded_face`) and judged the same way. Where neither finds a face, a
    pip stark and round enough to be nothing else (:func:`_stark_pip`) is still a die.
    """
    found: list[Element] = []
    for q in loose:
        xyxy = _face_around(image_bgr, q, side) or _flooded_face(image_bgr, q, side)
        if xyxy is not None:
            found.append(
                box(xyxy, reason="a lone pip centred on a square face that no die face covers")
            )
        elif _stark_pip(image_bgr, q, side):
            reason = "a lone spot as round and stark as a die's pip that no die face covers"
            found.append(face_box_at(q, side, f"{reason}: a one missed?"))
    return found


def face_box_at(q: Spot, side: float, reason: str) -> Element:
    """A face-sized box (``side`` px) centred on a spot: where a die missed would lie."""
    half = side / 2
    return box((q.x - half, q.y - half, q.x + half, q.y + half), reason=reason)


STARK_LIGHTNESS = 100.0
"""Least lightness step (8-bit Lab L) between a lone spot and its ring for it to be a pip
whatever the face around it shows: a die's pip is printed to be read, far lighter or darker
than its face (black on cream, white on teal: 103-187 on the fresh seeds where a one was
missed); a reflection's pip, a blot or a table's dot is faint (under 60), and a coloured dot
on a table differs from it in hue more than in lightness (in-style tuning scenes: 2-106)."""
STARK_CHROMA = 60.0
"""Most chroma (8-bit Lab) of a stark lone spot: pips are black, white or a dark tint (0-45
where a one was missed); a sticker or confetti dot of a saturated colour (in-style tuning
scenes: 46-85) is no pip by itself."""
STARK_ROUND = 0.9
"""Least share of its enclosing circle a stark lone spot fills at full size: a pip is a disc
(0.95-1.05 as cut), a pencil's tip or a fleck of light is not (0.25-0.8)."""
STARK_RADIUS = 0.55
"""Least radius of a stark lone spot, as a share of the expected pip's (``SPOT_RADIUS_SHARE``
of the side): a one's pip is as large as any; a polka dot at half of it is no pip."""


def _stark_pip(image_bgr: np.ndarray, q: Spot, side: float) -> bool:
    """Whether a lone spot is a die's pip by itself: stark, round and pip-sized.

    A one whose face the table hides (a cream die on a white sweep, a pink one on gingham)
    shows no face the looks of :func:`lone_pip_faces` can cut, only its pip: a disc in a
    pip's colours (``STARK_CHROMA``) as much lighter or darker than its ring as only a
    printed pip is (``STARK_LIGHTNESS``), that fills its enclosing circle at full size
    (``STARK_ROUND``: the spot is cut as the pixels nearer its colour than its ring's, and
    must stop short of a look three radii out).
    """
    if q.radius < STARK_RADIUS * SPOT_RADIUS_SHARE * side:
        return False
    if abs(float(q.colour[0] - q.ring[0])) < STARK_LIGHTNESS:
        return False
    if float(np.hypot(q.colour[1] - 128.0, q.colour[2] - 128.0)) > STARK_CHROMA:
        return False
    view, (a, b) = _around(image_bgr, q, 3 * q.radius)
    lab = cv2.cvtColor(view, cv2.COLOR_BGR2LAB).astype(np.float32)
    near = np.linalg.norm(lab - q.colour, axis=2) < np.linalg.norm(lab - q.ring, axis=2)
    _, labels = cv2.connectedComponents(near.astype(np.uint8), connectivity=8)
    at = labels[min(round(q.y) - b, view.shape[0] - 1), min(round(q.x) - a, view.shape[1] - 1)]
    if at == 0:
        return False
    ys, xs = np.nonzero(labels == at)
    if _runs_on(xs, ys, view.shape):
        return False  # part of something larger than a pip
    _, enclosing = cv2.minEnclosingCircle(np.column_stack([xs, ys]).astype(np.float32))
    return len(xs) >= STARK_ROUND * np.pi * enclosing**2


def _face_around(
    image_bgr: np.ndarray, q: Spot, side: float
) -> tuple[float, float, float, float] | None:
    """Box of the square face holding a lone pip (:func:`lone_pip_faces`), or ``None``."""
    view, (a, b) = _around(image_bgr, q, side)
    crop = view.copy()
    _paint_over(crop, q, (a, b), 1.4)
    half = side / 2
    xyxy = (q.x - a - half, q.y - b - half, q.x - a + half, q.y - b + half)
    contour = full_size_region(crop, xyxy, around=(q.x - a, q.y - b))
    if contour is None:
        return None
    hull_area = float(cv2.contourArea(cv2.convexHull(contour)))
    if not _a_face_around(cv2.minAreaRect(contour), hull_area, (q.x - a, q.y - b), side):
        return None
    x, y, bw, bh = cv2.boundingRect(contour)
    lo_x, lo_y, hi_x, hi_y = look_box(crop.shape, xyxy)
    if x <= lo_x or y <= lo_y or x + bw >= hi_x or y + bh >= hi_y:
        return None  # it runs on past the look (the table, or the image's edge)
    return (x + a, y + b, x + a + bw, y + b + bh)


def _runs_on(xs: np.ndarray, ys: np.ndarray, shape: tuple[int, ...]) -> bool:
    """Whether a region's pixels (``xs``, ``ys``) reach the edge of the look they were cut in."""
    return bool(
        xs.min() == 0 or ys.min() == 0 or xs.max() == shape[1] - 1 or ys.max() == shape[0] - 1
    )


def _around(image_bgr: np.ndarray, q: Spot, reach: float) -> tuple[np.ndarray, tuple[int, int]]:
    """The image within ``reach`` px of a spot (a view, clipped), and its top-left corner."""
    h, w = image_bgr.shape[:2]
    a, b = max(0, int(q.x - reach)), max(0, int(q.y - reach))
    return image_bgr[b : min(h, int(q.y + reach) + 1), a : min(w, int(q.x + reach) + 1)], (a, b)


def _paint_over(
    crop: np.ndarray, q: Spot, corner: tuple[int, int], cover: float
) -> tuple[int, int]:
    """Paint the spot out of ``crop`` in its ring's colour, ``cover`` radii wide; its centre."""
    ring = cv2.cvtColor(q.ring.reshape(1, 1, 3).astype(np.uint8), cv2.COLOR_LAB2BGR)[0, 0]
    centre = (round(q.x) - corner[0], round(q.y) - corner[1])
    cv2.circle(crop, centre, int(np.ceil(cover * q.radius)), [int(v) for v in ring], -1)
    return centre


def _a_face_around(
    rect: tuple[Sequence[float], Sequence[float], float],
    area: float,
    pip: tuple[float, float],
    side: float,
) -> bool:
    """Whether a region (minimum-area ``rect``, ``area``) is a face centred on a lone pip.

    A die's side (``LONE_SIDES``), square (``LONE_FILL``, ``LONE_ASPECT``), the ``pip``
    near its centre (``LONE_CENTRE``).
    """
    (rx, ry), (rw, rh), _ = rect
    face = float(np.sqrt(rw * rh))
    if not LONE_SIDES[0] * side <= face <= LONE_SIDES[1] * side:
        return False
    if area < LONE_FILL * rw * rh or max(rw, rh) > LONE_ASPECT * max(min(rw, rh), 1.0):
        return False
    return bool(np.hypot(rx - pip[0], ry - pip[1]) <= LONE_CENTRE * face)


FLOOD_STEP = 2
"""Most change (per channel, 0-255) between neighbouring pixels of one face: a face shades
smoothly, its bevel and shadow step; the table beside a die of its colour is reached only
through them, and a decoy's table runs on past the look."""


def _flooded_face(
    image_bgr: np.ndarray, q: Spot, side: float
) -> tuple[float, float, float, float] | None:
    """Box of the face grown from a lone pip by smooth shading (:func:`lone_pip_faces`).

    The pip is painted over in its ring's colour and the face flooded from it over
    neighbours at most ``FLOOD_STEP`` apart (after a 3x3 blur of the noise); a square of a
    die's side centred on the pip that stops short of the look's edge is a face.
    """
    view, (a, b) = _around(image_bgr, q, 1.5 * side)
    crop = cv2.GaussianBlur(view, (3, 3), 0)
    centre = _paint_over(crop, q, (a, b), 1.6)
    mask = np.zeros((crop.shape[0] + 2, crop.shape[1] + 2), np.uint8)
    step = (FLOOD_STEP,) * 3
    cv2.floodFill(crop, mask, centre, 0, step, step, 4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8))
    ys, xs = np.nonzero(mask[1:-1, 1:-1])
    if _runs_on(xs, ys, crop.shape):
        return None  # the table, or the image's edge
    rect = cv2.minAreaRect(np.column_stack([xs, ys]).astype(np.float32))
    if not _a_face_around(rect, float(len(xs)), centre, side):
        return None
    return (
        float(xs.min() + a),
        float(ys.min() + b),
        float(xs.max() + a + 1),
        float(ys.max() + b + 1),
    )


NONE_FOUND_STEP = 3.0
"""With no face read, pips are sought for dice sides this factor apart (a scan's pip sizes
span 3.5x, ``SPOT_AREA``), each scan for dice up to ``sqrt(NONE_FOUND_STEP)`` times off."""


def pips_anywhere(
    image_bgr: np.ndarray, lab: np.ndarray, least_side_px: float, most_side_px: float
) -> list[Element]:
    """With no face read: pip groups (:func:`loose_dice`) for dice of any side in the range.

    "No dice" is a claim; a die the colour of its table shows only by its pips, and with no
    face read their size is unknown, so the scan runs for sides ``NONE_FOUND_STEP`` apart,
    from 1.4 times the least side until the largest is covered; pips are linked as far apart
    as the largest die a scan stands for.
    """
    found: list[Element] = []
    off = float(np.sqrt(NONE_FOUND_STEP))
    side = 1.4 * least_side_px
    while side / off <= most_side_px:
        spots = pip_spots(lab, side)
        found = merge_found(found, loose_dice(image_bgr, spots, side, SPOT_REACH * off))
        side *= NONE_FOUND_STEP
    return found


FACE_SHADOW = 0.25
"""Share of the faces' side around a face read where blobs too large for a pip are not split:
its shadow and halo (a face read has its pips read)."""


def pip_spots(
    lab: np.ndarray, side: float, faces: Sequence[tuple[float, float, float, float]] = ()
) -> list[Spot]:
    """Round spots of a pip's size that stand out from an even surround (light or dark).

    ``lab`` is the image in Lab (8 bits; callers scanning several sizes convert once).
    Pixels far (``SPOT_CONTRAST``) from the mean of a window six pips wide, in blobs of
    about a pip's area (``SPOT_AREA``) and round; kept when the ring around them is mostly
    one colour, or one shading evenly across (``SPOT_RING_SHARE``), that the spot differs
    from. Large pips are sought on a copy shrunk by the whole step that leaves their radius
    at least ``SPOT_WORK_RADIUS`` px (whole steps cost OpenCV a fraction of other sizes). A
    blob too large for a pip (dark pips joined to the pale face around them) clear of the
    ``faces`` read (image boxes: a face read has its pips read) is labelled again in two
    parts, darker and lighter than the window's mean.
    """
    r = SPOT_RADIUS_SHARE * side
    step = max(1, int(r // SPOT_WORK_RADIUS))
    work = halved(lab, step)
    r /= step
    k = max(3, round(6 * r) | 1)
    mean = cv2.blur(work, (k, k))
    diff = cv2.absdiff(work, mean)
    # a pixel SPOT_CONTRAST from the mean is over SPOT_CONTRAST / sqrt(3) off in one channel:
    # the distance is taken only in the box of such pixels (none on a bare table), a pixel
    # wider so that the opening sees the unlit pixels around them as on the whole copy
    hw, ww = diff.shape[:2]
    least = int(SPOT_CONTRAST / np.sqrt(3))
    if diff.max() <= least:
        return []  # nothing lit (a bare table): 8x quicker than finding the lit pixels' box
    _, lit = cv2.threshold(diff.reshape(hw, -1), least, 255, 0)
    lx, ly, lw, lh = cv2.boundingRect(lit)
    if not lw:
        return []
    bx, by = max(0, lx // 3 - 2), max(0, ly - 2)
    box = diff[by : min(hw, ly + lh + 2), bx : min(ww, (lx + lw - 1) // 3 + 3)]
    squared = cv2.transform(cv2.multiply(box, box, dtype=cv2.CV_32F), np.ones((1, 3), np.float32))
    far = squared > SPOT_CONTRAST**2
    spots, large = _box_spots(work, far, (bx, by), r)
    grow = round(FACE_SHADOW * side / step) + 1  # the face's box, and its shadow beside it
    for x1, y1, x2, y2 in faces:
        top, left = max(0, int(y1 / step) - by - grow), max(0, int(x1 / step) - bx - grow)
        bottom, right = (
            max(0, int(y2 / step) - by + grow + 1),
            max(0, int(x2 / step) - bx + grow + 1),
        )
        large[top:bottom, left:right] = False
    if large.any():
        # a pale face's own pixels stand out from a window its dark pips darken, and join
        # the pips into one blob too large for a pip: in such blobs, pixels darker than the
        # window's mean and those lighter are labelled apart (blind 206400: a white six on
        # grey linen)
        inside = (slice(by, by + box.shape[0]), slice(bx, bx + box.shape[1]))
        darker = work[inside][..., 0] < mean[inside][..., 0]
        for part in (large & darker, large & ~darker):
            spots += _box_spots(work, part, (bx, by), r, spots, mean)[0]
    # a copy's pixel covers ``step`` image pixels: its centre lies half a step in
    return [
        q._replace(x=(q.x + 0.5) * step - 0.5, y=(q.y + 0.5) * step - 0.5, radius=q.radius * step)
        for q in spots
    ]


def _box_spots(
    work: np.ndarray,
    lit: np.ndarray,
    origin: tuple[int, int],
    r: float,
    known: Sequence[Spot] = (),
    mean: np.ndarray | None = None,
) -> tuple[list[Spot], np.ndarray]:
    """Spots of a pip's size (radius ``r``, copy pixels) in a box's ``lit`` pixels, and where.

    Also where in the box blobs too large for a pip lie (pips joined to something else). A
    blob centred in a ``known`` spot is that spot (not read again). With the window's
    ``mean`` (the copy's), a spot's face must stand out from it too (``SPOT_CONTRAST``): a
    pip joined to its pale face, not a piece of a stick or a disc on the table (in-style
    9451, 9484: a stick's lighter half, the table around it).
    """
    mask = cv2.morphologyEx(lit.astype(np.uint8), cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    large = np.zeros(mask.shape, bool)
    # labelled within the box of the spot pixels (a few on most tables), at a fraction of the
    # cost of the whole copy; OpenCV's labelling may number the spots in another order there
    x0, y0, cw, ch = cv2.boundingRect(mask)
    if not cw or not ch:
        return [], large
    n, labels, stats, centroids = cv2.connectedComponentsWithStats(mask[y0 : y0 + ch, x0 : x0 + cw])
    pip_area = np.pi * r * r
    lo, hi = SPOT_AREA[0] * pip_area, SPOT_AREA[1] * pip_area
    too_large = np.flatnonzero(stats[1:, cv2.CC_STAT_AREA] > hi) + 1
    if len(too_large):
        large[y0 : y0 + ch, x0 : x0 + cw] = np.isin(labels, too_large)
    x0, y0 = x0 + origin[0], y0 + origin[1]
    spots: list[Spot] = []
    for i in range(1, n):
        area = float(stats[i, cv2.CC_STAT_AREA])
        bw, bh = int(stats[i, cv2.CC_STAT_WIDTH]), int(stats[i, cv2.CC_STAT_HEIGHT])
        if not lo <= area <= hi or max(bw, bh) > 1.6 * max(min(bw, bh), 1):
            continue
        x, y = int(stats[i, cv2.CC_STAT_LEFT]), int(stats[i, cv2.CC_STAT_TOP])
        blob = labels[y : y + bh, x : x + bw] == i
        points = np.argwhere(blob)[:, ::-1].astype(np.float32)
        _, enclosing = cv2.minEnclosingCircle(points)
        if area < 0.5 * np.pi * enclosing**2:
            continue
        cx, cy = float(centroids[i][0]) + x0, float(centroids[i][1]) + y0
        if any(np.hypot(cx - q.x, cy - q.y) < q.radius for q in known):
            continue
        spot = _ringed(work, cx, cy, area, blob, (x + x0, y + y0))
        if spot is not None and (mean is None or _face_stands_out(spot, mean)):
            spots.append(spot)
    return spots, large


def _face_stands_out(spot: Spot, mean: np.ndarray) -> bool:
    """Whether a spot's face (its ring's colour) is ``SPOT_CONTRAST`` from the window's mean."""
    local = mean[round(spot.y), round(spot.x)].astype(np.float32)
    return bool(np.linalg.norm(spot.ring - local) >= SPOT_CONTRAST)


def _ringed(
    lab: np.ndarray, cx: float, cy: float, area: float, blob: np.ndarray, at: tuple[int, int]
) -> Spot | None:
    """The spot and its ring's colour; ``None`` if the ring is cut, mottled or like the spot."""
    radius = float(np.sqrt(area / np.pi))
    h, w = lab.shape[:2]
    x1, y1 = int(cx - 3 * radius), int(cy - 3 * radius)
    x2, y2 = int(cx + 3 * radius) + 1, int(cy + 3 * radius) + 1
    if x1 < 0 or y1 < 0 or x2 > w or y2 > h:
        return None  # at the image's edge: a pip would be cut, a blob there may be anything
    yy, xx = np.mgrid[y1:y2, x1:x2]
    d = np.hypot(xx - cx, yy - cy)
    on_ring = (d >= 1.6 * radius) & (d <= 2.6 * radius)
    ring = lab[y1:y2, x1:x2][on_ring].astype(np.float32)
    if len(ring) < 8:
        return None
    face = np.median(ring, axis=0)
    colour = lab[at[1] : at[1] + blob.shape[0], at[0] : at[0] + blob.shape[1]][blob].mean(axis=0)
    colour = colour.astype(np.float32)
    like = float((np.linalg.norm(ring - colour, axis=1) < SPOT_ALIKE).mean())
    if like > SPOT_RING_LIKE:
        return None  # a piece of a larger blob (an ellipse or a stick the window split)
    if float(np.linalg.norm(colour - face)) < 0.8 * SPOT_CONTRAST:
        return None
    if _flat_share(ring, face) < SPOT_RING_SHARE:
        # flat up to a plane will do: a lit face shades evenly across a pip's ring (the
        # least-squares plane is pulled off by a neighbour pip in the ring, the median is not)
        across = np.column_stack([xx[on_ring] - cx, yy[on_ring] - cy, np.ones(len(ring))])
        shading = across @ np.linalg.lstsq(across, ring, rcond=None)[0]
        if _flat_share(ring, shading) < SPOT_RING_SHARE:
            return None
    return Spot(cx, cy, radius, colour, face)


def _flat_share(ring: np.ndarray, level: np.ndarray) -> float:
    """Share of the ring's pixels within ``SPOT_RING_TOLERANCE`` of ``level`` (one or each)."""
    return float((np.linalg.norm(ring - level, axis=1) < SPOT_RING_TOLERANCE).mean())


def _face_between(image_bgr: np.ndarray, pair: list[Spot], spots: list[Spot]) -> bool:
    """Whether the face shows just past each spot of a ``pair`` on the way to the other.

    Two pips of a die have face between them, or a third pip (one of ``spots``: a 3's
    centre pip); two pieces of one stick or line on the table have the stick there.
    """
    a, b = pair
    h, w = image_bgr.shape[:2]
    gap = float(np.hypot(b.x - a.x, b.y - a.y))
    for t in (1.5 * a.radius / max(gap, 1e-6), 1 - 1.5 * b.radius / max(gap, 1e-6)):
        if not 0 < t < 1:
            return True  # the rims nearly touch: nothing between them to look at
        x, y = round(a.x + t * (b.x - a.x)), round(a.y + t * (b.y - a.y))
        if any(
            np.hypot(q.x - x, q.y - y) <= 1.2 * q.radius for q in spots if q is not a and q is not b
        ):
            continue  # on a pip between them
        patch = image_bgr[max(0, y - 1) : min(h, y + 2), max(0, x - 1) : min(w, x + 2)]
        colour = cv2.cvtColor(patch, cv2.COLOR_BGR2LAB).reshape(-1, 3).mean(axis=0)
        if float(np.linalg.norm(colour - (a.ring + b.ring) / 2)) >= 2 * SPOT_ALIKE:
            return False
    return True


def _alike(spots: list[Spot]) -> list[Spot]:
    """The largest set of spots of one size and colour on one face colour (a die's pips)."""
    best: list[Spot] = []
    for q in spots:
        same = [
            p for p in spots
            if 0.7 <= p.radius / q.radius <= 1.4
            and float(np.linalg.norm(p.colour - q.colour)) < SPOT_ALIKE
            and float(np.linalg.norm(p.ring - q.ring)) < SPOT_ALIKE
        ]  # fmt: skip
        if len(same) > len(best):
            best = same
    return best


def _spot_groups(spots: list[Spot], reach: float) -> list[list[Spot]]:
    """Spots linked through neighbours at most ``reach`` apart, in the order first seen."""
    if not spots:
        return []
    xy = np.array([(q.x, q.y) for q in spots])
    _, labels = connected_components(csr_matrix(cdist(xy, xy) <= reach), directed=False)
    groups: dict[int, list[Spot]] = {}
    for label, q in zip(labels.tolist(), spots, strict=True):
        groups.setdefault(label, []).append(q)
    return list(groups.values())


def _near(q: Spot, xyxy: tuple[float, float, float, float], margin: float) -> bool:
    """Whether the spot's centre lies in the box grown by ``margin``."""
    x1, y1, x2, y2 = xyxy
    return x1 - margin <= q.x <= x2 + margin and y1 - margin <= q.y <= y2 + margin


def _nearest(q: Spot, centres: list[tuple[float, float]]) -> int:
    """Index of the face centre closest to the spot (a pip between two dice is one's)."""
    return min(
        range(len(centres)), key=lambda k: np.hypot(q.x - centres[k][0], q.y - centres[k][1])
    )


def symmetric(
    centres: list[tuple[float, float]], centre: tuple[float, float], tolerance: float
) -> bool:
    """Whether the pips are point-symmetric about their mean, which lies near the face centre.

    The face centre (from its outline) is off by bevels and shading, so it only bounds
    where the pips' mean may lie (``OFF_CENTRE`` x ``tolerance``); the symmetry itself
    is tested about the mean: each pip's mirror image within ``tolerance`` of a pip.
    """
    mx = float(np.mean([x for x, _ in centres]))
    my = float(np.mean([y for _, y in centres]))
    if np.hypot(mx - centre[0], my - centre[1]) > OFF_CENTRE * tolerance:
        return False
    for x, y in centres:
        rx, ry = 2 * mx - x, 2 * my - y
        if min(np.hypot(rx - px, ry - py) for px, py in centres) > tolerance:
            return False
    return True
