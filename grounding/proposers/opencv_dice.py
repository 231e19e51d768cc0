"""``opencv.dice``: die faces of any colour as boxes, with the number of pips on each face.

Faces are found two ways. *White faces*: a whiteness map (the smallest of B, G,
R: high only for white or ivory) thresholded by Otsu within bounds. *Any other
face colour*: regions that contrast with their local background (the residue
check's contrast map), each refined to the pixels of its own dominant colour so
a drop shadow or a textured table does not bend its outline; a region that is not
one compact blob (a die touching a shadow, a pen, an eye in a photo) is also split
by its 3-means colours. Either way a region whose convex hull is roughly square
(minimum-area rectangle aspect and fill: pips near the edge notch the colour
region) is a face.

Pips are whatever differs in colour from the face inside its hull grown a little
(a shaded corner falls outside the face colour), lighter *or* darker; spots
reaching the grown rim are the table (unless a third of one lies on the face, or it
bulges a speck's area into it, as a pip joined to a pale table does: the outline was
cut short at a pip, and the face is refused), thin slivers are the rim's
shading, and spots under a pip's size off the face are the table too. Pips
that touch are split by the distance transform (one core per pip) and checked
against their area (a merged blob covers about as many pip areas as it has
cores; a pip's area is judged by its own inscribed disc or, for a spot that is not
round, a pip at a slant, by its clean peers', which also refuse a spot split in cores
of one pip's area). Every die face is point-symmetric, so
the pips must lie symmetric about their mean, near the face centre: a lone unmatched
pip means one was missed.
Pips of clashing sizes or colours (a glare is no pip), a count the two readings
disagree on, a layout no face has, or a total outside 1-6 leave the face with
``pips: None`` and a ``problem`` so a verifier checking the field schema rejects it:
the question is withheld rather than answered by a guess. So is a large white blob
that is not square (two dice merged). A blob with no pips is no face and is left out:
the residue check judges its region.

Self-check: pips are looked for again over the whole image, at the size the faces read imply
(round spots on a ring of another colour, flat or evenly shaded): two or more alike spots
clear of every face are a die missed (``unexplained``, even where the table hides the die's
outline), and more alike spots around a face, laid out as on a die, than were read mean its
outline was cut short (a ``problem``). Compact contrasting regions of a die's size that no
face covers are ``unexplained`` too (a die the proposer could not read is never silently
absent), and so are regions of a colour the table does not have that read as a face
(:func:`foreign_dice`: on gingham a die of a third colour may contrast no more with the
local mean than the pattern does). Dice have rounded corners, so on the residue's small copy
a die is as round as a coin: a region that is square there and not small is flagged at once,
any other compact one only if it is square in full resolution (``square_at_full_size``,
which lowers its cut when Otsu splits the pips from a face close to the table's colour), so
a token or coin on the table is not taken for a missed die, or if a pip-like spot clear of
the faces lies on it (``pip_on``: a white die on paper shows its sides and shadow, not a
square). What is left of a region once the faces' boxes are cleared may be twice as long as
wide (the clearing cuts into a die beside a face). A lone spot with a die's worth of
uncovered contrast within a side of it (``spots_with_a_body``) is a die missed too. Dice
close together or with their shadows are one region, too long or hollow for that look: what
is left of the map once the faces' boxes are cleared and everything thinner than 0.6 of a
face is opened away, if half a face large, is a die missed too (``uncovered_mass``). A lone
spot centred on a square face of a die's size, cut at full resolution with the spot painted
over or grown from it by the face's smooth shading, is a die missed (a one on pale paper);
so is a lone spot that is a pip by itself, round, pip-sized and far lighter or darker than
its ring in a pip's colours (a one whose face no cut finds). With no face read, "no dice" is
the claim (``none_found_residue``): every region of a die's size is unexplained, square or
not, compact or as long and notched as a die beside its shadow, on the usual map and
(compact) on one whose window spans three of the largest dice counted; and pips are sought
in pairs for dice of every side (a die the colour of its table).

Feedback: on a retry the whiteness threshold is lowered by ``retry_threshold_drop``, the
allowed aspect becomes ``retry_max_aspect`` and the pip contrast cut
``retry_pip_dark_ratio``. By default all three equal the first round's: a looser retry
drew the same faces with other boxes, which the loop then counted twice, so a retry
buys no confidence (set them to loosen on purpose, and check the result).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, ClassVar, NamedTuple

import cv2
import numpy as np
from scipy.spatial.distance import pdist

from groundeval.grounding._geometry import element_xyxy as bounds
from groundeval.grounding._geometry import frame_gap_px
from groundeval.grounding._geometry import xyxy_iou as iou
from groundeval.grounding._protocol import Feedback, register_proposer
from groundeval.grounding.proposers._cutout import full_size_region, smooth_ellipse, turned_fill
from groundeval.grounding.proposers._cv import CVProposer, Review, box
from groundeval.grounding.proposers._pip_scan import (
    SYMMETRY_TOLERANCE,
    Spot,
    clear_of_faces,
    face_box_at,
    face_side,
    holds_spot,
    pip_evidence,
    pip_on,
    pip_spots,
    pips_anywhere,
    symmetric,
)
from groundeval.grounding.proposers._residue import (
    ContrastMap,
    Sizes,
    beside_cleared,
    colour_distance,
    contrast_map,
    covered_mask,
    filled,
    merge_found,
    palette_map,
    sizes_from,
    unexplained_regions,
    without_elements,
    work_copy,
)
from groundeval.state import Element, GroundSpec

NOT_A_FACE = "blob that is not one die face"
NO_PIP_CONTRAST = "no pip contrasts with the face"
NO_PIPS = "no pips found"
RESIDUE_RECT_FILL = 0.84
"""How square an uncovered region must be to count as a missed die (a disc fills 0.79)."""
PIP_ERODE_SHARE = 0.04
"""Erosion of the face (share of its side) before pips are sought: off its rim, not its pips."""
PIP_GROW_SHARE = 0.15
"""How far (share of the side) pips are sought beyond a face's outline (shaded corners)."""
SMALL_FACE_SHARE = 0.4
"""Faces with a side under this share of the largest face read are refused."""
WHOLE_FACE_PAD = 0.5
"""Padding (share of the face's box) of the full-size look that checks a face is whole."""
WHOLE_FACE_IOU = 0.4
"""Least overlap of a face's box with its object's full-size outline (shadows included)."""
WHOLE_FACE_REREAD = 0.75
"""Overlap of a face's box with its object's outline under which the object's pips are read
too. A shaded band stops a face's colour short of its pips (probe 108425 and blind 206506:
threes read as twos; fresh probe dice_math 109229: a six as a four): the object, cut from the
table by its outline, holds them. On 1,850 tuning dice images, of 648 faces read right under
this overlap none reads more pips on its object (397 read none there: the object's drop
shadow holds spots of its own, so only more pips refuse)."""
FALLBACK_MIN_IOU = 0.5
"""Least overlap of a face read at full size with the residue region it was read in."""
MERGED_SIDE = 1.2
"""Least side (over the median face read) of an unreadable white blob refused as merged dice."""
MIN_FACE_SOLIDITY = 0.6
"""Least share of its convex hull a face's region covers (pips and shading notch it)."""
RESIDUE_CONTRAST = 18.0
"""Lab distance from the local background at which an uncovered die-sized region is flagged."""
RESIDUE_LOW_SHARE = 0.2
"""Smallest flagged region, as a share of the smallest face box found (sides vary 2x, boxes
of tilted faces are up to 2x their area)."""
RESIDUE_MAX_ASPECT = 1.4
"""A die face's region is about square at any tilt; longer ones are cloth folds or cards."""
CLEARED_MAX_ASPECT = 2.0
"""Most elongation of what is left of a region once the faces found are cleared: a die
beside a face is cut by the face's cleared margin (looked at again in full resolution)."""
NOTCHED_SOLIDITY = 0.65
"""Least solidity of what is left of a region beside a face once the faces are cleared: a
tilted face's box cuts a corner out of the die touching it (probe 109346: a white three beside
an orange one, 0.73 once cleared, missed with nothing said at the usual 0.8)."""
STRICT_LOW_SHARE = 0.45
"""Smallest region of the strict net (square on the work copy: a die for sure), as a share of
the smallest face box: smaller, a disc or an ellipse blurs as square as a die there."""
STRICT_SIZE_FACTOR = STRICT_LOW_SHARE / RESIDUE_LOW_SHARE
"""The strict net's smallest region over the wide net's."""
BODY_SHARE = 0.45
"""Least area (share of a face's) of uncovered contrast within a side of a lone pip-like spot,
the spot aside, for the spot to be a missed die's (its sides and shadow)."""
MASS_OPEN_SHARE = 0.6
"""The mass look opens the uncovered map this share of a face's side wide."""
MASS_AREA_SHARE = 0.5
"""Least area (share of a face's) of an uncovered mass taken for a die missed."""
FULL_SIZE_SQUARE_FILL = 0.86
"""Rectangle fill (of the convex hull, full resolution) of a region taken for a missed die."""
NONE_FOUND_SOLIDITY = 0.6
"""With no face read, least solidity of a region that may be a die (with its shadow, notched)."""
NONE_FOUND_ASPECT = 2.0
"""With no face read, most elongation of a region that may be a die (beside its shadow)."""


