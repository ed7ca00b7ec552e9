"""``ctxmode install --host codex``: hooks.json, the trust entries of config.toml, uninstall.

The hashes are the ones Codex 0.169.0 accepted (the e2e test runs the real CLI on what install
wrote; tests/e2e/test_codex_e2e.py). Here: only ctxmode's entries, byte-exact uninstall of both
files, a dry run that writes nothing, clear errors, an idempotent upgrade that renews hashes.
"""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

import ctxmode
from ctxmode.hosts import codex
from ctxmode.hosts.codex import install as codex_config
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
    assert "for Codex: 6 hooks" in result.output
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert sorted(hooks) == sorted(event for event, _, _ in codex.HOOKS)
    command = hooks["PostToolUse"][0]["hooks"][0]["command"]
    assert command.endswith("post_tool_use.py' --host codex")
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    key = f"{codex_home / 'hooks.json'}:post_tool_use:0:0"
    handler = hooks["PostToolUse"][0]["hooks"][0]
    assert state[key]["trusted_hash"] == codex_config.trusted_hash("PostToolUse", handler)
    assert len(state) == 6
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
    assert text != old and text.count("trusted_hash") == 6
    hooks = json.loads((codex_home / "hooks.json").read_text())["hooks"]
    assert hooks["PostToolUse"][0]["hooks"][0]["command"].startswith("'/new/venv/bin/python'")
    assert len(hooks["PostToolUse"]) == 1  # replaced, not added


def test_both_scopes_keep_their_trust(codex_home: Path, project: Path) -> None:
    codex_config.install()
    codex_config.install("project", str(project))
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    assert len(state) == 12
    codex_config.uninstall("project", str(project))
    state = _toml((codex_home / "config.toml").read_text())["hooks"]["state"]  # type: ignore[index]
    assert len(state) == 6 and all(k.startswith(str(codex_home)) for k in state)


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

    from ctxmode.doctor import Context
    from ctxmode.hosts.codex.doctor import checks

    ctx = Context(env=dict(os.environ), project_dir=str(project), now=time.time())
    return {check.name: check.status for check in checks(ctx)}


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


# -- the proof run (--verify) ------------------------------------------------------------------


def _fixture_name(event: str, payload: dict[str, object]) -> str:
    """The recorded payload of the same kind (tests/fixtures/codex-0.169.0)."""
    parts = [event]
    if payload.get("source") or payload.get("trigger"):
        parts.append(str(payload.get("source") or payload.get("trigger")))
    if payload.get("tool_name"):
        parts.append(str(payload["tool_name"]))
        command = str(payload.get("tool_input", {}).get("command", ""))  # type: ignore[union-attr]
        if "git commit" in command:
            parts.append("git_commit")
        elif "test_reconcile" in command:
            parts.append("failing_command")
        elif "Add File" in command:
            parts.append("add")
    return ".".join(parts) + ".json"


def test_the_sample_session_has_codexs_shapes(tmp_path: Path) -> None:
    from ctxmode.hosts.codex import proof as codex_proof

    calls = codex_proof.sample_session(str(tmp_path / "proj"), str(tmp_path))
    assert [c.event for c in calls] == [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "PostToolUse",
        "PostToolUse",
        "Stop",
        "PreCompact",
        "SessionStart",
        "SessionStart",
        "UserPromptSubmit",
        "SessionEnd",
    ]
    for call in calls:
        recorded = fixture_payload(_fixture_name(call.event, call.payload))
        assert set(call.payload) == set(recorded) - {"_env_keys", "_cwd"}, call.event
        for key in ("tool_input", "tool_response"):
            assert type(call.payload.get(key)) is type(recorded.get(key)), (call.event, key)


def fixture_payload(name: str) -> dict[str, object]:
    from tests.hooktools import FIXTURES

    path = FIXTURES.parent / "codex-0.169.0" / name
    return json.loads(path.read_text())  # type: ignore[no-any-return]


def test_verify_runs_the_installed_hooks_as_codex_does(codex_home: Path, data_root: Path) -> None:
    result = cli("install", "--host", "codex", "--verify")
    assert result.exit_code == 0, result.output
    line = result.output.strip()
    assert re.fullmatch(
        rf"ctxmode {re.escape(ctxmode.__version__)} installed for Codex: 6 hooks in \S+, "
        r"trusted in \S+ \(6 entries\); verified: 11 hook calls of a sample Codex session "
        r"through them stored \d+ events, and its \d+-byte snapshot was injected after "
        r"compaction, claimed once",
        line,
    ), line
    # The real (here: test) data root is untouched: the proof used a throwaway one.
    assert not (data_root / "sessions").exists()


def test_verify_on_a_project_install(codex_home: Path, project: Path) -> None:
    result = cli("install", "--host", "codex", "--project", str(project), "--verify")
    assert result.exit_code == 0, result.output
    assert "verified: 11 hook calls" in result.output


def test_verify_reports_a_broken_command(codex_home: Path) -> None:
    # The commands really run (bash -c, as Codex runs them): a python that is not there.
    from ctxmode.hosts.codex import proof as codex_proof

    codex_config.install(python="/nonexistent/venv/bin/python3")
    result = codex_proof.verify(str(codex_home / "hooks.json"))
    assert not result.ok and result.calls == 11 and result.events == 0
    assert "PostToolUse exited 127" in result.problems
    assert any(
        p.startswith("PostToolUse wrote to stderr") and "nonexistent" in p for p in result.problems
    ), result.problems
    assert "no SessionStart after the compaction printed the snapshot" in result.problems


