"""The ``ctxmode view`` page in a real headless Chromium: it loads without an error, shows
what the store holds, filters, opens an event, escapes hostile text, stays usable at
100k events; and a screenshot is written as the run's artefact.

Skipped, saying why, where no Chromium is installed (``./test.sh`` installs Debian's
``chromium`` where apt-get is usable). No remote-control protocol: the page records its
own errors and counts in the DOM, and ``--dump-dom`` returns that DOM after its scripts
ran; the filters are driven through the page's URL fragment (``#q=…&c=…&open=…``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from ctxmode import view
from ctxmode.view import browser
from tests.test_view import HOSTILE, OTHER, SESSION, bulk_store, model_of, seed

BROWSER = browser.find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium on PATH (apt-get install chromium; ./test.sh installs it where it can)",
)


def write_page(project: Path, tmp_path: Path, name: str = "page.html", **kwargs: object) -> Path:
    target = tmp_path / name
    view.write_page(str(target), view.render_html(model_of(project, **kwargs)))
    return target


def load(page: Path, fragment: str = "") -> tuple[str, dict[str, str]]:
    """The DOM after the page's scripts ran, and the attributes the page set on <body>."""
    assert BROWSER is not None
    dom = browser.dump_dom(BROWSER, page.as_uri() + fragment)
    body = re.search(r"<body([^>]*)>", dom)
    assert body, dom[:500]
    attributes = dict(re.findall(r'([\w-]+)="([^"]*)"', body.group(1)))
    errors = re.search(r'<html[^>]*data-errors="(\d+)"', dom)
    assert errors, "the page's error recorder did not run"
    box = re.search(r'<pre id="ctxmode-errors">(.*?)</pre>', dom, re.S)
    assert errors.group(1) == "0", box.group(1) if box else dom[:500]
    assert attributes.get("data-ready") == "1", "the page's script did not finish"
    return dom, attributes


def test_the_page_loads_without_errors_and_shows_the_store(project: Path, tmp_path: Path) -> None:
    seed(project)
    dom, body = load(write_page(project, tmp_path))
    assert body["data-sessions"] == "2"
    assert body["data-compactions"] == "1"
    assert body["data-rows"] == str(4 + 2 * len(HOSTILE))
    assert f'data-session="{SESSION}"' in dom and f'data-session="{OTHER}"' in dom
    assert "[REDACTED:github-token]" in dom  # as stored


def test_hostile_text_stays_text(project: Path, tmp_path: Path) -> None:
    seed(project)
    dom, _ = load(write_page(project, tmp_path))
    title = re.search(r"<title>(.*?)</title>", dom, re.S)
    assert title and "pwned" not in title.group(1)
    assert "<img" not in dom and "<svg onload" not in dom
    # The prompt is on the page, as text: escaped in the serialized DOM.
    assert "&lt;/script&gt;&lt;script&gt;document.title='pwned'&lt;/script&gt;" in dom


def test_filters_and_the_event_detail(project: Path, tmp_path: Path) -> None:
    seed(project)
    page = write_page(project, tmp_path)
    _, body = load(page, "#c=git")
    assert body["data-rows"] == "1"
    _, body = load(page, "#q=parser")
    assert body["data-rows"] == "2"  # the prompt and the edited file's path
    _, body = load(page, "#q=parser&c=file")
    assert body["data-rows"] == "1"
    model = model_of(project, session_id=SESSION)
    commit = next(e for e in model["sessions"][0]["events"] if e[3] == "git_commit")
    dom, _ = load(page, f"#open={commit[0]}")
    detail = re.search(r'<tr class="detail">(.*?)</tr>', dom, re.S)
    assert detail
    assert json.dumps({"message": "Fix it"}, indent=2) in detail.group(1).replace("&quot;", '"')


@pytest.mark.parametrize(("sessions", "per_session"), [(1, 100_000), (100, 1_000)])
def test_100k_events_render(project: Path, tmp_path: Path, sessions: int, per_session: int) -> None:
    bulk_store(project, sessions, per_session)
    _, body = load(write_page(project, tmp_path))
    assert body["data-sessions"] == str(sessions)
    assert int(body["data-rows"]) <= 100 * sessions  # one page of each session's table


def test_screenshot_artefact(project: Path, tmp_path: Path) -> None:
    """The page as a PNG, kept with the run (and in $CTXMODE_TEST_ARTEFACTS when set)."""
    assert BROWSER is not None
    seed(project)
    page = write_page(project, tmp_path)
    png = tmp_path / "ctxmode-view.png"
    browser.screenshot(BROWSER, page.as_uri(), str(png), size=(1280, 1000))
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 10_000
    folder = os.environ.get("CTXMODE_TEST_ARTEFACTS")
    if folder:
        os.makedirs(folder, exist_ok=True)
        shutil.copy(png, os.path.join(folder, png.name))
