"""``ctxmode view`` at 1,000 and 100,000 events: the page's size, the time to build it from
the store, and the time a headless Chromium takes to render it (when one is installed).

The stores are synthetic and built fast with SQL in one transaction (no full-text index:
the view reads none): :func:`fill_store`, also the tests' way to make a big store. The
render time is the page's own figure: ``performance.now()`` when its script has built
every node (``data-render-ms`` on ``<body>``), i.e. from navigation start, parse included.
"""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import dataclass

# (sessions, events per session) of each measured store.
SIZES = ((1, 1_000), (100, 1_000), (1, 100_000))
CATEGORIES = ("file", "git", "task", "prompt", "error")


@dataclass(frozen=True)
class ViewFigure:
    events: int
    sessions: int
    bytes: int  # the HTML file
    build_seconds: float  # store → model → HTML
    render_ms: float | None  # None when no browser is installed (or it failed)


def fill_store(path: str, project: str, sessions: int, per_session: int) -> None:
    """A store at ``path`` (made as ctxmode makes one) with ``sessions`` sessions of
    ``per_session`` events each, ~250 bytes of data per event, one second apart."""
    from ctxmode import paths
    from ctxmode.store import Store

    paths.ensure_dir(os.path.dirname(path))
    store = Store.open(path)
    try:
        conn = store.conn
        for trigger in ("ai", "bd", "bu", "au"):  # the FTS triggers: not what is measured
            conn.execute(f"DROP TRIGGER IF EXISTS session_events_{trigger}")
        conn.execute("BEGIN")
        for s in range(sessions):
            sid = f"bulk-{s:04d}"
            conn.execute(
                "INSERT INTO session_meta (session_id, project_dir, started_at, last_event_at, "
                "event_count) VALUES (?, ?, ?, ?, ?)",
                (
                    sid,
                    project,
                    "2026-12-01T00:00:00.000Z",
                    f"2026-12-01T{s % 24:02d}:59:59.000Z",
                    per_session,
                ),
            )
            conn.executemany(
                "INSERT INTO session_events (session_id, type, category, priority, data, "
                "data_hash, created_at) VALUES (?, 'file_read', ?, 4, ?, '', ?)",
                (
                    (
                        sid,
                        CATEGORIES[i % len(CATEGORIES)],
                        f'{{"path":"src/module_{i}.py","note":"{"x" * 200}"}}',
                        f"2026-12-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                    )
                    for i in range(per_session)
                ),
            )
        conn.execute("COMMIT")
    finally:
        store.close()


def render_ms(page: str) -> float | None:
    """The page's own render time in a headless Chromium, or None without one."""
    from ctxmode.view import browser

    found = browser.find_browser()
    if found is None:
        return None
    try:
        dom = browser.dump_dom(found, "file://" + os.path.abspath(page))
    except browser.BrowserError:
        return None
    match = re.search(r'<body[^>]*data-render-ms="(\d+)"', dom)
    return float(match.group(1)) if match else None


def measure(sizes: tuple[tuple[int, int], ...] = SIZES) -> list[ViewFigure]:
    """One :class:`ViewFigure` per store size, each in a throwaway folder."""
    from ctxmode import view
    from ctxmode.store import Store, iso_utc

    figures = []
    for sessions, per_session in sizes:
        with tempfile.TemporaryDirectory(prefix="ctxmode-bench-view-") as tmp:
            path = os.path.join(tmp, "sessions", "bench.db")
            fill_store(path, tmp, sessions, per_session)
            began = time.perf_counter()
            store = Store.open(path, readonly=True)
            try:
                html = view.build_page(
                    store.conn, project=tmp, store_path=path, generated_at=iso_utc()
                )
            finally:
                store.close()
            page = os.path.join(tmp, "page.html")
            view.write_page(page, html)
            build = time.perf_counter() - began
            figures.append(
                ViewFigure(
                    events=sessions * per_session,
                    sessions=sessions,
                    bytes=len(html.encode("utf-8")),
                    build_seconds=build,
                    render_ms=render_ms(page),
                )
            )
    return figures
