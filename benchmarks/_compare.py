"""``groundeval compare RUN_A RUN_B``: a paired test of two runs over the same items.

Items pair by id. Both runs must grade paired items with the same program (same
questions, same checks) and protocol, or the comparison says what differs and
stops. ``diff`` is A minus B.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from groundeval.programs.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    StatsInputError,
    cell_seed,
    paired_scores,
)
from groundeval.state import ItemResult, RunStore, iter_jsonl

DECISION_METRIC = "decision"
"""Compare yes/no outcomes per (item, question) instead of an item score."""


class CompareError(ValueError):
    """Two runs that cannot be compared as asked (names what differs)."""


def _load(run: Path) -> tuple[dict[str, ItemResult], dict[str, str]]:
    store = RunStore(Path(run))
    if not store.results_path.is_file():
        raise CompareError(f"{run}: not a run folder (no results.jsonl)")
    results = {r.item_id: r for r in store.results()}
    programs: dict[str, str] = {}
    if store.programs_path.is_file():
        for _, row in iter_jsonl(store.programs_path, CompareError):
            programs[str(row.get("id"))] = json.dumps(row, sort_keys=True)
    return results, programs


def _check_programs(
    a: Path,
    b: Path,
    ra: dict[str, ItemResult],
    rb: dict[str, ItemResult],
    pa: dict[str, str],
    pb: dict[str, str],
    shared: list[str],
) -> None:
    for item in shared:
        x, y = ra[item], rb[item]
        if x.program_id != y.program_id:
            raise CompareError(
                f"item {item!r}: graded with program {x.program_id!r} in {a} but "
                f"{y.program_id!r} in {b}; compare runs over the same programs"
            )
        if x.scoring != y.scoring:
            raise CompareError(
                f"item {item!r}: scoring protocol {x.scoring!r} in {a} but {y.scoring!r} in {b}"
            )
    for program in sorted({ra[i].program_id for i in shared}):
        if program in pa and program in pb and pa[program] != pb[program]:
            raise CompareError(
                f"program {program!r} differs between {a} and {b} "
                f"({_what_differs(pa[program], pb[program])}); the runs asked different questions"
            )


def _what_differs(x: str, y: str) -> str:
    da, db = json.loads(x), json.loads(y)
    fields = sorted(k for k in set(da) | set(db) if da.get(k) != db.get(k))
    qa = {q.get("id"): q for q in [*da.get("gate", []), *da.get("hard", [])]}
    qb = {q.get("id"): q for q in [*db.get("gate", []), *db.get("hard", [])]}
    changed = sorted(str(q) for q in set(qa) | set(qb) if qa.get(q) != qb.get(q))
    text = f"fields {', '.join(fields)}"
    return f"{text}; questions {', '.join(changed)}" if changed else text


def _groups(result: ItemResult, by: str | None) -> list[str]:
    if by is None:
        return []
    raw = result.tags.get(by)
    if raw is None:
        return []
    if by == "axis":
        return [v.strip() for v in raw.split(",") if v.strip()]
    return [raw]


def _score(result: ItemResult, metric: str) -> float | None:
    if result.status != "scored":
        return None
    v = result.scores.get(metric)
    return None if v is None else float(v)


def _pairs(
    metric: str, items: Sequence[tuple[ItemResult, ItemResult]]
) -> tuple[list[float], list[float]]:
    xs: list[float] = []
    ys: list[float] = []
    for x, y in items:
        if metric == DECISION_METRIC:
            dy = {d.question_id: d.outcome for d in y.decisions}
            for d in x.decisions:
                other = dy.get(d.question_id)
                if d.outcome in ("pass", "fail") and other in ("pass", "fail"):
                    xs.append(float(d.outcome == "pass"))
                    ys.append(float(other == "pass"))
        else:
            sx, sy = _score(x, metric), _score(y, metric)
            if sx is not None and sy is not None:
                xs.append(sx)
                ys.append(sy)
    return xs, ys


def _status_note(items: Sequence[tuple[ItemResult, ItemResult]]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for x, y in items:
        counts[f"A {x.status}"] += 1
        counts[f"B {y.status}"] += 1
    text = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    return f"no paired value in {len(items)} shared item(s) ({text})"


def _cell(
    metric: str, items: Sequence[tuple[ItemResult, ItemResult]], resamples: int, rng: Any
) -> dict[str, Any]:
    xs, ys = _pairs(metric, items)
    if not xs:
        return {
            "metric": metric,
            "n_paired": 0,
            "a": None,
            "b": None,
            "diff": None,
            "diff_ci95": None,
            "p_value": None,
            "test": None,
            "note": _status_note(items),
        }
    result = paired_scores(np.array(xs), np.array(ys), resamples=resamples, rng=rng)
    return {"metric": metric, **result.as_dict()}


def compare_runs(
    a: Path,
    b: Path,
    *,
    metric: str = "strict",
    by: str | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Paired comparison overall and per ``by`` tag value; raises CompareError on mismatch."""
    ra, pa = _load(a)
    rb, pb = _load(b)
    shared = sorted(set(ra) & set(rb))
    if not shared:
        raise CompareError(
            f"{a} ({len(ra)} items) and {b} ({len(rb)} items) share no item id; "
            "compare runs over the same items"
        )
    _check_programs(a, b, ra, rb, pa, pb, shared)
    if metric != DECISION_METRIC:
        known = sorted({k for r in [*ra.values(), *rb.values()] for k in r.scores})
        for run, results in ((a, ra), (b, rb)):
            if not any(metric in r.scores for r in results.values()):
                raise CompareError(
                    f"{run}: no item has score {metric!r}; scores in these runs: "
                    f"{', '.join(known) or 'none'} (or --metric {DECISION_METRIC})"
                )
    pairs = [(ra[i], rb[i]) for i in shared]
    try:
        out: dict[str, Any] = _cell(metric, pairs, resamples, cell_seed(seed, "compare"))
        out |= {
            "runs": {"a": str(a), "b": str(b)},
            "shared_items": len(shared),
            "only_in_a": len(set(ra) - set(rb)),
            "only_in_b": len(set(rb) - set(ra)),
            "resamples": resamples,
            "seed": seed,
        }
        if by is not None:
            grouped: dict[str, list[tuple[ItemResult, ItemResult]]] = defaultdict(list)
            for x, y in pairs:
                for g in dict.fromkeys([*_groups(x, by), *_groups(y, by)]):
                    grouped[g].append((x, y))
            if not grouped:
                raise CompareError(f"no shared item has a tag {by!r} to group by")
            out["by"] = by
            out["groups"] = {
                g: _cell(metric, members, resamples, cell_seed(seed, "compare", by, g))
                for g, members in sorted(grouped.items())
            }
    except StatsInputError as exc:
        raise CompareError(str(exc)) from exc
    return out
