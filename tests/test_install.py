"""ctxmode.hosts.claude_code.install and the install/uninstall commands, on settings files in a temp HOME."""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ctxmode
from ctxmode import settings
from ctxmode.config_files import Ledger
from ctxmode.hosts import claude_code
from ctxmode.hosts.claude_code import install as installer
from ctxmode.hosts.claude_code import proof as claude_proof
from ctxmode.hosts.claude_code.install import HOOK_TABLE, InstallError, install, uninstall

# What install registers for a client of unknown version: every event but the gated ones.
CORE_TABLE = tuple(row for row in HOOK_TABLE if row[0] not in claude_code.MIN_VERSIONS)

REPO = Path(__file__).resolve().parents[1]
PACKAGE = os.path.dirname(ctxmode.__file__)
OLD_PY = "/home/dev/.local/share/ctxmode/venv-0.0.9/bin/python"
OLD_PKG = "/home/dev/.local/share/ctxmode/venv-0.0.9/lib/python3.11/site-packages/ctxmode"

REALISTIC = """{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "model": "opus",
  "permissions": {
    "allow": ["Bash(npm run test:*)"]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{"type": "command", "command": "npx prettier --write \\"$FILE\\""}]
      }
    ]
  }
}
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp HOME (never the real ~/.claude) and a neutral working directory."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    # No Claude Code on this machine as far as install can tell, whatever PATH holds:
    # the version-gated events (PostCompact) are left out unless a test says otherwise.
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "none")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return home


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "proj"
    path.mkdir()
    return path


def user_settings(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def expected_rules(python: str = sys.executable) -> list[str]:
    """The permissions.allow rule install writes: this interpreter's ctxmode's search."""
    return [f"Bash({os.path.join(os.path.dirname(python), 'ctxmode')} search:*)"]


def expected_commands(python: str = sys.executable, package: str = PACKAGE) -> dict[str, str]:
    return {
        event: f"'{os.path.abspath(python)}' -I -S '{package}/hooks/{settings.SHIMS[event]}.py'"
        for event, _, _ in HOOK_TABLE
    }


def expected_hooks(
    python: str = sys.executable,
    package: str = PACKAGE,
    table: Any = CORE_TABLE,
    background: bool = False,
) -> dict[str, Any]:
    """``background``: the captures as a client with background hooks gets them."""
    commands = expected_commands(python, package)
    hooks: dict[str, Any] = {}
    for event, timeout, matcher in table:
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        handler = {"type": "command", "command": commands[event], "timeout": timeout}
        if background and event in claude_code.BACKGROUND_EVENTS:
            handler["command"] += " --background"
            handler["async"] = True
        group["hooks"] = [handler]
        hooks[event] = [group]
    return hooks


def siblings(path: Path) -> list[str]:
    return sorted(os.listdir(path.parent))


def kept_backup(path: Path) -> Path:
    """Where ctxmode keeps ``path``'s backup: in its data root, never beside the file."""
    return Path(Ledger.load().backup_path(os.path.realpath(path)))


# --- the hook table and commands -----------------------------------------------------


def test_hook_table_is_the_decided_one() -> None:
    assert HOOK_TABLE == (
        ("PostToolUse", 10, ""),
        ("PostToolUseFailure", 10, ""),
        ("UserPromptSubmit", 10, None),
        ("PreCompact", 30, None),
        ("SessionStart", 30, "startup|resume|clear|compact|fork"),
        ("SessionEnd", 5, None),
        ("PostCompact", 10, None),
        ("Stop", 10, None),
    )
    assert claude_code.MIN_VERSIONS == {"PostCompact": (2, 1, 76)}


@pytest.mark.parametrize(
    ("python", "script", "command"),
    [
        (
            "/opt/venv/bin/python",
            "/opt/venv/lib/ctxmode/hooks/pre_compact.py",
            "'/opt/venv/bin/python' -I -S '/opt/venv/lib/ctxmode/hooks/pre_compact.py'",
        ),
        (
            "/Users/Jo Smith/Library/Application Support/ctxmode/venv/bin/python",
            "/Users/Jo Smith/x/ctxmode/hooks/session_end.py",
            "'/Users/Jo Smith/Library/Application Support/ctxmode/venv/bin/python' -I -S "
            "'/Users/Jo Smith/x/ctxmode/hooks/session_end.py'",
        ),
        (
            "/home/o'brien/venv/bin/python",
            "/home/o'brien/ctxmode/hooks/session_end.py",
            "'/home/o'\\''brien/venv/bin/python' -I -S '/home/o'\\''brien/ctxmode/hooks/session_end.py'",
        ),
        (
            r"C:\Users\me\ctxmode\venv\Scripts\python.exe",
            r"C:\Users\me\site\ctxmode\hooks\session_start.py",
            "'C:/Users/me/ctxmode/venv/Scripts/python.exe' -I -S 'C:/Users/me/site/ctxmode/hooks/session_start.py'",
        ),
    ],
)
def test_hook_command_is_quoted_for_sh(python: str, script: str, command: str) -> None:
    assert installer.hook_command(python, script) == command
    assert settings.is_ctxmode_command(command)


