"""The data root is the user's alone: 0700/0600 whoever writes first, and a root that is
a link, someone else's, or open to others is never written into by a hook.

Hooks run as subprocesses, as Claude Code runs them, with a umask of 022 (the common
default) so that a writer that forgot to set modes would show.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner
from hooktools import hook_command, hook_env

from ctxmode.cli import main

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0,
    reason="giving a folder to another user needs root (CI runs as root)",
)


def _write(project: Path, name: str) -> dict[str, object]:
    path = f"{project}/{name}"
    return {
        "session_id": str(uuid.uuid4()),
        "cwd": str(project),
        "hook_event_name": "PostToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": path, "content": "x\n"},
        "tool_response": {"type": "create", "filePath": path, "content": "x\n"},
        "tool_use_id": "toolu_" + uuid.uuid4().hex[:12],
    }


def _hook(root: Path, project: Path, stdin: object) -> None:
    data = stdin.encode() if isinstance(stdin, str) else json.dumps(stdin).encode()
    done = subprocess.run(
        hook_command("PostToolUse"),
        input=data,
        capture_output=True,
        env=hook_env(CTXMODE_HOME=str(root), CLAUDE_PROJECT_DIR=str(project)),
        timeout=60,
        check=False,
        preexec_fn=lambda: os.umask(0o022),
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink())


# ------------------------------------------------------------------ modes on creation


def test_a_log_written_first_makes_every_folder_private(tmp_path: Path, project: Path) -> None:
    """Garbage input makes the log the first writer; the root it creates is 0700."""
    root = tmp_path / "missing" / "root"
    _hook(root, project, "not json at all")
    assert (root / "logs" / "ctxmode.log").is_file()
    for folder in (tmp_path / "missing", root, root / "logs"):
        assert _mode(folder) == 0o700, folder
    assert _mode(root / "logs" / "ctxmode.log") == 0o600


def test_every_file_and_folder_a_hook_makes_is_private(tmp_path: Path, project: Path) -> None:
    root = tmp_path / "root"
    _hook(root, project, _write(project, "a.py"))
    made = [root, *root.rglob("*")]
    assert len(made) >= 3
    loose = [f"{p} {_mode(p):04o}" for p in made if _mode(p) & 0o077]
    assert loose == []


def test_config_folder_and_file_are_private(tmp_path: Path) -> None:
    root = tmp_path / "fresh-root"
    old = os.umask(0o022)
    try:
        result = CliRunner().invoke(
            main, ["config", "set", "retention_days", "7"], env={"CTXMODE_HOME": str(root)}
        )
    finally:
        os.umask(old)
    assert result.exit_code == 0, result.output
    assert _mode(root) == 0o700
    assert _mode(root / "config.json") == 0o600


# ------------------------------------------------------------------ roots not used


def test_a_loose_root_of_the_user_is_tightened_and_used(tmp_path: Path, project: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    root.chmod(0o777)
    (root / "logs").mkdir()
    (root / "logs").chmod(0o755)
    _hook(root, project, _write(project, "a.py"))
    assert _mode(root) == 0o700 and _mode(root / "logs") == 0o700
    assert list(root.glob("sessions/*.db"))


@pytest.mark.parametrize("what", ["root", "sessions", "spool", "logs", "log file", "store"])
def test_a_symlink_anywhere_in_the_root_is_not_followed(
    what: str, tmp_path: Path, project: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    root = tmp_path / "root"
    if what == "root":
        root.symlink_to(elsewhere)
    else:
        root.mkdir(mode=0o700)
        if what == "store":
            _hook(root, project, _write(project, "first.py"))  # make the real store
            store = next(root.glob("sessions/*.db"))
            target = elsewhere / "store.db"
            store.rename(target)
            store.symlink_to(target)
        elif what == "log file":
            (root / "logs").mkdir(mode=0o700)
            (root / "logs" / "ctxmode.log").symlink_to(elsewhere / "log")
        else:
            (root / what).symlink_to(elsewhere)
    before = {p: p.read_bytes() for p in _files(elsewhere)}
    links = {p for p in _files(root) if p.is_symlink()}

    _hook(root, project, _write(project, "second.py"))
    _hook(root, project, "garbage to provoke a log line")

    assert {p: p.read_bytes() for p in _files(elsewhere)} == before
    assert {p for p in _files(root) if p.is_symlink()} == links
    if what != "store":
        assert not list(root.glob("sessions/*.db")) or what in ("spool", "log file")
    # doctor says what is wrong and how to fix it.
    result = CliRunner().invoke(main, ["doctor", "--json"], env={"CTXMODE_HOME": str(root)})
    report = json.loads(result.output)
    failed = [c for c in report["checks"] if c["status"] == "fail" and c["group"] == "data"]
    assert failed, report["checks"]
    assert "symbolic link" in json.dumps(failed)
    assert failed[0]["fix"]


@needs_root
@pytest.mark.parametrize("what", ["root", "store"])
def test_a_root_or_store_of_another_user_is_not_used(
    what: str, tmp_path: Path, project: Path
) -> None:
    root = tmp_path / "root"
    _hook(root, project, _write(project, "first.py"))
    target = root if what == "root" else next(root.glob("sessions/*.db"))
    os.chown(target, 65534, 65534)
    # A root of another user is not even logged into; in a root of the user's own the
    # garbage may be logged, but the foreign store is left alone.
    watched = root if what == "root" else root / "sessions"
    before = {p: p.read_bytes() for p in _files(watched)}

    _hook(root, project, _write(project, "second.py"))
    _hook(root, project, "garbage to provoke a log line")

    assert {p: p.read_bytes() for p in _files(watched)} == before
    result = CliRunner().invoke(main, ["doctor", "--json"], env={"CTXMODE_HOME": str(root)})
    failed = [c for c in json.loads(result.output)["checks"] if c["status"] == "fail"]
    assert "belongs to another user (uid 65534)" in json.dumps(failed)
