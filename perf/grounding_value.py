"""Does grounding pay? A simulated judge, with a stated error model, over scenes with exact truth.

The synthetic dice and coin scenes (``benchmarks/synthetic``, seeds 5000+, a range
no proposer default was tuned on) give exact truth for every question. A
simulated judge answers them in five ways; every grounded way runs through the
real verify loop (``run_grounding``) and the program's real check, so the loop's
rules (what is left open withholds, a retry never buys confidence, stalls stop)
are part of what is measured.

Error model of the simulated judge (rates per setting, printed in the table):

* ``m`` - each object in the image is missed (not seen, not boxed) with probability m;
* ``h`` - one object that is not there is seen (a plausible box in empty space) with
  probability h per look;
* ``p`` - every count the judge states is off by +-1 with probability p: each die's
  pips when it boxes dice, and, answering directly, also the totals it states (the
  number of objects and the pip sum), which grounding leaves to the check;
* ``v`` - as a verifier looking at the numbered overlay, each verdict is flipped with
  probability v (a right box rejected, a wrong one accepted), and each object without
  a box is noticed as missing with probability 1 - v.
Boxes the judge draws are the truth boxes with 1.5 px of jitter; every look (question,
round) draws its errors afresh. CV proposals are the real proposers' output.

Ways of deciding (calls = judge calls per question):

* ``direct``: the judge answers each question yes/no from what it sees.
* ``boxes+check``: the judge boxes the objects once per grounding; offline verifier; check.
* ``boxes+verify``: the same, with the judge as verifier, up to 3 rounds (the loop).
* ``hybrid``: the program's CV proposer proposes, the judge verifies (one round).
* ``consensus``: the judge's boxes must agree with the CV proposer's (match by IoU,
  pips compared); one judge call, no judge verdict.
* ``cv+cv``: two local proposers must agree (opencv.dice + yolo.dice, yolo.coins +
  opencv.contours: the README's consensus paths); no judge at all, so the same at every
  error rate.
* ``cv``: the program's CV proposer alone with the offline verifier (one round).

    .venv/bin/python perf/grounding_value.py            # about 1 minute of CPU
    .venv/bin/python perf/grounding_value.py --n 4      # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from groundeval.benchmarks.synthetic import DIFFICULTIES, Scene, encode_png, generate
from groundeval.grounding import area_iou
from groundeval.grounding._loop import run_grounding
from groundeval.grounding._protocol import (
    Feedback,
    Proposal,
    ProposeRequest,
    Verification,
    VerifyRequest,
    get_proposer,
    register_proposer,
    register_verifier,
)
from groundeval.judges._protocol import ImagePart
from groundeval.programs import CheckError, TooCloseToCall, run_check
from groundeval.programs._model import GroundSpec, Program, Question, SecondOpinion
from groundeval.state import Element, Provenance, StateFile

PROVENANCE = Provenance(toolkit_version="perf")
SEED_BASE = 5000
"""Seeds from here on: disjoint from the seeds any default was tuned on."""
SCENE_KINDS = {
    "dice": ("dice", "pips", "opencv.dice", ("opencv.dice", "yolo.dice")),
    "coins": ("coins", "radius_px", "opencv.contours", ("yolo.coins", "opencv.contours")),
}
"""Scene -> (truth list, field, program's CV proposer, the two CV proposers of cv+cv)."""
MATCH_IOU = 0.5


@dataclass(frozen=True)
class Errors:
    """Error rates of the simulated judge (see the module docstring)."""

    p: float
    m: float
    h: float
    v: float

    def __str__(self) -> str:
        return f"p={self.p:.2f} m={self.m:.2f} h={self.h:.2f} v={self.v:.2f}"


SETTINGS = (
    Errors(p=0.0, m=0.0, h=0.0, v=0.0),
    Errors(p=0.05, m=0.03, h=0.03, v=0.05),
    Errors(p=0.15, m=0.08, h=0.08, v=0.10),
    Errors(p=0.30, m=0.15, h=0.15, v=0.20),
    Errors(p=0.15, m=0.08, h=0.08, v=0.30),
)
"""A flawless judge (the calibration row), a good one, a middling one, a poor one, and a
middling proposer with a poor verifier."""


@dataclass
class Look:
    """What one grounding may know: the scene's truth, the error rates, a seeded generator."""

    scene: Scene
    kind: str
    errors: Errors
    rng: np.random.Generator
    calls: int = 0
    cv: dict[str, Proposal | Exception] = field(default_factory=dict)


LOOKS: dict[str, Look] = {}
"""Keyed by the item id the loop passes to the simulated proposer and verifier."""


def truth_elements(look: Look) -> list[Element]:
    """The scene's objects as boxes with their exact field."""
    objects, name, _, _ = SCENE_KINDS[look.kind]
    out = []
    for i, obj in enumerate(look.scene.truth[objects], start=1):
        value = obj["pips"] if name == "pips" else float(obj["radius_px"])
        out.append(Element(id=i, kind="box", xyxy_px=list(obj["xyxy_px"]), fields={name: value}))
    return out


def perceive(look: Look) -> list[Element]:
    """One look at the scene: misses, a hallucination, pip slips, pixel jitter."""
    err, rng = look.errors, look.rng
    height, width = look.scene.image_bgr.shape[:2]
    seen = []
    for e in truth_elements(look):
        if rng.random() < err.m:
            continue
        fields = dict(e.fields)
        if "pips" in fields and rng.random() < err.p:
            fields["pips"] = _slip(fields["pips"], rng)
        box = np.clip(np.array(e.xyxy_px) + rng.normal(0, 1.5, 4), 0, [width, height] * 2)
        if box[2] - box[0] >= 2 and box[3] - box[1] >= 2:
            seen.append(e.model_copy(update={"xyxy_px": [float(v) for v in box], "fields": fields}))
    if rng.random() < err.h:
        ghost = _hallucination(look, seen)
        if ghost is not None:
            seen.append(ghost)
    return [e.model_copy(update={"id": i}) for i, e in enumerate(seen, start=1)]


def _slip(pips: int, rng: np.random.Generator) -> int:
    step = 1 if pips == 1 else -1 if pips == 6 else int(rng.choice([-1, 1]))
    return pips + step


def _hallucination(look: Look, seen: list[Element]) -> Element | None:
    """A plausible box where nothing is: the truth's typical size, away from every object."""
    truth = truth_elements(look)
    height, width = look.scene.image_bgr.shape[:2]
    sizes = [e.xyxy_px[2] - e.xyxy_px[0] for e in truth if e.xyxy_px] or [60.0]
    side = float(np.median(sizes))
    _, name, _, _ = SCENE_KINDS[look.kind]
    for _ in range(20):
        x = float(look.rng.uniform(0, max(1.0, width - side)))
        y = float(look.rng.uniform(0, max(1.0, height - side)))
        value = int(look.rng.integers(1, 7)) if name == "pips" else side / 2
        ghost = Element(id=1, kind="box", xyxy_px=[x, y, x + side, y + side], fields={name: value})
        if all(area_iou(ghost, t) < 0.05 for t in [*truth, *seen]):
            return ghost
    return None


def correct(look: Look, e: Element) -> bool:
    """A box on a real object (IoU >= 0.5) whose count field is right."""
    _, name, _, _ = SCENE_KINDS[look.kind]
    for t in truth_elements(look):
        if area_iou(e, t) >= MATCH_IOU:
            return name != "pips" or e.fields.get(name) == t.fields[name]
    return False


@register_proposer("sim.judge")
class SimJudgeProposer:
    """The simulated judge drawing boxes: one call per round, a fresh look each time."""

    name = "sim.judge"

    async def propose(self, request: ProposeRequest) -> Proposal:
        look = LOOKS[request.item_id]
        look.calls += 1
        return Proposal(perceive(look), raw="(simulated)")


@register_proposer("sim.cv")
class CachedCV:
    """A real CV proposer's output, computed once per scene (``params.source`` names it)."""

    name = "sim.cv"

    async def propose(self, request: ProposeRequest) -> Proposal:
        found = LOOKS[request.item_id].cv[request.spec.params["source"]]
        if isinstance(found, Exception):
            raise found
        return found


@register_verifier("sim.judge")
class SimJudgeVerifier:
    """The simulated judge ruling on the numbered overlay: one call per round."""

    name = "sim.judge"

    async def verify(self, request: VerifyRequest) -> Verification:
        look = LOOKS[request.item_id]
        look.calls += 1
        v, rng = look.errors.v, look.rng
        judged = []
        for e in request.elements:
            right = correct(look, e)
            accept = right != (rng.random() < v)
            verdict = "accepted" if accept else "rejected"
            judged.append(e.model_copy(update={"verdict": verdict, "reason": "(simulated)"}))
        missing = [
            f"an object at {t.xyxy_px} has no box"
            for t in truth_elements(look)
            if not any(area_iou(e, t) >= MATCH_IOU for e in request.elements) and rng.random() >= v
        ]
        return Verification(judged, missing=missing, raw="(simulated)")


def strategies(kind: str, base: GroundSpec) -> dict[str, GroundSpec | None]:
    """Each way of deciding as a ground spec (``None``: direct, no grounding)."""
    _, name, cv_main, (cv_a, cv_b) = SCENE_KINDS[kind]
    fields = base.fields if name == "pips" else {}
    spec = base.model_copy(update={"fields": fields, "params": {}, "budget": 1})

    def cached(source: str) -> dict[str, Any]:
        return {"source": source}

    def agree(main: str, main_params: dict[str, Any], other: str) -> GroundSpec:
        return GroundSpec(
            **{
                **spec.model_dump(exclude={"agree_with", "verifier", "proposer", "params"}),
                "proposer": main,
                "params": main_params,
                "verifier": "consensus",
                "agree_with": [SecondOpinion(proposer="sim.cv", params=cached(other))],
            }
        )

    return {
        "direct": None,
        "boxes+check": spec.model_copy(update={"proposer": "sim.judge"}),
        "boxes+verify": spec.model_copy(
            update={"proposer": "sim.judge", "verifier": "sim.judge", "budget": 3}
        ),
        "hybrid": spec.model_copy(
            update={"proposer": "sim.cv", "params": cached(cv_main), "verifier": "sim.judge"}
        ),
        "consensus": agree("sim.judge", {}, cv_main),
        "cv+cv": agree("sim.cv", cached(cv_a), cv_b),
        "cv": spec.model_copy(update={"proposer": "sim.cv", "params": cached(cv_main)}),
    }


async def cv_proposals(scene: Scene, kind: str) -> dict[str, Proposal | Exception]:
    """Every CV proposer this script needs, run once on the scene (default parameters)."""
    _, _, main, pair = SCENE_KINDS[kind]
    base = _ground_spec(scene.programs[0])
    height, width = scene.image_bgr.shape[:2]
    image = ImagePart(encode_png(scene.image_bgr), "image/png", (width, height))
    out: dict[str, Proposal | Exception] = {}
    for name in sorted({main, *pair}):
        spec = base.model_copy(update={"proposer": name, "params": {}})
        request = ProposeRequest(scene.image_bgr, image, spec, "", Feedback(), None, scene.id)
        try:
            out[name] = await get_proposer(name).propose(request)
        except Exception as exc:  # replayed in the loop, which records it as an error state
            out[name] = exc
    return out


def _ground_spec(program: Program) -> GroundSpec:
    spec = next(q.ground for q in program.questions if q.ground is not None)
    assert spec is not None
    return spec


def direct_answer(look: Look, q: Question, spec: GroundSpec) -> str:
    """One call: a fresh look, the holistic totals slipped by +-1 at rate p, then the answer."""
    look.calls += 1
    seen = perceive(look)
    if look.rng.random() < look.errors.p:  # the stated number of objects is off by one
        if seen and look.rng.random() < 0.5:
            seen.pop(int(look.rng.integers(len(seen))))
        else:
            ghost = _hallucination(look, seen)
            seen += [ghost] if ghost is not None else []
    if "pips" in spec.fields and seen and look.rng.random() < look.errors.p:  # the sum is off
        k = int(look.rng.integers(len(seen)))
        seen[k] = seen[k].model_copy(
            update={"fields": {"pips": _slip(seen[k].fields["pips"], look.rng)}}
        )
    seen = [e.model_copy(update={"id": i}) for i, e in enumerate(seen, start=1)]
    state = _state(look, spec, seen)
    assert q.check is not None
    return "pass" if run_check(q.check, state).score >= 1.0 else "fail"


def _state(look: Look, spec: GroundSpec, elements: list[Element]) -> StateFile:
    height, width = look.scene.image_bgr.shape[:2]
    return StateFile(
        item_id=look.scene.id, question_id="q", image_sha256="0" * 64,
        image_size_wh=[width, height], helper=spec.helper, elements=elements,
        status="grounded", provenance=PROVENANCE,
    )  # fmt: skip


async def grade(look: Look, way: str, spec: GroundSpec | None) -> list[tuple[str, str]]:
    """(outcome, truth) for every question of the scene's programs, one way of deciding."""
    scene = look.scene
    height, width = scene.image_bgr.shape[:2]
    image = ImagePart(b"(simulated)", "image/png", (width, height))
    rows = []
    for program in scene.programs:
        state: StateFile | None = None
        for q in program.questions:
            truth = scene.truth["answers"][f"{program.id}/{q.id}"]
            if q.check is None or program.state_source(q) is None:
                continue
            base = _ground_spec(program)
            if spec is None:
                rows.append((direct_answer(look, q, base), truth))
                continue
            if state is None:
                state = await run_grounding(
                    image_bgr=scene.image_bgr, image=image, spec=spec, ask=q.ask,
                    item_id=LOOK_ID, question_id=q.id, provenance=PROVENANCE,
                )  # fmt: skip
            if state.status != "grounded":
                rows.append((state.status, truth))
                continue
            try:
                rows.append(("pass" if run_check(q.check, state).score >= 1.0 else "fail", truth))
            except TooCloseToCall:
                rows.append(("withheld", truth))
            except CheckError:
                rows.append(("error", truth))
    return rows


LOOK_ID = "look"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=8, help="scenes per kind and difficulty")
    parser.add_argument("--seed", type=int, default=0, help="seed of the simulated judge")
    args = parser.parse_args()
    started = time.perf_counter()
    scenes: list[tuple[str, Scene, dict[str, Proposal | Exception]]] = []
    for kind in SCENE_KINDS:
        for difficulty in DIFFICULTIES:
            for i in range(args.n):
                scene = generate(kind, difficulty, SEED_BASE + i)
                scenes.append((kind, scene, await cv_proposals(scene, kind)))
    cv_seconds = time.perf_counter() - started
    tally: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    for s_index, errors in enumerate(SETTINGS):
        for n, (kind, scene, cv) in enumerate(scenes):
            base = _ground_spec(scene.programs[0])
            for w_index, (way, spec) in enumerate(strategies(kind, base).items()):
                if way.startswith("cv") and s_index > 0:
                    continue  # no judge involved: the same at every error rate
                rng = np.random.default_rng([args.seed, s_index, n, w_index])
                look = Look(scene, kind, errors, rng, cv=cv)
                LOOKS[LOOK_ID] = look
                rows = await grade(look, way, spec)
                key = (str(errors) if not way.startswith("cv") else "no judge", way)
                for outcome, truth in rows:
                    tally[key][_verdict(outcome, truth)] += 1
                tally[key]["calls"] += look.calls
    print(
        f"{len(scenes)} scenes (dice and coins x {len(DIFFICULTIES)} difficulties x {args.n}, "
        f"seeds {SEED_BASE}..{SEED_BASE + args.n - 1}); CV proposals {cv_seconds:.0f} s, "
        f"total {time.perf_counter() - started:.0f} s wall, {time.process_time():.0f} s CPU"
    )
    print()
    print(
        "| judge error rates | way | right | wrong | withheld | error | wrong of decided "
        "| calls/question |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for (setting, way), c in tally.items():
        total = c["right"] + c["wrong"] + c["withheld"] + c["error"]
        decided = c["right"] + c["wrong"]
        wrong_share = f"{100 * c['wrong'] / decided:.1f} %" if decided else "-"
        print(
            f"| {setting} | {way} | {_pct(c['right'], total)} | {_pct(c['wrong'], total)} | "
            f"{_pct(c['withheld'], total)} | {_pct(c['error'], total)} | {wrong_share} "
            f"| {c['calls'] / max(total, 1):.2f} |"
        )


def _verdict(outcome: str, truth: str) -> str:
    if outcome in ("withheld", "error"):
        return outcome
    return "right" if outcome == truth else "wrong"


def _pct(k: int, n: int) -> str:
    return f"{100 * k / n:.1f} %" if n else "-"


if __name__ == "__main__":
    asyncio.run(main())
