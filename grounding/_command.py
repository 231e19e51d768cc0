"""``groundeval ground``: one grounding on one image, for a benchmark author trying proposers.

The same loop, verifier and state file as a full run, with no program around it:
pick a helper and a proposer, pass parameters, look at the overlay and the JSON.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from groundeval.grounding._images import load_image
from groundeval.grounding._loop import run_grounding
from groundeval.judges import Judge
from groundeval.state import GroundingTarget, GroundSpec, Provenance, StateFile, toolkit_version

QUESTION_ID = "ground"
"""Question id used for a one-off grounding (overlays are ``ground.roundN.png``)."""


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """Turn ``--param k=v`` strings into a dict; values are JSON when they parse, else strings.

    ``min_radius=12`` gives an int, ``hsv_low=[0,80,80]`` a list, ``mode=dark`` the
    string ``"dark"``. A dotted key nests: ``offline_verifier.min_size_px=8``. A later
    pair overrides an earlier one.

    >>> parse_params(["r=12", "colour=red", "range=[1, 2]", "offline_verifier.min_size_px=8"])
    {'r': 12, 'colour': 'red', 'range': [1, 2], 'offline_verifier': {'min_size_px': 8}}
    """
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        parts = key.split(".")
        if not sep or not all(parts):
            raise ValueError(f"--param {pair!r}: expected key=value (e.g. min_radius=12)")
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text
        node = params
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return params


def ground_image(
    image: Path,
    *,
    helper: str,
    proposer: str,
    params: dict[str, Any],
    out: Path | None,
    verifier: str = "offline",
    budget: int = 1,
    fields: dict[str, dict[str, Any]] | None = None,
    target: str = "",
    min_count: int | None = None,
    max_count: int | None = None,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """Ground one image and return the JSON the command prints.

    Writes ``out/<image stem>/ground.roundN.png`` and ``out/<image stem>/state.json``
    when ``out`` is given (nothing is written otherwise).

    Raises:
        ImageError: The image cannot be read (the message names it).
        ValueError: The helper, budget or fields do not make a valid grounding spec.
    """
    return asyncio.run(
        aground_image(
            image, helper=helper, proposer=proposer, params=params, out=out, verifier=verifier,
            budget=budget, fields=fields, target=target, min_count=min_count,
            max_count=max_count, judge=judge,
        )
    )  # fmt: skip


async def aground_image(
    image: Path,
    *,
    helper: str,
    proposer: str,
    params: dict[str, Any],
    out: Path | None,
    verifier: str = "offline",
    budget: int = 1,
    fields: dict[str, dict[str, Any]] | None = None,
    target: str = "",
    min_count: int | None = None,
    max_count: int | None = None,
    judge: Judge | None = None,
) -> dict[str, Any]:
    """:func:`ground_image` for callers already inside an event loop."""
    spec = _spec(
        helper=helper, proposer=proposer, params=params, verifier=verifier, budget=budget,
        fields=fields or {}, target=target, min_count=min_count, max_count=max_count,
    )  # fmt: skip
    loaded = load_image(Path(image))
    item_id = safe_item_id(Path(image).stem)
    folder = Path(out) / item_id if out is not None else None
    state = await run_grounding(
        image_bgr=loaded.bgr,
        image=loaded.part,
        spec=spec,
        ask=target or "everything the proposer finds",
        item_id=item_id,
        question_id=QUESTION_ID,
        provenance=Provenance(
            toolkit_version=toolkit_version(),
            judge=judge.spec if judge else "offline",
            model=judge.model if judge else "",
            parameters=dict(judge.params) if judge else {},
        ),
        judge=judge,
        overlays=GroundingTarget(folder, str(folder)) if folder else None,
    )
    state_path = None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        state_path = folder / "state.json"
        state_path.write_text(state.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return summarise(state, image=Path(image), state_path=state_path)


def summarise(state: StateFile, *, image: Path, state_path: Path | None) -> dict[str, Any]:
    """The printed JSON: final elements, status, and what the last round rejected or missed."""
    last = state.rounds[-1] if state.rounds else None
    return {
        "image": str(image),
        "status": state.status,
        "reason": state.reason,
        "elements": [
            e.model_dump(
                include={"id", "kind", "xyxy_px", "points_px", "fields"}, exclude_none=True
            )
            for e in state.elements
        ],
        "rejected": [
            {"id": e.id, "reason": e.reason}
            for e in (last.elements if last else [])
            if e.verdict == "rejected"
        ],
        "missing": list(last.missing) if last else [],
        "rounds": len(state.rounds),
        "overlay": last.overlay if last else None,
        "state": str(state_path) if state_path else None,
    }


def safe_item_id(stem: str) -> str:
    """A file stem made safe as an id and a folder name (no separators, no dots first)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.:\-]", "_", stem).lstrip("._:-")[:128]
    return cleaned.replace("..", "_") or "image"


def _spec(**values: Any) -> GroundSpec:
    try:
        return GroundSpec(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ValueError(f"invalid grounding settings: {problems}") from exc
