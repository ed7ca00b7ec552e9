"""``ctxmode install --host copilot``: ~/.copilot/settings.json (or .github/hooks/ctxmode.json).

The handlers are the ones the real Copilot CLI 1.0.102 ran (tests/e2e/test_copilot_e2e.py).
Here: only ctxmode's entries (Copilot's camelCase events, seconds), byte-exact uninstall, a dry
run that writes nothing, the repository file's own format and removal, the trust note and
doctor's trust row, the proof run, install.sh --host copilot --dry-run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxmode import settings
from ctxmode.hosts import copilot
from ctxmode.hosts.copilot import install as copilot_config
from ctxmode.hosts.copilot import proof as copilot_proof
from tests.helpers import cli
from tests.hooktools import REPO

# A user's settings.json as Copilot writes it, with a hook of their own on a shared event.
USER_SETTINGS = (
    '{\n  "model": "gpt-4.1",\n  "hooks": {\n    "postToolUse": [\n      {\n'
    '        "type": "command",\n        "bash": "notify-me",\n        "timeoutSec": 5\n'
    "      }\n    ]\n  }\n}\n"
)


@pytest.fixture
def copilot_dir() -> Path:
    return Path(os.environ["COPILOT_HOME"])


def _settings(copilot_dir: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads((copilot_dir / "settings.json").read_text())
    return value


def test_install_writes_a_handler_per_native_event(copilot_dir: Path) -> None:
    result = cli("install", "--host", "copilot")
    assert "for Copilot CLI: 6 hooks in" in result.output
    hooks = _settings(copilot_dir)["hooks"]
    assert isinstance(hooks, dict)
    assert sorted(hooks) == sorted(e for e, _, _ in copilot.HOOKS)
    assert all(event[0].islower() for event in hooks)  # camelCase: the native events
    for event, timeout, _matcher in copilot.HOOKS:
        (group,) = hooks[event]
        assert "matcher" not in group
        (handler,) = group["hooks"]
        assert handler["timeout"] == timeout and timeout <= 30  # seconds
        assert handler["command"].endswith("--host copilot")
        assert f"/hooks/{copilot.SHIMS[event]}.py" in handler["command"]
    again = cli("install", "--host", "copilot")
    assert "already installed" in again.output


def test_uninstall_restores_the_users_file_byte_for_byte(copilot_dir: Path) -> None:
    copilot_dir.mkdir(parents=True, exist_ok=True)
    path = copilot_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "copilot")
    hooks = _settings(copilot_dir)["hooks"]
    assert isinstance(hooks, dict) and len(hooks["postToolUse"]) == 2  # theirs kept first
    assert hooks["postToolUse"][0]["bash"] == "notify-me"
    cli("uninstall", "--host", "copilot")
    assert path.read_text() == USER_SETTINGS


def test_uninstall_after_a_change_removes_only_ctxmodes_entries(copilot_dir: Path) -> None:
    copilot_dir.mkdir(parents=True, exist_ok=True)
    path = copilot_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "copilot")
    path.write_text(path.read_text().replace('"gpt-4.1"', '"claude-sonnet-4.6"'))
    cli("uninstall", "--host", "copilot")
    assert path.read_text() == USER_SETTINGS.replace('"gpt-4.1"', '"claude-sonnet-4.6"')


def test_a_file_install_created_goes_away_again(copilot_dir: Path) -> None:
    cli("install", "--host", "copilot")
    assert (copilot_dir / "settings.json").exists()
    result = cli("uninstall", "--host", "copilot")
    assert "deleted" in result.output
    assert not (copilot_dir / "settings.json").exists()


def test_dry_run_shows_the_diff_and_writes_nothing(copilot_dir: Path) -> None:
    result = cli("install", "--host", "copilot", "--dry-run")
    assert "+++ " in result.output and '"userPromptSubmitted"' in result.output
    assert not copilot_dir.exists() or not (copilot_dir / "settings.json").exists()


def test_a_malformed_file_is_a_clear_error_and_stays(copilot_dir: Path) -> None:
    copilot_dir.mkdir(parents=True, exist_ok=True)
    path = copilot_dir / "settings.json"
    path.write_text('{"hooks": [}')
    result = cli("install", "--host", "copilot")
    assert result.exit_code == 1
    assert "settings.json" in result.output
    assert path.read_text() == '{"hooks": [}'


def test_the_repository_scope_writes_its_own_file(project: Path) -> None:
    result = cli("install", "--host", "copilot", "--project", str(project))
    path = project / ".github" / "hooks" / "ctxmode.json"
    document = json.loads(path.read_text())
    assert document["version"] == 1
    assert sorted(document["hooks"]) == sorted(e for e, _, _ in copilot.HOOKS)
    assert "trusts" in result.output  # the note: a repository's hooks run in trusted folders
    cli("uninstall", "--host", "copilot", "--project", str(project))
    assert not (project / ".github").exists()  # the folders install made go too


def test_the_repository_scope_keeps_a_github_folder_it_found(project: Path) -> None:
    (project / ".github" / "hooks").mkdir(parents=True)
    (project / ".github" / "hooks" / "team.json").write_text('{"version": 1, "hooks": {}}')
    cli("install", "--host", "copilot", "--project", str(project))
    cli("uninstall", "--host", "copilot", "--project", str(project))
    assert sorted(p.name for p in (project / ".github" / "hooks").iterdir()) == ["team.json"]


def test_no_trust_note_in_a_trusted_folder(project: Path, copilot_dir: Path) -> None:
    copilot_dir.mkdir(parents=True, exist_ok=True)
    (copilot_dir / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))
    result = cli("install", "--host", "copilot", "--project", str(project))
    assert "only in a folder it trusts" not in result.output


def test_folder_trust_reads_copilot_s_config(tmp_path: Path) -> None:
    text = json.dumps({"trusted_folders": [str(tmp_path / "a")], "trustedFolders": ["/x/y"]})
    assert copilot_config.folder_trusted(text, str(tmp_path / "a"))
    assert copilot_config.folder_trusted(text, str(tmp_path / "a" / "sub"))
    assert copilot_config.folder_trusted(text, "/x/y")
    assert not copilot_config.folder_trusted(text, str(tmp_path / "ab"))
    assert not copilot_config.folder_trusted("not json", "/x/y")


def test_verify_runs_the_installed_hooks_as_copilot_does(data_root: Path) -> None:
    result = cli("install", "--host", "copilot", "--verify")
    assert "; verified: 10 hook calls of a sample Copilot CLI session" in result.output
    assert "claimed once" in result.output
    assert not (data_root / "sessions").exists() or not list((data_root / "sessions").iterdir())


def test_verify_fails_when_the_prompt_cannot_hand_it_over(copilot_dir: Path) -> None:
    cli("install", "--host", "copilot")
    path = copilot_dir / "settings.json"
    text = path.read_text().replace("/hooks/user_prompt_submit.py", "/hooks/nowhere.py")
    path.write_text(text)
    outcome = copilot_proof.verify(str(path))
    assert not outcome.ok
    assert any("userPromptSubmitted" in p for p in outcome.problems), outcome.problems


def test_doctor_checks_copilot(project: Path, copilot_dir: Path) -> None:
    cli("install", "--host", "copilot", "--project", str(project))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "copilot"}
    assert checks, report.output
    assert checks["project trusted"]["status"] == "warn"
    copilot_dir.mkdir(parents=True, exist_ok=True)
    (copilot_dir / "config.json").write_text(json.dumps({"trusted_folders": [str(project)]}))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "copilot"}
    assert all(c["status"] == "ok" for c in checks.values()), checks


def test_registrations_are_found_in_the_repository_file(project: Path) -> None:
    cli("install", "--host", "copilot", "--project", str(project))
    text = (project / ".github" / "hooks" / "ctxmode.json").read_text()
    assert {r.shim for r in settings.registrations(text)} == set(copilot.SHIMS.values())


def test_install_sh_dry_run_for_copilot(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COPILOT", "CLAUDE"))}
    env.update(HOME=str(home), CTXMODE_HOME=str(tmp_path / "root"))
    proc = subprocess.run(
        ["sh", str(REPO / "install.sh"), "--host", "copilot", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"+++ {home}/.copilot/settings.json" in proc.stdout
    assert "permission_request.py" in proc.stdout
    assert not (home / ".copilot").exists()