@register_proposer("opencv.dice")
class DiceProposer(CVProposer):
    """Dice of any face colour, pips lighter or darker than the face, on any table."""

    name: ClassVar[str] = "opencv.dice"
    defaults: ClassVar[dict[str, Any]] = {
        "min_side_px": 20.0,
        "max_side_share": 0.5,
        "threshold_bounds": [100, 210],
        "threshold_drop": 0,
        "max_aspect": 1.35,
        "min_fill": 0.72,
        "colour_faces": True,
        "colour_min_fill": 0.8,
        "face_colour_distance": 40.0,
        "min_contrast": 28.0,
        "pip_radius_share": 0.085,
        "pip_dark_ratio": 0.55,
        "retry_threshold_drop": 0,
        "retry_max_aspect": 1.35,
        "retry_pip_dark_ratio": 0.55,
    }

    def adapt(self, params: dict[str, Any], feedback: Feedback) -> dict[str, Any]:
        """Retry: lower the whiteness threshold, accept less square faces, lower pip cut."""
        params["threshold_drop"] = params["retry_threshold_drop"]
        params["max_aspect"] = params["retry_max_aspect"]
        params["pip_dark_ratio"] = params["retry_pip_dark_ratio"]
        return params

    def detect(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> list[Element]:
        """Find die faces and count their pips."""
        lab = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB)
        return self.faces(image_bgr, lab, work_copy(image_bgr), params)

    def faces(
        self, image_bgr: np.ndarray, lab: np.ndarray, work: np.ndarray, params: dict[str, Any]
    ) -> list[Element]:
        """:meth:`detect` given the image in Lab and its work copy (the self-check reads both)."""
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        limit = float(params["max_side_share"]) * min(grey.shape)
        found: list[tuple[Element, float]] = []
        blobs: list[tuple[Element, float, np.ndarray]] = []
        for contour in white_faces(image_bgr, params):
            element, side = face_element(lab, grey, contour, params, float(params["min_fill"]))
            if side <= limit:
                blobs.append((element, side, contour))
        read = [side for e, side, _ in blobs if e.fields["pips"] is not None]
        least = 0.6 * float(np.median(read)) if read else 0.0
        found = [(e, side) for e, side, _ in blobs if e.fields["pips"] is not None]
        if params["colour_faces"]:
            window = _window(image_bgr, read, params)
            cmap = contrast_map(image_bgr, window, params["min_contrast"], work=work)
            for contour in colour_faces(lab, cmap, [e for e, _ in found], params):
                element, side = face_element(
                    lab, grey, contour, params, float(params["colour_min_fill"])
                )
                # a coloured blob is a face only if square and about as big as the white faces
                if element.fields.get("problem") in (NOT_A_FACE, NO_PIPS, NO_PIP_CONTRAST):
                    continue  # not a face after all: the residue check judges the region
                if side < least:
                    continue
                found.append((element, side))
        # unreadable white blobs are refused (withheld) only when they look like dice merged
        # (judged against every face read, white or coloured) and no face already covers them
        read = [side for e, side in found if e.fields["pips"] is not None]
        for element, side, contour in blobs:
            if element.fields["pips"] is not None:
                continue
            if not _die_like(contour, side, read, grey.shape):
                continue
            if any(iou(bounds(element), bounds(e)) > 0.3 for e, _ in found):
                continue
            found.append((element, side))
        found = _outermost(found)
        found = [(_whole_face(image_bgr, lab, e, params), side) for e, side in found]
        found = _consistent_sizes(found)
        elements = [e for e, side in found if side <= limit]
        elements.sort(key=lambda e: (e.xyxy_px[1], e.xyxy_px[0]) if e.xyxy_px else (0, 0))
        return elements

    def analyse(
        self, image_bgr: np.ndarray, spec: GroundSpec, params: dict[str, Any]
    ) -> tuple[list[Element], Review]:
        """Detection, self-check, and a full-size read of what the self-check flagged.

        A flagged region is cut from the table at full resolution (``full_size_region``);
        if that outline is a square face whose pips read cleanly (layout check included),
        the face joins the elements and the self-check runs again on the whole, so the
        proposal still withholds on anything left unexplained.
        """
        lab, work = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB), work_copy(image_bgr)
        elements = self.faces(image_bgr, lab, work, params)
        review = self.review(image_bgr, lab, work, elements, params)
        if not review.unexplained or not params["colour_faces"]:
            return elements, review
        grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
        limit = float(params["max_side_share"]) * min(grey.shape)
        added: list[Element] = []
        for region in review.unexplained:
            contour = full_size_region(image_bgr, bounds(region))
            if contour is None or _at_frame(contour, grey.shape):
                continue
            element, side = face_element(
                lab, grey, contour, params, float(params["colour_min_fill"])
            )
            if element.fields["pips"] is None or side > limit:
                continue
            # the face read must be the region flagged, not a part of it
            if iou(bounds(element), bounds(region)) < FALLBACK_MIN_IOU:
                continue
            if any(iou(bounds(element), bounds(e)) > 0.3 for e in [*elements, *added]):
                continue
            added.append(element)
        if not added:
            return elements, review
        elements = sorted([*elements, *added], key=lambda e: (bounds(e)[1], bounds(e)[0]))
        return elements, self.review(image_bgr, lab, work, elements, params)

    def self_check(
        self, image_bgr: np.ndarray, elements: list[Element], params: dict[str, Any]
    ) -> Review:
        """Residue check on its own contrast map (a harder look than detection's)."""
        lab = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2LAB)
        return self.review(image_bgr, lab, work_copy(image_bgr), elements, params)

    def review(
        self,
        image_bgr: np.ndarray,
        lab: np.ndarray,
        work: np.ndarray,
        elements: list[Element],
        params: dict[str, Any],
    ) -> Review:
        """:meth:`self_check` given detection's Lab conversion and :func:`work_copy`."""
        h, w = image_bgr.shape[:2]
        hint_max = (float(params["max_side_share"]) * min(h, w)) ** 2
        sizes = sizes_from(
            elements, 0.6 * float(params["min_side_px"]) ** 2, hint_max, RESIDUE_LOW_SHARE
        )
        # the residue looks harder than detection: a die too faint to read must still show
        cmap = contrast_map(image_bgr, sizes.window_px, RESIDUE_CONTRAST, work=work)
        # every compact region of a die's size is a candidate: dice have rounded corners, so
        # on the work copy a small one is as round as a coin
        unexplained, problems = unexplained_regions(
            cmap, elements, sizes, "die face", max_aspect=RESIDUE_MAX_ASPECT
        )
        # a die touching a face found is one region with it, mostly covered: what is left
        # of such regions once the faces are cleared is judged on its own (the clearing may
        # cut into it, so it may be longer than a die; the full-size look below decides)
        mass: list[Element] = []
        if elements:
            cleared = without_elements(cmap, elements)
            rest, _ = unexplained_regions(
                cleared, [], sizes, "die face", max_aspect=CLEARED_MAX_ASPECT
            )
            notched, _ = unexplained_regions(
                cleared, [], sizes, "die face", max_aspect=CLEARED_MAX_ASPECT,
                min_solidity=NOTCHED_SOLIDITY,
            )  # fmt: skip
            rest = merge_found(rest, beside_cleared(notched, elements, cleared))
            unexplained = merge_found(unexplained, rest)
            # judged as it is, after the filter below, unless a disc or an oval (confetti)
            mass = [
                m
                for m in uncovered_mass(cleared, elements)
                if not round_at_full_size(image_bgr, bounds(m))
            ]
        spots = (
            pip_spots(lab, face_side(elements), [bounds(e) for e in elements]) if elements else []
        )
        loose = clear_of_faces(spots, elements, lab) if elements else []
        if elements:
            # square on the work copy and not small: a die for sure; the rest is looked at
            # again in full resolution, so a disc or ellipse on the table does not spoil the
            # count (with no face read there is no count to spoil: every region is a doubt);
            # one holding a pip-like spot clear of the faces is a die whatever its outline
            # (a white die on paper shows its sides and shadow, not a square)
            strict, _ = unexplained_regions(
                cmap, elements, replace(sizes, min_area_px=sizes.min_area_px * STRICT_SIZE_FACTOR),
                "die face", min_rect_fill=RESIDUE_RECT_FILL, max_aspect=RESIDUE_MAX_ASPECT,
            )  # fmt: skip
            unexplained = dice_like(image_bgr, unexplained, strict, loose)
        else:
            least_side = float(params["min_side_px"])
            doubts = none_found_residue(image_bgr, lab, work, cmap, sizes, hint_max, least_side)
            unexplained = merge_found(unexplained, doubts)
        unexplained = merge_found(unexplained, mass)
        unexplained = merge_found(
            unexplained, foreign_dice(image_bgr, lab, work, cmap, elements, sizes, params)
        )
        if len(elements) > 40:
            problems.append(f"{len(elements)} die faces: too many to be dice, likely a pattern")
        if elements:
            missed, short = pip_evidence(image_bgr, spots, elements, loose)
            unexplained = merge_found(unexplained, missed)
            unexplained = merge_found(
                unexplained, spots_with_a_body(cmap, elements, loose, unexplained)
            )
            problems.extend(short)
        return Review(unexplained, problems)