def test_hook_commands_run_through_sh_as_one_word_each(tmp_path: Path) -> None:
    # A path with a space, a quote and a dollar sign reaches the interpreter intact.
    odd = tmp_path / "a b'$c" / "ctxmode" / "hooks"
    odd.mkdir(parents=True)
    script = odd / "session_end.py"
    script.write_text(
        "import sys; print(sys.argv[0]); print(sys.flags.isolated, sys.flags.no_site)"
    )
    import subprocess

    out = subprocess.run(
        ["sh", "-c", installer.hook_command(sys.executable, str(script))],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out == [str(script), "1 1"]


# --- install -------------------------------------------------------------------------


def test_install_creates_the_user_settings(home: Path) -> None:
    result = install("user")
    path = user_settings(home)
    assert result.path == str(path)
    assert (result.action, result.changed, result.backup, result.hooks) == (
        "installed",
        True,
        None,
        7,
    )
    assert json.loads(path.read_text()) == {
        "hooks": expected_hooks(),
        "permissions": {"allow": expected_rules()},
    }
    assert result.permissions == tuple(expected_rules())
    assert path.read_text().endswith("}\n")
    assert siblings(path) == ["settings.json"]


def test_install_twice_changes_nothing(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    first = install("user")
    assert first.action == "installed"
    data, mtime = path.read_bytes(), path.stat().st_mtime_ns
    os.unlink(first.backup)  # type: ignore[arg-type]
    second = install("user")
    assert (second.action, second.changed, second.diff, second.backup) == (
        "unchanged",
        False,
        "",
        None,
    )
    assert path.read_bytes() == data
    assert path.stat().st_mtime_ns == mtime
    assert siblings(path) == ["settings.json"]  # no new backup either


def test_install_keeps_foreign_content_and_writes_a_backup(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    path.chmod(0o600)
    result = install("user")
    assert result.backup == str(kept_backup(path))
    assert Path(result.backup).read_text() == REALISTIC
    assert stat.S_IMODE(Path(result.backup).stat().st_mode) == 0o600
    doc = json.loads(path.read_text())
    original = json.loads(REALISTIC)
    assert doc["hooks"]["PostToolUse"][0] == original["hooks"]["PostToolUse"][0]
    original["permissions"]["allow"] += expected_rules()
    assert {k: v for k, v in doc.items() if k != "hooks"} == {
        k: v for k, v in original.items() if k != "hooks"
    }
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert siblings(path) == ["settings.json"]  # nothing of ctxmode's beside the user's file


@pytest.mark.parametrize(
    ("scope", "name"), [("project", "settings.json"), ("local", "settings.local.json")]
)
def test_project_scopes(home: Path, project: Path, scope: str, name: str) -> None:
    result = install(scope, str(project))
    path = project / ".claude" / name
    assert result.path == str(path)
    expected: dict[str, Any] = {"hooks": team_hooks()}
    if scope == "local":  # a shared file names no path of this machine: no lookup rule
        expected = {"hooks": expected_hooks(), "permissions": {"allow": expected_rules()}}
    assert json.loads(path.read_text()) == expected
    assert bool(result.permissions_note) == (scope == "project")
    assert not user_settings(home).exists()
    assert uninstall(scope, str(project)).action == "deleted"
    assert not path.exists()


def team_hooks() -> dict[str, Any]:
    hooks: dict[str, Any] = {}
    for event, timeout, matcher in CORE_TABLE:  # a shared file never names a gated event
        command = (
            "[ -x ~/.local/bin/ctxmode-hook ] && exec ~/.local/bin/ctxmode-hook "
            f"{settings.SHIMS[event]}; exit 0"
        )
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        hooks[event] = [group]
    return hooks


# --- the shared project file (--project) ---------------------------------------------


def run_sh(command: str, home: Path, stdin: str = "{}") -> Any:
    import subprocess

    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE", "CTXMODE_DIS"))}
    env["HOME"] = str(home)
    return subprocess.run(
        ["sh", "-c", command], input=stdin, capture_output=True, text=True, env=env, timeout=60
    )


def test_project_file_names_no_path_of_this_machine(home: Path, project: Path) -> None:
    result = install("project", str(project))
    text = (project / ".claude" / "settings.json").read_text()
    for private in (str(home), sys.executable, PACKAGE, os.environ["CTXMODE_HOME"]):
        assert private not in text
    assert json.loads(text) == {"hooks": team_hooks()}
    # This user's launcher runs this installation, pinned like the user-scope commands.
    launcher = home / ".local" / "bin" / "ctxmode-hook"
    assert (result.launcher, result.launcher_changed) == (str(launcher), True)
    assert os.access(launcher, os.X_OK)
    assert installer.launcher_target(launcher.read_text()) == (
        os.path.abspath(sys.executable),
        f"{PACKAGE}/hooks",
    )
    # Installing again changes nothing, launcher included.
    again = install("project", str(project))
    assert (again.action, again.changed, again.launcher_changed, again.diff) == (
        "unchanged",
        False,
        False,
        "",
    )


def test_team_commands_run_ctxmode_through_the_launcher(home: Path, project: Path) -> None:
    install("project", str(project))
    proof = claude_proof.verify(str(project / ".claude" / "settings.json"))
    assert proof.problems == []
    assert proof.ok and proof.events >= 5 and proof.claims == 1


@pytest.mark.parametrize("state", ["no launcher", "installation gone"])
def test_team_commands_are_silent_without_an_installation(
    home: Path, project: Path, tmp_path: Path, state: str
) -> None:
    """A teammate without ctxmode: every hook exits 0 and prints nothing, whatever it gets."""
    teammate = tmp_path / "teammate"
    teammate.mkdir()
    if state == "installation gone":
        gone = tmp_path / "gone"
        (teammate / ".local" / "bin").mkdir(parents=True)
        launcher = teammate / ".local" / "bin" / "ctxmode-hook"
        launcher.write_text(installer.launcher_text(str(gone / "python"), str(gone / "ctxmode")))
        launcher.chmod(0o755)
    for spec in installer.team_specs():
        for stdin in ("{}", '{"hook_event_name": "SessionStart", "source": "compact"}', "junk"):
            done = run_sh(spec.command, teammate, stdin)
            assert (done.returncode, done.stdout, done.stderr) == (0, "", ""), spec.event


def test_bench_measures_a_team_command_against_the_launchers_interpreter(
    home: Path, project: Path
) -> None:
    from ctxmode.hosts.claude_code import bench

    install("project", str(project), python="/opt/py 3/bin/python3")
    assert bench.interpreter_of(installer.team_command("post_tool_use")) == "/opt/py 3/bin/python3"


def test_launcher_refuses_unknown_hooks(home: Path, project: Path) -> None:
    install("project", str(project))
    launcher = home / ".local" / "bin" / "ctxmode-hook"
    done = run_sh(f"'{launcher}' ../../../../tmp/evil", home)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_foreign_launcher_file_is_never_overwritten(home: Path, project: Path) -> None:
    mine = write(home / ".local" / "bin" / "ctxmode-hook", "#!/bin/sh\necho mine\n")
    with pytest.raises(InstallError, match="is not ctxmode's launcher"):
        install("project", str(project))
    assert mine.read_text() == "#!/bin/sh\necho mine\n"
    assert not (project / ".claude").exists()  # nothing was written at all


def test_project_dry_run_shows_the_launcher_and_writes_nothing(home: Path, project: Path) -> None:
    result = install("project", str(project), dry_run=True)
    launcher = home / ".local" / "bin" / "ctxmode-hook"
    assert f"+++ {launcher}\n" in result.diff
    assert '+exec "$py" -I -S "$hooks/$1.py"\n' in result.diff
    assert not (home / ".local").exists()
    assert not (project / ".claude").exists()


def test_uninstalling_the_last_team_file_removes_the_launcher(
    home: Path, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    install("project", str(project))
    install("project", str(other))
    launcher = home / ".local" / "bin" / "ctxmode-hook"
    assert uninstall("project", str(project)).removed == (str(project / ".claude"),)
    assert launcher.exists()  # the other project still runs it
    result = uninstall("project", str(other))
    assert not launcher.exists()
    # The install made ~/.local/bin and ~/.local too: all of it goes, and nothing else.
    assert set(result.removed) == {
        str(other / ".claude"),
        str(launcher),
        str(home / ".local" / "bin"),
        str(home / ".local"),
    }
    assert sorted(os.listdir(home)) == []


def test_uninstall_keeps_a_launcher_folder_the_user_had(home: Path, project: Path) -> None:
    (home / ".local" / "bin").mkdir(parents=True)
    install("project", str(project))
    result = uninstall("project", str(project))
    assert set(result.removed) == {
        str(project / ".claude"),
        str(home / ".local" / "bin" / "ctxmode-hook"),
    }
    assert (home / ".local" / "bin").is_dir()


def test_user_scope_follows_claude_config_dir(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-alt"))
    assert install("user").path == str(tmp_path / "claude-alt" / "settings.json")
    assert not user_settings(home).exists()


@pytest.mark.parametrize(
    ("scope", "directory", "message"),
    [
        ("project", None, "the project scope needs a project directory"),
        (
            "local",
            "/nonexistent/ctxmode-test-dir",
            "project directory not found: /nonexistent/ctxmode-test-dir",
        ),
        ("global", None, "unknown scope 'global'"),
    ],
)
def test_bad_scopes(home: Path, scope: str, directory: str | None, message: str) -> None:
    with pytest.raises(InstallError, match=message):
        install(scope, directory)


def test_dry_run_writes_nothing(home: Path) -> None:
    path = user_settings(home)
    result = install("user", dry_run=True)
    assert (result.action, result.changed, result.dry_run, result.backup) == (
        "installed",
        True,
        True,
        None,
    )
    assert result.diff.startswith(
        f'--- {path}\n+++ {path}\n@@ -0,0 +1,89 @@\n+{{\n+  "hooks": {{\n'
    )
    assert f'+      "{expected_rules()[0]}"\n' in result.diff
    assert not path.exists()
    write(path, REALISTIC)
    result = install("user", dry_run=True)
    assert path.read_text() == REALISTIC
    assert siblings(path) == ["settings.json"]
    added = [
        line
        for line in result.diff.splitlines()
        if line.startswith("+") and not line.startswith("+++")
    ]
    removed = [
        line
        for line in result.diff.splitlines()
        if line.startswith("-") and not line.startswith("---")
    ]
    # Pure additions, but for the user's one-line allow array, which gains the lookup rule
    # on the same line: no other foreign line is touched.
    allow = '    "allow": ["Bash(npm run test:*)"'
    assert removed == [f"-{allow}]"]
    assert f'+{allow}, "{expected_rules()[0]}"]' in added
    assert added[1:3] == ["+      },", "+      {"]


def test_upgrade_from_a_stale_path(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    install("user", python=OLD_PY, package_dir=OLD_PKG)
    result = install("user")
    assert result.action == "updated"
    text = path.read_text()
    assert "venv-0.0.9" not in text
    assert [r.command for r in settings.registrations(text)] == [
        expected_commands()[event] for event, _, _ in CORE_TABLE
    ]
    # The backup is still the user's file before ctxmode's entries came in.
    assert result.backup is None
    assert kept_backup(path).read_text() == REALISTIC
    assert uninstall("user").action == "removed"
    assert path.read_text() == REALISTIC


# --- events only newer clients know (PostCompact) --------------------------------------


@pytest.mark.parametrize(
    ("version", "registered"),
    [
        ((2, 1, 197), True),
        ((2, 1, 76), True),
        ((2, 1, 75), False),  # would skip the whole settings file
        (None, False),  # unknown: nothing the client might not know
    ],
)
def test_postcompact_is_registered_only_for_a_client_that_has_it(
    home: Path, version: tuple[int, ...] | None, registered: bool
) -> None:
    path = write(user_settings(home), REALISTIC)
    result = install("user", version=version)
    hooks = json.loads(path.read_text())["hooks"]
    assert ("PostCompact" in hooks) is registered
    assert result.hooks == (8 if registered else 7)
    assert result.skipped == (() if registered else ("PostCompact",))
    assert result.client_version == version
    if not registered:
        assert "PostCompact needs Claude Code 2.1.76" in result.skipped_why
    # Either way, uninstall gives back the file byte for byte.
    assert uninstall("user").action == "removed"
    assert path.read_text() == REALISTIC


def test_a_newer_client_gets_postcompact_added_and_an_older_one_removed(home: Path) -> None:
    path = user_settings(home)
    install("user", version=(2, 1, 50))
    assert "PostCompact" not in json.loads(path.read_text())["hooks"]
    assert install("user", version=(2, 1, 197)).action == "updated"
    assert json.loads(path.read_text())["hooks"] == expected_hooks(
        table=HOOK_TABLE, background=True
    )
    # Back to an older client (a downgrade): the entry it would reject goes.
    install("user", version=(2, 1, 50))
    assert json.loads(path.read_text())["hooks"] == expected_hooks(background=True)


def test_the_shared_project_file_never_names_postcompact(home: Path, project: Path) -> None:
    result = install("project", str(project), version=(2, 1, 197))
    assert (
        "PostCompact"
        not in json.loads((project / ".claude" / "settings.json").read_text())["hooks"]
    )
    assert result.skipped == ("PostCompact",)
    assert "a teammate's older client would skip the whole shared file" in result.skipped_why


def test_client_version_from_the_environment_or_claude_on_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert claude_code.parse_version("2.1.197 (Claude Code)\n") == (2, 1, 197)
    assert claude_code.parse_version("Claude Code") is None
    assert installer.client_version({"CTXMODE_CLAUDE_VERSION": "2.1.80"}) == (2, 1, 80)
    assert installer.client_version({"CTXMODE_CLAUDE_VERSION": "none"}) is None
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "claude"
    fake.write_text("#!/bin/sh\necho '2.1.76 (Claude Code)'\n")
    fake.chmod(0o755)
    assert installer.client_version({"PATH": str(bin_dir)}) == (2, 1, 76)
    fake.write_text("#!/bin/sh\nexit 3\n")
    assert installer.client_version({"PATH": str(bin_dir)}) is None
    assert installer.client_version({"PATH": str(tmp_path / "nowhere")}) is None


def test_cli_says_when_the_client_is_too_old(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.50")
    result = cli("install")
    assert result.exit_code == 0, result.output
    assert (
        "note: PostCompact not registered: PostCompact needs Claude Code 2.1.76; this machine "
        "runs 2.1.50"
    ) in result.output
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.197")
    result = cli("install")
    assert "note:" not in result.output
    assert "PostCompact" in json.loads(user_settings(home).read_text())["hooks"]


# --- refusals ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{\n  "model": "opus"\n  "hooks": {}\n}\n', "line 3, column 3"),
        ('{\n  // personal settings\n  "model": "opus"\n}\n', "line 2, column 3: a comment"),
        ('{\n  "model": "opus",\n}\n', "line 2, column 18: a trailing comma"),
        ("[1, 2]\n", "not a JSON object"),
        (
            '{"hooks": {"SessionStart": {"matcher": "startup"}}}',
            '"hooks.SessionStart" is not a JSON array',
        ),
    ],
)
@pytest.mark.parametrize("operation", ["install", "uninstall"])
def test_unusable_settings_are_left_untouched(
    home: Path, text: str, message: str, operation: str
) -> None:
    path = write(user_settings(home), text)
    before = path.stat().st_mtime_ns
    func = install if operation == "install" else uninstall
    if operation == "uninstall" and "hooks.SessionStart" in message:
        message = "not installed"  # uninstall has nothing of ours to look for in there
        assert func("user").action == message
    else:
        with pytest.raises(InstallError, match=message):
            func("user")
    assert path.read_text() == text
    assert path.stat().st_mtime_ns == before
    assert siblings(path) == ["settings.json"]


def test_non_utf8_settings_are_refused(home: Path) -> None:
    path = user_settings(home)
    path.parent.mkdir()
    path.write_bytes(b'{"model": "caf\xe9"}')
    with pytest.raises(InstallError, match="not UTF-8"):
        install("user")
    assert path.read_bytes() == b'{"model": "caf\xe9"}'


def test_symlinked_settings_are_written_through(home: Path, tmp_path: Path) -> None:
    dotfiles = write(tmp_path / "dotfiles" / "claude-settings.json", REALISTIC)
    link = user_settings(home)
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    assert install("user").backup == str(kept_backup(link))
    assert link.is_symlink()
    assert os.listdir(link.parent) == ["settings.json"]
    assert settings.registrations(dotfiles.read_text())
    assert os.listdir(dotfiles.parent) == ["claude-settings.json"]
    uninstall("user")
    assert link.is_symlink()
    assert dotfiles.read_text() == REALISTIC


# --- uninstall -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "original",
    [
        REALISTIC,
        "{}\n",
        "{ }",
        '{\n  "hooks": {}\n}\n',
        '{\n  "hooks": {\n    "SessionStart": []\n  }\n}\n',
        '{\n\t"model": "opus"\n}',
    ],
)
def test_uninstall_after_install_restores_the_original_bytes(home: Path, original: str) -> None:
    path = write(user_settings(home), original)
    install("user")
    result = uninstall("user")
    assert (result.action, result.backup) == ("removed", None)
    assert path.read_bytes() == original.encode()
    assert siblings(path) == ["settings.json"]  # the backup has served and is gone


def test_uninstall_keeps_changes_made_after_install(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    install("user")
    edited = path.read_text().replace('"model": "opus"', '"model": "sonnet"')
    path.write_text(edited)
    result = uninstall("user")
    assert result.action == "removed"
    assert path.read_text() == REALISTIC.replace('"model": "opus"', '"model": "sonnet"')
    assert Path(result.backup).read_text() == edited  # type: ignore[arg-type]


def test_uninstall_deletes_a_file_ctxmode_created(home: Path) -> None:
    install("user")
    result = uninstall("user")
    assert result.action == "deleted"
    # ~/.claude was made by the install: it goes too (empty), and nothing else.
    assert result.removed == (str(home / ".claude"),)
    assert os.listdir(home) == []


@pytest.mark.parametrize("scope", ["project", "local"])
def test_uninstall_removes_the_claude_folder_install_created(
    home: Path, project: Path, scope: str
) -> None:
    install(scope, str(project))
    assert (project / ".claude").is_dir()
    result = uninstall(scope, str(project))
    assert str(project / ".claude") in result.removed
    assert os.listdir(project) == []


def test_uninstall_keeps_a_claude_folder_the_user_had(home: Path, project: Path) -> None:
    (project / ".claude").mkdir()  # the user's, empty
    install("local", str(project))
    result = uninstall("local", str(project))
    assert (result.action, result.removed) == ("deleted", ())
    assert (project / ".claude").is_dir()


def test_uninstall_keeps_a_claude_folder_that_holds_something(home: Path, project: Path) -> None:
    install("local", str(project))
    write(project / ".claude" / "commands" / "review.md", "Review the diff\n")
    result = uninstall("local", str(project))
    assert (result.action, result.removed) == ("deleted", ())
    assert os.listdir(project / ".claude") == ["commands"]
    # ...and once that is gone, the next uninstall does not come back for the folder.
    install("local", str(project))
    assert uninstall("local", str(project)).removed == ()


def test_uninstall_of_another_scope_leaves_the_folder(home: Path, project: Path) -> None:
    install("project", str(project))
    install("local", str(project))
    assert uninstall("local", str(project)).removed == ()
    assert (project / ".claude" / "settings.json").exists()
    assert str(project / ".claude") in uninstall("project", str(project)).removed


def test_uninstall_dry_run_writes_nothing(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    install("user")
    installed = path.read_text()
    result = uninstall("user", dry_run=True)
    assert result.changed and result.dry_run
    assert '-            "command": ' in result.diff
    assert path.read_text() == installed
    assert siblings(path) == ["settings.json"]
    assert kept_backup(path).read_text() == REALISTIC


@pytest.mark.parametrize("text", [None, REALISTIC])
def test_uninstall_when_not_installed(home: Path, text: str | None) -> None:
    if text is not None:
        write(user_settings(home), text)
    result = uninstall("user")
    assert (result.action, result.changed) == ("not installed", False)
    if text is not None:
        assert user_settings(home).read_text() == text


# --- double registration ----------------------------------------------------------


def test_warns_when_the_plugin_is_enabled(home: Path, project: Path) -> None:
    write(user_settings(home), '{"enabledPlugins": {"ctxmode@ctxmode-local": true}}\n')
    result = install("project", str(project))
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(
        "the ctxmode plugin (ctxmode@ctxmode-local) is enabled in ~/.claude/settings.json"
    )


def test_warns_when_another_scope_has_ctxmode_hooks(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install("user", python=OLD_PY, package_dir=OLD_PKG)
    result = install("local", str(project))
    assert result.warnings == (
        "ctxmode hooks are also registered in ~/.claude/settings.json (7 handlers): "
        "where the commands differ, both copies run",
    )
    # From inside the project, a user-scope install sees the project's local copy.
    monkeypatch.chdir(project)
    assert install("user").warnings == (
        f"ctxmode hooks are also registered in {project}/.claude/settings.local.json (7 handlers): "
        "where the commands differ, both copies run",
    )


def test_no_warning_for_a_single_registration(home: Path) -> None:
    assert install("user").warnings == ()


def test_warns_about_ctxmode_in_managed_settings(home: Path, tmp_path: Path) -> None:
    managed = write(
        tmp_path / "etc" / "managed-settings.json",
        json.dumps({"hooks": expected_hooks(OLD_PY, OLD_PKG)}),
    )
    assert install("user", managed=str(managed)).warnings == (
        f"ctxmode hooks are also registered in {managed} (7 handlers): "
        "where the commands differ, both copies run",
    )
    write(managed, '{"enabledPlugins": {"ctxmode@corp": true}}')
    (warning,) = install("user", managed=str(managed)).warnings
    assert warning.startswith(f"the ctxmode plugin (ctxmode@corp) is enabled in {managed}: ")


def test_warns_about_the_local_file_from_a_project_subfolder(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / ".git").mkdir()
    (project / "src").mkdir()
    install("local", str(project), python=OLD_PY, package_dir=OLD_PKG)
    monkeypatch.chdir(project / "src")  # the hooks' project is the enclosing checkout
    assert install("user").warnings == (
        f"ctxmode hooks are also registered in {project}/.claude/settings.local.json "
        "(7 handlers): where the commands differ, both copies run",
    )


# --- the proof run -----------------------------------------------------------------


def test_verify_reports_failing_commands(home: Path) -> None:
    path = user_settings(home)
    install("user", python="/bin/false")
    result = claude_proof.verify(str(path))
    assert not result.ok
    assert result.calls == 11
    assert "PostToolUse exited 1" in result.problems
    assert result.events == 0


def test_verify_reports_missing_handlers(home: Path) -> None:
    path = write(user_settings(home), REALISTIC)
    result = claude_proof.verify(str(path))
    assert result.problems == [
        "no ctxmode handler for PostToolUse, PostToolUseFailure, UserPromptSubmit, PreCompact, "
        f"SessionStart, SessionEnd, Stop in {path}"
    ]


def test_verify_runs_the_installed_hooks_in_a_throwaway_store(home: Path, data_root: Path) -> None:
    install("user")
    result = claude_proof.verify(str(user_settings(home)))
    assert result.problems == []
    assert result.calls == 11
    assert result.snapshot_ok
    assert result.events >= 5  # prompt, write, task, error, edit, commit ... at the least
    assert result.claims == 1 and result.snapshot_bytes > 200
    # The real (here: test) data root holds nothing but the install's note of what it
    # made (~/.claude and its settings.json): the proof run used a throwaway one.
    assert [p.name for p in data_root.iterdir()] == ["installed.json"]


# --- the CLI -------------------------------------------------------------------------


def cli(*args: str) -> Any:
    from ctxmode.cli import install_cmd

    command = {"install": install_cmd.install, "uninstall": install_cmd.uninstall}[args[0]]
    return CliRunner().invoke(command, list(args[1:]), catch_exceptions=False)


def test_cli_install_and_uninstall(home: Path) -> None:
    write(user_settings(home), REALISTIC)
    result = cli("install")
    assert result.exit_code == 0
    allowed = f"; the snapshot's lookups run without asking: {expected_rules()[0]}\n"
    assert (
        result.output
        == f"ctxmode {ctxmode.__version__} installed: 7 hooks in ~/.claude/settings.json{allowed}"
    )
    result = cli("install", "--user")
    assert result.output == (
        f"ctxmode {ctxmode.__version__} already installed: 7 hooks in ~/.claude/settings.json"
        + allowed
    )
    result = cli("uninstall")
    assert result.exit_code == 0
    assert result.output == "ctxmode hooks removed from ~/.claude/settings.json\n"
    assert user_settings(home).read_text() == REALISTIC
    result = cli("uninstall")
    assert result.output == "ctxmode is not installed in ~/.claude/settings.json: nothing changed\n"


def test_cli_dry_run_prints_a_diff(home: Path, project: Path) -> None:
    result = cli("install", "--project", str(project), "--dry-run")
    assert result.exit_code == 0
    path = project / ".claude" / "settings.json"
    assert result.output.startswith(f"--- {path}\n+++ {path}\n@@ -0,0 +1,84 @@\n+{{\n")
    assert not path.exists()
    result = cli("uninstall", "--project", str(project), "--dry-run")
    assert result.output == f"nothing to change: ctxmode is not installed in {path}\n"


def test_cli_upgrade_and_local_scope(home: Path, project: Path) -> None:
    install("local", str(project), python=OLD_PY, package_dir=OLD_PKG)
    result = cli("install", "--local", str(project))
    assert result.output == (
        f"ctxmode {ctxmode.__version__} updated: 7 hooks in {project}/.claude/settings.local.json"
        f" (old entries replaced); the snapshot's lookups run without asking: {expected_rules()[0]}\n"
    )
    result = cli("uninstall", "--local", str(project))
    assert result.output == (
        f"ctxmode hooks removed: {project}/.claude/settings.local.json deleted (ctxmode had "
        f"created it); also removed what ctxmode install had made: {project}/.claude\n"
    )


def test_cli_errors(home: Path, project: Path) -> None:
    write(user_settings(home), '{\n  "model": "opus",\n}\n')
    result = cli("install")
    assert result.exit_code == 1
    assert result.output.startswith(
        f"Error: {user_settings(home)}: line 2, column 18: a trailing comma"
    )
    result = cli("install", "--project", str(project), "--local", str(project))
    assert result.exit_code == 2
    assert "choose one scope, not --project and --local" in result.output


def test_cli_warnings_go_to_stderr(home: Path, project: Path) -> None:
    write(user_settings(home), '{"enabledPlugins": {"ctxmode@dev": true}}\n')
    from ctxmode.cli import install_cmd

    try:
        runner = CliRunner(mix_stderr=False)  # type: ignore[call-arg]  # click < 8.2
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(install_cmd.install, ["--project", str(project)])
    assert result.exit_code == 0
    assert result.stderr.startswith("warning: the ctxmode plugin (ctxmode@dev) is enabled in ")
    assert result.stdout == (
        f"{project}/.claude/settings.json is shared with your team: its hooks run "
        "~/.local/bin/ctxmode-hook (written now, it runs this installation); a teammate's "
        "hooks do nothing until they run `ctxmode install --project DIR` (or ./install.sh "
        "--project DIR) in their checkout\n"
        f"ctxmode {ctxmode.__version__} installed: 7 hooks in {project}/.claude/settings.json\n"
    )


def test_cli_verify(home: Path) -> None:
    result = cli("install", "--verify")
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert re.fullmatch(
        rf"ctxmode {re.escape(ctxmode.__version__)} installed: 7 hooks in "
        r"~/\.claude/settings\.json; the snapshot's lookups run without asking: "
        rf"{re.escape(expected_rules()[0])}; verified: 11 hook calls of a sample session through them "
        r"stored \d+ events, and its \d+-byte snapshot was injected after compaction, "
        r"claimed once",
        line,
    ), line


def test_commands_are_registered() -> None:
    from ctxmode.cli import commands

    names = {command.name for command in commands.all_commands()}
    assert {"install", "uninstall"} <= names


# --- the Claude Code plugin --------------------------------------------------------


def test_plugin_manifest() -> None:
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "ctxmode"
    assert manifest["version"] == ctxmode.__version__
    assert manifest["description"]
    assert "hooks" not in manifest  # hooks/hooks.json is loaded from its standard place


def test_plugin_hooks_point_at_files_that_exist() -> None:
    doc = json.loads((REPO / "hooks" / "hooks.json").read_text())
    prefix = 'python3 -I -S "${CLAUDE_PLUGIN_ROOT}/'
    seen = {}
    for event, groups in doc["hooks"].items():
        assert len(groups) == 1 and len(groups[0]["hooks"]) == 1
        handler = groups[0]["hooks"][0]
        assert handler["type"] == "command"
        command = handler["command"]
        assert command.startswith(prefix) and command.endswith('"')
        relative = command[len(prefix) : -1]
        assert relative == f"hooks/{settings.SHIMS[event]}.py"
        assert (REPO / relative).is_file(), relative
        seen[event] = (handler["timeout"], groups[0].get("matcher"))
    assert seen == {event: (timeout, matcher) for event, timeout, matcher in HOOK_TABLE}


def test_install_refuses_a_package_without_its_hook_scripts(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "site" / "ctxmode"
    (fake / "hooks").mkdir(parents=True)
    (fake / "hooks" / "session_start.py").write_text("")
    monkeypatch.setattr(ctxmode, "__file__", str(fake / "__init__.py"))
    with pytest.raises(
        InstallError, match=r"hook scripts missing from .*/site/ctxmode/hooks: post_tool_use\.py, "
    ):
        install("user")
    assert not user_settings(home).exists()


# --- finding the client where PATH does not have it ---------------------------------------


def _fake_claude(path: Path, version: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{version} (Claude Code)'\n")
    path.chmod(0o755)
    return path


def _no_system_claude() -> None:
    for folder in ("/usr/local/bin", "/opt/homebrew/bin", "/home/linuxbrew/.linuxbrew/bin"):
        if os.path.exists(os.path.join(folder, "claude")):
            pytest.skip(f"this machine has {folder}/claude: the not-found case cannot be staged")


@pytest.mark.parametrize(
    "where",
    [
        ".local/bin/claude",  # the native installer
        ".claude/local/claude",  # `claude migrate-installer`'s per-user npm install
        "npm-prefix/bin/claude",  # npm install -g with a user prefix (~/.npmrc)
        ".nvm/versions/node/v22.11.0/bin/claude",  # npm install -g under nvm
    ],
)
def test_the_client_is_found_where_its_installers_put_it(tmp_path: Path, where: str) -> None:
    _no_system_claude()
    home = tmp_path / "home"
    fake = _fake_claude(home / where, "2.1.197")
    (home / ".nvm" / "versions" / "node" / "v18.0.0" / "bin").mkdir(parents=True)
    (home / ".npmrc").write_text(f"fund=false\nprefix={home / 'npm-prefix'}\n")
    env = {"HOME": str(home), "PATH": str(tmp_path / "empty")}
    found = installer.find_client(env)
    assert (found.version, found.path, found.pinned) == ((2, 1, 197), str(fake), False)
    assert installer.client_version(env) == (2, 1, 197)


def test_an_install_without_the_client_keeps_what_the_earlier_one_registered(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_system_claude()
    path = write(user_settings(home), REALISTIC)
    install("user", version=(2, 1, 197))  # PostCompact, captures in the background
    registered = path.read_text()
    # Another shell: no claude on PATH, none where installers put it, no version pinned.
    monkeypatch.delenv(installer.CLIENT_VERSION_ENV)
    monkeypatch.setenv("PATH", str(home / "empty"))
    result = cli("install")
    assert result.exit_code == 0, result.output
    assert path.read_text() == registered  # nothing taken back
    assert (
        "note: Claude Code was not found (not on PATH, nor where its installers put it): kept "
        "what the earlier install registered (PostCompact, captures in the background)"
    ) in result.output
    assert "already installed" in result.output


def test_an_update_says_what_changed_and_for_which_client(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_system_claude()
    write(user_settings(home), REALISTIC)
    install("user", version=(2, 1, 10))  # an old client: no PostCompact, foreground
    monkeypatch.delenv(installer.CLIENT_VERSION_ENV)
    monkeypatch.setenv("PATH", str(home / "empty"))
    _fake_claude(home / ".local" / "bin" / "claude", "2.1.197")
    result = cli("install")
    assert result.exit_code == 0, result.output
    assert (
        "(old entries replaced: PostCompact added, captures now in the background, for "
        "Claude Code 2.1.197 found at ~/.local/bin/claude)"
    ) in result.output
    hooks = json.loads(user_settings(home).read_text())["hooks"]
    assert "PostCompact" in hooks
