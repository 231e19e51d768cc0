"""summary.json is typed: every protocol's section and the run summary match their models.

The models check what is written (a protocol drifting from its model fails the
write) and what is read (a hand-damaged summary.json is an error naming the file
and the field), while sections other tools add at the top level are kept.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from groundeval.programs._run import read_run_summary, write_summary
from groundeval.programs.intervals import add_intervals
from groundeval.programs.scoring import get_protocol
from groundeval.state import (
    PROTOCOL_SUMMARIES,
    Decision,
    ItemResult,
    RunStore,
    RunStoreError,
    SummaryError,
    read_summary,
    validate_summary,
)
from groundeval.state._schemas import load_schema

STATUSES = ("scored", "scored", "scored", "withheld", "error", "pending")
SCORES = {
    "grounded": lambda i: {"strict": float(i % 2), "relaxed": (i % 4) / 4},
    "checklist": lambda i: {"easy": 0.8, "hard": (i % 5) / 5, "all": 0.6, "accuracy": 0.7},
    "rubric": lambda i: {"score": 25.0 * (i % 5), "image": 50.0, "text": 100.0 * (i % 2)},
    "dependency": lambda i: {"score": (i % 3) / 3},
}
TAGS = {
    "grounded": lambda i: {"axis": ("text", "spatial")[i % 2]},
    "checklist": lambda i: {
        "domain": ("slides", "poster")[i % 2],
        "dimension": ("layout", "text")[i % 3 % 2],
    },
    "rubric": lambda i: {"task_type": ("diagram", "art")[i % 2]},
    "dependency": lambda i: {"category": ("count", "color")[i % 2]},
}


def _results(protocol: str, n: int = 24) -> list[ItemResult]:
    out = []
    for i in range(n):
        status = STATUSES[i % len(STATUSES)]
        outcome = "pass" if status == "scored" else status
        scores = SCORES[protocol](i)
        out.append(
            ItemResult(
                item_id=f"{protocol}{i:02d}",
                program_id=f"{protocol}{i:02d}",
                scoring=protocol,
                tags=TAGS[protocol](i),
                status=status,  # type: ignore[arg-type]
                decisions=[
                    Decision(
                        question_id="q1",
                        kind="hard",
                        outcome=outcome,  # type: ignore[arg-type]
                        score=1.0 if outcome == "pass" else 0.0,
                        source="judge",
                        reason=f"{outcome} reason",
                    )
                ],
                scores=scores if status == "scored" else dict.fromkeys(scores),
            )
        )
    return out


def _section(protocol: str) -> dict[str, object]:
    results = _results(protocol)
    summary = get_protocol(protocol).summarize(results)
    return add_intervals(protocol, results, summary, {"ci_resamples": 200, "ci_seed": 1})


@pytest.mark.parametrize("protocol", sorted(PROTOCOL_SUMMARIES))
def test_every_builtin_section_matches_its_model(protocol: str) -> None:
    section = _section(protocol)
    model = PROTOCOL_SUMMARIES[protocol].model_validate(section)
    assert model.model_dump(mode="json", exclude_unset=True) == section  # nothing lost or coerced
    assert "ci" in section  # intervals were attached and are part of the model


@pytest.mark.parametrize("protocol", sorted(PROTOCOL_SUMMARIES))
def test_a_misspelt_key_in_a_section_is_refused(protocol: str) -> None:
    section = _section(protocol)
    section["overal"] = section.pop("ci")
    with pytest.raises(ValueError, match="overal"):
        PROTOCOL_SUMMARIES[protocol].model_validate(section)


def _run(tmp_path: Path) -> RunStore:
    store = RunStore(tmp_path / "run")
    store.root.mkdir()
    results = [r for p in sorted(SCORES) for r in _results(p)]
    write_summary(store, results)
    return store


def test_written_summary_reads_back_typed_and_matches_the_schema(tmp_path: Path) -> None:
    store = _run(tmp_path)
    path = store.root / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    jsonschema.validate(data, load_schema("summary"))
    summary = read_summary(path)
    # the typed summary writes back to the very same bytes (no int became a float)
    assert json.dumps(summary.as_json(), indent=2, sort_keys=True) + "\n" == path.read_text()
    assert summary.items == 96
    assert summary.status.error == data["status"]["error"] == 16
    assert summary.protocols.grounded is not None
    assert summary.protocols.grounded.overall.withheld == 4
    assert summary.protocols.dependency is not None
    assert summary.protocols.dependency.overall.in_mean == 12
    assert summary.problems.overall.pending_decisions == 16
    assert {r.outcome for r in summary.problems.reasons} == {"error", "withheld", "pending"}


def test_rewriting_keeps_the_bytes_and_carries_sections_added_by_other_tools(
    tmp_path: Path,
) -> None:
    store = _run(tmp_path)
    path = store.root / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["accuracy_vs_truth"] = {"clean": {"right": 1.0, "decisions": 3}}
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    before = path.read_bytes()
    write_summary(store, store.finalize([r for p in sorted(SCORES) for r in _results(p)]))
    assert path.read_bytes() == before
    assert read_run_summary(store).model_extra == {
        "accuracy_vs_truth": {"clean": {"right": 1.0, "decisions": 3}}
    }


def test_a_hand_damaged_summary_is_an_error_naming_file_and_field(tmp_path: Path) -> None:
    store = _run(tmp_path)
    path = store.root / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["protocols"]["grounded"]["overall"]["strict"] = "high"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(SummaryError) as caught:
        read_summary(path)
    assert str(path) in str(caught.value)
    assert "protocols.grounded.overall.strict" in str(caught.value)
    assert "'high'" in str(caught.value)
    # rewriting rebuilds the sections it computes (an older or damaged shape is replaced)
    typed = write_summary(store, [r for p in sorted(SCORES) for r in _results(p)])
    assert typed.protocols.model_dump()["grounded"]["overall"]["strict"] != "high"
    read_summary(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(SummaryError, match="not JSON"):
        read_summary(path)
    # a file that cannot be read says so instead of silently dropping what it carries
    with pytest.raises(RunStoreError, match="delete the file"):
        write_summary(store, [r for p in sorted(SCORES) for r in _results(p)])


def test_a_summary_of_an_older_shape_is_rebuilt_keeping_extra_sections(tmp_path: Path) -> None:
    store = _run(tmp_path)
    path = store.root / "summary.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["problems"]  # written before the problems section existed
    data["accuracy_vs_truth"] = {"right": 3}
    path.write_text(json.dumps(data), encoding="utf-8")
    typed = write_summary(store, [r for p in sorted(SCORES) for r in _results(p)])
    assert typed.model_extra == {"accuracy_vs_truth": {"right": 3}}
    assert "problems" in json.loads(path.read_text(encoding="utf-8"))


def test_plugin_protocol_sections_are_free_form_objects(tmp_path: Path) -> None:
    data = json.loads((_run(tmp_path).root / "summary.json").read_text(encoding="utf-8"))
    data["protocols"]["mine"] = {"anything": [1, 2]}
    assert validate_summary(data).protocols.model_extra == {"mine": {"anything": [1, 2]}}
    data["protocols"]["mine"] = 3
    with pytest.raises(SummaryError, match="mine"):
        validate_summary(data, "x/summary.json")


def test_a_missing_top_level_field_is_named(tmp_path: Path) -> None:
    data = json.loads((_run(tmp_path).root / "summary.json").read_text(encoding="utf-8"))
    del data["problems"]
    with pytest.raises(SummaryError, match=r"x/summary.json: problems: Field required"):
        validate_summary(data, "x/summary.json")