def foreign_dice(
    image_bgr: np.ndarray,
    lab: np.ndarray,
    work: np.ndarray,
    cmap: ContrastMap,
    elements: list[Element],
    sizes: Sizes,
    params: dict[str, Any],
) -> list[Element]:
    """Regions of a colour the table does not have that read as a die face none covers.

    On gingham or polka dots a die of a third colour may contrast no more with the local
    mean than the pattern's own squares do, and stay unlit on the contrast map (blind
    207477: a teal three on green gingham). On the :func:`._residue.palette_map` it shows;
    read at full size from that outline, it is flagged if its pips read as a face's: a
    note or a card of such a colour has none, a ring's pip is the table inside it, too
    large. Looked for only where the table's pattern raised the contrast map's (``cmap``)
    cut over what an object needs on a plain table: elsewhere the map sees such a die.
    ``work`` is the image's work copy; ``params`` the pip reader's.
    """
    if cmap.floor is None or cmap.level <= cmap.floor:
        return []
    scale = cmap.scale
    palette = palette_map(work, scale)
    regions, _ = unexplained_regions(
        palette, elements, sizes, "die face", max_aspect=RESIDUE_MAX_ASPECT
    )
    if not regions:
        return []
    grey = cv2.cvtColor(image_bgr, cv2.COLOR_BGR2GRAY)
    outlines = {  # by the box unexplained_regions gives the region
        bounds(box((x / scale, y / scale, (x + w) / scale, (y + h) / scale))): o.contour
        for o in palette.outlines
        for x, y, w, h in [o.bbox]
    }
    found = []
    for u in regions:
        contour = np.round(outlines[bounds(u)].astype(np.float64) / scale).astype(np.int32)
        face, _ = face_element(lab, grey, contour, params, float(params["colour_min_fill"]))
        if face.fields["pips"] is not None:
            why = f"{u.reason}, read as a face of {face.fields['pips']}"
            found.append(u.model_copy(update={"reason": why}))
    return found


