"""Each warning of doctor's Claude Code checks names a fix that fixes it (issue 30, 3.8).

A setup is made, doctor is run, the command each warning prints as its fix is run as it
stands (through the CLI), and doctor runs again: no warning is left, and no new one came
(``ctxmode install`` where another scope already registers ctxmode would make one).
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxmode import doctor
from ctxmode.hosts.claude_code import install as installer
from tests.helpers import cli

NEWER = "2.1.197"  # has "async" hooks: captures are registered in the background
OLD_PY = "/home/dev/.local/share/ctxmode/venv-0.0.9/bin/python"


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(installer.CLIENT_VERSION_ENV, NEWER)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return Path(os.environ["HOME"])


@pytest.fixture
def repo(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "repo"
    (path / ".git").mkdir(parents=True)
    monkeypatch.chdir(path)
    return path


def hook_findings(repo: Path, managed: Path | None = None) -> list[doctor.Check]:
    """Doctor's warnings and failures about Claude Code's hooks, for the project."""
    ctx = doctor.Context(
        env=dict(os.environ),
        project_dir=str(repo),
        now=time.time(),
        managed_settings=str(managed or repo / "no-managed-settings.json"),
    )
    from ctxmode.hosts.claude_code.doctor import check_hooks

    return [check for check in check_hooks(ctx) if check.status != "ok"]


def fix_commands(fix: str) -> list[list[str]]:
    """The ctxmode commands a fix starts with (``A && B``, up to its explanation)."""
    text = fix.split(" (", 1)[0]
    found = []
    for part in text.split(" && "):
        words = shlex.split(part)
        assert words[0] == "ctxmode", f"not a command to run: {fix!r}"
        found.append(words[1:])
    return found


def follow_the_fixes(repo: Path, managed: Path | None = None) -> list[str]:
    """Run every finding's fix; return what was run."""
    ran = []
    for check in hook_findings(repo, managed):
        for args in fix_commands(check.fix):
            result = cli(*args)
            assert result.exit_code == 0, result.output
            ran.append(" ".join(args))
    return ran


def _user_and_team(repo: Path) -> None:
    installer.install("user")
    installer.install("project", str(repo))


def _user_and_local_of_an_older_install(repo: Path) -> None:
    installer.install("user")
    installer.install("local", str(repo), python=OLD_PY)


def _mixed_in_one_file(repo: Path) -> None:
    installer.install("user")
    path = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    value = json.loads(path.read_text())
    handler = value["hooks"]["PostToolUseFailure"][0]["hooks"][0]
    del handler["async"]  # one capture in the foreground, the other in the background
    path.write_text(json.dumps(value, indent=2))


def _local_registered_for_an_older_client(repo: Path) -> None:
    installer.install("local", str(repo), version=(2, 1, 0))  # foreground, no PostCompact


def _local_missing_an_event(repo: Path) -> None:
    installer.install("local", str(repo))
    path = repo / ".claude" / "settings.local.json"
    value = json.loads(path.read_text())
    del value["hooks"]["SessionEnd"]
    path.write_text(json.dumps(value, indent=2))


def _plugin_and_settings(repo: Path) -> None:
    installer.install("local", str(repo))
    path = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"enabledPlugins": {"ctxmode@ctxmode-marketplace": True}}))


SETUPS: dict[str, tuple[Callable[[Path], None], set[str]]] = {
    # setup -> (what it does, the findings doctor must report before the fix)
    "user and the team's file": (_user_and_team, {"capture mode", "duplicates"}),
    "user and an older local install": (
        _user_and_local_of_an_older_install,
        {"duplicates", "stale paths"},
    ),
    "mixed in one file": (_mixed_in_one_file, {"capture mode"}),
    "local, for an older client": (
        _local_registered_for_an_older_client,
        {"capture mode", "registration"},
    ),
    "local, missing an event": (_local_missing_an_event, {"events"}),
    "plugin and settings": (_plugin_and_settings, {"plugin"}),
}
# What is left by design: the plugin cannot add the lookups' allow rule, and `ctxmode
# install` would register the hooks beside it, so that fix is an edit by hand.
LEFT = {"plugin and settings": {"lookups"}}


@pytest.mark.parametrize("setup", SETUPS)
def test_running_each_printed_fix_leaves_no_warning(repo: Path, setup: str) -> None:
    make, expected = SETUPS[setup]
    make(repo)
    before = {check.name for check in hook_findings(repo)}
    assert before == expected, [(c.name, c.summary, c.fix) for c in hook_findings(repo)]
    ran = follow_the_fixes(repo)
    assert ran
    after = hook_findings(repo)
    assert {check.name for check in after} == LEFT.get(setup, set()), (
        ran,
        [(c.name, c.summary, c.fix) for c in after],
    )
    for check in after:
        assert not check.fix.startswith("ctxmode install"), check.fix


def test_the_fix_for_both_scopes_names_the_project(repo: Path) -> None:
    _user_and_team(repo)
    found = {check.name: check for check in hook_findings(repo)}
    fix = (
        f"ctxmode uninstall --project {repo} "
        "(your user settings register ctxmode for every project)"
    )
    assert found["duplicates"].fix == fix
    assert found["capture mode"].fix == fix
    assert found["capture mode"].summary == (
        "mixed: some capture hooks run in the background, some in the foreground "
        "(user and project settings both register them)"
    )


def test_the_teams_file_alone_keeps_its_captures_in_the_foreground_by_design(
    repo: Path,
) -> None:
    installer.install("project", str(repo))
    names = {check.name for check in hook_findings(repo)}
    assert "capture mode" not in names  # `ctxmode install` would register ctxmode twice


def test_uninstall_of_one_scope_says_nothing_runs_twice(repo: Path) -> None:
    """'both copies run' read the files as they were before the uninstall."""
    _user_and_team(repo)
    result = cli("uninstall", "--project", str(repo))
    assert "both copies run" not in result.output
    assert "ctxmode hooks are still registered in ~/.claude/settings.json" in result.output
    assert "both copies run" not in cli("uninstall", "--project", str(repo)).output
    assert "both copies run" in cli("install", "--project", str(repo)).output


@pytest.mark.parametrize(("host", "name"), [("codex", "hooks.json"), ("gemini", "settings.json")])
def test_other_hosts_name_the_scope_in_their_fix(repo: Path, host: str, name: str) -> None:
    """A project's file is fixed by installing into the project, not the user's scope."""
    from ctxmode import hosts

    cli("install", "--host", host, "--project", str(repo))
    path = repo / f".{host}" / name
    value = json.loads(path.read_text())
    del value["hooks"]["SessionStart"]
    path.write_text(json.dumps(value, indent=2))
    ctx = doctor.Context(env=dict(os.environ), project_dir=str(repo), now=time.time())

    def events_check() -> doctor.Check:
        found = {check.name: check for check in hosts.part(host, "doctor").checks(ctx)}
        return found["project events"]

    found = events_check()
    assert (found.status, found.fix) == ("warn", f"ctxmode install --host {host} --project {repo}")
    for args in fix_commands(found.fix):
        assert cli(*args).exit_code == 0
    assert events_check().status == "ok"