def test_cli_verify_fails_saying_what_broke(
    codex_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The CLI installs this interpreter's commands: make them name a missing python.
    real = codex_config.hook_specs
    monkeypatch.setattr(
        codex_config, "hook_specs", lambda python=None, package_dir=None: real("/nonexistent/py")
    )
    result = cli("install", "--host", "codex", "--verify")
    assert result.exit_code == 1
    assert "but the sample session failed" in result.output
    assert "PostToolUse exited 127" in result.output
    assert "`ctxmode uninstall --host codex` removes them" in result.output


def test_verify_reports_missing_handlers(codex_home: Path) -> None:
    from ctxmode.hosts.codex import proof as codex_proof

    (codex_home / "hooks.json").write_text(USER_HOOKS)
    result = codex_proof.verify(str(codex_home / "hooks.json"))
    assert result.problems == [
        "no ctxmode handler for PostToolUse, UserPromptSubmit, PreCompact, SessionStart, "
        f"SessionEnd, Stop in {codex_home / 'hooks.json'}"
    ]


@pytest.mark.parametrize(
    ("event", "stdout", "words"),
    [
        ("PostToolUse", b"{}\n", "printed to stdout"),
        ("SessionStart", b"<session_resume/>", "other than one JSON object"),
        ("SessionStart", b'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
         b'"additionalContext": "x"}, "extra": 1}', "does not accept"),
        ("UserPromptSubmit", b'{"hookSpecificOutput": {"hookEventName": "SessionStart", '
         b'"additionalContext": "x"}}', "does not accept"),
    ],
)  # fmt: skip
def test_stdout_that_breaks_codexs_contract_is_reported(
    event: str, stdout: bytes, words: str
) -> None:
    from ctxmode import proof
    from ctxmode.hosts.codex import proof as codex_proof

    client = proof.Client(
        "Codex", ("sh", "-c"), codex_proof.environment, codex_proof.sample_session,
        speaks=("SessionStart", "UserPromptSubmit"),
    )  # fmt: skip
    problem = proof.contract_problem(event, stdout, client)
    assert problem is not None and words in problem
    # What ctxmode prints there is the contract (and nothing is, everywhere).
    if event in client.speaks:
        good = b'{"hookSpecificOutput": {"hookEventName": "%s", "additionalContext": "x"}}\n'
        assert proof.contract_problem(event, good % event.encode(), client) is None
    assert proof.contract_problem(event, b"", client) is None


# -- the project scope: Codex's own trust of the project --------------------------------------


def _codex_trusts(config: Path, project: Path) -> None:
    """What `codex exec --trust` (0.169.0) did to a config.toml ending in ctxmode's block:
    its table went after the last table, that is inside the block, before the end line."""
    text = config.read_text()
    end = text.index(codex_config.END)
    config.write_text(
        text[:end] + f'\n[projects."{project}"]\ntrust_level = "trusted"\n' + text[end:]
    )


def test_what_codex_writes_into_the_block_survives_install_and_uninstall(
    codex_home: Path, project: Path
) -> None:
    config = codex_home / "config.toml"
    codex_config.install("project", str(project))
    _codex_trusts(config, project)
    trusted = config.read_text()
    assert codex_config.project_trust(trusted, str(project)) == "trusted"
    # Installing again keeps the file as it is (nothing to trust anew) ...
    assert codex_config.install("project", str(project)).action == "unchanged"
    assert config.read_text() == trusted
    # ... and so does an upgrade, which rewrites the block around the project's trust.
    codex_config.install("project", str(project), python="/new/venv/bin/python")
    assert codex_config.project_trust(config.read_text(), str(project)) == "trusted"
    assert len(codex_config.trusted_block_entries(config.read_text())) == 6
    codex_config.uninstall("project", str(project))
    # ctxmode's lines are gone, Codex's stay; the file ctxmode made holds them now.
    assert config.read_text() == f'\n[projects."{project}"]\ntrust_level = "trusted"\n'


def test_project_trust_is_the_projects_own_entry(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    text = f'[projects."{repo}"]\ntrust_level = "trusted"\n'
    assert codex_config.project_trust(text, str(repo)) == "trusted"
    assert codex_config.project_trust(text, str(repo / "sub")) == "trusted"  # its work tree
    assert codex_config.project_trust(text.replace("trusted", "untrusted"), str(repo)) == (
        "untrusted"
    )
    # A trusted parent folder is not the project's trust (Codex 0.169.0 ran nothing then).
    parent = f'[projects."{tmp_path}"]\ntrust_level = "trusted"\n'
    assert codex_config.project_trust(parent, str(repo)) is None
    assert codex_config.project_trust("", str(repo)) is None


def test_a_project_install_says_codex_will_not_run_the_hooks_of_an_untrusted_project(
    codex_home: Path, project: Path
) -> None:
    result = cli("install", "--host", "codex", "--project", str(project))
    assert "Codex will not run these hooks yet" in result.output
    assert f"Trust {project.resolve()} once (`codex exec --trust` run in it" in result.output
    assert _codex_checks(codex_home, project)["project trusted"] == "fail"
    _codex_trusts(codex_home / "config.toml", project.resolve())
    again = cli("install", "--host", "codex", "--project", str(project))
    assert "will not run" not in again.output and "already installed" in again.output
    assert _codex_checks(codex_home, project)["project trusted"] == "ok"
    config = codex_home / "config.toml"
    config.write_text(config.read_text().replace('"trusted"', '"untrusted"'))
    marked = cli("install", "--host", "codex", "--project", str(project))
    assert "marks" in marked.output and "untrusted" in marked.output