def dice_like(
    image_bgr: np.ndarray, regions: list[Element], strict: list[Element], loose: list[Spot]
) -> list[Element]:
    """The uncovered regions that may be a die missed, not a disc or a blot on the table.

    Square on the work copy (the same box in ``strict``, a stricter look) unless a disc or
    an oval in full resolution (:func:`round_at_full_size`), holding a pip-like spot clear
    of the faces (``loose``: a white die on paper shows its sides and shadow, not a square),
    or square in full resolution (:func:`square_at_full_size`).
    """
    sure = {tuple(u.xyxy_px or ()) for u in strict}
    kept: list[Element] = []
    for u in regions:
        if tuple(u.xyxy_px or ()) in sure:
            if not round_at_full_size(image_bgr, bounds(u)):
                kept.append(u)
        elif pip_on(bounds(u), loose):
            kept.append(u.model_copy(update={"reason": f"{u.reason}, a pip-like spot on it"}))
        elif square_at_full_size(image_bgr, bounds(u)):
            kept.append(u)
    return kept


def spots_with_a_body(
    cmap: ContrastMap, elements: list[Element], loose: list[Spot], known: list[Element]
) -> list[Element]:
    """Lone pip-like spots (``loose``: clear of the faces) with a die's worth of contrast near.

    A white die on white paper shows its pip, its grey sides and its shadow, none of them a
    face's square; a fleck on the table has nothing around it. Pixels of the map within a
    face's side of the spot that no face covers, the spot's own disc aside, of at least
    ``BODY_SHARE`` of a face's area make the spot a die missed (spots in ``known`` boxes,
    already flagged, are passed by).
    """
    side = face_side(elements)
    covered = covered_mask(cmap, elements)
    s = cmap.scale
    h, w = cmap.mask.shape
    found: list[Element] = []
    for q in loose:
        if any(holds_spot(bounds(u), [q]) for u in [*known, *found]):
            continue
        x1, y1 = max(0, int((q.x - side) * s)), max(0, int((q.y - side) * s))
        x2, y2 = min(w, int((q.x + side) * s) + 1), min(h, int((q.y + side) * s) + 1)
        near = (slice(y1, y2), slice(x1, x2))
        lit = np.count_nonzero((cmap.mask[near] > 0) & (covered[near] == 0))
        if lit / (s * s) - np.pi * q.radius**2 >= BODY_SHARE * side * side:
            reason = (
                "a pip-like spot with a die's worth of contrast around it that no die face covers"
            )
            found.append(face_box_at(q, side, reason))
    return found


def uncovered_mass(cleared: ContrastMap, elements: list[Element]) -> list[Element]:
    """Contrasting masses a die wide that no face covers, whatever their outline.

    Dice close together, or a die with its shadow, are one region of the contrast map:
    too long, too large or too hollow for the compact looks, so a die in it went unseen.
    On the map with the faces' boxes ``cleared`` (:func:`without_elements`), everything
    under ``MASS_OPEN_SHARE`` of a face's side is opened away (a shadow's sliver, grain, a
    pen); what remains of at least ``MASS_AREA_SHARE`` of a face's area is as large and as
    thick as a die.
    """
    if not elements:
        return []
    sides = [np.sqrt(max((x2 - x1) * (y2 - y1), 1.0)) for x1, y1, x2, y2 in map(bounds, elements)]
    side = float(np.median(sides))
    k = round(MASS_OPEN_SHARE * side * cleared.scale)
    if k < 3:
        return []
    kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k | 1, k | 1))
    mask = np.asarray(cv2.morphologyEx(cleared.mask, cv2.MORPH_OPEN, kernel))
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask)
    s = cleared.scale
    least = MASS_AREA_SHARE * side * side * s * s
    return [
        box(
            (x / s, y / s, (x + w) / s, (y + h) / s),
            reason=f"a contrasting mass of {area / (s * s):.0f} px, as thick as a die, that no "
            "die face covers",
        )
        for x, y, w, h, area in (stats[i] for i in range(1, n))
        if area >= least
    ]


