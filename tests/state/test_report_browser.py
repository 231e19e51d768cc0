"""The audit report in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Filter the list, open an item, toggle overlays, make overrides, export them, rescore
with the exported file and see the human decisions. Screenshots go to test-artifacts/.
Nothing is downloaded from a browser vendor: `make test` installs the apt package.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from groundeval.programs._rescore import rescore_run
from groundeval.state._store import RunStore
from groundeval.state.report import write_report
from groundeval.state.report._pages import page_name
from tests._support.paths import REPO
from tests.state.test_report import IMG_TAG, ITEMS, SCRIPT_REASON, build_runs, item_id

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def chromium() -> Path:
    """Fail (never skip) when the set-up did not install the browser or Playwright."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: run `make test` (it installs Debian's chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.fail("playwright is missing: run `make test` (it installs the dev extra)")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium: Path, runs: list[Path]) -> Iterator[Any]:
    """Chromium; asks for the runs first (grading uses asyncio, Playwright's loop must wait)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(executable_path=str(chromium), args=ARGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on(
        "request",
        lambda r: (
            errors.append(f"network: {r.url}")
            if not r.url.startswith(("file:", "blob:", "data:"))
            else None
        ),
    )
    yield page
    context.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def runs(chromium: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    runs = build_runs(tmp_path_factory.mktemp("browser"))
    write_report(runs)
    return runs


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"report-{name}.png"), full_page=True)


def open_index(page: Any, run: Path) -> None:
    page.goto((run / "report" / "index.html").resolve().as_uri())
    page.wait_for_selector(f"body[data-items-loaded='{ITEMS}']")


def visible_ids(page: Any) -> list[str]:
    return page.locator("#item-rows tr").evaluate_all("rows => rows.map(r => r.dataset.item)")


def test_filter_and_paginate_the_list(page: Any, runs: list[Path]) -> None:
    results = {r.item_id: r for r in RunStore(runs[0]).results()}
    open_index(page, runs[0])
    assert visible_ids(page) == sorted(results)[:25]
    page.click("#page-next")
    assert visible_ids(page) == sorted(results)[25:]
    assert "26–30 of 30" in page.inner_text("#page-info")
    page.select_option("#f-outcome", "withheld")
    assert visible_ids(page) == sorted(i for i, r in results.items() if r.status == "withheld")
    page.select_option("#f-outcome", "")
    page.check("#f-gate")
    assert visible_ids(page) == [item_id(i) for i in range(ITEMS) if i % 10 == 9]
    page.uncheck("#f-gate")
    page.check("#f-disagree")
    disagree = visible_ids(page)
    assert disagree and len(disagree) < ITEMS
    page.uncheck("#f-disagree")
    page.select_option("#f-tag", "scene=coins")
    assert visible_ids(page) == [item_id(i) for i in range(ITEMS) if i % 3 == 1]
    page.select_option("#f-tag", "")
    page.fill("#f-text", "harsh flash")
    harsh = visible_ids(page)
    assert harsh and all(
        "harsh flash" in " ".join(d.reason for d in results[i].decisions) for i in harsh
    )
    page.fill("#f-text", "")
    page.select_option("#page-size", "10")
    assert len(visible_ids(page)) == 10
    shot(page, "index")
    # a tag holding markup shows as text in the list, and runs no handler
    page.fill("#f-text", "onerror")
    assert visible_ids(page) == ["item-007"]
    assert IMG_TAG in page.inner_text("#item-rows")
    assert page.evaluate("window.__pwned") is None


def test_item_page_escapes_and_toggles_overlays(page: Any, runs: list[Path]) -> None:
    open_index(page, runs[0])
    page.fill("#f-text", "item-004")
    page.click("#item-rows a")
    page.wait_for_selector("#item-title")
    assert page.url.endswith(page_name("item-004"))
    reason = page.locator("tr[data-question='h3'] .reason").first.inner_text()
    assert reason == SCRIPT_REASON
    assert page.evaluate("window.__pwned") is None
    assert page.locator("script:not([src]):not([type='application/json'])").count() == 0

    page.goto((runs[0] / "report" / "items" / page_name("item-002")).resolve().as_uri())
    viewer = page.locator("[data-viewer]").first
    layers = viewer.locator("img[data-layer]")
    assert layers.evaluate_all("ls => ls.map(l => l.dataset.layer)") == [
        "image",
        "round-1",
        "round-2",
    ]
    assert layers.evaluate_all("ls => ls.every(l => l.complete && l.naturalWidth > 0)")

    def shown() -> list[str]:
        return viewer.locator("img[data-layer]:visible").evaluate_all(
            "ls => ls.map(l => l.dataset.layer)"
        )

    assert shown() == ["round-2"]
    viewer.locator("[data-show='round-1']").click()
    assert shown() == ["round-1"]
    viewer.locator("[data-toggle-lines]").uncheck()
    assert shown() == ["image"]
    viewer.locator("[data-toggle-lines]").check()
    assert shown() == ["round-1"]
    round1 = page.locator("details.round").first
    round1.locator("summary").click()
    assert "too blurry to count" in round1.inner_text()
    shot(page, "item")


@pytest.fixture
def audit_run(runs: list[Path], tmp_path: Path) -> Path:
    run = tmp_path / "audit"
    shutil.copytree(runs[0], run)
    shutil.rmtree(run / "report")
    write_report([run])
    return run


def test_override_export_rescore(page: Any, audit_run: Path, tmp_path: Path) -> None:
    before = {r.item_id: r for r in RunStore(audit_run).results()}
    # h1, h2 fail; h3 passes: relaxed counts the mark, strict needs every hard question
    assert before["item-000"].scores == {"strict": 0.0, "relaxed": pytest.approx(1 / 3)}
    items = audit_run / "report" / "items"
    page.goto((items / page_name("item-000")).resolve().as_uri())
    page.fill("#ov-author", "ana")
    h1 = page.locator("tr[data-question='h1']")
    h1.locator(".ov-note").fill("a second die hides behind the cup")
    h1.locator("[data-set='pass']").click()
    page.locator("tr[data-question='h2'] [data-set='pass']").click()
    page.locator("tr[data-question='h3'] [data-set='fail']").click()
    page.locator("tr[data-question='h3'] [data-set='']").click()  # changed my mind
    assert "pending: pass (a second die hides behind the cup)" in h1.inner_text()
    page.goto((items / page_name("item-002")).resolve().as_uri())
    page.locator("tr[data-question='h3'] [data-set='pass']").click()
    assert page.inner_text("[data-override-count]") == "3"

    open_index(page, audit_run)
    page.check("#f-pending")
    assert visible_ids(page) == ["item-000", "item-002"]
    with page.expect_download() as info:
        page.click("[data-export-overrides]")
    exported = tmp_path / "overrides.jsonl"
    info.value.save_as(exported)
    rows = [json.loads(line) for line in exported.read_text().split("\n") if line]
    assert rows == [
        {
            "item": "item-000",
            "question": "h1",
            "outcome": "pass",
            "note": "a second die hides behind the cup",
            "author": "ana",
        },
        {"item": "item-000", "question": "h2", "outcome": "pass", "note": "", "author": "ana"},
        {"item": "item-002", "question": "h3", "outcome": "pass", "note": "", "author": "ana"},
    ]

    report = rescore_run(audit_run, exported)
    assert report.overridden == 3 and not report.unknown_overrides
    after = {r.item_id: r for r in RunStore(audit_run).results()}
    assert after["item-000"].scores == {"strict": 1.0, "relaxed": 1.0}
    old = before["item-002"].scores["relaxed"]  # one of three equal marks more
    assert after["item-002"].scores["relaxed"] == pytest.approx(old + 1 / 3, abs=1e-6)
    unchanged = set(before) - {"item-000", "item-002"}
    assert all(after[i].scores == before[i].scores for i in unchanged)

    write_report([audit_run])
    page.goto((items / page_name("item-000")).resolve().as_uri())
    h1 = page.locator("tr[data-question='h1']")
    assert "src-human" in h1.get_attribute("class")
    assert h1.locator(".badge.human").count() == 1
    assert "was fail 0 from check" in h1.locator(".original").inner_text()
    assert "applied: pass" in h1.locator(".ov-state").inner_text()
    shot(page, "item-overridden")
    open_index(page, audit_run)
    page.check("#f-overridden")
    assert visible_ids(page) == ["item-000", "item-002"]
