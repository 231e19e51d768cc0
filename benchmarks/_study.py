"""The human-agreement study: sample decisions, annotate them in a static page, measure agreement.

``sample_study`` draws a stratified, seeded sample of a run's decisions and writes
a self-contained folder: ``index.html`` (opens from file://, no network), the
images and overlays it shows, ``data/tasks.js`` (questions only: no outcome, no
answer), ``study.json`` (what was sampled) and, when reference questions are
mixed in, ``reference_key.json`` (their answers: keep it out of raters' copies).
Raters export ``labels-<name>.jsonl``; ``study_agreement`` scores them.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

from groundeval.benchmarks._agree import AgreeInputError, cohen_kappa, confusion_matrix
from groundeval.programs import load_run_programs
from groundeval.programs.stats import DEFAULT_RESAMPLES, percentile_interval
from groundeval.state import ItemResult, RunStore, RunStoreError, atomic_write, iter_jsonl

STUDY_VERSION = 1
LABELS = ("yes", "no", "cannot_tell")
TO_OUTCOME = {"yes": "pass", "no": "fail"}
MIN_REFERENCE_ACCURACY = 0.8
"""Raters below this share of right answers on the reference questions are flagged."""
STATIC = ("storage.js", "study.js", "study.css")


@dataclass(frozen=True)
class Task:
    """One question shown to raters."""

    task: str
    ask: str
    image: str | None
    overlay: str | None
    item: str = ""
    question: str = ""
    stratum: tuple[tuple[str, str], ...] = ()
    answer: str | None = None
    """Reference questions only: the right answer (never written to the page)."""


def _stratum_value(result: ItemResult, decision: Any, key: str) -> str:
    if key == "outcome":
        return str(decision.outcome)
    if key in ("question", "source", "kind"):
        return str(getattr(decision, "question_id" if key == "question" else key))
    if key == "protocol":
        return result.scoring
    return result.tags.get(key, "")


def allocate(sizes: dict[Any, int], n: int) -> dict[Any, int]:
    """Proportional allocation of ``n`` over strata (largest remainder), at least 1 each.

    >>> allocate({"a": 90, "b": 10}, 10)
    {'a': 9, 'b': 1}
    """
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    floor_one = n >= len(sizes)
    raw = {k: n * v / total for k, v in sizes.items()}
    out = {k: min(sizes[k], max(1 if floor_one else 0, math.floor(r))) for k, r in raw.items()}
    order = sorted(sizes, key=lambda k: (-(raw[k] - math.floor(raw[k])), str(k)))
    while sum(out.values()) < n:
        grew = False
        for k in order:
            if sum(out.values()) < n and out[k] < sizes[k]:
                out[k] += 1
                grew = True
        if not grew:
            break
    while sum(out.values()) > n:  # the floor of 1 can overshoot: take from the largest
        k = max(out, key=lambda s: (out[s], str(s)))
        out[k] -= 1
    return out


def _copy_media(source: Path | None, media: Path, study: Path) -> str | None:
    if source is None or not source.is_file():
        return None
    data = source.read_bytes()
    name = hashlib.sha256(data).hexdigest()[:20] + source.suffix.lower()
    target = media / name
    if not target.exists():
        media.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return target.relative_to(study).as_posix()


def _image_path(run: Path, text: str) -> Path | None:
    path = Path(text)
    for candidate in [path] if path.is_absolute() else [run / path, Path.cwd() / path]:
        if candidate.is_file():
            return candidate
    return None


def _population(store: RunStore) -> list[tuple[ItemResult, Any]]:
    return [
        (r, d)
        for r in sorted(store.results(), key=lambda r: r.item_id)
        for d in r.decisions
        if d.source not in ("skipped", "human")
    ]


def _run_task(
    store: RunStore,
    programs: dict[str, Any],
    pair: tuple[ItemResult, Any],
    keys: Sequence[str],
    media: Path,
    out: Path,
) -> Task:
    result, d = pair
    overlay: Path | None = None
    program = programs.get(result.program_id)
    index = program.grounded_image_index(d.question_id) if program else 0
    program = programs.get(result.program_id)
    asks = {q.id: q.ask for q in program.questions} if program else {}
    if d.state_file:
        try:
            state = store.read_state(d.state_file)
        except RunStoreError:
            state = None
        if state is not None:
            last = next((r.overlay for r in reversed(state.rounds) if r.overlay), None)
            overlay = store.root / last if last else None
    image_text = result.images[index] if index < len(result.images) else None
    return Task(
        task="",
        ask=asks.get(d.question_id) or d.question_id,
        image=_copy_media(_image_path(store.root, image_text), media, out) if image_text else None,
        overlay=_copy_media(overlay, media, out),
        item=result.item_id,
        question=d.question_id,
        stratum=tuple((k, _stratum_value(result, d, k)) for k in keys),
    )


def load_reference(path: Path) -> list[dict[str, Any]]:
    """Reference questions: JSONL rows ``{"id", "image", "question", "answer": yes|no}``.

    ``image`` (and an optional ``overlay``) are paths relative to the file.
    """
    rows = []
    for number, row in iter_jsonl(Path(path), AgreeInputError):
        where = f"{path}:{number}"
        for name in ("id", "image", "question", "answer"):
            if not isinstance(row.get(name), str) or not row[name]:
                raise AgreeInputError(f"{where}: field {name!r} must be a non-empty string")
        if row["answer"] not in ("yes", "no"):
            raise AgreeInputError(
                f"{where}: field 'answer' must be yes or no, got {row['answer']!r}"
            )
        image = Path(path).parent / row["image"]
        if not image.is_file():
            raise AgreeInputError(f"{where}: field 'image': no file {image}")
        rows.append(row)
    if not rows:
        raise AgreeInputError(f"{path}: no reference question")
    return rows


def sample_study(
    run: Path,
    out: Path,
    *,
    n: int = 365,
    stratify: Sequence[str] = ("axis", "outcome"),
    seed: int = 0,
    reference: Path | None = None,
) -> dict[str, Any]:
    """Draw the sample and write the annotation folder; returns what study.json holds."""
    store = RunStore(Path(run))
    if not store.results_path.is_file():
        raise AgreeInputError(f"{run}: not a run folder (no results.jsonl)")
    if n < 1:
        raise AgreeInputError(f"--n must be at least 1, got {n}")
    out = Path(out)
    if out.exists() and any(out.iterdir()) and not (out / "study.json").is_file():
        raise AgreeInputError(
            f"{out}: folder is not empty and holds no study; choose another --out"
        )
    refs = load_reference(reference) if reference else []
    population = _population(store)
    if not population:
        raise AgreeInputError(f"{run}: no judge or check decision to sample")
    builtin = ("outcome", "question", "source", "kind", "protocol")
    for name in stratify:
        if name not in builtin and not any(name in r.tags for r, _ in population):
            raise AgreeInputError(
                f"--stratify {name!r}: no item of {run} has that tag and it is none of "
                f"{', '.join(builtin)}"
            )
    programs = load_run_programs(store)
    strata: dict[tuple[str, ...], list[int]] = defaultdict(list)
    for i, (r, d) in enumerate(population):
        strata[tuple(_stratum_value(r, d, k) for k in stratify)].append(i)
    counts = allocate({k: len(v) for k, v in strata.items()}, n)
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for key in sorted(strata):
        members = strata[key]
        picked = rng.choice(len(members), size=counts[key], replace=False)
        chosen += [members[int(j)] for j in sorted(picked)]
    for sub in ("media", "data", "static"):
        shutil.rmtree(out / sub, ignore_errors=True)
    media = out / "media"
    tasks = [_run_task(store, programs, population[i], stratify, media, out) for i in chosen]
    for row in refs:
        base = Path(reference or ".").parent
        overlay = base / row["overlay"] if row.get("overlay") else None
        tasks.append(
            Task(
                "",
                row["question"],
                _copy_media(base / row["image"], media, out),
                _copy_media(overlay, media, out),
                answer=row["answer"],
                item=f"reference:{row['id']}",
            )
        )
    order = rng.permutation(len(tasks))
    tasks = [tasks[int(j)] for j in order]
    width = len(str(len(tasks)))
    tasks = [_with_id(t, f"t{k:0{width}d}") for k, t in enumerate(tasks, start=1)]
    study_id = hashlib.sha256(
        json.dumps(
            [
                str(Path(run).resolve()),
                seed,
                n,
                list(stratify),
                [t.item for t in tasks],
                [t.question for t in tasks],
            ]
        ).encode()
    ).hexdigest()[:12]
    meta = {
        "version": STUDY_VERSION,
        "study": study_id,
        "run": str(Path(run).resolve()),
        "seed": seed,
        "n": len(chosen),
        "asked_n": n,
        "population": len(population),
        "stratify": list(stratify),
        "strata": [
            {
                "stratum": dict(zip(stratify, k, strict=True)),
                "population": len(v),
                "sampled": counts[k],
            }
            for k, v in sorted(strata.items())
        ],
        "tasks": [
            {"task": t.task, "item": t.item, "question": t.question, "stratum": dict(t.stratum)}
            for t in tasks
            if t.answer is None
        ],
        "reference_tasks": [t.task for t in tasks if t.answer is not None],
    }
    atomic_write(out / "study.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    key_path = out / "reference_key.json"
    if refs:
        answers = {t.task: t.answer for t in tasks if t.answer is not None}
        atomic_write(key_path, json.dumps(answers, indent=2, sort_keys=True) + "\n")
    elif key_path.exists():
        key_path.unlink()
    _write_page(out, study_id, tasks)
    return meta


def _with_id(task: Task, ident: str) -> Task:
    return Task(
        ident,
        task.ask,
        task.image,
        task.overlay,
        task.item,
        task.question,
        task.stratum,
        task.answer,
    )


def _write_page(out: Path, study_id: str, tasks: list[Task]) -> None:
    package = resources.files("groundeval.state.report")
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(package / "templates")),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    (out / "static").mkdir(parents=True, exist_ok=True)
    for name in STATIC:
        (out / "static" / name).write_bytes((package / "static" / name).read_bytes())
    payload = {
        "study": study_id,
        "tasks": [
            {"task": t.task, "ask": t.ask, "image": t.image, "overlay": t.overlay} for t in tasks
        ],
    }
    data = json.dumps(payload, ensure_ascii=True, separators=(",", ":"))
    (out / "data").mkdir(parents=True, exist_ok=True)
    (out / "data" / "tasks.js").write_text(f"window.groundevalStudy({data});\n", encoding="ascii")
    page = env.get_template("study.html.j2").render(study=study_id, count=len(tasks))
    (out / "index.html").write_text(page, encoding="utf-8")


# ---------------------------------------------------------------------------- scoring labels


def is_label_file(path: Path) -> bool:
    """True for a label export of a study (first row has ``study``, ``task`` and ``label``)."""
    if not Path(path).is_file():
        return False
    try:
        for _, row in iter_jsonl(Path(path), AgreeInputError):
            return {"study", "task", "label"} <= set(row)
    except (AgreeInputError, OSError):
        return False
    return False


def _read_labels(paths: Sequence[Path], study: str, known: set[str]) -> dict[str, dict[str, str]]:
    """Rater -> task -> label (the last row of a rater for a task wins)."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for path in paths:
        for number, row in iter_jsonl(Path(path), AgreeInputError):
            where = f"{path}:{number}"
            if row.get("study") != study:
                raise AgreeInputError(
                    f"{where}: field 'study' is {row.get('study')!r}, the study folder is {study!r}"
                )
            if row.get("task") not in known:
                raise AgreeInputError(f"{where}: field 'task': unknown task {row.get('task')!r}")
            if row.get("label") not in LABELS:
                raise AgreeInputError(
                    f"{where}: field 'label' must be one of {', '.join(LABELS)}, "
                    f"got {row.get('label')!r}"
                )
            rater = row.get("rater")
            if not isinstance(rater, str) or not rater.strip():
                raise AgreeInputError(f"{where}: field 'rater' must name the rater")
            out[rater.strip()][row["task"]] = row["label"]
    if not out:
        raise AgreeInputError("the label files hold no label")
    return dict(out)


