"""The review page in headless Chromium: approve with a new weight, reject, export, apply.

Same set-up as the report's browser tests: Debian's /usr/bin/chromium driven by
Playwright, no network request allowed, no script error allowed.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groundeval.judges import JudgeCall, ScriptedJudge, wrap_judge
from groundeval.programs._author import AuthorPrompt, author_all
from groundeval.programs._author_cli import write_outcomes
from groundeval.programs._author_review import apply_decisions, write_review
from groundeval.programs._loaders import load_programs
from tests.programs.test_author import GOOD
from tests.state.test_report_browser import ARGS, CHROMIUM


@pytest.fixture(scope="module")
def drafts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("drafts")

    def answer(call: JudgeCall) -> str:
        return json.dumps(GOOD)

    prompts = [
        AuthorPrompt("a1", 'Five dice <img src=x onerror="alert(1)"> on a table.'),
        AuthorPrompt("a2", "Two cats."),
        AuthorPrompt("a3", "A clock at noon."),
    ]
    judge = wrap_judge(ScriptedJudge(on_call=answer))
    write_outcomes(folder, asyncio.run(author_all(judge, prompts)), [])
    write_review(folder)
    return folder


@pytest.fixture
def page(drafts: Path) -> Iterator[Any]:
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        context = browser.new_context(accept_downloads=True)
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("dialog", lambda d: errors.append(f"dialog: {d.message}"))
        page.on(
            "request",
            lambda r: errors.append(f"network: {r.url}") if not r.url.startswith("file:") else None,
        )
        yield page
        context.close()
        browser.close()
        assert not errors, errors


def test_decide_export_and_apply(page: Any, drafts: Path, tmp_path: Path) -> None:
    page.goto((drafts / "review" / "index.html").as_uri())
    first = page.locator('section[data-draft="a1"]')
    assert "<img" in first.locator("p.prompt").inner_text()  # shown as text, never run
    first.locator('input[data-weight="h2"]').fill("2.5")
    first.locator('input[data-decision][value="approve"]').check()
    second = page.locator('section[data-draft="a2"]')
    second.locator('input[data-decision][value="reject"]').check()
    second.locator("input[data-note]").fill("too vague")
    assert page.locator("#decided").inner_text() == "2"
    page.locator("#export").click()  # no reviewer yet: refused with a message
    assert page.locator("#export-error").is_visible()
    page.locator("#reviewer").fill("Ann")
    page.reload()  # decisions and the reviewer survive a reload
    assert page.locator("#reviewer").input_value() == "Ann"
    assert page.locator('section[data-draft="a1"] input[data-weight="h2"]').input_value() == "2.5"
    with page.expect_download() as info:
        page.locator("#export").click()
    exported = tmp_path / "decisions.jsonl"
    info.value.save_as(exported)
    rows = [json.loads(x) for x in exported.read_text().split("\n") if x]
    assert rows == [
        {"id": "a1", "decision": "approve", "weights": {"h2": 2.5}, "note": "", "reviewer": "Ann"},
        {"id": "a2", "decision": "reject", "weights": {}, "note": "too vague", "reviewer": "Ann"},
    ]
    report = apply_decisions(drafts, exported)
    assert (report.approved, report.rejected, report.pending) == (1, 1, 1)
    programs = {p.id: p for p in load_programs(drafts / "programs.jsonl")}
    assert programs["a1"].question("h2").weight == 2.5 and programs["a1"].status == "approved"
    assert "a2" not in programs
