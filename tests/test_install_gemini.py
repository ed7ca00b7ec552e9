"""``ctxmode install --host gemini``: ~/.gemini/settings.json (or DIR/.gemini), uninstall.

The handlers are the ones the real Gemini CLI 0.61.0 ran (tests/e2e/test_gemini_e2e.py).
Here: only ctxmode's entries (a name each, timeouts in milliseconds, exact-string matchers),
byte-exact uninstall, a dry run that writes nothing, the project scope's trust note, doctor,
the proof run, install.sh --host gemini --dry-run.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxmode import settings
from ctxmode.hosts import gemini
from ctxmode.hosts.gemini import install as gemini_config
from ctxmode.hosts.gemini import proof as gemini_proof
from tests.helpers import cli
from tests.hooktools import REPO

# A user's settings as Gemini writes them (4-space indent), with a hook of their own.
USER_SETTINGS = (
    '{\n    "security": {\n        "auth": {\n            "selectedType": "gemini-api-key"\n'
    '        }\n    },\n    "hooks": {\n        "AfterTool": [\n            {\n'
    '                "matcher": "write_file",\n                "hooks": [\n                    {\n'
    '                        "type": "command",\n                        "command": "notify-me"\n'
    "                    }\n                ]\n            }\n        ]\n    }\n}"
)


@pytest.fixture
def gemini_dir() -> Path:
    return Path(os.environ["GEMINI_CLI_HOME"]) / ".gemini"


def _settings(gemini_dir: Path) -> dict[str, object]:
    value: dict[str, object] = json.loads((gemini_dir / "settings.json").read_text())
    return value


def test_install_writes_named_handlers_with_millisecond_timeouts(gemini_dir: Path) -> None:
    result = cli("install", "--host", "gemini")
    assert "for Gemini CLI: 7 hooks in" in result.output
    hooks = _settings(gemini_dir)["hooks"]
    assert isinstance(hooks, dict)
    assert sorted(hooks) == sorted(e for e, _, _ in gemini.HOOKS)
    for event, timeout, matcher in gemini.HOOKS:
        (group,) = hooks[event]
        (handler,) = group["hooks"]
        assert handler["name"] == f"ctxmode-{event.lower()}"
        assert handler["timeout"] == timeout and timeout >= 5000  # milliseconds
        assert group.get("matcher") == matcher
        assert handler["command"].endswith("--host gemini") == (event != "BeforeModel")
    # Exact strings where Gemini compares exactly: "" (all) or one value, never "a|b".
    assert hooks["PreCompress"][0]["matcher"] == "manual"
    assert all("|" not in (g.get("matcher") or "") for e in hooks for g in hooks[e])
    again = cli("install", "--host", "gemini")
    assert "already installed" in again.output


def test_uninstall_restores_the_users_file_byte_for_byte(gemini_dir: Path) -> None:
    gemini_dir.mkdir(parents=True)
    path = gemini_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "gemini")
    text = path.read_text()
    assert text.startswith('{\n    "security"')  # the user's layout kept
    assert len(settings.registrations(text)) == 7
    assert "notify-me" in text
    cli("uninstall", "--host", "gemini")
    assert path.read_text() == USER_SETTINGS
    assert not (gemini_dir / "settings.json.ctxmode-backup").exists()


def test_uninstall_after_gemini_changed_the_file_removes_only_ctxmodes_entries(
    gemini_dir: Path,
) -> None:
    gemini_dir.mkdir(parents=True)
    path = gemini_dir / "settings.json"
    path.write_text(USER_SETTINGS)
    cli("install", "--host", "gemini")
    doc = json.loads(path.read_text())
    doc["model"] = {"name": "gemini-3.8-flash"}  # a /settings change
    path.write_text(json.dumps(doc, indent=2))
    cli("uninstall", "--host", "gemini")
    after = json.loads(path.read_text())
    assert after["model"] == {"name": "gemini-3.8-flash"}
    assert list(after["hooks"]) == ["AfterTool"]
    assert after["hooks"]["AfterTool"][0]["hooks"][0]["command"] == "notify-me"


def test_a_file_install_created_goes_away_again(gemini_dir: Path) -> None:
    cli("install", "--host", "gemini")
    result = cli("uninstall", "--host", "gemini")
    assert "deleted (ctxmode had created it)" in result.output
    assert not (gemini_dir / "settings.json").exists()


def test_dry_run_shows_the_diff_and_writes_nothing(gemini_dir: Path) -> None:
    result = cli("install", "--host", "gemini", "--dry-run")
    assert "+++ " in result.output and "ctxmode-beforemodel" in result.output
    assert not gemini_dir.exists()
    cli("install", "--host", "gemini")
    before = (gemini_dir / "settings.json").read_text()
    undo = cli("uninstall", "--host", "gemini", "--dry-run")
    assert "--- " in undo.output
    assert (gemini_dir / "settings.json").read_text() == before


def test_a_malformed_file_is_a_clear_error_and_stays(gemini_dir: Path) -> None:
    gemini_dir.mkdir(parents=True)
    path = gemini_dir / "settings.json"
    path.write_text('{"hooks": [}')
    result = cli("install", "--host", "gemini")
    assert result.exit_code == 1
    assert "settings.json" in result.output
    assert path.read_text() == '{"hooks": [}'


def test_gemini_has_no_local_scope(project: Path) -> None:
    result = cli("install", "--host", "gemini", "--local", str(project))
    assert result.exit_code == 2
    assert "Gemini CLI has no local scope: use --user (~/.gemini) or --project DIR" in result.output


def test_a_project_install_says_the_folder_must_be_trusted(project: Path, gemini_dir: Path) -> None:
    result = cli("install", "--host", "gemini", "--project", str(project))
    assert (project / ".gemini" / "settings.json").exists()
    assert "runs a project's hooks only in a trusted folder" in result.output
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "trustedFolders.json").write_text(
        json.dumps({str(project.parent): "TRUST_FOLDER"})
    )
    again = cli("install", "--host", "gemini", "--project", str(project))
    assert "trusted folder" not in again.output
    assert not (gemini_dir / "settings.json").exists()  # the user scope is untouched


def test_folder_trust_reads_gemini_s_rules(tmp_path: Path) -> None:
    rules = {
        str(tmp_path / "a"): "TRUST_FOLDER",
        str(tmp_path / "a" / "no"): "DO_NOT_TRUST",
        str(tmp_path / "b" / "x"): "TRUST_PARENT",
    }
    text = json.dumps(rules)
    assert gemini_config.folder_trust(text, str(tmp_path / "a" / "src")) == "TRUST_FOLDER"
    assert gemini_config.folder_trust(text, str(tmp_path / "a" / "no" / "y")) == "DO_NOT_TRUST"
    assert gemini_config.folder_trust(text, str(tmp_path / "b" / "other")) == "TRUST_FOLDER"
    assert gemini_config.folder_trust(text, str(tmp_path / "c")) is None
    assert gemini_config.folder_trust("not json", str(tmp_path)) is None


def test_verify_runs_the_installed_hooks_as_gemini_does(data_root: Path) -> None:
    result = cli("install", "--host", "gemini", "--verify")
    assert "; verified: 14 hook calls of a sample Gemini session" in result.output
    assert "claimed once" in result.output
    assert not (data_root / "sessions").exists() or not list((data_root / "sessions").iterdir())


def test_verify_reports_a_broken_before_model(gemini_dir: Path) -> None:
    cli("install", "--host", "gemini")
    path = gemini_dir / "settings.json"
    text = path.read_text().replace("/hooks/before_model.py", "/hooks/nowhere.py")
    path.write_text(text)
    outcome = gemini_proof.verify(str(path))
    assert not outcome.ok
    assert any("BeforeModel" in p for p in outcome.problems), outcome.problems


def test_doctor_checks_gemini(project: Path, gemini_dir: Path) -> None:
    cli("install", "--host", "gemini", "--project", str(project))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "gemini"}
    assert checks, report.output
    trust = next(c for n, c in checks.items() if "trust" in n)
    assert trust["status"] == "warn", trust
    gemini_dir.mkdir(parents=True, exist_ok=True)
    (gemini_dir / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    report = cli("doctor", "--json", "--project", str(project))
    checks = {c["name"]: c for c in json.loads(report.output)["checks"] if c["group"] == "gemini"}
    assert all(c["status"] == "ok" for c in checks.values()), checks


def test_install_sh_dry_run_for_gemini(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GEMINI", "CLAUDE"))}
    env.update(HOME=str(home), CTXMODE_HOME=str(tmp_path / "root"))
    proc = subprocess.run(
        ["sh", str(REPO / "install.sh"), "--host", "gemini", "--dry-run"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"+++ {home}/.gemini/settings.json" in proc.stdout
    assert "ctxmode-beforemodel" in proc.stdout
    assert not (home / ".gemini").exists()
