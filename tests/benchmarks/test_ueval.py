from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from groundeval.benchmarks.ueval import UEvalDataError, load_ueval, ueval_items
from groundeval.judges import ScriptedJudge
from groundeval.programs._run import run_items
from tests._support.paths import write_image

ROWS = [
    {
        "id": "art_001",
        "prompt": "Draw a cat in two panels and explain its breed.",
        "task_type": "story",
        "question_type": "open",
        "image_rubrics": [
            {"criterion": "There are two panels.", "tags": ["layout"]},
            {"criterion": "Each panel shows the same cat.", "tags": ["consistency"]},
            {"criterion": "The cat is orange.", "tags": []},
        ],
        "text_rubrics": [
            {"criterion": "The text names a breed.", "tags": ["content"]},
            {"criterion": "The text is under 100 words.", "tags": "length"},
        ],
        "text_ref": "An orange tabby.",
        "image_ref": "ref/art_001.png",
    },
    {
        "id": "sci_002",
        "prompt": "Show the water cycle.",
        "task_type": "diagram",
        "question_type": "open",
        "image_rubrics": [{"criterion": "Arrows show evaporation.", "tags": []}],
        "text_rubrics": [],
        "text_ref": "",
        "image_ref": None,
    },
]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_loader_maps_published_fields(tmp_path: Path) -> None:
    programs = load_ueval(_write_jsonl(tmp_path / "ueval.jsonl", ROWS))
    art = programs[0]
    assert art.scoring == "rubric" and art.tags["task_type"] == "story"
    assert [q.id for q in art.hard] == ["i1", "i2", "i3", "t1", "t2"]
    assert [q.tags["modality"] for q in art.hard] == ["image"] * 3 + ["text"] * 2
    assert art.question("t2").tags["rubric_tags"] == "length"
    assert art.question("i1").ask == "There are two panels."


def test_parquet_export_loads_the_same(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "ueval.parquet"

    def listed(rubrics: list[dict]) -> list[dict]:
        return [
            dict(c, tags=[c["tags"]] if isinstance(c["tags"], str) else c["tags"]) for c in rubrics
        ]

    rows = [
        dict(r, image_ref=r["image_ref"] or "", text_rubrics=listed(r["text_rubrics"]))
        for r in ROWS
    ]
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert load_ueval(path) == load_ueval(_write_jsonl(tmp_path / "u.jsonl", ROWS))


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"id": None}, "missing field 'id'"),
        ({"id": "../etc"}, "not allowed"),
        ({"image_rubrics": [{"tags": []}], "text_rubrics": []}, r"image_rubrics\[1\] needs"),
        ({"image_rubrics": [], "text_rubrics": []}, "has no image_rubrics"),
        ({"text_rubrics": 5}, "expected a list"),
    ],
)
def test_bad_rows(tmp_path: Path, patch: dict, message: str) -> None:
    with pytest.raises(UEvalDataError, match=message) as info:
        load_ueval(_write_jsonl(tmp_path / "bad.jsonl", [ROWS[1], ROWS[0] | patch]))
    assert "row 2" in str(info.value)


def test_end_to_end_one_batched_call_per_answer(tmp_path: Path) -> None:
    programs = load_ueval(_write_jsonl(tmp_path / "ueval.jsonl", ROWS))
    write_image(tmp_path / "answers" / "art_1.png")
    write_image(tmp_path / "answers" / "art_2.png", colour=(200, 120, 0))
    write_image(tmp_path / "answers" / "sci.png")
    manifest = _write_jsonl(tmp_path / "answers" / "manifest.jsonl", [
        {"id": "art_001", "images": ["art_1.png", "art_2.png"], "answer": "A ginger tabby cat."},
        {"id": "sci_002", "images": ["sci.png"], "answer": "Water evaporates."},
    ])  # fmt: skip
    items = ueval_items(programs, manifest)
    table = {
        ("art_001", "i1"): True, ("art_001", "i2"): True, ("art_001", "i3"): False,
        ("art_001", "t1"): True, ("art_001", "t2"): False, ("sci_002", "i1"): True,
    }  # fmt: skip
    judge = ScriptedJudge(table)
    report = asyncio.run(run_items(items, judge=judge, out=tmp_path / "run"))
    assert len(judge.calls) == 2  # all criteria of an answer in one call
    art_call = next(c for c in judge.calls if c.item_id == "art_001")
    assert len(art_call.images) == 2 and len(art_call.questions) == 5
    assert "A ginger tabby cat." in art_call.prompt
    by_id = {r.item_id: r for r in report.results}
    assert by_id["art_001"].scores == pytest.approx({"score": 60.0, "image": 200 / 3, "text": 50.0})
    assert by_id["sci_002"].scores["text"] is None and by_id["sci_002"].scores["score"] == 100.0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["protocols"]["rubric"]
    assert summary["overall"]["score"] == 80.0 and summary["by_task"]["diagram"]["score"] == 100.0
    assert summary["overall"]["image"] == pytest.approx((200 / 3 + 100) / 2, abs=1e-4)


def test_undecided_criterion_makes_the_answer_an_error(tmp_path: Path) -> None:
    programs = load_ueval(_write_jsonl(tmp_path / "ueval.jsonl", ROWS[1:]))
    write_image(tmp_path / "sci.png")
    manifest = _write_jsonl(tmp_path / "m.jsonl", [{"id": "sci_002", "images": ["sci.png"]}])
    judge = ScriptedJudge({})  # answers nothing: re-asked once, then an error
    report = asyncio.run(
        run_items(ueval_items(programs, manifest), judge=judge, out=tmp_path / "r")
    )
    result = report.results[0]
    assert result.status == "error" and result.decisions[0].outcome == "error"
    assert result.scores["score"] is None
