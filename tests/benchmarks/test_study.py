"""The human-agreement study: sampling, the static annotation page, scoring raters' labels.

The run is graded by the real runner (tests/_support/stats_runs.py). The page is driven in
headless Chromium (Debian's package, as in tests/test_report_browser.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from groundeval.benchmarks._agree import AgreeInputError, cohen_kappa
from groundeval.benchmarks._study import (
    allocate,
    kappa_interval,
    sample_study,
    study_agreement,
)
from groundeval.programs.cli import app
from groundeval.state._store import RunStore
from tests._support import stats_runs as S

COUNTS = [2, 1, 2, 3, 2, 2, 0, 2, 2, 1, 2, 2, 2, 2, 1, 2, 2, 2, 0, 2, 2]
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    return S.grade(tmp / "run", COUNTS, {"item-003": False, "item-007": False})


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reference")
    S.stripes_image(folder / "two.png", 2)
    S.stripes_image(folder / "three.png", 3)
    rows = [
        {"id": "r1", "image": "two.png", "question": "Are there two stripes?", "answer": "yes"},
        {"id": "r2", "image": "three.png", "question": "Are there two stripes?", "answer": "no"},
    ]
    path = folder / "reference.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def study(run: Path, reference: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("s") / "study"
    sample_study(run, out, n=12, stratify=("axis", "outcome"), seed=4, reference=reference)
    return out


def _outcomes(run: Path) -> dict[tuple[str, str], str]:
    return {
        (r.item_id, d.question_id): d.outcome for r in RunStore(run).results() for d in r.decisions
    }


def _labels(study: Path, rater: str, answer: Any) -> Path:
    meta = json.loads((study / "study.json").read_text())
    key = json.loads((study / "reference_key.json").read_text())
    rows = [
        {"study": meta["study"], "task": t["task"], "rater": rater, "label": answer(t)}
        for t in meta["tasks"]
    ]
    rows += [
        {"study": meta["study"], "task": task, "rater": rater, "label": answer(task, right)}
        for task, right in key.items()
    ]
    path = study / f"labels-{rater}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_allocation_is_proportional_with_one_per_stratum() -> None:
    assert allocate({"a": 90, "b": 10}, 10) == {"a": 9, "b": 1}
    assert allocate({"a": 98, "b": 1, "c": 1}, 10) == {"a": 8, "b": 1, "c": 1}
    assert allocate({"a": 3, "b": 2}, 50) == {"a": 3, "b": 2}
    got = allocate({k: 10 + k for k in range(7)}, 365)
    assert sum(got.values()) == sum(10 + k for k in range(7))


def test_sample_is_stratified_seeded_and_blind(run: Path, study: Path) -> None:
    meta = json.loads((study / "study.json").read_text())
    outcomes = _outcomes(run)
    assert meta["n"] == 12 and len(meta["tasks"]) == 12 and len(meta["reference_tasks"]) == 2
    assert sum(s["sampled"] for s in meta["strata"]) == 12
    assert all(s["sampled"] >= 1 for s in meta["strata"])
    population = Counter(
        (r.tags["axis"], d.outcome) for r in RunStore(run).results() for d in r.decisions
    )
    for s in meta["strata"]:
        assert s["population"] == population[(s["stratum"]["axis"], s["stratum"]["outcome"])]
    for t in meta["tasks"]:
        assert t["stratum"]["outcome"] == outcomes[(t["item"], t["question"])]
    tasks_js = (study / "data" / "tasks.js").read_text()
    assert "outcome" not in tasks_js and "answer" not in tasks_js
    payload = json.loads(tasks_js.removeprefix("window.groundevalStudy(").rstrip(");\n"))
    assert len(payload["tasks"]) == 14
    for t in payload["tasks"]:
        assert (study / t["image"]).is_file()
        if t["overlay"]:
            assert (study / t["overlay"]).is_file()
    assert any(t["overlay"] for t in payload["tasks"])  # grounded questions show their overlay
    html = (study / "index.html").read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "http://" not in html and "https://" not in html
    again = study.parent / "again"
    sample_study(run, again, n=12, stratify=("axis", "outcome"), seed=4)
    same = json.loads((again / "study.json").read_text())
    pairs = {(t["item"], t["question"]) for t in meta["tasks"]}
    assert {(t["item"], t["question"]) for t in same["tasks"]} == pairs
    other = study.parent / "other"
    sample_study(run, other, n=12, stratify=("axis", "outcome"), seed=5)
    moved = json.loads((other / "study.json").read_text())
    assert {(t["item"], t["question"]) for t in moved["tasks"]} != pairs


def test_agreement_with_screened_raters(run: Path, study: Path) -> None:
    outcomes = _outcomes(run)
    meta = json.loads((study / "study.json").read_text())
    by_task = {t["task"]: outcomes[(t["item"], t["question"])] for t in meta["tasks"]}
    flipped = sorted(t for t, o in by_task.items() if o == "pass")[:2]

    def ann(task: Any, right: str | None = None) -> str:
        if right is not None:
            return right
        o = by_task[task["task"]]
        if o not in ("pass", "fail"):
            return "cannot_tell"
        agree = task["task"] not in flipped
        return ("yes" if o == "pass" else "no") if agree else ("no" if o == "pass" else "yes")

    def bob(task: Any, right: str | None = None) -> str:
        return "no" if right == "yes" else "yes"  # wrong on both reference questions

    labels = [_labels(study, "ann", ann), _labels(study, "bob", bob)]
    out = study_agreement(run, labels, resamples=500)
    assert out["flagged_raters"] == ["bob"] and out["raters_used"] == ["ann"]
    assert out["raters"]["ann"]["reference_accuracy"] == 1.0
    assert out["raters"]["bob"]["reference_accuracy"] == 0.0
    decided = [t for t, o in by_task.items() if o in ("pass", "fail")]
    pairs = [
        (by_task[t], ("fail" if by_task[t] == "pass" else "pass") if t in flipped else by_task[t])
        for t in decided
    ]
    assert out["n"] == len(decided)
    assert out["agreement"] == round(100 * (len(decided) - 2) / len(decided), 2)
    assert out["kappa"] == round(cohen_kappa(pairs), 4)  # type: ignore[arg-type]
    low, high = out["kappa_ci95"]
    assert -1.0 <= low <= out["kappa"] <= high <= 1.0
    assert out["confusion_pass_fail"]["pass"]["fail"] == 2
    assert sum(out["per_group"]["axis"][a]["n"] for a in out["per_group"]["axis"]) == out["n"]
    kept = study_agreement(run, labels, keep_flagged=True, resamples=200)
    assert kept["raters_used"] == ["ann", "bob"]
    json.dumps(out, allow_nan=False)


def test_kappa_interval_brackets_kappa() -> None:
    pairs = [("y", "y")] * 40 + [("n", "n")] * 35 + [("y", "n")] * 15 + [("n", "y")] * 10
    kappa = cohen_kappa(pairs)
    interval = kappa_interval(pairs, resamples=2000)
    assert kappa is not None and interval is not None
    assert interval[0] < kappa < interval[1]
    # the normal-theory interval of this table is about kappa +- 0.19; the bootstrap is close
    assert 0.3 < interval[1] - interval[0] < 0.45
    assert kappa_interval([("y", "y")]) is None


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"task": "t999", "label": "yes"}, "field 'task': unknown task 't999'"),
        ({"label": "maybe"}, "field 'label' must be one of yes, no, cannot_tell"),
        ({"rater": ""}, "field 'rater' must name the rater"),
        ({"study": "other"}, "field 'study' is 'other'"),
    ],
)
def test_bad_labels_name_file_line_and_field(
    run: Path, study: Path, row: dict[str, Any], message: str
) -> None:
    meta = json.loads((study / "study.json").read_text())
    good = {"study": meta["study"], "task": meta["tasks"][0]["task"], "rater": "x", "label": "no"}
    path = study / "labels-bad.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(good | row) + "\n")
    with pytest.raises(AgreeInputError, match=f"labels-bad.jsonl:2: {message}"):
        study_agreement(run, [path])
    path.unlink()


def test_study_needs_the_sampled_run(study: Path, tmp_path: Path) -> None:
    other = S.grade(tmp_path / "other", COUNTS[:3])
    labels = _labels(study, "cy", lambda t, right=None: right or "yes")
    with pytest.raises(AgreeInputError, match=r"not in this run .* give the sampled run"):
        study_agreement(other, [labels])
    labels.unlink()


def test_study_cli(run: Path, reference: Path, tmp_path: Path) -> None:
    cli = CliRunner()
    out = tmp_path / "cli-study"
    res = cli.invoke(
        app,
        [
            "agree",
            "sample",
            str(run),
            "--n",
            "8",
            "--stratify",
            "outcome",
            "--seed",
            "2",
            "--out",
            str(out),
            "--reference",
            str(reference),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "sampled 8 of" in res.output and "without reference_key.json" in res.output
    labels = _labels(out, "dee", lambda t, right=None: right or "cannot_tell")
    res = cli.invoke(app, ["agree", str(run), str(labels), "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)["study"]
    assert data["n"] == 0 and data["agreement"] is None and data["kappa"] is None
    assert data["raters"]["dee"]["reference_accuracy"] == 1.0
    res = cli.invoke(app, ["agree", "sample", str(run)])
    assert res.exit_code == 1 and "--out STUDY" in res.output
    res = cli.invoke(
        app, ["agree", "sample", str(run), "--stratify", "colour", "--out", str(tmp_path / "x")]
    )
    assert res.exit_code == 1 and "--stratify 'colour': no item of" in res.output


def test_annotation_page_in_chromium(study: Path) -> None:
    """Answer with buttons and keys, export, and read the JSONL back; no network, no markup."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    meta = json.loads((study / "study.json").read_text())
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on(
            "request",
            lambda r: (
                None
                if r.url.startswith(("file:", "blob:", "data:"))
                else errors.append(f"network: {r.url}")
            ),
        )
        page.goto((study / "index.html").resolve().as_uri())
        page.wait_for_function("document.getElementById('task-id').textContent !== ''")
        first = page.inner_text("#task-id")
        page.click("button[data-label='yes']")
        page.keyboard.press("n")
        page.keyboard.press("c")
        assert "3 / 14 answered" in page.inner_text("#progress")
        for _ in range(14):  # the direct question's words hold "<dark>": shown as text
            if "<dark>" in page.inner_text("#question"):
                break
            page.keyboard.press("ArrowRight")
        assert "Is the background <dark>?" == page.inner_text("#question")
        assert page.eval_on_selector("#question", "e => e.children.length") == 0
        page.fill("#rater", "Eve <b>")
        with page.expect_download() as download:
            page.click("#export")
        text = Path(download.value.path()).read_text()
        context.close()
        browser.close()
    rows = [json.loads(line) for line in text.split("\n") if line]
    assert [r["label"] for r in rows if r["task"] == first] == ["yes"]
    assert sorted(r["label"] for r in rows) == ["cannot_tell", "no", "yes"]
    assert {r["rater"] for r in rows} == {"Eve <b>"}
    assert {r["study"] for r in rows} == {meta["study"]}
    assert not errors, errors
