from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from groundeval.programs.cli import app
from groundeval.state._store import RunStore, safe_name
from tests._support.paths import REPO, write_image

SLOW_MODULE = """
import tests._support.fixtures  # registers test.boxes / test.accept
"""


def _suite(tmp_path: Path, n: int, sleep: float = 0.0) -> tuple[Path, Path]:
    """n grounded programs decided by checks alone (no judge), with their images."""
    images = tmp_path / "images"
    lines = []
    for i in range(n):
        boxes = [
            [5 + 10 * k, 5, 12 + 10 * k, 12, {"pips": (i + k) % 6 + 1}] for k in range(1 + i % 4)
        ]
        ground = {
            "helper": "boxes",
            "proposer": "test.boxes",
            "verifier": "test.accept",
            "params": {"boxes": boxes, "sleep": sleep},
        }
        program = {
            "id": f"item-{i:03d}",
            "tags": {"axis": "quantity" if i % 2 else "spatial"},
            "gates": [
                {"id": "g1", "ask": "Any die?", "ground": ground, "check": "count(elements) >= 1"}
            ],
            "hard": [
                {"id": "h1", "ask": "Two dice?", "ground": ground, "check": "count(elements) == 2"},
                {
                    "id": "h2",
                    "ask": "Pips over 5?",
                    "uses": "h1",
                    "check": "sum(e.pips for e in elements) > 5",
                },
            ],
        }
        lines.append(json.dumps(program))
        write_image(images / f"item-{i:03d}.png", 60, 20)
    path = tmp_path / "programs.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path, images


def _run(*args: str) -> None:
    result = CliRunner().invoke(
        app, [*args, "--checks", str(REPO / "tests" / "_support" / "fixtures.py")]
    )
    assert result.exit_code == 0, result.output


def _cli(*args: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "from groundeval.programs.cli import main; main()",
        *args,
        "--checks",
        str(REPO / "tests" / "_support" / "fixtures.py"),
    ]


def test_run_writes_the_run_folder(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 6)
    out = tmp_path / "run"
    _run("run", str(programs), "--images", str(images), "--out", str(out))
    results = [json.loads(x) for x in (out / "results.jsonl").read_text().split("\n")[:-1]]
    assert [r["item_id"] for r in results] == [f"item-{i:03d}" for i in range(6)]
    assert (out / "run.json").exists() and (out / "summary.csv").exists()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == {"scored": 6, "withheld": 0, "error": 0, "pending": 0}
    first = RunStore(out).read_state(results[1]["decisions"][1]["state_file"])
    assert first.status == "grounded" and len(first.elements) == 2
    overlay = out / first.rounds[0].overlay
    assert overlay.read_bytes()[:4] == b"\x89PNG"


def test_resume_keeps_finished_items_and_redoes_errors(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 4)
    out = tmp_path / "run"
    broken = images / "item-002.png"
    good = broken.read_bytes()
    broken.write_bytes(b"")
    _run("run", str(programs), "--images", str(images), "--out", str(out))
    store = RunStore(out)
    assert {r.item_id: r.status for r in store.results()}["item-002"] == "error"
    broken.write_bytes(good)
    result = CliRunner().invoke(
        app, ["run", str(programs), "--images", str(images), "--out", str(out)]
    )
    assert result.exit_code == 1 and "--resume" in result.output
    _run("run", str(programs), "--images", str(images), "--out", str(out), "--resume")
    assert all(r.status == "scored" for r in store.results())
    assert len((out / "results.jsonl").read_text().split("\n")[:-1]) == 4


