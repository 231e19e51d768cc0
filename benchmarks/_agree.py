"""Agreement between graders: per-question agreement, Cohen's kappa, rank correlation, stability.

Inputs are run folders (``results.jsonl``) or label files (JSONL rows ``{"item",
"question", "outcome"}``, optionally ``"tags"`` and ``"score"``), and ratings
tables (CSV, JSON or JSONL) with a numeric column, such as human Likert means.
"""

from __future__ import annotations

import csv
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import fmean, variance
from typing import Any

from scipy import stats

from groundeval.state import ItemResult, RunStore, iter_jsonl

SCORE_KEYS: tuple[str, ...] = ("score", "all", "relaxed", "strict")
"""Item score used when none is named: the first of these a result has."""


class AgreeInputError(ValueError):
    """A label, run or ratings file that cannot be read as asked."""


@dataclass
class Labels:
    """Outcomes per (item, question), item tags and item scores from one grader."""

    source: str
    outcomes: dict[tuple[str, str], str] = field(default_factory=dict)
    tags: dict[str, dict[str, str]] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa of two label sequences: (p_o - p_e) / (1 - p_e).

    None when it is undefined (no pairs, or both graders always gave one same label).

    >>> round(cohen_kappa([("y", "y"), ("y", "n"), ("n", "n"), ("n", "n")]), 4)
    0.5
    """
    n = len(pairs)
    if n == 0:
        return None
    observed = sum(a == b for a, b in pairs) / n
    count_a = Counter(a for a, _ in pairs)
    count_b = Counter(b for _, b in pairs)
    expected = sum(count_a[k] * count_b[k] for k in count_a) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1.0 - expected)


def confusion_matrix(pairs: Sequence[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """Counts of (A label -> B label), every label as row and column."""
    labels = sorted({x for pair in pairs for x in pair})
    matrix = {a: dict.fromkeys(labels, 0) for a in labels}
    for a, b in pairs:
        matrix[a][b] += 1
    return matrix


def _stats(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    n = len(pairs)
    kappa = cohen_kappa(pairs)
    return {
        "n": n,
        "agreement": round(100.0 * sum(a == b for a, b in pairs) / n, 2) if n else None,
        "kappa": None if kappa is None else round(kappa, 4),
    }


def agreement(a: Labels, b: Labels) -> dict[str, Any]:
    """Overall and per-question agreement %, kappa, confusion matrix, per-tag breakdown."""
    shared = sorted(set(a.outcomes) & set(b.outcomes))
    if not shared:
        raise AgreeInputError(f"{a.source} and {b.source} share no (item, question) label")
    pairs = [(a.outcomes[k], b.outcomes[k]) for k in shared]
    by_question: dict[str, list[tuple[str, str]]] = defaultdict(list)
    by_tag: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for key, pair in zip(shared, pairs, strict=True):
        by_question[key[1]].append(pair)
        for tag, value in (a.tags.get(key[0]) or b.tags.get(key[0]) or {}).items():
            by_tag[tag][value].append(pair)
    return {
        "a": a.source,
        "b": b.source,
        **_stats(pairs),
        "only_in_a": len(set(a.outcomes) - set(b.outcomes)),
        "only_in_b": len(set(b.outcomes) - set(a.outcomes)),
        "confusion": confusion_matrix(pairs),
        "per_question": {q: _stats(p) for q, p in sorted(by_question.items())},
        "per_tag": {
            tag: {value: _stats(p) for value, p in sorted(groups.items())}
            for tag, groups in sorted(by_tag.items())
        },
    }


def rank_correlation(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """Spearman's rho and Kendall's tau-b (scipy), with p-values and n."""
    if len(x) != len(y):
        raise ValueError(f"need paired values, got {len(x)} and {len(y)}")
    if len(x) < 3:
        raise ValueError(f"need at least 3 pairs for a rank correlation, got {len(x)}")
    rho = stats.spearmanr(x, y)
    tau = stats.kendalltau(x, y)
    return {
        "spearman": float(rho.statistic),
        "spearman_p": float(rho.pvalue),
        "kendall": float(tau.statistic),
        "kendall_p": float(tau.pvalue),
        "n": len(x),
    }


def correlate_scores(scores: dict[str, float], ratings: dict[str, float]) -> dict[str, Any]:
    """Rank correlation over the items both sides have."""
    shared = sorted(set(scores) & set(ratings))
    if not shared:
        raise AgreeInputError("the scores and the ratings share no item id")
    out = rank_correlation([scores[i] for i in shared], [ratings[i] for i in shared])
    out["only_in_scores"] = len(set(scores) - set(ratings))
    out["only_in_ratings"] = len(set(ratings) - set(scores))
    return out


def stability(runs: Sequence[Labels]) -> dict[str, Any]:
    """Per-item score variance across repeated runs (sample variance), and the run means."""
    if len(runs) < 3:
        raise ValueError(f"stability needs at least 3 runs, got {len(runs)}")
    items = sorted(set.intersection(*(set(r.scores) for r in runs)))
    if not items:
        raise AgreeInputError("the runs share no scored item")
    per_item = {i: variance([r.scores[i] for r in runs]) for i in items}
    means = [fmean(r.scores[i] for i in items) for r in runs]
    return {
        "runs": [r.source for r in runs],
        "items": len(items),
        "run_means": [round(m, 4) for m in means],
        "run_mean_std": round(math.sqrt(variance(means)), 4),
        "item_variance_mean": round(fmean(per_item.values()), 6),
        "item_variance_max": round(max(per_item.values()), 6),
        "items_that_vary": sum(v > 0 for v in per_item.values()),
    }


def _item_score(result: ItemResult, key: str | None) -> float | None:
    keys = [key] if key else list(SCORE_KEYS)
    for k in keys:
        value = result.scores.get(k)
        if value is not None:
            return float(value)
    return None


def labels_from_results(
    results: Iterable[ItemResult], source: str, score_key: str | None = None
) -> Labels:
    """Labels from item results: one outcome per decision, one score per scored item."""
    labels = Labels(source)
    for r in results:
        labels.tags[r.item_id] = dict(r.tags)
        for d in r.decisions:
            labels.outcomes[(r.item_id, d.question_id)] = d.outcome
        score = _item_score(r, score_key) if r.status == "scored" else None
        if score is not None:
            labels.scores[r.item_id] = score
    return labels


def load_labels(path: Path, score_key: str | None = None) -> Labels:
    """A run folder or a label JSONL (``item``, ``question``, ``outcome``; ``tags``/``score``)."""
    path = Path(path)
    if path.is_dir():
        if not (path / "results.jsonl").is_file():
            raise AgreeInputError(f"{path}: a run folder needs results.jsonl")
        return labels_from_results(RunStore(path).results(), str(path), score_key)
    labels = Labels(str(path))
    for number, row in enumerate(_jsonl(path), start=1):
        where = f"{path}:{number}"
        item = row.get("item")
        if item is None:
            raise AgreeInputError(f"{where}: missing field 'item'")
        item = str(item)
        if "question" in row:
            if "outcome" not in row:
                raise AgreeInputError(f"{where}: a row with 'question' needs 'outcome'")
            labels.outcomes[(item, str(row["question"]))] = str(row["outcome"])
        if isinstance(row.get("tags"), dict):
            labels.tags[item] = {str(k): str(v) for k, v in row["tags"].items()}
        if row.get("score") is not None:
            labels.scores[item] = _number(row["score"], f"{where}: field 'score'")
    return labels


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    return (row for _, row in iter_jsonl(path, AgreeInputError))


def _number(value: Any, where: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise AgreeInputError(f"{where}: expected a number, got {value!r}") from exc
    if math.isnan(number):
        raise AgreeInputError(f"{where}: expected a number, got NaN")
    return number


def table_rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(row id, row) pairs from a CSV, a JSON object keyed by id, a JSON list or a JSONL."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            rows: list[dict[str, Any]] = list(csv.DictReader(handle))
        return [(str(i), r) for i, r in enumerate(rows)]
    if path.suffix.lower() == ".jsonl":
        return [(str(i), r) for i, r in enumerate(_jsonl(path))]
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise AgreeInputError(f"{path}: cannot read JSON: {exc}") from exc
    if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()):
        return [(str(k), v) for k, v in data.items()]
    if isinstance(data, list) and all(isinstance(v, dict) for v in data):
        return [(str(i), v) for i, v in enumerate(data)]
    raise AgreeInputError(
        f"{path}: expected an object of records keyed by id, or a list of records"
    )


def load_ratings(path: Path, column: str, id_column: str | None = None) -> dict[str, float]:
    """Item id -> numeric ``column``; ids from ``id_column``, else ``item``/``id``, else the key.

    Several rows for one id (several raters) are averaged.
    """
    values: dict[str, list[float]] = defaultdict(list)
    for key, row in table_rows(path):
        if column not in row:
            raise AgreeInputError(f"{path}: row {key} has no column {column!r}")
        ident = _row_id(row, key, id_column, path)
        values[ident].append(_number(row[column], f"{path}: row {key}, column {column!r}"))
    return {k: fmean(v) for k, v in values.items()}


def _row_id(row: dict[str, Any], key: str, id_column: str | None, path: Path) -> str:
    if id_column is not None:
        if id_column not in row:
            raise AgreeInputError(f"{path}: row {key} has no id column {id_column!r}")
        return str(row[id_column])
    for name in ("item", "id", "item_id"):
        if name in row:
            return str(row[name])
    return key


def _repeat_index(config: dict[str, Any]) -> int:
    for key in ("repeat_index", "repeat"):
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def repeat_warnings(paths: Sequence[Path]) -> list[str]:
    """Why repeated runs may show no variance: they replayed the same cached judge replies.

    Run folders with the same judge, model and parameters and the same repeat
    index (run.json ``repeat_index``; 0 when absent) share cache keys: when any
    of them answered calls from the cache (usage.jsonl ``cached_calls``), their
    decisions repeat one another. Cassette replays are named as well.
    """
    warnings: list[str] = []
    groups: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for path in paths:
        store = RunStore(Path(path))
        if not store.config_path.is_file():
            continue
        try:
            config = store.config()
            usages = store.usages() if store.usage_path.is_file() else []
        except (OSError, ValueError):
            continue
        spec = str(config.get("judge", ""))
        if spec.startswith("replay:"):
            warnings.append(f"{path}: judge {spec} replays recorded replies, so it cannot vary")
        judge = json.dumps([spec, config.get("model"), config.get("parameters")], sort_keys=True)
        calls = sum(u.usage.calls for u in usages)
        cached = sum(u.usage.cached_calls for u in usages)
        groups[f"{judge}|{_repeat_index(config)}"].append((str(path), calls, cached))
    for key, members in sorted(groups.items()):
        if len(members) < 2 or not any(cached for _, _, cached in members):
            continue
        shares = "; ".join(f"{p}: {c} of {n + c} replies from the cache" for p, n, c in members)
        warnings.append(
            f"runs with the same judge and repeat index {key.rsplit('|', 1)[1]} reused cached "
            f"replies ({shares}): their decisions repeat one another, so the variance is not "
            "the judge's; grade repeats with `groundeval run --repeat-index K` (K = 1, 2, ...)"
        )
    return warnings
