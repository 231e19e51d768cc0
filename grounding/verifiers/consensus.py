"""The consensus verifier: decide only when independent proposers agree.

A program names the main proposer and, in ``agree_with``, one or more others
(``proposer: opencv.dice``, ``agree_with: [yolo.dice]``). The loop runs them all on
the same image; this verifier first applies the offline checks to the main
proposal, then matches its elements one-to-one with each other proposal by the
shared same-object rule (IoU for boxes and polygons, point distance for the
rest, looser tolerances than for duplicates) and compares every field the spec
names (numbers agree within ``field_rel_tol`` or both ``_err`` uncertainties). A
main element without a partner, a field that differs, or an element only the other
proposer found is a disagreement: the element is rejected or the region is listed as
missing, so the loop withholds. ``raw`` records both
proposals and every disagreement, so the state file shows what was compared.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, fields, replace
from typing import Any, ClassVar, TypeGuard

from pydantic import NonNegativeFloat

from groundeval.grounding._geometry import area_iou, element_xyxy, point_distance, same_object
from groundeval.grounding._protocol import Verification, VerifyRequest, register_verifier
from groundeval.grounding.verifiers.offline import SETTINGS_KEY, OfflineVerifier
from groundeval.state import Element, GroundSpec, error_field

CONSENSUS_KEY = "consensus"
"""Key in ``GroundSpec.params`` whose dict overrides :class:`ConsensusVerifier` settings."""


@register_verifier("consensus")
@dataclass(frozen=True)
class ConsensusVerifier:
    """Accepts an element only when it passes the offline checks and every other proposer agrees.

    Settings can be overridden per question with ``params: {consensus: {...}}``.
    """

    params_key: ClassVar[str] = CONSENSUS_KEY
    """The ``ground.params`` key holding this verifier's settings (``validate`` checks them)."""
    param_types: ClassVar[dict[str, Any]] = {
        "match_iou": NonNegativeFloat,
        "match_px": NonNegativeFloat,
        "field_rel_tol": NonNegativeFloat,
    }
    """Every setting is a number >= 0 (what :meth:`with_overrides` enforces at run time)."""

    name: str = "consensus"
    match_iou: float = 0.5
    """Boxes or polygons of two proposers overlapping by this IoU mark the same object."""
    match_px: float = 8.0
    """Points, lines and rays of two proposers this close (every point) mark the same object."""
    field_rel_tol: float = 0.0
    """Numeric fields this close (relative) agree, e.g. 0.15 for ``radius_px`` of two detectors."""

    async def verify(self, request: VerifyRequest) -> Verification:
        """Offline checks, then agreement with every proposal in ``request.others``."""
        if not request.others:
            raise ValueError(
                "verifier consensus got no independent proposals: name them in the spec's "
                "'agree_with' (e.g. agree_with: [yolo.dice])"
            )
        height, width = request.image_bgr.shape[:2]
        spec = request.spec
        offline = OfflineVerifier().with_overrides(spec.params.get(SETTINGS_KEY) or {})
        settings = self.with_overrides(spec.params.get(CONSENSUS_KEY) or {})
        return settings.compare(request.elements, request.others, spec, offline, (width, height))

    def with_overrides(self, overrides: dict[str, Any]) -> ConsensusVerifier:
        """A copy with settings from a program's params (unknown keys are an error)."""
        known = {f.name for f in fields(self)} - {"name"}
        if not isinstance(overrides, dict) or set(overrides) - known:
            bad = sorted(set(overrides) - known) if isinstance(overrides, dict) else overrides
            raise ValueError(
                f"params.{CONSENSUS_KEY}: unknown setting(s) {bad}; known: {sorted(known)}"
            )
        values: dict[str, Any] = {}
        for key, value in overrides.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(
                    f"params.{CONSENSUS_KEY}.{key}: expected a number >= 0, got {value!r}"
                )
            values[key] = float(value)
        return replace(self, **values)

    def compare(
        self,
        elements: list[Element],
        others: dict[str, list[Element]],
        spec: GroundSpec,
        offline: OfflineVerifier,
        size_wh: tuple[int, int],
    ) -> Verification:
        """The verdicts, synchronously: offline checks first, then agreement per proposer."""
        first = offline.check(elements, spec, size_wh)
        reasons = {e.id: [e.reason] for e in first.elements if e.verdict != "accepted"}
        agreed: dict[int, list[str]] = {}
        missing = list(first.missing)
        sane = [e for e in first.elements if e.verdict == "accepted"]
        geometry_only = spec.model_copy(update={"fields": {}, "min_count": None, "max_count": None})
        record: dict[str, Any] = {"main": spec.proposer, "others": {}}
        for name, theirs in others.items():
            checked = offline.check(theirs, geometry_only, size_wh).elements
            usable = [e for e in checked if e.verdict == "accepted"]
            pairs = self._match(sane, usable)
            notes = self._disagreements(spec, name, sane, usable, pairs, reasons, agreed)
            matched = {j for _, j, _ in pairs}
            found = [
                f"{name} found a {o.kind} at {_where(o)} that {spec.proposer} did not mark"
                for o in usable
                if o.id not in matched
            ]
            if len(sane) != len(usable):
                found.insert(0, f"count: {spec.proposer} has {len(sane)}, {name} has {len(usable)}")
            missing += found
            record["others"][name] = {
                "elements": [e.model_dump(mode="json") for e in theirs],
                "unusable": {str(e.id): e.reason for e in checked if e.verdict != "accepted"},
                "matched": [[i, j, round(s, 3)] for i, j, s in pairs],
                "disagreements": notes + found,
            }
        judged = [
            e.model_copy(
                update={
                    "verdict": "rejected" if e.id in reasons else "accepted",
                    "reason": "; ".join(reasons[e.id])
                    if e.id in reasons
                    else "agrees with " + ", ".join(agreed.get(e.id, [])),
                }
            )
            for e in elements
        ]
        record["missing"] = missing
        return Verification(judged, missing=missing, raw=json.dumps(record, sort_keys=True))

    def _match(self, mine: list[Element], theirs: list[Element]) -> list[tuple[int, int, float]]:
        """One-to-one pairs (my id, their id, score), best first, by the same-object rule."""
        scored = []
        for a in mine:
            for b in theirs:
                if same_object(a, b, min_iou=self.match_iou, max_px=self.match_px):
                    scored.append((_score(a, b), a.id, b.id))
        scored.sort(key=lambda t: (-t[0], t[1], t[2]))
        used_a: set[int] = set()
        used_b: set[int] = set()
        pairs = []
        for score, i, j in scored:
            if i not in used_a and j not in used_b:
                used_a.add(i)
                used_b.add(j)
                pairs.append((i, j, score))
        return pairs

    def _disagreements(
        self,
        spec: GroundSpec,
        name: str,
        mine: list[Element],
        theirs: list[Element],
        pairs: list[tuple[int, int, float]],
        reasons: dict[int, list[str]],
        agreed: dict[int, list[str]],
    ) -> list[str]:
        """Reject unmatched elements and field mismatches; note agreements."""
        partner = {i: (j, s) for i, j, s in pairs}
        by_id = {e.id: e for e in theirs}
        notes: list[str] = []
        for e in mine:
            if e.id not in partner:
                note = f"{name} has no matching {e.kind}{_nearest(e, theirs)}"
                reasons.setdefault(e.id, []).append(note)
                notes.append(f"#{e.id}: {note}")
                continue
            j, score = partner[e.id]
            other = by_id[j]
            differ = [
                _field_note(key, spec.proposer, e.fields, name, other.fields)
                for key in spec.fields
                if key not in other.fields
                or not _equal(
                    e.fields.get(key),
                    other.fields[key],
                    self.field_rel_tol,
                    _uncertainty(e.fields, key) + _uncertainty(other.fields, key),
                )
            ]
            if differ:
                reasons.setdefault(e.id, []).extend(differ)
                notes += [f"#{e.id}: {d}" for d in differ]
            else:
                agreed.setdefault(e.id, []).append(f"{name} #{j} ({_score_text(e, score)})")
        return notes