def _majority(labels: list[str]) -> str:
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    return counts[0][0]


def kappa_interval(
    pairs: Sequence[tuple[str, str]], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> list[float] | None:
    """Percentile bootstrap interval of Cohen's kappa (pairs resampled as multinomial counts)."""
    if len(pairs) < 2:
        return None
    cells = sorted(set(pairs))
    counts = np.array([sum(p == c for p in pairs) for c in cells], dtype=np.float64)
    labels = sorted({x for c in cells for x in c})
    rows = np.array([[c[0] == lab for lab in labels] for c in cells], dtype=np.float64)
    cols = np.array([[c[1] == lab for lab in labels] for c in cells], dtype=np.float64)
    same = np.array([c[0] == c[1] for c in cells], dtype=np.float64)
    n = len(pairs)
    draws = np.random.default_rng(seed).multinomial(n, counts / n, size=resamples) / n
    observed = draws @ same
    expected = np.sum((draws @ rows) * (draws @ cols), axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappas = np.where(expected < 1 - 1e-12, (observed - expected) / (1 - expected), np.nan)
    return percentile_interval(kappas)


def _agreement(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    kappa = cohen_kappa(pairs)
    return {
        "n": len(pairs),
        "agreement": round(100.0 * sum(a == b for a, b in pairs) / len(pairs), 2)
        if pairs
        else None,
        "kappa": None if kappa is None else round(kappa, 4),
    }


def study_agreement(
    run: Path,
    label_paths: Sequence[Path],
    *,
    min_reference_accuracy: float = MIN_REFERENCE_ACCURACY,
    keep_flagged: bool = False,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict[str, Any]:
    """Agreement of a run's decisions with the study's human labels.

    Each sampled decision gets the majority label of the raters not flagged on
    the reference questions (a tie is no label). Agreement and kappa count
    decisions the run passed or failed and humans answered yes or no; the
    confusion matrix shows every outcome against every human answer.
    """
    folder = Path(label_paths[0]).parent
    meta_path = folder / "study.json"
    if not meta_path.is_file():
        raise AgreeInputError(f"{folder}: no study.json beside the label file {label_paths[0]}")
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    key_path = folder / "reference_key.json"
    key: dict[str, str] = json.loads(key_path.read_text()) if key_path.is_file() else {}
    tasks = {t["task"]: t for t in meta["tasks"]}
    labels = _read_labels(label_paths, meta["study"], set(tasks) | set(key))
    store = RunStore(Path(run))
    if not store.results_path.is_file():
        raise AgreeInputError(f"{run}: not a run folder (no results.jsonl)")
    decided = {(r.item_id, d.question_id): d.outcome for r in store.results() for d in r.decisions}
    missing = [t for t in tasks.values() if (t["item"], t["question"]) not in decided]
    if missing:
        raise AgreeInputError(
            f"{run}: {len(missing)} sampled decision(s) are not in this run (first: item "
            f"{missing[0]['item']!r}, question {missing[0]['question']!r}); give the sampled run"
        )
    raters: dict[str, Any] = {}
    flagged: list[str] = []
    for rater, given in sorted(labels.items()):
        asked = [t for t in key if t in given]
        right = sum(given[t] == key[t] for t in asked)
        accuracy = round(right / len(asked), 4) if asked else None
        is_flagged = bool(key) and (accuracy is None or accuracy < min_reference_accuracy)
        pairs: list[tuple[str, str]] = [
            (TO_OUTCOME[given[t]], decided[(v["item"], v["question"])])
            for t, v in tasks.items()
            if t in given and given[t] in TO_OUTCOME
        ]
        pairs = [(h, o) for h, o in pairs if o in ("pass", "fail")]
        raters[rater] = {
            "labels": len(given),
            "reference_answered": len(asked),
            "reference_accuracy": accuracy,
            "flagged": is_flagged,
            "agreement_with_run": _agreement(pairs),
        }
        if is_flagged:
            flagged.append(rater)
    used = [r for r in labels if keep_flagged or r not in flagged]
    confusion: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys([*LABELS, "tie"], 0))
    pairs_all: list[tuple[str, str]] = []
    per_group: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    unlabelled = 0
    for t, v in sorted(tasks.items()):
        votes = [labels[r][t] for r in used if t in labels[r]]
        if not votes:
            unlabelled += 1
            continue
        human = _majority(votes)
        outcome = decided[(v["item"], v["question"])]
        confusion[outcome][human] += 1
        if human in TO_OUTCOME and outcome in ("pass", "fail"):
            pair = (outcome, TO_OUTCOME[human])
            pairs_all.append(pair)
            for name, value in v["stratum"].items():
                if name != "outcome":
                    for part in value.split(",") if name == "axis" else [value]:
                        per_group[name][part.strip()].append(pair)
    overall = _agreement(pairs_all)
    overall["kappa_ci95"] = (
        None
        if overall["kappa"] is None
        else kappa_interval(pairs_all, resamples=resamples, seed=seed)
    )
    return {
        "study": meta["study"],
        "run": str(run),
        **overall,
        "confusion": {"rows": "run outcome", "columns": "human label", **dict(confusion)},
        "confusion_pass_fail": confusion_matrix(pairs_all),
        "per_group": {
            name: {g: _agreement(p) for g, p in sorted(groups.items())}
            for name, groups in sorted(per_group.items())
        },
        "raters": raters,
        "flagged_raters": flagged,
        "flag_threshold": min_reference_accuracy if key else None,
        "raters_used": sorted(used),
        "sampled": len(tasks),
        "unlabelled": unlabelled,
        "note": "agreement and kappa over decisions the run passed or failed and the raters' "
        "majority answered yes or no",
    }
