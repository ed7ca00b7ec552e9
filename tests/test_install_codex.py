"""``ctxmode install --host codex``: hooks.json, the trust entries of config.toml, uninstall.

The hashes are the ones Codex 0.169.0 accepted (the e2e test runs the real CLI on what install
wrote; tests/e2e/test_codex_e2e.py). Here: only ctxmode's entries, byte-exact uninstall of both
files, a dry run that writes nothing, clear errors, an idempotent upgrade that renews hashes.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ctxmode import codex_config
from ctxmode.hosts import codex
from tests.helpers import cli

USER_HOOKS = '{\n  "hooks": {\n    "Stop": [\n      {\n        "hooks": [\n          {\n            "type": "command",\n            "command": "notify-me",\n            "timeout": 5\n          }\n        ]\n      }\n    ]\n  }\n}\n'
USER_TOML = 'model = "gpt-5.5"\n\n[projects."/home/u/p"]\ntrust_level = "trusted"\n'


@pytest.fixture
def codex_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    return home.resolve()


def _toml(text: str) -> dict[str, object]:
    import tomllib

    return tomllib.loads(text)


def test_trusted_hash_is_codexs() -> None:
    # Computed by Codex's rules (shared/codex-hooks.md) for a handler Codex 0.169.0 ran.
    handler = {"type": "command", "command": "cat > /tmp/x.json", "timeout": 10}
    assert codex_config.trusted_hash("SessionStart", handler) == (
        "sha256:"
        + __import__("hashlib")
        .sha256(
            b'{"event_name":"session_start","hooks":[{"async":false,"command":'
            b'"cat > /tmp/x.json","timeout":10,"type":"command"}]}'
        )
        .hexdigest()
    )
    # SessionEnd's timeout is clamped to 3; a matcher counts, except where Codex ignores it
    end = codex_config.trusted_hash("SessionEnd", handler | {"timeout": 30})
    assert end == codex_config.trusted_hash("SessionEnd", handler | {"timeout": 3})
    assert codex_config.trusted_hash("PostToolUse", handler, "") != codex_config.trusted_hash(
        "PostToolUse", handler
    )
    assert codex_config.trusted_hash("UserPromptSubmit", handler, "x") == codex_config.trusted_hash(
        "UserPromptSubmit", handler
    )


def test_install_writes_hooks_and_their_trust(codex_home: Path) -> None:
    result = cli("install", "--host", "codex")
    assert "for Codex: 5 hooks" in result.output
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == sorted(event for event, _, _ in codex.HOOKS)
    command = hooks["PostToolUse"][0]["hooks"][0]["command"]
    assert command.endswith("post_tool_use.py' --host codex")
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    key = f"{codex_home / 'hooks.json'}:post_tool_use:0:0"
    handler = hooks["PostToolUse"][0]["hooks"][0]
    assert state[key]["trusted_hash"] == codex_config.trusted_hash("PostToolUse", handler)
    assert len(state) == 5
    for name in ("hooks.json", "config.toml"):
        assert stat.S_IMODE((codex_home / name).stat().st_mode) == 0o600


def test_install_keeps_the_users_entries_and_uninstall_restores_both_files(
    codex_home: Path,
) -> None:
    (codex_home / "hooks.json").write_text(USER_HOOKS)
    (codex_home / "config.toml").write_text(USER_TOML.rstrip("\n"))  # no final newline
    cli("install", "--host", "codex")
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "notify-me"
    toml = _toml((codex_home / "config.toml").read_text())
    assert toml["model"] == "gpt-5.5"
    # The user's Stop hook keeps its index: ctxmode's groups are appended, never inserted.
    assert f"{codex_home / 'hooks.json'}:stop:0:0" not in toml["hooks"]["state"]  # type: ignore[index]
    again = cli("install", "--host", "codex")
    assert "already installed" in again.output
    cli("uninstall", "--host", "codex")
    assert (codex_home / "hooks.json").read_text() == USER_HOOKS
    assert (codex_home / "config.toml").read_text() == USER_TOML.rstrip("\n")


def test_uninstall_deletes_what_install_created(codex_home: Path) -> None:
    cli("install", "--host", "codex")
    cli("uninstall", "--host", "codex")
    assert sorted(p.name for p in codex_home.iterdir()) == []
    assert "nothing changed" in cli("uninstall", "--host", "codex").output


def test_dry_run_shows_both_diffs_and_writes_nothing(codex_home: Path) -> None:
    (codex_home / "config.toml").write_text(USER_TOML)
    out = cli("install", "--host", "codex", "--dry-run").output
    assert "+++ " + str(codex_home / "config.toml") in out
    assert "hooks.json" in out and "trusted_hash" in out
    assert not (codex_home / "hooks.json").exists()
    assert (codex_home / "config.toml").read_text() == USER_TOML


def test_upgrade_renews_the_hashes(codex_home: Path, tmp_path: Path) -> None:
    codex_config.install(python="/old/venv/bin/python")
    old = (codex_home / "config.toml").read_text()
    result = codex_config.install(python="/new/venv/bin/python")
    assert result.action == "updated"
    text = (codex_home / "config.toml").read_text()
    assert text != old and text.count("trusted_hash") == 5
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert hooks["PostToolUse"][0]["hooks"][0]["command"].startswith("'/new/venv/bin/python'")
    assert len(hooks["PostToolUse"]) == 1  # replaced, not added


def test_both_scopes_keep_their_trust(codex_home: Path, project: Path) -> None:
    codex_config.install()
    codex_config.install("project", str(project))
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    assert len(state) == 10
    codex_config.uninstall("project", str(project))
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    assert len(state) == 5 and all(k.startswith(str(codex_home)) for k in state)


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("config.toml", "model = \n", "not valid TOML"),
        ("hooks.json", '{"hooks": [}', "hooks.json"),
    ],
)
def test_a_malformed_file_is_a_clear_error_and_stays(
    codex_home: Path, name: str, text: str, words: str
) -> None:
    (codex_home / name).write_text(text)
    result = cli("install", "--host", "codex")
    assert result.exit_code == 1 and words in result.output
    assert (codex_home / name).read_text() == text


def test_a_user_trust_entry_with_another_hash_is_refused(codex_home: Path) -> None:
    key = f"{codex_home / 'hooks.json'}:post_tool_use:0:0"
    user = f'[hooks.state."{key}"]\ntrusted_hash = "sha256:00"\n'
    (codex_home / "config.toml").write_text(user)
    result = cli("install", "--host", "codex")
    assert result.exit_code == 1 and "another hash" in result.output
    assert (codex_home / "config.toml").read_text() == user


def test_codex_has_no_local_scope(codex_home: Path, project: Path) -> None:
    result = cli("install", "--host", "codex", "--local", str(project))
    assert result.exit_code == 2 and "no local scope" in result.output


# -- doctor ------------------------------------------------------------------------------------


def _codex_checks(codex_home: Path, project: Path) -> dict[str, str]:
    import os
    import time

    from ctxmode.doctor import Context, check_codex

    ctx = Context(env=dict(os.environ), project_dir=str(project), now=time.time())
    return {check.name: check.status for check in check_codex(ctx)}


def test_doctor_checks_codexs_trust(codex_home: Path, project: Path) -> None:
    assert _codex_checks(codex_home, project) == {}  # not registered: nothing to say
    codex_config.install()
    assert _codex_checks(codex_home, project) == {
        "user events": "ok",
        "user trust": "ok",
    }
    # A changed command (an upgrade by hand) is "modified" to Codex: it stops running.
    hooks = codex_home / "hooks.json"
    hooks.write_text(hooks.read_text().replace("--host codex", "--host  codex"))
    assert _codex_checks(codex_home, project)["user trust"] == "fail"
    result = cli("doctor")
    assert "not trusted" in result.output
    codex_config.install()
    assert _codex_checks(codex_home, project)["user trust"] == "ok"
