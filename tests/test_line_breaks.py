"""Every Unicode line break in every stored text: the run folder stays readable.

JSON leaves U+0085, U+2028 and U+2029 raw inside strings and escapes the rest;
``str.splitlines`` splits on all of them. A fuzz run puts the whole set into the
judge's reasons, the prompt, the instructions, tags, question texts, override
notes and authors, then checks run -> resume -> report -> rescore all work and
give every text back unchanged.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundeval.judges import ScriptedJudge, wrap_judge
from groundeval.judges._cassette import ReplayJudge, read_cassette
from groundeval.judges._protocol import JudgeCall
from groundeval.programs._loaders import load_program_files
from groundeval.programs._rescore import load_overrides, read_override_archive, rescore_run
from groundeval.programs._run import items_from_manifest, run_items
from groundeval.state._store import RunStore, iter_jsonl, jsonl_lines
from groundeval.state.report import write_report
from tests._support.paths import write_image

BREAKS = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Everything ``str.splitlines`` splits on."""

_piece = st.text(alphabet=st.sampled_from([*BREAKS, "a", "é", " ", '"', "\\", "{", "}"]))
TEXT = st.builds(lambda a, b, c: a + b + c, _piece, st.sampled_from(BREAKS), _piece)
"""Text with at least one line break somewhere."""


def test_jsonl_lines_split_on_newline_only() -> None:
    text = "".join(json.dumps({"t": f"x{b}y"}, ensure_ascii=False) + "\n" for b in BREAKS)
    assert len(text.splitlines()) > len(BREAKS)  # what broke run folders before
    assert len(jsonl_lines(text)) == len(BREAKS)
    assert jsonl_lines("a\nb") == ["a\n", "b"]  # a torn last line is kept, without "\n"


def _judge(reason: str, answered: set[str]) -> ScriptedJudge:
    def reply(call: JudgeCall) -> str:
        answers = [
            {"id": q.id, "result": True, "reason": f"{reason} ({q.id})"}
            for q in call.questions
            if q.id in answered
        ]
        return json.dumps({"answers": answers}, ensure_ascii=False)

    return ScriptedJudge(on_call=reply)


def _program(texts: dict[str, str]) -> dict[str, object]:
    ground = {
        "helper": "boxes",
        "proposer": "test.boxes",
        "verifier": "test.accept",
        "params": {"boxes": [[2, 2, 9, 9, {"label": texts["label"]}]]},
    }
    return {
        "id": "p1",
        "prompt": texts["prompt"],
        "instructions": texts["instructions"],
        "tags": {"axis": texts["tag"], texts["tag"]: "v"},
        "gates": [{"id": "g1", "ask": texts["ask"]}],
        "hard": [
            {"id": "h1", "ask": texts["ask"], "ground": ground, "check": "count(elements) == 1"},
            {"id": "h2", "ask": texts["ask"] + "?", "requires": ["h1"]},
            {"id": "h3", "ask": "shadow?"},
        ],
    }


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    reason=TEXT,
    prompt=TEXT,
    instructions=TEXT,
    tag=TEXT,
    ask=TEXT,
    label=TEXT,
    note=TEXT,
    author=TEXT,
)
def test_line_breaks_in_every_stored_text_round_trip(
    reason: str,
    prompt: str,
    instructions: str,
    tag: str,
    ask: str,
    label: str,
    note: str,
    author: str,
) -> None:
    import tests._support.fixtures  # noqa: F401  (test.boxes / test.accept)

    texts = {
        "prompt": prompt,
        "instructions": instructions,
        "tag": tag,
        "ask": ask,
        "label": label,
    }
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        programs_file = tmp / "programs.jsonl"
        programs_file.write_text(
            json.dumps(_program(texts), ensure_ascii=False) + "\n", encoding="utf-8"
        )
        programs = load_program_files([programs_file])
        assert programs[0].prompt == prompt and programs[0].tags["axis"] == tag
        write_image(tmp / "a.png", 20, 12)
        manifest = tmp / "items.jsonl"
        manifest.write_text(json.dumps({"id": "i1", "program": "p1", "images": ["a.png"]}) + "\n")
        items = items_from_manifest(programs, manifest)
        run = tmp / "run"
        cassette = tmp / "calls.jsonl"

        # 1. run: h3 unanswered (an error), the calls recorded to a cassette
        judge = wrap_judge(_judge(reason, {"g1", "h2"}), record=cassette)
        asyncio.run(run_items(items, judge=judge, out=run))
        raw = (run / "results.jsonl").read_text(encoding="utf-8")
        assert len(jsonl_lines(raw)) == 1
        result = RunStore(run).results()[0]
        by_id = {d.question_id: d for d in result.decisions}
        assert by_id["g1"].reason == f"{reason} (g1)" and by_id["h3"].outcome == "error"
        assert result.tags == {"axis": tag, tag: "v"}
        state = RunStore(run).read_state(str(by_id["h1"].state_file))
        assert state.elements[0].fields["label"] == label
        recorded = [json.loads(e["text"]) for e in read_cassette(cassette)]
        assert f"{reason} (g1)" in {a["reason"] for r in recorded for a in r["answers"]}

        # 2. resume asks only the error, from a replay of the cassette plus a new answer
        replay = ReplayJudge(cassette)
        assert replay.path == cassette
        second = _judge(reason, {"h3"})
        asyncio.run(run_items(items, judge=second, out=run, resume=True))
        assert [q.id for c in second.calls for q in c.questions] == ["h3"]
        result = RunStore(run).results()[0]
        assert result.status == "scored"
        assert {d.question_id: d.reason for d in result.decisions}["h3"] == f"{reason} (h3)"

        # 3. report
        index = write_report([run])
        assert index.is_file() and len(list((index.parent / "items").glob("*.html"))) == 1

        # 4. rescore with an override whose note and author hold line breaks
        overrides = tmp / "audit.jsonl"
        row = {"item": "i1", "question": "h2", "outcome": "fail", "note": note, "author": author}
        overrides.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
        assert load_overrides(overrides)[("i1", "h2")].note == note
        rescore_run(run, overrides)
        h2 = next(d for d in RunStore(run).results()[0].decisions if d.question_id == "h2")
        assert (h2.note, h2.author, h2.outcome) == (note, author, "fail")
        archive = read_override_archive(RunStore(run))
        assert [(a.note, a.author) for a in archive] == [(note, author)]
        before = {n: (run / n).read_bytes() for n in ("results.jsonl", "summary.json")}
        rescore_run(run)
        assert {n: (run / n).read_bytes() for n in before} == before
        write_report([run])

        # every JSONL file of the folder reads back line for line
        for path in run.glob("*.jsonl"):
            rows = [r for _, r in iter_jsonl(path)]
            assert len(rows) == len(jsonl_lines(path.read_text(encoding="utf-8")))
