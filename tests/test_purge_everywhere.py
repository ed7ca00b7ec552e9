"""``ctxmode purge`` removes a session from every place it lives: store, spool, copies.

The spool case is the one that used to bite: a purged session whose hook calls sat in
the spool came back with the next hook, which imports the spool.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from click.testing import CliRunner
from hooktools import hook_env, run_hook

from ctxmode import paths, spool
from ctxmode.cli import main
from ctxmode.events import SessionEvent
from ctxmode.store import Store

GONE = "aaaa1111-0000-4000-8000-00000000000a"
KEPT = "bbbb2222-0000-4000-8000-00000000000b"


def _event(text: str) -> SessionEvent:
    return SessionEvent("file_edit", "file", 1, json.dumps({"path": text}))


def _store_path(project: Path) -> str:
    return paths.store_path(str(project), os.environ)


def _all_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


def _fill(project: Path, gone: str, kept: str) -> str:
    path = _store_path(project)
    with Store.open(path) as store:
        store.add_events(
            GONE, [_event(f"{gone}-stored.py")], project_dir=str(project), source_hook="PostToolUse"
        )
        store.add_events(
            KEPT, [_event(f"{kept}-stored.py")], project_dir=str(project), source_hook="PostToolUse"
        )
    return path


def _purge(*args: str) -> str:
    result = CliRunner().invoke(main, ["purge", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_purged_session_does_not_come_back_from_the_spool(project: Path, data_root: Path) -> None:
    gone, kept = "gone" + uuid.uuid4().hex[:8], "kept" + uuid.uuid4().hex[:8]
    path = _fill(project, gone, kept)
    # Hook calls that met a locked store: waiting in the spool for the next hook.
    spool.put(str(data_root), path, GONE, [_event(f"{gone}-spooled.py")])
    spool.put(str(data_root), path, KEPT, [_event(f"{kept}-spooled.py")])

    output = _purge("--session", GONE, "--project", str(project))
    assert "1 spooled hook call dropped" in output
    assert output.rstrip().endswith("freed")

    # The next hook imports the spool, as it would after a lock.
    payload = {
        "session_id": "cccc3333-0000-4000-8000-00000000000c",
        "cwd": str(project),
        "hook_event_name": "UserPromptSubmit",
        "prompt": "carry on",
    }
    done = run_hook("UserPromptSubmit", payload, env=hook_env(CLAUDE_PROJECT_DIR=str(project)))
    assert (done.returncode, done.stderr) == (0, b"")
    with Store.open(path, readonly=True) as store:
        data = " ".join(e.data for e in store.session_events(KEPT))
        assert f"{kept}-spooled.py" in data  # the other session's spooled call survived
        assert store.session_events(GONE) == []
    assert gone.encode() not in _all_bytes(data_root)


def test_purge_deletes_quarantined_copies_that_hold_the_session(
    project: Path, data_root: Path
) -> None:
    gone, kept = "gone" + uuid.uuid4().hex[:8], "kept" + uuid.uuid4().hex[:8]
    path = _fill(project, gone, kept)
    holding = f"{path}.corrupt-20261201T000000Z"
    shutil.copy(path, holding)  # a copy moved aside by a recovery, with both sessions
    with Store.open(path) as store:
        store.purge_session(GONE)
        # As `ctxmode purge` does: the indexes merged, so that the word index keeps no
        # deleted word in its segments (it holds whole words, where trigrams held parts).
        store.vacuum(optimize_fts=True)
    clean = f"{path}.corrupt-20261202T000000Z"
    shutil.copy(path, clean)  # a later copy that never saw the purged session
    with Store.open(path) as store:
        store.add_events(
            GONE, [_event(f"{gone}-again.py")], project_dir=str(project), source_hook="PostToolUse"
        )

    output = _purge("--session", GONE, "--project", str(project))
    assert "1 quarantined file deleted" in output
    assert not os.path.exists(holding)
    assert os.path.exists(clean)
    assert gone.encode() not in _all_bytes(data_root)
    assert kept.encode() in Path(clean).read_bytes()


def test_purge_older_than_clears_the_spool_of_those_sessions(
    project: Path, data_root: Path
) -> None:
    path = _fill(project, "old-file", "new-file")
    with Store.open(path) as store:
        store.conn.execute(
            "UPDATE session_meta SET last_event_at = '2020-01-01T00:00:00.000Z' "
            "WHERE session_id = ?",
            (GONE,),
        )
    spool.put(str(data_root), path, GONE, [_event("old-spooled.py")])
    spool.put(str(data_root), path, KEPT, [_event("new-spooled.py")])

    output = _purge("--older-than", "30", "--project", str(project))
    assert output.startswith("1 session idle for more than 30 days: ")
    assert "1 spooled hook call dropped" in output
    live = Path(spool.spool_path(str(data_root), path)).read_bytes()
    assert b"new-spooled.py" in live and b"old-spooled.py" not in live


def test_a_torn_spool_line_naming_the_session_goes_too(project: Path, data_root: Path) -> None:
    path = _fill(project, "a", "b")
    live = Path(spool.spool_path(str(data_root), path))
    live.parent.mkdir(mode=0o700, exist_ok=True)
    live.write_bytes(
        f'{{"session_id":"{GONE}","events":[{{"type":"file_ed'.encode()  # torn by a full disk
        + b"\n"
        + f'{{"session_id":"{KEPT}","events":[]}}\n'.encode()
    )
    output = _purge("--session", GONE, "--project", str(project))
    assert "1 spooled hook call dropped" in output
    assert GONE.encode() not in live.read_bytes()
    assert KEPT.encode() in live.read_bytes()
