"""``ctxmode statusline``: one short line for Claude Code's status bar.

Claude Code runs the ``statusLine`` command after each assistant message (at most every
300 ms) with a JSON payload on stdin (``session_id``, ``cwd``, ``workspace``, ``model``,
``context_window.used_percentage``, ...) and shows the first line it prints, e.g.::

    ctx 312 ev · snapshot ready · 2 compactions · 71% context

It runs as often as a hook, so it is built like one: the shim ``ctxmode/hooks/statusline.py``
runs ``python -I -S``, the imports are the hook path's (no click, json, re or typing at
module level; ``tests/test_imports.py``), the store is opened read-only, and whatever the
input, it exits 0 with nothing on stderr: garbage in prints nothing (Claude Code then
shows an empty line), a problem with the data root or the store prints what is known.

Composing with a status line the user already had (``ctxmode install --statusline``):
the command is ``<ctxmode's> --then '<theirs>'``. Theirs runs first on the same input,
through ``sh -c`` as Claude Code would run it; ctxmode's line is appended to its last line
after `` · ``. Their line comes first and is never changed; if theirs fails or times out,
ctxmode's line is shown alone.

The words: ``ctx N ev`` (events recorded for this session); ``snapshot ready`` (a
compaction's snapshot is stored and waiting for the session's next start or prompt) or
``snapshot restored`` (the last one was handed back); ``N compactions``; ``P% context``
(Claude Code's own figure, when it sends one); ``ctx off`` where ctxmode is switched off;
``ctx ?`` where the hooks cannot record (a data root that cannot be made or written, a
store that cannot be read): ``ctxmode doctor`` says why.
"""

from __future__ import annotations

import os
import sys

from ctxmode import fastjson, paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NoReturn

SEP = " · "
# More input than any status payload; past it the input is not a status payload.
MAX_INPUT = 1024 * 1024
# A user's own status line composed with ctxmode's gets this long to answer.
THEIRS_TIMEOUT = 5.0
# A store busy with a writer: readers of a WAL store are not blocked, so this is rare.
BUSY_TIMEOUT_MS = 200


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if value == value else None  # NaN is no figure


def _context(payload: Mapping[str, Any]) -> str | None:
    window = payload.get("context_window")
    used = _number(window.get("used_percentage")) if isinstance(window, dict) else None
    if used is None:
        return None
    return f"{round(min(max(used, 0.0), 100.0))}% context"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def _switched_off(env: Mapping[str, str], project: str) -> bool:
    """What switches the hooks off (``hookrun.disabled``, ``.ctxmode-ignore``): the
    harness is not imported for it, as it loads the host and payload modules."""
    flag = env.get("CTXMODE_DISABLE", "").strip().lower() in ("1", "true", "yes", "on")
    return flag or os.path.exists(os.path.join(project, ".ctxmode-ignore"))


def _can_record(root: str, sessions: str) -> bool:
    """Whether the hooks can write the store: its folder (or the data root, or the folder
    that would hold the root) takes new files. One ``access`` call while the folder exists;
    a root not made yet is looked at without making it (:mod:`ctxmode.writable`)."""
    for folder in (sessions, root):
        if os.path.isdir(folder):
            return os.access(folder, os.W_OK | os.X_OK)
    from ctxmode import writable

    return writable.problem(root) is None


def _session_facts(store_path: str, session_id: str) -> tuple[int, int, str | None]:
    """(events, compactions, state of the newest compaction snapshot) of the session."""
    from ctxmode.store import Store
    from ctxmode.wording import snapshot_state

    store = Store.open(store_path, readonly=True, busy_timeout_ms=BUSY_TIMEOUT_MS)
    try:
        row = store.conn.execute(
            "SELECT event_count, compact_count FROM session_meta WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        latest = store.latest_resume(session_id, kind="compact")
    finally:
        store.close()
    events, compactions = (int(row[0] or 0), int(row[1] or 0)) if row else (0, 0)
    return events, compactions, snapshot_state(latest) if latest else None


def status_line(data: bytes, env: Mapping[str, str]) -> str:
    """ctxmode's line for one status payload ("" when the input is not one). Never raises."""
    try:
        payload = fastjson.loads(data)
    except Exception:
        return ""
    if not isinstance(payload, dict):
        return ""
    context = _context(payload)
    tail = [context] if context else []
    try:
        workspace = payload.get("workspace")
        cwd = payload.get("cwd")
        if not isinstance(cwd, str) or not cwd:
            current = workspace.get("current_dir") if isinstance(workspace, dict) else None
            cwd = current if isinstance(current, str) and current else os.getcwd()
        project = paths.project_dir(cwd, env)
        if _switched_off(env, project):
            return SEP.join(["ctx off", *tail])
        root = paths.data_root(env)
        if paths.root_problem(root, tighten=False):
            return SEP.join(["ctx ?", *tail])  # `ctxmode doctor` says what is wrong
        session_id = payload.get("session_id")
        store_path = paths.store_path(project, env)
        if not _can_record(root, os.path.dirname(store_path)):
            return SEP.join(["ctx ?", *tail])  # the hooks record nothing: not "0 ev"
        if not isinstance(session_id, str) or not os.path.isfile(store_path):
            return SEP.join(["ctx 0 ev", *tail])
        if paths.private_problem(store_path, tighten=False):
            return SEP.join(["ctx ?", *tail])
        events, compactions, state = _session_facts(store_path, session_id)
    except Exception:
        return SEP.join(["ctx ?", *tail])
    parts = [f"ctx {events:,} ev"]
    if state == "unclaimed":
        parts.append("snapshot ready")
    elif state == "claimed":
        parts.append("snapshot restored")
    if compactions:
        parts.append(_plural(compactions, "compaction"))
    return SEP.join(parts + tail)


def _theirs(command: str, data: bytes, env: Mapping[str, str]) -> str:
    """The user's own status line for the same input ("" when it fails)."""
    import subprocess

    try:
        done = subprocess.run(
            ["/bin/sh", "-c", command],
            input=data,
            capture_output=True,
            env=dict(env),
            timeout=THEIRS_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return ""
    if done.returncode != 0:
        return ""
    return done.stdout.decode("utf-8", "replace").rstrip("\r\n")


def compose(theirs: str, ours: str) -> str:
    """Their line(s) first, untouched; ours appended to the last of them."""
    if not theirs:
        return ours
    if not ours:
        return theirs
    return theirs + SEP + ours


def _read(stream: Any) -> bytes:
    data = stream.read(MAX_INPUT + 1)
    return b"" if len(data) > MAX_INPUT else data


def run(args: list[str], stream: Any, env: Mapping[str, str]) -> str:
    """What to print (without its newline) for ``args`` and the input on ``stream``.
    Never raises."""
    try:
        data = _read(stream)
        ours = status_line(data, env)
        if len(args) == 2 and args[0] == "--then":
            return compose(_theirs(args[1], data, env), ours)
        return ours
    except BaseException:
        return ""


def main(argv: list[str] | None = None) -> NoReturn:
    """The shim's entry point: read stdin, print the line, exit 0 — always."""
    try:
        out = run(sys.argv[1:] if argv is None else argv, sys.stdin.buffer, os.environ)
    except BaseException:
        out = ""
    try:
        view = memoryview((out + "\n").encode("utf-8", "replace") if out else b"")
        while view:
            view = view[os.write(1, view) :]
    except BaseException:
        pass
    os._exit(0)
