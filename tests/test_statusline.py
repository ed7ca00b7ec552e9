"""The status line: its shim run as Claude Code runs it, its words, and its installation."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import ctxmode
from ctxmode.hosts.claude_code import install as installer
from ctxmode.hosts.claude_code import settings_statusline
from tests.helpers import cli
from tests.hooktools import REPO, hook_env

SHIM = REPO / "ctxmode" / "hooks" / "statusline.py"
SESSION = "5f0c1d2e-0000-4000-8000-00000000057a"


def status_payload(cwd: Path | str, session_id: str = SESSION, used: object = 71.4) -> dict:
    """A statusLine payload of Claude Code 2.1.197: the hooks' common fields (no event name),
    then the status fields (the shape its /statusline prompt documents and its code sends)."""
    return {
        "session_id": session_id,
        "transcript_path": f"/home/dev/.claude/projects/x/{session_id}.jsonl",
        "cwd": str(cwd),
        "prompt_id": "684c342a-ea78-4e5b-8062-ff559f43d4ac",
        "model": {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"},
        "workspace": {"current_dir": str(cwd), "project_dir": str(cwd), "added_dirs": []},
        "version": "2.1.197",
        "output_style": {"name": "default"},
        "cost": {"total_cost_usd": 0.12, "total_duration_ms": 5000},
        "context_window": {
            "total_input_tokens": 142_000,
            "total_output_tokens": 800,
            "context_window_size": 200_000,
            "current_usage": None,
            "used_percentage": used,
            "remaining_percentage": None if used is None else 28.6,
        },
        "exceeds_200k_tokens": False,
        "fast_mode": False,
        "thinking": {"enabled": False},
    }


def run_status(
    stdin: bytes | dict, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    data = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
    return subprocess.run(
        [sys.executable, "-I", "-S", str(SHIM), *args],
        input=data,
        capture_output=True,
        env=env if env is not None else hook_env(),
        timeout=30,
        check=False,
    )


def quiet_line(result: subprocess.CompletedProcess[bytes]) -> str:
    """The printed line, after checking the contract: exit 0, no stderr, one line at most."""
    assert result.returncode == 0
    assert result.stderr == b""
    text = result.stdout.decode()
    assert text.count("\n") <= 1
    return text.strip()


def record_session(project: Path, *, compact: bool, claim: bool) -> None:
    """A session in the project's store: a prompt and an edit, then maybe a compaction
    whose snapshot is stored (and maybe claimed), written with the store's own API."""
    from ctxmode import paths
    from ctxmode.events import SessionEvent
    from ctxmode.store import Store

    path = paths.store_path(str(project), os.environ)
    paths.ensure_dir(os.path.dirname(path))
    store = Store.open(path)
    try:
        events = [
            SessionEvent("user_prompt", "prompt", 1, '{"text":"Fix the parser"}'),
            SessionEvent("file_edit", "file", 2, '{"path":"a.py"}'),
        ]
        store.add_events(SESSION, events, source_hook="PostToolUse", project_dir=str(project))
        if compact:
            store.save_resume(SESSION, "<session_resume/>", 2)
        if claim:
            assert store.claim_resume(claimed_by=SESSION, session_id=SESSION) is not None
    finally:
        store.close()


# --- the contract -----------------------------------------------------------------


@pytest.mark.parametrize(
    "stdin",
    [b"", b"garbage", b"\xff\xfe\x00binary", b"[1, 2]", b'"text"', b"null", b"{", b"x" * 2_000_000],
)
def test_garbage_prints_nothing_and_exits_0(stdin: bytes) -> None:
    assert quiet_line(run_status(stdin)) == ""


def test_odd_fields_still_give_a_safe_line(tmp_path: Path) -> None:
    odd = {
        "session_id": 42,
        "cwd": ["x"],
        "workspace": "nope",
        "context_window": {"used_percentage": "71"},
    }
    assert quiet_line(run_status(odd)) == "ctx 0 ev"
    nan = status_payload(tmp_path, used=float("nan"))
    assert quiet_line(run_status(json.dumps(nan).encode())) == "ctx 0 ev"


