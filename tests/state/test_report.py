"""The audit report, without a browser: pages, escaping, links, tables, CLI, overrides shown.

The run folders are graded by the real runner (test proposers and a table judge);
tests/test_report_browser.py drives the same report in headless Chromium.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pytest
import typer
from typer.testing import CliRunner

from groundeval.grounding._protocol import (
    Proposal,
    ProposeRequest,
    Verification,
    VerifyRequest,
    register_proposer,
    register_verifier,
)
from groundeval.judges import JudgeCall, JudgeError, JudgeReply
from groundeval.programs._model import Program
from groundeval.programs._rescore import rescore_run
from groundeval.programs._run import run_items
from groundeval.programs._runner import ItemInput
from groundeval.state import Element, Usage
from groundeval.state._store import RunStore
from groundeval.state.report import ReportError, write_report
from groundeval.state.report._cli import report_command
from groundeval.state.report._pages import page_name
from tests._support.paths import write_image

SCRIPT_REASON = "<script>window.__pwned = 1</script> looks <b>off</b> & odd"
IMG_TAG = '<img src=x onerror="window.__pwned=2">'
ITEMS = 30
ODD_ID = "odd.item:005"  # '.' and ':' are percent-escaped in run paths


def item_id(i: int) -> str:
    return ODD_ID if i == 5 else f"item-{i:03d}"


@register_proposer("report.shy")
class ShyBoxes:
    """Round 1 marks one box 'shy' (rejected); later rounds offer it plainly (accepted)."""

    name = "report.shy"

    async def propose(self, request: ProposeRequest) -> Proposal:
        first = request.feedback.round_index == 1
        elements = []
        for k, row in enumerate(request.spec.params["boxes"], start=1):
            fields = dict(row[4]) | ({"shy": True} if first and k == 1 else {})
            elements.append(Element(id=k, kind="box", xyxy_px=row[:4], fields=fields))
        return Proposal(elements)


@register_verifier("report.no_shy")
class NoShy:
    name = "report.no_shy"

    async def verify(self, request: VerifyRequest) -> Verification:
        return Verification(
            [
                e.model_copy(
                    update={
                        "verdict": "rejected" if e.fields.get("shy") else "accepted",
                        "reason": "too blurry to count" if e.fields.get("shy") else "ok",
                    }
                )
                for e in request.elements
            ]
        )


@dataclass
class TableJudge:
    """Answers direct questions from a table; costs tokens like a real backend would."""

    answers: dict[tuple[str, str], tuple[bool | None, str]]
    spec: str = "table:v1"
    model: str = "table"
    params: dict[str, Any] = field(default_factory=dict)

    async def generate(self, call: JudgeCall) -> JudgeReply:
        if call.task != "questions":
            raise JudgeError(f"no script for {call.task}")
        entries = []
        for q in call.questions:
            result, reason = self.answers.get((call.item_id, q.id), (True, "clearly visible"))
            if result is None:
                raise JudgeError("server said 500", reason="http 500")
            entries.append({"id": q.id, "result": result, "reason": reason})
        usage = Usage(
            calls=1, input_tokens=1000 + 10 * len(call.questions), output_tokens=40, cost_usd=0.0005
        )
        return JudgeReply(json.dumps({"answers": entries}), usage)


def program(i: int) -> dict[str, Any]:
    boxes = [[4 + 14 * k, 6, 14 + 14 * k, 16, {"pips": (i + k) % 6 + 1}] for k in range(1 + i % 4)]
    ground: dict[str, Any] = {
        "helper": "boxes",
        "proposer": "test.boxes",
        "verifier": "test.accept",
        "params": {"boxes": boxes},
        "target": "each die",
    }
    if i % 7 == 3:  # rejected every round: withheld
        ground |= {"params": {"boxes": boxes, "reject": [1]}, "budget": 2}
    elif i % 5 == 2:  # two rounds, then grounded
        ground |= {"proposer": "report.shy", "verifier": "report.no_shy"}
    tags = {"axis": "quantity" if i % 2 else "spatial", "scene": ["dice", "coins", "bars"][i % 3]}
    if i == 7:
        tags["note"] = IMG_TAG
    return {
        "id": item_id(i),
        "prompt": "Five dice on a table & a <lamp>",
        "tags": tags,
        "gates": [{"id": "g1", "ask": "Is there a die?"}],
        "hard": [
            {
                "id": "h1",
                "ask": "Are there two dice?",
                "ground": ground,
                "check": "count(elements) == 2",
            },
            {
                "id": "h2",
                "ask": "More than 5 pips?",
                "uses": "h1",
                "check": "sum(e.pips for e in elements) > 5",
            },
            {"id": "h3", "ask": "Is the lighting natural?"},
        ],
    }


def answers(variant: int) -> dict[tuple[str, str], tuple[bool | None, str]]:
    table: dict[tuple[str, str], tuple[bool | None, str]] = {}
    for i in range(ITEMS):
        item = item_id(i)
        if i % 10 == 9:
            table[(item, "g1")] = (False, "no die in the picture")
        natural = i % 3 != 2
        if variant == 2 and i % 4 == 0:
            natural = not natural
        table[(item, "h3")] = (natural, "soft daylight" if natural else "harsh flash")
    table[("item-004", "h3")] = (False, SCRIPT_REASON)
    table[("item-011", "h3")] = (None, "")
    return table


def build_runs(tmp: Path, count: int = 2) -> list[Path]:
    """Grade the suite with the real runner: run 1, and a second judge's run 2."""
    images = tmp / "images"
    items = []
    for i in range(ITEMS):
        prog = Program.model_validate(program(i))
        path = write_image(images / f"{i:03d}.png", 64, 24, colour=(40 + 5 * i, 120, 40))
        items.append(ItemInput(prog.id, prog, [path]))
    runs = []
    for variant in range(1, count + 1):
        out = tmp / f"run{variant}"
        judge = TableJudge(answers(variant), spec=f"table:v{variant}")
        asyncio.run(run_items(items, judge=judge, out=out, concurrency=8))
        runs.append(out)
    return runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    return build_runs(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def report(runs: list[Path]) -> Path:
    return write_report(runs)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in ("src", "href", "data-src") and value:
                self.urls.append(value)
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.scripts.append(data)


def links(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def list_data(index: Path) -> dict[str, Any]:
    text = (index.parent / "data" / "items.js").read_text()
    match = re.fullmatch(r"window\.groundevalReceiveItems\((.*)\);\n", text, re.S)
    assert match, text[:80]
    return json.loads(match.group(1))


def test_every_item_has_a_page_and_every_link_resolves(runs: list[Path], report: Path) -> None:
    pages = sorted((report.parent / "items").glob("*.html"))
    assert len(pages) == ITEMS
    assert report == runs[0] / "report" / "index.html"
    checked = 0
    for page in [report, *pages]:
        for url in links(page).urls:
            if url.startswith("#"):
                continue
            target = (page.parent / unquote(url.split("#")[0])).resolve()
            assert target.exists(), f"{page.name}: broken link {url}"
            checked += 1
    assert checked > ITEMS * 5
    odd = (report.parent / "items" / page_name(ODD_ID)).read_text()
    assert "odd%252Eitem%253A005/h1.round1.png" in odd  # the '%' of the run path is escaped


def test_untrusted_text_is_escaped(report: Path) -> None:
    page = (report.parent / "items" / page_name("item-004")).read_text()
    assert "<script>window.__pwned" not in page
    assert (
        "&lt;script&gt;window.__pwned = 1&lt;/script&gt; looks &lt;b&gt;off&lt;/b&gt; &amp; odd"
        in page
    )
    assert "Five dice on a table &amp; a &lt;lamp&gt;" in page
    tagged = (report.parent / "items" / page_name("item-007")).read_text()
    assert IMG_TAG not in tagged and "&lt;img src=x onerror=" in tagged
    data = [s for s in links(report.parent / "items" / page_name("item-004")).scripts]
    assert len(data) == 1 and "<" not in data[0]  # embedded JSON has < escaped as \u003c
    assert json.loads(data[0])["item"] == "item-004"


def test_index_is_small_and_the_list_is_separate(runs: list[Path], report: Path) -> None:
    html = report.read_text()
    assert "item-017" not in html  # rows come from data/items.js, not the page
    data = list_data(report)
    assert data["runs"] == ["run1", "run2"]
    rows = {r["i"]: r for r in data["rows"]}
    results = {r.item_id: r for r in RunStore(runs[0]).results()}
    assert set(rows) == set(results)
    assert {i for i, r in rows.items() if r["o"] == "withheld"} == {
        i for i, r in results.items() if r.status == "withheld"
    }
    assert {i for i, r in rows.items() if r["g"]} == {
        item_id(i) for i in range(ITEMS) if i % 10 == 9
    }
    assert rows["item-011"]["o"] == "error" and rows["item-011"]["e"]
    other = {r.item_id: r for r in RunStore(runs[1]).results()}

    def h3(result: Any) -> str | None:
        return next((d.outcome for d in result.decisions if d.question_id == "h3"), None)

    assert {i for i, r in rows.items() if r["d"]} == {
        i for i in results if h3(results[i]) != h3(other[i])
    }


def test_summary_tables_and_plots(report: Path) -> None:
    html = report.read_text()
    assert "Agreement with run1" in html and "grounded: scores and rates by tag" in html
    assert "axis=quantity" in html and "withheld_rate · run2" in html
    plots = sorted((report.parent / "plots").glob("*.svg"))
    # the plot set belongs to state/report/_plots.py; these two are always drawn
    assert {"outcomes.svg", "usage.svg"} <= {p.name for p in plots}
    assert "scene=coins" in (report.parent / "plots" / "scores-0.svg").read_text()
    assert len(html) < 40_000


def test_rescored_overrides_show_as_human(tmp_path: Path) -> None:
    (run,) = build_runs(tmp_path, count=1)
    audit = tmp_path / "audit.jsonl"
    audit.write_text(
        json.dumps(
            {
                "item": "item-000",
                "question": "h1",
                "outcome": "pass",
                "note": "die #2 is <hidden>",
                "author": "ana",
            }
        )
        + "\n"
    )
    rescore_run(run, audit)
    index = write_report([run])
    page = (index.parent / "items" / page_name("item-000")).read_text()
    row = re.search(r'<tr class="decision src-human" data-question="h1".*?</tr>', page, re.S)
    assert row, "h1 should render as a human decision"
    assert "overridden by ana" in row.group(0) and "die #2 is &lt;hidden&gt;" in row.group(0)
    assert re.search(r"was <span class=\"badge o-fail\">fail</span> 0 from check", row.group(0))
    assert list_data(index)["rows"][0]["v"] == 1


def test_cli_and_bad_folders(runs: list[Path], tmp_path: Path) -> None:
    app = typer.Typer()
    app.command()(report_command)
    out = tmp_path / "elsewhere"
    result = CliRunner().invoke(app, [str(runs[0]), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file() and "file://" in result.output
    result = CliRunner().invoke(app, [str(tmp_path / "nothing")])
    assert result.exit_code == 1 and "no run.json" in result.output
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "thesis.tex").write_text("keep me")
    with pytest.raises(ReportError, match="not empty"):
        write_report([runs[0]], busy)
    assert (busy / "thesis.tex").read_text() == "keep me"
