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


# ---------------------------------------------------------------- every cache goes too


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def _record_three_clients(project: Path, tmp_path: Path, secret: str) -> dict[str, str]:
    """A Claude Code session that masks a secret, a Gemini session compressed (its cached
    snapshot under resumes/), a Codex session that read its rollout (codex/ state), and
    the project's view page: every kind of file a session leaves beside its rows."""
    from tests import test_host_codex as codex_t
    from tests import test_host_gemini as gemini_t

    claude = "cccc3333-0000-4000-8000-00000000000c"
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    for event, payload in (
        ("UserPromptSubmit", {"prompt": f"the deploy password is {secret}, fix the ledger"}),
        ("PostToolUseFailure", {"tool_name": "Bash", "tool_input": {"command": "make"},
                                "error": "Exit code 2\nmake: *** [all] Error 2",
                                "is_interrupt": False, "tool_use_id": "toolu_p1"}),
    ):  # fmt: skip
        base = {"session_id": claude, "cwd": str(project), "hook_event_name": event}
        assert run_hook(event, {**base, **payload}, env=env).returncode == 0
    assert gemini_t.replay(project)  # its compression leaves a cached snapshot
    gemini = gemini_t.load("BeforeModel.after_compress.json")["session_id"]
    rollout = tmp_path / "rollout.jsonl"
    rollout.write_text(
        (codex_t.CODEX_FIXTURES / "rollout.ledger.jsonl")
        .read_text()
        .replace(codex_t.RECORDED_PROJECT, str(project))
    )
    raw = codex_t.load("PostToolUse.Bash.json")
    codex_t.hook("PostToolUse", codex_t.moved(raw, project, rollout))
    view = CliRunner().invoke(main, ["view", "--project", str(project)], catch_exceptions=False)
    assert view.exit_code == 0, view.output
    return {"claude": claude, "gemini": gemini, "codex": raw["session_id"]}


def test_purge_leaves_no_cache_state_or_digest_of_what_it_removed(
    project: Path, data_root: Path, tmp_path: Path
) -> None:
    secret = "Pw" + uuid.uuid4().hex[:10] + "!"
    sessions = _record_three_clients(project, tmp_path, secret)
    before = _listing(data_root)
    store_name = Path(_store_path(project)).stem
    # Each kind of file is there to be purged (the check below is not vacuous).
    assert any(n.startswith("resumes/") and n.endswith(".xml") for n in before), before
    assert f"codex/{sessions['codex']}.json" in before
    assert f"masked/{store_name}.bin" in before and f"views/{store_name}.html" in before

    # One session: its cached snapshots, its state and its digests go; the others stay.
    _purge("--session", sessions["gemini"], "--project", str(project))
    after = _listing(data_root)
    assert not [n for n in after if n.startswith("resumes/") and n.endswith(".xml")], after
    assert f"views/{store_name}.html" not in after  # it showed the session
    assert f"codex/{sessions['codex']}.json" in after  # another session's state
    _purge("--session", sessions["codex"], "--project", str(project))
    assert f"codex/{sessions['codex']}.json" not in _listing(data_root)
    records = (data_root / "masked" / f"{store_name}.bin").read_bytes()
    assert records  # the Claude session's secret is still remembered...
    _purge("--session", sessions["claude"], "--project", str(project))
    assert not (data_root / "masked" / f"{store_name}.bin").read_bytes()  # ...until purged

    # The whole project: nothing of it is left under the data root.
    _record_three_clients(project, tmp_path, secret)
    _purge("--project", str(project), "--yes")
    # What may be left is not the project's: the log (no payload text), empty lock
    # files, the root's key of digests.
    shared = {"logs/ctxmode.log", "sessions/.ctxmode.lock", "resumes/.lock", "masked/key"}
    left = _listing(data_root)
    assert set(left) <= shared, sorted(set(left) - shared)
    assert all((data_root / n).stat().st_size == 0 for n in left if n.endswith(".lock"))

    # Everything: no recorded data under the data root at all.
    _record_three_clients(project, tmp_path, secret)
    _purge("--all", "--yes")
    assert _listing(data_root) == []
