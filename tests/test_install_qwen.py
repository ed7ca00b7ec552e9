"""``ctxmode install --host qwen``: ~/.qwen/settings.json (or DIR/.qwen), uninstall.

The handlers and the allow rule are the ones the real Qwen Code 0.24.4 ran
(tests/e2e/test_qwen_e2e.py). Here: only ctxmode's entries (Claude Code's shape, timeouts in
seconds) and its one ``permissions.allow`` rule, byte-exact uninstall, a dry run that writes
nothing, ``$QWEN_HOME``, the project scope's notes (no rule; folder trust when Qwen's is on),
doctor, the proof run, install.sh --host qwen --dry-run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxmode import settings
from ctxmode.hosts import qwen
from ctxmode.hosts.claude_code import settings_permissions
from ctxmode.hosts.qwen import proof as qwen_proof
from tests.helpers import cli
from tests.hooktools import REPO

# A user's settings as Qwen writes them (2-space indent), with a hook and a rule of their own.
USER_SETTINGS = (
    '{\n  "security": {\n    "auth": {\n      "selectedType": "openai"\n    }\n  },\n'
    '  "permissions": {\n    "allow": [\n      "Bash(git status)"\n    ]\n  },\n'
    '  "hooks": {\n    "PostToolUse": [\n      {\n        "matcher": "write_file",\n'
    '        "hooks": [\n          {\n            "type": "command",\n'
    '            "command": "notify-me"\n          }\n        ]\n      }\n    ]\n  }\n}\n'
)


@pytest.fixture
def qwen_dir() -> Path:
    return Path(os.environ["HOME"]) / ".qwen"


def _settings(qwen_dir: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads((qwen_dir / "settings.json").read_text())
    return value


def test_install_writes_claude_code_s_shape_and_one_narrow_allow_rule(qwen_dir: Path) -> None:
    result = cli("install", "--host", "qwen")
    assert "for Qwen Code: 8 hooks in ~/.qwen/settings.json" in result.output
    assert "lookups are allowed" in result.output
    doc = _settings(qwen_dir)
    hooks = doc["hooks"]
    assert isinstance(hooks, dict)
    assert sorted(hooks) == sorted(e for e, _, _ in qwen.HOOKS)
    for event, timeout, matcher in qwen.HOOKS:
        (group,) = hooks[event]
        (handler,) = group["hooks"]
        assert handler["timeout"] == timeout and timeout <= 30  # seconds
        assert group.get("matcher") == matcher
        assert handler["command"].endswith(" --host qwen")
        assert " -I -S " in handler["command"]
    (rule,) = doc["permissions"]["allow"]  # type: ignore[index]
    assert rule.startswith("Bash(/") and rule.endswith("/ctxmode search:*)"), rule
    assert settings_permissions.is_ours(rule)
    again = cli("install", "--host", "qwen")
    assert "already installed" in again.output


def test_qwen_home_moves_the_user_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "qwen-own"
    monkeypatch.setenv("QWEN_HOME", str(own))
    cli("install", "--host", "qwen")
    assert settings.registrations((own / "settings.json").read_text())
    assert not (Path(os.environ["HOME"]) / ".qwen").exists()


def test_uninstall_restores_the_users_file_byte_for_byte(qwen_dir: Path) -> None:
    qwen_dir.mkdir(parents=True)
    path = qwen_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "qwen")
    text = path.read_text()
    assert text.startswith('{\n  "security"')  # the user's layout kept
    assert len(settings.registrations(text)) == 8
    assert "notify-me" in text and "Bash(git status)" in text
    assert len(settings_permissions.current(text)) == 1
    cli("uninstall", "--host", "qwen")
    assert path.read_text() == USER_SETTINGS


def test_uninstall_after_qwen_changed_the_file_removes_only_ctxmodes_entries(
    qwen_dir: Path,
) -> None:
    qwen_dir.mkdir(parents=True)
    path = qwen_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "qwen")
    doc = json.loads(path.read_text())
    doc["model"] = {"name": "qwen3-coder-plus"}  # a /settings change
    path.write_text(json.dumps(doc, indent=2))
    cli("uninstall", "--host", "qwen")
    after = json.loads(path.read_text())
    assert after["model"] == {"name": "qwen3-coder-plus"}
    assert list(after["hooks"]) == ["PostToolUse"]
    assert after["hooks"]["PostToolUse"][0]["hooks"][0]["command"] == "notify-me"
    assert after["permissions"] == {"allow": ["Bash(git status)"]}


def test_a_file_install_created_goes_away_again(qwen_dir: Path) -> None:
    cli("install", "--host", "qwen")
    result = cli("uninstall", "--host", "qwen")
    assert "deleted (ctxmode had created it)" in result.output
    assert not (qwen_dir / "settings.json").exists()


def test_dry_run_shows_the_diff_and_writes_nothing(qwen_dir: Path) -> None:
    result = cli("install", "--host", "qwen", "--dry-run")
    assert "+++ " in result.output and "--host qwen" in result.output
    assert "search:*)" in result.output
    assert not qwen_dir.exists()
    cli("install", "--host", "qwen")
    before = (qwen_dir / "settings.json").read_text()
    undo = cli("uninstall", "--host", "qwen", "--dry-run")
    assert "--- " in undo.output
    assert (qwen_dir / "settings.json").read_text() == before


def test_a_malformed_file_is_a_clear_error_and_stays(qwen_dir: Path) -> None:
    qwen_dir.mkdir(parents=True)
    path = qwen_dir / "settings.json"
    path.write_text('{"hooks": [}')
    result = cli("install", "--host", "qwen")
    assert result.exit_code == 1
    assert "settings.json" in result.output
    assert path.read_text() == '{"hooks": [}'


def test_qwen_has_no_local_scope(project: Path) -> None:
    result = cli("install", "--host", "qwen", "--local", str(project))
    assert result.exit_code == 2
    assert "no local scope" in result.output


def test_a_project_install_gets_no_rule_and_says_what_trust_needs(
    project: Path, qwen_dir: Path
) -> None:
    result = cli("install", "--host", "qwen", "--project", str(project))
    doc = json.loads((project / ".qwen" / "settings.json").read_text())
    assert "permissions" not in doc  # a shared file names no path of this machine
    assert "lookups ask before they run" in result.output
    assert "trusted folder" not in result.output  # Qwen's folder trust is off by default
    assert not (qwen_dir / "settings.json").exists()  # the user scope is untouched
    qwen_dir.mkdir(parents=True)
    (qwen_dir / "settings.json").write_text('{"security": {"folderTrust": {"enabled": true}}}')
    on = cli("install", "--host", "qwen", "--project", str(project))
    assert "runs a project's hooks only in a trusted folder" in on.output
    (qwen_dir / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    trusted = cli("install", "--host", "qwen", "--project", str(project))
    assert "trusted folder" not in trusted.output


def test_verify_runs_the_installed_hooks_as_qwen_does(data_root: Path) -> None:
    result = cli("install", "--host", "qwen", "--verify")
    assert "; verified: 16 hook calls of a sample Qwen session" in result.output
    assert "claimed once" in result.output
    assert not (data_root / "sessions").exists() or not list((data_root / "sessions").iterdir())


def test_verify_fails_when_the_snapshot_would_reach_qwen_as_xml(qwen_dir: Path) -> None:
    """The outline is what the proof asks of the prompt's output: a UserPromptSubmit
    registered as another host's (Claude Code's XML) fails it."""
    cli("install", "--host", "qwen")
    path = qwen_dir / "settings.json"
    doc = json.loads(path.read_text())
    handler = doc["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    handler["command"] = handler["command"].replace("--host qwen", "--host claude_code")
    path.write_text(json.dumps(doc, indent=2))
    outcome = qwen_proof.verify(str(path))
    assert not outcome.ok
    assert any("as XML" in p or "outline" in p for p in outcome.problems), outcome.problems


def test_doctor_checks_qwen(project: Path, qwen_dir: Path) -> None:
    cli("install", "--host", "qwen")
    cli("install", "--host", "qwen", "--project", str(project))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "qwen"}
    assert checks["user events"]["status"] == "ok", checks
    assert checks["lookups allowed"]["status"] == "ok", checks
    assert checks["project trusted"]["status"] == "ok", checks  # folder trust off
    path = qwen_dir / "settings.json"
    doc = json.loads(path.read_text())
    del doc["permissions"]
    doc["security"] = {"folderTrust": {"enabled": True}}
    path.write_text(json.dumps(doc))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "qwen"}
    assert checks["lookups allowed"]["status"] == "warn", checks
    assert checks["project trusted"]["status"] == "warn", checks


def test_install_sh_dry_run_for_qwen(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("QWEN", "CLAUDE"))}
    env.update(HOME=str(home), CTXMODE_HOME=str(tmp_path / "root"))
    proc = subprocess.run(
        ["sh", str(REPO / "install.sh"), "--host", "qwen", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"+++ {home}/.qwen/settings.json" in proc.stdout
    assert "--host qwen" in proc.stdout
    assert not (home / ".qwen").exists()