def test_a_project_with_nothing_recorded(project: Path) -> None:
    assert quiet_line(run_status(status_payload(project))) == "ctx 0 ev · 71% context"
    assert quiet_line(run_status(status_payload(project, used=None))) == "ctx 0 ev"


def test_counts_a_recorded_session_and_its_waiting_snapshot(project: Path) -> None:
    record_session(project, compact=True, claim=False)
    line = quiet_line(run_status(status_payload(project, used=71.4)))
    assert line == "ctx 2 ev · snapshot ready · 1 compaction · 71% context"


def test_says_when_the_snapshot_was_restored(project: Path) -> None:
    record_session(project, compact=True, claim=True)
    line = quiet_line(run_status(status_payload(project, used=3)))
    assert line.startswith("ctx ") and "snapshot restored · 1 compaction · 3% context" in line


def test_another_session_of_the_project_counts_nothing(project: Path) -> None:
    record_session(project, compact=False, claim=False)
    other = status_payload(project, session_id="someone-else", used=None)
    assert quiet_line(run_status(other)) == "ctx 0 ev"


def test_switched_off(project: Path) -> None:
    env = hook_env(CTXMODE_DISABLE="1")
    assert quiet_line(run_status(status_payload(project), env=env)) == "ctx off · 71% context"
    (project / ".ctxmode-ignore").write_text("")
    assert quiet_line(run_status(status_payload(project, used=None))) == "ctx off"


def test_a_store_that_is_not_a_database_is_a_question_mark(project: Path) -> None:
    record_session(project, compact=False, claim=False)
    from ctxmode import paths

    store = Path(paths.store_path(str(project), os.environ))
    for side in (store.with_name(store.name + "-wal"), store.with_name(store.name + "-shm")):
        side.unlink(missing_ok=True)
    store.write_bytes(b"not a database at all" * 100)
    assert quiet_line(run_status(status_payload(project, used=None))) == "ctx ?"


def test_composes_after_the_users_own_line(project: Path) -> None:
    theirs = 'read -r x; printf \'[Opus] %s\\n\' "$(printf %s "$x" | cut -c1-14)"'
    line = quiet_line(run_status(status_payload(project), "--then", theirs))
    assert line == '[Opus] {"session_id": · ctx 0 ev · 71% context'


def test_a_failing_own_line_leaves_ctxmode_alone(project: Path) -> None:
    assert quiet_line(run_status(status_payload(project), "--then", "echo no >&2; exit 3")) == (
        "ctx 0 ev · 71% context"
    )
    # Garbage for ctxmode is still their input: their line shows alone.
    assert quiet_line(run_status(b"garbage", "--then", "cat")) == "garbage"


def test_the_cli_alias_prints_the_same_line(project: Path) -> None:
    result = cli("statusline", input=json.dumps(status_payload(project)))
    assert result.exit_code == 0
    assert result.output == "ctx 0 ev · 71% context\n"


