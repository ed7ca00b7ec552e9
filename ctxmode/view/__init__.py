"""``ctxmode view``: a project's store as one self-contained HTML page.

Two steps, each its own module: ``model`` reads the store into a bounded, JSON-able dict
(timelines counted by SQLite, the newest events with their data); ``page`` turns that
dict into the HTML of ``ctxmode/data/view.html``. :func:`write_page` writes the file
privately (0600, like everything ctxmode keeps); the click edge is ``ctxmode.cli.view``.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any

from ctxmode import paths
from ctxmode.view.model import BUCKETS, DETAIL_LIMIT, MAX_SESSIONS, build_model, coverage
from ctxmode.view.page import embed_json, policy, render_html

if TYPE_CHECKING:
    from ctxmode.migrations import _sqlite3

__all__ = [
    "BUCKETS",
    "DETAIL_LIMIT",
    "MAX_SESSIONS",
    "build_model",
    "build_page",
    "coverage",
    "default_output",
    "embed_json",
    "policy",
    "render_html",
    "write_page",
]


def build_page(
    conn: _sqlite3.Connection,
    *,
    project: str,
    store_path: str,
    generated_at: str,
    session_id: str | None = None,
    **limits: Any,
) -> str:
    """The page's HTML for a store's connection (reads only)."""
    model = build_model(
        conn,
        project=project,
        store_path=store_path,
        generated_at=generated_at,
        session_id=session_id,
        **limits,
    )
    return render_html(model)


def default_output(root: str, store_path: str) -> str:
    """``<data root>/views/<store name>.html``: private, beside the data it shows."""
    name = os.path.splitext(os.path.basename(store_path))[0]
    return os.path.join(root, "views", name + ".html")


def write_page(path: str, html: str) -> None:
    """Write the page as a 0600 file (its folder made 0700 when missing), atomically."""
    folder = os.path.dirname(os.path.abspath(path))
    paths.ensure_dir(folder)
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, paths.FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(html.encode("utf-8"))
        os.chmod(tmp, paths.FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