def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 40, sleep=0.03)
    whole, killed = tmp_path / "whole", tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    subprocess.run(
        _cli(
            "run", str(programs), "--images", str(images), "--out", str(whole), "--concurrency", "1"
        ),
        check=True,
        env=env,
        capture_output=True,
    )
    proc = subprocess.Popen(
        _cli(
            "run",
            str(programs),
            "--images",
            str(images),
            "--out",
            str(killed),
            "--concurrency",
            "1",
        ),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    results = killed / "results.jsonl"
    while time.monotonic() < deadline:
        if results.exists() and len(results.read_text().split("\n")[:-1]) >= 10:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = len(results.read_text().split("\n")[:-1])
    assert 10 <= partial < 40, partial
    assert not (killed / "summary.json").exists()
    subprocess.run(
        _cli(
            "run",
            str(programs),
            "--images",
            str(images),
            "--out",
            str(killed),
            "--concurrency",
            "1",
            "--resume",
        ),
        check=True,
        env=env,
        capture_output=True,
    )
    assert (killed / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    assert (killed / "summary.json").read_text() == (whole / "summary.json").read_text()


def test_torn_last_line_is_redone(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 3)
    out = tmp_path / "run"
    _run("run", str(programs), "--images", str(images), "--out", str(out))
    full = (out / "results.jsonl").read_bytes()
    lines = [line + b"\n" for line in full.split(b"\n")[:-1]]
    (out / "results.jsonl").write_bytes(b"".join(lines[:2]) + lines[2][:40])
    assert RunStore(out).finished_ids() == {"item-000", "item-001"}
    _run("run", str(programs), "--images", str(images), "--out", str(out), "--resume")
    assert (out / "results.jsonl").read_bytes() == full


def test_shards_merge_into_the_unsharded_run(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 12)
    whole = tmp_path / "whole"
    _run("run", str(programs), "--images", str(images), "--out", str(whole))
    shards = []
    for i in range(3):
        shard = tmp_path / f"shard{i}"
        _run(
            "run", str(programs), "--images", str(images), "--out", str(shard), "--shard", f"{i}/3"
        )
        shards.append(str(shard))
    sizes = [len((Path(s) / "results.jsonl").read_text().split("\n")[:-1]) for s in shards]
    assert sum(sizes) == 12 and all(sizes)
    merged = tmp_path / "merged"
    result = CliRunner().invoke(app, ["merge", str(merged), *shards])
    assert result.exit_code == 0, result.output
    assert (merged / "results.jsonl").read_bytes() == (whole / "results.jsonl").read_bytes()
    assert (merged / "summary.json").read_text() == (whole / "summary.json").read_text()


def test_rescore_is_byte_identical_and_applies_overrides(tmp_path: Path) -> None:
    programs, images = _suite(tmp_path, 5)
    out = tmp_path / "run"
    _run("run", str(programs), "--images", str(images), "--out", str(out))
    before = (out / "results.jsonl").read_bytes()
    summary = (out / "summary.json").read_bytes()
    _run("rescore", str(out))
    assert (out / "results.jsonl").read_bytes() == before
    assert (out / "summary.json").read_bytes() == summary
    overrides = tmp_path / "audit.jsonl"
    overrides.write_text(
        json.dumps(
            {
                "item": "item-000",
                "question": "h1",
                "outcome": "pass",
                "note": "the fifth die is half hidden",
                "author": "ana",
            }
        )
        + "\n"
    )
    _run("rescore", str(out), "--overrides", str(overrides))
    item = next(r for r in RunStore(out).results() if r.item_id == "item-000")
    h1 = next(d for d in item.decisions if d.question_id == "h1")
    assert h1.source == "human" and h1.outcome == "pass" and h1.author == "ana"
    assert (
        h1.original is not None and h1.original.outcome == "fail" and h1.original.source == "check"
    )
    # h1 now passes, h2 (1 pip) still fails: relaxed counts h1's mark, strict needs all marks
    assert item.scores["relaxed"] == 0.5
    assert item.scores["strict"] == 0.0


def test_ids_never_become_paths_unescaped() -> None:
    assert safe_name("../etc") == "%2E%2E%2Fetc"
    assert "/" not in safe_name("a/b") and safe_name("..") != ".."


@pytest.mark.parametrize("shard", ["3/3", "x", "1/0"])
def test_bad_shard_spec(tmp_path: Path, shard: str) -> None:
    programs, images = _suite(tmp_path, 1)
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(programs),
            "--images",
            str(images),
            "--out",
            str(tmp_path / "r"),
            "--shard",
            shard,
        ],
    )
    assert result.exit_code == 1 and "--shard" in result.output