def none_found_residue(
    image_bgr: np.ndarray,
    lab: np.ndarray,
    work: np.ndarray,
    cmap: ContrastMap,
    sizes: Sizes,
    hint_max: float,
    least_side_px: float,
) -> list[Element]:
    """With no die found, what could still be one: "no dice" is a claim, not a default.

    Three looks, squareness never asked (with nothing read there is no count a disc on the
    table could spoil, only a guess): die-sized regions of the usual map (``cmap``) that
    are as long and notched as a die beside its shadow (``NONE_FOUND_SOLIDITY``,
    ``NONE_FOUND_ASPECT``); compact ones on a map whose window spans three of the largest
    dice counted (the usual window, sized to the least die, sees a large die's face as its
    own background); and pips in groups, for dice of any side from ``least_side_px``
    (:func:`pips_anywhere`: a die the colour of its table shows only by its pips).
    """
    found, _ = unexplained_regions(
        cmap, [], sizes, "die face", min_solidity=NONE_FOUND_SOLIDITY, max_aspect=NONE_FOUND_ASPECT
    )
    wide = replace(sizes, window_px=max(sizes.window_px, 3.0 * float(np.sqrt(hint_max))))
    wide_map = contrast_map(image_bgr, wide.window_px, RESIDUE_CONTRAST, work=work)
    compact, _ = unexplained_regions(wide_map, [], wide, "die face", max_aspect=RESIDUE_MAX_ASPECT)
    found = merge_found(found, compact)
    return merge_found(
        found, pips_anywhere(image_bgr, lab, least_side_px, float(np.sqrt(hint_max)))
    )


def square_at_full_size(image_bgr: np.ndarray, xyxy: tuple[float, float, float, float]) -> bool:
    """Whether the object in a residue box is square when looked at in full resolution.

    The residue works on a copy a few times smaller, where a small ellipse or disc blurs
    into something as square as a tilted die. Here the object's full-size region
    (:func:`full_size_region`) must fill its minimum-area rectangle like a square (a disc
    or ellipse fills 0.79) and be about as wide as long.
    """
    contour = full_size_region(image_bgr, xyxy)
    if contour is None:
        return True
    # pips and shading leave holes: the hull is the face
    fill, aspect = turned_fill(cv2.convexHull(contour))
    return fill >= FULL_SIZE_SQUARE_FILL and aspect <= 1.3


def round_at_full_size(image_bgr: np.ndarray, xyxy: tuple[float, float, float, float]) -> bool:
    """Whether the object in a residue box is a disc or an oval in full resolution: no die.

    On the work copy a confetti disc or oval over ``STRICT_LOW_SHARE`` of a face blurs as
    square as a die (in-style hard 10100-10199: 6 of the two dice proposers' withheld
    images). In full resolution its region (:func:`full_size_region`) fills its turned
    rectangle less than a square (``FULL_SIZE_SQUARE_FILL``; ovals there 0.76-0.82, dice
    0.98 and up) and its outline is a smooth ellipse (:func:`smooth_ellipse`; ovals 0.02-0.03
    off, dice 0.06-0.12).
    """
    contour = full_size_region(image_bgr, xyxy)
    if contour is None:
        return False
    fill, _ = turned_fill(cv2.convexHull(contour))
    return fill < FULL_SIZE_SQUARE_FILL and smooth_ellipse(contour, image_bgr.shape)


def _at_frame(contour: np.ndarray, shape_hw: tuple[int, ...], gap_px: int = 0) -> bool:
    """Whether an outline comes within ``gap_px`` of the image's edge (0: reaches it).

    A face the frame cuts may hide pips: a stain's ring at the edge, read at full size, was a
    one (tuning dice seed 246).
    """
    x, y, w, h = cv2.boundingRect(contour)
    return frame_gap_px((x, y, x + w, y + h), shape_hw[1], shape_hw[0]) <= gap_px


def _consistent_sizes(found: list[tuple[Element, float]]) -> list[tuple[Element, float]]:
    """Refuse faces far smaller than the largest face read (a speck of a photo read as a one).

    Dice in one picture are about one size; a "face" under ``SMALL_FACE_SHARE`` of the
    largest face's side is more likely a pattern than a die, so it is refused rather than
    counted (the question is withheld).
    """
    read = [side for e, side in found if e.fields.get("pips") is not None]
    if not read:
        return found
    least = SMALL_FACE_SHARE * max(read)
    fields = {"pips": None, "problem": "much smaller than the other faces: a die?"}
    return [
        (e.model_copy(update={"fields": fields}), side)
        if e.fields.get("pips") is not None and side < least
        else (e, side)
        for e, side in found
    ]