def _score(a: Element, b: Element) -> float:
    """Higher is a better match: IoU for areas, minus the point distance for the rest."""
    return area_iou(a, b) if a.kind in ("box", "polygon") else -point_distance(a, b)


def _score_text(e: Element, score: float) -> str:
    return f"IoU {score:.2f}" if e.kind in ("box", "polygon") else f"{-score:.1f} px apart"


def _nearest(e: Element, theirs: list[Element]) -> str:
    same_kind = [o for o in theirs if o.kind == e.kind]
    if not same_kind:
        return ""
    best = max(_score(e, o) for o in same_kind)
    return f" (best {_score_text(e, best)})"


def _where(e: Element) -> str:
    x1, y1, x2, y2 = element_xyxy(e)
    return f"[{x1:.0f}, {y1:.0f}, {x2:.0f}, {y2:.0f}]"


def _equal(a: Any, b: Any, rel_tol: float = 0.0, slack: float = 0.0) -> bool:
    """Equal values; numbers by value (3 == 3.0) within ``rel_tol`` or ``slack``.

    ``slack`` is the two measurements' uncertainties combined; True is not the number 1.
    """
    if _number(a) and _number(b):
        close = math.isclose(float(a), float(b), rel_tol=max(rel_tol, 1e-9), abs_tol=1e-9)
        return close or abs(float(a) - float(b)) <= slack
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def _uncertainty(values: dict[str, Any], key: str) -> float:
    """A field's uncertainty (its ``_err`` sibling), 0 when absent or not a number >= 0."""
    err = values.get(error_field(key))
    return float(err) if _number(err) and math.isfinite(err) and err >= 0 else 0.0


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _field_note(key: str, me: str, mine: dict[str, Any], name: str, theirs: dict[str, Any]) -> str:
    if key not in theirs:
        return f"{key}: {name} gives no value ({me} says {mine.get(key)!r})"
    return f"{key}: {me} says {mine.get(key)!r}, {name} says {theirs[key]!r}"
