"""``ctxmode doctor``: a healthy install is all ok; each kind of breakage is reported."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import ctxmode
from ctxmode import config, doctor, hooklog, paths
from ctxmode.cli import main
from ctxmode.events import make
from ctxmode.hosts.claude_code import install as installer
from ctxmode.store import Store, iso_utc
from tests.hooktools import hook_command, hook_env

REPO = Path(__file__).resolve().parents[1]
OLD_PY = "/home/dev/.local/share/ctxmode/venv-0.0.9/bin/python"
OLD_PKG = "/home/dev/.local/share/ctxmode/venv-0.0.9/lib/python3.11/site-packages/ctxmode"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temp HOME (never the real ~/.claude)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CTXMODE_NO_FTS", raising=False)
    # No client version known (whatever PATH holds): PostCompact is neither registered
    # nor expected unless a test says which Claude Code runs.
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "none")
    return home


@pytest.fixture
def project(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "proj"
    (path / ".git").mkdir(parents=True)
    monkeypatch.chdir(path)
    return path


def checks(
    project: Path, now: float | None = None, managed: Path | None = None
) -> dict[str, doctor.Check]:
    ctx = doctor.Context(
        env=dict(os.environ),
        project_dir=str(project),
        now=time.time() if now is None else now,
        # Never this machine's own policy file: a test's, or one that does not exist.
        managed_settings=str(managed or project / "no-managed-settings.json"),
    )
    found = doctor.run_all(ctx)
    names = [check.name for check in found]
    assert len(names) == len(set(names)), names
    return {check.name: check for check in found}


def statuses(project: Path) -> dict[str, str]:
    return {name: check.status for name, check in checks(project).items()}


def settings_file(home: Path, value: dict[str, Any]) -> Path:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, indent=2))
    return path


def record_session(project: Path) -> None:
    """A few real hook calls into the (test) data root, so the project has a store."""
    env = hook_env(CLAUDE_PROJECT_DIR=str(project))
    base = {"session_id": "s-1", "cwd": str(project), "transcript_path": "/dev/null"}
    calls = [
        ("SessionStart", {**base, "hook_event_name": "SessionStart", "source": "startup"}),
        (
            "UserPromptSubmit",
            {**base, "hook_event_name": "UserPromptSubmit", "prompt": "Add a hello module"},
        ),
        (
            "PostToolUse",
            {
                **base,
                "hook_event_name": "PostToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": f"{project}/hello.py", "content": "x"},
                "tool_response": {"type": "create", "filePath": f"{project}/hello.py"},
                "tool_use_id": "t1",
            },
        ),
    ]
    for event, payload in calls:
        done = subprocess.run(
            hook_command(event),
            input=json.dumps(payload).encode(),
            env=env,
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0 and not done.stderr


def mask(text: str) -> str:
    """The volatile parts of the report: versions, temp paths, sizes, ages."""
    text = text.replace(sys.executable, "<python>")
    text = text.replace(os.path.dirname(sys.executable), "<python-dir>")
    text = text.replace(os.path.dirname(ctxmode.__file__), "<package>")
    text = text.replace(os.environ["CTXMODE_HOME"], "<data>")
    text = text.replace(os.environ["CODEX_HOME"], "<codex-home>")
    text = text.replace(os.environ["GEMINI_CLI_HOME"], "<gemini-home>")
    text = text.replace(os.environ["COPILOT_HOME"], "<copilot-home>")
    text = re.sub(r"/\S*/proj\b", "<project>", text)
    text = re.sub(r"Python \d+\.\d+\.\d+", "Python <v>", text)
    text = re.sub(r"(ctxmode|doctor) \d+\.\d+\.\d+[\w.+-]*", r"\1 <v>", text)
    text = re.sub(r"\((click [^)]*)\)", "(<deps>)", text)
    text = re.sub(r"SQLite \d+\.\d+\.\d+", "SQLite <v>", text)
    text = re.sub(r"\d+(\.\d)? (B|KB|MB)\b", "<size>", text)
    text = re.sub(r"\d+[smhd] ago", "<age> ago", text)
    return re.sub(r"sessions/repo-[0-9a-f]{16}\.db", "sessions/<name>.db", text)


# --------------------------------------------------------------------------- healthy


def test_healthy_install_is_all_ok(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.197")
    installer.install("user")
    record_session(project)
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert mask(result.output) == (
        "ctxmode doctor <v>, project <project>\n"
        "\n"
        "Environment\n"
        "  ok    python        Python <v> at <python>\n"
        "  ok    package       ctxmode <v> in <package> (<deps>)\n"
        "  ok    sqlite        SQLite <v> with FTS5 (trigram)\n"
        "\n"
        "Data\n"
        "  ok    root from     <data>: set by CTXMODE_HOME\n"
        "  ok    data root     <data> (1 store, <size>)\n"
        "  ok    permissions   folders 0700, files 0600\n"
        "\n"
        "Configuration\n"
        "  ok    config        defaults\n"
        "\n"
        "Claude Code hooks\n"
        "  ok    registration  all eight events registered in 1 file\n"
        "                      user: ~/.claude/settings.json: PostToolUse, PostToolUseFailure, "
        "UserPromptSubmit, PreCompact, SessionStart, SessionEnd, PostCompact, Stop\n"
        "  ok    capture mode  background: the agent does not wait for the captures (Claude "
        'Code 2.1.197 has "async" hooks)\n'
        "  ok    lookups       the snapshot's lookups run without asking: "
        "Bash(<python-dir>/ctxmode search:*) (~/.claude/settings.json)\n"
        "\n"
        "This project's store\n"
        "  ok    store         schema 5, <size>, 1 session, 3 events, last event <age> ago, "
        "0 unclaimed snapshots; integrity ok\n"
        "                      path: <data>/sessions/<name>.db\n"
        "                      project: <project>\n"
        "\n"
        "Hook log\n"
        "  ok    hook log      no errors or warnings in the last 24 h\n"
        "\n"
        "Transcripts not imported\n"
        "  ok    transcripts   no transcripts of this project in ~/.claude/projects, "
        "<codex-home>/sessions, <gemini-home>/.gemini/tmp, <copilot-home>/session-state, "
        "~/.qwen/projects, ~/.local/share/opencode\n"
        "\n"
        "13 ok, 0 warnings, 0 failures - ctxmode is working\n"
    )


def test_json_output(home: Path, project: Path) -> None:
    installer.install("project", str(project))
    result = CliRunner().invoke(main, ["doctor", "--json"], catch_exceptions=False)
    document = json.loads(result.output)
    assert result.exit_code == 0
    assert document["ok"] is True
    assert document["project_dir"] == str(project)
    # The shared file names no ctxmode path: the lookups ask, and doctor says how to allow them.
    assert document["counts"] == {"ok": 12, "warn": 1, "fail": 0}
    assert [c["name"] for c in document["checks"]] == [
        "python",
        "package",
        "sqlite",
        "root from",
        "data root",
        "permissions",
        "config",
        "registration",
        "capture mode",
        "lookups",
        "store",
        "hook log",
        "transcripts",
    ]
    assert set(document["checks"][0]) == {"group", "name", "status", "summary", "fix", "details"}


def test_not_installed_fails(home: Path, project: Path) -> None:
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 1
    found = checks(project)["registration"]
    assert (found.status, found.summary, found.fix) == (
        "fail",
        "ctxmode's hooks are not registered in any settings file: nothing is recorded",
        "ctxmode install (user scope), or ctxmode install --project DIR",
    )
    assert found.details == (
        "user: ~/.claude/settings.json (no file)",
        f"project: {project}/.claude/settings.json (no file)",
        f"local: {project}/.claude/settings.local.json (no file)",
    )


def test_claude_config_dir_is_honoured(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(elsewhere))
    installer.install("user")
    assert (elsewhere / "settings.json").exists()
    assert checks(project)["registration"].details == (
        f"user: {elsewhere}/settings.json: PostToolUse, PostToolUseFailure, UserPromptSubmit, "
        "PreCompact, SessionStart, SessionEnd, Stop",
    )


# --------------------------------------------------------------------------- hooks broken


def test_stale_paths(home: Path, project: Path) -> None:
    installer.install("user", python=OLD_PY, package_dir=OLD_PKG)
    found = checks(project)["stale paths"]
    assert found.status == "fail"
    assert found.summary == (
        "7 registered hooks run something that does not exist: they fail on every call"
    )
    assert found.fix == "ctxmode install (replaces ctxmode's old entries in place)"
    assert found.details[0] == (
        f"user PostToolUse: missing interpreter {OLD_PY} and script "
        f"{OLD_PKG}/hooks/post_tool_use.py"
    )
    # The fix it names works: after it, nothing is stale.
    installer.install("user")
    assert "stale paths" not in checks(project)


def test_stale_script_only_in_local_scope(home: Path, project: Path) -> None:
    installer.install("local", str(project), package_dir=OLD_PKG)
    found = checks(project)["stale paths"]
    assert found.fix == (
        f"ctxmode install --local {project} (replaces ctxmode's old entries in place)"
    )
    assert found.details[-1] == f"local Stop: missing script {OLD_PKG}/hooks/stop.py"


def _installed_hooks() -> dict[str, Any]:
    return {spec.event: [spec.group()] for spec in installer.hook_specs()}


@pytest.mark.parametrize(
    ("drop", "status", "summary"),
    [
        (["SessionEnd"], "warn", "no ctxmode hook for SessionEnd"),
        (["PreCompact", "SessionEnd"], "warn", "no ctxmode hook for PreCompact, SessionEnd"),
        (
            ["SessionStart"],
            "fail",
            "no ctxmode hook for SessionStart: nothing is recorded or injected there",
        ),
        (
            ["PostToolUse"],
            "fail",
            "no ctxmode hook for PostToolUse: nothing is recorded or injected there",
        ),
    ],
)
def test_missing_events(
    home: Path, project: Path, drop: list[str], status: str, summary: str
) -> None:
    hooks = {k: v for k, v in _installed_hooks().items() if k not in drop}
    settings_file(home, {"hooks": hooks})
    found = checks(project)["events"]
    assert (found.status, found.summary) == (status, summary)
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert result.exit_code == (1 if status == "fail" else 0)


def test_session_start_without_compact_matcher(home: Path, project: Path) -> None:
    hooks = _installed_hooks()
    hooks["SessionStart"][0]["matcher"] = "startup|resume"
    settings_file(home, {"hooks": hooks})
    found = checks(project)["compact matcher"]
    assert found.status == "fail"
    assert found.summary == (
        "user SessionStart matcher 'startup|resume' leaves out 'compact': the snapshot is "
        "never injected after compaction"
    )


@pytest.mark.parametrize(
    ("matcher", "value", "expected"),
    [
        (None, "compact", True),
        ("", "compact", True),
        ("*", "compact", True),
        ("startup|resume|clear|compact|fork", "compact", True),
        ("compact", "compact", True),
        ("startup|resume", "compact", False),
        ("compacted", "compact", False),  # a plain name is an exact match
        ("comp.*", "compact", True),  # anything else is a regular expression
        ("^(startup|compact)$", "compact", True),
        ("[", "compact", False),
        (3, "compact", False),
        ("Edit|Write", "Write", True),
        ("Edit|Write", "Bash", False),
        ("mcp__.*", "mcp__db__query", True),
    ],
)
def test_matcher_matches(matcher: Any, value: str, expected: bool) -> None:
    from ctxmode.hosts.claude_code.hook_commands import matcher_matches

    assert matcher_matches(matcher, value) is expected


def test_restricted_tool_matcher_warns(home: Path, project: Path) -> None:
    hooks = _installed_hooks()
    hooks["PostToolUse"][0]["matcher"] = "Edit|Write"
    settings_file(home, {"hooks": hooks})
    found = checks(project)["tool matcher"]
    assert (found.status, found.summary) == (
        "warn",
        "user PostToolUse matcher 'Edit|Write': only those tools are recorded",
    )


def test_duplicates_across_scopes(home: Path, project: Path) -> None:
    installer.install("user")
    installer.install("local", str(project), python="/usr/bin/python3")
    found = checks(project)["duplicates"]
    assert found.status == "warn"
    assert found.summary == "7 events have more than one ctxmode handler: each runs"
    assert found.details[0] == "PostToolUse: 2 handlers (user, local)"


def test_identical_commands_in_two_scopes_run_once(home: Path, project: Path) -> None:
    # Claude Code runs the same handler once however many files hold it.
    installer.install("user")
    installer.install("local", str(project))
    assert "duplicates" not in checks(project)


@pytest.mark.parametrize("scope", ["local", "managed"])
def test_duplicates_in_local_and_managed_settings(
    home: Path, project: Path, tmp_path: Path, scope: str
) -> None:
    installer.install("user")
    other = {spec.event: [spec.group()] for spec in installer.hook_specs(OLD_PY, OLD_PKG)}
    if scope == "local":
        path = project / ".claude" / "settings.local.json"
    else:
        path = tmp_path / "etc" / "claude-code" / "managed-settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"hooks": other}))
    found = checks(project, managed=path if scope == "managed" else None)
    assert found["duplicates"].status == "warn"
    assert found["duplicates"].details[0] == f"PostToolUse: 2 handlers (user, {scope})"
    assert f"{scope}: {path}: PostToolUse, " in "\n".join(found["registration"].details)


def test_plugin_enabled_in_managed_settings_too(home: Path, project: Path, tmp_path: Path) -> None:
    installer.install("user")
    managed = tmp_path / "managed-settings.json"
    managed.write_text(json.dumps({"enabledPlugins": {"ctxmode@corp": True}}))
    assert checks(project, managed=managed)["plugin"].status == "warn"


# --------------------------------------------------------------------------- switched off


def _switched_off(project: Path, managed: Path | None = None) -> doctor.Check:
    found = checks(project, managed=managed)
    assert found["registration"].status == "ok"  # registered, and yet...
    return found["switched off"]


@pytest.mark.parametrize("value", ["1", "true", "YES", "on"])
def test_ctxmode_disable_in_the_environment(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    installer.install("user")
    assert "switched off" not in checks(project)
    monkeypatch.setenv("CTXMODE_DISABLE", value)
    found = _switched_off(project)
    assert (found.status, found.summary) == (
        "warn",
        "ctxmode is switched off here although its hooks are registered: "
        f"CTXMODE_DISABLE={value} in this environment: every hook started from it does nothing",
    )
    assert found.fix == "unset CTXMODE_DISABLE (and remove it from your shell profile)"
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "- ctxmode is switched off here" in result.output
    assert "ctxmode is working" not in result.output


def test_ctxmode_disable_set_by_a_settings_file(home: Path, project: Path) -> None:
    installer.install("user")
    local = project / ".claude" / "settings.local.json"
    local.parent.mkdir()
    local.write_text('{"env": {"CTXMODE_DISABLE": "1"}}')
    found = _switched_off(project)
    assert found.summary.endswith(
        f'local settings set CTXMODE_DISABLE=1 in "env" ({local}): every hook does nothing'
    )
    assert found.fix == f'remove CTXMODE_DISABLE from "env" in {local}'


def test_ctxmode_ignore_marker(home: Path, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    installer.install("user")
    (project / ".ctxmode-ignore").write_text("")
    (project / "src").mkdir()
    # Found as the hooks find it: at the project root, from a subfolder too.
    for where in (project, project / "src"):
        monkeypatch.chdir(where)
        result = CliRunner().invoke(main, ["doctor", "--json"], catch_exceptions=False)
        document = json.loads(result.output)
        (found,) = [c for c in document["checks"] if c["name"] == "switched off"]
        assert found["status"] == "warn"
        assert found["summary"].endswith(
            f"{project}/.ctxmode-ignore switches ctxmode off for this project: "
            "nothing is recorded here"
        )
        assert found["fix"] == f"rm {project}/.ctxmode-ignore to record this project again"


def test_both_switches_are_listed(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    installer.install("user")
    (project / ".ctxmode-ignore").write_text("")
    monkeypatch.setenv("CTXMODE_DISABLE", "1")
    found = _switched_off(project)
    assert "CTXMODE_DISABLE=1 in this environment" in found.summary
    assert found.details == (
        f"{project}/.ctxmode-ignore switches ctxmode off for this project: nothing is recorded here",
    )


def test_claude_code_hook_switches(home: Path, project: Path, tmp_path: Path) -> None:
    installer.install("user")
    managed = tmp_path / "managed-settings.json"
    managed.write_text('{"allowManagedHooksOnly": true}')
    found = _switched_off(project, managed)
    assert found.summary.endswith(
        f'managed settings set "allowManagedHooksOnly": true ({managed}): '
        "ctxmode's hooks in your own settings files never run"
    )
    managed.write_text('{"disableAllHooks": true}')
    assert _switched_off(project, managed).summary.endswith(
        f'managed settings set "disableAllHooks": true ({managed}): Claude Code runs no hook at all'
    )
    user = home / ".claude" / "settings.json"
    value = json.loads(user.read_text())
    value["disableAllHooks"] = True
    user.write_text(json.dumps(value))
    found = _switched_off(project)
    assert found.summary.endswith(
        'user settings set "disableAllHooks": true (~/.claude/settings.json): '
        "Claude Code runs no hook but managed ones"
    )


# --------------------------------------------------------------------------- shared project file


def test_shared_project_file_with_its_launcher_is_ok(home: Path, project: Path) -> None:
    installer.install("project", str(project))
    found = checks(project)
    assert found["registration"].status == "ok"
    assert "launcher" not in found and "stale paths" not in found


def test_shared_project_file_without_a_launcher(home: Path, project: Path) -> None:
    """A teammate's checkout: the team's hooks, no ctxmode of their own yet."""
    installer.install("project", str(project))
    (home / ".local" / "bin" / "ctxmode-hook").unlink()
    found = checks(project)
    assert (found["launcher"].status, found["launcher"].summary, found["launcher"].fix) == (
        "fail",
        "project settings run ctxmode through the per-user launcher, but "
        "~/.local/bin/ctxmode-hook is missing: those hooks do nothing for you",
        f"ctxmode install --project {project} (writes your launcher)",
    )
    assert "registration" not in found  # not "not registered": the message above says why
    # With a registration of their own, the quiet shared hooks are as they should be.
    installer.install("user")
    found = checks(project)
    assert found["launcher"].status == "ok"
    assert found["registration"].status == "ok"
    assert "duplicates" not in found
    # The fix it names works.
    installer.install("project", str(project))
    found = checks(project)
    assert "launcher" not in found
    assert found["duplicates"].status == "warn"  # now both run: the user is told


def test_shared_project_file_with_a_stale_launcher(home: Path, project: Path) -> None:
    installer.install("project", str(project), python=OLD_PY)
    found = checks(project)["launcher"]
    assert found.status == "fail"
    assert found.summary == (
        "project settings run ctxmode through the per-user launcher, but "
        f"~/.local/bin/ctxmode-hook runs {OLD_PY}, which is gone: those hooks do nothing for you"
    )


def test_plugin_enabled_too(home: Path, project: Path) -> None:
    installer.install("user")
    path = home / ".claude" / "settings.json"
    value = json.loads(path.read_text())
    value["enabledPlugins"] = {"ctxmode@ctxmode-marketplace": True}
    path.write_text(json.dumps(value))
    found = checks(project)["plugin"]
    assert found.status == "warn"
    assert found.summary == (
        "the ctxmode plugin (ctxmode@ctxmode-marketplace) is enabled and settings register "
        "the hooks too: every hook runs twice"
    )


def test_plugin_only_is_ok(home: Path, project: Path) -> None:
    settings_file(home, {"enabledPlugins": {"ctxmode@local": True}})
    found = checks(project)
    assert found["registration"].status == "ok"
    assert found["registration"].summary == "all eight events registered by the plugin"
    assert "plugin" not in found


@pytest.mark.parametrize(
    ("installed_for", "running", "status", "summary"),
    [
        (
            "2.1.50",
            "2.1.50",
            "ok",
            "all seven core events registered in 1 file; PostCompact not: Claude Code 2.1.50 "
            "does not have it (a settings file naming it would be skipped whole)",
        ),
        (
            "2.1.50",
            "2.1.197",
            "warn",
            "all seven core events registered in 1 file; PostCompact not, though Claude Code "
            "2.1.197 has it: compaction summaries are not recorded",
        ),
        (
            "none",
            "none",
            "ok",
            "all seven core events registered in 1 file; PostCompact not (Claude Code's "
            "version unknown)",
        ),
        ("2.1.197", "2.1.197", "ok", "all eight events registered in 1 file"),
    ],
)
def test_postcompact_is_expected_only_where_the_client_has_it(
    home: Path,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    installed_for: str,
    running: str,
    status: str,
    summary: str,
) -> None:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, installed_for)
    installer.install("user")
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, running)
    found = checks(project)["registration"]
    assert (found.status, found.summary) == (status, summary)


def test_a_shared_project_file_without_postcompact_is_as_designed(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.197")
    installer.install("project", str(project))
    found = checks(project)["registration"]
    assert (found.status, found.summary) == (
        "ok",
        "all seven core events registered in 1 file; PostCompact not: a file shared with "
        "the team never names it (an older client would skip the whole file)",
    )


def test_the_plugin_on_a_client_without_postcompact_fails(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings_file(home, {"enabledPlugins": {"ctxmode@local": True}})
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, "2.1.60")
    found = checks(project)["events"]
    assert found.status == "fail"
    assert found.summary == (
        "the ctxmode plugin registers PostCompact, which Claude Code 2.1.60 does not know: "
        "it skips the plugin's hooks"
    )


def test_other_memory_tools(home: Path, project: Path) -> None:
    installer.install("user")
    project_settings = project / ".claude" / "settings.json"
    project_settings.parent.mkdir()
    project_settings.write_text(
        json.dumps(
            {
                "enabledPlugins": {"claude-mem@thedotmack": True, "prettier@tools": True},
                "hooks": {
                    "SessionStart": [
                        {
                            "hooks": [
                                {
                                    "type": "command",
                                    "command": "node ~/.claude-mem/hooks/context.js",
                                }
                            ]
                        }
                    ],
                    "PostToolUse": [
                        {
                            "matcher": "Edit",
                            "hooks": [{"type": "command", "command": "npx prettier --write"}],
                        }
                    ],
                    "Stop": [{"hooks": [{"type": "command", "command": "memory-sync"}]}],
                },
            }
        )
    )
    found = checks(project)["other memory tools"]
    assert found.status == "warn"
    assert found.details == (
        "project SessionStart: node ~/.claude-mem/hooks/context.js",
        "project Stop: memory-sync",  # Stop is one of ctxmode's events
        "project: plugin claude-mem@thedotmack enabled",
    )


def test_malformed_settings(home: Path, project: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text('{\n  "hooks": {},\n}\n')
    found = checks(project)["user settings"]
    assert found.status == "fail"
    assert found.summary.startswith("~/.claude/settings.json: line 2, column 14: a trailing comma")
    assert path.read_text() == '{\n  "hooks": {},\n}\n'  # doctor never writes


# --------------------------------------------------------------------------- data, store, log


def test_loose_permissions(home: Path, project: Path, data_root: Path) -> None:
    installer.install("user")
    record_session(project)
    store = paths.store_path(str(project), os.environ)
    os.chmod(store, 0o644)
    os.chmod(data_root / "sessions", 0o755)
    found = checks(project)["permissions"]
    assert found.status == "warn"
    assert found.details == (
        f"{data_root}/sessions is 0755 (expected 0700)",
        f"{store} is 0644 (expected 0600)",
    )


def test_corrupt_store(home: Path, project: Path) -> None:
    installer.install("user")
    path = paths.store_path(str(project), os.environ)
    os.makedirs(os.path.dirname(path), mode=0o700)
    with open(path, "wb") as handle:
        handle.write(b"this is not a database, it is a text file " * 200)
    os.chmod(path, 0o600)
    found = checks(project)["store"]
    assert found.status == "fail"
    assert found.summary.startswith(f"{path} is corrupt: file is not a database")
    assert found.fix == (
        "the next hook call moves it aside and starts afresh; or ctxmode purge --project"
    )
    result = CliRunner().invoke(main, ["doctor"], catch_exceptions=False)
    assert result.exit_code == 1

    # What the next hook does: move it aside (an incident), start afresh.
    with Store.open(path, recover=True) as store:
        assert store.incident is not None
    after = checks(project)
    assert after["store"].status == "ok"
    assert after["moved aside"].status == "warn"
    assert after["moved aside"].summary.startswith("1 corrupt store of this project was moved")
    assert after["incidents"].status == "warn"
    assert "moved" in after["incidents"].summary and "aside" in after["incidents"].summary


def test_unclaimed_compaction_snapshot(home: Path, project: Path) -> None:
    installer.install("user")
    path = paths.store_path(str(project), os.environ)
    with Store.open(path) as store:
        store.add_events(
            "s-9", [make("user_prompt", {"text": "x"})], source_hook="x", project_dir=str(project)
        )
        store.save_resume(
            "s-9", "<session_resume/>", 1, kind="compact", now=iso_utc(time.time() - 3600)
        )
    found = checks(project)["snapshots"]
    assert found.status == "warn"
    assert found.details == ("session s-9 #1",)


@pytest.mark.parametrize(
    ("records", "status", "summary"),
    [
        ([], "ok", "no errors or warnings in the last 24 h"),
        (
            [(-30 * 3600, "ERROR", "too old to matter")],
            "ok",
            "no errors or warnings in the last 24 h",
        ),
        ([(-60, "INFO", "fine")], "ok", "no errors or warnings in the last 24 h"),
        (
            [
                (-5 * 3600, "ERROR", "database is locked"),
                (-60, "WARN", "store locked; 2 events spooled"),
            ],
            "warn",
            "1 error and 1 warning in the last 24 h; newest 1m ago: WARN PostToolUse: "
            "store locked; 2 events spooled",
        ),
        (
            [(-120, "ERROR", "OperationalError: disk I/O error"), (-90, "ERROR", "again")],
            "fail",
            "2 errors in the last 24 h; newest 1m ago: ERROR PostToolUse: again",
        ),
    ],
)
def test_log_records(
    home: Path,
    project: Path,
    data_root: Path,
    records: list[tuple[int, str, str]],
    status: str,
    summary: str,
) -> None:
    now = time.time()
    log_dir = data_root / "logs"
    log_dir.mkdir(mode=0o700)
    lines = [
        f"{hooklog.utc_now_iso(now + offset)}\t{level}\tPostToolUse\t{message}\n"
        + "    Traceback (most recent call last):\n"
        for offset, level, message in records
    ]
    (log_dir / "ctxmode.log").write_text("".join(lines))
    os.chmod(log_dir / "ctxmode.log", 0o600)
    found = checks(project, now)["hook log"]
    assert (found.status, found.summary) == (status, summary)
    if status != "ok":
        assert (
            found.fix == f"read {log_dir}/ctxmode.log (tracebacks are indented under each record)"
        )


def test_bad_redact_pattern_fails(home: Path, project: Path, data_root: Path) -> None:
    installer.install("user")
    (data_root / "config.json").write_text(
        json.dumps({"redact_patterns": ["ACME-[0-9"], "retension_days": 3})
    )
    found = checks(project)["config"]
    assert found.status == "fail"
    assert found.summary == (
        "a redact pattern is not a valid regular expression: every hook call fails"
    )
    assert (
        found.details[-1] == f"unknown option 'retension_days' in {data_root}/config.json (ignored)"
    )


def test_config_typo_warns(home: Path, project: Path) -> None:
    installer.install("user")
    config.set_value(config.project_path(str(project)), "snapshot_budget", 2048)
    assert checks(project)["config"].summary == "1 option set: snapshot_budget=2048"
    (project / ".claude" / "ctxmode.json").write_text('{"snapshot_budget": "2k"}')
    found = checks(project)["config"]
    assert found.status == "warn"
    assert found.details == (
        f'snapshot_budget: project value "2k" ignored: the hooks expect int '
        f"({project}/.claude/ctxmode.json)",
    )


def test_missing_data_root_parent_not_writable(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    monkeypatch.setenv("CTXMODE_HOME", str(locked / "data"))
    found = checks(project)["data root"]
    if os.geteuid() == 0:  # root writes anywhere: the folder would be created fine
        assert found.status == "ok"
    else:
        assert found.status == "fail"
    monkeypatch.setenv("CTXMODE_HOME", str(tmp_path / "fresh" / "data"))
    assert checks(project)["data root"].summary == (
        f"{tmp_path}/fresh/data does not exist yet; the first hook call creates it (0700)"
    )


# --------------------------------------------------------------------------- real processes


def test_subprocess_exit_codes(home: Path, project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}

    def doctor_run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "ctxmode", "doctor", "--json", "--project", str(project)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    failing = doctor_run()
    assert failing.returncode == 1, failing.stderr
    assert json.loads(failing.stdout)["counts"]["fail"] == 1
    installer.install("user")
    passing = doctor_run()
    assert passing.returncode == 0, passing.stdout
    assert json.loads(passing.stdout)["ok"] is True


def test_lookups_check_names_the_rule_or_how_to_get_one(home: Path, project: Path) -> None:
    from ctxmode.hosts.claude_code import settings_permissions

    installer.install("user")
    found = checks(project)["lookups"]
    assert found.status == "ok" and installer.lookup_rules("user")[0][0] in found.summary
    path = home / ".claude" / "settings.json"
    stale = "Bash(/old/venv/bin/ctxmode search:*)"
    path.write_text(settings_permissions.merge(path.read_text(), [stale]))
    found = checks(project)["lookups"]
    assert (found.status, found.fix) == ("warn", "ctxmode install") and stale in found.summary
    installer.uninstall("user")
    installer.install("project", str(project))
    found = checks(project)["lookups"]
    assert found.status == "warn" and ".claude/settings.local.json" in found.fix
