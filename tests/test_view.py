"""``ctxmode view``: the model read from a store, the page's escaping, its bounds, the command."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from ctxmode import paths, view
from ctxmode.events import SessionEvent
from ctxmode.store import Store
from ctxmode.view import browser, page
from tests.helpers import cli

SESSION = "5f0c1d2e-0000-4000-8000-0000000000v1"
OTHER = "9a8b7c6d-0000-4000-8000-0000000000v2"
HOSTILE = [
    "</script><script>document.title='pwned'</script>",
    "<img src=x onerror=\"document.title='pwned'\">",
    "<!-- <script>",
    "]]></svg><svg onload=alert(1)>",
    "a\u2028b\u2029c & &amp; \"'` ${x} {{x}}",
    "\\u003c/script>",
]


SNAPSHOT = (
    '<session_resume compaction="1"><requests><prompt>Fix the parser</prompt></requests>'
    '<files_changed><file path="src/parser.py"/></files_changed></session_resume>'
)


def store_for(project: Path) -> Store:
    path = paths.store_path(str(project), os.environ)
    paths.ensure_dir(os.path.dirname(path))
    return Store.open(path)


def event(type_: str, category: str, data: dict[str, Any], priority: int = 2) -> SessionEvent:
    return SessionEvent(type_, category, priority, json.dumps(data, separators=(",", ":")))


def seed(project: Path) -> None:
    """Two sessions: one with a claimed compaction (summary recorded), worktree and branch;
    one with an unclaimed end snapshot and a hostile prompt and file name."""
    store = store_for(project)
    try:
        t = "2026-12-01T10:00:{:02d}.000Z"
        first = [
            event("user_prompt", "prompt", {"text": "Fix the parser"}, 1),
            event("file_edit", "file", {"path": "src/parser.py", "summary": "+3 -1"}),
            event(
                "env_setup",
                "env",
                {"kind": "export", "tool": "sh", "detail": "[REDACTED:github-token]"},
                3,
            ),
        ]
        for i, ev in enumerate(first):
            store.add_events(
                SESSION, [ev], source_hook="PostToolUse", project_dir=str(project), now=t.format(i)
            )
        store.save_resume(SESSION, SNAPSHOT, 3, now=t.format(10))
        store.claim_resume(claimed_by=SESSION, session_id=SESSION)
        store.add_events(
            SESSION,
            [event("git_commit", "git", {"message": "Fix it"}, 1)],
            source_hook="PostToolUse",
            project_dir=str(project),
            now=t.format(20),
        )
        store.conn.execute(
            "INSERT INTO compaction (session_id, compact_seq, trigger, summary, summary_at, origin,"
            " created_at) VALUES (?, 1, 'auto', 'The user asked to fix the parser.', ?, 'hook', ?)",
            (SESSION, t.format(11), t.format(10)),
        )
        store.conn.execute(
            "UPDATE session_meta SET worktree = 'feature-x', branch = 'fix/parser', cwd = ?, "
            "client = 'claude_code' WHERE session_id = ?",
            (str(project), SESSION),
        )
        hostile = [event("user_prompt", "prompt", {"text": text}, 1) for text in HOSTILE]
        hostile += [event("file_read", "file", {"path": text}, 4) for text in HOSTILE]
        store.add_events(
            OTHER,
            hostile,
            source_hook="UserPromptSubmit",
            project_dir=str(project),
            now="2026-12-02T09:00:00.000Z",
        )
        store.save_resume(
            OTHER,
            '<session_resume end="1"/>',
            len(hostile),
            kind="end",
            now="2026-12-02T09:00:01.000Z",
        )
    finally:
        store.close()


def model_of(project: Path, **kwargs: Any) -> dict[str, Any]:
    store = store_for(project)
    try:
        return view.build_model(
            store.conn,
            project=str(project),
            store_path=store.path,
            generated_at="2026-12-03T00:00:00.000Z",
            **kwargs,
        )
    finally:
        store.close()


def embedded(html: str) -> str:
    found = re.search(
        r'<script type="application/json" id="ctxmode-data">(.*?)</script>', html, re.S
    )
    assert found, "no data block"
    return found.group(1)


# --- the model -----------------------------------------------------------------------


def test_the_model_holds_sessions_compactions_and_events(project: Path) -> None:
    seed(project)
    model = model_of(project)
    assert [s["session_id"] for s in model["sessions"]] == [OTHER, SESSION]  # newest first
    first = model["sessions"][1]
    assert first["title"] == "Fix the parser"
    assert (first["worktree"], first["branch"], first["client"]) == (
        "feature-x",
        "fix/parser",
        "claude_code",
    )
    assert first["events_total"] == 4 and len(first["events"]) == 4
    [compaction] = first["compactions"]
    assert compaction["seq"] == 1 and compaction["trigger"] == "auto"
    assert compaction["summary"] == "The user asked to fix the parser."
    snapshot = compaction["snapshot"]
    assert snapshot["state"] == "claimed" and snapshot["consumed_by"] == SESSION
    assert snapshot["text"] == SNAPSHOT
    # The timeline counts every event, by category, in time order.
    counts = first["timeline"]["counts"]
    assert {c: sum(v) for c, v in counts.items()} == {"prompt": 1, "file": 1, "env": 1, "git": 1}
    assert counts["prompt"][0] == 1 and counts["git"][-1] == 1
    second = model["sessions"][0]
    assert second["compactions"] == []
    assert [s["state"] for s in second["end_snapshots"]] == ["unclaimed"]


def test_the_page_lists_events_in_the_calls_order_not_their_arrival(project: Path) -> None:
    """Background captures finish in any order: the page shows the order of the calls,
    as ``dump`` and the snapshot do, also when only the newest events travel."""
    store = store_for(project)
    try:
        for name, call_at in (("c.py", 3), ("a.py", 1), ("b.py", 2)):  # the arrival order
            store.add_events(
                SESSION, [event("file_write", "file", {"path": name})],
                source_hook="PostToolUse", project_dir=str(project), call_at=call_at,
            )  # fmt: skip
    finally:
        store.close()
    (session,) = model_of(project)["sessions"]
    data = view.model.EVENT_COLUMNS.index("data")
    assert [json.loads(e[data])["path"] for e in session["events"]] == ["a.py", "b.py", "c.py"]
    (newest,) = model_of(project, detail_limit=2)["sessions"]
    assert [json.loads(e[data])["path"] for e in newest["events"]] == ["b.py", "c.py"]


def test_what_the_summary_kept_against_what_the_snapshot_restored(project: Path) -> None:
    pytest.importorskip("ctxmode.snapshot.coverage")
    seed(project)
    [compaction] = model_of(project)["sessions"][1]["compactions"]
    coverage = compaction["coverage"]
    assert coverage["total"] == 2 and coverage["kept"] == 1
    assert coverage["restored"] == ["file src/parser.py"]


def test_secrets_are_shown_as_stored(project: Path) -> None:
    seed(project)
    html = view.render_html(model_of(project))
    assert "[REDACTED:github-token]" in html


def test_older_snapshots_without_compaction_rows_still_show(project: Path) -> None:
    seed(project)
    store = store_for(project)
    try:
        store.conn.execute("DELETE FROM compaction")
    finally:
        store.close()
    [compaction] = model_of(project)["sessions"][1]["compactions"]
    assert compaction["summary"] is None and compaction["snapshot"]["state"] == "claimed"


def test_session_filter(project: Path) -> None:
    seed(project)
    model = model_of(project, session_id=SESSION)
    assert [s["session_id"] for s in model["sessions"]] == [SESSION]


def test_an_empty_store(project: Path) -> None:
    store_for(project).close()
    model = model_of(project)
    assert model["sessions"] == []
    assert embedded(view.render_html(model))


# --- escaping ----------------------------------------------------------------------


def test_hostile_text_cannot_leave_the_data_block(project: Path) -> None:
    seed(project)
    model = model_of(project)
    html = view.render_html(model)
    data = embedded(html)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in data
    assert not re.search(r"[^\x20-\x7e]", data)  # ASCII only
    assert json.loads(data) == json.loads(json.dumps(model))  # the same model, escaped
    # Exactly one element of each kind the page is made of: nothing was injected.
    assert html.count("<script") == 2 and html.count("</script") == 2
    assert "<img" not in html and "<svg onload" not in html


def test_embed_json_escapes() -> None:
    text = view.embed_json({"a": "</script><!--\u2028&"})
    assert text == '{"a":"\\u003c/script\\u003e\\u003c!--\\u2028\\u0026"}'
    assert json.loads(text) == {"a": "</script><!--\u2028&"}


def test_the_page_builds_no_markup_from_data_and_requests_nothing() -> None:
    template = page.load_template()
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
        "srcdoc",
    ):
        assert sink not in template, sink
    # The one URL in the page is the SVG namespace (a name, never fetched).
    assert set(re.findall(r"https?://[^\s\"')]+", template)) == {"http://www.w3.org/2000/svg"}
    for attribute in ("src=", "href="):
        assert attribute not in template


def test_the_policy_allows_nothing_but_the_pages_own_blocks() -> None:
    html = view.render_html(
        {
            "version": 1,
            "project": "p",
            "store": "s",
            "generated_at": "",
            "categories": [],
            "event_columns": [],
            "detail_limit": 0,
            "sessions_hidden": 0,
            "sessions": [],
        }
    )
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert found
    csp = found.group(1)
    assert csp.startswith("default-src 'none';")
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    style = re.search(r"<style>(.*?)</style>", html, re.S)
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    assert style and script
    assert page._sha256(style.group(1)) in csp and page._sha256(script.group(1)) in csp


# --- bounds --------------------------------------------------------------------------


def bulk_store(project: Path, sessions: int, per_session: int) -> None:
    """A big store, fast (the bench's way: SQL in one transaction, no full-text index)."""
    from ctxmode.bench.view import fill_store

    fill_store(paths.store_path(str(project), os.environ), str(project), sessions, per_session)


@pytest.mark.parametrize(("sessions", "per_session"), [(1, 100_000), (100, 1_000)])
def test_100k_events_make_a_bounded_page(project: Path, sessions: int, per_session: int) -> None:
    bulk_store(project, sessions, per_session)
    model = model_of(project)
    shown = sum(len(s["events"]) for s in model["sessions"])
    assert shown <= view.DETAIL_LIMIT
    assert sum(s["events_total"] for s in model["sessions"]) == 100_000
    for session in model["sessions"]:
        lanes = session["timeline"]["counts"].values()
        assert all(len(lane) == view.BUCKETS for lane in lanes)
        assert sum(sum(lane) for lane in lanes) == session["events_total"]  # counted, all
    html = view.render_html(model)
    # ~3,000 events of ~250 bytes, plus the timelines: far below what a browser chokes on.
    assert len(html.encode()) < 2_500_000


# --- the command ---------------------------------------------------------------------


def test_view_writes_a_private_page_and_prints_its_path(project: Path, data_root: Path) -> None:
    seed(project)
    result = cli("view", "--project", str(project))
    assert result.exit_code == 0, result.output
    target = Path(result.output.split(" (")[0])
    assert target.parent == data_root / "views"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    assert "Fix the parser" in target.read_text()


def test_view_output_session_and_open(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seed(project)
    opened: list[str] = []
    monkeypatch.setattr("webbrowser.open", lambda url: opened.append(url) or True)
    out = tmp_path / "page.html"
    result = cli(
        "view", "--project", str(project), "--session", OTHER[:8], "--output", str(out), "--open"
    )
    assert result.exit_code == 0, result.output
    model = json.loads(embedded(out.read_text()))
    assert [s["session_id"] for s in model["sessions"]] == [OTHER]
    assert opened == [out.as_uri()]


def test_view_errors(project: Path, tmp_path: Path) -> None:
    result = cli("view", "--project", str(project))
    assert result.exit_code == 1 and "no ctxmode store" in result.output
    seed(project)
    result = cli("view", "--project", str(project), "--session", "nope")
    assert result.exit_code == 2 and "no session 'nope'" in result.output


def test_a_hanging_browser_is_killed(tmp_path: Path) -> None:
    """A browser that never answers costs its timeout, not the suite."""
    fake = tmp_path / "hanging-browser"
    fake.write_text("#!/bin/sh\nsleep 600 &\nexec sleep 600\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(browser.BrowserError, match="did not finish"):
        browser.dump_dom(str(fake), "file:///nowhere", timeout=0.5)


def test_view_narrows_to_a_client_and_a_worktree(project: Path, tmp_path: Path) -> None:
    seed(project)
    tree = project.parent / "proj-feature"  # a linked worktree's folder, as recorded
    with store_for(project) as store:
        store.conn.execute(
            "UPDATE session_meta SET client = 'codex', worktree = ? WHERE session_id = ?",
            (str(tree.resolve()), OTHER),
        )
        store.conn.execute(
            "UPDATE session_meta SET client = NULL, worktree = ? WHERE session_id = ?",
            (str(project.resolve()), SESSION),
        )

    def shown(*args: str) -> list[str]:
        out = tmp_path / "page.html"
        result = cli("view", "--project", str(project), "--output", str(out), *args)
        assert result.exit_code == 0, result.output
        return [s["session_id"] for s in json.loads(embedded(out.read_text()))["sessions"]]

    assert sorted(shown()) == sorted([SESSION, OTHER])
    assert shown("--client", "codex") == [OTHER]
    assert shown("--client", "claude") == [SESSION]  # NULL: a Claude Code session
    assert shown("--worktree", str(project)) == [SESSION]
    assert shown("--worktree", str(project), "--client", "codex") == []