def _whole_face(
    image_bgr: np.ndarray, lab: np.ndarray, element: Element, params: dict[str, Any]
) -> Element:
    """Refuse a face read from only part of its die (a pale face cut by a threshold).

    The object around the face's box is cut from the table at full size; when its
    outline's box overlaps the face's box by less than ``WHOLE_FACE_IOU``, pips outside
    the face may have gone uncounted, so the reading is withdrawn. Under
    ``WHOLE_FACE_REREAD`` the object's outline is read too: more pips there than on the
    face are pips beyond the face's colour (a shaded band), and the reading is withdrawn.
    """
    pips = element.fields.get("pips")
    if pips is None:
        return element
    x1, y1, x2, y2 = bounds(element)
    centre = ((x1 + x2) / 2, (y1 + y2) / 2)
    contour = full_size_region(image_bgr, (x1, y1, x2, y2), WHOLE_FACE_PAD, centre)
    if contour is None:
        return element
    hull = cv2.convexHull(contour)
    x, y, bw, bh = cv2.boundingRect(hull)
    overlap = iou(bounds(element), (float(x), float(y), float(x + bw), float(y + bh)))
    if overlap >= WHOLE_FACE_REREAD:
        return element
    problem = "the face read covers only part of the object"
    if overlap >= WHOLE_FACE_IOU:
        (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
        whole, _ = count_pips(lab, hull, float(np.sqrt(rw * rh)), params)
        if whole is None or whole <= pips:
            return element
        problem = f"the face reads {pips} pips, its whole object {whole}: pips past its colour?"
    return element.model_copy(update={"fields": {"pips": None, "problem": problem}})


def _die_like(contour: np.ndarray, side: float, read: list[float], shape: tuple[int, ...]) -> bool:
    """An unreadable white blob worth refusing on: die-sized, compact, clear of the border.

    Two touching dice are (a refusal withholds the question); a highlight on the table,
    a stripe of light wood or a bright corner of the image are not.
    """
    if _at_frame(contour, shape, gap_px=1):
        return False
    # with faces read, only a blob bigger than one face (dice merged) is refused here; one of
    # a face's size that could not be read is left to the residue check, which flags it if
    # it is square (a stone or a patch of light wood is not)
    if read and not MERGED_SIDE * float(np.median(read)) <= side <= 2.5 * float(np.median(read)):
        return False
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    hull = float(cv2.contourArea(cv2.convexHull(contour)))
    solidity = float(cv2.contourArea(contour)) / hull if hull > 0 else 0.0
    return max(rw, rh) / max(min(rw, rh), 1.0) <= 2.6 and solidity >= 0.75


def _outermost(found: list[tuple[Element, float]]) -> list[tuple[Element, float]]:
    """Drop candidates lying inside a much larger one (light pips on a dark face)."""
    kept = []
    for e, side in found:
        x1, y1, x2, y2 = e.xyxy_px or (0.0, 0.0, 0.0, 0.0)
        area = max((x2 - x1) * (y2 - y1), 1e-6)
        inside = False
        for o, other_side in found:
            if o is e or other_side < 1.8 * side or o.xyxy_px is None:
                continue
            ox1, oy1, ox2, oy2 = o.xyxy_px
            w = min(x2, ox2) - max(x1, ox1)
            h = min(y2, oy2) - max(y1, oy1)
            if w > 0 and h > 0 and w * h >= 0.8 * area:
                inside = True
                break
        if not inside:
            kept.append((e, side))
    return kept


def _window(image_bgr: np.ndarray, sides: list[float], params: Any) -> float:
    """Local-background window: three dice wide (or a third of the image before any is read)."""
    if sides:
        return 3.0 * float(np.median(sides))
    return max(3.0 * float(params["min_side_px"]), 0.36 * float(min(image_bgr.shape[:2])))


def white_faces(image_bgr: np.ndarray, params: dict[str, Any]) -> list[np.ndarray]:
    """Outer contours of the white or ivory regions big enough to be a die."""
    # the channels' minimum: numpy's min(axis=2) walks the pixels one by one, 10x slower
    white = np.minimum(np.minimum(image_bgr[..., 0], image_bgr[..., 1]), image_bgr[..., 2])
    otsu, _ = cv2.threshold(white, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    low, high = params["threshold_bounds"]
    level = float(np.clip(otsu, low, high)) - float(params["threshold_drop"])
    mask = (white > level).astype(np.uint8) * 255
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    min_area = 0.6 * float(params["min_side_px"]) ** 2
    return [c for c in contours if cv2.contourArea(c) >= min_area]


def colour_faces(
    lab: np.ndarray, cmap: ContrastMap, taken: list[Element], params: dict[str, Any]
) -> list[np.ndarray]:
    """Contrasting regions, each split into blobs of its dominant colour; none already taken."""
    s = cmap.scale
    min_area = 0.6 * float(params["min_side_px"]) ** 2
    contours, _ = cv2.findContours(cmap.mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    faces: list[np.ndarray] = []
    h, w = lab.shape[:2]
    boxes = [e.xyxy_px for e in taken if e.xyxy_px is not None]
    for contour in contours:
        if cv2.contourArea(contour) / (s * s) < min_area:
            continue
        x, y, bw, bh = cv2.boundingRect(contour)
        x1, y1 = max(0, int(x / s) - 2), max(0, int(y / s) - 2)
        x2, y2 = min(w, int((x + bw) / s) + 3), min(h, int((y + bh) / s) + 3)
        region = np.zeros((y2 - y1, x2 - x1), np.uint8)
        shifted = np.round(contour.astype(np.float64) / s).astype(np.int32) - [x1, y1]
        cv2.drawContours(region, [shifted], -1, 1, -1)
        for blob in _dominant_colour_blobs(lab[y1:y2, x1:x2], region, params, min_area):
            blob = blob + np.array([x1, y1], np.int32)
            bx, by, bbw, bbh = cv2.boundingRect(blob)
            xyxy = (float(bx), float(by), float(bx + bbw), float(by + bbh))
            if any(iou(xyxy, (b[0], b[1], b[2], b[3])) > 0.3 for b in boxes):
                continue
            boxes.append(list(xyxy))
            faces.append(blob)
    return faces


def _dominant_colour_blobs(
    lab: np.ndarray, region: np.ndarray, params: dict[str, Any], min_area: float
) -> list[np.ndarray]:
    """Outer contours of the blobs of the region's main colours (pips are holes, filled).

    The colours are the region's median and, when the region is not one compact blob
    (a die touching a shadow, an eye in a photo), the centres of a 3-means clustering
    of its pixels, so a die merged with its surroundings still comes out whole.
    """
    pixels = lab[region > 0].astype(np.float32)
    if len(pixels) == 0:
        return []
    colours = [np.median(pixels, axis=0)]
    contours = _colour_blobs(lab, region, colours[0], params, min_area)
    if len(contours) == 1 and _compact(contours[0]):
        return contours
    step = max(1, len(pixels) // KMEANS_SAMPLES)
    sample = np.ascontiguousarray(pixels[::step])
    if len(sample) >= 3 * KMEANS_CLUSTERS:
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 10, 1.0)
        cv2.setRNGSeed(0)  # same image, same clusters
        _, _, centres = cv2.kmeans(
            sample,
            KMEANS_CLUSTERS,
            None,
            criteria,
            2,
            cv2.KMEANS_PP_CENTERS,  # type: ignore[call-overload, unused-ignore]
        )
        for centre in centres:
            if min(float(np.linalg.norm(centre - c)) for c in colours) < 15.0:
                continue
            colours.append(centre)
            contours.extend(_colour_blobs(lab, region, centre, params, min_area))
    return contours


KMEANS_CLUSTERS = 3
"""Colours a non-compact contrasting region is split into (die, table, something else)."""
KMEANS_SAMPLES = 1500
"""Pixels sampled for the clustering (keeps it to a fraction of a millisecond)."""


def _colour_blobs(
    lab: np.ndarray, region: np.ndarray, colour: np.ndarray, params: dict[str, Any],
    min_area: float,
) -> list[np.ndarray]:  # fmt: skip
    """Outer contours of the region's blobs within ``face_colour_distance`` of ``colour``."""
    dist = colour_distance(lab, colour)
    mask = ((dist < float(params["face_colour_distance"])) & (region > 0)).astype(np.uint8)
    mask = np.asarray(cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return [c for c in contours if cv2.contourArea(c) >= min_area]


def _compact(contour: np.ndarray) -> bool:
    """Solid and about square: a region that is one die, not a die merged with more."""
    hull = float(cv2.contourArea(cv2.convexHull(contour)))
    (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
    aspect = max(rw, rh) / max(min(rw, rh), 1.0)
    return hull > 0 and cv2.contourArea(contour) / hull >= 0.85 and aspect <= 1.35


def face_element(
    lab: np.ndarray,
    grey: np.ndarray,
    contour: np.ndarray,
    params: dict[str, Any],
    min_fill: float,
) -> tuple[Element, float]:
    """A face box with its pips (or ``None`` and the reason); also its side in pixels.

    The shape is judged on the convex hull (pips near the edge and shading notch a face
    found by its colour), with a floor on solidity so scattered fragments are no face.
    """
    hull = cv2.convexHull(contour)
    hull_area = float(cv2.contourArea(hull))
    solidity = cv2.contourArea(contour) / max(hull_area, 1.0)
    area = hull_area if solidity >= MIN_FACE_SOLIDITY else 0.0
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    x, y, bw, bh = cv2.boundingRect(contour)
    xyxy = (float(x), float(y), float(x + bw), float(y + bh))
    side = float(np.sqrt(rw * rh))
    aspect = max(rw, rh) / max(min(rw, rh), 1.0)
    fill = area / max(rw * rh, 1.0)
    if aspect > params["max_aspect"] or fill < min_fill:
        return box(xyxy, pips=None, problem=NOT_A_FACE), side
    pips, problem = count_pips(lab, contour, side, params)
    fields: dict[str, Any] = {"pips": pips}
    if problem:
        fields["problem"] = problem
    return box(xyxy, **fields), side


def count_pips(
    lab: np.ndarray, contour: np.ndarray, side: float, params: dict[str, Any]
) -> tuple[int | None, str]:
    """Pips inside one face, or ``None`` with the reason when the reading is ambiguous.

    The face is the contour's convex hull: a pip near the edge notches a face found by
    its colour. Pips are sought in the hull grown by ``PIP_GROW_SHARE`` of the side (a
    shaded corner may fall outside the face's colour), leaving out spots that reach the
    grown rim: those are the table, not a pip, unless ``EDGE_PIP_SHARE`` of one lies on
    the face, or a speck of one that bulges into it or is one whole pip (:data:`EDGE_PIP`:
    refused).
    """
    contour = cv2.convexHull(contour)
    g = max(1, round(side * PIP_GROW_SHARE))
    h, w = lab.shape[:2]
    x, y, bw, bh = cv2.boundingRect(contour)
    x1, y1 = max(0, x - g), max(0, y - g)
    x2, y2 = min(w, x + bw + g), min(h, y + bh + g)
    crop = lab[y1:y2, x1:x2].astype(np.float32)
    face = np.zeros((y2 - y1, x2 - x1), np.uint8)
    cv2.drawContours(face, [contour - np.array([x1, y1], np.int32)], -1, 255, -1)
    k = max(3, round(side * PIP_ERODE_SHARE) | 1)
    inner = cv2.erode(face, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k))) > 0
    if inner.sum() < 9:
        return None, "face too small to read"
    grown = cv2.dilate(face, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * g + 1,) * 2))
    # the crop's edge bounds the margin on its straight sides: outside the crop is no margin
    # (eroded with the default border, the rim was left only round the corners, and a table
    # spot reaching the side of the margin was read as a pip in a shaded corner)
    rim = (grown > 0) & ~(cv2.erode(grown, np.ones((3, 3), np.uint8), borderValue=0) > 0)
    body = np.median(crop[inner], axis=0)
    dist = colour_distance(crop, body)
    contrast = float(np.percentile(dist[inner], 99))
    cut = max(40.0, (1.0 - float(params["pip_dark_ratio"])) * contrast)
    if contrast < 40.0:
        return None, NO_PIP_CONTRAST
    spots = ((dist > cut) & (grown > 0)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(spots, connectivity=8)
    outside = set(np.unique(labels[rim & (spots > 0)]).tolist())
    pip_area = np.pi * (float(params["pip_radius_share"]) * side) ** 2
    speck = 0.15 * pip_area
    on_face = np.bincount(labels[face > 0], minlength=n)
    for i in outside:
        if on_face[i] >= max(speck, EDGE_PIP_SHARE * stats[i, cv2.CC_STAT_AREA]):
            return None, EDGE_PIP
        if on_face[i] >= speck:
            spot = labels == i
            if _bulges_in(spot, face, speck) or _a_pip(spot, stats[i], pip_area):
                return None, EDGE_PIP
    shifted = contour - np.array([x1, y1], np.int32)
    readings: list[Reading] = []
    for i in range(1, n):
        if stats[i, cv2.CC_STAT_AREA] < speck or i in outside:
            continue
        blob, area = _holes_filled(labels == i, int(stats[i, cv2.CC_STAT_AREA]))
        reading = _pip_blob(blob, area)
        colour = crop[blob].mean(axis=0)
        off = bool(reading.centres) and cv2.pointPolygonTest(shifted, reading.centres[0], False) < 0
        readings.append(reading._replace(colour=colour, off_face=off))
    m = cv2.moments(face, binaryImage=True)
    centre = (m["m10"] / max(m["m00"], 1.0), m["m01"] / max(m["m00"], 1.0))
    return _total(readings, side, centre)


HOLE_FILL_MAX = 2.0
"""A spot's holes are filled when that at most doubles it. Pinholes of noise in a pip (or a
light centre inside a pip's dark outline) cut its distance transform short, and a pip whose
inscribed radius is cut short has the area of several: a two read as six (blind 206060), a
three as five (blind tuning seed 27). Filled, 31 more of the blind tuning images (seeds
0-149, dice and dice_math, either dice proposer) were read right and none wrong. A face's
own outline, closed round the whole face, grows tenfold filled and stays a ring (a stroke,
passed over)."""


def _holes_filled(blob: np.ndarray, area: int) -> tuple[np.ndarray, int]:
    """A spot (``blob``, ``area`` pixels) with its holes filled, unless they are most of it."""
    solid = filled(blob.view(np.uint8))[0] > 0
    count = int(np.count_nonzero(solid))
    return (solid, count) if count <= HOLE_FILL_MAX * area else (blob, area)


def _bulges_in(spot: np.ndarray, face: np.ndarray, speck: float) -> bool:
    """Whether a spot reaching the grown rim bulges a speck's area into the face.

    The table's ring around a face touches the face only along its outline (a line a pixel
    or two wide, opened away); a pip at the face's edge, joined to a pale table, reaches in
    as a disc does (it notched the face's colour, whose hull bridges the notch).
    """
    inside = (spot & (face > 0)).astype(np.uint8)
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
    return int(np.count_nonzero(cv2.morphologyEx(inside, cv2.MORPH_OPEN, disc))) >= speck


def _a_pip(spot: np.ndarray, stats: np.ndarray, pip_area: float) -> bool:
    """Whether a spot reaching the grown rim is one whole pip: round, of about a pip's area.

    The table's ring around a face is long; a pip the face's colour stops at (a shaded
    band across the face, probe 109105) is whole beyond the outline, a disc of its own.
    """
    x, y, bw, bh, area = (int(v) for v in stats)
    if not EDGE_PIP_AREA[0] * pip_area <= area <= EDGE_PIP_AREA[1] * pip_area:
        return False
    points = np.argwhere(spot[y : y + bh, x : x + bw])[:, ::-1].astype(np.float32)
    _, radius = cv2.minEnclosingCircle(points)
    return area >= EDGE_PIP_ROUND * np.pi * radius**2


EDGE_PIP_AREA = (0.5, 2.5)
"""Area span, in expected pips (``pip_radius_share`` of the side), of a whole pip at the rim."""
EDGE_PIP_ROUND = 0.7
"""Least share of its enclosing circle a whole pip at the rim fills (a disc fills 0.8-0.9)."""

EDGE_PIP = "a spot on the face runs on past its grown outline: the face cut short at a pip?"
EDGE_PIP_SHARE = 0.3
"""A spot reaching the grown outline with this share of it on the face is no table: the
outline was cut short at a pip (a corner pip and the bevel split the face's colour), and
dropping the pip would read a four as a two."""

CORE_LEVELS = (0.6, 0.5, 0.7, 0.8, 0.9, 0.4)
"""Distance-transform levels (shares of the blob's largest) tried to split touching pips."""
PIP_COLOURS_APART = 35.0
"""Lab distance between two pips read on one face at which one is no pip: a die's pips are
painted alike (on faces read in the fourth style, 99 % of faces under 25), a glare or a
mark on the face is not."""


class Reading(NamedTuple):
    """One spot on a face: pips by distance-transform cores and by area, and where."""

    cores: int
    by_area: int
    radius: float
    centres: list[tuple[float, float]]
    area: int
    colour: np.ndarray | None = None
    """Mean Lab colour of the spot (set by :func:`count_pips`)."""
    off_face: bool = False
    """Whether its centre lies off the face's hull, in the margin pips are sought in."""


def _pip_blob(blob: np.ndarray, area: int) -> Reading:
    """Pips by cores and by area, radius and centres of one spot.

    Touching pips leave one distance-transform core each above some level; the first
    level whose core count matches the blob's area in pip areas wins. No level
    agreeing returns the two readings as they are, and the face is refused.
    """
    dist = cv2.distanceTransform(blob.astype(np.uint8), cv2.DIST_L2, 3)
    radius = float(dist.max())
    by_area = max(1, round(area / (np.pi * max(radius, 0.5) ** 2 * 1.1)))
    first = -1
    first_centres: list[tuple[float, float]] = []
    for level in CORE_LEVELS:
        n, _, _, centroids = cv2.connectedComponentsWithStats(
            (dist >= level * radius).astype(np.uint8)
        )
        centres = [(float(cx), float(cy)) for cx, cy in centroids[1:n]]
        if n - 1 == by_area:
            return Reading(n - 1, by_area, radius, centres, area)
        if first < 0:
            first, first_centres = n - 1, centres
    return Reading(first, by_area, radius, first_centres, area)


def _total(
    readings: list[Reading], side: float, centre: tuple[float, float] = (-1.0, -1.0)
) -> tuple[int | None, str]:
    """Sum of pips; specks far smaller than the largest pip are ignored, mid-sized ones refuse.

    With the face ``centre`` known (crop pixels), the pips must also lie point-symmetric
    about it, as on every die face; a pip without its mirror image means one was missed.
    A spot whose cores and own area disagree is still read when its area in pips, judged
    by its peers (the median area of two or more clean single pips), agrees with its
    cores: a pip seen at a slant or with a glare on it is not round, so its inscribed
    radius understates it. By the same peers, a spot split in cores must have their
    areas (a ringed pip, thin in places, splits in two of about one pip's area). A spot
    smaller than a pip whose centre lies off the face's hull is the table or the bevel in
    the grown margin, and is passed over; a full-sized one there is a pip in a shaded
    corner. Pips of clashing colours refuse the face.
    """
    if not readings:
        return None, NO_PIPS
    typical = max((r.radius for r in readings if r.cores == 1), default=0.0) or max(
        r.radius for r in readings
    )
    singles = [r.area for r in readings if r.cores == r.by_area == 1]
    peer_area = float(np.median(singles)) if len(singles) >= 2 else 0.0
    if not 0.03 * side <= typical <= 0.2 * side:
        return None, f"spots of radius {typical:.1f} px are not pips on a {side:.0f} px face"
    total = 0
    centres: list[tuple[float, float]] = []
    colours: list[np.ndarray] = []
    for r in readings:
        if r.radius < 0.35 * typical or (r.radius < 0.6 * typical and r.off_face):
            continue
        if r.radius < 0.6 * typical and r.by_area > r.cores:
            continue  # a thin sliver (rim, shading), not a small round pip
        if r.radius < 0.6 * typical:
            return None, f"spot of radius {r.radius:.1f} px among pips of {typical:.1f} px"
        by_peers = round(r.area / peer_area) if peer_area else 0
        if r.cores != r.by_area and by_peers != r.cores:
            return None, f"merged pips: {r.cores} cores but the area of {r.by_area}"
        if r.cores > 1 and peer_area and by_peers != r.cores:
            # a thin or ringed spot: its small inscribed radius makes one pip's area two
            return None, f"a spot split in {r.cores} cores has the area of one pip's peers"
        total += r.cores
        centres.extend(r.centres)
        if r.colour is not None:
            colours.append(r.colour)
    if len(colours) >= 2 and float(pdist(np.array(colours)).max()) > PIP_COLOURS_APART:
        return None, "pips of clashing colours (a glare or a mark read as a pip?)"
    if not 1 <= total <= 6:
        return None, f"{total} pips is not a die face"
    if centre[0] >= 0 and not symmetric(centres, centre, SYMMETRY_TOLERANCE * side):
        return None, f"{total} pips not laid out as on a die face (one hidden or missed?)"
    return total, ""