def test_the_shim_stays_on_the_hook_budget(project: Path) -> None:
    """-X importtime of a real run: none of the modules a hook must not load."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-I", "-S", str(SHIM)],
        input=json.dumps(status_payload(project)).encode(),
        capture_output=True,
        env=hook_env(),
        timeout=30,
    )
    assert result.returncode == 0
    loaded = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert loaded
    heavy = {"json", "sqlite3", "typing", "click", "re", "subprocess", "orjson", "platformdirs"}
    assert not loaded & heavy, sorted(loaded & heavy)


# --- the installation ---------------------------------------------------------------


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CTXMODE_CLAUDE_VERSION", "2.1.197")
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    return home


THEIRS = """{
  "model": "opus",
  "statusLine": {
    "type": "command",
    "command": "~/.claude/statusline.sh 'a b'",
    "padding": 0
  }
}
"""


def ours() -> str:
    return installer.statusline_command()


def test_install_sets_the_status_line_and_uninstall_removes_it(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    result = installer.install("user", statusline=True)
    assert result.statusline == "added"
    value = json.loads(path.read_text())
    assert value["statusLine"] == {"type": "command", "command": ours()}
    assert f"{ctxmode.__file__.rsplit('/', 1)[0]}/hooks/statusline.py" in ours()
    assert installer.install("user", statusline=True).action == "unchanged"
    done = installer.uninstall("user")
    assert done.statusline == "removed"
    assert not path.exists()  # ctxmode had created it


def test_install_composes_with_the_users_line_and_uninstall_restores_it_byte_for_byte(
    home: Path,
) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(THEIRS)
    result = installer.install("user", statusline=True)
    assert result.statusline == "composed"
    line = json.loads(path.read_text())["statusLine"]
    assert line["padding"] == 0 and line["type"] == "command"
    assert line["command"] == f"{ours()} --then '~/.claude/statusline.sh '\\''a b'\\'''"
    # The composed command, run as Claude Code runs it, runs theirs (a missing script
    # here: it fails, so ctxmode's line shows alone) and never fails itself.
    run = subprocess.run(
        ["sh", "-c", line["command"]],
        input=json.dumps(status_payload(home)).encode(),
        capture_output=True,
        env=hook_env(HOME=str(home)),
        timeout=30,
    )
    assert (run.returncode, run.stderr, run.stdout) == (0, b"", b"ctx 0 ev \xc2\xb7 71% context\n")
    installer.uninstall("user")
    assert path.read_text() == THEIRS


def test_uninstall_after_other_edits_still_gives_their_line_back(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(THEIRS)
    installer.install("user", statusline=True)
    path.write_text(path.read_text().replace('"opus"', '"sonnet"'))
    installer.uninstall("user")
    assert path.read_text() == THEIRS.replace('"opus"', '"sonnet"')


def test_a_plain_install_keeps_an_installed_status_line_current(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    stale = "'/old/venv/bin/python' -I -S '/old/site-packages/ctxmode/hooks/statusline.py'"
    path.parent.mkdir()
    path.write_text(json.dumps({"statusLine": {"type": "command", "command": stale}}, indent=2))
    result = installer.install("user")
    assert result.statusline == "updated"
    assert json.loads(path.read_text())["statusLine"]["command"] == ours()
    plain = home / "plain.json"
    plain.write_text("{}\n")
    assert installer.install("user").statusline == "unchanged"


def test_no_status_line_unless_asked(home: Path) -> None:
    installer.install("user")
    value = json.loads((home / ".claude" / "settings.json").read_text())
    assert "statusLine" not in value


def test_a_shared_project_file_gets_no_status_line(home: Path, tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    with pytest.raises(installer.InstallError, match="--user or --local"):
        installer.install("project", str(tmp_path / "proj"), statusline=True)


def test_a_status_line_that_is_not_a_command_is_left_alone(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    text = '{"statusLine": {"type": "static", "text": "hi"}}\n'
    path.write_text(text)
    with pytest.raises(installer.InstallError, match="not a command status line"):
        installer.install("user", statusline=True)
    assert path.read_text() == text


def test_the_cli_flag(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{"model": "opus"}\n')
    result = cli("install", "--statusline")
    assert result.exit_code == 0, result.output
    assert "status line set" in result.output
    result = cli("uninstall")
    assert "status line removed" in result.output
    assert path.read_text() == '{"model": "opus"}\n'


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{}",
        '{"a": 1}',
        '{"statusLine": {"command": "echo x", "type": "command"}, "b": [1]}',
        '{"statusLine":{"type":"command","command":"x \\"y\\" \'z\'"}}',
    ],
)
def test_merge_and_unmerge_are_inverses(text: str) -> None:
    merged = settings_statusline.merge(text, ours())
    assert settings_statusline.is_ours(settings_statusline.current(merged))
    assert settings_statusline.merge(merged, ours()) == merged
    back = settings_statusline.unmerge(merged)
    assert back == text or (text == "" and json.loads(back) == {})
